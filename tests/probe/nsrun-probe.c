/* nsrun-probe: static multi-call probe for nsrun's integration and security tests.
 *
 * Built with: cc -static -O2 -Wall -Wextra -o nsrun-probe nsrun-probe.c
 *
 * Every subcommand attempts one action and prints ONE result line
 *   "<subcommand>: ok [details]"           exit 0  (the action SUCCEEDED)
 *   "<subcommand>: denied ERRNO [details]" exit 1  (the action was refused / failed)
 *   "nsrun-probe: usage: ..."              exit 2  (bad invocation)
 * except for the listing commands (status, env) which print one line per item.
 * Tests assert both the escape failing (exit 1) and a control succeeding (exit 0).
 *
 * The probe avoids libc functions that need NSS or dlopen (no getpwnam, no
 * getaddrinfo), so the static binary behaves the same in any root filesystem.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <linux/perf_event.h>
#include <linux/userfaultfd.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <termios.h>

#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425
#endif
#ifndef __NR_keyctl
#define __NR_keyctl 250
#endif
#define PROBE_KEYCTL_JOIN_SESSION_KEYRING 1

static const char *cmd = "nsrun-probe";

/* ---------- errno names ---------- */

static const char *errname(int e)
{
	switch (e) {
#define E(x) case x: return #x;
	E(EPERM) E(ENOENT) E(ESRCH) E(EINTR) E(EIO) E(ENXIO) E(E2BIG) E(ENOEXEC)
	E(EBADF) E(ECHILD) E(EAGAIN) E(ENOMEM) E(EACCES) E(EFAULT) E(EBUSY)
	E(EEXIST) E(EXDEV) E(ENODEV) E(ENOTDIR) E(EISDIR) E(EINVAL) E(ENFILE)
	E(EMFILE) E(ENOTTY) E(ETXTBSY) E(EFBIG) E(ENOSPC) E(ESPIPE) E(EROFS)
	E(EMLINK) E(EPIPE) E(EDOM) E(ERANGE) E(EDEADLK) E(ENAMETOOLONG) E(ENOLCK)
	E(ENOSYS) E(ENOTEMPTY) E(ELOOP) E(ENOTSOCK) E(EDESTADDRREQ) E(EMSGSIZE)
	E(EPROTOTYPE) E(ENOPROTOOPT) E(EPROTONOSUPPORT) E(EOPNOTSUPP) E(EAFNOSUPPORT)
	E(EADDRINUSE) E(EADDRNOTAVAIL) E(ENETDOWN) E(ENETUNREACH) E(ECONNABORTED)
	E(ECONNRESET) E(ENOBUFS) E(EISCONN) E(ENOTCONN) E(ETIMEDOUT) E(ECONNREFUSED)
	E(EHOSTDOWN) E(EHOSTUNREACH) E(EALREADY) E(EINPROGRESS) E(EDQUOT) E(ENOKEY)
	E(EKEYREVOKED) E(EOVERFLOW) E(ENOMEDIUM)
#undef E
	default: return "EUNKNOWN";
	}
}

/* ---------- result helpers ---------- */

static void result(const char *word, const char *fmt, va_list ap)
{
	char buf[8192] = "";
	if (fmt)
		vsnprintf(buf, sizeof buf, fmt, ap);
	printf("%s: %s%s%s\n", cmd, word, buf[0] ? " " : "", buf);
	fflush(stdout);
}

static int ok(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int ok(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	result("ok", fmt, ap);
	va_end(ap);
	return 0;
}

static int denied(int e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int denied(int e, const char *fmt, ...)
{
	char word[64];
	va_list ap;
	snprintf(word, sizeof word, "denied %s", errname(e));
	va_start(ap, fmt);
	result(word, fmt, ap);
	va_end(ap);
	return 1;
}

static int usage(const char *what)
{
	fprintf(stderr, "nsrun-probe: usage: %s\n", what);
	return 2;
}

static int parse_double(const char *s, double *out)
{
	char *end;
	errno = 0;
	double d = strtod(s, &end);
	if (errno || end == s || *end || d < 0)
		return -1;
	*out = d;
	return 0;
}

static int parse_long(const char *s, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end)
		return -1;
	*out = v;
	return 0;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_seconds(double s)
{
	struct timespec ts;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* ---------- subcommands ---------- */

static int c_status(int argc, char **argv)
{
	(void)argc; (void)argv;
	static const char *keys[] = { "Uid:", "Gid:", "Groups:", "CapInh:", "CapPrm:",
				      "CapEff:", "CapBnd:", "CapAmb:", "NoNewPrivs:",
				      "Seccomp:", NULL };
	FILE *f = fopen("/proc/self/status", "re");
	if (!f)
		return denied(errno, "/proc/self/status");
	char line[512];
	int n = 0;
	while (fgets(line, sizeof line, f)) {
		for (int i = 0; keys[i]; i++) {
			if (strncmp(line, keys[i], strlen(keys[i])) == 0) {
				fputs(line, stdout);
				n++;
			}
		}
	}
	fclose(f);
	return n ? 0 : denied(ENOENT, "no status fields");
}

static int parse_sockaddr(const char *host, const char *port, struct sockaddr_storage *ss,
			  socklen_t *len)
{
	long p;
	if (parse_long(port, &p) < 0 || p < 0 || p > 65535)
		return -1;
	memset(ss, 0, sizeof *ss);
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)p);
		*len = sizeof *a4;
		return 0;
	}
	if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)p);
		*len = sizeof *a6;
		return 0;
	}
	return -1;
}

/* connect with a timeout; returns 0 or an errno */
static int timed_connect(int fd, struct sockaddr *sa, socklen_t len, int ms)
{
	int fl = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	if (connect(fd, sa, len) == 0)
		return 0;
	if (errno != EINPROGRESS)
		return errno;
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	int r = poll(&pfd, 1, ms);
	if (r == 0)
		return ETIMEDOUT;
	if (r < 0)
		return errno;
	int err = 0;
	socklen_t el = sizeof err;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
		return errno;
	return err;
}

static int c_connect(int argc, char **argv)
{
	if (argc != 3)
		return usage("connect HOST PORT");
	struct sockaddr_storage ss;
	socklen_t len;
	if (parse_sockaddr(argv[1], argv[2], &ss, &len) < 0)
		return usage("connect HOST PORT (HOST must be a numeric IPv4/IPv6 address)");
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return denied(errno, "socket");
	int e = timed_connect(fd, (struct sockaddr *)&ss, len, 2000);
	close(fd);
	if (e)
		return denied(e, "%s %s", argv[1], argv[2]);
	return ok("%s %s", argv[1], argv[2]);
}

