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
 * The supervisor and pid 1 talk over an AF_UNIX stream socketpair (sync.h); the
 * payload tells pid 1 whether it exec'd over a close-on-exec pipe.  The wall-clock
 * deadline covers set-up too.  At the deadline, or if nsrun dies (pid 1 has
 * PR_SET_PDEATHSIG SIGKILL), pid 1 is killed and with it, by the kernel, every
 * process of its pid namespace: setsid and double forks included.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "container.h"
#include "diagnose.h"
#include "hostfile.h"
#include "ns.h"
#include "run.h"
#include "landlock.h"
#include "protected.h"
#include "seccomp.h"
#include "subid.h"
#include "sync.h"
#include "sys.h"
#include "tier.h"
#include "timing.h"
#include "ucounts.h"

static const int forward_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, 0 };

/* a + b, saturated: a deadline far away stays far away instead of wrapping */
static uint64_t add_us(uint64_t a, uint64_t b)
{
	return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

/* Milliseconds from now to deadline for poll(2), rounded up, at most INT_MAX;
 * earlier (>= 0) if limit_ms (>= 0) is nearer. */
static int ms_until(uint64_t deadline, uint64_t now, int limit_ms)
{
	uint64_t ms = deadline > now ? (deadline - now + 999) / 1000 : 0;

	if (ms > INT_MAX)
		ms = INT_MAX;
	return limit_ms >= 0 && (uint64_t)limit_ms < ms ? limit_ms : (int)ms;
}

static void warn_line(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "nsrun: warning: %s\n", line);
}

