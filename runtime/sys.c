/* sys.c - see sys.h */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <sys/socket.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "error.h"
#include "sys.h"

int read_file(const char *path, size_t max, char **out, size_t *len_out)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return -1;
	return read_fd(fd, max, out, len_out);
}

int read_fd(int fd, size_t max, char **out, size_t *len_out)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, cap = 4096;

	buf = malloc(cap + 1);
	if (!buf)
		return -1;
	for (;;) {
		ssize_t n;
		if (len == cap) {
			char *nb;
			if (cap >= max) {
				errno = EFBIG;
				return -1;
			}
			cap = cap * 2 > max ? max : cap * 2;
			nb = realloc(buf, cap + 1);
			if (!nb)
				return -1;
			buf = nb;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	if (len_out)
		*len_out = len;
	*out = steal_ptr(&buf);
	return 0;
}

/* dir/file into path (PATH_MAX); -1 with ENAMETOOLONG when it does not fit */
static int join_path(char path[PATH_MAX], const char *dir, const char *file)
{
	int n = snprintf(path, PATH_MAX, "%s/%s", dir, file);

	if (n < 0 || n >= PATH_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int write_file_in(const char *dir, const char *file, const char *s)
{
	char path[PATH_MAX];

	if (join_path(path, dir, file) < 0)
		return -1;
	return write_file(path, s);
}

char *read_file_in(const char *dir, const char *file)
{
	char path[PATH_MAX];
	char *text = NULL;

	if (join_path(path, dir, file) < 0 || read_file(path, 1 << 20, &text, NULL) < 0)
		return NULL;
	return text;
}

ssize_t proc_children(int dir_fd, const char *task, pid_t *pids, size_t max)
{
	char path[128], buf[512];   /* small: the supervisor's stack pages are faults (memwatch.c) */
	size_t n = 0;
	ssize_t r;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/children", task) >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = openat(dir_fd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r < 0)
		return -1;
	buf[r] = '\0';
	for (char *p = buf, *end; n < max; p = end) {
		long v = strtol(p, &end, 10);
		if (end == p)
			break;
		if (v > 0)
			pids[n++] = (pid_t)v;
	}
	return (ssize_t)n;
}

int proc_stat_fields(int dir_fd, const char *dir, int first, int n, unsigned long long *out)
{
	char path[PATH_MAX], buf[2048];
	_cleanup_close_ int fd = -1;
	ssize_t len;
	char *p;
	int field = 3;

	if (join_path(path, dir, "stat") < 0)
		return -1;
	if ((fd = openat(dir_fd, path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	if ((len = read(fd, buf, sizeof(buf) - 1)) < 0)
		return -1;
	buf[len] = '\0';
	/* field 3 (state) starts two bytes after the last ')' */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || first < 4) {
		errno = EINVAL;
		return -1;
	}
	p += 2;
	for (int i = 0; i < n; i++) {
		char *end;
		for (; *p && field < first + i; p++)
			if (*p == ' ')
				field++;
		errno = 0;
		out[i] = strtoull(p, &end, 10);
		if (end == p || errno) {
			errno = EINVAL;
			return -1;
		}
		p = end;
	}
	return 0;
}

int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int write_file(const char *path, const char *s)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return -1;
	return write_all(fd, s, strlen(s));
}

void fd_path(char *buf, size_t len, int fd)
{
	snprintf(buf, len, "/proc/self/fd/%d", fd);
}

#define MAX_LINKS 40
#define MAX_DEPTH 256

/* The fallback walk: a stack of O_PATH fds from the root down, so ".." pops
 * (never above the root) and an absolute symlink restarts at the root. */
static int walk_in_root(int root_fd, const char *path, int flags, bool no_symlinks)
{
	char work[PATH_MAX * 2];
	int stack[MAX_DEPTH];
	int depth = 0, links = 0, result = -1, saved = 0;
	size_t pos = 0;

	if (snprintf(work, sizeof(work), "%s", path) >= (int)sizeof(work)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	stack[0] = root_fd;
	while (work[pos]) {
		char name[NAME_MAX + 1];
		size_t len;
		int fd;
		struct stat st;
		bool last;

		while (work[pos] == '/')
			pos++;
		len = strcspn(work + pos, "/");
		if (len == 0)
			break;
		if (len > NAME_MAX) {
			saved = ENAMETOOLONG;
			goto out;
		}
		memcpy(name, work + pos, len);
		name[len] = '\0';
		pos += len;
		while (work[pos] == '/')
			pos++;
		last = work[pos] == '\0';
		if (strcmp(name, ".") == 0)
			continue;
		if (strcmp(name, "..") == 0) {
			if (depth > 0)
				close(stack[depth--]);
			continue;
		}
		fd = openat(stack[depth], name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) < 0) {
			saved = errno;
			if (fd >= 0)
				close(fd);
			goto out;
		}
		if (S_ISLNK(st.st_mode) && no_symlinks) {
			close(fd);
			saved = ELOOP;
			goto out;
		}
		if (S_ISLNK(st.st_mode) && !(last && (flags & O_NOFOLLOW))) {
			char target[PATH_MAX], rest[PATH_MAX * 2];
			ssize_t n = readlinkat(fd, "", target, sizeof(target) - 1);
			close(fd);
			if (n < 0 || ++links > MAX_LINKS) {
				saved = n < 0 ? errno : ELOOP;
				goto out;
			}
			target[n] = '\0';
			if (target[0] == '/')
				while (depth > 0)
					close(stack[depth--]);
			snprintf(rest, sizeof(rest), "%s/%s", target, work + pos);
			snprintf(work, sizeof(work), "%s", rest);
			pos = 0;
			continue;
		}
		if (depth + 1 >= MAX_DEPTH) {
			close(fd);
			saved = ELOOP;
			goto out;
		}
		stack[++depth] = fd;
	}
	/* reopen the final component with the caller's flags */
	result = openat(stack[depth], ".", (flags & ~O_NOFOLLOW) | O_CLOEXEC);
	if (result < 0 && depth > 0 && (flags & O_PATH)) {
		result = fcntl(stack[depth], F_DUPFD_CLOEXEC, 0);
	}
	saved = result < 0 ? errno : 0;
out:
	while (depth > 0)
		close(stack[depth--]);
	errno = saved;
	return result;
}

static int open_in_root_how(int root_fd, const char *path, int flags, bool no_symlinks)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | (no_symlinks ? RESOLVE_NO_SYMLINKS : 0),
	};
	const char *rel = path;
	int fd;

	while (*rel == '/')
		rel++;
	if (!*rel)
		rel = ".";
	/* EAGAIN: a rename or a mount anywhere on the host raced a ".." of the walk
	 * (one in the path or in a relative symlink of the image), and openat2(2) says
	 * to try again.  A busy host can do that time after time, so after a few tries
	 * the walk is done one component at a time, which no such race fails. */
	for (int tries = 0; tries < 8; tries++) {
		fd = (int)syscall(SYS_openat2, root_fd, rel, &how, sizeof(how));
		if (fd >= 0 || errno != EAGAIN)
			break;
	}
	if (fd >= 0 || (!sys_call_refused(errno) && errno != EAGAIN))
		return fd;
	return walk_in_root(root_fd, rel, flags, no_symlinks);
}

bool sys_call_refused(int e)
{
	return e == ENOSYS || e == EPERM || e == EACCES;
}

int open_in_root(int root_fd, const char *path, int flags)
{
	return open_in_root_how(root_fd, path, flags, false);
}

int open_in_root_nofollow(int root_fd, const char *path, int flags)
{
	return open_in_root_how(root_fd, path, flags, true);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

void close_fds_range(unsigned lo, unsigned hi, unsigned flags)
{
	struct rlimit rl;
	unsigned long top = 1UL << 20;

	if (lo > hi || syscall(SYS_close_range, lo, hi, flags) == 0)
		return;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY && rl.rlim_max < top)
		top = rl.rlim_max;
	for (unsigned long fd = lo; fd <= hi && fd < top; fd++) {
		if (flags & CLOSE_RANGE_CLOEXEC)
			fcntl((int)fd, F_SETFD, FD_CLOEXEC); /* EBADF where none is open */
		else
			close((int)fd);
	}
}

void close_fds_except(int *keep, size_t n)
{
	unsigned lo = 3;

	qsort(keep, n, sizeof(keep[0]), cmp_int);
	for (size_t i = 0; i < n; i++) {
		if (keep[i] < 0 || (unsigned)keep[i] < lo)
			continue;
		if ((unsigned)keep[i] > lo)
			close_fds_range(lo, (unsigned)keep[i] - 1, 0);
		lo = (unsigned)keep[i] + 1;
	}
	close_fds_range(lo, ~0U, 0);
}

uint64_t monotonic_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

int send_console_fd(const char *path, int fd)
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

	if (strlen(path) >= sizeof(addr.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(addr.sun_path, path, strlen(path) + 1);
	memset(&control, 0, sizeof(control));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    connect(s, (struct sockaddr *)&addr, sizeof(addr)) < 0 || sendmsg(s, &mh, MSG_NOSIGNAL) < 0)
		return -1;
	return 0;
}

/* In a probe's child, before the call a filter may kill: a death by its SIGSYS
 * dumps no core into the caller's directory (core(5): neither with no dumpable
 * flag nor with RLIMIT_CORE 0). */
static void probe_child_no_core(void)
{
	const struct rlimit none = { 0, 0 };

	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	(void)setrlimit(RLIMIT_CORE, &none);
}

int sys_clone_killed(struct nsrun_error *why)
{
#ifdef SYS_fork
	int status = 0;
	long pid;

	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 0)
		return 0;
	/* the raw fork(2), which glibc's fork does not call: it makes clone(2) */
	pid = syscall(SYS_fork);
	if (pid < 0)
		return 0;
	if (pid == 0) {
		probe_child_no_core();
		/* CLONE_SIGHAND without CLONE_VM: EINVAL, nothing made, where it is let through */
		syscall(SYS_clone, (unsigned long)CLONE_SIGHAND, NULL, NULL, NULL, 0UL);
		syscall(SYS_exit_group, 0);
	}
	while (waitpid((pid_t)pid, &status, 0) < 0)
		if (errno != EINTR)
			return 0;
	/* SIGSYS only: an OOM kill of the child is no filter's */
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSYS)
		return 0;
	error_set(why, 0, "an outer seccomp filter kills clone(2) (SIGSYS), with which nsrun makes every process");
	why->hint = "let the outer sandbox allow clone(2)";
	return -1;
#else
	(void)why;
	return 0;
#endif
}