/* listen on 127.0.0.1 (or ::1), connect to ourselves, accept: proves lo is up */
static int c_loopback(int argc, char **argv)
{
	const char *host = argc > 1 ? argv[1] : "127.0.0.1";
	struct sockaddr_storage ss;
	socklen_t len;
	if (parse_sockaddr(host, "0", &ss, &len) < 0)
		return usage("loopback [127.0.0.1|::1]");
	int l = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0)
		return denied(errno, "socket");
	if (bind(l, (struct sockaddr *)&ss, len) < 0)
		return denied(errno, "bind %s", host);
	if (listen(l, 1) < 0)
		return denied(errno, "listen");
	len = sizeof ss;
	getsockname(l, (struct sockaddr *)&ss, &len);
	int c = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int e = timed_connect(c, (struct sockaddr *)&ss, len, 2000);
	if (e)
		return denied(e, "connect %s", host);
	int a = accept(l, NULL, NULL);
	if (a < 0)
		return denied(errno, "accept");
	return ok("%s", host);
}

static void print_escaped(const char *buf, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)buf[i];
		if (ch >= 0x20 && ch < 0x7f && ch != '\\')
			putchar(ch);
		else
			printf("\\x%02x", ch);
	}
}

/* stdin: says "stdin: reading" on stderr, then copies its standard input to its
 * standard output, to EOF (an OCI hook's state, what a terminal's user types) */
static int c_stdin(int argc, char **argv)
{
	char buf[4096];
	ssize_t r;

	(void)argv;
	if (argc != 1)
		return usage("stdin");
	fprintf(stderr, "stdin: reading\n");
	while ((r = read(0, buf, sizeof buf)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return denied(errno, "read stdin");
		if (fwrite(buf, 1, (size_t)r, stdout) != (size_t)r)
			return denied(errno, "write stdout");
	}
	fputc('\n', stdout);
	return 0;
}

/* serve PORT: listens on 0.0.0.0:PORT, answers one connection with a line, exits
 * (a published port's server) */
static int c_serve(int argc, char **argv)
{
	static const char msg[] = "served-by-nsrun-probe\n";
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1;

	if (argc != 2 || parse_sockaddr("0.0.0.0", argv[1], &ss, &len) < 0)
		return usage("serve PORT");
	int l = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0)
		return denied(errno, "socket");
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(l, (struct sockaddr *)&ss, len) < 0)
		return denied(errno, "bind 0.0.0.0:%s", argv[1]);
	if (listen(l, 1) < 0)
		return denied(errno, "listen");
	ok("listening on %s", argv[1]);
	int a = accept(l, NULL, NULL);
	if (a < 0)
		return denied(errno, "accept");
	if (write(a, msg, sizeof msg - 1) != (ssize_t)(sizeof msg - 1))
		return denied(errno, "write");
	close(a);
	return 0;
}

/* read PATH: success = open + read worked; prints the byte count and the first bytes */
static int c_read(int argc, char **argv)
{
	if (argc != 2)
		return usage("read PATH");
	int fd = open(argv[1], O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return denied(errno, "open %s", argv[1]);
	char buf[4096];
	size_t total = 0, shown = 0;
	char head[128];
	for (;;) {
		ssize_t r = read(fd, buf, sizeof buf);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			close(fd);
			return denied(e, "read %s", argv[1]);
		}
		if (r == 0)
			break;
		if (shown < sizeof head) {
			size_t k = (size_t)r < sizeof head - shown ? (size_t)r : sizeof head - shown;
			memcpy(head + shown, buf, k);
			shown += k;
		}
		total += (size_t)r;
		if (total >= (1u << 20))
			break; /* enough: /proc/kcore would be endless */
	}
	close(fd);
	printf("%s: ok %s %zu bytes: ", cmd, argv[1], total);
	print_escaped(head, shown);
	putchar('\n');
	return 0;
}

/* write PATH [BYTES]: create/truncate a regular file and write to it */
static int c_write(int argc, char **argv)
{
	if (argc != 2 && argc != 3)
		return usage("write PATH [BYTES]");
	long want = -1;
	if (argc == 3) {
		double d;
		if (parse_double(argv[2], &d) < 0)
			return usage("write PATH [BYTES]");
		want = (long)d;
	}
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0666);
	if (fd < 0)
		return denied(errno, "open %s", argv[1]);
	if (want < 0) {
		static const char msg[] = "written-by-nsrun-probe\n";
		if (write(fd, msg, sizeof msg - 1) != (ssize_t)(sizeof msg - 1)) {
			int e = errno;
			close(fd);
			return denied(e, "write %s", argv[1]);
		}
		if (close(fd) < 0)
			return denied(errno, "close %s", argv[1]);
		return ok("%s", argv[1]);
	}
	static char chunk[65536];
	memset(chunk, 'x', sizeof chunk);
	long done = 0;
	while (done < want) {
		size_t n = (size_t)(want - done) < sizeof chunk ? (size_t)(want - done) : sizeof chunk;
		ssize_t w = write(fd, chunk, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			close(fd);
			return denied(e, "%s after %ld bytes", argv[1], done);
		}
		done += w;
	}
	if (fsync(fd) < 0 && errno != EINVAL) {
		int e = errno;
		close(fd);
		return denied(e, "fsync %s after %ld bytes", argv[1], done);
	}
	if (close(fd) < 0)
		return denied(errno, "close %s after %ld bytes", argv[1], done);
	return ok("%s %ld bytes", argv[1], done);
}

