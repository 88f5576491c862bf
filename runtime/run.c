/* run.c - the supervisor: prepare, clone, id maps, supervise, teardown.
 *
 * Theory of operation.  Three processes:
 *   nsrun (this, on the host)  prepares everything that can be rejected before
 *                              clone (image, mount sources, seccomp), clones the
 *                              container, writes its id maps, supervises;
 *   container init (pid 1)     container.c: builds the root, forks the payload,
 *                              reaps, forwards signals, reports the payload's status;
 *   payload (pid 2)            exec.c: drops to uid 65534 in its own user namespace,
 *                              drops every privilege, loads seccomp, execs.
 * The supervisor and pid 1 talk over a SOCK_SEQPACKET socketpair (sync.h); the
 * payload tells pid 1 whether it exec'd over a close-on-exec pipe.  The wall-clock
 * deadline covers set-up too.  At the deadline, or if nsrun dies (pid 1 has
 * PR_SET_PDEATHSIG SIGKILL), pid 1 is killed and with it, by the kernel, every
 * process of its pid namespace: setsid and double forks included.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "container.h"
#include "ns.h"
#include "run.h"
#include "seccomp.h"
#include "sync.h"
#include "timing.h"

#define OVERFLOW_ID 65534       /* what a root caller's container maps to: never host root */

static const int forward_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, 0 };

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static void warn_line(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "nsrun: warning: %s\n", line);
}

/* Why the controller (memory, pids, cpu) is not the run's: no cgroup at all, or
 * the cgroup lacks it.  Returns a static or cg-owned string. */
static const char *why_no_controller(struct cgroup_run *cg, const char *controller)
{
	if (!cg->path)
		return cg->why_not[0] ? cg->why_not : "no cgroup";
	snprintf(cg->why_not, sizeof(cg->why_not), "the %s controller is not delegated to nsrun's cgroup %s",
		 controller, cg->path);
	return cg->why_not;
}

/* P4: the run's cgroup, and what is left to rlimits.  A limit no cgroup can take
 * falls back to an rlimit (memory, pids) or is not enforced (cpus): a warning, an
 * error with --strict (B25: limits are never silently absent). */
static int run_prepare_limits(const struct nsrun_config *cfg, struct nsrun_run *run, struct nsrun_error *err)
{
	const struct nsrun_limits *l = &cfg->limits;

	if (cgroup_prepare(cfg, &run->cg, err) < 0)
		return -1;
	if (cfg->debug)
		fprintf(stderr, "nsrun: debug: cgroup %s%s%s\n", run->cg.path ? run->cg.path : "none",
			run->cg.why_not[0] ? ": " : "", run->cg.why_not);
	run->rlimits = *l;
	if (run->cg.memory)
		run->rlimits.memory_bytes = 0;
	if (run->cg.pids)
		run->rlimits.pids = 0;
	if (cfg->security.strict) {
		const char *which = l->memory_bytes && !run->cg.memory ? "memory" :
				    l->pids && !run->cg.pids ? "pids" :
				    l->cpus_milli && !run->cg.cpu ? "cpu" : NULL;
		if (which)
			return error_set(err, 0, "--%s cannot be enforced by a cgroup here (--strict): %s",
					 strcmp(which, "pids") == 0 ? "pids-limit" : strcmp(which, "cpu") == 0 ? "cpus" : which,
					 why_no_controller(&run->cg, which));
	}
	if (l->cpus_milli && !run->cg.cpu)
		fprintf(stderr, "nsrun: warning: --cpus is not enforced: %s\n", why_no_controller(&run->cg, "cpu"));
	return 0;
}

