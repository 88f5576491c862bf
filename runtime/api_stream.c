/* api_stream.c - the container endpoints that stream its log: logs (with follow;
 * streams and times from the log's index, log_index.h) and attach (on an
 * upgraded connection, with the service's stdin), and resize. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api_internal.h"
#include "cleanup.h"
#include "log_index.h"
#include "service_stdin.h"
#include "sys.h"

#define POLL_MS 100
#define LOG_BLOCK 65536

/* ---- logs ---- */

#define LOG_SETTLE_NS 500000000LL       /* bytes no record covers, this old: nsrun's own (log_index.h) */
#define TS_MAX 40                       /* "2026-12-02T16:10:00.123456789Z " and room */

struct log_stream {
	struct log_reader rd;   /* the log and its index (log_index.h) */
	int dir_fd;             /* the service's directory: its lock says whether it runs */
	bool follow;
	bool last;              /* the service ended: one more read, then the end */
	bool ended;             /* past until: the end */
	bool out, err;          /* the streams asked */
	unsigned char stream;   /* a log without index: the one stream it is sent as */
	bool raw;               /* a TTY's: no frames, as Docker's */
	bool timestamps;        /* each line after its time, as Docker's (RFC 3339, nanoseconds) */
	bool line_start[3];     /* stream 1, 2: the next byte starts a line */
	int64_t since_ns;       /* Docker's since and until: 0 none */
	int64_t until_ns;
	struct MHD_Connection *conn;
	char head[1024];        /* nsrun's line before the log (create's warning), on stderr; "" */
	size_t head_len;
};

/* Docker's timestamp for since and until: Unix seconds, with a fraction of up
 * to 9 digits (timetypes.ParseTimestamps), at most year 2262.  Returns false for
 * anything else. */
static bool parse_unix_ns(const char *s, int64_t *ns)
{
	long long sec = 0, frac = 0;
	int digits = 0;
	const char *p = s;

	if (!*p)
		return false;
	for (; *p >= '0' && *p <= '9'; p++) {
		sec = sec * 10 + (*p - '0');
		if (sec >= INT64_MAX / 1000000000) /* past 2262: not a time of a log */
			return false;
	}
	if (p == s || (*p && *p != '.'))
		return false;
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9' && digits < 9; p++, digits++)
			frac = frac * 10 + (*p - '0');
		if (*p || digits == 0)
			return false;
		for (; digits < 9; digits++)
			frac *= 10;
	}
	*ns = (int64_t)sec * 1000000000 + frac;
	return true;
}

/* "2026-12-02T16:10:00.123456789Z " (UTC, Docker's RFC3339NanoFixed) into out. */
static size_t format_time(int64_t ns, char out[TS_MAX])
{
	time_t sec = (time_t)(ns / 1000000000);
	struct tm tm;
	size_t n;

	if (!gmtime_r(&sec, &tm) || !(n = strftime(out, TS_MAX, "%Y-%m-%dT%H:%M:%S", &tm)))
		return 0;
	return n + (size_t)snprintf(out + n, TS_MAX - n, ".%09lldZ ", (long long)(ns % 1000000000));
}

/* May bytes past the index's last record be given as nsrun's own?  When the
 * service ended, or the log has not changed for LOG_SETTLE_NS (the relay writes
 * its record right after its bytes). */
