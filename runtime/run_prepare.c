/* run_prepare.c - P1-P4 of a run: everything that can be rejected before any
 * namespace exists (the image's lock, the joined network, the mount plan and its
 * sources, the seccomp filter, stdio, the cgroup or the rlimits left instead, the
 * -p sockets).  See run_internal.h; the order of the steps is run.c's. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "hostfile.h"
#include "landlock.h"
#include "protected.h"
#include "run_internal.h"
#include "seccomp.h"
#include "sys.h"
#include "tier.h"
#include "timing.h"

static void warn_line(void *ctx, const char *line)
{
	(void)ctx;
	error_warn(stderr, "%s", line);
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
			struct statfs sfs;
			/* the measure checks with fstatfs(2) that each /proc it reads is one:
			 * refused by an outer filter, it failed the run at its first sample,
			 * which a short payload may not reach (check: no tier works there) */
			if (fstatfs(STDERR_FILENO, &sfs) < 0 && sys_call_refused(errno))
				return error_set(err, errno, "--memory: fstatfs, with which nsrun's measure checks the "
						 "/proc it reads");
			run->memory_how = "supervisor";
			memwatch_init(&run->mw, l->memory_bytes, NULL, &run->plan, cfg->isolation == NSRUN_ISOLATION_REDUCED);
			/* the writable root's tmpfs (mount.c, mount_overlay_root) is memory too */
			run->mw.root_upper_bytes = cfg->rootfs_writable ? cfg->limits.tmpfs_bytes : 0;
			run->mw.stall_us = cfg->limits.memory_sample_timeout_us;
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
	if (cfg->cgroups_path && run->cg.path_why[0]) {
		/* config-linux.md "Cgroups Path": never silently elsewhere */
		if (cfg->security.strict)
			return error_set(err, 0, "linux.cgroupsPath \"%s\" cannot be the container's cgroup "
					 "(--strict): %s", cfg->cgroups_path, run->cg.path_why);
		error_warn(stderr, "linux.cgroupsPath \"%s\" is not the container's cgroup: %s; it is "
			"%s", cfg->cgroups_path, run->cg.path_why, run->cg.path ? run->cg.path :
			"none (its limits are rlimits)");
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
		if (which) {
			error_set(err, 0, "--%s cannot be enforced by a cgroup here (--strict): %s",
				  strcmp(which, "pids") == 0 ? "pids-limit" : strcmp(which, "cpu") == 0 ? "cpus" : which,
				  why_no_controller(&run->cg, which));
			/* --memory and --pids-limit have defaults: --strict refuses them too */
			err->hint = "--strict wants each limit, the defaults of --memory and --pids-limit included, in "
				    "a cgroup: delegate the controller (docs/limits.md); to refuse only weaker "
				    "isolation, use --isolation full instead";
			return -1;
		}
	}
	if (l->cpus_milli && !run->cg.cpu && !cfg->isolation_retry)
		error_warn(stderr, "--cpus is not enforced: %s", why_no_controller(&run->cg, "cpu"));
	/* nsrun measures the container's mounts: a tmpfs of the payload's own
	 * namespaces is no cgroup's and none of them (docs/limits.md) */
	if (cfg->security.allow_nested && l->memory_bytes && !run->cg.memory && !run->cg1.path &&
	    !cfg->isolation_retry)
		error_warn(stderr, "--allow-nested: --memory does not count a tmpfs the payload mounts in namespaces "
			   "of its own (no memory cgroup here: %s)", why_no_controller(&run->cg, "memory"));
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
	/* a joined ipc namespace (an OCI pod's) is its maker's: its limits are not ours
	 * to write, and our root has no capability over it */
	if (cfg->ns_path[NSRUN_JOIN_IPC] && run->ucounts.ipc_bytes) {
		if (cfg->security.strict)
			return error_set(err, 0, "linux.namespaces: ipc path %s: the memory limit would not bound its "
					 "System V segments and queues (its maker's limits apply; --strict refuses it)",
					 cfg->ns_path[NSRUN_JOIN_IPC]);
		error_warn(stderr, "linux.namespaces: ipc path %s: the memory limit does not bound its "
			"System V segments and queues (its maker's limits apply)", cfg->ns_path[NSRUN_JOIN_IPC]);
		run->ucounts.ipc_bytes = 0;
	}
	if (cfg->debug && !run->ucounts.settable)
		fprintf(stderr, "nsrun: debug: /proc/sys is read-only: no inotify, fanotify or namespace limits "
			"of the container's own\n");
	return 0;
}

/* P1-P4: everything that can be rejected, before any namespace exists. */
int run_prepare(const struct nsrun_config *cfg, struct nsrun_run *run, struct nsrun_error *err)
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
	} else if (cfg->output.json_path && !cfg->service.open_stdin && cfg->mode != NSRUN_MODE_STDIN) {
		/* --json: none, unless asked for (-i) or the program is on it (FILE
		 * "-": with none, an empty program ran and the run said it exited 0:
		 * breaker, session 20) */
		run->stdin_fd = open("/dev/null", O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (run->stdin_fd < 0)
			return error_set(err, errno, "open /dev/null");
	}
	if (cfg->output.capture && (capture_open(&run->out, cfg->output.limit_bytes, err) < 0 ||
				    capture_open(&run->err, cfg->output.limit_bytes, err) < 0))
		return -1;
	/* the payload never gets the caller's stdio as it is (relay.h); a service's
	 * log is bounded by --output-limit, and indexed (log_index.h) */
	struct relay_log log = { .limit = cfg->output.limit_bytes, .index = { .fd = run->log_index_fd } };
	if (relay_prepare(&run->relay, run->stdin_fd >= 0 ? run->stdin_fd : STDIN_FILENO, cfg->output.capture,
			  cfg->tty, cfg->service.detach ? &log : NULL, err) < 0)
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