/* sys_clone3_usable's answers, kept in one int: 0 is "not known yet" */
enum { CLONE3_OK = 1, CLONE3_FAKED, CLONE3_ERRNO = 0x100, CLONE3_SIGNAL = 0x10000 };

/* A child makes the call as glibc does (a struct clone_args of 88 bytes, at NULL
 * here: EFAULT where it is let through) and sends back what it returned: a child
 * killed by the filter sends nothing.  Returns a CLONE3_ value, or 0 if not known. */
static int clone3_probe(void)
{
	struct {
		long r;
		int e;
	} got = { 0, 0 };
	int p[2], status = -1;
	ssize_t n;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return 0;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return 0;
	}
	if (pid == 0) {
		probe_child_no_core();
		errno = 0;
		got.r = syscall(SYS_clone3, NULL, (size_t)88);
		got.e = errno;
		if (write(p[1], &got, sizeof(got)) < 0)
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	while ((n = read(p[0], &got, sizeof(got))) < 0 && errno == EINTR)
		;
	close(p[0]);
	/* ECHILD where SIGCHLD is ignored (the child reaped itself): status stays -1 */
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (n == (ssize_t)sizeof(got)) {
		if (got.r < 0 && (got.e == EFAULT || got.e == ENOSYS))
			return CLONE3_OK; /* glibc falls back to clone(2) on ENOSYS */
		if (got.r < 0)
			return CLONE3_ERRNO + (got.e & 0xfff); /* a filter's errno is 4095 at most */
		return CLONE3_FAKED;   /* SECCOMP_RET_ERRNO with 0: glibc would take itself for the child */
	}
	if (n == 0 && status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS)
		return CLONE3_SIGNAL + SIGSYS;
	/* status unknown (SIGCHLD ignored): the filter's, most likely; another
	 * signal (an OOM kill) is not known, and not kept */
	return n == 0 && status == -1 ? CLONE3_SIGNAL : 0;
}