static bool log_settled(const struct log_reader *rd, int dir_fd)
{
	struct stat st;

	if (rd->index_fd < 0 || !state_is_alive(dir_fd) || fstat(rd->log_fd, &st) < 0)
		return true;
	return log_index_now_ns() - ((int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec) >= LOG_SETTLE_NS;
}

/* The next chunk; bytes past the last record only once settled.  Returns as log_reader_next. */
static int log_next(struct log_stream *ls, uint64_t max, struct log_chunk *c)
{
	int r = log_reader_next(&ls->rd, false, max, c);
	struct stat st;

	if (r != 0 || fstat(ls->rd.log_fd, &st) < 0 || (uint64_t)st.st_size <= ls->rd.pos)
		return r;
	/* bytes no record covers yet: nsrun's message, or the relay's write an instant
	 * before its record; without follow they are waited for (LOG_SETTLE_NS at most) */
	for (;;) {
		if (log_settled(&ls->rd, ls->dir_fd))
			return log_reader_next(&ls->rd, true, max, c);
		if (ls->follow)
			return 0;
		usleep(20000);
		if ((r = log_reader_next(&ls->rd, false, max, c)) != 0)
			return r;
	}
}

/* One frame (or raw bytes) of c into buf (room bytes): with timestamps up to the
 * end of a line.  Returns the bytes put there (0: no room), -1 on a read error;
 * *taken: the chunk's bytes used (skipped ones too). */
static ssize_t log_frame(struct log_stream *ls, const struct log_chunk *c, char *buf, size_t room, uint64_t *taken)
{
	unsigned char stream = c->stream ? c->stream : ls->stream;
	bool timed = ls->timestamps && c->stream && ls->line_start[stream];
	size_t hdr = ls->raw ? 0 : 8, pre = 0, n;
	char ts[TS_MAX] = "";
	ssize_t got;

	*taken = 0;
	if ((!ls->raw && !(stream == 1 ? ls->out : ls->err)) || (c->stream && ls->since_ns && c->time_ns < ls->since_ns)) {
		*taken = c->len;
		return 0;
	}
	if (timed)
		pre = format_time(c->time_ns, ts);
	if (room <= hdr + pre)
		return 0;
	n = room - hdr - pre < c->len ? room - hdr - pre : (size_t)c->len;
	got = pread(ls->rd.log_fd, buf + hdr + pre, n, (off_t)c->offset);
	if (got < 0)
		return -1;
	if (got == 0) /* the log started again under us: the reader sees it next */
		return 0;
	n = (size_t)got;
	if (ls->timestamps && c->stream) {
		char *nl = memchr(buf + hdr + pre, '\n', n);
		if (nl)
			n = (size_t)(nl - (buf + hdr + pre)) + 1;
		ls->line_start[stream] = buf[hdr + pre + n - 1] == '\n';
	}
	memcpy(buf + hdr, ts, pre);
	if (!ls->raw)
		api_frame_header((unsigned char *)buf, stream, pre + n);
	*taken = n;
	return (ssize_t)(hdr + pre + n);
}

/* MHD's content reader: Docker's frames, 8-byte header (stream, 0, 0, 0, size
 * big-endian), as many as fit; with follow, waits for more until the service ends. */
static ssize_t log_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct log_stream *ls = cls;
	size_t used = 0;
	(void)pos;

	if (max <= 8 + TS_MAX)
		return 0;
	if (ls->head_len) {
		size_t n = ls->head_len < max - 8 ? ls->head_len : max - 8;
		if (ls->raw) {
			memcpy(buf, ls->head, n);
		} else {
			api_frame_header((unsigned char *)buf, 2, n);
			memcpy(buf + 8, ls->head, n);
		}
		memmove(ls->head, ls->head + n, ls->head_len - n);
		ls->head_len -= n;
		return (ssize_t)n + (ls->raw ? 0 : 8);
	}
	for (;;) {
		struct log_chunk c;
		uint64_t taken;
		ssize_t n;
		int r = used + 8 + TS_MAX < max && !ls->ended ? log_next(ls, LOG_BLOCK, &c) : 0;

		if (r < 0)
			return used ? (ssize_t)used : MHD_CONTENT_READER_END_WITH_ERROR;
		if (r > 0 && c.stream && ls->until_ns && c.time_ns > ls->until_ns) {
			ls->ended = true; /* Docker's until: what came later is not sent */
			r = 0;
		}
		if (r > 0) {
			if ((n = log_frame(ls, &c, buf + used, max - used, &taken)) < 0)
				return used ? (ssize_t)used : MHD_CONTENT_READER_END_WITH_ERROR;
			log_reader_consume(&ls->rd, taken);
			used += (size_t)n;
			if (n > 0 || taken > 0)
				continue;
			/* no room, or the log started again under us */
		}
		if (used)
			return (ssize_t)used;
		if (!ls->follow || ls->last || ls->ended)
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (ls->until_ns && log_index_now_ns() > ls->until_ns)
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (!state_is_alive(ls->dir_fd)) {
			ls->last = true;
			continue;
		}
		if (api_client_gone(ls->conn, POLL_MS))
			return MHD_CONTENT_READER_END_WITH_ERROR;
	}
}

static void log_free(void *cls)
{
	struct log_stream *ls = cls;

	log_reader_close(&ls->rd);
	close(ls->dir_fd);
	free(ls);
}

