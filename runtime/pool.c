/* pool.c - see pool.h */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "cleanup.h"
#include "cli.h"
#include "config.h"
#include "image.h"
#include "landlock.h"
#include "pool.h"
#include "result.h"
#include "seccomp.h"
#include "sys.h"

/* The zygote's source, put into .rodata as seccomp_builtin.c does its profiles. */
__asm__(".section .rodata\n"
	".global nsrun_pool_zygote\n.type nsrun_pool_zygote, @object\n.balign 16\nnsrun_pool_zygote:\n"
	".incbin \"runtime/pool_zygote.py\"\nnsrun_pool_zygote_end:\n"
	".global nsrun_pool_zygote_size\n.balign 8\nnsrun_pool_zygote_size:\n"
	".dc.a nsrun_pool_zygote_end - nsrun_pool_zygote\n"
	".previous\n");
extern const char nsrun_pool_zygote[];
extern const uintptr_t nsrun_pool_zygote_size;

#define POOL_CHANNEL "/run/nsrun-pool"  /* the channel directory inside the container */
#define POOL_MAX_FRAME (16U << 20)      /* a request: code and stdin */
#define POOL_MAX_SIZE 64
#define POOL_MAX_CLIENTS 256
#define POOL_START_TRIES 3              /* a zygote that ends before it is ready, in a row */

struct pool_req;

struct pool_slot {
	int id;
	int ctl, in, out, err;          /* ours: the request document, stdin, stdout, stderr */
	struct pool_req *req;           /* NULL: idle */
};

struct pool_req {
	int client;                     /* index in clients[], -1 once it went away */
	char *ctl;                      /* the document P reads */
	size_t ctl_len, ctl_off;
	char *in;                       /* the request's stdin */
	size_t in_len, in_off;
	uint64_t timeout_us, output_limit;
	uint64_t t_arrive, t_start;
	struct pool_slot *slot;
	struct nsrun_result r;
	bool exited, timed_out, killed_for_output;
	struct pool_req *next;          /* the queue */
};

struct pool_client {
	int fd;
	unsigned char hdr[4];
	size_t hdr_have;
	char *buf;
	uint32_t need;
	size_t have;
	struct pool_req *req;
};

struct pool {
	struct nsrun_config cfg;
	char dir[64];                   /* our private directory (0700) */
	char chan[96];                  /* dir/chan, bound read-only at POOL_CHANNEL */
	char zsock[128];                /* chan/zygote.sock until the zygote connects */
	char *socket_path;
	bool socket_ours;
	unsigned size, queue_max;
	struct strv child_argv;
	pid_t child;
	int zlisten, zfd, listen_fd, sigfd;
	bool zready, announced, stopping, watch_stdin;
	unsigned restarts, start_fails;
	struct pool_slot *slots;
	size_t n_slots;
	unsigned running;
	struct pool_client clients[POOL_MAX_CLIENTS];
	struct pool_req *qhead, *qtail;
	unsigned queued;
};

static const char pool_usage[] =
	"Usage: nsrun pool [--size N] [--preload MODULE,...] [--socket PATH] [--queue N] [OPTIONS] --image NAME\n"
	"\n"
	"A warm pool: one container whose zygote (the image's python3, MODULEs imported)\n"
	"forks a fresh sandbox per request: its own user, mount, pid, net, ipc and uts\n"
	"namespaces, fresh /tmp, /dev/shm and /proc, no capability, the seccomp filter of a\n"
	"run, uid 65534.  Prints the socket's path once ready; ends on SIGTERM, SIGINT,\n"
	"SIGHUP or the end of a pipe on its stdin (docs/pool.md).\n"
	"\n"
	"  --size N                  requests run at once, and slots kept ready (default 2)\n"
	"  --preload MODULE,...      modules the zygote imports once\n"
	"  --socket PATH             the unix socket (mode 0600; default: in a new private directory)\n"
	"  --queue N                 requests that may wait for a slot; more are refused (default 64)\n"
	"  OPTIONS                   run options (nsrun --help): --timeout and --output-limit are a\n"
	"                            request's defaults; --memory, --pids-limit, --cpu-time and\n"
	"                            --tmpfs-size apply to each request; -e, -w, --hostname as a run\n"
	"\n"
	"A request: 4-byte big-endian length, then {\"code\": ..., \"stdin\": ..., \"args\": [...],\n"
	"\"env\": [\"K=V\"], \"timeout\": SECONDS, \"output_limit\": BYTES}; the reply: the same frame\n"
	"holding the --json document with \"pool\" timings.\n";

/* ---- small helpers ------------------------------------------------------ */

static void yajl_tree_freep(yajl_val *v)
{
	yajl_tree_free(*v);
}

static int write_at(const char *dir, const char *name, const void *buf, size_t len, mode_t mode,
		    struct nsrun_error *err)
{
	char path[256];
	_cleanup_close_ int fd = -1;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0 || fchmod(fd, mode) < 0 || write_all(fd, buf, len) < 0)
		return error_set(err, errno, "pool: write %s", path);
	return 0;
}

static void gen_str(yajl_gen g, const char *s)
{
	yajl_gen_string(g, (const unsigned char *)s, strlen(s));
}

