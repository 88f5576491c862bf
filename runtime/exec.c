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
#include <sys/wait.h>
#include <unistd.h>

#include "caps.h"
#include "cleanup.h"
#include "copy_archive.h"
#include "exec.h"
#include "landlock.h"
#include "rlimits.h"
#include "ns.h"
#include "oci_hooks.h"
#include "result.h"
#include "seccomp.h"
#include "sys.h"
#include "tier.h"
#include "timing.h"

/* exec_report_read's byte: the child got as far as its execve */
#define EXEC_REPORT_CONFINED 'E'

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

/* Reads fd to its end into buf (len bytes at most, NUL-terminated; the rest is
 * drained).  Returns the bytes kept. */
static size_t read_to_end(int fd, char *buf, size_t len)
{
	size_t n = 0;
	char skip[256];

	for (;;) {
		ssize_t r = n + 1 < len ? read(fd, buf + n, len - 1 - n) : read(fd, skip, sizeof(skip));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (n + 1 < len)
			n += (size_t)r;
	}
	buf[n] = '\0';
	return n;
}

/* --copy-archive: archive i (fds[i]) extracted into cfg->copy_archive_dirs.v[i]
 * by copy_archive_run(COPY_ARCHIVE_PUT) in a child of ours that closed every
 * other fd and was confined as the command will be (exec_confine), as `nsrun exec
 * --archive-put` is in a running container: a link of the image meets only the
 * container's root, a write only what the payload may write.  In order; the
 * first failure ends the run before the command (docker cp into a created
 * container, applied at start: api_archive.c).  Returns 0 or -1 with err
 * (errnum 0: the message holds the extraction's own words). */
static int copy_archives(const struct nsrun_config *cfg, const struct nsrun_seccomp *seccomp, int landlock_abi,
			 const int *fds, struct nsrun_error *err)
{
	for (size_t i = 0; i < cfg->copy_archive_tars.n; i++) {
		const char *dir = cfg->copy_archive_dirs.v[i];
		int out[2] = { -1, -1 }, rep[2] = { -1, -1 }, status = 0;
		struct nsrun_error child_err = { 0 };
		char line[1024];
		pid_t pid;

		if (cfg->isolation != NSRUN_ISOLATION_FULL)
			return error_set(err, 0, "--copy-archive: needs --isolation full (a root of the container's "
					 "own to extract into)");
		if (pipe2(out, O_CLOEXEC) < 0 || pipe2(rep, O_CLOEXEC) < 0)
			return error_set(err, errno, "--copy-archive: pipe");
		if ((pid = fork()) < 0)
			return error_set(err, errno, "--copy-archive: fork");
		if (pid == 0) {
			int keep = rep[1];
			if (dup2(fds[i], 0) < 0 || dup2(out[1], 1) < 0)
				_exit(125);
			/* no execve follows: really closed, not only close-on-exec */
			close_fds_except(&keep, 1);
			exec_confine(cfg, seccomp, landlock_abi, NULL, keep);
			close(keep);
			_exit(copy_archive_run(COPY_ARCHIVE_PUT, dir));
		}
		close(out[1]);
		close(rep[1]);
		read_to_end(out[0], line, sizeof(line));
		if (read(rep[0], &child_err, sizeof(child_err)) != (ssize_t)sizeof(child_err))
			child_err.msg[0] = '\0';
		close(out[0]);
		close(rep[0]);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			continue;
		if (child_err.msg[0]) {
			child_err.msg[sizeof(child_err.msg) - 1] = '\0';
			*err = child_err;
			return error_prefix(err, "--copy-archive into \"%s\"", dir);
		}
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '!' && strchr(line, ' ')) {
			/* "!ERRNO what PATH: why" (copy_archive.h) */
			return error_set(err, 0, "--copy-archive: %s", strchr(line, ' ') + 1);
		}
		return error_set(err, 0, "--copy-archive: the extraction into \"%s\" ended with status %d", dir,
				 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	}
	return 0;
}

/* --archive-get|--archive-stat: the copy (copy_archive.h) on fd 1 instead of the
 * command, confined as the command would be and as `nsrun exec --archive-*` is in
 * a running container, with the --copy-archive ones already extracted (docker cp
 * from a created container: api_archive.c).  Does not return: exits with
 * copy_archive_run's status, or fails as exec_command does. */
static void archive_instead(const struct nsrun_config *cfg, const struct nsrun_seccomp *seccomp, int landlock_abi,
			    struct timing *timing, int report_fd)
{
	struct nsrun_error err = { .stage = STAGE_CONTAINER };
	int keep = report_fd;

	if (cfg->isolation != NSRUN_ISOLATION_FULL) {
		error_set(&err, 0, "--archive-get: needs --isolation full (the container's own root to read from)");
		fail(report_fd, &err, 125);
	}
	/* no execve follows: really closed, not only close-on-exec */
	close_fds_except(&keep, 1);
	exec_confine(cfg, seccomp, landlock_abi, timing, report_fd);
	/* it tells the parent the "command" started, as an execve would */
	exec_report_confined(report_fd);
	close(report_fd);
	_exit(copy_archive_run((enum copy_archive_op)cfg->archive_op, cfg->archive_path));
}