static void warn_none(void *ctx, const char *line)
{
	(void)ctx;
	(void)line;
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

/* --memory where the run's cgroup has no memory controller: a cgroup v1 group
 * where one may be had (root on a hybrid host), else the supervisor's measure of
 * real use (memwatch.h) with no per-process limit (so address-space reservations
 * work), else RLIMIT_DATA where the kernel lets nothing be measured. */
static int run_prepare_memory(const struct nsrun_config *cfg, struct nsrun_run *run, struct nsrun_error *err)
{
	const struct nsrun_limits *l = &cfg->limits;

	run->memory_how = NULL;
	if (!l->memory_bytes)
		return 0;
	if (run->cg.memory) {
		run->memory_how = "cgroup";
	} else {
		if (cgroup_v1_prepare(cfg, &run->cg1, err) < 0)
			return -1;
		if (run->cg1.path) {
			run->memory_how = "cgroup-v1";
			memwatch_init(&run->mw, l->memory_bytes, &run->cg1, NULL, false);
		} else if (memwatch_can_measure() && cfg->isolation != NSRUN_ISOLATION_MINIMAL) {
			/* (minimal: no container root to measure through, e.g. in rootless podman:
			 * the limit stays an rlimit, and --json says so) */
			run->memory_how = "supervisor";
			memwatch_init(&run->mw, l->memory_bytes, NULL, &run->plan, cfg->isolation == NSRUN_ISOLATION_REDUCED);
		} else {
			run->memory_how = "rlimit";
		}
	}
	if (strcmp(run->memory_how, "rlimit") != 0)
		run->rlimits.memory_bytes = 0;
	if (cfg->debug)
		fprintf(stderr, "nsrun: debug: --memory enforced by %s%s%s\n", run->memory_how,
			run->cg1.path ? " " : "", run->cg1.path ? run->cg1.path : "");
	return 0;
}

/* P4: the run's cgroup, and what is left to rlimits.  A limit no cgroup can take
 * falls back to an rlimit (memory, pids) or is not enforced (cpus): a warning, an
 * error with --strict (B25: limits are never silently absent). */
static int run_prepare_limits(const struct nsrun_config *cfg, struct nsrun_run *run, struct nsrun_error *err)
{
	const struct nsrun_limits *l = &cfg->limits;

	if (cgroup_prepare(cfg, &run->cg, err) < 0)
		return -1;
	if (cfg->debug) {
		fprintf(stderr, "nsrun: debug: cgroup %s%s%s\n", run->cg.path ? run->cg.path : "none",
			run->cg.why_not[0] ? ": " : "", run->cg.why_not);
		if (run->cg.scope[0])
			fprintf(stderr, "nsrun: debug: systemd scope %s, %s\n", run->cg.scope, run->cg.scope_note);
		else if (run->cg.scope_note[0])
			fprintf(stderr, "nsrun: debug: no systemd scope: %s\n", run->cg.scope_note);
	}
	run->rlimits = *l;
	if (run_prepare_memory(cfg, run, err) < 0)
		return -1;
	if (run->cg.pids)
		run->rlimits.pids = 0;
	/* minimal: no user namespace, so RLIMIT_NPROC would count every process of the
	 * caller's uid on the host, not the run's (the tier's warning says so) */
	if (cfg->isolation == NSRUN_ISOLATION_MINIMAL)
		run->rlimits.pids = 0;
	if (cfg->security.strict) {
		const char *which = l->memory_bytes && !run->cg.memory && !run->cg1.path ? "memory" :
				    l->pids && !run->cg.pids ? "pids" :
				    l->cpus_milli && !run->cg.cpu ? "cpu" : NULL;
		if (which)
			return error_set(err, 0, "--%s cannot be enforced by a cgroup here (--strict): %s",
					 strcmp(which, "pids") == 0 ? "pids-limit" : strcmp(which, "cpu") == 0 ? "cpus" : which,
					 why_no_controller(&run->cg, which));
	}
	if (l->cpus_milli && !run->cg.cpu && !cfg->isolation_retry)
		fprintf(stderr, "nsrun: warning: --cpus is not enforced: %s\n", why_no_controller(&run->cg, "cpu"));
	/* per-user kernel counters (inotify, fanotify, namespaces): the container's own
	 * limits, which no option asks for; where /proc/sys is read-only (nested in
	 * another sandbox) they stay the caller's own, as before, and --json says
	 * "none" for them */
	if (ucounts_plan(&run->ucounts, err) < 0)
		return -1;
	/* below full the container's init may stay unmapped (nobody in its namespace, with
	 * no right to these files): none set, and --json says "none", never a claim */
	if (cfg->isolation != NSRUN_ISOLATION_FULL)
		run->ucounts.settable = false;
	/* System V segments and queues no process maps: none of --memory's measure */
	run->ucounts.ipc_bytes = cfg->limits.memory_bytes;
	if (cfg->debug && !run->ucounts.settable)
		fprintf(stderr, "nsrun: debug: /proc/sys is read-only: no inotify, fanotify or namespace limits "
			"of the container's own\n");
	return 0;
}

/* P1-P4: everything that can be rejected, before any namespace exists. */
static int run_prepare(const struct nsrun_config *cfg, struct nsrun_run *run, struct nsrun_error *err)
{
	bool privileged = geteuid() == 0;

	err->stage = STAGE_PREPARE;
	/* a Landlock domain refuses every mount, and a nested nsrun must mount its root */
	if (cfg->security.landlock && !cfg->security.allow_nested)
		run->landlock_abi = landlock_abi();
	if (cfg->debug)
		fprintf(stderr, "nsrun: debug: landlock %s (ABI %d)\n",
			run->landlock_abi ? "applied" : !cfg->security.landlock ? "off" :
			cfg->security.allow_nested ? "off: --allow-nested (it would forbid the inner mounts)" :
			"not in this kernel", run->landlock_abi);
	/* no rw volume may reach what later runs trust (issue 17, kind 3) */
	if (protected_check_volumes(cfg, seccomp_profiles_dir(), err) < 0)
		return -1;
	if (cfg->isolation == NSRUN_ISOLATION_REDUCED || cfg->isolation == NSRUN_ISOLATION_MINIMAL) {
		const char *t = tier_name(cfg->isolation);
		if (cfg->isolation == NSRUN_ISOLATION_MINIMAL ? !privileged && run->landlock_abi < 6 : run->landlock_abi < 1)
			return error_set(err, ENOSYS, "isolation %s: the file system is kept read-only%s by Landlock%s, "
					 "which this kernel does not have (ABI %d)", t,
					 cfg->isolation == NSRUN_ISOLATION_MINIMAL ? " and signals in" : "",
					 cfg->isolation == NSRUN_ISOLATION_MINIMAL ? " ABI 6 (Linux 6.12)" : "",
					 run->landlock_abi);
		/* never silent: one line, the tier, why not full, what it lacks */
		tier_warn(cfg, stderr);
	}
	/* a shared lock on the image's tree for as long as the run lasts: nsrun-image
	 * deletes a tree that pull --force or build --force replaced only once no run
	 * holds one (flock(2)), because a run's overlay does not name the tree in any
	 * mount table; advisory, so a tree we cannot lock still runs */
	run->image_lock_fd = open(cfg->rootfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (run->image_lock_fd >= 0 && flock(run->image_lock_fd, LOCK_SH | LOCK_NB) < 0) {
		close(run->image_lock_fd);
		run->image_lock_fd = -1;
	}
	/* the service or network joined must be there before anything is made */
	if (net_join_open(cfg, &run->join, err) < 0)
		return -1;
	if (cfg->isolation != NSRUN_ISOLATION_REDUCED && cfg->isolation != NSRUN_ISOLATION_MINIMAL) {
		if (mount_plan_build(cfg, &run->plan, err) < 0)
			return -1;
		if (mount_prepare_sources(cfg, &run->plan, privileged, &run->sources, err) < 0)
			return -1;
	}
	timing_mark(run->timing, TP_SOURCES);
	/* a retry in a lower tier: the failed attempt said these already */
	if (seccomp_prepare(cfg->security.seccomp, seccomp_profiles_dir(),
			    (cfg->security.strict ? NSRUN_SECCOMP_STRICT : 0) |
			    (cfg->security.allow_nested ? NSRUN_SECCOMP_ALLOW_NESTED : 0),
			    cfg->isolation_retry ? warn_none : warn_line, NULL,
			    &run->seccomp, err) < 0)
		return -1;
	if (cfg->debug)
		fprintf(stderr, "nsrun: debug: seccomp profile %s\n",
			run->seccomp ? seccomp_stats(run->seccomp)->source : "unconfined");
	timing_mark(run->timing, TP_SECCOMP);
	if (cfg->output.stdin_path) {
		/* no symlink a payload could have planted, no directory (hostfile.h) */
		run->stdin_fd = host_in_open(cfg->output.stdin_path, "--stdin", err);
		if (run->stdin_fd < 0)
			return -1;
	} else if (cfg->output.json_path) {
		run->stdin_fd = open("/dev/null", O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (run->stdin_fd < 0)
			return error_set(err, errno, "open /dev/null");
	}
	if (cfg->output.capture && (capture_open(&run->out, cfg->output.limit_bytes, err) < 0 ||
				    capture_open(&run->err, cfg->output.limit_bytes, err) < 0))
		return -1;
	/* the payload never gets the caller's stdio as it is (relay.h); a service's
	 * log is bounded by --output-limit */
	if (relay_prepare(&run->relay, run->stdin_fd >= 0 ? run->stdin_fd : STDIN_FILENO, cfg->output.capture,
			  cfg->tty, cfg->service.detach ? cfg->output.limit_bytes : UINT64_MAX, err) < 0)
		return -1;
	if (run_prepare_limits(cfg, run, err) < 0)
		return -1;
	if (cfg->n_publish && !run->pub->opened) {
		char ports[NSRUN_MAX_PUBLISH * 64];
		if (publish_open(cfg, run->pub, err) < 0)
			return -1;
		publish_format(cfg, run->pub, ports, sizeof(ports));
		fprintf(stderr, "nsrun: published %s\n", ports);
	}
	/* once setgroups is denied nobody inside can drop them: a root caller drops its
	 * own (root of a user namespace with setgroups denied cannot: EPERM, go on) */
	if (privileged && setgroups(0, NULL) < 0 && errno != EPERM)
		return error_set(err, errno, "drop supplementary groups");
	return 0;
}

/* P5-P8: socket and signals, clone, id maps, go. */
/* net_join_clone's enter: the join helper into the run's cgroups, so the
 * container it clones starts there (v2: its cgroup namespace rooted there). */
static int join_enter_cgroups(pid_t pid, void *arg, struct nsrun_error *err)
{
	const struct nsrun_run *run = arg;

	if (cgroup_enter(&run->cg, pid, err) < 0 || cgroup_v1_enter(&run->cg1, pid, err) < 0)
		return -1;
	return 0;
}

static int run_start(const struct nsrun_config *cfg, struct nsrun_run *run, struct nsrun_error *err)
{
	int sv[2];
	sigset_t set;
	uid_t host_uid;
	gid_t host_gid;
	bool in_cgroup = false;
	int unmapped = 0;
	struct subid_maps subids;

	if (ns_host_ids(&host_uid, &host_gid, err) < 0)
		return -1;
	/* --userns subids: the ranges are found (or refused) before anything is made */
	if (cfg->userns == NSRUN_USERNS_SUBIDS && subid_maps_for_caller(&subids, err) < 0)
		return -1;

	/* AF_UNIX SOCK_STREAM: what every outer sandbox still allows (some seccomp
	 * filters let socketpair make only stream sockets); messages have a fixed size */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		error_set(err, errno, "socketpair(AF_UNIX, SOCK_STREAM) for the channel to the container");
		if (errno == EPERM || errno == EACCES)
			err->hint = sync_socketpair_denied_hint;
		return -1;
	}
	run->sync_fd = sv[0];
	/* OCI create: opened here, as the caller, the container reopens it through
	 * /proc/self/fd (it could not reach the state directory by its path) */
	if (cfg->exec_fifo && (run->exec_fifo_fd = open(cfg->exec_fifo, O_PATH | O_CLOEXEC)) < 0) {
		close(sv[1]);
		return error_set(err, errno, "open the exec fifo %s", cfg->exec_fifo);
	}
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	for (const int *s = forward_signals; *s; s++)
		sigaddset(&set, *s);
	if (cfg->tty) {
		struct sigaction ign = { .sa_handler = SIG_IGN };
		sigaddset(&set, SIGWINCH); /* resizes of our terminal go to the pty, not to pid 1 */
		/* a closed stdout must not kill us mid-relay: write(2) says EPIPE instead */
		run->sigpipe_saved = sigaction(SIGPIPE, &ign, &run->saved_sigpipe) == 0;
	}
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
	/* minimal: no namespace; we adopt what outlives init, to kill it at the end */
	if (cfg->isolation == NSRUN_ISOLATION_MINIMAL && prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
		close(sv[1]);
		return error_set(err, errno, "become a subreaper");
	}
	run->subreaper = cfg->isolation == NSRUN_ISOLATION_MINIMAL;
	if (run->join.netns_fd >= 0)
		/* another's network namespace: a helper clones it there and writes the maps */
		run->child = net_join_clone(&run->join, ns_clone_flags(), join_enter_cgroups, run, err);
	else
		run->child = ns_clone(cfg->isolation == NSRUN_ISOLATION_MINIMAL ? 0 : ns_clone_flags(), run->cg.dir_fd,
				      &in_cgroup, err);
	if (run->child < 0) {
		close(sv[1]);
		return -1;
	}
	if (run->child == 0) {
		publish_child_close(run->pub);
		if (run->ready_fd >= 0)
			close(run->ready_fd);
		if (run->stop_fd >= 0)
			close(run->stop_fd);
		struct container_args a = {
			.cfg = cfg, .plan = &run->plan, .sources = &run->sources, .seccomp = run->seccomp,
			.sync_fd = sv[1], .close_fds = { sv[0], run->signal_fd, run->out.read_fd, run->err.read_fd,
							 run->relay.own[0], run->relay.own[1], run->relay.own[2], -1, -1 },
			.stdio = { run->relay.payload[0],
				   cfg->output.capture ? run->out.write_fd : run->relay.payload[1],
				   cfg->output.capture ? run->err.write_fd : run->relay.payload[2] },
			.timing = run->timing,
			.rlimits = &run->rlimits,
			.forward_signals = forward_signals,
			.landlock_abi = run->landlock_abi,
			.publish_fd = run->pub->container_fd,
			.ucounts = &run->ucounts,
			.exec_fifo_fd = run->exec_fifo_fd,
		};
		if (cfg->tty && ioctl(STDIN_FILENO, TIOCGWINSZ, &a.winsize) < 0 &&
		    ioctl(STDOUT_FILENO, TIOCGWINSZ, &a.winsize) < 0)
			memset(&a.winsize, 0, sizeof(a.winsize));
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
	relay_close_payload_ends(&run->relay);
	/* before ID_MAPS_WRITTEN: the child waits for it, so it has run nothing yet */
	if (!in_cgroup && cgroup_enter(&run->cg, run->child, err) < 0)
		return -1;
	if (cgroup_v1_enter(&run->cg1, run->child, err) < 0)
		return -1;
	/* minimal has no namespace; reduced goes on unmapped where the outer sandbox
	 * refuses the maps (a Landlock ruleset over /proc): its payload is nobody then */
	if (cfg->userns == NSRUN_USERNS_SUBIDS) {
		/* the helpers have exited when this returns: the maps are in place; in
		 * another's network the join helper wrote them (netjoin.h) */
		if (run->join.netns_fd < 0 && subid_write_maps(run->child, &subids, err) < 0)
			return -1;
		/* root: the image's ids onto the container's, through the tree the
		 * child shares with us (it waits for ID_MAPS_WRITTEN to use it) */
		if (subids.direct && mount_idmap_rootfs(&run->sources, ns_proc_pid(run->child), err) < 0)
			return -1;
	} else if (cfg->isolation != NSRUN_ISOLATION_MINIMAL && run->join.netns_fd < 0 &&
		   ns_write_id_maps(run->child, host_uid, host_gid, err) < 0) {
		if (cfg->isolation != NSRUN_ISOLATION_REDUCED || (err->errnum != EACCES && err->errnum != EPERM))
			return -1;
		if (tier_host_root()) {
			error_prefix(err, "isolation reduced as root needs the id maps (unmapped, the payload would "
				     "keep host uid 0)");
			err->hint = "--isolation minimal: chroot into the image as uid 65534";
			return -1;
		}
		unmapped = SYNC_UNMAPPED;
	}
	/* the trees were copied into the child with its fd table: ours can go */
	mount_sources_close(&run->sources);
	timing_mark(run->timing, TP_ID_MAPS);
	/* before init goes on: the payload must find eth0 configured.  pasta joins the
	 * user namespace, so it comes after the id maps. */
	if (cfg->network == NSRUN_NETWORK_PASTA &&
	    pasta_start(cfg, run->pub, run->child, run->deadline_us, &run->pasta, err) < 0)
		return -1;
	/* sync: ID_MAPS_WRITTEN */
	if (sync_send(run->sync_fd, SYNC_ID_MAPS_WRITTEN, unmapped, err) < 0)
		return -1;
	/* with pasta, pasta forwards the loopback ports; the forwarder serves the rest
	 * and probes --wait-port */
	if (cfg->n_publish && (cfg->network != NSRUN_NETWORK_PASTA || cfg->service.wait_port ||
			       publish_has_listeners(run->pub))) {
		/* with --wait-port the forwarder says when the service is ready, not us */
		int fwd_ready = cfg->service.wait_port ? run->ready_fd : -1;
		if (publish_start_forwarder(cfg, run->pub, fwd_ready, err) < 0)
			return -1;
		if (fwd_ready >= 0) {
			close(run->ready_fd);
			run->ready_fd = -1;
		}
	}
	return 0;
}

static void kill_child(struct nsrun_run *run)
{
	if (run->child > 0 && !run->child_reaped)
		kill(run->child, SIGKILL);
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
		kill_child(run);
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

/* -t: our terminal goes raw (cfmakeraw(3)) so every key, ^C included, reaches the
 * container's pty, whose line discipline then does what a terminal does; the mode is
 * restored by tty_restore on every way out (run_teardown).  Returns 0 or -1. */
static int tty_start(struct nsrun_run *run, struct nsrun_error *err)
{
	struct termios raw;

	if (fcntl(run->pty_fd, F_SETFL, O_NONBLOCK) < 0)
		return error_set_stage(err, STAGE_SUPERVISE, errno, "--tty: make the pty nonblocking");
	if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &run->saved_termios) == 0) {
		run->termios_saved = true;
		raw = run->saved_termios;
		cfmakeraw(&raw);
		if (tcsetattr(STDIN_FILENO, TCSADRAIN, &raw) < 0)
			return error_set_stage(err, STAGE_SUPERVISE, errno, "--tty: put the terminal in raw mode");
	}
	return 0;
}

static void tty_restore(struct nsrun_run *run)
{
	if (run->termios_saved)
		tcsetattr(STDIN_FILENO, TCSADRAIN, &run->saved_termios);
	run->termios_saved = false;
	if (run->sigpipe_saved)
		sigaction(SIGPIPE, &run->saved_sigpipe, NULL);
	run->sigpipe_saved = false;
}

/* -t: our stdin to the pty, as much as it takes now; the rest waits (POLLOUT).  At
 * the end of a stdin that is not a terminal the pty gets its EOF character (^D). */
static void tty_to_pty(struct nsrun_run *run, bool stdin_ready)
{
	if (stdin_ready && run->pty_in_len == 0) {
		ssize_t n = read(STDIN_FILENO, run->pty_in, sizeof(run->pty_in));
		if (n > 0) {
			run->pty_in_len = (size_t)n;
		} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
			run->stdin_open = false;
			if (!run->termios_saved) {
				run->pty_in[0] = 0x04;
				run->pty_in_len = 1;
			}
		}
	}
	if (run->pty_in_len && run->pty_fd >= 0) {
		ssize_t n = write(run->pty_fd, run->pty_in, run->pty_in_len);
		if (n > 0) {
			memmove(run->pty_in, run->pty_in + n, run->pty_in_len - (size_t)n);
			run->pty_in_len -= (size_t)n;
		} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
			run->pty_in_len = 0;
		}
	}
}

