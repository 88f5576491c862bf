/* pasta.c - see pasta.h. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ns.h"
#include "pasta.h"
#include "sys.h"

#define PASTA_START_US (10ULL * 1000000)        /* when the run has no earlier deadline */
#define TICK_MS 5
#define EXEC_FAILED "nsrun-exec-failed:"
#define TUN_HINT "pasta makes a tap device through /dev/net/tun, which must be open to the caller " \
	"(mode 0666, as Debian's udev makes it: chmod 0666 /dev/net/tun as root); or use --network none"

/* What the guard tells the supervisor, once. */
struct pasta_report {
	char kind;                      /* 'R': configured; 'E': failed */
	int errnum;
	char msg[200];
};

void pasta_init(struct pasta_state *ps)
{
	ps->guard = -1;
	ps->ctl_fd = -1;
}

/* True if an executable "pasta" is in $PATH (or /usr/bin without PATH). */
static bool pasta_installed(void)
{
	const char *path = getenv("PATH");
	char *copy = strdup(path && *path ? path : "/usr/bin:/bin"), *save = NULL;
	bool found = false;

	if (!copy)
		return true; /* let execvp say */
	for (char *dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		char file[4096];
		snprintf(file, sizeof(file), "%s/pasta", *dir ? dir : ".");
		found = access(file, X_OK) == 0;
	}
	free(copy);
	return found;
}

const char *pasta_unavailable(char *buf, size_t len)
{
	int fd;

	if (!pasta_installed()) {
		snprintf(buf, len, "pasta is not installed (Debian package passt)");
		return buf;
	}
	fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		struct stat st;
		int e = errno;
		if (stat("/dev/net/tun", &st) == 0)
			snprintf(buf, len, "/dev/net/tun (mode %04o) cannot be opened: %s", (unsigned)(st.st_mode & 07777),
				 strerror(e));
		else
			snprintf(buf, len, "/dev/net/tun: %s", strerror(e));
		return buf;
	}
	close(fd);
	return NULL;
}

/* True if every nameserver of the resolv.conf(5) at path is a loopback address. */
static bool only_loopback_servers(const char *path)
{
	FILE *f = fopen(path, "re");
	char line[512], addr[64];
	bool any = false, all_lo = true;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, " nameserver %63s", addr) != 1)
			continue;
		any = true;
		if (strncmp(addr, "127.", 4) != 0 && strcmp(addr, "::1") != 0)
			all_lo = false;
	}
	fclose(f);
	return any && all_lo;
}

const char *pasta_resolv_conf(void)
{
	static const char *const upstream = "/run/systemd/resolve/resolv.conf";

	if (access("/etc/resolv.conf", R_OK) != 0)
		return NULL;
	if (only_loopback_servers("/etc/resolv.conf") && access(upstream, R_OK) == 0)
		return upstream;
	return "/etc/resolv.conf";
}

/* ---- the guard ---- */

/* The pids of our children, from /proc/thread-self/children (proc(5)); the guard
 * is single-threaded, so that is all of them.  Returns how many (at most max). */
static size_t my_children(pid_t *pids, size_t max)
{
	pid_t found[64];
	/* thread-self, not task/getpid(): /proc may be of another pid namespace */
	ssize_t r = proc_children(AT_FDCWD, "/proc/thread-self", found, sizeof(found) / sizeof(found[0]));
	size_t n = 0;

	for (ssize_t i = 0; i < r && n < max; i++) {
		/* numbers of the /proc here, which may be of another pid namespace */
		long v = ns_own_pid(found[i]);
		if (v > 0)
			pids[n++] = (pid_t)v;
	}
	return n;
}

/* Kills and reaps every child (pasta's first process, its daemon, what it forked),
 * listing them again after each reap: a daemon forked just before its parent was
 * killed becomes our child (we are its subreaper) only once that parent is gone. */
static void __attribute__((noreturn)) guard_exit(int code)
{
	pid_t pids[16];

	for (;;) {
		size_t n = my_children(pids, 16);
		pid_t r;
		for (size_t i = 0; i < n; i++)
			kill(pids[i], SIGKILL);
		r = waitpid(-1, NULL, __WALL | WNOHANG);
		if (r < 0 && errno == ECHILD)
			break;
		if (r == 0)
			usleep(1000);
	}
	_exit(code);
}

static void report(int ctl, char kind, int errnum, const char *msg)
{
	struct pasta_report r = { .kind = kind, .errnum = errnum };

	snprintf(r.msg, sizeof(r.msg), "%s", msg);
	if (write_all(ctl, &r, sizeof(r)) < 0) {
		/* the supervisor is gone: guard_exit follows */
	}
}

