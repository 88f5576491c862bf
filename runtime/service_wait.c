/* service_wait.c - see service_wait.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "service_wait.h"
#include "sys.h"

#define WAIT_POLL_US 100000ULL
#define HTTP_TIMEOUT_MS 2000
#define LINE_MAX_KEPT 4096

/* ---- the health check: a process beside the container, child of the monitor ---- */

/* Runs the check once: nsrun exec NAME -- /bin/sh -c CMD, its output (start) into
 * out.  Returns its exit status, or -1 when it ran past timeout_us (then killed). */
static int health_check_once(const struct nsrun_health *h, const char *name, char *out, size_t outlen)
{
	int p[2];
	pid_t parent = getpid(), pid;
	uint64_t end = monotonic_us() + h->timeout_us;
	size_t got = 0;
	int status = 0;
	bool timed_out = false;

	out[0] = '\0';
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		const char *argv[] = { "nsrun", "exec", name, "--", "/bin/sh", "-c", h->cmd, NULL };
		int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		/* dies with the checker, and so does what it joined (exec_join.c) */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent || null_fd < 0 ||
		    dup2(null_fd, 0) < 0 || dup2(p[1], 1) < 0 || dup2(p[1], 2) < 0)
			_exit(125);
		execv("/proc/self/exe", (char *const *)argv);
		_exit(127);
	}
	close(p[1]);
	for (;;) {
		uint64_t now = monotonic_us();
		struct pollfd pfd = { .fd = p[0], .events = POLLIN };
		char buf[1024];
		ssize_t n;

		if (now >= end) {
			timed_out = true;
			break;
		}
		if (poll(&pfd, 1, (int)((end - now + 999) / 1000)) <= 0)
			continue;
		n = read(p[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (got + 1 < outlen) {
			size_t k = (size_t)n < outlen - 1 - got ? (size_t)n : outlen - 1 - got;
			memcpy(out + got, buf, k);
			got += k;
			out[got] = '\0';
		}
	}
	close(p[0]);
	if (timed_out)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (timed_out) {
		snprintf(out, outlen, "the check ran past --health-timeout");
		return -1;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Sleeps us microseconds, whatever signals come. */
static void sleep_us(uint64_t us)
{
	struct timespec ts = { .tv_sec = (time_t)(us / 1000000), .tv_nsec = (long)(us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void __attribute__((noreturn)) health_main(const struct nsrun_config *cfg, int dir_fd, const char *name)
{
	const struct nsrun_health *h = &cfg->service.health;
	uint64_t start = monotonic_us();
	long long streak = 0;
	bool ever_healthy = false;

	for (;;) {
		struct service_state st;
		char out[sizeof(st.health.output)];
		int code;

		/* docker's order: the first check one interval after the start */
		sleep_us(h->interval_us);
		code = health_check_once(h, name, out, sizeof(out));
		if (state_read(dir_fd, &st) < 0 || strcmp(st.status, "running") != 0)
			_exit(0);
		if (code == 0) {
			streak = 0;
			ever_healthy = true;
			snprintf(st.health.status, sizeof(st.health.status), "healthy");
		} else if (ever_healthy || monotonic_us() - start >= h->start_period_us) {
			/* in the start period a failure does not count (docker's --health-start-period) */
			if ((uint64_t)++streak >= h->retries)
				snprintf(st.health.status, sizeof(st.health.status), "unhealthy");
		}
		st.health.failing_streak = streak;
		st.health.exit_code = code;
		snprintf(st.health.output, sizeof(st.health.output), "%s", out);
		st.health.checked = (long long)time(NULL);
		state_write(dir_fd, &st);
	}
}

pid_t health_start(const struct nsrun_config *cfg, int dir_fd, const char *name)
{
	pid_t parent = getpid();
	pid_t pid;

	if (!cfg->service.health.cmd)
		return -1;
	pid = fork();
	if (pid != 0)
		return pid;
	{
		int keep[] = { 0, 1, 2, dir_fd };
		sigset_t all;
		/* dies with the monitor; the check closes the race with its death before prctl */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
			_exit(1);
		sigfillset(&all);
		sigprocmask(SIG_UNBLOCK, &all, NULL);
		signal(SIGCHLD, SIG_DFL);
		/* not the lock: the service is alive as long as its monitor, not its checker */
		close_fds_except(keep, 4);
		health_main(cfg, dir_fd, name);
	}
}

void health_stop(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/* ---- -d's waits ---- */

/* Reads what the log at dir_fd gained since *pos, line by line; true once a line
 * matches re.  A log restarted at its --output-limit (relay.h) is read again from 0. */
static bool log_matched(int dir_fd, const regex_t *re, off_t *pos, char *line, size_t *llen)
{
	_cleanup_close_ int fd = openat(dir_fd, LOG_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	char buf[8192];
	ssize_t n;
	struct stat sb;

	if (fd < 0 || fstat(fd, &sb) < 0)
		return false;
	if (sb.st_size < *pos)
		*pos = 0, *llen = 0;
	while ((n = pread(fd, buf, sizeof(buf), *pos)) > 0) {
		*pos += n;
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] != '\n') {
				if (*llen < LINE_MAX_KEPT - 1)
					line[(*llen)++] = buf[i];
				continue;
			}
			line[*llen] = '\0';
			*llen = 0;
			if (regexec(re, line, 0, NULL, 0) == 0)
				return true;
		}
	}
	return false;
}

/* True once GET path on ip:port answers a 2xx or 3xx status; its status in *code.
 * Only the status line is read ("HTTP/1.x NNN", RFC 9112 section 4): no more of
 * HTTP is needed, and no client library links statically (Makefile NSRUN_LINK). */
static bool http_ok(const char *ip, uint16_t port, const char *path, int *code)
{
	_cleanup_close_ int s = -1;
	struct sockaddr_storage ss = { 0 };
	socklen_t sl;
	char req[1024], resp[64];
	size_t got = 0;
	uint64_t end = monotonic_us() + HTTP_TIMEOUT_MS * 1000ULL;
	bool v6 = strchr(ip, ':') != NULL;
	int len;

	if (v6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons(port);
		if (inet_pton(AF_INET6, ip, &a->sin6_addr) != 1)
			return false;
		sl = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;
		a->sin_family = AF_INET;
		a->sin_port = htons(port);
		if (inet_pton(AF_INET, ip, &a->sin_addr) != 1)
			return false;
		sl = sizeof(*a);
	}
	s = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0 || (connect(s, (struct sockaddr *)&ss, sl) < 0 && errno != EINPROGRESS))
		return false;
	len = snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: %s%s%s:%u\r\nConnection: close\r\n\r\n", path,
		       v6 ? "[" : "", ip, v6 ? "]" : "", (unsigned)port);
	if (len < 0 || (size_t)len >= sizeof(req))
		return false;
	for (int sent = 0; sent < len;) {
		struct pollfd pfd = { .fd = s, .events = POLLOUT };
		ssize_t n;
		uint64_t now = monotonic_us();
		if (now >= end || poll(&pfd, 1, (int)((end - now) / 1000) + 1) <= 0)
			return false;
		n = send(s, req + sent, (size_t)(len - sent), MSG_NOSIGNAL);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return false;
		sent += n > 0 ? (int)n : 0;
	}
	while (got < sizeof(resp) - 1 && !memchr(resp, '\n', got)) {
		struct pollfd pfd = { .fd = s, .events = POLLIN };
		ssize_t n;
		uint64_t now = monotonic_us();
		if (now >= end || poll(&pfd, 1, (int)((end - now) / 1000) + 1) <= 0)
			return false;
		n = recv(s, resp + got, sizeof(resp) - 1 - got, 0);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			break;
		got += n > 0 ? (size_t)n : 0;
	}
	resp[got] = '\0';
	if (sscanf(resp, "HTTP/%*1[0-9].%*1[0-9] %3d", code) != 1)
		return false;
	return *code >= 200 && *code < 400;
}

bool service_wants_wait(const struct nsrun_config *cfg)
{
	return cfg->service.wait_log || cfg->service.wait_http_port || cfg->service.wait_healthy;
}

int service_wait(const struct nsrun_config *cfg, int dir_fd, const struct service_state *st, uint64_t deadline_us,
		 char *why, size_t whylen)
{
	const struct nsrun_service *s = &cfg->service;
	bool log_ok = !s->wait_log, http_done = !s->wait_http_port, healthy = !s->wait_healthy;
	const struct nsrun_publish *hp = NULL;
	regex_t re;
	off_t pos = 0;
	size_t llen = 0;
	int code = 0, rc;
	_cleanup_free_ char *line = malloc(LINE_MAX_KEPT);

	if (!line || (s->wait_log && regcomp(&re, s->wait_log, REG_EXTENDED | REG_NOSUB) != 0)) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < st->n_ports; i++)
		if (st->ports[i].container_port == s->wait_http_port)
			hp = &st->ports[i];
	for (;;) {
		struct service_state now;
		if (!log_ok)
			log_ok = log_matched(dir_fd, &re, &pos, line, &llen);
		if (!http_done && hp)
			http_done = http_ok(hp->host_ip, hp->host_port, s->wait_http_path, &code);
		if (!healthy && state_read(dir_fd, &now) == 0) {
			healthy = strcmp(now.health.status, "healthy") == 0;
			if (strcmp(now.health.status, "unhealthy") == 0) {
				snprintf(why, whylen, "its health check failed %lld times in a row (exit status %lld: %.120s)",
					 now.health.failing_streak, now.health.exit_code, now.health.output);
				rc = -1;
				break;
			}
		}
		if (log_ok && http_done && healthy) {
			rc = 1;
			break;
		}
		if (!state_is_alive(dir_fd)) {
			snprintf(why, whylen, "it ended");
			rc = -1;
			break;
		}
		if (monotonic_us() >= deadline_us) {
			if (!log_ok)
				snprintf(why, whylen, "no line of its log matched --wait-log \"%s\"", s->wait_log);
			else if (!http_done && code)
				snprintf(why, whylen, "GET %s on port %u answered %d (--wait-http)", s->wait_http_path,
					 (unsigned)s->wait_http_port, code);
			else if (!http_done)
				snprintf(why, whylen, "GET %s on port %u had no HTTP answer (--wait-http)",
					 s->wait_http_path, (unsigned)s->wait_http_port);
			else
				snprintf(why, whylen, "its health check has not passed (--wait-healthy)");
			rc = 0;
			break;
		}
		sleep_us(WAIT_POLL_US);
	}
	if (s->wait_log)
		regfree(&re);
	return rc;
}
