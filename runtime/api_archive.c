/* api_archive.c - GET, HEAD and PUT /containers/{id}/archive?path=P: docker cp both
 * ways and docker-py's get_archive/put_archive (Docker Engine API v1.41,
 * "Containers": "Get an archive of a filesystem resource in a container" and
 * "Extract an archive of files or folders to a directory in a container").
 *
 * A created container's PUT is kept for its start (api_archive_kept.c); its GET
 * and HEAD (once something was kept) run the copy in a run of the container of
 * its own, its kept archives extracted first (api_peek_spawn: `nsrun
 * --archive-get P ARGS`, confined as the payload).  Else
 * nothing here touches the container's files: each request runs `nsrun exec
 * --archive-get|put|stat P NAME` (copy_archive.h), which joins the container and
 * does the walk there, as its payload's user, under its Landlock rules, seccomp
 * filter and limits; a payload's symlink meets only the container's root.  Its
 * first line is the stat for X-Docker-Container-Path-Stat (base64 of the JSON, as
 * Docker sends it) or the error, which maps to Docker's status. */
#include <errno.h>
#include <fcntl.h>
#include <nettle/base64.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api_internal.h"
#include "cleanup.h"
#include "sys.h"

#define LINE_MAX_LEN 8192
#define BLOCK 65536
#define STAT_HEADER "X-Docker-Container-Path-Stat"
/* A job that makes no progress for nsrun api --archive-timeout (idle_ms) is
 * ended: the payload can stop it (SIGSTOP: the same ids) or hold an open(2) on a
 * FIFO it swapped in, and an API thread must never wait on it for ever. */
/* after SIGTERM, before SIGKILL (nsrun exec's chain dies with it: PDEATHSIG) */
#define JOB_TERM_MS 3000

/* One run of nsrun exec --archive-*. */
struct archive_job {
	pid_t pid;
	int in, out, err;       /* its stdin (PUT, else -1), stdout and stderr */
	char line[LINE_MAX_LEN];        /* its first line, without the newline */
	bool have_line;
	int idle_ms;            /* nsrun api --archive-timeout */
};

struct api_archive_put {
	struct archive_job job;
	struct api_kept_upload *kept;   /* a created container's: kept for its start */
	bool started;
	unsigned status;        /* not 0: refused before it started, with msg */
	char msg[512];
};

static void job_close(struct archive_job *j)
{
	cleanup_closep(&j->in);
	cleanup_closep(&j->out);
	cleanup_closep(&j->err);
}

/* Ends the job (SIGTERM to nsrun exec, which passes it on, unless done) and reaps
 * it.  Returns its exit status, or -1. */