/* The zygote's settings (runtime/pool_zygote.py reads them). */
static int write_zygote_config(struct pool *p, const char *preload, struct nsrun_error *err)
{
	yajl_gen g = yajl_gen_alloc(NULL);
	const unsigned char *buf;
	size_t len;
	int rc;

	if (!g)
		return error_set(err, ENOMEM, "pool: zygote settings");
	yajl_gen_map_open(g);
	gen_str(g, "size");
	yajl_gen_integer(g, p->size);
	gen_str(g, "preload");
	yajl_gen_array_open(g);
	if (preload) {
		_cleanup_free_ char *copy = strdup(preload);
		char *save = NULL;
		for (char *m = copy ? strtok_r(copy, ",", &save) : NULL; m; m = strtok_r(NULL, ",", &save))
			gen_str(g, m);
	}
	yajl_gen_array_close(g);
	gen_str(g, "pids");
	yajl_gen_integer(g, (long long)p->cfg.limits.pids);
	gen_str(g, "memory_bytes");
	yajl_gen_integer(g, (long long)p->cfg.limits.memory_bytes);
	gen_str(g, "cpu_time_s");
	yajl_gen_integer(g, (long long)((p->cfg.limits.cpu_time_us + 999999) / 1000000));
	gen_str(g, "tmpfs_bytes");
	yajl_gen_integer(g, (long long)p->cfg.limits.tmpfs_bytes);
	gen_str(g, "hostname");
	gen_str(g, p->cfg.hostname);
	gen_str(g, "channel");
	gen_str(g, POOL_CHANNEL);
	yajl_gen_map_close(g);
	yajl_gen_get_buf(g, &buf, &len);
	rc = write_at(p->chan, "config.json", buf, len, 0644, err);
	yajl_gen_free(g);
	return rc;
}

/* The cold run's filter, compiled here as a run's parent does (seccomp.h), for the
 * zygote to load in each request after its capabilities are gone. */
static int write_seccomp(struct pool *p, struct nsrun_error *err)
{
	struct nsrun_seccomp *f = NULL;
	int rc;

	if (seccomp_prepare(p->cfg.security.seccomp, seccomp_profiles_dir(),
			    p->cfg.security.strict ? NSRUN_SECCOMP_STRICT : 0, NULL, NULL, &f, err) < 0)
		return -1;
	if (!f)
		return write_at(p->chan, "seccomp.bpf", "", 0, 0644, err);
	rc = write_at(p->chan, "seccomp.bpf", seccomp_program(f)->filter,
		      (size_t)seccomp_program(f)->len * sizeof(struct sock_filter), 0644, err);
	seccomp_free(f);
	return rc;
}

static int listen_unix(const char *path, int type, mode_t mode, struct nsrun_error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = -1;

	if (strlen(path) >= sizeof(sa.sun_path))
		return error_set(err, ENAMETOOLONG, "pool: socket \"%s\"", path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return error_set(err, errno, "pool: socket \"%s\"", path);
	if (chmod(path, mode) < 0 || listen(fd, 64) < 0) {
		int e = errno;
		unlink(path);
		return error_set(err, e, "pool: socket \"%s\"", path);
	}
	return steal_fd(&fd);
}

/* ---- the zygote's container --------------------------------------------- */

static int zygote_spawn(struct pool *p, struct nsrun_error *err)
{
	sigset_t none;

	p->zlisten = listen_unix(p->zsock, SOCK_SEQPACKET, 0666, err);
	if (p->zlisten < 0)
		return -1;
	p->child = fork();
	if (p->child < 0)
		return error_set(err, errno, "pool: fork");
	if (p->child == 0) {
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* the container's stdout is our stderr: our stdout says only the socket */
		if (null < 0 || dup2(null, 0) < 0 || dup2(2, 1) < 0)
			_exit(125);
		execv("/proc/self/exe", p->child_argv.v);
		dprintf(2, "nsrun: pool: exec /proc/self/exe: %s\n", strerror(errno));
		_exit(125);
	}
	p->zready = false;
	return 0;
}

static void reply(struct pool *p, struct pool_req *q);

static void slot_close(struct pool_slot *s)
{
	int *fds[] = { &s->ctl, &s->in, &s->out, &s->err };
	for (size_t i = 0; i < 4; i++)
		if (*fds[i] >= 0) {
			close(*fds[i]);
			*fds[i] = -1;
		}
}

static void slot_remove(struct pool *p, struct pool_slot *s)
{
	slot_close(s);
	if (s->req)
		s->req->slot = NULL;
	*s = p->slots[--p->n_slots];
	if (s->req)
		s->req->slot = s;
}

static void req_fail(struct pool *p, struct pool_req *q, int errnum, const char *msg, const char *hint)
{
	q->r.status = NSRUN_STATUS_ERROR;
	error_set_stage(&q->r.error, STAGE_PREPARE, errnum, "%s", msg);
	q->r.error.hint = hint;
	q->exited = true;
	reply(p, q);
}

/* The zygote ended (its container's nsrun exited): what ran in it is gone with it. */
static void zygote_ended(struct pool *p, int status, struct nsrun_error *err)
{
	bool was_ready = p->zready;

	if (p->zfd >= 0)
		close(p->zfd);
	if (p->zlisten >= 0)
		close(p->zlisten);
	p->zfd = p->zlisten = -1;
	unlink(p->zsock);
	p->child = 0;
	p->zready = false;
	while (p->n_slots) {
		struct pool_slot *s = &p->slots[p->n_slots - 1];
		struct pool_req *q = s->req;
		slot_remove(p, s);
		if (q) {
			p->running--;
			req_fail(p, q, 0, "pool: the zygote ended while the request ran", "it is restarted; send the "
				 "request again");
		}
	}
	if (p->stopping)
		return;
	p->start_fails = was_ready ? 0 : p->start_fails + 1;
	if (p->start_fails >= POOL_START_TRIES) {
		error_set(err, 0, "pool: the zygote's container ended before it was ready, %u times (status %d; its "
			  "error is above)", p->start_fails, status);
		p->stopping = true;
		return;
	}
	p->restarts++;
	if (p->announced)
		fprintf(stderr, "nsrun: pool: the zygote ended (status %d): restarting it\n", status);
	if (zygote_spawn(p, err) < 0)
		p->stopping = true;
}

/* ---- requests ------------------------------------------------------------ */

static void reply(struct pool *p, struct pool_req *q)
{
	struct pool_client *c = q->client >= 0 ? &p->clients[q->client] : NULL;
	struct nsrun_config cfg = p->cfg;         /* a shallow copy: this request's limits */
	char *doc = NULL;
	size_t len = 0;
	bool ok = false;
	FILE *f;

	cfg.limits.timeout_us = q->timeout_us;
	cfg.output.capture = true;
	cfg.output.limit_bytes = q->output_limit;
	q->r.pool.used = true;
	q->r.pool.slot = q->slot ? (unsigned)q->slot->id : 0;
	q->r.pool.zygote_restarts = p->restarts;
	if (q->t_start) {
		q->r.pool.queued_us = q->t_start - q->t_arrive;
		q->r.pool.run_us = monotonic_us() - q->t_start;
	} else {
		q->r.pool.queued_us = monotonic_us() - q->t_arrive;
	}
	q->r.wall_time_us = monotonic_us() - q->t_arrive;
	q->r.enforced.memory = cfg.limits.memory_bytes ? "rlimit" : NULL;
	f = open_memstream(&doc, &len);
	if (f) {
		ok = result_write_json(&q->r, &cfg, f) == 0;
		ok = fclose(f) == 0 && ok;
	}
	if (ok && c) {
		unsigned char hdr[4] = { (unsigned char)(len >> 24), (unsigned char)(len >> 16),
					 (unsigned char)(len >> 8), (unsigned char)len };
		/* a client that does not read its answer in 10 s loses it, not the pool */
		struct timeval tv = { .tv_sec = 10 };
		setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) & ~O_NONBLOCK);
		if (send(c->fd, hdr, 4, MSG_NOSIGNAL) != 4 || write_all(c->fd, doc, len) < 0) {
			close(c->fd);
			c->fd = -1;
		} else {
			fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
		}
	}
	free(doc);
	if (c)
		c->req = NULL;
	if (q->slot)
		slot_remove(p, q->slot);
	result_free(&q->r);
	free(q->ctl);
	free(q->in);
	free(q);
}