/* open-write PATH: only open for writing (no write; safe for /proc/sysrq-trigger) */
static int c_open_write(int argc, char **argv)
{
	if (argc != 2)
		return usage("open-write PATH");
	int fd = open(argv[1], O_WRONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return denied(errno, "open %s", argv[1]);
	close(fd);
	return ok("%s", argv[1]);
}

static int c_mkdir(int argc, char **argv)
{
	if (argc != 2)
		return usage("mkdir PATH");
	if (mkdir(argv[1], 0755) < 0)
		return denied(errno, "%s", argv[1]);
	return ok("%s", argv[1]);
}

static int ns_flag(const char *name)
{
	static const struct { const char *n; int f; } t[] = {
		{ "user", CLONE_NEWUSER }, { "mount", CLONE_NEWNS }, { "net", CLONE_NEWNET },
		{ "pid", CLONE_NEWPID }, { "ipc", CLONE_NEWIPC }, { "uts", CLONE_NEWUTS },
		{ "cgroup", CLONE_NEWCGROUP }, { NULL, 0 } };
	for (int i = 0; t[i].n; i++)
		if (strcmp(t[i].n, name) == 0)
			return t[i].f;
	return 0;
}

static int c_unshare(int argc, char **argv)
{
	if (argc != 2 || !ns_flag(argv[1]))
		return usage("unshare user|mount|net|pid|ipc|uts|cgroup");
	if (unshare(ns_flag(argv[1])) < 0)
		return denied(errno, "%s", argv[1]);
	return ok("%s", argv[1]);
}

static int c_mount_tmpfs(int argc, char **argv)
{
	if (argc != 2)
		return usage("mount-tmpfs PATH");
	if (mount("nsrun-probe", argv[1], "tmpfs", MS_NOSUID | MS_NODEV, "size=1m") < 0)
		return denied(errno, "%s", argv[1]);
	umount2(argv[1], MNT_DETACH);
	return ok("%s", argv[1]);
}

static int c_ptrace_traceme(int argc, char **argv)
{
	(void)argc; (void)argv;
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
		return denied(errno, "%s", "");
	return ok("%s", "");
}

/* ptrace-attach PID|child: 'child' attaches to a freshly forked child (control) */
static int c_ptrace_attach(int argc, char **argv)
{
	if (argc != 2)
		return usage("ptrace-attach PID|child");
	pid_t pid, child = 0;
	if (strcmp(argv[1], "child") == 0) {
		child = fork();
		if (child < 0)
			return denied(errno, "fork");
		if (child == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			for (;;)
				pause();
		}
		pid = child;
	} else {
		long v;
		if (parse_long(argv[1], &v) < 0 || v <= 0)
			return usage("ptrace-attach PID|child");
		pid = (pid_t)v;
	}
	int rc;
	if (ptrace(PTRACE_ATTACH, pid, NULL, NULL) < 0) {
		rc = denied(errno, "%s", argv[1]);
	} else {
		waitpid(pid, NULL, __WALL);
		ptrace(PTRACE_DETACH, pid, NULL, NULL);
		rc = ok("%s", argv[1]);
	}
	if (child) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	return rc;
}

/* tiocsti [stdin|pty] [wide]: push one byte into a terminal's input queue;
 * wide: the request with its upper 32 bits set, which the kernel ignores (it
 * reads an unsigned int) but a filter comparing 64 bits sees */
static int c_tiocsti(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : (isatty(0) ? "stdin" : "pty");
	bool wide = argc > 2 && strcmp(argv[2], "wide") == 0;
	unsigned long req = TIOCSTI | (wide ? 1UL << 32 : 0);
	char ch = ' ';
	if (argc > 3 || (argc > 2 && !wide))
		return usage("tiocsti [stdin|pty] [wide]");
	if (strcmp(mode, "stdin") == 0) {
		if (!isatty(0))
			return denied(ENOTTY, "stdin is not a terminal");
		if (syscall(SYS_ioctl, 0, req, &ch) < 0)
			return denied(errno, "stdin%s", wide ? " wide" : "");
		return ok("stdin%s", wide ? " wide" : "");
	}
	if (strcmp(mode, "pty") != 0)
		return usage("tiocsti [stdin|pty] [wide]");
	/* a child makes a new pty its controlling terminal and injects into it */
	int m = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0)
		return denied(errno, "open /dev/ptmx");
	if (grantpt(m) < 0 || unlockpt(m) < 0)
		return denied(errno, "unlockpt");
	char *name = ptsname(m);
	if (!name)
		return denied(errno, "ptsname");
	int pfd[2];
	if (pipe(pfd) < 0)
		return denied(errno, "pipe");
	pid_t pid = fork();
	if (pid < 0)
		return denied(errno, "fork");
	if (pid == 0) {
		int e = 0;
		close(pfd[0]);
		if (setsid() < 0)
			e = errno;
		int s = e ? -1 : open(name, O_RDWR);
		if (!e && s < 0)
			e = errno;
		if (!e && ioctl(s, TIOCSCTTY, 0) < 0)
			e = errno;
		if (!e && syscall(SYS_ioctl, s, req, &ch) < 0)
			e = errno;
		if (write(pfd[1], &e, sizeof e) < 0)
			_exit(3);
		_exit(0);
	}
	close(pfd[1]);
	int e = EIO;
	if (read(pfd[0], &e, sizeof e) != sizeof e)
		e = EIO;
	waitpid(pid, NULL, 0);
	if (e)
		return denied(e, "pty%s", wide ? " wide" : "");
	return ok("pty%s", wide ? " wide" : "");
}

static int c_keyctl(int argc, char **argv)
{
	(void)argc; (void)argv;
	long r = syscall(__NR_keyctl, PROBE_KEYCTL_JOIN_SESSION_KEYRING, "nsrun-probe");
	if (r < 0)
		return denied(errno, "join-session-keyring");
	return ok("serial %ld", r);
}

static int c_bpf(int argc, char **argv)
{
	(void)argc; (void)argv;
	union bpf_attr attr;
	memset(&attr, 0, sizeof attr);
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = 4;
	attr.value_size = 4;
	attr.max_entries = 1;
	long fd = syscall(__NR_bpf, BPF_MAP_CREATE, &attr, sizeof attr);
	if (fd < 0)
		return denied(errno, "map-create");
	close((int)fd);
	return ok("map-create");
}

static int c_perf(int argc, char **argv)
{
	(void)argc; (void)argv;
	struct perf_event_attr pe;
	memset(&pe, 0, sizeof pe);
	pe.type = PERF_TYPE_SOFTWARE;
	pe.size = sizeof pe;
	pe.config = PERF_COUNT_SW_TASK_CLOCK;
	pe.disabled = 1;
	pe.exclude_kernel = 1;
	pe.exclude_hv = 1;
	long fd = syscall(__NR_perf_event_open, &pe, 0, -1, -1, 0);
	if (fd < 0)
		return denied(errno, "sw-task-clock");
	close((int)fd);
	return ok("sw-task-clock");
}

static int c_userfaultfd(int argc, char **argv)
{
	(void)argc; (void)argv;
	long fd = syscall(__NR_userfaultfd, O_CLOEXEC);
	if (fd < 0)
		return denied(errno, "%s", "");
	close((int)fd);
	return ok("%s", "");
}

static int c_io_uring(int argc, char **argv)
{
	(void)argc; (void)argv;
	unsigned char params[120]; /* struct io_uring_params */
	memset(params, 0, sizeof params);
	long fd = syscall(__NR_io_uring_setup, 4, params);
	if (fd < 0)
		return denied(errno, "%s", "");
	close((int)fd);
	return ok("fd %ld", fd);
}

static int c_personality(int argc, char **argv)
{
	(void)argc; (void)argv;
	int old = personality(0xffffffff);
	if (personality(PER_LINUX32) < 0)
		return denied(errno, "%s", "");
	int cur = personality(0xffffffff);
	personality((unsigned long)old);
	if ((cur & PER_MASK) != PER_LINUX32)
		return denied(EINVAL, "personality unchanged (0x%x)", cur);
	return ok("0x%x", cur);
}