bool sys_clone3_usable(char *why, size_t why_len)
{
	static _Atomic int known; /* a fact of the process, kept once known */
	int v = atomic_load(&known);

	if (!v) {
		v = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 0 ? CLONE3_OK : clone3_probe();
		if (!v)
			return true; /* not known: what makes the thread or child says why it fails */
		atomic_store(&known, v);
	}
	if (v == CLONE3_OK)
		return true;
	if (why && why_len) {
		const char *sig = v > CLONE3_SIGNAL ? sigabbrev_np(v - CLONE3_SIGNAL) : NULL;
		if (v >= CLONE3_SIGNAL)
			snprintf(why, why_len, "kills clone3(2)%s%s%s", v > CLONE3_SIGNAL ? " (SIG" : "",
				 v > CLONE3_SIGNAL ? (sig ? sig : "?") : "", v > CLONE3_SIGNAL ? ")" : "");
		else if (v >= CLONE3_ERRNO)
			snprintf(why, why_len, "refuses clone3(2) (%s)", strerror(v - CLONE3_ERRNO));
		else
			snprintf(why, why_len, "answers clone3(2) with 0 without making it "
				 "(errnoRet 0: glibc would go on as the new thread)");
	}
	return false;
}

/* spawn_child_keep by fork(2): an error pipe carries execve's errno back, as
 * posix_spawn(3) returns it. */
