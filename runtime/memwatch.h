/* memwatch.h - the memory limit where no cgroup can hold it: the supervisor
 * measures what the container really uses and ends it past the limit.
 *
 * A sample adds up, for every process of the container's pid namespace (read from
 * the container's own /proc, reached through a payload process's root; or, without
 * a /proc of its own (the reduced and minimal tiers), the descendants of the container's init
 * found in the host's /proc):
 *   - its resident pages (/proc/PID/statm, the memory map's counters: cheap),
 *     anonymous, file and shared (memfd, MAP_SHARED, System V) pages that are
 *     mapped; when that sum passes the limit, its proportional set size instead
 *     (the "Pss:" of /proc/PID/smaps_rollup, Linux 4.14, proc(5); a walk of its
 *     page tables): pages shared with n processes count 1/n, so pages shared after
 *     fork(2) count once, and only a container really over the limit is ended;
 *   - every memfd it holds open (memfd_create(2)), by its allocated blocks, once
 *     per inode, mapped or not: a sample looks at 1024 open files at most, the
 *     next goes on from there (a container of many open files has its memfds
 *     counted over several samples, and the last whole count holds meanwhile; a
 *     memfd freed during such a pass counts until it ends: an over-estimate);
 *     a memfd sent over a unix socket and closed waits in the socket's queue, in
 *     no process's files, and is not counted (a pool request cannot make one);
 *   - the used blocks of the container's tmpfs mounts (/tmp, /dev/shm, --tmpfs;
 *     statfs(2)), files unlinked but still open included, and with a writable
 *     root (root_upper_bytes) those of the tmpfs under its overlay (statfs(2) of
 *     an overlay answers for its upper layer: fs/overlayfs/super.c, ovl_statfs;
 *     a root that is not that overlay, on a file system of another size, is not
 *     counted).
 * Shared memory that is both mapped and held as a memfd or a tmpfs file counts
 * twice: an over-estimate, never an under-estimate.  Not counted: kernel memory
 * (page tables, socket and pipe buffers) and System V segments no process maps
 * (the container's IPC namespace holds at most --memory of them: ucounts.h).
 *
 * Samples come more often as the use nears the limit: the time to the next one is
 * the headroom at twice the growth rate of the last two samples (at least 8 GiB/s),
 * between 5 ms and 100 ms, at most twice the last interval (5 ms after the exec,
 * 10, 20, ...: a payload that writes from its start is seen early), and at least ten
 * times what the last sample took (up to 1 s), so the measure costs about a tenth
 * of a CPU at most.
 *
 * The samples are taken by a thread of their own, so that the supervisor's loop
 * keeps --timeout, signals and output while one runs: a payload decides how long
 * its memory maps take to read (40 processes of 64000 mappings each made a sample
 * take 5 s, and a --timeout of 3 s ended after 11: breaker, session 20).  A sample
 * that runs past mw->stall_us (--memory-sample-timeout, 2 s) ends the run as
 * nsrun's error, since the limit is not being kept meanwhile.  Where no thread
 * can be made (an outer filter on clone), the loop takes the samples itself, as
 * before.  With the limit in a
 * cgroup v1 group instead (cgroup_v1.h), a sample only reads the group's OOM-kill
 * counter, so one process killed by the kernel ends the whole container.
 */
#ifndef NSRUN_MEMWATCH_H
#define NSRUN_MEMWATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup_v1.h"
#include "error.h"
#include "mount_plan.h"

/* a sample running this long ends the run: the limit is not being kept
 * (memwatch_poll); --memory-sample-timeout sets another (mw->stall_us) */
#define MEMWATCH_STALL_US 2000000

struct memwatch_sampler;