static sigjmp_buf int80_jmp;
static void int80_segv(int sig)
{
	siglongjmp(int80_jmp, sig);
}

static int c_int80(int argc, char **argv)
{
	(void)argc; (void)argv;
#if defined(__x86_64__) || defined(__i386__)
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = int80_segv;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	int sig = sigsetjmp(int80_jmp, 1);
	if (sig)
		return denied(ENOSYS, "int $0x80 raised signal %d", sig);
	long ret = 20; /* __NR_getpid in the i386 table */
	__asm__ volatile("int $0x80" : "+a"(ret) : : "memory", "cc");
	if (ret < 0)
		return denied((int)-ret, "int $0x80 returned %ld", ret);
	if (ret != getpid())
		return denied(EINVAL, "int $0x80 getpid returned %ld, pid %d", ret, getpid());
	return ok("getpid %ld", ret);
#else
	return denied(ENOSYS, "not x86");
#endif
}

static int c_clone_newns(int argc, char **argv)
{
	(void)argc; (void)argv;
	long pid = syscall(__NR_clone, CLONE_NEWNS | SIGCHLD, 0, 0, 0, 0);
	if (pid < 0)
		return denied(errno, "%s", "");
	if (pid == 0)
		_exit(0);
	waitpid((pid_t)pid, NULL, 0);
	return ok("%s", "");
}

/* chroot-escape [DIR]: mkdir DIR/.nsrun-probe-jail, chroot into it, chdir("..") repeatedly,
 * chroot("."), then compare / with the original root. Success = a different directory. */
static int c_chroot_escape(int argc, char **argv)
{
	const char *base = argc > 1 ? argv[1] : "/tmp";
	struct stat root0, root1;
	if (stat("/", &root0) < 0)
		return denied(errno, "stat /");
	char jail[4096];
	snprintf(jail, sizeof jail, "%s/.nsrun-probe-jail-%d", base, getpid());
	if (mkdir(jail, 0700) < 0 && errno != EEXIST)
		return denied(errno, "mkdir %s", jail);
	int rootfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (chroot(jail) < 0) {
		int e = errno;
		rmdir(jail);
		return denied(e, "chroot %s", jail);
	}
	for (int i = 0; i < 256; i++)
		if (chdir("..") < 0)
			break;
	if (chroot(".") < 0)
		return denied(errno, "chroot .");
	if (stat("/", &root1) < 0)
		return denied(errno, "stat / after escape");
	/* tidy up: the jail lives below the original root, reachable through rootfd */
	if (rootfd >= 0) {
		const char *rel = jail;
		while (*rel == '/')
			rel++;
		unlinkat(rootfd, rel, AT_REMOVEDIR);
	}
	if (root1.st_dev != root0.st_dev || root1.st_ino != root0.st_ino)
		return ok("escaped: / is now dev %lu ino %lu (was dev %lu ino %lu)",
			  (unsigned long)root1.st_dev, (unsigned long)root1.st_ino,
			  (unsigned long)root0.st_dev, (unsigned long)root0.st_ino);
	return denied(EPERM, "contained: chroot allowed but .. stops at the container root");
}

/* mknod PATH [char|fifo]: default char (1,3) = /dev/null */
static int c_mknod(int argc, char **argv)
{
	if (argc != 2 && argc != 3)
		return usage("mknod PATH [char|fifo]");
	const char *kind = argc == 3 ? argv[2] : "char";
	mode_t mode;
	dev_t dev = 0;
	if (strcmp(kind, "char") == 0) {
		mode = S_IFCHR | 0666;
		dev = makedev(1, 3);
	} else if (strcmp(kind, "fifo") == 0) {
		mode = S_IFIFO | 0666;
	} else {
		return usage("mknod PATH [char|fifo]");
	}
	if (mknod(argv[1], mode, dev) < 0)
		return denied(errno, "%s %s", kind, argv[1]);
	unlink(argv[1]);
	return ok("%s %s", kind, argv[1]);
}

static int c_setuid0(int argc, char **argv)
{
	(void)argc; (void)argv;
	if (setuid(0) < 0)
		return denied(errno, "uid %d", getuid());
	return ok("uid %d euid %d", getuid(), geteuid());
}

/* forkbomb SECONDS [MAX]: fork as fast as possible (children sleep, then exit);
 * exit 0 if MAX processes were reached / time ran out without a fork failure,
 * 1 if fork failed (EAGAIN = contained). All children are killed before exiting. */
static int c_forkbomb(int argc, char **argv)
{
	double secs;
	long max = 5000;
	if (argc < 2 || argc > 3 || parse_double(argv[1], &secs) < 0 ||
	    (argc == 3 && (parse_long(argv[2], &max) < 0 || max <= 0)))
		return usage("forkbomb SECONDS [MAX]");
	pid_t *kids = calloc((size_t)max, sizeof *kids);
	if (!kids)
		return denied(ENOMEM, "calloc");
	double start = now(), end = start + secs;
	long n = 0;
	int err = 0;
	while (n < max && now() < end) {
		pid_t p = fork();
		if (p < 0) {
			err = errno;
			break;
		}
		if (p == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			double left = end - now() + 1.0;
			sleep_seconds(left > 0 ? left : 0.1);
			_exit(0);
		}
		kids[n++] = p;
	}
	double took = now() - start;
	for (long i = 0; i < n; i++)
		kill(kids[i], SIGKILL);
	for (long i = 0; i < n; i++)
		waitpid(kids[i], NULL, 0);
	free(kids);
	if (err)
		return denied(err, "fork failed after %ld processes in %.2fs", n, took);
	return ok("reached %ld processes in %.2fs without a fork failure", n, took);
}

/* memhog MIB: allocate and touch MIB MiB, 1 MiB at a time */
static int c_memhog(int argc, char **argv)
{
	long mib;
	if (argc != 2 || parse_long(argv[1], &mib) < 0 || mib < 0)
		return usage("memhog MIB");
	long got = 0;
	for (; got < mib; got++) {
		char *p = malloc(1 << 20);
		if (!p)
			return denied(ENOMEM, "allocation failed after %ld MiB", got);
		for (size_t i = 0; i < (1u << 20); i += 4096)
			p[i] = (char)i | 1;
	}
	return ok("%ld MiB", got);
}

/* Touches len bytes at p, one write per page. */
static void touch_pages(char *p, size_t len)
{
	for (size_t i = 0; i < len; i += 4096)
		p[i] = (char)i | 1;
}

