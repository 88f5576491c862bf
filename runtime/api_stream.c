/* api_stream.c - the container endpoints that stream its log: logs (with follow)
 * and attach (on an upgraded connection, with the service's stdin), and resize. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api_internal.h"
#include "cleanup.h"
#include "service_stdin.h"
#include "sys.h"

#define POLL_MS 100
#define LOG_BLOCK 65536

/* ---- logs ---- */

struct log_stream {
	int fd;                 /* the log */
	int dir_fd;             /* the service's directory: its lock says whether it runs */
	bool follow;
	bool last;              /* the service ended: one more read, then the end */
	unsigned char stream;   /* 1 stdout, 2 stderr: the log holds both, as one */
	bool raw;               /* a TTY's: no frames, as Docker's */
	struct MHD_Connection *conn;
	char head[1024];        /* nsrun's line before the log (create's warning), on stderr; "" */
	size_t head_len;
};

/* MHD's content reader: Docker's frames, 8-byte header (stream, 0, 0, 0, size big-endian). */
static ssize_t log_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct log_stream *ls = cls;
	(void)pos;

	if (max <= 8)
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
		size_t want = max - 8 < LOG_BLOCK ? max - 8 : LOG_BLOCK;
		ssize_t n = read(ls->fd, buf + (ls->raw ? 0 : 8), want);
		if (n > 0 && ls->raw)
			return n;
		if (n > 0) {
			api_frame_header((unsigned char *)buf, ls->stream, (size_t)n);
			return n + 8;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return MHD_CONTENT_READER_END_WITH_ERROR;
		if (!ls->follow || ls->last)
			return MHD_CONTENT_READER_END_OF_STREAM;
		/* a log at its --output-limit starts again (relay.h): so does the reader */
		struct stat st;
		off_t at = lseek(ls->fd, 0, SEEK_CUR);
		if (fstat(ls->fd, &st) == 0 && at > st.st_size)
			lseek(ls->fd, 0, SEEK_SET);
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

	close(ls->fd);
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
	bool out = api_arg_true(conn, "stdout"), err = api_arg_true(conn, "stderr");
	_cleanup_close_ int root_fd = -1, dir_fd = -1, fd = -1;
	struct log_stream *ls;
	enum MHD_Result ret;
	struct api_ctr c;
	long long lines = -1;

	if (!out && !err)
		return api_error(conn, 400, "Bad parameters: you must choose at least one stream");
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
	if (lseek(fd, tail_offset(fd, lines), SEEK_SET) < 0)
		return api_error(conn, 500, "read the log: %s", strerror(errno));
	if (!(ls = calloc(1, sizeof(*ls))))
		return api_error(conn, 500, "out of memory");
	ls->fd = steal_fd(&fd);
	ls->dir_fd = steal_fd(&dir_fd);
	ls->follow = api_arg_true(conn, "follow");
	ls->stream = out ? 1 : 2;
	ls->raw = raw;
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
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n > 0) {
			if ((a->tty ? write_all(sock, buf, (size_t)n) : api_send_frame(sock, 1, buf, (size_t)n)) < 0)
				break;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || last)
			break;
		if (!state_is_alive(dir_fd))
			last = true;
		else if (!attach_input(sock, &kfd))
			break;
	}
out:
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
