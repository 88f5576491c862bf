/* run_tty.c - a run's terminal (-t): our terminal raw and restored, our stdin
 * to the container's pty, and OCI's --console-socket, which takes the pty's
 * master instead.  See run_internal.h. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <termios.h>
#include <unistd.h>

#include "run_internal.h"
#include "sys.h"

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

/* Sends the pty master fd to the AF_UNIX stream socket at path, as runc does for
 * --console-socket (send_console_fd, sys.h).  Returns 0 or -1 with err. */
int tty_send_console(const char *path, int fd, struct nsrun_error *err)
{
	if (send_console_fd(path, fd) == 0)
		return 0;
	if (errno == ENAMETOOLONG)
		return error_set_stage(err, STAGE_SUPERVISE, errno, "--console-socket \"%s\"", path);
	return error_set_stage(err, STAGE_SUPERVISE, errno, "--console-socket \"%s\": send the terminal", path);
}