/* Writes mib MiB of non-zero bytes to fd, 1 MiB at a time; -1 with errno. */
static int fill_fd(int fd, long mib)
{
	static char chunk[1 << 20];
	memset(chunk, 'm', sizeof(chunk));
	for (long i = 0; i < mib; i++)
		for (size_t off = 0; off < sizeof(chunk);) {
			ssize_t n = write(fd, chunk + off, sizeof(chunk) - off);
			if (n < 0)
				return -1;
			off += (size_t)n;
		}
	return 0;
}

/* sleep-exec SECONDS CMD [ARG...]: sleep, then exec CMD (a first exec of a file
 * the process may not read leaves it not dumpable until the second). */
static int c_sleep_exec(int argc, char **argv)
{
	double s;
	if (argc < 3 || parse_double(argv[1], &s) < 0)
		return usage("sleep-exec SECONDS CMD [ARG...]");
	struct timespec ts = { .tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9) };
	nanosleep(&ts, NULL);
	execv(argv[2], argv + 2);
	return denied(errno, "exec %s", argv[2]);
}

/* memhog-via KIND MIB [HOLD_S]: use MIB MiB of memory in one way and hold it HOLD_S
 * seconds (default 1): malloc (private anonymous), memfd (memfd_create + write, not
 * mapped), shm (a file in /dev/shm), shared (MAP_SHARED|MAP_ANONYMOUS), procs:N (N
 * processes of MIB MiB each, all alive at once), forked:N (MIB MiB in one process,
 * then N children sharing its pages) */
static int c_memhog_via(int argc, char **argv)
{
	long mib, procs = 0;
	double hold = 1;
	if ((argc != 3 && argc != 4) || parse_long(argv[2], &mib) < 0 || mib < 0 ||
	    (argc == 4 && parse_double(argv[3], &hold) < 0))
		return usage("memhog-via malloc|memfd|shm|memfd-mapped|shm-mapped|shared|procs:N|forked:N MIB [HOLD_S]");
	const char *kind = argv[1];
	size_t len = (size_t)mib << 20;
	if (strcmp(kind, "malloc") == 0) {
		char *p = malloc(len);
		if (!p)
			return denied(ENOMEM, "malloc %ld MiB", mib);
		touch_pages(p, len);
	} else if (strcmp(kind, "memfd") == 0) {
		int fd = (int)syscall(SYS_memfd_create, "hog", 0);
		if (fd < 0)
			return denied(errno, "memfd_create");
		if (fill_fd(fd, mib) < 0)
			return denied(errno, "write to the memfd");
	} else if (strcmp(kind, "shm") == 0) {
		int fd = open("/dev/shm/hog", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0)
			return denied(errno, "open /dev/shm/hog");
		if (fill_fd(fd, mib) < 0)
			return denied(errno, "write to /dev/shm/hog");
	} else if (strcmp(kind, "memfd-mapped") == 0 || strcmp(kind, "shm-mapped") == 0) {
		/* the file's pages written through a shared mapping, which stays */
		int fd = kind[0] == 'm' ? (int)syscall(SYS_memfd_create, "hog", 0)
					: open("/dev/shm/hog", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		char *p;
		if (fd < 0)
			return denied(errno, "%s", kind[0] == 'm' ? "memfd_create" : "open /dev/shm/hog");
		if (ftruncate(fd, (off_t)len) < 0)
			return denied(errno, "ftruncate %ld MiB", mib);
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			return denied(errno, "mmap MAP_SHARED %ld MiB", mib);
		touch_pages(p, len);
	} else if (strcmp(kind, "shared") == 0) {
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return denied(errno, "mmap MAP_SHARED|MAP_ANONYMOUS %ld MiB", mib);
		touch_pages(p, len);
	} else if (strncmp(kind, "procs:", 6) == 0 && parse_long(kind + 6, &procs) == 0 && procs > 0) {
		int ready[2];
		if (pipe(ready) < 0)
			return denied(errno, "pipe");
		for (long i = 0; i < procs; i++) {
			pid_t pid = fork();
			if (pid < 0)
				return denied(errno, "fork after %ld processes", i);
			if (pid == 0) {
				char *p = malloc(len);
				if (!p)
					_exit(1);
				touch_pages(p, len);
				if (write(ready[1], "r", 1) != 1)
					_exit(1);
				pause();
				_exit(0);
			}
		}
		for (long i = 0; i < procs; i++) {
			char c;
			if (read(ready[0], &c, 1) != 1)
				return denied(EIO, "only %ld of %ld processes got their memory", i, procs);
		}
	} else if (strncmp(kind, "forked:", 7) == 0 && parse_long(kind + 7, &procs) == 0 && procs > 0) {
		/* one process of MIB MiB, then N children that share its pages (copy on write) */
		char *p = malloc(len);
		if (!p)
			return denied(ENOMEM, "malloc %ld MiB", mib);
		touch_pages(p, len);
		for (long i = 0; i < procs; i++) {
			pid_t pid = fork();
			if (pid < 0)
				return denied(errno, "fork after %ld processes", i);
			if (pid == 0) {
				pause();
				_exit(0);
			}
		}
	} else {
		return usage("memhog-via malloc|memfd|shm|memfd-mapped|shm-mapped|shared|procs:N|forked:N MIB [HOLD_S]");
	}
	struct timespec ts = { (time_t)hold, (long)((hold - (double)(time_t)hold) * 1e9) };
	nanosleep(&ts, NULL);
	return ok("%s %ld MiB", kind, mib);
}

/* reserve GIB: a MAP_PRIVATE|MAP_NORESERVE reservation of GIB GiB, one page touched
 * (what sanitizers, garbage collectors and allocators do) */
static int c_reserve(int argc, char **argv)
{
	long gib;
	if (argc != 2 || parse_long(argv[1], &gib) < 0 || gib <= 0)
		return usage("reserve GIB");
	char *p = mmap(NULL, (size_t)gib << 30, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return denied(errno, "mmap %ld GiB MAP_NORESERVE", gib);
	p[4096] = 1;
	return ok("reserved %ld GiB, touched one page", gib);
}

static int c_fds(int argc, char **argv)
{
	(void)argc; (void)argv;
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return denied(errno, "/proc/self/fd");
	int self = dirfd(d);
	int fds[1024], n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < 1024) {
		long v;
		if (parse_long(e->d_name, &v) < 0 || v == self)
			continue;
		fds[n++] = (int)v;
	}
	closedir(d);
	for (int i = 1; i < n; i++) /* insertion sort */
		for (int j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
			int t = fds[j]; fds[j] = fds[j - 1]; fds[j - 1] = t;
		}
	printf("%s: ok", cmd);
	for (int i = 0; i < n; i++)
		printf(" %d", fds[i]);
	putchar('\n');
	return 0;
}

extern char **environ;
static int c_env(int argc, char **argv)
{
	(void)argc; (void)argv;
	for (char **e = environ; *e; e++)
		puts(*e);
	return 0;
}

static int c_pids(int argc, char **argv)
{
	(void)argc; (void)argv;
	DIR *d = opendir("/proc");
	if (!d)
		return denied(errno, "/proc");
	printf("%s: ok self=%d", cmd, getpid());
	struct dirent *e;
	long pids[4096];
	int n = 0;
	while ((e = readdir(d)) && n < 4096) {
		long v;
		if (parse_long(e->d_name, &v) == 0 && v > 0)
			pids[n++] = v;
	}
	closedir(d);
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && pids[j - 1] > pids[j]; j--) {
			long t = pids[j]; pids[j] = pids[j - 1]; pids[j - 1] = t;
		}
	for (int i = 0; i < n; i++) {
		char path[64], comm[64] = "?";
		snprintf(path, sizeof path, "/proc/%ld/comm", pids[i]);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			ssize_t r = read(fd, comm, sizeof comm - 1);
			close(fd);
			if (r > 0) {
				comm[r] = 0;
				comm[strcspn(comm, "\n")] = 0;
				for (char *c = comm; *c; c++)
					if (*c == ' ')
						*c = '_';
			}
		}
		printf(" %ld:%s", pids[i], comm);
	}
	putchar('\n');
	return 0;
}

