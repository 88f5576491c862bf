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
 * of a CPU at most.  With the limit in a
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

struct seen;

struct memwatch {
	uint64_t limit_bytes;           /* 0: not watching */
	const struct cgroup_v1 *cg1;    /* the limit is this group's: watch its OOM kills only */
	const struct mount_plan *plan;  /* the tmpfs mounts to count (may be NULL) */
	bool host_scan;                 /* no /proc of the container's own: walk the host's */
	uint64_t root_upper_bytes;      /* not 0: the root is nsrun's overlay over a tmpfs of its
					 * own of this size (--read-only=false, --tmpfs-size):
					 * count what is written to it */
	pid_t init;                     /* the container's init, as the host's /proc names it */
	uint64_t armed_us;              /* when the payload's exec was reported */
	int root_fd;                    /* a payload process's root (the container's), or -1 */
	int proc_fd;                    /* the container's /proc, or the host's with host_scan, or -1 */
	uint64_t next_us;               /* CLOCK_MONOTONIC of the next sample, 0: not armed */
	uint64_t peak_bytes;            /* the largest sample */
	uint64_t last_bytes;            /* the last sample, and when it was taken */
	uint64_t last_sample_us;
	uint64_t interval_us;           /* from the last sample to the next */
	uint64_t samples;               /* how many, and their cost: for --debug and bench/RESULTS.md */
	uint64_t precise_samples;       /* of them, those that also read the page tables */
	int *tmpfs_fds;                 /* /dev/shm, then each MOP_TMPFS of plan: held from the
					 * first sample on, so a rename inside cannot hide one; -1
					 * where not opened yet */
	size_t n_tmpfs;
	uint64_t cost_us;
	bool no_memfds;                 /* none can be made (a pool request's filter): none looked for */
	struct seen *pass_seen;         /* the memfd pass (memwatch.c, memfds_counted): inodes counted */
	struct seen *last_seen;         /* those of the last whole pass */
	uint64_t memfd_pass;            /* its bytes so far */
	uint64_t memfd_last_pass;       /* the last whole pass's */
	pid_t pass_pid;                 /* where the next sample goes on: this pid, */
	int pass_fd;                    /* from this fd */
};

/* True if this kernel lets the supervisor measure a process (/proc/self/smaps_rollup
 * is readable): otherwise the memory limit falls back to RLIMIT_DATA. */
bool memwatch_can_measure(void);

/* Sets mw up for a limit of limit_bytes (cg1 NULL: measured, else watched through
 * the group); the plan names the tmpfs mounts.  Nothing is opened yet. */
void memwatch_init(struct memwatch *mw, uint64_t limit_bytes, const struct cgroup_v1 *cg1,
		   const struct mount_plan *plan, bool host_scan);

/* Arms the watch once the payload runs (its root is then the container's): init is
 * the host pid of the container's init; the first sample is due now. */
void memwatch_arm(struct memwatch *mw, pid_t init, uint64_t now_us);

/* Milliseconds until the next sample, for poll(2) (at most limit_ms; -1 stays -1
 * when not armed). */
int memwatch_timeout_ms(const struct memwatch *mw, uint64_t now_us, int limit_ms);

/* Takes a sample if one is due.  Returns 1 when the container passed the limit (or
 * the group's OOM killer struck), 0 otherwise, -1 with err when the container's
 * memory cannot be measured (the run must then end: the limit cannot be kept). */
int memwatch_poll(struct memwatch *mw, uint64_t now_us, struct nsrun_error *err);

/* Closes what memwatch_arm opened, and disarms the watch (no sample is due). */
void memwatch_close(struct memwatch *mw);

#endif