static const char *json_str(yajl_val root, const char *key)
{
	const char *path[] = { key, NULL };
	yajl_val v = yajl_tree_get(root, path, yajl_t_string);
	return v ? YAJL_GET_STRING(v) : NULL;
}

/* Parses a request and makes the document its slot's P reads.  Returns 0 or -1
 * with err (errnum 0: a bad request). */
static int req_parse(struct pool *p, struct pool_req *q, char *text, struct nsrun_error *err)
{
	char ebuf[256];
	const char *code_path[] = { "code", NULL }, *args_path[] = { "args", NULL }, *env_path[] = { "env", NULL };
	const char *t_path[] = { "timeout", NULL }, *o_path[] = { "output_limit", NULL };
	__attribute__((cleanup(yajl_tree_freep))) yajl_val root = yajl_tree_parse(text, ebuf, sizeof(ebuf));
	yajl_val code, args, env, t, o;
	struct strv envv = { 0 };
	const char *in;
	yajl_gen g = NULL;
	const unsigned char *buf;
	size_t len;

	if (!root || !YAJL_IS_OBJECT(root))
		return error_set(err, 0, "pool: the request is not a JSON object%s%s", root ? "" : ": ", root ? "" : ebuf);
	if (!(code = yajl_tree_get(root, code_path, yajl_t_string)))
		return error_set(err, 0, "pool: the request has no \"code\" string");
	/* a key given with the wrong type is an error, not a default */
	for (size_t i = 0; i < root->u.object.len; i++) {
		static const struct { const char *key; yajl_type t; } keys[] = {
			{ "code", yajl_t_string }, { "stdin", yajl_t_string }, { "args", yajl_t_array },
			{ "env", yajl_t_array }, { "timeout", yajl_t_number }, { "output_limit", yajl_t_number },
		};
		const char *k = root->u.object.keys[i];
		yajl_val v = root->u.object.values[i];
		size_t j;
		for (j = 0; j < sizeof(keys) / sizeof(keys[0]) && strcmp(keys[j].key, k) != 0; j++)
			;
		if (j == sizeof(keys) / sizeof(keys[0]))
			return error_set(err, 0, "pool: the request's \"%s\": unknown (code, stdin, args, env, timeout, "
					 "output_limit)", k);
		if (v->type != keys[j].t)
			return error_set(err, 0, "pool: the request's \"%s\": expected a %s", k,
					 keys[j].t == yajl_t_string ? "string" : keys[j].t == yajl_t_array ? "list" : "number");
	}
	args = yajl_tree_get(root, args_path, yajl_t_array);
	env = yajl_tree_get(root, env_path, yajl_t_array);
	q->timeout_us = p->cfg.limits.timeout_us;
	q->output_limit = p->cfg.output.limit_bytes;
	if ((t = yajl_tree_get(root, t_path, yajl_t_number))) {
		double s = YAJL_GET_DOUBLE(t);
		if (!(s >= 0 && s <= 86400 * 365))
			return error_set(err, 0, "pool: \"timeout\": seconds, 0 (none) or more");
		q->timeout_us = (uint64_t)(s * 1e6);
	}
	if ((o = yajl_tree_get(root, o_path, yajl_t_number))) {
		double b = YAJL_GET_DOUBLE(o);
		if (!(b >= 0 && b <= (double)NSRUN_MAX_OUTPUT_LIMIT))
			return error_set(err, 0, "pool: \"output_limit\": bytes, at most 1g");
		q->output_limit = (uint64_t)b;
	}
	if ((in = json_str(root, "stdin"))) {
		q->in_len = strlen(in);
		if (!(q->in = strdup(in)))
			return error_set(err, ENOMEM, "pool: request");
	}
	for (size_t i = 0; i < p->cfg.process.env.n; i++)
		if (strv_push(&envv, p->cfg.process.env.v[i]) < 0)
			goto nomem;
	for (size_t i = 0; env && i < env->u.array.len; i++) {
		yajl_val e = env->u.array.values[i];
		if (!YAJL_IS_STRING(e) || !is_env_assignment(YAJL_GET_STRING(e))) {
			strv_free(&envv);
			return error_set(err, 0, "pool: \"env\"[%zu]: expected \"KEY=VALUE\"", i);
		}
		if (strv_setenv(&envv, YAJL_GET_STRING(e)) < 0)
			goto nomem;
	}
	if (!(g = yajl_gen_alloc(NULL)))
		goto nomem;
	yajl_gen_map_open(g);
	gen_str(g, "code");
	gen_str(g, YAJL_GET_STRING(code));
	gen_str(g, "cwd");
	gen_str(g, p->cfg.process.cwd);
	gen_str(g, "args");
	yajl_gen_array_open(g);
	for (size_t i = 0; args && i < args->u.array.len; i++) {
		yajl_val a = args->u.array.values[i];
		if (!YAJL_IS_STRING(a)) {
			yajl_gen_free(g);
			strv_free(&envv);
			return error_set(err, 0, "pool: \"args\"[%zu]: expected a string", i);
		}
		gen_str(g, YAJL_GET_STRING(a));
	}
	yajl_gen_array_close(g);
	gen_str(g, "env");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < envv.n; i++)
		gen_str(g, envv.v[i]);
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	strv_free(&envv);
	if (yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok || !(q->ctl = malloc(len))) {
		yajl_gen_free(g);
		return error_set(err, ENOMEM, "pool: request");
	}
	memcpy(q->ctl, buf, len);
	q->ctl_len = len;
	yajl_gen_free(g);
	return 0;