void exec_payload(const struct nsrun_config *cfg, const struct nsrun_limits *rlimits,
		  const struct nsrun_seccomp *seccomp, int landlock_abi, bool unmapped, bool shared_mm,
		  const int stdio[3], const int *copy_fds, struct timing *timing, int report_fd)
{
	struct nsrun_error err = { .stage = STAGE_CONTAINER };
	const struct nsrun_process *proc = &cfg->process;

	exec_reset_signals();
	/* pid 1 changed ids, which made its memory (and so ours) non-dumpable, and our
	 * /proc/self files root's: we could not write our own id maps (proc(5),
	 * PR_SET_DUMPABLE in prctl(2)).  execve resets it for the payload anyway.
	 * In pid 1's own memory that waits for the maps below (see shared_mm). */
	if (!shared_mm && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0) {
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
		if (own_userns) {
			/* shared_mm: pid 1's memory is dumpable (so open to ptrace(2) by its
			 * uid) only for the few system calls that write our maps */
			int rc;
			if (shared_mm && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0) {
				error_set(&err, errno, "set dumpable");
				fail(report_fd, &err, 125);
			}
			rc = ns_enter_payload_userns(proc->uid, proc->gid, &err);
			if (shared_mm && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
				error_set(&err, errno, "set non-dumpable");
				fail(report_fd, &err, 125);
			}
			if (rc < 0)
				fail(report_fd, &err, 125);
		}
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
	if (copy_fds && copy_archives(cfg, seccomp, landlock_abi, copy_fds, &err) < 0)
		fail(report_fd, &err, 125);
	if (cfg->archive_op)
		archive_instead(cfg, seccomp, landlock_abi, timing, report_fd);
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

int exec_check_command(const struct nsrun_config *cfg, struct nsrun_error *err)
{
	const struct nsrun_process *proc = &cfg->process;
	_cleanup_free_ char (*cand)[PATH_MAX] = calloc(EXEC_CANDIDATES_MAX, sizeof(*cand));
	_cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	size_t n;
	int saved = ENOENT;

	if (!cand || root < 0)
		return 0; /* not decided here: the payload's execve says */
	n = exec_candidates(proc->args.v[0], strv_getenv(&proc->env, "PATH"), cand, EXEC_CANDIDATES_MAX);
	for (size_t i = 0; i < n; i++) {
		char p[PATH_MAX];
		int fd;

		if (snprintf(p, sizeof(p), "%s%s%s", cand[i][0] == '/' ? "" : proc->cwd, cand[i][0] == '/' ? "" : "/",
			     cand[i]) >= (int)sizeof(p))
			return 0;
		fd = open_in_root(root, p, O_PATH);
		if (fd >= 0 || (errno != ENOENT && errno != ENOTDIR)) {
			if (fd >= 0)
				close(fd);
			return 0;
		}
		saved = errno;
	}
	/* a PATH search says ENOENT, as execvp(3); a path, its own errno (ENOTDIR) */
	return error_set_stage(err, STAGE_EXEC, strchr(proc->args.v[0], '/') ? saved : ENOENT, "exec \"%s\"",
			       proc->args.v[0]);
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
	/* OCI startContainer hooks: in the container, confined as we are now, before
	 * the command (config.md "startContainer Hooks"); the state's pid is init's */
	if (oci_hooks_run_inside(&cfg->oci_inside, "startContainer", getppid(), &err) < 0)
		fail(report_fd, &err, 125);
	/* got this far: an end of the report without this is a death on the way */
	exec_report_confined(report_fd);
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
	/* error_set: the command is the image's (its Entrypoint) or the caller's, one line */
	error_set_stage(&err, STAGE_EXEC, saved, "exec \"%s\"", proc->args.v[0]);
	fail(report_fd, &err, saved == ENOENT ? 127 : 126);
}

void exec_report_confined(int report_fd)
{
	(void)write_all(report_fd, &(char){ EXEC_REPORT_CONFINED }, 1);
}

int exec_report_read(int fd, struct nsrun_error *err)
{
	char buf[1 + sizeof(*err)];
	ssize_t n = read_full(fd, buf, sizeof(buf));
	size_t got, off;

	if (n < 0) {
		error_set_stage(err, STAGE_CONTAINER, errno, "read the exec report");
		return 0;
	}
	got = (size_t)n;
	if (got == 0)
		return -1;
	if (got == 1 && buf[0] == EXEC_REPORT_CONFINED)
		return 1;
	off = buf[0] == EXEC_REPORT_CONFINED && got == sizeof(buf) ? 1 : 0;
	if (got - off != sizeof(*err)) {
		error_set_stage(err, STAGE_CONTAINER, EPROTO, "read the exec report");
		return 0;
	}
	memcpy(err, buf + off, sizeof(*err));
	err->msg[sizeof(err->msg) - 1] = '\0';
	return 0;
}

int exec_report_died(int status, struct nsrun_error *err)
{
	char sig[32];

	if (WIFSIGNALED(status)) {
		result_signal_name(WTERMSIG(status), sig, sizeof(sig));
		error_set_stage(err, STAGE_CONTAINER, 0, "the payload's set-up was killed by %s before its execve", sig);
		if (WTERMSIG(status) == SIGSYS)
			err->hint = "an outer seccomp filter kills a system call nsrun makes there (strace -f names "
				    "it); nsrun check says which isolation works here";
	} else {
		error_set_stage(err, STAGE_CONTAINER, 0, "the payload's set-up ended (status %d) before its execve",
				WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
	return -1;
}
