/* memwatch_internal.h - what memwatch.c (a sample) and memwatch_thread.c (the
 * thread that takes them, and the API of memwatch.h) share. */
#ifndef NSRUN_MEMWATCH_INTERNAL_H
#define NSRUN_MEMWATCH_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "memwatch.h"

#define MIN_INTERVAL_US 5000
#define MAX_INTERVAL_US 100000

struct seen;

/* The measure's state.  Set by memwatch_arm, then the measuring thread's alone,
 * but for the fields marked shared. */
struct memwatch_sampler {
	uint64_t limit_bytes;
	const struct mount_plan *plan;
	bool host_scan, no_memfds;
	uint64_t root_upper_bytes;
	pid_t init;                     /* the container's init, as the host's /proc names it */
	uint64_t armed_us;              /* when the first sample was due (memwatch_arm) */
	int root_fd;                    /* a payload process's root (the container's), or -1 */
	int proc_fd;                    /* the container's /proc, or the host's with host_scan, or -1 */
	uint64_t next_us;               /* CLOCK_MONOTONIC of the next sample */
	uint64_t give_up_us;            /* with no thread: CLOCK_MONOTONIC past which a sample
					 * stops (sets stop), 0 never */
	uint64_t peak_bytes, last_bytes, last_sample_us, interval_us;
	uint64_t samples, precise_samples, cost_us;
	int *tmpfs_fds;                 /* /dev/shm, then each MOP_TMPFS of plan: held from the
					 * first sample on, so a rename inside cannot hide one; -1
					 * where not opened yet */
	size_t n_tmpfs;
	struct seen *pass_seen;         /* the memfd pass (memfds_counted): inodes counted */
	struct seen *last_seen;         /* those of the last whole pass */
	uint64_t memfd_pass;            /* its bytes so far */
	uint64_t memfd_last_pass;       /* the last whole pass's */
	pid_t pass_pid;                 /* where the next sample goes on: this pid, */
	int pass_fd;                    /* from this fd */
	/* the thread, and what it shares with the supervisor's loop */
	bool threaded;
	bool thread_due;                /* the thread is made when the first sample is due
					 * (memwatch_arm), by the loop (poll_sampler) */
	pthread_t thread;
	int wake[2];                    /* a socketpair: [0] the loop's end (a verdict waits),
					 * [1] the thread's (stop) */
	_Atomic uint64_t sample_since;  /* shared: CLOCK_MONOTONIC start of the sample in
					 * progress, 0 between samples */
	_Atomic bool stop;              /* shared: memwatch_close asks the thread to end */
	_Atomic int verdict;            /* shared: 0 none yet, else memwatch_poll's return */
	struct nsrun_error err;         /* with verdict -1: written before it */
};

/* Opens what the measure holds from then on, before any sample: the container's
 * root and /proc (open_container), and its tmpfs mounts (so that a rename inside
 * cannot hide one).  True when the root is open; false when it cannot be yet (the
 * payload not dumpable yet, not found) or fails: the first sample tries again
 * and reports the error. */
bool memwatch_pin(struct memwatch_sampler *mw);

/* One sample of mw's container, due at now_us: returns 1 past the limit, 0 (the
 * next is scheduled in mw->next_us), -1 with err when it cannot be measured. */
int memwatch_sample(struct memwatch_sampler *mw, uint64_t now_us, struct nsrun_error *err);

#endif