nomem:
	strv_free(&envv);
	return error_set(err, ENOMEM, "pool: request");
}

static void zsend(struct pool *p, const char *key, int id)
{
	char msg[64];
	int n = snprintf(msg, sizeof(msg), "{\"%s\": %d}", key, id);
	if (p->zfd >= 0)
		send(p->zfd, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* Hands waiting requests to idle slots, at most --size at once. */
static void dispatch(struct pool *p)
{
	while (p->qhead && p->running < p->size) {
		struct pool_slot *s = NULL;
		struct pool_req *q;
		for (size_t i = 0; i < p->n_slots && !s; i++)
			if (!p->slots[i].req)
				s = &p->slots[i];
		if (!s)
			return;
		q = p->qhead;
		p->qhead = q->next;
		if (!p->qhead)
			p->qtail = NULL;
		p->queued--;
		q->next = NULL;
		q->slot = s;
		s->req = q;
		q->t_start = monotonic_us();
		q->r.out.captured = q->r.err_out.captured = true;
		p->running++;
		zsend(p, "take", s->id);
		if (!q->in_len && s->in >= 0) {
			close(s->in);
			s->in = -1;
		}
	}
}

static void client_request(struct pool *p, int ci, char *text)
{
	struct pool_req *q = calloc(1, sizeof(*q));
	struct nsrun_error err = { 0 };

	if (!q) {
		free(text);
		return;
	}
	q->client = ci;
	q->t_arrive = monotonic_us();
	q->timeout_us = p->cfg.limits.timeout_us;
	q->output_limit = p->cfg.output.limit_bytes;
	p->clients[ci].req = q;
	if (req_parse(p, q, text, &err) < 0) {
		free(text);
		q->r.status = NSRUN_STATUS_ERROR;
		q->r.error = err;
		q->exited = true;
		reply(p, q);
		return;
	}
	free(text);
	if (p->queued >= p->queue_max) {
		char msg[128];
		snprintf(msg, sizeof(msg), "pool: busy: %u requests run and %u wait, the most --queue allows",
			 p->running, p->queued);
		req_fail(p, q, EAGAIN, msg, "send it again later, or start the pool with a larger --size or --queue");
		return;
	}
	if (p->qtail)
		p->qtail->next = q;
	else
		p->qhead = q;
	p->qtail = q;
	p->queued++;
	dispatch(p);
}

static void client_close(struct pool *p, int ci)
{
	struct pool_client *c = &p->clients[ci];

	if (c->req)
		c->req->client = -1;    /* it runs to its end; the answer has no one to go to */
	c->req = NULL;
	close(c->fd);
	c->fd = -1;
	free(c->buf);
	c->buf = NULL;
}

static void client_read(struct pool *p, int ci)
{
	struct pool_client *c = &p->clients[ci];
	ssize_t n;

	if (c->hdr_have < 4) {
		n = read(c->fd, c->hdr + c->hdr_have, 4 - c->hdr_have);
		if (n <= 0) {
			if (n == 0 || (errno != EAGAIN && errno != EINTR))
				client_close(p, ci);
			return;
		}
		c->hdr_have += (size_t)n;
		if (c->hdr_have < 4)
			return;
		c->need = (uint32_t)c->hdr[0] << 24 | (uint32_t)c->hdr[1] << 16 | (uint32_t)c->hdr[2] << 8 | c->hdr[3];
		if (c->need > POOL_MAX_FRAME || !(c->buf = malloc(c->need + 1))) {
			client_close(p, ci);
			return;
		}
		c->have = 0;
	}
	n = c->need > c->have ? read(c->fd, c->buf + c->have, c->need - c->have) : 0;
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0 || (n == 0 && c->need > c->have)) {
		client_close(p, ci);
		return;
	}
	c->have += (size_t)n;
	if (c->have < c->need)
		return;
	c->buf[c->need] = '\0';
	c->hdr_have = 0;
	client_request(p, ci, steal_ptr(&c->buf));
}

/* Reads one stream of a running request; past its limit, keeps nothing more (and
 * with --output-limit-action kill ends the request). */
static void req_read(struct pool *p, struct pool_req *q, int *fd, struct result_stream *st)
{
	char buf[65536];
	ssize_t n = read(*fd, buf, sizeof(buf));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		close(*fd);
		*fd = -1;
		return;
	}
	st->total_bytes += (uint64_t)n;
	if (st->len < q->output_limit) {
		size_t keep = (size_t)n;
		char *d;
		if (st->len + keep > q->output_limit)
			keep = (size_t)(q->output_limit - st->len);
		if (!(d = realloc(st->data, st->len + keep + 1)))
			return;
		st->data = d;
		memcpy(d + st->len, buf, keep);
		st->len += keep;
		d[st->len] = '\0';
	}
	if (st->total_bytes > q->output_limit) {
		st->truncated = true;
		if (p->cfg.output.limit_kill && !q->killed_for_output && !q->timed_out) {
			q->killed_for_output = true;
			zsend(p, "kill", q->slot->id);
		}
	}
}