static int spawn_forked(pid_t *pid, const char *path, bool search, char *const argv[], char *const env[],
			const int stdio[3], const int *keep, size_t n_keep, int top)
{
	int ep[2], e = 0;
	sigset_t all, old;
	ssize_t got;
	pid_t p;

	if (pipe2(ep, O_CLOEXEC) < 0)
		return -1;
	/* as posix_spawn(3): no handler of ours runs in the child before its exec */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	p = fork();
	if (p != 0) {
		e = errno;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		errno = e;
	}
	if (p < 0) {
		e = errno;
		close(ep[0]);
		close(ep[1]);
		errno = e;
		return -1;
	}
	if (p == 0) {
		/* async-signal-safe calls only: a pool or api may have threads */
		int w = fcntl(ep[1], F_DUPFD_CLOEXEC, top + 1), fd;
		int dup_errno = errno;  /* sigaction below sets EINVAL for glibc's own signals */
		sigset_t none;

		/* handled signals to their defaults (exec would too, but a signal could
		 * come first), and those nsrun ignores or blocks that a child must not */
		for (int s = 1; s < NSIG; s++) {
			struct sigaction sa;
			if (sigaction(s, NULL, &sa) == 0 && sa.sa_handler != SIG_DFL &&
			    (sa.sa_handler != SIG_IGN || s == SIGPIPE || s == SIGTERM || s == SIGINT || s == SIGHUP))
				signal(s, SIG_DFL);
		}
		sigemptyset(&none);
		if (w < 0) {
			w = ep[1]; /* fail writes errno there: the parent must not take it for success */
			errno = dup_errno;
			goto fail;
		}
		if (stdio[0] < 0) {
			if ((fd = open("/dev/null", O_RDONLY)) < 0)
				goto fail;
			if (fd != 0 && (dup2(fd, 0) < 0 || close(fd) < 0))
				goto fail;
		}
		for (int i = 0; i < 3; i++)
			if (stdio[i] >= 0 && (stdio[i] == i ? fcntl(i, F_SETFD, 0) : dup2(stdio[i], i)) < 0)
				goto fail;
		for (size_t i = 0; i < n_keep; i++)
			if (fcntl(keep[i], F_SETFD, 0) < 0)
				goto fail;
		if (w > top + 1)
			close_fds_range((unsigned)top + 1, (unsigned)w - 1, 0);
		close_fds_range((unsigned)w + 1, ~0U, 0);
		sigprocmask(SIG_SETMASK, &none, NULL);
		(search ? execvpe : execve)(path, argv, env ? env : environ);
fail:
		e = errno;
		if (write(w, &e, sizeof(e)) < 0) {
			/* the parent sees the pipe close with no errno: it says EIO */
		}
		_exit(127);
	}
	close(ep[1]);
	while ((got = read(ep[0], &e, sizeof(e))) < 0 && errno == EINTR)
		;
	close(ep[0]);
	if (got != 0) {
		while (waitpid(p, NULL, 0) < 0 && errno == EINTR)
			;
		errno = got == (ssize_t)sizeof(e) && e ? e : EIO;
		return -1;
	}
	*pid = p;
	return 0;
}