/* The offset where the last `lines` lines of fd begin (a final newline ends the last line). */
static off_t tail_offset(int fd, long long lines)
{
	off_t size = lseek(fd, 0, SEEK_END), pos = size;
	long long seen = 0;
	char buf[8192];

	if (lines < 0 || size <= 0)
		return 0;
	if (lines == 0)
		return size;
	while (pos > 0) {
		size_t n = pos > (off_t)sizeof(buf) ? sizeof(buf) : (size_t)pos;
		pos -= (off_t)n;
		if (pread(fd, buf, n, pos) != (ssize_t)n)
			return 0;
		for (size_t i = n; i-- > 0;) {
			if (buf[i] != '\n' || pos + (off_t)i == size - 1)
				continue;
			if (++seen == lines)
				return pos + (off_t)i + 1;
		}
	}
	return 0;
}

/* Does the end of the log fd (its last 4 KiB) hold strerror(EINVAL), in any case? */
static bool log_says_einval(int fd)
{
	char buf[4097];
	off_t size = lseek(fd, 0, SEEK_END);
	off_t from = size > 4096 ? size - 4096 : 0;
	ssize_t n = size > 0 ? pread(fd, buf, (size_t)(size - from), from) : 0;

	if (n <= 0)
		return false;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	return strcasestr(buf, "invalid argument") != NULL;
}

