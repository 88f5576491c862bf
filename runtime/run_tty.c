/* run_tty.c - a run's terminal (-t): our terminal raw and restored, our stdin
 * to the container's pty, and OCI's --console-socket, which takes the pty's
 * master instead.  See run_internal.h. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include "cleanup.h"
#include "run_internal.h"

/* -t: our terminal goes raw (cfmakeraw(3)) so every key, ^C included, reaches the
 * container's pty, whose line discipline then does what a terminal does; the mode is
 * restored by tty_restore on every way out (run_teardown).  Returns 0 or -1. */
int tty_start(struct nsrun_run *run, struct nsrun_error *err)
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

void tty_restore(struct nsrun_run *run)
{
	if (run->termios_saved)
		tcsetattr(STDIN_FILENO, TCSADRAIN, &run->saved_termios);
	run->termios_saved = false;
	if (run->sigpipe_saved)
		sigaction(SIGPIPE, &run->saved_sigpipe, NULL);
	run->sigpipe_saved = false;
}

/* Sends the pty master fd to the AF_UNIX stream socket at path with SCM_RIGHTS
 * (unix(7)), its path as the data, as runc does for --console-socket.  Returns 0
 * or -1 with err. */
int tty_send_console(const char *path, int fd, struct nsrun_error *err)
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