static int job_end(struct archive_job *j, bool terminate)
{
	int status = 0;
	pid_t w;

	job_close(j);
	if (j->pid <= 0)
		return -1;
	if (terminate)
		kill(j->pid, SIGTERM);
	/* bounded: a job stopped by the payload takes no SIGTERM (poll(2) at 10 ms) */
	for (int waited = 0; (w = waitpid(j->pid, &status, WNOHANG)) == 0 || (w < 0 && errno == EINTR);) {
		if (w < 0)
			continue;
		if (waited >= (terminate ? JOB_TERM_MS : j->idle_ms)) {
			kill(j->pid, SIGKILL);
			while ((w = waitpid(j->pid, &status, 0)) < 0 && errno == EINTR)
				;
			break;
		}
		poll(NULL, 0, 10);
		waited += 10;
	}
	j->pid = -1;
	return w > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Starts the job: `nsrun exec ... NAME` in c, running, or with created true the
 * copy in a run of c's own (api_peek_spawn) before its start.  Returns 0, or
 * Docker's status with msg. */
static unsigned job_start(struct api_server *srv, struct archive_job *j, const char *op, const char *path,
			  const struct api_ctr *c, bool created, char *msg, size_t msg_len)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, err[2] = { -1, -1 };
	bool put = strcmp(op, "--archive-put") == 0;
	/* nsrun exec [-i] --archive-OP PATH NAME: -i passes our pipe on as its stdin */
	char *argv[7] = { srv->self_exe, "exec" }, **a = argv + 2;
	int rc;

	*j = (struct archive_job){ .pid = -1, .in = -1, .out = -1, .err = -1, .idle_ms = srv->archive_idle_ms };
	if (put)
		*a++ = "-i";
	*a++ = (char *)op;
	*a++ = (char *)path;
	*a++ = (char *)c->name;
	*a = NULL;
	if ((put && pipe2(in, O_CLOEXEC) < 0) || pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
		rc = 500;
		snprintf(msg, msg_len, "archive: pipe: %s", strerror(errno));
	} else if (created) {
		rc = (int)api_peek_spawn(srv, c, op, path, (int[3]){ -1, out[1], err[1] }, &j->pid, msg, msg_len);
	} else if ((rc = spawn_child(&j->pid, srv->self_exe, false, argv, NULL, (int[3]){ in[0], out[1], err[1] })) < 0) {
		rc = 500;
		snprintf(msg, msg_len, "archive: run nsrun exec: %s", strerror(errno));
	}
	cleanup_closep(&in[0]);
	cleanup_closep(&out[1]);
	cleanup_closep(&err[1]);
	j->in = in[1];
	/* written with a deadline (write_within) */
	if (j->in >= 0)
		fcntl(j->in, F_SETFL, O_NONBLOCK);
	j->out = out[0];
	j->err = err[0];
	if (rc != 0)
		job_close(j);
	return (unsigned)rc;
}

/* True once fd has something to read (or its end) within ms milliseconds. */
static bool readable_within(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int r;

	while ((r = poll(&pfd, 1, ms)) < 0 && errno == EINTR)
		;
	return r > 0;
}

/* Writes all of buf to fd (non-blocking) unless the reader takes nothing for
 * ms milliseconds.  Returns 0, or -1 (errno; ETIMEDOUT). */
