/* relay.c - see relay.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <termios.h>
#include <unistd.h>

#include "relay.h"
#include "sys.h"

#define WRITE_GUARD_US 20000    /* the longest a write to the caller's fd may block the loop */
#define BACKGROUND_POLL_MS 100  /* how often a background run looks whether it is in the foreground again */

static void on_alarm(int sig)
{
	(void)sig; /* only there to interrupt a write (no SA_RESTART) */
}

/* /dev/null, zero, full, random, urandom (devices.txt: major 1): nothing to reach through them */
static bool harmless_device(const struct stat *st)
{
	unsigned m = minor(st->st_rdev);

	return S_ISCHR(st->st_mode) && major(st->st_rdev) == 1 && (m == 3 || m == 5 || m == 7 || m == 8 || m == 9);
}

static int stream_buf(struct relay_stream *s, struct nsrun_error *err)
{
	s->buf = malloc(RELAY_BUF);
	return s->buf ? 0 : error_set(err, ENOMEM, "stdio relay buffer");
}

static int setup_in(struct stdio_relay *r, int in_fd, struct nsrun_error *err)
{
	struct relay_stream *s = &r->s[0];
	struct stat st;
	int p[2];

	if (fstat(in_fd, &st) < 0)
		return error_set(err, errno, "stdin");
	if (harmless_device(&st)) {
		r->payload[0] = in_fd == 0 ? -1 : in_fd;
		return 0;
	}
	if (S_ISDIR(st.st_mode)) {
		/* reading a directory gives nothing; its fd would give the host's tree */
		r->payload[0] = open("/dev/null", O_RDONLY | O_CLOEXEC | O_NOCTTY);
		r->payload_ours[0] = true;
		return r->payload[0] < 0 ? error_set(err, errno, "open /dev/null") : 0;
	}
	if (pipe2(p, O_CLOEXEC) < 0)
		return error_set(err, errno, "pipe for the payload's stdin");
	r->payload[0] = p[0];
	r->payload_ours[0] = true;
	s->dst = r->own[0] = p[1];
	s->dst_ours = true;
	s->src = in_fd;
	s->src_tty = isatty(in_fd);
	s->src_regular = S_ISREG(st.st_mode);
	if (fd_set_nonblock(p[1], true) < 0)
		return error_set(err, errno, "make the stdin pipe nonblocking");
	return stream_buf(s, err);
}

static int setup_out(struct stdio_relay *r, int fd, struct nsrun_error *err)
{
	struct relay_stream *s = &r->s[fd];
	struct stat st, st1;
	int p[2];

	if (fstat(fd, &st) < 0)
		return error_set(err, errno, "fd %d", fd);
	if (harmless_device(&st))
		return 0;
	/* 2>&1: one pipe for both keeps their order (not a log whose index tells them apart) */
	if (fd == 2 && r->s[1].src >= 0 && !(r->log_on && r->log.index.fd >= 0) && fstat(1, &st1) == 0 &&
	    st1.st_dev == st.st_dev && st1.st_ino == st.st_ino && st1.st_rdev == st.st_rdev) {
		r->payload[2] = r->payload[1];
		return 0;
	}
	if (pipe2(p, O_CLOEXEC) < 0)
		return error_set(err, errno, "pipe for the payload's fd %d", fd);
	r->payload[fd] = p[1];
	r->payload_ours[fd] = true;
	s->src = r->own[fd] = p[0];
	s->src_ours = true;
	s->dst = fd;
	s->dst_socket = S_ISSOCK(st.st_mode);
	s->dst_regular = S_ISREG(st.st_mode);
	if (s->dst_regular && r->log_on) {
		s->log = &r->log;
		s->limited = true;
		s->log_stream = (unsigned char)fd;
	}
	if (fd_set_nonblock(p[0], true) < 0)
		return error_set(err, errno, "make the output pipe nonblocking");
	return stream_buf(s, err);
}

static int install_handlers(struct stdio_relay *r, struct nsrun_error *err)
{
	struct sigaction alrm = { .sa_handler = on_alarm }, ign = { .sa_handler = SIG_IGN };

	if (r->handlers)
		return 0;
	sigemptyset(&alrm.sa_mask);
	/* a write to a reader that went away says EPIPE instead of killing nsrun */
	if (sigaction(SIGALRM, &alrm, &r->saved_alrm) < 0 || sigaction(SIGPIPE, &ign, &r->saved_pipe) < 0)
		return error_set(err, errno, "sigaction");
	r->handlers = true;
	return 0;
}

