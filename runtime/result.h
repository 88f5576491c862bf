/* result.h - the outcome of a run, and the one mapping to an exit status.
 *
 * Exit status (as `docker run`):
 *   the payload's own status          status EXITED
 *   128 + N                           killed by signal N (SIGNALED)
 *   124                               the --timeout passed (TIMED_OUT)
 *   125                               nsrun itself failed (ERROR)
 *   137                               ended for its output, --output-limit-action kill,
 *                                     or by the OOM killer of its cgroup (OOM_KILLED)
 *   126                               the command cannot be executed (EXEC_FAILED, not ENOENT)
 *   127                               the command was not found (EXEC_FAILED, ENOENT)
 */
#ifndef NSRUN_RESULT_H
#define NSRUN_RESULT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"

enum nsrun_status {
	NSRUN_STATUS_EXITED = 0,
	NSRUN_STATUS_SIGNALED,
	NSRUN_STATUS_TIMED_OUT,
	NSRUN_STATUS_EXEC_FAILED,
	NSRUN_STATUS_OUTPUT_LIMIT,      /* --output-limit-action kill: ended for its output */
	NSRUN_STATUS_OOM_KILLED,        /* the cgroup's OOM killer ended it (memory.events) */
	NSRUN_STATUS_ERROR,
};

/* One captured stream of the payload (--capture, --json). */
struct result_stream {
	bool captured;
	char *data;             /* the first len bytes the payload wrote (malloc'd, NUL-terminated) */
	size_t len;
	uint64_t total_bytes;   /* all it wrote */
	bool truncated;         /* more than --output-limit */
};

struct nsrun_result {
	enum nsrun_status status;
	int exit_code;          /* EXITED: the payload's status */
	int signal;             /* SIGNALED: the signal number */
	int stopped_after;      /* SIGNALED by --stop-timeout: the forwarded signal it outlived, else 0 */
	uint64_t stop_timeout_us;       /* with stopped_after: the grace that passed */
	uint64_t timeout_us;    /* TIMED_OUT: the limit that passed */
	uint64_t wall_time_us;  /* from the start of set-up to the end of the run */
	uint64_t cpu_user_us;   /* the container's cgroup's cpu.stat, else getrusage(2) of its init */
	uint64_t cpu_system_us;
	bool cpu_whole_container;       /* from the cgroup: every process; else only those waited for
					 * (children a parent ignoring SIGCHLD lets the kernel reap are
					 * lost: wait(2), the kernel adds no one's time to theirs) */
	uint64_t max_rss_kib;   /* the largest resident set of any of them */
	uint64_t memory_peak_bytes;     /* the cgroup's memory.peak (v1: max_usage_in_bytes), or the largest
					 * sample of the supervisor's measure; 0: unknown */
	uint64_t pids_peak;             /* the cgroup's pids.peak, 0: unknown */
	uint64_t memory_limit_bytes;    /* OOM_KILLED: the limit, for the message */
	struct result_enforced {
		const char *memory;     /* "cgroup" (memory.max), "cgroup-v1" (memory.limit_in_bytes),
					 * "supervisor" (memwatch.h), "rlimit" (RLIMIT_DATA); NULL: no limit */
		bool pids_cgroup;       /* pids.max, else RLIMIT_NPROC */
		bool cpu_cgroup;        /* cpu.max, else not enforced */
		bool ucounts;           /* the container's user namespace has its own max_* limits */
	} enforced;
	const char *cgroup_manager;     /* who made the run's cgroup: "systemd" (a scope nsrun asked its
					 * manager for, cgroup_systemd.h), "cgroupfs" (nsrun, in a
					 * delegated or root's cgroup); NULL: no cgroup */
	long inotify_instances;         /* the container's max_inotify_instances, -1: none */
	long inotify_watches;           /* its max_inotify_watches, -1: none */
	struct result_stream out;       /* the payload's stdout, when captured */
	struct result_stream err_out;   /* its stderr */
	struct nsrun_error error;       /* ERROR and EXEC_FAILED */
	bool before_payload;            /* ERROR before the payload exec'd: nothing of it ran and
					 * none of stdin was read (a lower tier may be tried: main.c) */
	struct result_pool {            /* a request through `nsrun pool` (pool.h); the JSON's "pool" */
		bool used;
		unsigned slot;          /* the zygote's slot that ran it */
		uint64_t queued_us;     /* from the request's arrival to its slot */
		uint64_t run_us;        /* from its slot to its end */
		unsigned zygote_restarts;       /* the zygote's restarts so far */
	} pool;
	size_t n_ports;                 /* -p: the host ports as bound (port 0 resolved), in order */
	struct result_port {
		char host_ip[46];
		uint16_t host_port;
		uint16_t container_port;
	} ports[32];                    /* NSRUN_MAX_PUBLISH */
};

struct nsrun_config;

/* Writes the result as one JSON object (schema NSRUN_JSON_SCHEMA, documented in the
 * README) to out, with yajl_gen.  Text that is not valid UTF-8 has each invalid byte
 * replaced by U+FFFD and the exact bytes in "stdout_base64"/"stderr_base64".
 * Returns 0, or -1 with errno. */
int result_write_json(const struct nsrun_result *r, const struct nsrun_config *cfg, FILE *out);

/* Frees the captured streams. */
void result_free(struct nsrun_result *r);

#define NSRUN_JSON_SCHEMA 1

/* The name of signal sig into buf (len bytes): "SIGTERM"; real-time signals as
 * bash's `kill -l` names them, "SIGRTMIN", "SIGRTMIN+N" up to the middle of the
 * range, then "SIGRTMAX-N" and "SIGRTMAX" (signal(7); SIGRTMIN is libc's, 34
 * with glibc); any other number "SIG<N>".  Returns buf. */
const char *result_signal_name(int sig, char *buf, size_t len);

/* Name of a status ("exited", "signaled", "timed_out", "exec_failed", "output_limit", "error"). */
const char *result_status_name(enum nsrun_status status);

/* The exit status of nsrun for r, per the table above (0..255). */
int result_exit_code(const struct nsrun_result *r);

/* The line nsrun prints for r (without "nsrun: "), e.g. "timed out after 2s", into
 * buf; the JSON "error" is the same text. Returns its length, 0 when there is none. */
size_t result_message(const struct nsrun_result *r, char *buf, size_t len);

/* Prints what the user must be told on stderr (nothing for a normal exit):
 * "nsrun: timed out after 2s", "nsrun: <error>: <strerror>" and its hint. */
void result_report(const struct nsrun_result *r, FILE *out);

#endif