struct memwatch {
	uint64_t limit_bytes;           /* 0: not watching */
	const struct cgroup_v1 *cg1;    /* the limit is this group's: watch its OOM kills only */
	const struct mount_plan *plan;  /* the tmpfs mounts to count (may be NULL) */
	bool host_scan;                 /* no /proc of the container's own: walk the host's */
	uint64_t root_upper_bytes;      /* not 0: the root is nsrun's overlay over a tmpfs of its
					 * own of this size (--read-only=false, --tmpfs-size):
					 * count what is written to it */
	bool no_memfds;                 /* none can be made (a pool request's filter): none looked for */
	uint64_t stall_us;              /* a sample running longer ends the run (memwatch_poll);
					 * 0: no bound.  MEMWATCH_STALL_US unless set */
	uint64_t deadline_us;           /* the caller's: CLOCK_MONOTONIC of the run's next
					 * deadline (--timeout), 0 none.  With no thread, a
					 * sample stops there, so that the caller keeps it */
	bool armed;                     /* memwatch_arm'd, not closed */
	bool decided;                   /* memwatch_poll gave its verdict (it gives one only) */
	uint64_t next_us;               /* with cg1: CLOCK_MONOTONIC of the next look */
	struct memwatch_sampler *s;     /* the measure's own state (memwatch_internal.h), on the heap: the
					 * measuring thread holds it, and a pool moves its slots */
	/* set by memwatch_close: for --debug, --json and bench/RESULTS.md */
	uint64_t peak_bytes;            /* the largest sample */
	uint64_t samples;               /* how many, and their cost */
	uint64_t precise_samples;       /* of them, those that also read the page tables */
	uint64_t cost_us;
};

/* True if this kernel lets the supervisor measure a process (/proc/self/smaps_rollup
 * is readable): otherwise the memory limit falls back to RLIMIT_DATA. */
bool memwatch_can_measure(void);

/* Sets mw up for a limit of limit_bytes (cg1 NULL: measured, else watched through
 * the group); the plan names the tmpfs mounts.  Nothing is opened yet. */
void memwatch_init(struct memwatch *mw, uint64_t limit_bytes, const struct cgroup_v1 *cg1,
		   const struct mount_plan *plan, bool host_scan);

/* A run's first sample, this long after its payload's exec (µs).  At the exec the
 * container holds only what the exec'd image touched, so a sample then decides
 * nothing; from the first sample on, samples are at least MIN_INTERVAL_US (the same
 * 5 ms) apart anyway, so a payload that writes from its first instruction is seen
 * as soon as it would be between any two samples.  What the measure holds is
 * opened at the exec all the same (memwatch_pin_now). */
#define MEMWATCH_FIRST_US 5000

/* Arms the watch once the payload runs (its root is then the container's): init is
 * the host pid of the container's init; the first sample is due at now_us.  The
 * measuring thread (pthread_create(3)) is made by memwatch_poll when that sample
 * is due (memwatch_fd is -1 until then); where it cannot be, memwatch_poll takes
 * the samples itself. */
void memwatch_arm(struct memwatch *mw, pid_t init, uint64_t now_us);

/* Right after memwatch_arm: opens now what the measure holds from its first sample
 * on, the container's root and its tmpfs mounts, so that a payload that renames a
 * directory above a --tmpfs in a volume before that sample cannot hide the tmpfs
 * (tests/security/59-memwatch-hidden-use.t).  Where they cannot be opened yet,
 * the first sample is due at once.  A pool's slots need none: their tmpfs mounts
 * are in no volume. */
void memwatch_pin_now(struct memwatch *mw);

/* True from memwatch_arm to memwatch_close. */
bool memwatch_armed(const struct memwatch *mw);

/* An fd that becomes readable (poll(2)) when the measuring thread has a verdict
 * for memwatch_poll; -1 when there is no such thread. */
int memwatch_fd(const struct memwatch *mw);

/* CLOCK_MONOTONIC microseconds by which memwatch_poll should be called again (a
 * sample due, or a running sample's time to stall); UINT64_MAX when not armed. */
uint64_t memwatch_next_us(const struct memwatch *mw, uint64_t now_us);

/* Milliseconds until memwatch_next_us, for poll(2) (at most limit_ms; -1 stays -1
 * when not armed). */
int memwatch_timeout_ms(const struct memwatch *mw, uint64_t now_us, int limit_ms);

/* Returns 1 when the container passed the limit (or the group's OOM killer
 * struck), 0 otherwise, -1 with err when the container's memory cannot be
 * measured (an error, or a sample past mw->stall_us: the run must then end,
 * the limit cannot be kept).  A verdict (not 0) is given once: 0 after it.
 * Without a measuring thread, takes a sample if one is due; never blocks on the
 * container otherwise. */
int memwatch_poll(struct memwatch *mw, uint64_t now_us, struct nsrun_error *err);

/* Stops the measuring thread (waiting for its read in progress: end the container
 * first), keeps its figures in mw, frees the rest and disarms the watch.
 * Idempotent. */
void memwatch_close(struct memwatch *mw);

#endif