static void req_write(int *fd, const char *buf, size_t len, size_t *off)
{
	ssize_t n = write(*fd, buf + *off, len - *off);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0)
		*off += (size_t)n;
	if (n < 0 || *off == len) {
		close(*fd);
		*fd = -1;
	}
}

/* The zygote's report of a slot's end: {"exit": id, "report": {"status": W, ...} | null}. */
static void slot_exited(struct pool *p, yajl_val m, int id)
{
	const char *st_path[] = { "report", "status", NULL }, *u_path[] = { "report", "utime", NULL },
		   *s_path[] = { "report", "stime", NULL }, *rss_path[] = { "report", "maxrss", NULL };
	yajl_val st = yajl_tree_get(m, st_path, yajl_t_number);
	struct pool_slot *s = NULL;
	struct pool_req *q;

	for (size_t i = 0; i < p->n_slots && !s; i++)
		if (p->slots[i].id == id)
			s = &p->slots[i];
	if (!s)
		return;
	if (!(q = s->req)) {
		/* an idle slot ended: its set-up failed (the zygote's stderr says why) */
		slot_remove(p, s);
		return;
	}
	q->exited = true;
	p->running--;
	if (q->timed_out) {
		q->r.status = NSRUN_STATUS_TIMED_OUT;
		q->r.timeout_us = q->timeout_us;
	} else if (q->killed_for_output) {
		q->r.status = NSRUN_STATUS_OUTPUT_LIMIT;
	} else if (!st) {
		q->r.status = NSRUN_STATUS_ERROR;
		error_set_stage(&q->r.error, STAGE_PREPARE, 0, "pool: the request's sandbox ended without a status");
	} else {
		int w = (int)YAJL_GET_INTEGER(st);
		yajl_val u = yajl_tree_get(m, u_path, yajl_t_number), sy = yajl_tree_get(m, s_path, yajl_t_number),
			 rss = yajl_tree_get(m, rss_path, yajl_t_number);
		if (WIFSIGNALED(w)) {
			q->r.status = NSRUN_STATUS_SIGNALED;
			q->r.signal = WTERMSIG(w);
		} else {
			q->r.status = NSRUN_STATUS_EXITED;
			q->r.exit_code = WEXITSTATUS(w);
		}
		q->r.cpu_user_us = u ? (uint64_t)(YAJL_GET_DOUBLE(u) * 1e6) : 0;
		q->r.cpu_system_us = sy ? (uint64_t)(YAJL_GET_DOUBLE(sy) * 1e6) : 0;
		q->r.max_rss_kib = rss ? (uint64_t)YAJL_GET_INTEGER(rss) : 0;
	}
	dispatch(p);
}

static void zygote_message(struct pool *p)
{
	char buf[4096];
	char cbuf[CMSG_SPACE(4 * sizeof(int))];
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) - 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	int fds[4] = { -1, -1, -1, -1 };
	size_t nfds = 0;
	ssize_t n = recvmsg(p->zfd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	__attribute__((cleanup(yajl_tree_freep))) yajl_val m = NULL;
	const char *ready_path[] = { "ready", NULL }, *exit_path[] = { "exit", NULL }, *hello_path[] = { "hello", NULL };
	yajl_val v;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		close(p->zfd);          /* the container's exit (SIGCHLD) does the rest */
		p->zfd = -1;
		return;
	}
	buf[n] = '\0';
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
			size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (size_t i = 0; i < k; i++) {
				int fd;
				memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
				if (nfds < 4)
					fds[nfds++] = fd;
				else
					close(fd);
			}
		}
	m = yajl_tree_parse(buf, NULL, 0);
	if (m && (v = yajl_tree_get(m, ready_path, yajl_t_number)) && nfds == 4) {
		struct pool_slot *s = realloc(p->slots, (p->n_slots + 1) * sizeof(*s));
		if (s) {
			p->slots = s;
			for (size_t i = 0; i < p->n_slots; i++)
				if (s[i].req)
					s[i].req->slot = &s[i];
			s = &p->slots[p->n_slots++];
			*s = (struct pool_slot){ .id = (int)YAJL_GET_INTEGER(v), .ctl = fds[0], .in = fds[1],
						 .out = fds[2], .err = fds[3] };
			for (size_t i = 0; i < 4; i++)
				fcntl(fds[i], F_SETFL, O_NONBLOCK);
			dispatch(p);
			return;
		}
	}
	for (size_t i = 0; i < nfds; i++)
		close(fds[i]);
	if (!m)
		return;
	if ((v = yajl_tree_get(m, exit_path, yajl_t_number)))
		slot_exited(p, m, (int)YAJL_GET_INTEGER(v));
	else if (yajl_tree_get(m, hello_path, yajl_t_number)) {
		p->zready = true;
		p->start_fails = 0;
		if (!p->announced) {
			printf("%s\n", p->socket_path);
			fflush(stdout);
			p->announced = true;
		}
		dispatch(p);
	}
}

/* ---- set-up --------------------------------------------------------------- */

static bool take_opt(char **argv, int argc, int *i, const char *name, const char **val)
{
	size_t n = strlen(name);

	if (strncmp(argv[*i], name, n) != 0)
		return false;
	if (argv[*i][n] == '=') {
		*val = argv[*i] + n + 1;
		return true;
	}
	if (argv[*i][n] != '\0')
		return false;
	*val = *i + 1 < argc ? argv[++*i] : NULL;
	return true;
}

