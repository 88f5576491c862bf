/* run.h - the supervisor side of a run (see the theory of operation in run.c). */
#ifndef NSRUN_RUN_H
#define NSRUN_RUN_H

#include <signal.h>
#include <termios.h>
#include <stdbool.h>
#include <signal.h>
#include <sys/types.h>

#include "capture.h"
#include "cgroup.h"
#include "cgroup_v1.h"
#include "config.h"
#include "mount.h"
#include "mount_plan.h"
#include "memwatch.h"
#include "ucounts.h"
#include "pasta.h"
#include "netjoin.h"
#include "publish.h"
#include "relay.h"
#include "result.h"

struct nsrun_seccomp;
struct timing;

/* Runtime state of one run; released by run_teardown() on every path. */
struct nsrun_run {
	struct mount_plan plan;
	struct mount_sources sources;
	struct nsrun_seccomp *seccomp;
	int sync_fd;                    /* supervisor's end of the sync socket */
	int signal_fd;                  /* forwarded signals */
	pid_t child;                    /* container init (pid 1 inside), or -1 */
	bool child_reaped;
	sigset_t saved_mask;
	bool mask_saved;
	struct capture_stream out;      /* the payload's stdout, when captured */
	struct capture_stream err;      /* its stderr */
	int stdin_fd;                   /* --stdin, /dev/null with --json, or -1 */
	uint64_t start_us;              /* CLOCK_MONOTONIC at the start of set-up */
	uint64_t deadline_us;           /* start + timeout, 0 = none */
	struct timing *timing;          /* shared with init and the payload, or NULL */
	struct cgroup_run cg;           /* the run's cgroup, if there is one */
	struct ucounts_plan ucounts;    /* the container's inotify, fanotify, namespace limits */
	struct nsrun_limits rlimits;    /* the limits left to rlimits (those no cgroup took) */
	struct cgroup_v1 cg1;           /* --memory in a cgroup v1 group, where v2 has no memory controller */
	struct memwatch mw;             /* --memory measured by the supervisor, or cg1's OOM kills watched */
	const char *memory_how;         /* how --memory is enforced (result_enforced.memory), NULL: no limit */
	uint64_t kill_deadline_us;      /* after KILL_ALL: when pid 1 is SIGKILLed, 0 = none */
	int landlock_abi;               /* the payload's Landlock ruleset ABI, 0: none */
	struct publish_state *pub;      /* -p: listening sockets and the forwarder */
	struct pasta_state pasta;       /* --network pasta: pasta's guard */
	int ready_fd;                   /* -d: gets "R" once the service is ready (OCI create: once
					 * it waits on the exec fifo), else -1 */
	int stop_fd;                    /* -d --stop-with-*: a pidfd, readable = stop as on SIGTERM
					 * (the caller's: not closed here), else -1 */
	int log_index_fd;               /* -d: the log's index (log_index.h; the caller's), else -1 */
	bool solo;                      /* a foreground run (nsrun_service_io.solo) */
	int image_lock_fd;              /* the image's rootfs, flock(LOCK_SH) for the run, or -1 */
	int exec_fifo_fd;               /* cfg->exec_fifo opened O_PATH (the container reopens it), or -1 */
	int *copy_fds;                  /* cfg->copy_archive_tars opened O_RDONLY, as the caller; NULL: none */
	size_t n_copy_fds;
	struct net_join join;           /* --network container:NAME or NAME: what is joined (netjoin.h) */
	uint64_t stop_deadline_us;      /* after a forwarded SIGINT/TERM/HUP: end of --stop-timeout, 0 = none */
	int stop_signal;                /* the first such signal */
	int pty_fd;                     /* -t: the master of the container's pty (nonblocking), or -1 */
	const char *console_socket;     /* cfg->console_socket: where the master goes instead */
	bool payload_started;           /* EXEC_OK came: only now is stdin read (a set-up that fails
					 * before may be retried in a lower tier with all of it) */
	struct pty_input pty_in;        /* -t: our stdin on its way to the pty */
	struct termios saved_termios;   /* -t: our terminal's mode before raw mode */
	bool termios_saved;
	struct sigaction saved_sigpipe; /* -t: SIGPIPE is ignored while relaying */
	bool sigpipe_saved;
	bool subreaper;                 /* minimal: PR_SET_CHILD_SUBREAPER is ours until teardown */
	struct stdio_relay relay;       /* the payload's stdio to and from the caller's (relay.h) */
};

/* Runs cfg (validated) to completion and fills *result; stamps the phases in
 * timing (NULL: none, see timing.h); nothing is left behind on
 * the host whatever happens.  Prints the collected warnings to stderr before the
 * payload starts (unless quiet).  Returns 0 (the result says what happened). */
int nsrun_run(const struct nsrun_config *cfg, struct nsrun_result *result, struct timing *timing);

/* What a service's run has beyond a foreground one's (service.c, the OCI monitor). */
struct nsrun_service_io {
	struct publish_state *pub;      /* the -p sockets, already bound (publish_open) or not yet */
	int ready_fd;                   /* -1: none; gets "R" once the payload has exec'd, or with
					 * --wait-port once that port accepts a connection inside (the
					 * forwarder writes it); closed by the end of the run either way */
	int stop_fd;                    /* -1: none (it stays open); a pidfd (pidfd_open(2)): once it
					 * is readable (that process ended) the run is stopped as on
					 * SIGTERM to nsrun (--stop-timeout, then SIGKILL) */
	int log_index_fd;               /* -1: none (it stays open); the service log's index, which
					 * the relay writes (log_index.h) */
	bool solo;                      /* a foreground run (nsrun_run): nothing can join the container
					 * (nsrun exec, hooks) before its payload has exec'd */
};

/* As nsrun_run, for a service: io says what it has beyond a foreground run
 * (struct nsrun_service_io).  Returns 0 (the result says what happened). */
int nsrun_run_service(const struct nsrun_config *cfg, struct nsrun_result *result, struct timing *timing,
		      const struct nsrun_service_io *io);

#endif
