/* timing.h - per-phase timing of a run (--debug-timing, NSRUN_DEBUG=timing).
 *
 * The points live in one page shared by the supervisor, the container's init and the
 * payload (an anonymous MAP_SHARED mapping made before clone, which fork keeps
 * shared), so each side stamps its own phases without messages.  Times are
 * CLOCK_MONOTONIC microseconds, the same clock in every process (clock_gettime(2)).
 */
#ifndef NSRUN_TIMING_H
#define NSRUN_TIMING_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum timing_point {
	TP_EXEC,                /* nsrun exec'd: TP_START less the CPU time used before main */
	TP_START,               /* main() entered */
	TP_CONFIG,              /* options parsed, image resolved, configuration valid */
	TP_SOURCES,             /* mount plan built, sources checked (supervisor) */
	TP_SECCOMP,             /* seccomp filter compiled or loaded from the cache */
	TP_CLONE,               /* the namespaces exist (clone returned in the supervisor) */
	TP_ID_MAPS,             /* uid_map and gid_map written */
	TP_INIT_GO,             /* init saw ID_MAPS_WRITTEN and took its ids */
	TP_ROOTFS,              /* the rootfs is mounted in the staging area */
	TP_MOUNTS,              /* every mount of the plan done */
	TP_PIVOT,               /* pivot_root done, old root detached */
	TP_INIT_READY,          /* hostname, loopback: init forks the payload */
	TP_PAYLOAD_IDS,         /* payload: own user namespace, uid/gid, rlimits */
	TP_PAYLOAD_PRIVS,       /* payload: capabilities dropped, no_new_privs */
	TP_PAYLOAD_SECCOMP,     /* payload: filter installed, calling execve */
	TP_EXEC_OK,             /* init knows the payload exec'd */
	TP_PAYLOAD_EXITED,      /* the supervisor knows the outcome */
	TP_END,                 /* reported, freed: main returns */
	TP__COUNT
};

struct timing {
	uint64_t t_us[TP__COUNT];       /* 0: not reached */
	bool payload_vfork;             /* pid 1 started the payload in its own memory (container.c) */
};

/* Maps a zeroed struct timing shared with future children. Returns NULL (errno)
 * on failure; timing is then simply not recorded. */
struct timing *timing_new(void);

void timing_free(struct timing *t);

/* Stamps TP_START now and TP_EXEC that far before it as this process has used
 * CPU time (CLOCK_PROCESS_CPUTIME_ID: the exec and the C start-up, which run
 * without waiting before main), so the phases also cover nsrun's own start.
 * No-op when t is NULL. */
void timing_start(struct timing *t);

/* Stamps point p now (no-op when t is NULL). Async-signal-safe. */
void timing_mark(struct timing *t, enum timing_point p);

/* Name of the phase that ends at p ("seccomp", "mounts", ...). */
const char *timing_phase_name(enum timing_point p);

/* Prints one line per phase reached, with microseconds and share of the total,
 * then the total (TP_END less the first point stamped), prefixed "nsrun: timing: ". */
void timing_print(const struct timing *t, FILE *out);

#endif
