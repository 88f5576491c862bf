/* relay.h - what the payload gets for fds 0, 1 and 2 (issue 17, kind 4).
 *
 * The caller's stdio is never handed over as it is: reopened through
 * /proc/self/fd/N a pipe reads back what parallel runs wrote to it, an append-mode
 * log is truncated, a regular file is written; a directory on stdin walks the host's
 * tree; a terminal gives a background run what the user types; a socket takes
 * input and fds.  So, as docker does, each standard stream of the payload is a
 * pipe of nsrun's own, and the supervisor copies between it and the caller's fd.
 * Only the harmless devices (/dev/null, zero, full, random, urandom) are passed
 * as they are (no copy: a plain run with them costs nothing more), and a directory
 * on stdin becomes /dev/null.  The copy never blocks the supervise loop: the
 * payload's ends are nonblocking, a write to the caller's fd is tried only when
 * poll(2) says it takes data and is cut short by a timer (ITIMER_REAL, SIGALRM
 * without SA_RESTART) or MSG_DONTWAIT for a socket, so a stalled reader of nsrun's
 * output stops the payload (its pipe fills), never --timeout.  A terminal on stdin
 * is read only while nsrun is in its foreground process group.
 */
#ifndef NSRUN_RELAY_H
#define NSRUN_RELAY_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "log_index.h"

#define RELAY_BUF 65536
#define RELAY_POLLFDS 6         /* pollfds relay_poll fills: src and dst of each stream */

struct relay_stream {
	int src;                /* read from; -1 once at its end */
	int dst;                /* written to; -1 once given up */
	bool src_ours;          /* src/dst are nsrun's own (closed by it); the caller's are not */
	bool dst_ours;
	bool dst_socket;        /* send(2) with MSG_DONTWAIT */
	bool dst_regular;       /* a regular file: a write cannot stall */
	bool src_tty;           /* the caller's terminal: read only in the foreground */
	bool src_regular;       /* a regular file stdin: what the payload did not read is given back */
	char *buf;              /* RELAY_BUF bytes */
	size_t off, len;        /* pending: buf[off, len) */
	int64_t read_ns;        /* when buf was read (CLOCK_REALTIME): the log index's time */
	bool limited;           /* a service's log: at most log->limit bytes, then it starts again */
	unsigned char log_stream; /* 1, 2: its writes to the service's log are indexed (0: not) */
	struct relay_log *log;  /* the service's log it writes (NULL: none) */
};

/* A service's log, which fds 1 and 2 share: its bound and its index (log_index.h). */
struct relay_log {
	uint64_t limit;                 /* bytes (UINT64_MAX: none; 0 keeps nothing) */
	uint64_t written;               /* since it (re)started */
	uint64_t dropped;
	struct log_index_writer index;  /* .fd -1: none */
};

struct stdio_relay {
	struct relay_stream s[3];       /* 0: caller -> payload; 1, 2: payload -> caller */
	int payload[3];                 /* the payload's fds 0, 1, 2 (-1: nsrun's own, passed as is) */
	bool payload_ours[3];           /* payload[i] was made here: closed after clone */
	int own[3];                     /* our ends to close in the container (-1: none) */
	bool handlers;                  /* SIGALRM and SIGPIPE handlers installed */
	struct relay_log log;           /* a service's (used when log_on) */
	bool log_on;
	struct sigaction saved_alrm, saved_pipe;
};

/* Decides what the payload gets and makes the pipes.  in_fd is the stdin to give
 * (--stdin's fd, or 0); capture: fds 1 and 2 are captured by the caller (only stdin
 * is decided here); tty: -t, nothing here (the pty is the payload's stdio);
 * log: a service's log, which fds 1 and 2 are (NULL: not a service): its bound
 * and its index's fd (-1: none; not closed here; with one, stdout and stderr
 * get a pipe each, so each write is indexed with its stream).  Returns 0 or -1
 * with err. */
int relay_prepare(struct stdio_relay *r, int in_fd, bool capture, bool tty, const struct relay_log *log,
		  struct nsrun_error *err);

/* -t: copy from src (a dup of the pty master, taken over) to our stdout, nonblocking
 * (a service's log: indexed as stdout, not bounded). */
int relay_add_pty_output(struct stdio_relay *r, int src, struct nsrun_error *err);

/* After clone: the payload's ends are the container's now; ours go. */
void relay_close_payload_ends(struct stdio_relay *r);

/* Fills pfd[0..RELAY_POLLFDS) and lowers *timeout_ms (-1: none) when a background
 * terminal must be looked at again. */
void relay_poll(struct stdio_relay *r, struct pollfd *pfd, int *timeout_ms);

/* Copies what pfd says can move.  A stream whose source ended or whose
 * destination went away has src -1 afterwards. */
void relay_handle(struct stdio_relay *r, const struct pollfd *pfd);

/* True while payload output is still to be read or written to the caller. */
bool relay_busy(const struct stdio_relay *r);

/* Gives up what is left of the output (a reader that stalled past the deadline). */
void relay_abandon(struct stdio_relay *r);

/* Ends every copy, gives back to a regular-file stdin what the payload did not
 * read (its offset moves back), restores the signal handlers; idempotent. */
void relay_close(struct stdio_relay *r);

/* -t: our stdin on its way to a pty's master (nsrun's run and nsrun exec). */
struct pty_input {
	char buf[4096];                 /* bytes the master has not taken yet */
	size_t len;
	bool open;                      /* our stdin is still copied to the master */
};

/* -t: reads our stdin into in (stdin_ready: poll(2) said it is readable, and in
 * is empty), then writes to master (nonblocking) as much as it takes now.  At
 * the end of our stdin, in->open goes false and, with send_eof (a stdin that is
 * no terminal, whose ^D the pty never saw), the pty gets its EOF character
 * (termios(3) VEOF, ^D).  A write error other than EAGAIN drops what is left. */
void pty_input_pump(struct pty_input *in, int master, bool stdin_ready, bool send_eof);

#endif
