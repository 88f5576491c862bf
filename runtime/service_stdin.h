/* service_stdin.h - the stdin of a detached service (`nsrun -d -i`, `-d -t`, and
 * nsrun api's OpenStdin/Tty containers).  A service has no caller to read from, so
 * its monitor's stdin comes from a keeper process it forks: the keeper listens on
 * stdin.sock in the service's state directory (0700: only its owner reaches it)
 * and writes what attached clients send into a pipe, or with -t into a host-side
 * pty, that is the monitor's fd 0 (the run relays it to the payload as for any
 * run).  Each connection starts with one request line:
 *   "stdin\n"        then bytes for the payload; the end of the connection is the
 *                    payload's EOF if the service was made with --stdin-once
 *                    (Docker's StdinOnce), else the next attach goes on
 *   "resize H W\n"   (-t) the pty's size, rows and columns (its SIGWINCH reaches
 *                    the monitor, which sets it on the container's pty)
 * The keeper dies with the monitor (PR_SET_PDEATHSIG); the socket goes with the
 * state directory. */
#ifndef NSRUN_SERVICE_STDIN_H
#define NSRUN_SERVICE_STDIN_H

#include <stdbool.h>

#include "error.h"

#define STDIN_SOCK "stdin.sock"

/* In the monitor, before it runs the container: forks the keeper of dir_fd's
 * stdin.sock (open_stdin: clients may write; tty: a pty; once: the first
 * client's end is EOF).  Returns the fd to make the monitor's stdin (with tty a
 * pty's slave, to become its controlling terminal), or -1 with err. */
int service_stdin_start(int dir_fd, bool open_stdin, bool tty, bool once, struct nsrun_error *err);

/* Connects to the keeper of the service directory dir_fd and sends request (a
 * line, as above).  Returns the socket (O_CLOEXEC) or -1 (errno: ENOENT when the
 * service has no keeper). */
int service_stdin_connect(int dir_fd, const char *request);

#endif
