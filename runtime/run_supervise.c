/* run_supervise.c - P9 of a run: the supervisor's loop until the run is over
 * (pid 1's messages, forwarded signals, the deadlines of --timeout and
 * --stop-timeout, --memory's watch, captured output, stdio relay, -t's pty).
 * See run_internal.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ns.h"
#include "run_internal.h"
#include "sync.h"
#include "sys.h"
#include "timing.h"

#define LOOP_FDS 8 /* the loop's own pollfds (run_supervise), before the relay's */

/* Milliseconds from now to deadline for poll(2), rounded up, at most INT_MAX;
 * earlier (>= 0) if limit_ms (>= 0) is nearer. */
static int ms_until(uint64_t deadline, uint64_t now, int limit_ms)
{
	uint64_t ms = deadline > now ? (deadline - now + 999) / 1000 : 0;

	if (ms > INT_MAX)
		ms = INT_MAX;
	return limit_ms >= 0 && (uint64_t)limit_ms < ms ? limit_ms : (int)ms;
}

#define FLUSH_GRACE_US 1000000 /* past --timeout, for the payload's last output to reach a slow reader */
#define STOP_GRACE_US 500000    /* for pid 1 to kill and reap the rest, so their usage counts */

/* Ends the container: pid 1 is asked to kill and reap everything (its rusage then
 * holds their CPU time); run_collect SIGKILLs it if it has not gone by kill_deadline. */
static void stop_container(struct nsrun_run *run)
{
	struct nsrun_error ignored;

	/* sync: KILL_ALL */
	if (run->sync_fd < 0 || sync_send(run->sync_fd, SYNC_KILL_ALL, 0, &ignored) < 0)
		run_kill_child(run);
	run->kill_deadline_us = monotonic_us() + STOP_GRACE_US;
}

static void result_from_status(struct nsrun_result *result, int status)
{
	if (WIFSIGNALED(status)) {
		result->status = NSRUN_STATUS_SIGNALED;
		result->signal = WTERMSIG(status);
	} else {
		result->status = NSRUN_STATUS_EXITED;
		result->exit_code = WEXITSTATUS(status);
	}
}

/* One message from pid 1. Returns 1 when the run is over, 0 to go on, -1 on error. */
static int handle_message(struct nsrun_run *run, bool tty, struct nsrun_result *result, struct nsrun_error *err)
{
	struct sync_msg msg;
	/* only -t passes an fd (the pty): the rest is read(2), which no outer filter denies */
	int r = sync_recv(run->sync_fd, tty, &msg, err);

	if (r < 0)
		return -1;
	if (r == 0)
		return error_set_stage(err, STAGE_SUPERVISE, 0, "the container's init exited unexpectedly");
	switch (msg.type) {
	case SYNC_EXEC_OK: /* sync: EXEC_OK */
		run->payload_started = true;
		/* the payload runs in the container's root now: its memory can be measured */
		if (run->mw.limit_bytes && !run->mw.cg1) {
			/* the supervisor finds the container through /proc, whose pid namespace
			 * need not be ours (an outer bwrap --unshare-pid without --proc) */
			long n = ns_proc_pid(run->child);
			if (n < 0)
				return error_set_stage(err, STAGE_SUPERVISE, errno, "--memory: the container's init "
						       "has no number in this /proc: its memory cannot be measured");
			memwatch_arm(&run->mw, (pid_t)n, monotonic_us() + MEMWATCH_FIRST_US);
			memwatch_pin_now(&run->mw);
		} else {
			memwatch_arm(&run->mw, run->child, monotonic_us());
		}
		if (run->ready_fd >= 0) {
			if (write(run->ready_fd, "R", 1) < 0) {
				/* the waiting nsrun -d is gone: nothing to tell */
			}
			close(run->ready_fd);
			run->ready_fd = -1;
		}
		return 0;
	case SYNC_CREATED: /* sync: CREATED */
		if (run->ready_fd >= 0) {
			if (write(run->ready_fd, "R", 1) < 0) {
				/* the waiting nsrun create is gone: nothing to tell */
			}
			close(run->ready_fd);
			run->ready_fd = -1;
		}
		return 0;
	case SYNC_PTY: /* sync: PTY */
		if (msg.value < 0 || run->pty_fd >= 0)
			return error_set_stage(err, STAGE_SUPERVISE, EPROTO, "PTY without a terminal from the container");
		if (run->console_socket) {
			/* OCI: the caller (conmon, containerd's shim) relays the terminal */
			int rc = tty_send_console(run->console_socket, (int)msg.value, err);
			close((int)msg.value);
			return rc;
		}
		run->pty_fd = (int)msg.value;
		if (tty_start(run, err) < 0)
			return -1;
		/* what the payload writes to its terminal goes to our stdout through the
		 * relay, which never blocks the loop on a stalled reader (issue 17) */
		{
			int out = fcntl(run->pty_fd, F_DUPFD_CLOEXEC, 3);
			if (out < 0)
				return error_set_stage(err, STAGE_SUPERVISE, errno, "--tty: dup the pty");
			return relay_add_pty_output(&run->relay, out, err);
		}
	case SYNC_PAYLOAD_EXITED: /* sync: PAYLOAD_EXITED */
		result_from_status(result, (int)msg.value);
		return 1;
	case SYNC_EXEC_FAILED:
		sync_msg_error(&msg, &result->error);
		result->status = NSRUN_STATUS_EXEC_FAILED;
		return 1;
	case SYNC_ERROR:
		return sync_msg_error(&msg, err);
	default:
		return error_set_stage(err, STAGE_SUPERVISE, EPROTO, "unexpected %s from the container",
				       sync_type_name(msg.type));
	}
}