/* Splits our options from the run options; the latter go to cli_parse and to the
 * container's nsrun.  Returns 0, 1 for --help, or -1 with err. */
static int parse_args(struct pool *p, int argc, char **argv, const char **preload, struct strv *run_args,
		      struct nsrun_error *err)
{
	const char *v;
	uint64_t n;

	p->size = 2;
	p->queue_max = 64;
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			return 1;
		if (take_opt(argv, argc, &i, "--size", &v)) {
			if (!v || parse_uint("--size", v, POOL_MAX_SIZE, &n, err) < 0 || !n)
				return v && err->msg[0] ? -1 : error_set(err, 0, "--size: 1 to %d", POOL_MAX_SIZE);
			p->size = (unsigned)n;
		} else if (take_opt(argv, argc, &i, "--queue", &v)) {
			if (!v || parse_uint("--queue", v, 100000, &n, err) < 0)
				return v ? -1 : error_set(err, 0, "--queue: needs a value");
			p->queue_max = (unsigned)n;
		} else if (take_opt(argv, argc, &i, "--preload", &v)) {
			if (!v || !*v || strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.,") !=
						 strlen(v))
				return error_set(err, 0, "--preload: module names separated by commas");
			*preload = v;
		} else if (take_opt(argv, argc, &i, "--socket", &v)) {
			if (!v || !*v)
				return error_set(err, 0, "--socket: needs a path");
			free(p->socket_path);
			p->socket_path = strdup(v);
		} else if (strcmp(argv[i], "--") == 0) {
			return error_set(err, 0, "pool: no command: the zygote is the image's python3 (see nsrun pool "
					 "--help)");
		} else if (strv_push(run_args, argv[i]) < 0) {
			return error_set(err, ENOMEM, "arguments");
		}
	}
	return 0;
}

/* The run options as a run takes them, and resolved as main.c's resolve() does
 * for what a request needs of them (environment, workdir). */
static int parse_run_options(struct pool *p, struct strv *run_args, struct nsrun_error *err)
{
	struct strv a = { 0 };
	int rc;

	if (strv_push(&a, "nsrun") < 0)
		return error_set(err, ENOMEM, "arguments");
	for (size_t i = 0; i < run_args->n; i++)
		if (strv_push(&a, run_args->v[i]) < 0)
			goto nomem;
	if (strv_push(&a, "--") < 0 || strv_push(&a, "python3") < 0)
		goto nomem;
	rc = cli_parse(&p->cfg, (int)a.n, a.v, err);
	strv_free(&a);
	if (rc != CLI_RUN)
		return rc < 0 ? -1 : error_set(err, 0, "pool: --help and --version go first (nsrun pool --help)");
	if (!p->cfg.image)
		return error_set(err, 0, "pool: no image: use --image NAME (installed images: nsrun images)");
	if (p->cfg.service.detach || p->cfg.output.json_path || p->cfg.tty || p->cfg.n_publish)
		return error_set(err, 0, "pool: -d, --json, -t and -p are a run's, not a pool's");
	if (p->cfg.isolation != NSRUN_ISOLATION_AUTO && p->cfg.isolation != NSRUN_ISOLATION_FULL)
		return error_set(err, 0, "pool: a pool needs --isolation full (its slots are namespaces of their own)");
	if (config_env_defaults(&p->cfg, err) < 0 || image_resolve(&p->cfg, err) < 0)
		return -1;
	for (size_t i = 0; i < p->cfg.process.user_env.n; i++)
		if (strv_setenv(&p->cfg.process.env, p->cfg.process.user_env.v[i]) < 0)
			return error_set(err, ENOMEM, "environment");
	if (!p->cfg.process.cwd && !(p->cfg.process.cwd = strdup("/")))
		return error_set(err, ENOMEM, "workdir");
	/* never silent: a cold run would have Landlock here, a request has not (yet) */
	if (p->cfg.security.landlock && landlock_abi() > 0) {
		if (p->cfg.security.strict)
			return error_set(err, 0, "pool: --strict: a request runs without Landlock (the file system "
					 "stays read-only by its mounts; docs/pool.md)");
		fprintf(stderr, "nsrun: warning: pool: a request runs without Landlock, which a run would have here "
			"(the file system stays read-only by its mounts; docs/pool.md)\n");
	}
	return 0;
nomem:
	strv_free(&a);
	return error_set(err, ENOMEM, "arguments");
}

/* The container's command line: the run options, then what a pool needs. */
static int child_args(struct pool *p, struct strv *run_args, struct nsrun_error *err)
{
	char vol[192], pids[32], mem[32];
	uint64_t k = 2ULL * p->size + 1;
	const char *tail[] = { "--timeout", "0", "--isolation", "full", "--allow-nested", "--pids-limit", pids,
			       "--memory", mem, "-v", vol, "--", "python3", "-I", POOL_CHANNEL "/zygote.py",
			       POOL_CHANNEL };

	/* the container holds the zygote and 2 x --size slots, each under its own limits */
	snprintf(pids, sizeof(pids), "%llu", p->cfg.limits.pids ? (unsigned long long)(p->cfg.limits.pids * k + 16) : 0ULL);
	snprintf(mem, sizeof(mem), "%llu", (unsigned long long)p->cfg.limits.memory_bytes);
	snprintf(vol, sizeof(vol), "%s:%s:ro", p->chan, POOL_CHANNEL);
	if (strv_push(&p->child_argv, "nsrun") < 0)
		return error_set(err, ENOMEM, "arguments");
	for (size_t i = 0; i < run_args->n; i++)
		if (strv_push(&p->child_argv, run_args->v[i]) < 0)
			return error_set(err, ENOMEM, "arguments");
	for (size_t i = 0; i < sizeof(tail) / sizeof(tail[0]); i++)
		if (strv_push(&p->child_argv, tail[i]) < 0)
			return error_set(err, ENOMEM, "arguments");
	return 0;
}