int spawn_child(pid_t *pid, const char *path, bool search, char *const argv[], char *const env[],
		const int stdio[3])
{
	return spawn_child_keep(pid, path, search, argv, env, stdio, NULL, 0);
}

int spawn_child_keep(pid_t *pid, const char *path, bool search, char *const argv[], char *const env[],
		     const int stdio[3], const int *keep, size_t n_keep)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, dfl;
	int rc;

	posix_spawn_file_actions_init(&fa);
	if (stdio[0] < 0)
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	for (int i = 0; i < 3; i++)
		if (stdio[i] >= 0)
			posix_spawn_file_actions_adddup2(&fa, stdio[i], i);
	/* dup2 onto itself clears FD_CLOEXEC in the child alone (POSIX.1-2024, Austin
	 * Group issue 411; glibc 2.29): no other thread's child gets it */
	int top = 2;
	for (size_t i = 0; i < n_keep; i++) {
		posix_spawn_file_actions_adddup2(&fa, keep[i], keep[i]);
		if (keep[i] > top)
			top = keep[i];
	}
	if (!sys_clone3_usable(NULL, 0)) {
		posix_spawn_file_actions_destroy(&fa);
		return spawn_forked(pid, path, search, argv, env, stdio, keep, n_keep, top);
	}
	/* nothing of ours past stdio and the kept fds, CLOEXEC or not (a caller's
	 * inherited fds too); below the highest kept one, CLOEXEC does it */
	posix_spawn_file_actions_addclosefrom_np(&fa, top + 1);
	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	sigaddset(&dfl, SIGTERM);
	sigaddset(&dfl, SIGINT);
	sigaddset(&dfl, SIGHUP);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &dfl);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	rc = (search ? posix_spawnp : posix_spawn)(pid, path, &fa, &attr, argv, env ? env : environ);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	return 0;
}

int fd_set_nonblock(int fd, bool on)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 || fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK) < 0 ? -1 : 0;
}

ssize_t read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* The first two fields of the statm at path under proc_fd (pages; 0 and 0 where
 * they do not parse).  Returns 0, or -1 with errno. */
static int read_statm(int proc_fd, const char *path, unsigned long long *size, unsigned long long *resident)
{
	char buf[256];
	_cleanup_close_ int fd = openat(proc_fd, path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0 || (n = read(fd, buf, sizeof(buf) - 1)) < 0)
		return -1;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", size, resident) != 2)
		*size = *resident = 0;
	return 0;
}

int proc_mm_dir(int proc_fd, pid_t pid, char *dir, size_t len, unsigned long long *resident)
{
	unsigned long long size, pages, dummy;
	char path[64];
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	int fd;

	if (!resident)
		resident = &dummy;
	*resident = 0;
	snprintf(dir, len, "%d", (int)pid);
	snprintf(path, sizeof(path), "%d/statm", (int)pid);
	if (read_statm(proc_fd, path, &size, resident) < 0)
		return -1;
	if (size > 0)
		return 0;
	snprintf(path, sizeof(path), "%d/task", (int)pid);
	fd = openat(proc_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9' || atoi(de->d_name) == (int)pid)
			continue;
		snprintf(path, sizeof(path), "%d/task/%.12s/statm", (int)pid, de->d_name);
		if (read_statm(proc_fd, path, &size, &pages) == 0 && size > 0) {
			snprintf(dir, len, "%d/task/%.12s", (int)pid, de->d_name);
			*resident = pages;
			return 0;
		}
	}
	return 0;
}
