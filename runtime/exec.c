/* exec.c - see exec.h */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "caps.h"
#include "exec.h"
#include "landlock.h"
#include "rlimits.h"
#include "ns.h"
#include "seccomp.h"
#include "sys.h"
#include "tier.h"
#include "timing.h"

static void __attribute__((noreturn)) fail(int report_fd, struct nsrun_error *err, int code)
{
	if (write_all(report_fd, err, sizeof(*err)) < 0)
		dprintf(2, "nsrun: %s\n", err->msg); /* the report channel is gone: last resort */
	_exit(code);
}

void exec_reset_signals(void)
{
	sigset_t none;

	for (int s = 1; s < NSIG; s++)
		signal(s, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/* Marks every fd from first (3, or past an OCI caller's preserved fds) on
 * close-on-exec: nothing of nsrun's, nor of its caller's, reaches the payload
 * (CVE-2024-21626 is the kind of leak this stops). */
static int cloexec_all_fds(unsigned first)
{
	close_fds_range(first, ~0U, CLOSE_RANGE_CLOEXEC);
	return 0;
}

size_t exec_candidates(const char *cmd, const char *path_env, char out[][PATH_MAX], size_t max)
{
	size_t n = 0;
	const char *p = path_env;

	if (strchr(cmd, '/')) {
		snprintf(out[0], PATH_MAX, "%s", cmd);
		return 1;
	}
	if (!p || !*p)
		p = "/usr/local/bin:/usr/bin:/bin";
	while (*p && n < max) {
		const char *end = strchrnul(p, ':');
		int len = (int)(end - p);
		snprintf(out[n++], PATH_MAX, "%.*s/%s", len ? len : 1, len ? p : ".", cmd);
		p = *end ? end + 1 : end;
	}
	return n;
}

void exec_payload(const struct nsrun_config *cfg, const struct nsrun_limits *rlimits,
		  const struct nsrun_seccomp *seccomp, int landlock_abi, bool unmapped, const int stdio[3],
		  struct timing *timing, int report_fd)
{
	struct nsrun_error err = { .stage = STAGE_CONTAINER };
	const struct nsrun_process *proc = &cfg->process;

	exec_reset_signals();
	/* pid 1 changed ids, which made its memory (and so ours) non-dumpable, and our
	 * /proc/self files root's: we could not write our own id maps (proc(5),
	 * PR_SET_DUMPABLE in prctl(2)).  execve resets it for the payload anyway. */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0) {
		error_set(&err, errno, "set dumpable");
		fail(report_fd, &err, 125);
	}
	if (setsid() < 0) {
		error_set(&err, errno, "setsid");
		fail(report_fd, &err, 125);
	}
	for (int i = 0; i < 3; i++) {
		if (stdio[i] >= 0 && dup2(stdio[i], i) < 0) {
			error_set(&err, errno, "set up fd %d", i);
			fail(report_fd, &err, 125);
		}
	}
	/* -t: the container's pty becomes our controlling terminal (we lead a new session),
	 * so ^C on it sends SIGINT to our process group; ioctl_tty(2) TIOCSCTTY */
	if (cfg->tty && ioctl(0, TIOCSCTTY, 0) < 0) {
		error_set(&err, errno, "--tty: make the pty the controlling terminal");
		fail(report_fd, &err, 125);
	}
	if (cfg->isolation == NSRUN_ISOLATION_MINIMAL) {
		/* no namespace: as root, chroot and become 65534 on the host; unprivileged
		 * the payload stays the caller, on the outer file system (Landlock below) */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0) {
			error_set(&err, errno, "set the parent-death signal");
			fail(report_fd, &err, 125);
		}
		if (geteuid() == 0 && (setgroups(0, NULL) < 0 || chroot(cfg->rootfs) < 0 || chdir("/") < 0)) {
			error_set(&err, errno, "isolation minimal: chroot into \"%s\"", cfg->rootfs);
			fail(report_fd, &err, 125);
		}
		if (geteuid() == 0 && (caps_drop_bounding(&err) < 0 || ns_become(proc->uid, proc->gid, &err) < 0))
			fail(report_fd, &err, 125);
		if (limits_apply_rlimits(rlimits, &err) < 0)
			fail(report_fd, &err, 125);
	} else {
		/* unmapped (reduced): so is any namespace below it: we are nobody already.
		 * --userns subids: the container's namespace has the payload's ids itself;
		 * the payload stays in it (its capabilities are those of --cap-add) */
		bool own_userns = !unmapped && cfg->userns != NSRUN_USERNS_SUBIDS;
		if (own_userns && ns_enter_payload_userns(proc->uid, proc->gid, &err) < 0)
			fail(report_fd, &err, 125);
		/* the caller's supplementary groups (overflow ids inside) go, the OCI
		 * config's additionalGids come: the map newgidmap wrote allows setgroups(2) */
		if (cfg->userns == NSRUN_USERNS_SUBIDS &&
		    setgroups(proc->n_additional_gids, proc->n_additional_gids ? proc->additional_gids : NULL) < 0) {
			error_set(&err, errno, proc->n_additional_gids ? "process.user.additionalGids: setgroups" :
					       "drop the supplementary groups");
			fail(report_fd, &err, 125);
		}
		/* reduced: here, as root of our own user namespace, because the kernel
		 * refuses a new user namespace to a chrooted process (unshare(2), EPERM) */
		if (cfg->isolation == NSRUN_ISOLATION_REDUCED && (chroot(cfg->rootfs) < 0 || chdir("/") < 0)) {
			error_set(&err, errno, "chroot into \"%s\"", cfg->rootfs);
			fail(report_fd, &err, 125);
		}
		if (caps_keep_bounding(cfg->security.cap_add, &err) < 0 ||
		    (!unmapped && ns_become(proc->uid, proc->gid, &err) < 0) ||
		    limits_apply_rlimits(rlimits, &err) < 0)
			fail(report_fd, &err, 125);
	}
	timing_mark(timing, TP_PAYLOAD_IDS);
	exec_command(cfg, seccomp, landlock_abi, timing, report_fd);
}