/* P1-P4: everything that can be rejected, before any namespace exists. */
static int run_prepare(const struct nsrun_config *cfg, struct nsrun_run *run, struct nsrun_error *err)
{
	bool privileged = geteuid() == 0;

	err->stage = STAGE_PREPARE;
	if (mount_plan_build(cfg, &run->plan, err) < 0)
		return -1;
	if (mount_prepare_sources(cfg, &run->plan, privileged, &run->sources, err) < 0)
		return -1;
	timing_mark(run->timing, TP_SOURCES);
	if (seccomp_prepare(cfg->security.seccomp, seccomp_profiles_dir(), cfg->security.strict, warn_line, NULL,
			    &run->seccomp, err) < 0)
		return -1;
	timing_mark(run->timing, TP_SECCOMP);
	if (cfg->output.stdin_path || cfg->output.json_path) {
		const char *in = cfg->output.stdin_path ? cfg->output.stdin_path : "/dev/null";
		run->stdin_fd = open(in, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (run->stdin_fd < 0)
			return error_set(err, errno, "--stdin \"%s\"", in);
	}
	if (cfg->output.capture && (capture_open(&run->out, cfg->output.limit_bytes, err) < 0 ||
				    capture_open(&run->err, cfg->output.limit_bytes, err) < 0))
		return -1;
	if (run_prepare_limits(cfg, run, err) < 0)
		return -1;
	/* once setgroups is denied nobody inside can drop them: a root caller drops its
	 * own (root of a user namespace with setgroups denied cannot: EPERM, go on) */
	if (privileged && setgroups(0, NULL) < 0 && errno != EPERM)
		return error_set(err, errno, "drop supplementary groups");
	return 0;
}

/* True if id is mapped in this process's user namespace (user_namespaces(7)). */
static bool id_is_mapped(const char *map_file, unsigned id)
{
	FILE *f = fopen(map_file, "re");
	unsigned inside, outside, count;
	bool found = false;

	if (!f)
		return false;
	while (!found && fscanf(f, "%u %u %u", &inside, &outside, &count) == 3)
		found = id >= inside && id - inside < count;
	fclose(f);
	return found;
}

/* The host ids container 0 maps to: the caller's own, except for root, whose
 * container maps to 65534 (nothing inside is ever host root) where that id exists. */
static void host_ids(uid_t *uid, gid_t *gid)
{
	*uid = geteuid();
	*gid = getegid();
	if (*uid == 0 && id_is_mapped("/proc/self/uid_map", OVERFLOW_ID) &&
	    id_is_mapped("/proc/self/gid_map", OVERFLOW_ID)) {
		*uid = OVERFLOW_ID;
		*gid = OVERFLOW_ID;
	}
}

/* P5-P8: socket and signals, clone, id maps, go. */
static int run_start(const struct nsrun_config *cfg, struct nsrun_run *run, struct nsrun_error *err)
{
	int sv[2];
	sigset_t set;
	uid_t host_uid;
	gid_t host_gid;
	bool in_cgroup = false;

	host_ids(&host_uid, &host_gid);

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return error_set(err, errno, "socketpair");
	run->sync_fd = sv[0];
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	for (const int *s = forward_signals; *s; s++)
		sigaddset(&set, *s);
	if (sigprocmask(SIG_BLOCK, &set, &run->saved_mask) < 0) {
		close(sv[1]);
		return error_set(err, errno, "block signals");
	}
	run->mask_saved = true;
	run->signal_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (run->signal_fd < 0) {
		close(sv[1]);
		return error_set(err, errno, "signalfd");
	}
	run->child = ns_clone(ns_clone_flags(), run->cg.dir_fd, &in_cgroup, err);
	if (run->child < 0) {
		close(sv[1]);
		return -1;
	}
	if (run->child == 0) {
		struct container_args a = {
			.cfg = cfg, .plan = &run->plan, .sources = &run->sources, .seccomp = run->seccomp,
			.sync_fd = sv[1], .close_fds = { sv[0], run->signal_fd, run->out.read_fd, run->err.read_fd, -1, -1 },
			.stdio = { run->stdin_fd, run->out.write_fd, run->err.write_fd },
			.timing = run->timing,
			.rlimits = &run->rlimits,
			.forward_signals = forward_signals,
		};
		container_main(&a);
	}
	timing_mark(run->timing, TP_CLONE);
	close(sv[1]);
	/* the payload's ends live on in the child: ours must go, or the pipes never reach EOF */
	if (run->out.write_fd >= 0)
		close(run->out.write_fd);
	if (run->err.write_fd >= 0)
		close(run->err.write_fd);
	run->out.write_fd = run->err.write_fd = -1;
	/* the trees were copied into the child with its fd table: ours can go */
	mount_sources_close(&run->sources);
	/* before ID_MAPS_WRITTEN: the child waits for it, so it has run nothing yet */
	if (!in_cgroup && cgroup_enter(&run->cg, run->child, err) < 0)
		return -1;
	if (ns_write_id_maps(run->child, host_uid, host_gid, err) < 0)
		return -1;
	timing_mark(run->timing, TP_ID_MAPS);
	/* sync: ID_MAPS_WRITTEN */
	return sync_send(run->sync_fd, SYNC_ID_MAPS_WRITTEN, 0, err);
}

static void kill_child(struct nsrun_run *run)
{
	if (run->child > 0 && !run->child_reaped)
		kill(run->child, SIGKILL);
}

#define STOP_GRACE_US 500000    /* for pid 1 to kill and reap the rest, so their usage counts */

/* Ends the container: pid 1 is asked to kill and reap everything (its rusage then
 * holds their CPU time); run_collect SIGKILLs it if it has not gone by kill_deadline. */
static void stop_container(struct nsrun_run *run)
{
	struct nsrun_error ignored;

	/* sync: KILL_ALL */
	if (run->sync_fd < 0 || sync_send(run->sync_fd, SYNC_KILL_ALL, 0, &ignored) < 0)
		kill_child(run);
	run->kill_deadline_us = now_us() + STOP_GRACE_US;
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
static int handle_message(struct nsrun_run *run, struct nsrun_result *result, struct nsrun_error *err)
{
	struct sync_msg msg;
	int r = sync_recv(run->sync_fd, &msg, err);

	if (r < 0)
		return -1;
	if (r == 0)
		return error_set_stage(err, STAGE_SUPERVISE, 0, "the container's init exited unexpectedly");
	switch (msg.type) {
	case SYNC_EXEC_OK: /* sync: EXEC_OK */
		return 0;
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

/* P9: wait for the end, forwarding signals, enforcing the deadline, reading the
 * captured output as it comes.  Once the outcome is decided the container is
 * killed (if it is not gone already), so every writer of the pipes dies with its
 * pid namespace and the pipes reach EOF. */
static int run_supervise(const struct nsrun_config *cfg, struct nsrun_run *run, struct nsrun_result *result,
			 struct nsrun_error *err)
{
	bool decided = false;

	err->stage = STAGE_SUPERVISE;
	for (;;) {
		struct pollfd pfd[4] = {
			{ .fd = decided ? -1 : run->sync_fd, .events = POLLIN },
			{ .fd = run->signal_fd, .events = POLLIN },
			{ .fd = run->out.read_fd, .events = POLLIN },
			{ .fd = run->err.read_fd, .events = POLLIN },
		};
		int timeout_ms = -1;

		if (decided && run->out.read_fd < 0 && run->err.read_fd < 0)
			return 0;
		if (decided && run->kill_deadline_us) {
			uint64_t now = now_us();
			if (now >= run->kill_deadline_us) {
				kill_child(run); /* pid 1 lingers: the kernel kills the rest with it */
				run->kill_deadline_us = 0;
			} else {
				timeout_ms = (int)((run->kill_deadline_us - now + 999) / 1000);
			}
		}
		if (run->deadline_us && !decided) {
			uint64_t now = now_us();
			if (now >= run->deadline_us) {
				stop_container(run);
				result->status = NSRUN_STATUS_TIMED_OUT;
				result->timeout_us = cfg->limits.timeout_us;
				decided = true;
				continue;
			}
			timeout_ms = (int)((run->deadline_us - now + 999) / 1000);
		}
		if (poll(pfd, 4, timeout_ms) < 0) {
			if (errno == EINTR)
				continue;
			return error_set(err, errno, "poll");
		}
		if (pfd[1].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(run->signal_fd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo != SIGCHLD && !decided)
					kill(run->child, (int)si.ssi_signo); /* pid 1 passes it on to the payload */
			}
		}
		if ((pfd[2].revents & (POLLIN | POLLHUP | POLLERR)) && drain(cfg, run, &run->out, result, &decided, err) < 0)
			return -1;
		if ((pfd[3].revents & (POLLIN | POLLHUP | POLLERR)) && drain(cfg, run, &run->err, result, &decided, err) < 0)
			return -1;
		if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			int r = handle_message(run, result, err);
			if (r < 0)
				return -1;
			if (r > 0) {
				decided = true; /* pid 1 killed what the payload left behind and exits */
				timing_mark(run->timing, TP_PAYLOAD_EXITED);
			}
		}
	}
}

/* After the run: the init's rusage, which holds every process it reaped.  It is
 * exiting by now; past the grace it is killed. */
static void run_collect(struct nsrun_run *run, struct nsrun_result *result)
{
	struct rusage ru;
	int status, flags = WNOHANG;
	pid_t r;

	if (run->child <= 0 || run->child_reaped)
		return;
	for (;;) {
		r = wait4(run->child, &status, flags, &ru);
		if (r == run->child || (r < 0 && errno != EINTR))
			break;
		if (r == 0 && (!run->kill_deadline_us || now_us() >= run->kill_deadline_us)) {
			kill(run->child, SIGKILL);
			run->kill_deadline_us = 0;
			/* it dies now: wait for it, do not spin beside its exit on a shared CPU */
			flags = 0;
			continue;
		}
		usleep(1000);
	}
	if (r != run->child)
		return;
	run->child_reaped = true;
	result->cpu_user_us = (uint64_t)ru.ru_utime.tv_sec * 1000000 + (uint64_t)ru.ru_utime.tv_usec;
	result->cpu_system_us = (uint64_t)ru.ru_stime.tv_sec * 1000000 + (uint64_t)ru.ru_stime.tv_usec;
	result->max_rss_kib = (uint64_t)ru.ru_maxrss;
}

/* The cgroup's word on the run: an OOM kill (memory.events) explains a SIGKILL or
 * the init's sudden death (memory.oom.group kills it too, B27); its cpu.stat is
 * the whole container's CPU time. */
static void run_collect_cgroup(const struct nsrun_config *cfg, struct nsrun_run *run, struct nsrun_result *result)
{
	struct cgroup_stats st;

	result->enforced.memory_cgroup = run->cg.memory;
	result->enforced.pids_cgroup = run->cg.pids;
	result->enforced.cpu_cgroup = run->cg.cpu;
	if (!run->cg.path)
		return;
	cgroup_kill(&run->cg);
	cgroup_read_stats(&run->cg, &st);
	result->memory_peak_bytes = st.memory_peak_bytes;
	result->pids_peak = st.pids_peak;
	if (st.cpu_usage_us) {
		result->cpu_user_us = st.cpu_user_us;
		result->cpu_system_us = st.cpu_system_us;
	}
	if ((st.oom_kill || st.oom_group_kill) &&
	    ((result->status == NSRUN_STATUS_SIGNALED && result->signal == SIGKILL) ||
	     result->status == NSRUN_STATUS_ERROR)) {
		result->status = NSRUN_STATUS_OOM_KILLED;
		result->memory_limit_bytes = cfg->limits.memory_bytes;
	}
}

static void steal_stream(struct capture_stream *st, struct result_stream *out, bool captured)
{
	out->captured = captured;
	out->data = st->buf;
	out->len = st->len;
	out->total_bytes = st->total_bytes;
	out->truncated = st->truncated;
	st->buf = NULL;
	st->len = st->cap = 0;
}

/* P10: idempotent; called once on every path. */
static void run_teardown(struct nsrun_run *run)
{
	if (run->child > 0 && !run->child_reaped) {
		int status;
		/* pid 1 exits by itself after reporting; give it no chance to linger */
		kill(run->child, SIGKILL);
		while (waitpid(run->child, &status, 0) < 0 && errno == EINTR)
			;
		run->child_reaped = true;
	}
	if (run->sync_fd >= 0)
		close(run->sync_fd);
	if (run->signal_fd >= 0)
		close(run->signal_fd);
	run->sync_fd = run->signal_fd = -1;
	if (run->mask_saved)
		sigprocmask(SIG_SETMASK, &run->saved_mask, NULL);
	run->mask_saved = false;
	capture_close(&run->out);
	capture_close(&run->err);
	cgroup_destroy(&run->cg);
	if (run->stdin_fd >= 0)
		close(run->stdin_fd);
	run->stdin_fd = -1;
	mount_sources_close(&run->sources);
	mount_plan_free(&run->plan);
	seccomp_free(run->seccomp);
	run->seccomp = NULL;
}

int nsrun_run(const struct nsrun_config *cfg, struct nsrun_result *result, struct timing *timing)
{
	struct nsrun_run run = { .sync_fd = -1, .signal_fd = -1, .child = -1, .stdin_fd = -1, .cg = { .dir_fd = -1 },
				 .out = { .read_fd = -1, .write_fd = -1 }, .err = { .read_fd = -1, .write_fd = -1 } };
	struct nsrun_error err = { 0 };

	memset(result, 0, sizeof(*result));
	run.timing = timing;
	run.start_us = now_us();
	run.deadline_us = cfg->limits.timeout_us ? run.start_us + cfg->limits.timeout_us : 0;
	if (run_prepare(cfg, &run, &err) < 0 || run_start(cfg, &run, &err) < 0 ||
	    run_supervise(cfg, &run, result, &err) < 0) {
		kill_child(&run);
		result->status = NSRUN_STATUS_ERROR;
		result->error = err;
	}
	run_collect(&run, result);
	run_collect_cgroup(cfg, &run, result);
	steal_stream(&run.out, &result->out, cfg->output.capture);
	steal_stream(&run.err, &result->err_out, cfg->output.capture);
	run_teardown(&run);
	result->wall_time_us = now_us() - run.start_us;
	return 0;
}