/* setsid-sleep SECONDS [MARKER]: double fork; the grandchild calls setsid, sleeps, then
 * writes MARKER. The grandchild keeps stdout/stderr open (it holds the output pipes). */
static int c_setsid_sleep(int argc, char **argv)
{
	double secs;
	if (argc < 2 || argc > 3 || parse_double(argv[1], &secs) < 0)
		return usage("setsid-sleep SECONDS [MARKER]");
	int pfd[2];
	if (pipe(pfd) < 0)
		return denied(errno, "pipe");
	pid_t p = fork();
	if (p < 0)
		return denied(errno, "fork");
	if (p == 0) {
		close(pfd[0]);
		pid_t g = fork();
		if (g < 0)
			_exit(1);
		if (g == 0) {
			setsid();
			pid_t me = getpid();
			if (write(pfd[1], &me, sizeof me) < 0)
				_exit(1);
			close(pfd[1]);
			sleep_seconds(secs);
			if (argc == 3) {
				int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
				if (fd >= 0) {
					if (write(fd, "late\n", 5) < 0)
						_exit(1);
					close(fd);
				}
			}
			_exit(0);
		}
		_exit(0);
	}
	close(pfd[1]);
	pid_t g = 0;
	if (read(pfd[0], &g, sizeof g) != sizeof g)
		g = 0;
	close(pfd[0]);
	waitpid(p, NULL, 0);
	if (!g)
		return denied(ECHILD, "grandchild did not start");
	return ok("grandchild %d", g);
}

static int c_sleep(int argc, char **argv)
{
	double secs;
	if (argc != 2 || parse_double(argv[1], &secs) < 0)
		return usage("sleep SECONDS");
	sleep_seconds(secs);
	return ok("slept %s", argv[1]);
}

/* spin [SECONDS]: busy loop (forever without an argument) */
static int c_spin(int argc, char **argv)
{
	double secs = -1;
	if (argc > 2 || (argc == 2 && parse_double(argv[1], &secs) < 0))
		return usage("spin [SECONDS]");
	double end = now() + secs;
	volatile unsigned long x = 0;
	while (secs < 0 || now() < end)
		for (int i = 0; i < 100000; i++)
			x++;
	return ok("spun");
}

/* burn MS: use MS milliseconds of this process's CPU time (CLOCK_PROCESS_CPUTIME_ID, so
 * a loaded machine only makes it take longer), say so, then wait forever: a test gets
 * a known amount of CPU time whatever the machine's speed or load */
static int c_burn(int argc, char **argv)
{
	double ms;
	if (argc != 2 || parse_double(argv[1], &ms) < 0)
		return usage("burn MS");
	struct timespec ts;
	volatile unsigned long x = 0;
	do {
		for (int i = 0; i < 100000; i++)
			x++;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	} while (ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6 < ms);
	printf("burnt %s\n", argv[1]);
	fflush(stdout);
	for (;;)
		pause();
}

static int c_exit(int argc, char **argv)
{
	long n;
	if (argc != 2 || parse_long(argv[1], &n) < 0)
		return usage("exit N");
	fflush(stdout);
	_exit((int)n);
}

static int c_kill_self(int argc, char **argv)
{
	long s;
	if (argc != 2 || parse_long(argv[1], &s) < 0 || s <= 0 || s >= 65)
		return usage("kill-self SIGNUM");
	fflush(stdout);
	signal((int)s, SIG_DFL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, (int)s);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	kill(getpid(), (int)s);
	sleep_seconds(0.5);
	return denied(EINVAL, "survived signal %ld as pid %d", s, getpid());
}

static int c_hostname(int argc, char **argv)
{
	(void)argc; (void)argv;
	struct utsname u;
	if (uname(&u) < 0)
		return denied(errno, "uname");
	return ok("%s", u.nodename);
}

/* sysv-shm make|find KEY: a System V shared memory segment of that key made
 * (0666, one page), or found: its id, or denied ENOENT where this ipc
 * namespace has none (shmget(2), ipc_namespaces(7)). */
static int c_sysv_shm(int argc, char **argv)
{
	if (argc < 3 || (strcmp(argv[1], "make") != 0 && strcmp(argv[1], "find") != 0))
		return usage("sysv-shm make|find KEY");
	key_t key = (key_t)strtol(argv[2], NULL, 0);
	int id = shmget(key, 4096, argv[1][0] == 'm' ? IPC_CREAT | 0666 : 0);
	if (id < 0)
		return denied(errno, "shmget %s", argv[2]);
	return ok("%s", argv[2]);
}

static int c_netdev(int argc, char **argv)
{
	(void)argc; (void)argv;
	FILE *f = fopen("/proc/net/dev", "re");
	if (!f)
		return denied(errno, "/proc/net/dev");
	char line[512];
	int ln = 0;
	printf("%s: ok", cmd);
	while (fgets(line, sizeof line, f)) {
		if (++ln <= 2)
			continue;
		char *c = strchr(line, ':');
		if (!c)
			continue;
		*c = 0;
		char *name = line;
		while (*name == ' ')
			name++;
		printf(" %s", name);
	}
	fclose(f);
	putchar('\n');
	return 0;
}

