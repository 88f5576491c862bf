/* service_stdin.c - see service_stdin.h. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include "cleanup.h"
#include "service_stdin.h"
#include "sys.h"
#include "util.h"

#define KEEPER_CONNS 16         /* attached clients at once */
#define LINE_MAX_LEN 64

struct conn {
	int fd;
	bool is_stdin;          /* past its request line: bytes go to the payload */
	size_t len;             /* of the request line read so far */
	char line[LINE_MAX_LEN];
};

/* A unix socket address for NAME in dir_fd, through /proc/self/fd (short
 * whatever the directory's path).  Returns its length. */
static socklen_t sock_addr(struct sockaddr_un *a, int dir_fd)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	snprintf(a->sun_path, sizeof(a->sun_path), "/proc/self/fd/%d/%s", dir_fd, STDIN_SOCK);
	return (socklen_t)sizeof(*a);
}

/* The request line of c is complete: act on it.  Returns false to drop c. */
static bool keeper_request(struct conn *c, int out, bool open_stdin, bool tty)
{
	unsigned rows, cols;
	char extra;

	if (strcmp(c->line, "stdin") == 0 && open_stdin && out >= 0) {
		c->is_stdin = true;
		return true;
	}
	if (tty && sscanf(c->line, "resize %u %u%c", &rows, &cols, &extra) == 2 && rows && cols && rows < 65536 &&
	    cols < 65536) {
		struct winsize ws = { .ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols };
		ioctl(out, TIOCSWINSZ, &ws); /* the slave's session (the monitor) gets SIGWINCH */
	}
	return false;
}

/* The end of a stdin client: with once, the payload's EOF (a pipe is closed;
 * a pty gets its EOF character, the line discipline inside does the rest). */
static void keeper_stdin_end(int *out, bool tty, bool once)
{
	if (!once || *out < 0)
		return;
	if (tty) {
		(void)!write(*out, "\x04", 1);
		return;
	}
	close(*out);
	*out = -1;
}

/* The keeper: serves lfd until the monitor is gone.  Writes to out block: a
 * payload that reads nothing holds its clients back, as a full pipe would. */
static void __attribute__((noreturn)) keeper_main(int lfd, int out, bool open_stdin, bool tty, bool once)
{
	struct conn c[KEEPER_CONNS];
	char buf[65536];

	for (size_t i = 0; i < KEEPER_CONNS; i++)
		c[i].fd = -1;
	signal(SIGPIPE, SIG_IGN);
	for (;;) {
		struct pollfd p[KEEPER_CONNS + 1];
		for (size_t i = 0; i < KEEPER_CONNS; i++)
			p[i] = (struct pollfd){ .fd = c[i].fd, .events = POLLIN };
		p[KEEPER_CONNS] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		if (poll(p, KEEPER_CONNS + 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		if (p[KEEPER_CONNS].revents & POLLIN) {
			int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
			size_t i = 0;
			while (fd >= 0 && i < KEEPER_CONNS && c[i].fd >= 0)
				i++;
			if (fd >= 0 && i == KEEPER_CONNS)
				close(fd);
			else if (fd >= 0)
				c[i] = (struct conn){ .fd = fd };
		}
		for (size_t i = 0; i < KEEPER_CONNS; i++) {
			ssize_t n;
			if (c[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			n = read(c[i].fd, buf, c[i].is_stdin ? sizeof(buf) : 1);
			if (n < 0 && errno == EINTR)
				continue;
			if (n > 0 && c[i].is_stdin) {
				if (out >= 0 && write_all(out, buf, (size_t)n) < 0 && !tty) {
					close(out); /* it closed its stdin: the rest goes nowhere */
					out = -1;
				}
				continue;
			}
			if (n > 0 && buf[0] != '\n' && c[i].len < LINE_MAX_LEN - 1) {
				c[i].line[c[i].len++] = buf[0];
				continue;
			}
			if (n > 0 && buf[0] == '\n') {
				c[i].line[c[i].len] = '\0';
				if (keeper_request(&c[i], out, open_stdin, tty))
					continue;
			} else if (c[i].is_stdin) {
				keeper_stdin_end(&out, tty, once);
			}
			close(c[i].fd);
			c[i].fd = -1;
		}
	}
}

int service_stdin_start(int dir_fd, bool open_stdin, bool tty, bool once, struct nsrun_error *err)
{
	_cleanup_close_ int lfd = -1, out = -1, in = -1;
	struct sockaddr_un a;
	socklen_t alen = sock_addr(&a, dir_fd);
	pid_t monitor = getpid(), pid;

	if ((lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return error_set(err, errno, "socket for the service's stdin");
	unlinkat(dir_fd, STDIN_SOCK, 0);
	if (bind(lfd, (struct sockaddr *)&a, alen) < 0 || listen(lfd, KEEPER_CONNS) < 0)
		return error_set(err, errno, "listen on %s in the service's directory", STDIN_SOCK);
	if (tty) {
		struct termios t;
		char name[64];
		if ((out = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0 || grantpt(out) < 0 || unlockpt(out) < 0 ||
		    ptsname_r(out, name, sizeof(name)) != 0 || (in = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0)
			return error_set(err, errno, "open a pty for the service's terminal (/dev/ptmx)");
		/* raw: the container's pty does the line discipline (with ISIG left on, a
		 * client's ^\ would signal the monitor's side: a failure is an error) */
		if (tcgetattr(in, &t) < 0)
			return error_set(err, errno, "read the service's pty's modes (tcgetattr)");
		cfmakeraw(&t);
		if (tcsetattr(in, TCSANOW, &t) < 0)
			return error_set(err, errno, "make the service's pty raw (tcsetattr)");
	} else {
		int p[2];
		if (pipe2(p, O_CLOEXEC) < 0)
			return error_set(err, errno, "pipe for the service's stdin");
		in = p[0];
		out = p[1];
	}
	pid = fork();
	if (pid < 0)
		return error_set(err, errno, "fork the keeper of the service's stdin");
	if (pid == 0) {
		int keep[2];
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (getppid() != monitor)
			_exit(0);
		/* nothing of the monitor's (its lock above all: the service ends with it) */
		keep[0] = lfd;
		keep[1] = out;
		close(in);
		close_fds_except(keep, 2);
		keeper_main(lfd, open_stdin ? out : (tty ? out : -1), open_stdin, tty, once);
	}
	return steal_fd(&in);
}

int service_stdin_connect(int dir_fd, const char *request)
{
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un a;
	socklen_t alen = sock_addr(&a, dir_fd);

	if (fd < 0 || connect(fd, (struct sockaddr *)&a, alen) < 0 || write_all(fd, request, strlen(request)) < 0)
		return -1;
	return steal_fd(&fd);
}