static int pool_setup(struct pool *p, const char *preload, struct strv *run_args, struct nsrun_error *err)
{
	const char *tmp = getenv("TMPDIR");
	sigset_t mask;

	snprintf(p->dir, sizeof(p->dir), "%s/nsrun-pool-XXXXXX", tmp && *tmp && strlen(tmp) < 40 ? tmp : "/tmp");
	if (!mkdtemp(p->dir)) {
		p->dir[0] = '\0';
		return error_set(err, errno, "pool: make a private directory");
	}
	snprintf(p->chan, sizeof(p->chan), "%s/chan", p->dir);
	snprintf(p->zsock, sizeof(p->zsock), "%s/zygote.sock", p->chan);
	/* the payload reads it through the bind mount: "other" may search, not list */
	if (mkdir(p->chan, 0711) < 0 || chmod(p->chan, 0711) < 0)
		return error_set(err, errno, "pool: make %s", p->chan);
	if (child_args(p, run_args, err) < 0)
		return -1;
	if (write_at(p->chan, "zygote.py", nsrun_pool_zygote, (size_t)nsrun_pool_zygote_size, 0644, err) < 0 ||
	    write_zygote_config(p, preload, err) < 0 || write_seccomp(p, err) < 0)
		return -1;
	if (!p->socket_path) {
		if (asprintf(&p->socket_path, "%s/pool.sock", p->dir) < 0) {
			p->socket_path = NULL;
			return error_set(err, ENOMEM, "pool: socket path");
		}
	}
	p->listen_fd = listen_unix(p->socket_path, SOCK_STREAM, 0600, err);
	if (p->listen_fd < 0)
		return -1;
	p->socket_ours = true;
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGPIPE);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0 || (p->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
		return error_set(err, errno, "pool: signalfd");
	{
		struct stat st;
		p->watch_stdin = fstat(0, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
	}
	return zygote_spawn(p, err);
}

static void pool_teardown(struct pool *p)
{
	if (p->child > 0) {
		int status;
		kill(p->child, SIGTERM); /* its nsrun ends the container and takes all down */
		waitpid(p->child, &status, 0);
	}
	for (int i = 0; i < POOL_MAX_CLIENTS; i++)
		if (p->clients[i].fd >= 0)
			client_close(p, i);
	while (p->qhead) {
		struct pool_req *q = p->qhead;
		p->qhead = q->next;
		q->client = -1;
		q->slot = NULL;
		result_free(&q->r);
		free(q->ctl);
		free(q->in);
		free(q);
	}
	while (p->n_slots) {
		struct pool_slot *s = &p->slots[p->n_slots - 1];
		struct pool_req *q = s->req;
		slot_remove(p, s);
		if (q) {
			q->client = -1;
			q->slot = NULL;
			result_free(&q->r);
			free(q->ctl);
			free(q->in);
			free(q);
		}
	}
	free(p->slots);
	{
		int *fds[] = { &p->zfd, &p->zlisten, &p->listen_fd, &p->sigfd };
		for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
			if (*fds[i] >= 0)
				close(*fds[i]);
	}
	if (p->socket_ours)
		unlink(p->socket_path);
	if (p->dir[0]) {
		const char *names[] = { "zygote.sock", "zygote.py", "config.json", "seccomp.bpf" };
		char path[256];
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			snprintf(path, sizeof(path), "%s/%s", p->chan, names[i]);
			unlink(path);
		}
		rmdir(p->chan);
		rmdir(p->dir);
	}
	free(p->socket_path);
	strv_free(&p->child_argv);
	config_free(&p->cfg);
}

/* ---- the loop ------------------------------------------------------------ */

static uint64_t next_deadline(struct pool *p)
{
	uint64_t d = UINT64_MAX;

	for (size_t i = 0; i < p->n_slots; i++) {
		struct pool_req *q = p->slots[i].req;
		if (q && q->timeout_us && !q->timed_out && q->t_start + q->timeout_us < d)
			d = q->t_start + q->timeout_us;
	}
	return d;
}

static void check_deadlines(struct pool *p)
{
	uint64_t now = monotonic_us();

	for (size_t i = 0; i < p->n_slots; i++) {
		struct pool_req *q = p->slots[i].req;
		if (q && q->timeout_us && !q->timed_out && !q->exited && now >= q->t_start + q->timeout_us) {
			q->timed_out = true;
			zsend(p, "kill", p->slots[i].id);
		}
	}
}

/* What poll(2) watched, to find its entry again. */
enum pool_what { W_SIG, W_STDIN, W_LISTEN, W_ZLISTEN, W_ZFD, W_CLIENT, W_CTL, W_IN, W_OUT, W_ERR };

struct pool_watch {
	enum pool_what what;
	int index;
};

static void add(struct pollfd *fds, struct pool_watch *w, size_t *n, int fd, short ev, enum pool_what what, int index)
{
	fds[*n] = (struct pollfd){ .fd = fd, .events = ev };
	w[*n] = (struct pool_watch){ what, index };
	(*n)++;
}

static void on_signal(struct pool *p, struct nsrun_error *err)
{
	struct signalfd_siginfo si;

	while (read(p->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			int status;
			if (p->child > 0 && waitpid(p->child, &status, WNOHANG) == p->child)
				zygote_ended(p, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), err);
		} else if (si.ssi_signo != SIGPIPE) {
			p->stopping = true;
		}
	}
}