/* routes: "routes: ok v4=N v6=M <family>:<dest>/<len>@<dev> ..." */
static int c_routes(int argc, char **argv)
{
	(void)argc; (void)argv;
	char out[16384];
	size_t o = 0;
	int n4 = 0, n6 = 0;
	char line[512];
	FILE *f = fopen("/proc/net/route", "re");
	if (f) {
		int ln = 0;
		while (fgets(line, sizeof line, f)) {
			if (++ln == 1)
				continue;
			char dev[64], dst[16], gw[16], mask[16];
			unsigned flags;
			if (sscanf(line, "%63s %15s %15s %x %*s %*s %*s %15s", dev, dst, gw, &flags, mask) == 5) {
				n4++;
				o += (size_t)snprintf(out + o, sizeof out - o, " v4:%s/%s@%s%s", dst, mask, dev,
						      (flags & 0x0200) ? "!reject" : "");
				if (o >= sizeof out) o = sizeof out - 1;
			}
		}
		fclose(f);
	}
	f = fopen("/proc/net/ipv6_route", "re");
	if (f) {
		while (fgets(line, sizeof line, f)) {
			char dst[40], plen[8], dev[64];
			unsigned flags = 0;
			if (sscanf(line, "%39s %7s %*s %*s %*s %*s %*s %*s %x %63s", dst, plen, &flags, dev) == 4) {
				n6++;
				/* RTF_REJECT (0x0200): the kernel's unreachable routes, not a path anywhere */
				o += (size_t)snprintf(out + o, sizeof out - o, " v6:%s/%ld@%s%s", dst,
						      strtol(plen, NULL, 16), dev, (flags & 0x0200) ? "!reject" : "");
				if (o >= sizeof out) o = sizeof out - 1;
			}
		}
		fclose(f);
	}
	out[o] = 0;
	printf("%s: ok v4=%d v6=%d%s\n", cmd, n4, n6, out);
	return 0;
}

/* stat PATH: its type, device numbers and mode, without following a last link */
static int c_stat(int argc, char **argv)
{
	struct stat st;
	if (argc != 2)
		return usage("stat PATH");
	if (lstat(argv[1], &st) < 0)
		return denied(errno, "stat %s", argv[1]);
	const char *type = S_ISCHR(st.st_mode) ? "char" : S_ISBLK(st.st_mode) ? "block" : S_ISFIFO(st.st_mode) ?
			   "fifo" : S_ISDIR(st.st_mode) ? "dir" : S_ISREG(st.st_mode) ? "file" : S_ISLNK(st.st_mode) ?
			   "link" : "other";
	return ok("%s %s %u:%u mode %04o", argv[1], type, major(st.st_rdev), minor(st.st_rdev),
		  (unsigned)(st.st_mode & 07777));
}

/* root-propagation [PATH...]: the optional fields (shared:N, master:N, unbindable) of
 * the mount at "/" in /proc/self/mountinfo, "private" when it has none; with PATHs,
 * PATH=FIELDS for each, space separated */
static int c_root_propagation(int argc, char **argv)
{
	static const char *const root[] = { "/" };
	const char *const *at = argc > 1 ? (const char *const *)argv + 1 : root;
	int n = argc > 1 ? argc - 1 : 1;
	char out[2048] = "";
	for (int k = 0; k < n; k++) {
		FILE *f = fopen("/proc/self/mountinfo", "re");
		char line[4096], found[256] = "";
		if (!f)
			return denied(errno, "/proc/self/mountinfo");
		while (fgets(line, sizeof line, f)) {
			/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE ... */
			char *save = NULL, *tok = strtok_r(line, " ", &save);
			int field = 0;
			char opt[256] = "";
			bool here = false;
			for (; tok; tok = strtok_r(NULL, " ", &save), field++) {
				if (field == 4)
					here = strcmp(tok, at[k]) == 0;
				else if (field >= 6 && strcmp(tok, "-") == 0)
					break;
				else if (field >= 6)
					snprintf(opt + strlen(opt), sizeof opt - strlen(opt), "%s%s", opt[0] ? "," : "", tok);
			}
			if (here) /* the last mount there is the one seen */
				snprintf(found, sizeof found, "%s", opt[0] ? opt : "private");
		}
		fclose(f);
		if (!found[0])
			return denied(ENOENT, "no mount at %s", at[k]);
		if (argc > 1)
			snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s=%s", k ? " " : "", at[k], found);
		else
			snprintf(out, sizeof out, "%s", found);
	}
	return ok("%s", out);
}

/* old-root: whether a mount is stacked on "/" (pivot_root's old root, not yet
 * detached): the mount ids of "/" and of "/.." (which crosses into a mount stacked
 * on "/"; statx(2) STATX_MNT_ID), and how many mounts /proc/self/mountinfo has at "/" */
static int c_old_root(int argc, char **argv)
{
	(void)argc; (void)argv;
	struct statx root, up;
	FILE *f;
	char line[4096], mnt[4096];
	int at_root = 0;

	if (statx(AT_FDCWD, "/", AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &root) < 0 ||
	    statx(AT_FDCWD, "/..", AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &up) < 0)
		return denied(errno, "statx");
	if (!(root.stx_mask & STATX_MNT_ID))
		return denied(ENOSYS, "statx: no STATX_MNT_ID");
	if (!(f = fopen("/proc/self/mountinfo", "re")))
		return denied(errno, "/proc/self/mountinfo");
	/* ID PARENT MAJ:MIN ROOT MOUNTPOINT ... */
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1 && strcmp(mnt, "/") == 0)
			at_root++;
	fclose(f);
	return ok("%s, %d mount%s at /", root.stx_mnt_id == up.stx_mnt_id ? "/.. is /" : "/.. is another mount",
		  at_root, at_root == 1 ? "" : "s");
}

static int c_cwd(int argc, char **argv)
{
	(void)argc; (void)argv;
	char buf[4096];
	ssize_t n = readlink("/proc/self/cwd", buf, sizeof buf - 1);
	if (n < 0)
		return denied(errno, "/proc/self/cwd");
	buf[n] = 0;
	char real[4096];
	if (!getcwd(real, sizeof real))
		snprintf(real, sizeof real, "(getcwd: %s)", errname(errno));
	return ok("%s getcwd=%s", buf, real);
}

static int c_ids(int argc, char **argv)
{
	(void)argc; (void)argv;
	gid_t g[64];
	int n = getgroups(64, g);
	printf("%s: ok uid=%d gid=%d euid=%d egid=%d groups=", cmd, getuid(), getgid(), geteuid(), getegid());
	for (int i = 0; i < n; i++)
		printf(i ? ",%d" : "%d", g[i]);
	putchar('\n');
	return 0;
}

struct sub {
	const char *name;
	int (*fn)(int, char **);
	const char *help;
};