static int write_within(int fd, const char *buf, size_t len, int ms)
{
	while (len) {
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		ssize_t n = write(fd, buf, len);
		int r;
		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		while ((r = poll(&pfd, 1, ms)) < 0 && errno == EINTR)
			;
		if (r == 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		if (r < 0)
			return -1;
	}
	return 0;
}

/* Reads the job's first line (one byte at a time: what follows is the tar). */
static void job_line(struct archive_job *j)
{
	size_t n = 0;
	char c;

	while (n < sizeof(j->line) - 1) {
		ssize_t r;
		if (!readable_within(j->out, j->idle_ms))
			break;
		r = read(j->out, &c, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (c == '\n') {
			j->have_line = true;
			break;
		}
		j->line[n++] = c;
	}
	j->line[n] = '\0';
}

/* nsrun exec's own words when it failed before the line (the last line it wrote). */
static void job_stderr(struct archive_job *j, char *out, size_t len)
{
	char buf[768];
	size_t n = 0;
	ssize_t r;

	/* bounded as the rest: a job stopped before its line never closes its stderr */
	while (n < sizeof(buf) - 1 && readable_within(j->err, j->idle_ms) &&
	       (r = read(j->err, buf + n, sizeof(buf) - 1 - n)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	/* the first line: nsrun: <what failed> (the hint follows it) */
	buf[strcspn(buf, "\n")] = '\0';
	snprintf(out, len, "%s", n ? buf : "nsrun exec ended without a word");
}

/* Docker's reply to the job's error line, or to its failure before one. */
static enum MHD_Result job_error(struct MHD_Connection *conn, struct archive_job *j, const char *path,
				 const char *id)
{
	char msg[1024];
	int e;

	if (!j->have_line || j->line[0] != '!') {
		job_stderr(j, msg, sizeof(msg));
		job_end(j, true);
		return api_error(conn, 500, "%s", msg);
	}
	e = atoi(j->line + 1);
	snprintf(msg, sizeof(msg), "%s", strchr(j->line, ' ') ? strchr(j->line, ' ') + 1 : "");
	job_end(j, true);
	switch (e) {
	case ENOENT:
		return api_error(conn, 404, "Could not find the file %s in container %s", path, id);
	case EROFS:
		return api_error(conn, 403, "container rootfs is marked read-only: %s", msg);
	case EACCES:
	case EPERM:
		return api_error(conn, 403, "%s", msg);
	case ENOTDIR:
	case EINVAL:
		return api_error(conn, 400, "%s", msg);
	default:
		return api_error(conn, 500, "%s", msg);
	}
}

/* The stat line as Docker's header: base64 (RFC 4648, padded) of the JSON
 * (nettle's base64_encode_raw).  Returns it (free it) or NULL. */
static char *stat_header(const char *json)
{
	size_t n = strlen(json);
	char *b = malloc(BASE64_ENCODE_RAW_LENGTH(n) + 1);

	if (!b)
		return NULL;
	base64_encode_raw(b, n, (const uint8_t *)json);
	b[BASE64_ENCODE_RAW_LENGTH(n)] = '\0';
	return b;
}

/* Why c, not running, has no files to copy (Docker copies with a created or
 * exited container too: nsrun's writable layer is a tmpfs inside the container,
 * made at start and gone at its end), and what to do instead. */
static void not_running(const struct api_ctr *c, bool put, char *msg, size_t len)
{
	if (strcmp(c->st.status, "created") == 0)
		snprintf(msg, len, "Container %s is created, not started: nsrun api copies %s a container only while "
			 "it runs (its root's writable layer is made inside it at start); start it, then copy, or bind "
			 "a host directory (-v)", c->id, put ? "into" : "from");
	else
		snprintf(msg, len, "Container %s is not running: nsrun api copies %s a container only while it runs "
			 "(its root's writable layer is a tmpfs of its own, gone when it ends); copy before it ends, "
			 "or bind a host directory (-v) for files that must outlive it", c->id, put ? "into" : "from");
}

/* A container of the API, created, not started (not the reaper): its files are
 * those its start will give it (api_peek_spawn). */
static bool is_created(const struct api_ctr *c)
{
	return !c->alive && strcmp(c->st.status, "created") == 0 && api_get(c->config, "args", yajl_t_array) &&
	       !YAJL_IS_TRUE(api_get(c->config, "ryuk", yajl_t_true));
}

/* The container, running (or created: *created), and the path, absolute: else
 * Docker's error queued. */
static bool find_container(struct api_server *srv, struct MHD_Connection *conn, const char *ref, struct api_ctr *c,
			   const char **path, bool *created, enum MHD_Result *ret)
{
	*path = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "path");
	if (!*path || (*path)[0] != '/') {
		*ret = api_error(conn, 400, "path: an absolute path in the container is required");
		return false;
	}
	if (!api_find(srv, conn, ref, c, ret))
		return false;
	*created = is_created(c);
	if (!c->alive && !*created) {
		char msg[512];
		not_running(c, false, msg, sizeof(msg));
		*ret = api_error(conn, 409, "%s", msg);
		api_ctr_free(c);
		return false;
	}
	return true;
}

static ssize_t get_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct archive_job *j = cls;
	(void)pos;

	for (;;) {
		ssize_t n;
		if (!readable_within(j->out, j->idle_ms))
			return MHD_CONTENT_READER_END_WITH_ERROR;
		n = read(j->out, buf, max);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return MHD_CONTENT_READER_END_WITH_ERROR;
		if (n == 0)
			/* a tar cut short by a failure must not look whole */
			return job_end(j, false) == 0 ? MHD_CONTENT_READER_END_OF_STREAM :
			       MHD_CONTENT_READER_END_WITH_ERROR;
		return n;
	}
}

static void get_free(void *cls)
{
	struct archive_job *j = cls;

	job_end(j, true);
	free(j);
}

/* HEAD on a created container of the API: its image's stat (api_kept_stat).
 * Returns true with *ret queued, false for the running case's way. */
static bool head_created(struct api_server *srv, struct MHD_Connection *conn, const char *ref, enum MHD_Result *ret)
{
	const char *path = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "path");
	struct MHD_Response *r;
	char msg[512], *json = NULL, *hdr = NULL;
	unsigned status;
	struct api_ctr c;

	if (!path || path[0] != '/')
		return false;
	if (!api_find(srv, conn, ref, &c, ret))
		return true;
	/* what docker cp put there is seen by a run of its own (find_container's way) */
	if (c.alive || strcmp(c.st.status, "created") != 0 || !api_get(c.config, "args", yajl_t_array) ||
	    api_kept_any(&c)) {
		api_ctr_free(&c);
		return false;
	}
	if ((status = api_kept_stat(&c, path, &json, msg, sizeof(msg)))) {
		*ret = api_error(conn, status, "%s", msg);
	} else if (!(hdr = stat_header(json)) ||
		   !(r = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT))) {
		*ret = api_error(conn, 500, "out of memory");
	} else {
		MHD_add_response_header(r, STAT_HEADER, hdr);
		MHD_add_response_header(r, "Api-Version", API_VERSION);
		*ret = MHD_queue_response(conn, 200, r);
		MHD_destroy_response(r);
	}
	free(json);
	free(hdr);
	api_ctr_free(&c);
	return true;
}