/* pasta's last line that says something (it also complains that it has no syslog). */
static void last_line(char *text, char *out, size_t len)
{
	char *save = NULL;

	out[0] = '\0';
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		if (*l && !strstr(l, "to syslog"))
			snprintf(out, len, "%s", l);
}

static void __attribute__((noreturn)) guard_main(char **argv, int ctl, uint64_t deadline_us)
{
	static const int ignored[] = { SIGINT, SIGHUP, SIGTERM, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU,
				       SIGUSR1, SIGUSR2, SIGPIPE };
	char text[4096], line[200];
	size_t tlen = 0;
	int errp[2], status = 0, keep[1] = { ctl };
	sigset_t all;
	pid_t first;

	/* a process group of its own, deaf to what a terminal or a kill of nsrun's group
	 * sends (^C, a hang-up, kill -- -PGID): the guard must outlive the supervisor to
	 * kill pasta, whose daemon has a session of its own and would live on */
	setpgid(0, 0);
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		signal(ignored[i], SIG_IGN);
	sigfillset(&all);
	sigprocmask(SIG_UNBLOCK, &all, NULL);
	close_fds_except(keep, 1);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		report(ctl, 'E', errno, "--network pasta: prepare pasta's guard");
		_exit(1);
	}
	first = fork();
	if (first < 0) {
		report(ctl, 'E', errno, "--network pasta: fork pasta");
		_exit(1);
	}
	if (first == 0) {
		int nul = open("/dev/null", O_RDWR);
		for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
			signal(ignored[i], SIG_DFL);
		if (nul < 0 || dup2(nul, 0) < 0 || dup2(nul, 1) < 0 || dup2(errp[1], 2) < 0)
			_exit(127);
		if (nul > 2)
			close(nul);
		execvp(argv[0], argv);
		dprintf(2, EXEC_FAILED "%d\n", errno);
		_exit(127);
	}
	close(errp[1]);
	fcntl(errp[0], F_SETFL, O_NONBLOCK);
	/* pasta's first process exits once the interface is configured (0) or it failed */
	for (;;) {
		struct pollfd pfd[2] = { { .fd = errp[0], .events = POLLIN }, { .fd = ctl, .events = POLLIN } };
		pid_t r;
		ssize_t n;

		if (poll(pfd, 2, TICK_MS) < 0 && errno != EINTR)
			guard_exit(1);
		/* drained whatever it writes (a full pipe would block it); the last lines are kept */
		while ((n = read(errp[0], text + tlen, sizeof(text) - 1 - tlen)) > 0) {
			tlen += (size_t)n;
			if (tlen == sizeof(text) - 1) {
				memmove(text, text + tlen / 2, tlen - tlen / 2);
				tlen -= tlen / 2;
			}
		}
		if (pfd[1].revents)
			guard_exit(1); /* the supervisor gave up, or is gone */
		r = waitpid(first, &status, WNOHANG);
		if (r == first)
			break;
		if (monotonic_us() >= deadline_us) {
			report(ctl, 'E', ETIMEDOUT, "--network pasta: pasta did not configure the container's network in time");
			guard_exit(1);
		}
	}
	text[tlen] = '\0';
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char *ef = strstr(text, EXEC_FAILED);
		char msg[256];
		if (ef) {
			int e = atoi(ef + strlen(EXEC_FAILED));
			report(ctl, 'E', e, e == ENOENT ? "--network pasta: pasta not found (install Debian's passt package)" :
				"--network pasta: execute pasta");
			guard_exit(1);
		}
		last_line(text, line, sizeof(line));
		if (!line[0])
			snprintf(line, sizeof(line), WIFEXITED(status) ? "exit status %d" : "killed by signal %d",
				 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		snprintf(msg, sizeof(msg), "--network pasta: pasta failed: %s", line);
		report(ctl, 'E', 0, msg);
		guard_exit(1);
	}
	close(errp[0]);
	{
		pid_t daemon_pid;
		if (my_children(&daemon_pid, 1) != 1) {
			report(ctl, 'E', 0, "--network pasta: pasta exited right after configuring the network");
			guard_exit(1);
		}
	}
	report(ctl, 'R', 0, "");
	/* until the supervisor closes its end (the end of the run) or dies */
	for (;;) {
		struct pollfd pfd = { .fd = ctl, .events = POLLIN };
		char c;
		if (poll(&pfd, 1, -1) < 0 && errno == EINTR)
			continue;
		if (read(ctl, &c, 1) <= 0)
			guard_exit(0);
	}
}

/* ---- the supervisor's side ---- */