/* Sends the pty master fd to the AF_UNIX stream socket at path with SCM_RIGHTS
 * (unix(7)), its path as the data, as runc does for --console-socket.  Returns 0
 * or -1 with err. */
static int send_console(const char *path, int fd, struct nsrun_error *err)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	char data[] = "/dev/ptmx";
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} control;
	struct iovec iov = { .iov_base = data, .iov_len = sizeof(data) - 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
			     .msg_controllen = sizeof(control.buf) };
	struct cmsghdr *c;
	_cleanup_close_ int s = -1;

	if (strlen(path) >= sizeof(addr.sun_path))
		return error_set_stage(err, STAGE_SUPERVISE, ENAMETOOLONG, "--console-socket \"%s\"", path);
	memcpy(addr.sun_path, path, strlen(path) + 1);
	memset(&control, 0, sizeof(control));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    connect(s, (struct sockaddr *)&addr, sizeof(addr)) < 0 || sendmsg(s, &mh, MSG_NOSIGNAL) < 0)
		return error_set_stage(err, STAGE_SUPERVISE, errno, "--console-socket \"%s\": send the terminal", path);
	return 0;
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
			memwatch_arm(&run->mw, (pid_t)n, monotonic_us());
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
			int rc = send_console(run->console_socket, (int)msg.value, err);
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