int relay_prepare(struct stdio_relay *r, int in_fd, bool capture, bool tty, const struct relay_log *log,
		  struct nsrun_error *err)
{
	memset(r, 0, sizeof(*r));
	for (int i = 0; i < 3; i++) {
		r->s[i].src = r->s[i].dst = -1;
		r->payload[i] = r->own[i] = -1;
	}
	r->log.index.fd = -1;
	if (log) {
		r->log_on = true;
		r->log.limit = log->limit;
		r->log.index.fd = log->index.fd;
		/* an index that cannot be written is no index: the log reads as one stream */
		if (log_index_reset(&r->log.index) < 0)
			r->log.index.len = 0;
	}
	if (tty)
		return 0;
	if (setup_in(r, in_fd, err) < 0)
		return -1;
	if (!capture && (setup_out(r, 1, err) < 0 || setup_out(r, 2, err) < 0))
		return -1;
	for (int i = 0; i < 3; i++)
		if (r->s[i].buf)
			return install_handlers(r, err);
	return 0;
}

int relay_add_pty_output(struct stdio_relay *r, int src, struct nsrun_error *err)
{
	struct relay_stream *s = &r->s[1];
	struct stat st;

	if (fstat(1, &st) < 0)
		return error_set(err, errno, "stdout");
	s->src = src;
	s->src_ours = true;
	s->dst = 1;
	s->dst_socket = S_ISSOCK(st.st_mode);
	s->dst_regular = S_ISREG(st.st_mode);
	if (s->dst_regular && r->log_on) {
		/* a -t service's log: bounded as a pipe's is (setup_out) */
		s->log = &r->log;
		s->limited = true;
		s->log_stream = 1;
	}
	if (!s->buf && stream_buf(s, err) < 0)
		return -1;
	return install_handlers(r, err);
}

void relay_close_payload_ends(struct stdio_relay *r)
{
	for (int i = 0; i < 3; i++) {
		if (r->payload_ours[i] && r->payload[i] >= 0)
			close(r->payload[i]);
		r->payload_ours[i] = false;
	}
	r->payload[0] = r->payload[1] = r->payload[2] = -1;
}

/* May a terminal be read now?  Not while nsrun is in the background: the keys are
 * the foreground program's (and the read would stop nsrun with SIGTTIN). */
static bool in_foreground(int fd)
{
	pid_t pg = tcgetpgrp(fd);

	return pg < 0 || pg == getpgrp();
}

void relay_poll(struct stdio_relay *r, struct pollfd *pfd, int *timeout_ms)
{
	for (int i = 0; i < 3; i++) {
		struct relay_stream *s = &r->s[i];
		bool want = s->src >= 0 && s->dst >= 0 && s->off == s->len;
		if (want && s->src_tty && !in_foreground(s->src)) {
			want = false;
			if (*timeout_ms < 0 || *timeout_ms > BACKGROUND_POLL_MS)
				*timeout_ms = BACKGROUND_POLL_MS;
		}
		pfd[2 * i] = (struct pollfd){ .fd = want ? s->src : -1, .events = POLLIN };
		pfd[2 * i + 1] = (struct pollfd){ .fd = s->off < s->len && s->dst >= 0 ? s->dst : -1, .events = POLLOUT };
	}
}

/* A regular-file stdin gets back what the payload did not read: its offset moves
 * back over what is still in our buffer and in the pipe (FIONREAD), as if the
 * payload had read the file itself. */
static void give_back(struct relay_stream *s)
{
	int in_pipe = 0;
	off_t unread = (off_t)(s->len - s->off);

	if (!s->src_regular || s->src < 0)
		return;
	if (s->dst >= 0 && ioctl(s->dst, FIONREAD, &in_pipe) == 0 && in_pipe > 0)
		unread += in_pipe;
	if (unread > 0)
		lseek(s->src, -unread, SEEK_CUR);
	s->src_regular = false;
}

static void close_src(struct relay_stream *s)
{
	if (s->src_ours && s->src >= 0)
		close(s->src);
	s->src = -1;
}

static void close_dst(struct relay_stream *s)
{
	if (s->dst_ours && s->dst >= 0)
		close(s->dst);
	s->dst = -1;
}

/* The other side is gone: what is pending is dropped; the payload's writes to its
 * end now fail with EPIPE, as they would have on the caller's fd. */
static void give_up(struct relay_stream *s)
{
	give_back(s);
	close_src(s);
	close_dst(s);
	s->off = s->len = 0;
}

/* A service's log past its limit starts again, saying how much was dropped; its
 * index starts again first (a reader then never takes old records for new bytes). */
static void bound_log(struct relay_stream *s)
{
	struct relay_log *log = s->log;
	char note[160];
	size_t pending = s->len - s->off;
	int n;

	if (!s->limited || log->written + pending <= log->limit)
		return;
	if (pending > log->limit) {
		log->dropped += pending - log->limit;
		s->off = s->len - log->limit;
	}
	if (log->index.len && log_index_reset(&log->index) < 0)
		log->index.len = 0;
	if (ftruncate(s->dst, 0) < 0)
		return;
	log->dropped += log->written;
	n = snprintf(note, sizeof(note), "nsrun: the log reached --output-limit (%llu bytes): %llu bytes before "
		     "this line were dropped\n", (unsigned long long)log->limit, (unsigned long long)log->dropped);
	log->written = 0; /* the note does not count against the limit */
	if (n > 0) {
		ssize_t w = write(s->dst, note, (size_t)n);
		(void)w; /* a log that takes nothing more is the next write's failure */
	}
}