static enum MHD_Result get_or_head(struct api_server *srv, struct MHD_Connection *conn, const char *ref, bool head)
{
	struct archive_job *j = calloc(1, sizeof(*j));
	char *hdr = NULL;
	struct MHD_Response *r;
	enum MHD_Result ret;
	const char *path;
	struct api_ctr c;
	bool created;
	char msg[1024];
	unsigned status;

	if (!j)
		return api_error(conn, 500, "out of memory");
	if (head && head_created(srv, conn, ref, &ret)) {
		free(j);
		return ret;
	}
	if (!find_container(srv, conn, ref, &c, &path, &created, &ret)) {
		free(j);
		return ret;
	}
	if ((status = job_start(srv, j, head ? "--archive-stat" : "--archive-get", path, &c, created, msg,
				sizeof(msg)))) {
		ret = api_error(conn, status, "%s", msg);
		goto out;
	}
	job_line(j);
	if (!j->have_line || j->line[0] == '!') {
		ret = job_error(conn, j, path, c.id);
		goto out;
	}
	if (!(hdr = stat_header(j->line))) {
		ret = api_error(conn, 500, "out of memory");
		goto out;
	}
	if (!head) {
		ret = api_queue_stream(conn, "application/x-tar", BLOCK, get_read, j, get_free, STAT_HEADER, hdr);
		j = NULL; /* the response's now */
		goto out;
	}
	job_end(j, false);
	if (!(r = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT))) {
		ret = MHD_NO;
		goto out;
	}
	MHD_add_response_header(r, STAT_HEADER, hdr);
	MHD_add_response_header(r, "Api-Version", API_VERSION);
	ret = MHD_queue_response(conn, 200, r);
	MHD_destroy_response(r);
out:
	if (j) {
		job_end(j, true);
		free(j);
	}
	free(hdr);
	api_ctr_free(&c);
	return ret;
}

/* ---- PUT: the body streams into nsrun exec --archive-put ---- */

bool api_archive_is_put(const char *method, const char *url)
{
	size_t n = strlen(url);
	const char *q = strchr(url, '?');

	if (q)
		n = (size_t)(q - url);
	return strcmp(method, "PUT") == 0 && n > 8 && strncmp(url + n - 8, "/archive", 8) == 0 &&
	       strstr(url, "/containers/") != NULL;
}