static int pool_loop(struct pool *p, struct nsrun_error *err)
{
	size_t cap = 0;
	_cleanup_free_ struct pollfd *fds = NULL;
	_cleanup_free_ struct pool_watch *w = NULL;

	while (!p->stopping) {
		size_t n = 0, need = 5 + POOL_MAX_CLIENTS + 4 * p->n_slots;
		uint64_t d = next_deadline(p), now;
		int timeout = -1;

		if (need > cap) {
			struct pollfd *nf = realloc(fds, need * sizeof(*fds));
			struct pool_watch *nw = nf ? realloc(w, need * sizeof(*w)) : NULL;
			if (nf)
				fds = nf;
			if (!nw)
				return error_set(err, ENOMEM, "pool");
			w = nw;
			cap = need;
		}
		add(fds, w, &n, p->sigfd, POLLIN, W_SIG, 0);
		if (p->watch_stdin)
			add(fds, w, &n, 0, POLLIN, W_STDIN, 0);
		add(fds, w, &n, p->listen_fd, POLLIN, W_LISTEN, 0);
		if (p->zlisten >= 0)
			add(fds, w, &n, p->zlisten, POLLIN, W_ZLISTEN, 0);
		if (p->zfd >= 0)
			add(fds, w, &n, p->zfd, POLLIN, W_ZFD, 0);
		for (int i = 0; i < POOL_MAX_CLIENTS; i++)
			if (p->clients[i].fd >= 0)
				/* one request at a time per connection: the next is read after the answer */
				add(fds, w, &n, p->clients[i].fd, p->clients[i].req ? 0 : POLLIN, W_CLIENT, i);
		for (size_t i = 0; i < p->n_slots; i++) {
			struct pool_slot *s = &p->slots[i];
			if (!s->req)
				continue;
			if (s->ctl >= 0)
				add(fds, w, &n, s->ctl, POLLOUT, W_CTL, (int)i);
			if (s->in >= 0)
				add(fds, w, &n, s->in, POLLOUT, W_IN, (int)i);
			if (s->out >= 0)
				add(fds, w, &n, s->out, POLLIN, W_OUT, (int)i);
			if (s->err >= 0)
				add(fds, w, &n, s->err, POLLIN, W_ERR, (int)i);
		}
		now = monotonic_us();
		if (d != UINT64_MAX)
			timeout = d <= now ? 0 : (int)((d - now) / 1000 + 1);
		if (poll(fds, n, timeout) < 0) {
			if (errno == EINTR)
				continue;
			return error_set(err, errno, "pool: poll");
		}
		for (size_t k = 0; k < n && !p->stopping; k++) {
			struct pool_slot *s;
			if (!fds[k].revents)
				continue;
			switch (w[k].what) {
			case W_SIG:
				on_signal(p, err);
				break;
			case W_STDIN: {
				char b[256];
				if (read(0, b, sizeof(b)) == 0)
					p->stopping = true;
				break;
			}
			case W_LISTEN: {
				int c = accept4(p->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK), i;
				for (i = 0; c >= 0 && i < POOL_MAX_CLIENTS && p->clients[i].fd >= 0; i++)
					;
				if (c >= 0 && i == POOL_MAX_CLIENTS)
					close(c);
				else if (c >= 0)
					p->clients[i] = (struct pool_client){ .fd = c };
				break;
			}
			case W_ZLISTEN:
				/* the first connection is the zygote's; then no one else may come */
				p->zfd = accept4(p->zlisten, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
				if (p->zfd >= 0) {
					close(p->zlisten);
					p->zlisten = -1;
					unlink(p->zsock);
				}
				break;
			case W_ZFD:
				if (p->zfd >= 0)
					zygote_message(p);
				break;
			case W_CLIENT:
				if (p->clients[w[k].index].fd >= 0 && !p->clients[w[k].index].req)
					client_read(p, w[k].index);
				else if (p->clients[w[k].index].fd >= 0 && (fds[k].revents & (POLLHUP | POLLERR)))
					client_close(p, w[k].index);
				break;
			default:
				/* slots move in p->slots as others end: find it by its fd */
				if ((size_t)w[k].index >= p->n_slots)
					break;
				s = &p->slots[w[k].index];
				if (!s->req)
					break;
				if (w[k].what == W_CTL && s->ctl == fds[k].fd)
					req_write(&s->ctl, s->req->ctl, s->req->ctl_len, &s->req->ctl_off);
				else if (w[k].what == W_IN && s->in == fds[k].fd)
					req_write(&s->in, s->req->in, s->req->in_len, &s->req->in_off);
				else if (w[k].what == W_OUT && s->out == fds[k].fd)
					req_read(p, s->req, &s->out, &s->req->r.out);
				else if (w[k].what == W_ERR && s->err == fds[k].fd)
					req_read(p, s->req, &s->err, &s->req->r.err_out);
				break;
			}
		}
		check_deadlines(p);
		/* a request is answered once its slot ended and its output is read to the end */
		for (size_t i = 0; i < p->n_slots;) {
			struct pool_slot *s = &p->slots[i];
			if (s->req && s->req->exited && s->out < 0 && s->err < 0) {
				reply(p, s->req);       /* removes the slot: i now holds another */
				dispatch(p);
				continue;
			}
			i++;
		}
	}
	return err->msg[0] ? -1 : 0;
}

int pool_main(int argc, char **argv)
{
	struct pool p = { .zlisten = -1, .zfd = -1, .listen_fd = -1, .sigfd = -1 };
	struct nsrun_error err = { 0 };
	struct strv run_args = { 0 };
	const char *preload = NULL;
	int rc;

	for (int i = 0; i < POOL_MAX_CLIENTS; i++)
		p.clients[i].fd = -1;
	if (config_init(&p.cfg, &err) < 0) {
		error_print(&err, stderr);
		return 125;
	}
	err.stage = STAGE_CONFIG;
	rc = parse_args(&p, argc, argv, &preload, &run_args, &err);
	if (rc == 1) {
		fputs(pool_usage, stdout);
		strv_free(&run_args);
		config_free(&p.cfg);
		return 0;
	}
	if (rc < 0 || parse_run_options(&p, &run_args, &err) < 0 || pool_setup(&p, preload, &run_args, &err) < 0 ||
	    pool_loop(&p, &err) < 0) {
		strv_free(&run_args);
		error_print(&err, stderr);
		pool_teardown(&p);
		return 125;
	}
	strv_free(&run_args);
	pool_teardown(&p);
	return 0;
}