enum MHD_Result api_logs(struct api_server *srv, struct MHD_Connection *conn, const char *ref)
{
	const char *tail = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "tail");
	const char *since = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "since");
	const char *until = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "until");
	bool out = api_arg_true(conn, "stdout"), err = api_arg_true(conn, "stderr");
	_cleanup_close_ int root_fd = -1, dir_fd = -1, fd = -1, index_fd = -1;
	int64_t since_ns = 0, until_ns = 0;
	struct log_stream *ls;
	enum MHD_Result ret;
	struct api_ctr c;
	long long lines = -1;
	off_t from;

	if (!out && !err)
		return api_error(conn, 400, "Bad parameters: you must choose at least one stream");
	const char *bad = since && since[0] && !parse_unix_ns(since, &since_ns) ? since :
			  until && until[0] && !parse_unix_ns(until, &until_ns) ? until : NULL;
	if (bad)
		return api_error(conn, 400, "since and until are Unix seconds, with up to 9 digits of fraction "
				 "(1733155800 or 1733155800.5), not \"%s\"", bad);
	if (tail && strcmp(tail, "all") != 0 && tail[0]) {
		char *end;
		lines = strtoll(tail, &end, 10);
		if (*end || lines < 0)
			lines = -1;
	}
	if (!api_find(srv, conn, ref, &c, &ret))
		return ret;
	dir_fd = api_open_dir(c.name, &root_fd);
	bool raw = api_ctr_tty(&c);
	/* what create warned of (one id inside), where it explains the end: the
	 * container exited non-zero and its log says EINVAL, as setpriv, gosu and su
	 * do when they switch to an id the namespace does not map */
	const char *warning = lines < 0 && err ? api_get_str(c.config, "warning") : NULL;
	bool failed = !c.alive && strcmp(c.st.status, "exited") == 0 && c.st.exit_code != 0;
	char head[sizeof(ls->head)] = "";
	if (warning && warning[0] && failed)
		snprintf(head, sizeof(head), "%s\n", warning);
	api_ctr_free(&c);
	if (dir_fd < 0 || (fd = openat(dir_fd, LOG_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return api_error(conn, 404, "no log for container %s", ref);
	if (head[0] && !log_says_einval(fd))
		head[0] = '\0';
	if ((from = tail_offset(fd, lines)) < 0)
		return api_error(conn, 500, "read the log: %s", strerror(errno));
	if (!(ls = calloc(1, sizeof(*ls))))
		return api_error(conn, 500, "out of memory");
	index_fd = openat(dir_fd, LOG_INDEX_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	log_reader_init(&ls->rd, steal_fd(&fd), steal_fd(&index_fd), (uint64_t)from);
	ls->dir_fd = steal_fd(&dir_fd);
	ls->follow = api_arg_true(conn, "follow");
	ls->out = out;
	ls->err = err;
	ls->stream = out ? 1 : 2;
	ls->raw = raw;
	ls->timestamps = api_arg_true(conn, "timestamps");
	ls->line_start[1] = ls->line_start[2] = true;
	ls->since_ns = since_ns;
	ls->until_ns = until_ns;
	ls->conn = conn;
	memcpy(ls->head, head, sizeof(head));
	ls->head_len = strlen(head);
	return api_queue_stream(conn, "application/vnd.docker.raw-stream", LOG_BLOCK + 8, log_read, ls, log_free, NULL,
				NULL);
}

/* ---- attach ---- */

struct attach {
	struct api_server *srv;
	char id[API_ID_LEN + 1];
	bool tty;               /* raw output, no frames */
	bool in;                /* stdin=1: the client's bytes go to the service's stdin */
	bool out, err;          /* stdout=1, stderr=1 (neither: both) */
};

/* True when the client closed its end (a half-close, as a client without stdin
 * sends, is not that). */
static bool sock_gone(int sock, int timeout_ms)
{
	struct pollfd p = { .fd = sock, .events = 0 };

	return poll(&p, 1, timeout_ms) > 0 && (p.revents & (POLLHUP | POLLERR));
}

void api_frame_header(unsigned char h[8], unsigned char stream, size_t n)
{
	h[0] = stream;
	h[1] = h[2] = h[3] = 0;
	h[4] = (unsigned char)(n >> 24);
	h[5] = (unsigned char)(n >> 16);
	h[6] = (unsigned char)(n >> 8);
	h[7] = (unsigned char)n;
}

enum MHD_Result api_queue_stream(struct MHD_Connection *conn, const char *type, size_t block,
				 MHD_ContentReaderCallback read, void *cls, MHD_ContentReaderFreeCallback done,
				 const char *extra_name, const char *extra_value)
{
	struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, block, read, cls, done);
	enum MHD_Result ret;

	if (!r) {
		done(cls);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, "Api-Version", API_VERSION);
	if (extra_name)
		MHD_add_response_header(r, extra_name, extra_value);
	ret = MHD_queue_response(conn, 200, r);
	MHD_destroy_response(r);
	return ret;
}

int api_send_frame(int sock, unsigned char stream, const char *data, size_t n)
{
	unsigned char h[8];

	api_frame_header(h, stream, n);
	return send(sock, h, sizeof(h), MSG_NOSIGNAL) == (ssize_t)sizeof(h) && write_all(sock, data, n) == 0 ? 0 : -1;
}

enum MHD_Result api_queue_upgrade(struct MHD_Connection *conn, MHD_UpgradeHandler handler, void *cls,
				  const char *type)
{
	struct MHD_Response *r = MHD_create_response_for_upgrade(handler, cls);
	enum MHD_Result ret;

	if (!r) {
		free(cls);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_UPGRADE, "tcp");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "Upgrade");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(conn, MHD_HTTP_SWITCHING_PROTOCOLS, r);
	MHD_destroy_response(r);
	return ret;
}

/* The client's stdin: to the keeper of the service's (service_stdin.h), which
 * starts with the container; tried until it answers or the container is gone. */
static int attach_stdin(int dir_fd, int sock)
{
	for (;;) {
		int fd = service_stdin_connect(dir_fd, "stdin\n");
		if (fd >= 0 || (errno != ENOENT && errno != ECONNREFUSED) || !state_is_alive(dir_fd) ||
		    sock_gone(sock, POLL_MS))
			return fd;
	}
}

/* Up to POLL_MS: the client's input to kfd (closed at its end: *kfd -1).
 * Returns false when the client is gone. */
static bool attach_input(int sock, int *kfd)
{
	struct pollfd p = { .fd = sock, .events = *kfd >= 0 ? POLLIN : 0 };
	char buf[LOG_BLOCK];
	ssize_t n;

	if (poll(&p, 1, POLL_MS) <= 0)
		return true;
	if (p.revents & POLLIN) {
		n = read(sock, buf, sizeof(buf));
		if (n > 0 && write_all(*kfd, buf, (size_t)n) == 0)
			return true;
		if (n < 0 && errno == EINTR)
			return true;
		/* its half-close (or a stdin that was closed): this client's input ends */
		cleanup_closep(kfd);
		return n >= 0;
	}
	return !(p.revents & (POLLHUP | POLLERR));
}

/* The upgraded connection: waits for the container to start (the client attaches
 * before it starts it), then sends its log as it grows, until it exits; with
 * stdin, passes the client's input on meanwhile. */
static void attach_upgraded(void *cls, struct MHD_Connection *conn, void *con_cls, const char *extra_in,
			    size_t extra_in_size, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh)
{
	struct attach *a = cls;
	_cleanup_close_ int root_fd = -1, dir_fd = -1, fd = -1, kfd = -1;
	struct log_reader rd = { .log_fd = -1, .index_fd = -1 };
	char buf[LOG_BLOCK], msg[256];
	struct api_ctr c;
	unsigned status;
	bool last = false;
	(void)conn, (void)con_cls;

	while (fd < 0) {
		pthread_mutex_lock(&a->srv->lock);
		int rc = api_ctr_find(a->id, &c, &status, msg, sizeof(msg));
		pthread_mutex_unlock(&a->srv->lock);
		if (rc < 0)
			goto out;
		bool created = strcmp(c.st.status, "created") == 0 && !c.alive;
		if (!created && (dir_fd = api_open_dir(c.name, &root_fd)) >= 0)
			fd = openat(dir_fd, LOG_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		api_ctr_free(&c);
		if (!created && fd < 0)
			goto out;
		if (fd < 0 && sock_gone(sock, POLL_MS))
			goto out;
	}
	if (a->in && (kfd = attach_stdin(dir_fd, sock)) >= 0 && extra_in_size &&
	    write_all(kfd, extra_in, extra_in_size) < 0)
		cleanup_closep(&kfd);
	/* each stream in its frames, as logs sends them (log_index.h) */
	log_reader_init(&rd, steal_fd(&fd), openat(dir_fd, LOG_INDEX_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), 0);
	for (;;) {
		struct log_chunk ch;
		int r = log_reader_next(&rd, last, sizeof(buf), &ch);
		if (r == 0 && !last && log_settled(&rd, dir_fd))
			r = log_reader_next(&rd, true, sizeof(buf), &ch);
		ssize_t n = r > 0 ? pread(rd.log_fd, buf, (size_t)ch.len, (off_t)ch.offset) : 0;
		if (n > 0) {
			unsigned char stream = ch.stream ? ch.stream : 1;
			log_reader_consume(&rd, (uint64_t)n);
			if (!a->tty && !(stream == 1 ? a->out : a->err))
				continue;
			if ((a->tty ? write_all(sock, buf, (size_t)n) : api_send_frame(sock, stream, buf, (size_t)n)) < 0)
				break;
			continue;
		}
		if (r < 0 || n < 0 || last)
			break;
		if (!state_is_alive(dir_fd))
			last = true;
		else if (!attach_input(sock, &kfd))
			break;
	}
out:
	log_reader_close(&rd);
	free(a);
	MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
}

enum MHD_Result api_attach(struct api_server *srv, struct MHD_Connection *conn, const char *ref)
{
	const char *up = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_UPGRADE);
	enum MHD_Result ret;
	struct attach *a;
	struct api_ctr c;

	if (!up)
		return api_error(conn, 501, "attach without a connection upgrade is not supported by nsrun api");
	if (!api_find(srv, conn, ref, &c, &ret))
		return ret;
	if (!(a = calloc(1, sizeof(*a)))) {
		api_ctr_free(&c);
		return api_error(conn, 500, "out of memory");
	}
	a->srv = srv;
	a->tty = api_ctr_tty(&c);
	/* without OpenStdin the payload's stdin is /dev/null, as Docker's: stdin=1 takes nothing */
	a->in = api_arg_true(conn, "stdin") && api_ctr_open_stdin(&c);
	a->out = api_arg_true(conn, "stdout");
	a->err = api_arg_true(conn, "stderr");
	if (!a->out && !a->err)
		a->out = a->err = true;
	snprintf(a->id, sizeof(a->id), "%s", c.id);
	api_ctr_free(&c);
	return api_queue_upgrade(conn, attach_upgraded, a,
				 a->tty ? "application/vnd.docker.raw-stream" : "application/vnd.docker.multiplexed-stream");
}

enum MHD_Result api_resize(struct api_server *srv, struct MHD_Connection *conn, const char *ref)
{
	_cleanup_close_ int root_fd = -1, dir_fd = -1, fd = -1;
	struct winsize ws;
	enum MHD_Result ret;
	struct api_ctr c;
	char req[64];
	bool tty, alive;

	if (!api_winsize(conn, &ws))
		return api_error(conn, 400, "resize: h and w must be numbers from 1 to 65535");
	if (!api_find(srv, conn, ref, &c, &ret))
		return ret;
	tty = api_ctr_tty(&c);
	alive = c.alive;
	dir_fd = api_open_dir(c.name, &root_fd);
	api_ctr_free(&c);
	if (!tty)
		return api_error(conn, 400, "container %s has no TTY to resize", ref);
	if (!alive)
		return api_error(conn, 409, "Container %s is not running", ref);
	snprintf(req, sizeof(req), "resize %u %u\n", (unsigned)ws.ws_row, (unsigned)ws.ws_col);
	if (dir_fd < 0 || (fd = service_stdin_connect(dir_fd, req)) < 0)
		return api_error(conn, 500, "resize: the service's terminal: %s", strerror(errno));
	return api_reply(conn, 200, "text/plain", "", 0);
}
