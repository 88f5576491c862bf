/* run_internal.h - the steps of a run (run.c), shared by the files that hold them:
 * run_prepare.c (P1-P4), run.c (P5-P8, teardown), run_supervise.c (P9),
 * run_tty.c (-t's terminal mode and --console-socket), run_collect.c (P10's figures).  Not an
 * interface for anything but these. */
#ifndef NSRUN_RUN_INTERNAL_H
#define NSRUN_RUN_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "run.h"

/* a + b, saturated: a deadline far away stays far away instead of wrapping */
static inline uint64_t add_us(uint64_t a, uint64_t b)
{
	return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

/* P1-P4 (run_prepare.c): everything that can be rejected, before any namespace
 * exists: image lock, joined network, mount plan and sources, seccomp, stdio,
 * cgroup and rlimits, -p sockets.  Returns 0 or -1 with err (STAGE_PREPARE). */
int run_prepare(const struct nsrun_config *cfg, struct nsrun_run *run, struct nsrun_error *err);

/* SIGKILL to the container's init unless it is reaped already (run.c). */
void run_kill_child(struct nsrun_run *run);

/* P9 (run_supervise.c): waits for the end of the run, forwarding signals,
 * enforcing --timeout, --stop-timeout, --memory and --output-limit, relaying
 * stdio; fills result's status.  Returns 0 or -1 with err (STAGE_SUPERVISE). */
int run_supervise(const struct nsrun_config *cfg, struct nsrun_run *run, struct nsrun_result *result,
		  struct nsrun_error *err);

/* -t (run_tty.c): our terminal raw (cfmakeraw(3)) and run->pty_fd nonblocking;
 * undone by tty_restore, which also restores SIGPIPE's action (idempotent).
 * tty_start returns 0 or -1 with err. */
int tty_start(struct nsrun_run *run, struct nsrun_error *err);
void tty_restore(struct nsrun_run *run);

/* OCI --console-socket: the pty master fd to the AF_UNIX stream socket at path
 * (SCM_RIGHTS, unix(7)), as runc sends it.  Returns 0 or -1 with err. */
int tty_send_console(const char *path, int fd, struct nsrun_error *err);

/* After the run (run_collect.c): the init's rusage (it is reaped, SIGKILLed past
 * run->kill_deadline_us); the cgroup's statistics and OOM kills; --memory's peak
 * without a v2 cgroup.  Each fills its part of result. */
void run_collect(struct nsrun_run *run, struct nsrun_result *result);
void run_collect_cgroup(const struct nsrun_config *cfg, struct nsrun_run *run, struct nsrun_result *result);
void run_collect_memory(const struct nsrun_config *cfg, struct nsrun_run *run, struct nsrun_result *result);

#endif