/* P9: wait for the end, forwarding signals, enforcing the deadline, reading the
 * captured output as it comes.  Once the outcome is decided the container is
 * killed (if it is not gone already), so every writer of the pipes dies with its
 * pid namespace and the pipes reach EOF. */
static int run_supervise(const struct nsrun_config *cfg, struct nsrun_run *run, struct nsrun_result *result,
			 struct nsrun_error *err)
{
	bool decided = false;

	err->stage = STAGE_SUPERVISE;
	run->stdin_open = cfg->tty;
	for (;;) {
		struct pollfd pfd[7 + RELAY_POLLFDS] = {
			{ .fd = decided ? -1 : run->sync_fd, .events = POLLIN },
			{ .fd = run->signal_fd, .events = POLLIN },
			{ .fd = run->out.read_fd, .events = POLLIN },
			{ .fd = run->err.read_fd, .events = POLLIN },
			{ .fd = run->pty_in_len ? run->pty_fd : -1, .events = POLLOUT },
			{ .fd = run->pty_fd >= 0 && run->stdin_open && !run->pty_in_len && run->payload_started ?
				STDIN_FILENO : -1,
			  .events = POLLIN },
			{ .fd = decided ? -1 : run->stop_fd, .events = POLLIN },
		};
		int timeout_ms = -1;

		if (decided && run->out.read_fd < 0 && run->err.read_fd < 0 && run->pty_fd < 0 &&
		    !relay_busy(&run->relay))
			return 0;
		relay_poll(&run->relay, pfd + 7, &timeout_ms);
		/* no byte of stdin is taken before the payload exec'd: a set-up that fails
		 * leaves all of it to a retry in a lower tier (main.c) or to the caller */
		if (!run->payload_started)
			pfd[7].fd = -1;
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
				kill_child(run); /* pid 1 lingers: the kernel kills the rest with it */
				run->kill_deadline_us = 0;
			} else {
				timeout_ms = ms_until(run->kill_deadline_us, now, timeout_ms);
			}
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
		if (run->mw.next_us && !decided) {
			int r = memwatch_poll(&run->mw, monotonic_us(), err);
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
		}
		if (poll(pfd, 7 + RELAY_POLLFDS, timeout_ms) < 0) {
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
		relay_handle(&run->relay, pfd + 7);
		if (run->pty_fd >= 0 && run->relay.s[1].buf && run->relay.s[1].src < 0) {
			/* every holder of the pty's slave is gone (pty(7): EIO), or our stdout
			 * is: the pty is closed (its session gets SIGHUP) */
			close(run->pty_fd);
			run->pty_fd = -1;
		}
		if ((pfd[5].revents & (POLLIN | POLLHUP | POLLERR)) || (pfd[4].revents & POLLOUT))
			tty_to_pty(run, pfd[5].revents != 0);
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
		if (r == 0 && (!run->kill_deadline_us || monotonic_us() >= run->kill_deadline_us)) {
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

	result->enforced.memory = run->memory_how;
	result->cgroup_manager = run->cg.path && run->cg.scope[0] ? "systemd" :
				 run->cg.path || run->cg1.path ? "cgroupfs" : NULL;
	result->enforced.pids_cgroup = run->cg.pids;
	result->enforced.cpu_cgroup = run->cg.cpu;
	result->enforced.ucounts = run->ucounts.settable;
	result->inotify_instances = ucounts_value(&run->ucounts, "max_inotify_instances");
	result->inotify_watches = ucounts_value(&run->ucounts, "max_inotify_watches");
	if (!run->cg.path)
		return;
	cgroup_kill(&run->cg);
	cgroup_read_stats(&run->cg, &st);
	result->memory_peak_bytes = st.memory_peak_bytes;
	result->pids_peak = st.pids_peak;
	if (st.cpu_usage_us) {
		result->cpu_user_us = st.cpu_user_us;
		result->cpu_system_us = st.cpu_system_us;
		result->cpu_whole_container = true;
	}
	if ((st.oom_kill || st.oom_group_kill) &&
	    ((result->status == NSRUN_STATUS_SIGNALED && result->signal == SIGKILL) ||
	     result->status == NSRUN_STATUS_ERROR)) {
		result->status = NSRUN_STATUS_OOM_KILLED;
		result->memory_limit_bytes = cfg->limits.memory_bytes;
	}
}

/* --memory without a v2 cgroup: the v1 group's peak and OOM kills (one killed
 * process is an out-of-memory end of the whole run, which the supervisor made
 * sure of), or the peak of the supervisor's samples. */
static void run_collect_memory(const struct nsrun_config *cfg, struct nsrun_run *run, struct nsrun_result *result)
{
	if (run->cg1.path) {
		result->memory_peak_bytes = cgroup_v1_peak_bytes(&run->cg1);
		if (cgroup_v1_oom_kills(&run->cg1) && result->status != NSRUN_STATUS_TIMED_OUT) {
			result->status = NSRUN_STATUS_OOM_KILLED;
			result->memory_limit_bytes = cfg->limits.memory_bytes;
		}
	} else if (run->mw.samples) {
		result->memory_peak_bytes = run->mw.peak_bytes;
	}
	if (cfg->debug && run->mw.samples)
		fprintf(stderr, "nsrun: debug: --memory: %llu samples (%llu of them by page tables), %llu us in all, "
			"peak %llu bytes\n", (unsigned long long)run->mw.samples,
			(unsigned long long)run->mw.precise_samples, (unsigned long long)run->mw.cost_us,
			(unsigned long long)run->mw.peak_bytes);
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
	if (run->subreaper) {
		/* minimal: whatever of the payload outlived init (no pid namespace kills it) */
		tier_kill_descendants();
		prctl(PR_SET_CHILD_SUBREAPER, 0);
		run->subreaper = false;
	}
	pasta_stop(&run->pasta);
	publish_close(run->pub);
	if (run->ready_fd >= 0)
		close(run->ready_fd);
	run->ready_fd = -1;
	if (run->exec_fifo_fd >= 0)
		close(run->exec_fifo_fd);
	run->exec_fifo_fd = -1;
	net_join_close(&run->join);
	if (run->image_lock_fd >= 0)
		close(run->image_lock_fd); /* and with it the image's lock */
	run->image_lock_fd = -1;
	if (run->sync_fd >= 0)
		close(run->sync_fd);
	if (run->signal_fd >= 0)
		close(run->signal_fd);
	run->sync_fd = run->signal_fd = -1;
	if (run->pty_fd >= 0)
		close(run->pty_fd);
	run->pty_fd = -1;
	relay_close(&run->relay); /* before tty_restore: it restores SIGPIPE last */
	tty_restore(run);
	if (run->mask_saved)
		sigprocmask(SIG_SETMASK, &run->saved_mask, NULL);
	run->mask_saved = false;
	capture_close(&run->out);
	capture_close(&run->err);
	cgroup_destroy(&run->cg);
	memwatch_close(&run->mw);
	cgroup_v1_destroy(&run->cg1);
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
	struct publish_state pub;

	publish_init(&pub);
	return nsrun_run_service(cfg, result, timing, &pub, -1, -1);
}

int nsrun_run_service(const struct nsrun_config *cfg, struct nsrun_result *result, struct timing *timing,
		      struct publish_state *pub, int ready_fd, int stop_fd)
{
	struct nsrun_run run = { .sync_fd = -1, .signal_fd = -1, .child = -1, .stdin_fd = -1, .pty_fd = -1,
				 .image_lock_fd = -1, .exec_fifo_fd = -1, .join = { .userns_fd = -1, .netns_fd = -1, .lock_fd = -1 },
				 .cg = { .dir_fd = -1 }, .mw = { .root_fd = -1, .proc_fd = -1 }, .pasta = { .guard = -1, .ctl_fd = -1 },
				 .sources = { .rootfs = { .tree_fd = -1 } },
				 .out = { .read_fd = -1, .write_fd = -1 }, .err = { .read_fd = -1, .write_fd = -1 } };
	struct nsrun_error err = { 0 };

	memset(result, 0, sizeof(*result));
	run.timing = timing;
	run.pub = pub;
	run.ready_fd = ready_fd;
	run.stop_fd = stop_fd;
	run.console_socket = cfg->console_socket;
	run.start_us = monotonic_us();
	run.deadline_us = cfg->limits.timeout_us ? add_us(run.start_us, cfg->limits.timeout_us) : 0;
	if (run_prepare(cfg, &run, &err) < 0 || run_start(cfg, &run, &err) < 0 ||
	    run_supervise(cfg, &run, result, &err) < 0) {
		kill_child(&run);
		if (err.errnum == ETIMEDOUT && run.deadline_us && monotonic_us() >= run.deadline_us) {
			/* set-up (pasta's start) outlasted --timeout, which covers set-up too: 124 */
			result->status = NSRUN_STATUS_TIMED_OUT;
			result->timeout_us = cfg->limits.timeout_us;
		} else {
			result->status = NSRUN_STATUS_ERROR;
			/* the same cause and fix as `nsrun check` (EPERM under AppArmor, a masked /proc) */
			diag_refine(&err, "/proc");
			result->error = err;
			result->before_payload = !run.payload_started;
		}
	}
	run_collect(&run, result);
	run_collect_cgroup(cfg, &run, result);
	run_collect_memory(cfg, &run, result);
	for (size_t i = 0; pub->opened && i < cfg->n_publish && i < sizeof(result->ports) / sizeof(result->ports[0]); i++) {
		snprintf(result->ports[i].host_ip, sizeof(result->ports[i].host_ip), "%s", cfg->publish[i].host_ip);
		result->ports[i].host_port = pub->host_port[i];
		result->ports[i].container_port = cfg->publish[i].container_port;
		result->n_ports = i + 1;
	}
	steal_stream(&run.out, &result->out, cfg->output.capture);
	steal_stream(&run.err, &result->err_out, cfg->output.capture);
	run_teardown(&run);
	result->wall_time_us = monotonic_us() - run.start_us;
	return 0;
}