void exec_confine(const struct nsrun_config *cfg, const struct nsrun_seccomp *seccomp, int landlock_abi,
		  struct timing *timing, int report_fd)
{
	struct nsrun_error err = { .stage = STAGE_CONTAINER };
	const struct nsrun_process *proc = &cfg->process;

	/* The working directory is resolved inside the root with no magic link
	 * (openat2(2) RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS): our fds are still open
	 * here (CLOEXEC only), and a symlink a payload planted in a writable place
	 * (`ln -s /proc/self/fd/N dir`) would otherwise leave the cwd on the host's side
	 * of one of them after execve, as runc's CVE-2024-21626 did. */
	{
		int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), dir = -1;
		if (root < 0 || (dir = open_in_root(root, proc->cwd, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0 ||
		    fchdir(dir) < 0) {
			error_set(&err, errno, "working directory \"%s\"", proc->cwd);
			fail(report_fd, &err, 125);
		}
		close(dir);
		close(root);
	}
	cloexec_all_fds(3U + cfg->preserve_fds);
	/* --cap-add: root keeps them across execve; any other uid lost them in setresuid */
	if (caps_set_and_nnp(geteuid() == 0 ? cfg->security.cap_add : 0, &err) < 0)
		fail(report_fd, &err, 125);
	timing_mark(timing, TP_PAYLOAD_PRIVS);
	/* after no_new_privs, which landlock_restrict_self(2) requires; before seccomp */
	if (landlock_apply(cfg, landlock_abi, &err) < 0)
		fail(report_fd, &err, 125);
	/* minimal: no net namespace; before the profile, which may not allow seccomp(2) */
	if (cfg->isolation == NSRUN_ISOLATION_MINIMAL && tier_load_no_net_filter(&err) < 0)
		fail(report_fd, &err, 125);
	/* last: after caps and no_new_privs, so the filter need not allow capset or prctl */
	if (seccomp && seccomp_apply(seccomp, &err) < 0)
		fail(report_fd, &err, 125);
	timing_mark(timing, TP_PAYLOAD_SECCOMP);
}

void exec_command(const struct nsrun_config *cfg, const struct nsrun_seccomp *seccomp, int landlock_abi,
		  struct timing *timing, int report_fd)
{
	static char cand[EXEC_CANDIDATES_MAX][PATH_MAX];
	struct nsrun_error err = { .stage = STAGE_CONTAINER };
	const struct nsrun_process *proc = &cfg->process;
	size_t n;
	int saved = ENOENT;

	n = exec_candidates(proc->args.v[0], strv_getenv(&proc->env, "PATH"), cand, EXEC_CANDIDATES_MAX);
	exec_confine(cfg, seccomp, landlock_abi, timing, report_fd);
	for (size_t i = 0; i < n; i++) {
		execve(cand[i], proc->args.v, proc->env.v);
		/* as execvp(3): remember EACCES, keep looking on ENOENT/ENOTDIR */
		if (errno == EACCES)
			saved = EACCES;
		else if (errno != ENOENT && errno != ENOTDIR) {
			saved = errno;
			break;
		}
	}
	err.stage = STAGE_EXEC;
	err.errnum = saved;
	snprintf(err.msg, sizeof(err.msg), "exec \"%s\"", proc->args.v[0]);
	fail(report_fd, &err, saved == ENOENT ? 127 : 126);
}