/* Reads what a capture pipe has; past the limit with --output-limit-action kill
 * the run is decided.  Returns 0 or -1 with err. */
static int drain(const struct nsrun_config *cfg, struct nsrun_run *run, struct capture_stream *st,
		 struct nsrun_result *result, bool *decided, struct nsrun_error *err)
{
	bool over = false;

	if (capture_read(st, &over, err) < 0)
		return -1;
	if (over && cfg->output.limit_kill && !*decided) {
		stop_container(run);
		result->status = NSRUN_STATUS_OUTPUT_LIMIT;
		*decided = true;
	}
	return 0;
}

/* Whether the container is ending: its init (our child) has exited, or its
 * message of the payload's end waits on the sync socket.  A sample of --memory
 * that fails then (the container's /proc and root are unmounted with its mount
 * namespace when init exits) is not a limit that cannot be kept.  waitid(2)
 * with WNOWAIT leaves the child to be reaped where it always is. */
static bool container_ending(const struct nsrun_run *run)
{
	siginfo_t si;
	struct pollfd p = { .fd = run->sync_fd, .events = POLLIN };

	memset(&si, 0, sizeof(si));
	if (run->child > 0 && waitid(P_PID, (id_t)run->child, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
	    si.si_pid == run->child)
		return true;
	return run->sync_fd >= 0 && poll(&p, 1, 0) > 0;
}

/* P9: wait for the end, forwarding signals, enforcing the deadline, reading the
 * captured output as it comes.  Once the outcome is decided the container is
 * killed (if it is not gone already), so every writer of the pipes dies with its
 * pid namespace and the pipes reach EOF. */
int run_supervise(const struct nsrun_config *cfg, struct nsrun_run *run, struct nsrun_result *result,
			 struct nsrun_error *err)
{
	bool decided = false;

	err->stage = STAGE_SUPERVISE;
	run->pty_in.open = cfg->tty;
	for (;;) {
		struct pollfd pfd[LOOP_FDS + RELAY_POLLFDS] = {
			{ .fd = decided ? -1 : run->sync_fd, .events = POLLIN },
			{ .fd = run->signal_fd, .events = POLLIN },
			{ .fd = run->out.read_fd, .events = POLLIN },
			{ .fd = run->err.read_fd, .events = POLLIN },
			{ .fd = run->pty_in.len ? run->pty_fd : -1, .events = POLLOUT },
			{ .fd = run->pty_fd >= 0 && run->pty_in.open && !run->pty_in.len && run->payload_started ?
				STDIN_FILENO : -1,
			  .events = POLLIN },
			{ .fd = decided ? -1 : run->stop_fd, .events = POLLIN },
			/* the measuring thread's verdict (memwatch.h) */
			{ .fd = decided ? -1 : memwatch_fd(&run->mw), .events = POLLIN },
		};
		int timeout_ms = -1;

		if (decided && run->out.read_fd < 0 && run->err.read_fd < 0 && run->pty_fd < 0 &&
		    !relay_busy(&run->relay))
			return 0;
		relay_poll(&run->relay, pfd + LOOP_FDS, &timeout_ms);
		/* no byte of stdin is taken before the payload exec'd: a set-up that fails
		 * leaves all of it to a retry in a lower tier (foreground.c) or to the caller */
		if (!run->payload_started)
			pfd[LOOP_FDS].fd = -1;
		if (decided && run->deadline_us && relay_busy(&run->relay)) {
			/* a reader that takes nothing may keep nsrun no longer than --timeout allows */
			uint64_t now = monotonic_us(), end = add_us(run->deadline_us, FLUSH_GRACE_US);
			if (now >= end) {
				relay_abandon(&run->relay);
				if (run->pty_fd >= 0)
					close(run->pty_fd);
				run->pty_fd = -1;
				continue;
			}
			timeout_ms = ms_until(end, now, timeout_ms);
		}
		if (decided && run->kill_deadline_us) {
			uint64_t now = monotonic_us();
			if (now >= run->kill_deadline_us) {
				run_kill_child(run); /* pid 1 lingers: the kernel kills the rest with it */
				run->kill_deadline_us = 0;
			} else {
				timeout_ms = ms_until(run->kill_deadline_us, now, timeout_ms);
			}
		}
		if (memwatch_armed(&run->mw) && !decided) {
			int r;
			/* a sample in this loop stops at the next deadline (memwatch.h).  Before
			 * the deadlines below are turned into poll's timeout: a sample here may
			 * take up to the deadline, and a timeout taken before it would then sleep
			 * that long past it */
			run->mw.deadline_us = run->deadline_us;
			if (run->stop_deadline_us && (!run->deadline_us || run->stop_deadline_us < run->deadline_us))
				run->mw.deadline_us = run->stop_deadline_us;
			r = memwatch_poll(&run->mw, monotonic_us(), err);
			if (r < 0 && container_ending(run)) {
				/* the container's mounts went with its init: nothing is left to measure,
				 * and its end is read from the sync socket below */
				memset(err, 0, sizeof(*err));
				err->stage = STAGE_SUPERVISE;
				continue;
			}
			if (r < 0)
				return -1; /* the limit cannot be kept: the run ends as nsrun's error */
			if (r > 0) {
				stop_container(run);
				result->status = NSRUN_STATUS_OOM_KILLED;
				result->memory_limit_bytes = cfg->limits.memory_bytes;
				decided = true;
				continue;
			}
			timeout_ms = memwatch_timeout_ms(&run->mw, monotonic_us(), timeout_ms);
			/* the thread may have been made just now: its verdict wakes this poll */
			pfd[LOOP_FDS - 1].fd = memwatch_fd(&run->mw);
		}
		if (run->stop_deadline_us && !decided) {
			uint64_t now = monotonic_us();
			if (now >= run->stop_deadline_us) {
				/* the payload outlived --stop-timeout: as docker stop, SIGKILL (137) */
				stop_container(run);
				result->status = NSRUN_STATUS_SIGNALED;
				result->signal = SIGKILL;
				result->stopped_after = run->stop_signal;
				result->stop_timeout_us = cfg->limits.stop_timeout_us;
				decided = true;
				continue;
			}
			timeout_ms = ms_until(run->stop_deadline_us, now, timeout_ms);
		}
		if (run->deadline_us && !decided) {
			uint64_t now = monotonic_us();
			if (now >= run->deadline_us) {
				stop_container(run);
				result->status = NSRUN_STATUS_TIMED_OUT;
				result->timeout_us = cfg->limits.timeout_us;
				decided = true;
				continue;
			}
			timeout_ms = ms_until(run->deadline_us, now, timeout_ms);
		}
		if (poll(pfd, LOOP_FDS + RELAY_POLLFDS, timeout_ms) < 0) {
			if (errno == EINTR)
				continue;
			return error_set(err, errno, "poll");
		}
		if (pfd[1].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(run->signal_fd, &si, sizeof(si)) == sizeof(si)) {
				int sig = (int)si.ssi_signo;
				if (sig == SIGWINCH) { /* the kernel tells the payload (its SIGWINCH) */
					struct winsize ws;
					if (run->pty_fd >= 0 && (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0 ||
								 ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0))
						ioctl(run->pty_fd, TIOCSWINSZ, &ws);
					continue;
				}
				if (sig == SIGCHLD || decided)
					continue;
				kill(run->child, sig); /* pid 1 passes it on to the payload */
				if ((sig == SIGINT || sig == SIGTERM || sig == SIGHUP) && !run->stop_deadline_us) {
					run->stop_signal = sig;
					run->stop_deadline_us = add_us(monotonic_us(), cfg->limits.stop_timeout_us);
				}
			}
		}
		if (pfd[6].revents) {
			/* --stop-with-parent/--stop-with-pid: the watched process ended; as nsrun stop */
			run->stop_fd = -1;
			kill(run->child, SIGTERM);
			if (!run->stop_deadline_us) {
				run->stop_signal = SIGTERM;
				run->stop_deadline_us = add_us(monotonic_us(), cfg->limits.stop_timeout_us);
			}
		}
		if ((pfd[2].revents & (POLLIN | POLLHUP | POLLERR)) && drain(cfg, run, &run->out, result, &decided, err) < 0)
			return -1;
		if ((pfd[3].revents & (POLLIN | POLLHUP | POLLERR)) && drain(cfg, run, &run->err, result, &decided, err) < 0)
			return -1;
		relay_handle(&run->relay, pfd + LOOP_FDS);
		if (run->pty_fd >= 0 && run->relay.s[1].buf && run->relay.s[1].src < 0) {
			/* every holder of the pty's slave is gone (pty(7): EIO), or our stdout
			 * is: the pty is closed (its session gets SIGHUP) */
			close(run->pty_fd);
			run->pty_fd = -1;
		}
		if ((pfd[5].revents & (POLLIN | POLLHUP | POLLERR)) || (pfd[4].revents & POLLOUT))
			pty_input_pump(&run->pty_in, run->pty_fd, pfd[5].revents != 0, !run->termios_saved);
		if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			int r = handle_message(run, cfg->tty, result, err);
			if (r < 0)
				return -1;
			if (r > 0) {
				decided = true; /* pid 1 killed what the payload left behind and exits */
				timing_mark(run->timing, TP_PAYLOAD_EXITED);
			}
		}
	}
}
