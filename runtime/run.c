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
 *
 * This file holds the order of the steps, clone (P5-P8) and teardown; the other
 * steps have files of their own (run_internal.h): run_prepare.c (P1-P4),
 * run_supervise.c (P9), run_tty.c (-t), run_collect.c (the figures of P10).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "container.h"
#include "diagnose.h"
#include "ns.h"
#include "run.h"
#include "run_internal.h"
#include "seccomp.h"
#include "subid.h"
#include "sync.h"
#include "sys.h"
#include "tier.h"
#include "timing.h"
#include "ucounts.h"

static const int forward_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, 0 };

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
	struct nsrun_error idmap_err = { 0 };

	if (ns_host_ids(&host_uid, &host_gid, err) < 0)
		return -1;
	/* --userns subids: the ranges are found (or refused) before anything is made */
	if (cfg->userns == NSRUN_USERNS_SUBIDS &&
	    (cfg->n_uid_mappings ? subid_maps_from_config(&subids, cfg, err) : subid_maps_for_caller(&subids, err)) < 0)
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
	/* --copy-archive: the same, and a missing archive fails here, before clone */
	if (cfg->copy_archive_tars.n && !(run->copy_fds = calloc(cfg->copy_archive_tars.n, sizeof(int)))) {
		close(sv[1]);
		return error_set(err, ENOMEM, "--copy-archive");
	}
	run->n_copy_fds = cfg->copy_archive_tars.n;
	for (size_t i = 0; i < cfg->copy_archive_tars.n; i++)
		run->copy_fds[i] = -1;
	for (size_t i = 0; i < cfg->copy_archive_tars.n; i++) {
		if ((run->copy_fds[i] = open(cfg->copy_archive_tars.v[i], O_RDONLY | O_CLOEXEC)) < 0) {
			close(sv[1]);
			return error_set(err, errno, "--copy-archive: open \"%s\"", cfg->copy_archive_tars.v[i]);
		}
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
	if (net_join_active(&run->join))
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
		if (run->log_index_fd >= 0)
			close(run->log_index_fd);
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
			.copy_fds = run->copy_fds,
			.solo = run->solo,
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
		if (!net_join_active(&run->join) && subid_write_maps(run->child, &subids, err) < 0)
			return -1;
		/* root: the image's ids onto the container's, through the tree the
		 * child shares with us (it waits for ID_MAPS_WRITTEN to use it); an
		 * OCI config's maps are the engine's, whose rootfs is made for them */
		if (subids.direct && !subids.n_uid_lines &&
		    mount_idmap_rootfs(&run->sources, ns_proc_pid(run->child), "--userns subids", err) < 0)
			return -1;
	} else if (cfg->isolation != NSRUN_ISOLATION_MINIMAL && !net_join_active(&run->join) &&
		   ns_write_id_maps(run->child, host_uid, host_gid, err) < 0) {
		if (cfg->isolation != NSRUN_ISOLATION_REDUCED || !ns_id_maps_refused(err->errnum))
			return -1;
		if (tier_host_root()) {
			error_prefix(err, "isolation reduced as root needs the id maps (unmapped, the payload would "
				     "keep host uid 0)");
			err->hint = "--isolation minimal: chroot into the image as uid 65534";
			return -1;
		}
		unmapped = SYNC_UNMAPPED;
	} else if (cfg->rootfs_in_place &&
		   mount_idmap_rootfs(&run->sources, ns_proc_pid(run->child), "root.readonly false", &idmap_err) < 0) {
		/* root, an OCI root written in place: what host root owns there is the
		 * container root's (host 65534), as it is the caller's rootless.  A file
		 * system that cannot be idmapped (EINVAL: overlayfs, podman's rootfs as
		 * root) gets the tmpfs layer of before, said */
		if (idmap_err.errnum != EINVAL) {
			*err = idmap_err;
			return -1;
		}
		error_warn(stderr, "root.readonly false: the file system of \"%s\" cannot be idmapped "
			"(which makes its owner the container's root): the container's writes go to a tmpfs layer "
			"over it and end with the container", cfg->rootfs);
		unmapped = SYNC_ROOT_LAYERED;
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

void run_kill_child(struct nsrun_run *run)
{
	if (run->child > 0 && !run->child_reaped)
		kill(run->child, SIGKILL);
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
	for (size_t i = 0; run->copy_fds && i < run->n_copy_fds; i++)
		if (run->copy_fds[i] >= 0)
			close(run->copy_fds[i]);
	free(run->copy_fds);
	run->copy_fds = NULL;
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
	return nsrun_run_service(cfg, result, timing,
				 &(struct nsrun_service_io){ .pub = &pub, .ready_fd = -1, .stop_fd = -1, .log_index_fd = -1,
							      .solo = true });
}

int nsrun_run_service(const struct nsrun_config *cfg, struct nsrun_result *result, struct timing *timing,
		      const struct nsrun_service_io *io)
{
	_Static_assert(NSRUN_JOIN__COUNT == 4, "one -1 a joined kind in .join.ns_fd below");
	struct nsrun_run run = { .sync_fd = -1, .signal_fd = -1, .child = -1, .stdin_fd = -1, .pty_fd = -1,
				 .image_lock_fd = -1, .exec_fifo_fd = -1, .join = { .userns_fd = -1, .netns_fd = -1, .lock_fd = -1,
												   .ns_fd = { -1, -1, -1, -1 }, .outer_userns_fd = -1 },
				 .cg = { .dir_fd = -1 }, .pasta = { .guard = -1, .ctl_fd = -1 },
				 .sources = { .rootfs = { .tree_fd = -1 } },
				 .out = { .read_fd = -1, .write_fd = -1 }, .err = { .read_fd = -1, .write_fd = -1 } };
	struct nsrun_error err = { 0 };

	memset(result, 0, sizeof(*result));
	run.timing = timing;
	run.pub = io->pub;
	run.ready_fd = io->ready_fd;
	run.stop_fd = io->stop_fd;
	run.log_index_fd = io->log_index_fd;
	run.solo = io->solo;
	run.console_socket = cfg->console_socket;
	run.start_us = monotonic_us();
	run.deadline_us = cfg->limits.timeout_us ? add_us(run.start_us, cfg->limits.timeout_us) : 0;
	if (run_prepare(cfg, &run, &err) < 0 || run_start(cfg, &run, &err) < 0 ||
	    run_supervise(cfg, &run, result, &err) < 0) {
		run_kill_child(&run);
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
	for (size_t i = 0; run.pub->opened && i < cfg->n_publish && i < sizeof(result->ports) / sizeof(result->ports[0]); i++) {
		snprintf(result->ports[i].host_ip, sizeof(result->ports[i].host_ip), "%s", cfg->publish[i].host_ip);
		result->ports[i].host_port = run.pub->host_port[i];
		result->ports[i].container_port = cfg->publish[i].container_port;
		result->n_ports = i + 1;
	}
	steal_stream(&run.out, &result->out, cfg->output.capture);
	steal_stream(&run.err, &result->err_out, cfg->output.capture);
	run_teardown(&run);
	result->wall_time_us = monotonic_us() - run.start_us;
	return 0;
}