/* The record of the n bytes just written to the service's log (log_index.h): with
 * O_APPEND the file offset is where they end.  An index that fails is given up,
 * not the log. */
static void index_write(struct relay_stream *s, size_t n)
{
	off_t end = lseek(s->dst, 0, SEEK_CUR);

	if (end < (off_t)n ||
	    log_index_append(&s->log->index, (uint64_t)end, n, s->log_stream, s->read_ns) < 0)
		s->log->index.len = 0;
}

static ssize_t guarded_write(struct relay_stream *s)
{
	const struct itimerval guard = { .it_value = { .tv_usec = WRITE_GUARD_US } }, off = { 0 };
	size_t n = s->len - s->off;
	ssize_t w;

	if (s->dst_socket)
		return send(s->dst, s->buf + s->off, n, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (s->dst_ours || s->dst_regular)
		return write(s->dst, s->buf + s->off, n);
	/* a pipe, terminal or device of the caller's: its O_NONBLOCK is shared with
	 * every holder of the description (the shell), so it is not ours to set */
	setitimer(ITIMER_REAL, &guard, NULL);
	w = write(s->dst, s->buf + s->off, n);
	setitimer(ITIMER_REAL, &off, NULL);
	return w;
}

static void flush(struct relay_stream *s, bool is_stdin)
{
	while (s->dst >= 0 && s->off < s->len) {
		size_t want;
		ssize_t n;

		bound_log(s);
		if (s->limited && s->log->limit == 0) {
			s->log->dropped += s->len - s->off;
			s->off = s->len;
			break;
		}
		want = s->len - s->off;
		n = guarded_write(s);
		if (n < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				give_up(s);
			break;
		}
		s->off += (size_t)n;
		if (s->limited)
			s->log->written += (uint64_t)n;
		if (s->log_stream && n > 0)
			index_write(s, (size_t)n);
		if ((size_t)n < want)
			break;
	}
	if (s->off == s->len)
		s->off = s->len = 0;
	/* the end of stdin reaches the payload once all of it did */
	if (is_stdin && s->src < 0 && s->len == 0)
		close_dst(s);
}

/* Reads one buffer; at the end of src (or an error: EIO of a pty) closes it. */
static void fill(struct relay_stream *s)
{
	ssize_t n = read(s->src, s->buf, RELAY_BUF);

	if (n > 0) {
		s->off = 0;
		s->len = (size_t)n;
		if (s->log_stream)
			s->read_ns = log_index_now_ns();
	} else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
		close_src(s);
	}
}

void relay_handle(struct stdio_relay *r, const struct pollfd *pfd)
{
	for (int i = 0; i < 3; i++) {
		struct relay_stream *s = &r->s[i];
		bool got = false;
		if (s->src >= 0 && (pfd[2 * i].revents & (POLLIN | POLLHUP | POLLERR))) {
			fill(s);
			got = s->len > 0;
		}
		/* our own pipe end and a file take it now; anything else once poll says so */
		if ((got && (s->dst_ours || s->dst_regular)) || (pfd[2 * i + 1].revents & (POLLOUT | POLLERR | POLLHUP)) ||
		    (i == 0 && s->src < 0 && s->len == 0))
			flush(s, i == 0);
	}
}

bool relay_busy(const struct stdio_relay *r)
{
	for (int i = 1; i < 3; i++)
		if (r->s[i].src >= 0 || (r->s[i].off < r->s[i].len && r->s[i].dst >= 0))
			return true;
	return false;
}

void relay_abandon(struct stdio_relay *r)
{
	give_up(&r->s[1]);
	give_up(&r->s[2]);
}

void relay_close(struct stdio_relay *r)
{
	for (int i = 0; i < 3; i++) {
		give_up(&r->s[i]);
		free(r->s[i].buf);
		r->s[i].buf = NULL;
	}
	relay_close_payload_ends(r);
	if (r->handlers) {
		sigaction(SIGALRM, &r->saved_alrm, NULL);
		sigaction(SIGPIPE, &r->saved_pipe, NULL);
	}
	r->handlers = false;
}

void pty_input_pump(struct pty_input *in, int master, bool stdin_ready, bool send_eof)
{
	if (stdin_ready && in->len == 0) {
		ssize_t n = read(STDIN_FILENO, in->buf, sizeof(in->buf));
		if (n > 0) {
			in->len = (size_t)n;
		} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
			in->open = false;
			if (send_eof) {
				in->buf[0] = 0x04;
				in->len = 1;
			}
		}
	}
	if (in->len && master >= 0) {
		ssize_t n = write(master, in->buf, in->len);
		if (n > 0) {
			memmove(in->buf, in->buf + n, in->len - (size_t)n);
			in->len -= (size_t)n;
		} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
			in->len = 0;
		}
	}
}