#define MAX_ARGS (24 + 2 * NSRUN_MAX_PUBLISH)

int pasta_start(const struct nsrun_config *cfg, struct publish_state *pub, pid_t child, uint64_t deadline_us,
		struct pasta_state *ps, struct nsrun_error *err)
{
	static char *const fixed[] = {
		"pasta", "--quiet", "--config-net", "--ns-ifname", "eth0",
		"--no-map-gw",          /* the gateway address is not the host's loopback */
		"-u", "none", "-T", "none", "-U", "none", /* nothing forwarded but -p, nothing back to the host */
	};
	char *argv[MAX_ARGS];
	char specs[NSRUN_MAX_PUBLISH][80], target[24];
	size_t n = 0, n_specs = 0;
	int sv[2];
	uint64_t now = monotonic_us();
	struct pasta_report rep;
	long proc_pid;

	if (!deadline_us || deadline_us > now + PASTA_START_US)
		deadline_us = now + PASTA_START_US;
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		argv[n++] = fixed[i];
	if (geteuid() == 0) {
		/* pasta would drop to nobody before joining the container's user namespace,
		 * which belongs to root; once inside it has no capability on the host */
		argv[n++] = "--runas";
		argv[n++] = "0:0";
	}
	for (size_t i = 0; i < cfg->n_publish; i++) {
		/* pasta splices loopback connections into the namespace's loopback; those from
		 * other addresses go through eth0, which Debian 12's pasta does not complete
		 * (the container's SYN-ACK is never answered): those stay with our forwarder */
		if (!publish_is_loopback(cfg->publish[i].host_ip))
			continue;
		/* pasta binds the port itself: ours only resolved port 0 and found a port in
		 * use; another process could take it in between, and pasta then fails (125) */
		if (pub->listen_fd[i] >= 0)
			close(pub->listen_fd[i]);
		pub->listen_fd[i] = -1;
		snprintf(specs[n_specs], sizeof(specs[n_specs]), "%s/%u:%u", cfg->publish[i].host_ip,
			 (unsigned)pub->host_port[i], (unsigned)cfg->publish[i].container_port);
		argv[n++] = "-t";
		argv[n++] = specs[n_specs++];
	}
	if (!n_specs) {
		argv[n++] = "-t";
		argv[n++] = "none";
	}
	/* pasta opens /proc/PID/ns/...: the child's number in the /proc mounted here,
	 * which may be of another pid namespace than ours (bwrap without --proc) */
	proc_pid = ns_proc_pid(child);
	if (proc_pid < 0)
		return error_set(err, errno, "--network pasta: find the container in /proc (of another pid namespace?)");
	snprintf(target, sizeof(target), "%ld", proc_pid);
	argv[n++] = target;
	argv[n] = NULL;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return error_set(err, errno, "--network pasta: socketpair");
	ps->guard = fork();
	if (ps->guard < 0) {
		close(sv[0]);
		close(sv[1]);
		return error_set(err, errno, "--network pasta: fork");
	}
	if (ps->guard == 0) {
		close(sv[0]);
		guard_main(argv, sv[1], deadline_us);
	}
	close(sv[1]);
	ps->ctl_fd = sv[0];
	for (;;) {
		struct pollfd pfd = { .fd = ps->ctl_fd, .events = POLLIN };
		uint64_t t = monotonic_us();
		int ms = t >= deadline_us ? 0 : (int)((deadline_us - t + 999) / 1000);
		int r = poll(&pfd, 1, ms + 1000); /* the guard keeps the deadline; this is a backstop */
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return error_set(err, r < 0 ? errno : ETIMEDOUT, "--network pasta: wait for pasta");
		break;
	}
	if (recv(ps->ctl_fd, &rep, sizeof(rep), MSG_WAITALL) != (ssize_t)sizeof(rep))
		return error_set(err, 0, "--network pasta: pasta's guard exited unexpectedly");
	rep.msg[sizeof(rep.msg) - 1] = '\0';
	if (rep.kind != 'R') {
		char why[160];
		error_set(err, rep.errnum, "%s", rep.msg);
		if (strstr(rep.msg, "tun") && pasta_unavailable(why, sizeof(why)))
			err->hint = TUN_HINT;
		return -1;
	}
	return 0;
}

void pasta_stop(struct pasta_state *ps)
{
	if (ps->ctl_fd >= 0)
		close(ps->ctl_fd); /* EOF: the guard kills pasta and exits */
	ps->ctl_fd = -1;
	if (ps->guard > 0) {
		while (waitpid(ps->guard, NULL, 0) < 0 && errno == EINTR)
			;
		ps->guard = -1;
	}
}