/* ---------- outer sandboxes: restrict this process, then exec a command ---------- */

/* landlock-exec CMD [ARG...]: an agent sandbox's Landlock domain (every
 * filesystem right of ABI 1 handled, all of them allowed below /): files stay
 * usable, but the kernel refuses mount(2) and pivot_root(2) to the domain. */
static int c_landlock_exec(int argc, char **argv)
{
	struct { uint64_t fs; } attr = { (1ULL << 13) - 1 };
	struct __attribute__((packed)) { uint64_t allowed; int32_t fd; } rule = { (1ULL << 13) - 1, -1 };
	int rs;

	if (argc < 2)
		return usage("landlock-exec CMD [ARG...]");
	rs = (int)syscall(444 /* landlock_create_ruleset */, &attr, sizeof(attr), 0);
	if (rs < 0)
		return denied(errno, "landlock_create_ruleset");
	rule.fd = open("/", O_PATH | O_CLOEXEC);
	if (rule.fd < 0 || syscall(445 /* landlock_add_rule */, rs, 1, &rule, 0) < 0)
		return denied(errno, "landlock_add_rule");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || syscall(446 /* landlock_restrict_self */, rs, 0) < 0)
		return denied(errno, "landlock_restrict_self");
	close(rs);
	close(rule.fd);
	execvp(argv[1], argv + 1);
	return denied(errno, "exec %s", argv[1]);
}

/* deny-sockets-exec CMD [ARG...]: a seccomp filter (as some agent sandboxes load)
 * that lets socket(2) make only AF_UNIX sockets: netlink, AF_INET and AF_INET6
 * fail with EAFNOSUPPORT. */
static int c_deny_sockets_exec(int argc, char **argv)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 4),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EAFNOSUPPORT),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (argc < 2)
		return usage("deny-sockets-exec CMD [ARG...]");
	/* x86-64 only (as the probe): the arch is not checked */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
		return denied(errno, "seccomp");
	execvp(argv[1], argv + 1);
	return denied(errno, "exec %s", argv[1]);
}

static const struct sub subs[] = {
	{ "status", c_status, "print Uid/Gid/Groups/Cap*/NoNewPrivs/Seccomp of /proc/self/status" },
	{ "ids", c_ids, "print uid/gid/euid/egid/groups" },
	{ "connect", c_connect, "HOST PORT: TCP connect, 2 s timeout" },
	{ "loopback", c_loopback, "[ADDR]: listen+connect to itself on loopback" },
	{ "read", c_read, "PATH" },
	{ "stdin", c_stdin, "copy stdin to stdout" },
	{ "serve", c_serve, "PORT: answer one TCP connection on 0.0.0.0:PORT with a line" },
	{ "write", c_write, "PATH [BYTES]" },
	{ "open-write", c_open_write, "PATH: open for writing only" },
	{ "mkdir", c_mkdir, "PATH" },
	{ "unshare", c_unshare, "user|mount|net|pid|ipc|uts|cgroup" },
	{ "mount-tmpfs", c_mount_tmpfs, "PATH" },
	{ "ptrace-traceme", c_ptrace_traceme, "" },
	{ "ptrace-attach", c_ptrace_attach, "PID|child" },
	{ "tiocsti", c_tiocsti, "[stdin|pty] [wide]" },
	{ "keyctl", c_keyctl, "join a new session keyring" },
	{ "bpf", c_bpf, "BPF_MAP_CREATE" },
	{ "perf-event-open", c_perf, "software task clock" },
	{ "userfaultfd", c_userfaultfd, "" },
	{ "io-uring-setup", c_io_uring, "" },
	{ "personality-linux32", c_personality, "" },
	{ "int80", c_int80, "getpid via int $0x80" },
	{ "clone-newns", c_clone_newns, "" },
	{ "chroot-escape", c_chroot_escape, "[DIR]" },
	{ "mknod", c_mknod, "PATH [char|fifo]" },
	{ "setuid0", c_setuid0, "" },
	{ "forkbomb", c_forkbomb, "SECONDS [MAX]" },
	{ "memhog", c_memhog, "MIB" },
	{ "sleep-exec", c_sleep_exec, "SECONDS CMD [ARG...]: sleep, then exec CMD" },
	{ "memhog-via", c_memhog_via, "malloc|memfd|shm|memfd-mapped|shm-mapped|shared|procs:N|forked:N MIB [HOLD_S]" },
	{ "reserve", c_reserve, "GIB: MAP_NORESERVE, one page touched" },
	{ "fds", c_fds, "list open fds" },
	{ "env", c_env, "print environ" },
	{ "pids", c_pids, "list /proc pids with comm" },
	{ "setsid-sleep", c_setsid_sleep, "SECONDS [MARKER]" },
	{ "sleep", c_sleep, "SECONDS" },
	{ "spin", c_spin, "[SECONDS]" },
	{ "burn", c_burn, "MS (of CPU time, then wait forever)" },
	{ "exit", c_exit, "N" },
	{ "kill-self", c_kill_self, "SIGNUM" },
	{ "hostname", c_hostname, "" },
	{ "sysv-shm", c_sysv_shm, "make|find KEY" },
	{ "netdev", c_netdev, "interface names from /proc/net/dev" },
	{ "routes", c_routes, "entries of /proc/net/route and /proc/net/ipv6_route" },
	{ "cwd", c_cwd, "print the working directory" },
	{ "stat", c_stat, "PATH: type, major:minor, mode (lstat)" },
	{ "old-root", c_old_root, "is a mount stacked on / (/.. vs / by statx mount id; mounts at / in mountinfo)" },
	{ "root-propagation", c_root_propagation, "[PATH...]: optional fields of / (each PATH) in mountinfo (shared:N, master:N, ...)" },
	{ "landlock-exec", c_landlock_exec, "CMD [ARG...]: exec under a Landlock domain (no mounts)" },
	{ "deny-sockets-exec", c_deny_sockets_exec, "CMD [ARG...]: exec with only AF_UNIX sockets" },
	{ NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2) {
		fprintf(stderr, "nsrun-probe: usage: nsrun-probe SUBCOMMAND [ARGS...]\n");
		for (int i = 0; subs[i].name; i++)
			fprintf(stderr, "  %-20s %s\n", subs[i].name, subs[i].help);
		return 2;
	}
	for (int i = 0; subs[i].name; i++) {
		if (strcmp(argv[1], subs[i].name) == 0) {
			cmd = subs[i].name;
			int rc = subs[i].fn(argc - 1, argv + 1);
			fflush(stdout);
			return rc;
		}
	}
	fprintf(stderr, "nsrun-probe: unknown subcommand '%s'\n", argv[1]);
	return 2;
}