/* The first chunk: the container and path checked, nsrun exec started; a refusal
 * is kept for the reply (none may be queued while the body comes). */
static void put_start(struct api_server *srv, struct MHD_Connection *conn, const char *ref,
		      struct api_archive_put *p)
{
	const char *path = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "path");
	struct api_ctr c;
	unsigned status;
	int rc;

	p->started = true;
	p->job = (struct archive_job){ .pid = -1, .in = -1, .out = -1, .err = -1 };
	if (!path || path[0] != '/') {
		p->status = 400;
		snprintf(p->msg, sizeof(p->msg), "path: an absolute path in the container is required");
		return;
	}
	pthread_mutex_lock(&srv->lock);
	rc = api_ctr_find(ref, &c, &status, p->msg, sizeof(p->msg));
	pthread_mutex_unlock(&srv->lock);
	if (rc < 0) {
		p->status = status;
		return;
	}
	if (is_created(&c)) {
		/* docker create, cp, start: kept, and applied at start (api_archive_kept.c) */
		if (!(p->kept = api_kept_start(&c, path, &status, p->msg, sizeof(p->msg))))
			p->status = status;
	} else if (!c.alive) {
		p->status = 409;
		not_running(&c, true, p->msg, sizeof(p->msg));
	} else {
		p->status = job_start(srv, &p->job, "--archive-put", path, &c, false, p->msg, sizeof(p->msg));
	}
	api_ctr_free(&c);
}

int api_archive_upload(struct api_server *srv, struct MHD_Connection *conn, const char *ref,
		       struct api_request *req, const char *data, size_t len)
{
	struct api_archive_put *p = req->put;

	if (!p) {
		if (!(p = req->put = calloc(1, sizeof(*p))))
			return -1;
		put_start(srv, conn, ref, p);
	}
	if (p->kept && len && (p->status = api_kept_write(p->kept, data, len, p->msg, sizeof(p->msg)))) {
		/* past the bound: the rest goes nowhere */
		api_kept_free(p->kept);
		p->kept = NULL;
	}
	/* an extraction that failed reads no more: the rest goes nowhere (EPIPE) */
	if (!p->status && p->job.in >= 0 && len && write_within(p->job.in, data, len, p->job.idle_ms) < 0)
		cleanup_closep(&p->job.in);
	return 0;
}

void api_archive_put_free(struct api_archive_put *p)
{
	if (!p)
		return;
	job_end(&p->job, true);
	api_kept_free(p->kept);
	free(p);
}

static enum MHD_Result put_end(struct api_server *srv, struct MHD_Connection *conn, const char *ref,
			       struct api_request *req)
{
	struct api_archive_put *p;
	const char *path = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "path");

	/* no body at all: an empty archive */
	if (!req->put && api_archive_upload(srv, conn, ref, req, NULL, 0) < 0)
		return api_error(conn, 500, "out of memory");
	p = req->put;
	if (p->status)
		return api_error(conn, p->status, "%s", p->msg);
	if (p->kept) {
		unsigned status = api_kept_commit(srv, p->kept, ref, p->msg, sizeof(p->msg));
		return status ? api_error(conn, status, "%s", p->msg) : api_reply(conn, 200, NULL, "", 0);
	}
	cleanup_closep(&p->job.in);
	job_line(&p->job);
	if (!p->job.have_line || p->job.line[0] == '!')
		return job_error(conn, &p->job, path ? path : "", ref);
	job_end(&p->job, false);
	return api_reply(conn, 200, NULL, "", 0);
}

enum MHD_Result api_archive(struct api_server *srv, struct MHD_Connection *conn, const char *method, const char *ref,
			    struct api_request *req)
{
	if (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0)
		return get_or_head(srv, conn, ref, method[0] == 'H');
	if (strcmp(method, "PUT") == 0)
		return put_end(srv, conn, ref, req);
	return api_error(conn, 405, "use GET, HEAD or PUT /containers/{id}/archive");
}
