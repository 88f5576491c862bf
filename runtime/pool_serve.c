/* pool_serve.c - the pool's loop: clients, requests, slots, the zygote's messages
 * (see pool.h; pool_internal.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "cleanup.h"
#include "pool_internal.h"
#include "sys.h"

static void slot_close(struct pool_slot *s)
{
	int *fds[] = { &s->ctl, &s->in, &s->out, &s->err, &s->stat };
	for (size_t i = 0; i < 5; i++)
		if (*fds[i] >= 0) {
			close(*fds[i]);
			*fds[i] = -1;
		}
	memwatch_close(&s->mw);
}

/* Starts measuring the memory of the request on slot s once R is known: the first
 * sample POOL_MEMWATCH_FIRST_US after its start (memwatch.h: every process of the
 * slot's pid namespace through the slot's own /proc, its memfds, /tmp and /dev/shm). */
static void slot_watch(struct pool *p, struct pool_slot *s)
{
	struct pool_req *q = s->req;

	if (!q || q->exited || !p->measure || s->r_pid <= 0 || !q->memory_bytes || memwatch_armed(&s->mw))
		return;
	memwatch_close(&s->mw);
	memwatch_init(&s->mw, q->memory_bytes, NULL, &p->slot_plan, false);
	s->mw.no_memfds = true; /* its filter refuses memfd_create (seccomp.c) */
	s->mw.stall_us = p->cfg.limits.memory_sample_timeout_us;
	memwatch_arm(&s->mw, s->r_pid, q->t_start + POOL_MEMWATCH_FIRST_US);
	q->measured = true;
}

void pool_slot_remove(struct pool *p, struct pool_slot *s)
{
	struct pool_slot *last = &p->slots[p->n_slots - 1];

	slot_close(s);
	if (s->req)
		s->req->slot = NULL;
	s->req = NULL;
	p->n_slots--;
	/* the last slot moves into the hole; removing the last one itself moves nothing
	 * (its request must not point back at the removed entry) */
	if (s != last) {
		*s = *last;
		if (s->req)
			s->req->slot = s;
	}
}

void pool_req_fail(struct pool *p, struct pool_req *q, int errnum, const char *msg, const char *hint)
{
	q->r.status = NSRUN_STATUS_ERROR;
	error_set_stage(&q->r.error, STAGE_PREPARE, errnum, "%s", msg);
	q->r.error.hint = hint;
	q->exited = true;
	pool_reply(p, q);
}

/* True once q's slot was told to die (its timeout, output or memory limit, its
 * memory not measurable, its client gone): its output is bounded by what its pipes hold. */
static bool slot_killed(const struct pool_req *q)
{
	return q->timed_out || q->killed_for_output || q->killed_for_memory || q->cancelled || q->r.error.msg[0];
}

static void zflush(struct pool *p)
{
	size_t done = 0;

	while (done < p->zq_n && p->zfd >= 0) {
		if (send(p->zfd, p->zq[done], strlen(p->zq[done]), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != ENOBUFS)
				done = p->zq_n;         /* the zygote is gone: its end does the rest */
			break;
		}
		done++;
	}
	memmove(p->zq, p->zq + done, (p->zq_n - done) * sizeof(*p->zq));
	p->zq_n -= done;
}

static void zsend(struct pool *p, const char *key, int id)
{
	if (p->zfd < 0)
		return;
	if (p->zq_n == p->zq_cap) {
		size_t cap = p->zq_cap ? 2 * p->zq_cap : 16;
		char(*q)[40] = realloc(p->zq, cap * sizeof(*q));
		if (!q)
			return;
		p->zq = q;
		p->zq_cap = cap;
	}
	snprintf(p->zq[p->zq_n++], sizeof(*p->zq), "{\"%s\": %d}", key, id);
	zflush(p);
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
		slot_watch(p, s);
		if (!q->in_len && s->in >= 0) {
			close(s->in);
			s->in = -1;
		}
	}
}

static void client_request(struct pool *p, int ci, char *text, size_t len)
{
	struct pool_req *q = calloc(1, sizeof(*q));
	struct nsrun_error err = { 0 };

	if (!q) {
		free(text);
		return;
	}
	q->client = ci;
	q->t_arrive = monotonic_us();
	/* the pool's limits until the request's own are read: a request refused
	 * before that is answered with them, as pool_refuse answers */
	q->timeout_us = p->cfg.limits.timeout_us;
	q->output_limit = p->cfg.output.limit_bytes;
	q->memory_bytes = p->cfg.limits.memory_bytes;
	q->pids = p->cfg.limits.pids;
	p->clients[ci].req = q;
	if (pool_req_parse(p, q, text, len, &err) < 0) {
		free(text);
		q->r.status = NSRUN_STATUS_ERROR;
		q->r.error = err;
		q->exited = true;
		pool_reply(p, q);
		return;
	}
	free(text);
	if (p->queued >= p->queue_max) {
		char msg[128];
		snprintf(msg, sizeof(msg), "pool: busy: %u requests run and %u wait, the most --queue allows",
			 p->running, p->queued);
		pool_req_fail(p, q, EAGAIN, msg, "send it again later, or start the pool with a larger --size or --queue");
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

/* The client of q went away or shut its side of the connection (nsrun run --pool
 * got SIGINT or SIGTERM): a running request's sandbox is killed, its answer sent
 * once it is gone; a waiting one leaves the queue, answered at once. */
static void req_cancel(struct pool *p, struct pool_req *q)
{
	if (q->exited || q->cancelled)
		return;
	q->cancelled = true;
	if (q->slot) {
		zsend(p, "kill", q->slot->id);
		return;
	}
	for (struct pool_req **pp = &p->qhead; *pp; pp = &(*pp)->next)
		if (*pp == q) {
			*pp = q->next;
			if (p->qtail == q) {
				p->qtail = NULL;
				for (struct pool_req *r = p->qhead; r; r = r->next)
					p->qtail = r;
			}
			p->queued--;
			q->next = NULL;
			pool_req_fail(p, q, ECANCELED, "pool: the request was cancelled before it ran", NULL);
			return;
		}
}

void pool_client_close(struct pool *p, int ci)
{
	struct pool_client *c = &p->clients[ci];
	struct pool_req *q = c->req;

	c->req = NULL;
	close(c->fd);
	c->fd = -1;
	free(c->buf);
	c->buf = NULL;
	free(c->obuf);
	c->obuf = NULL;
	c->olen = c->ooff = 0;
	c->eof = false;
	c->hdr_have = 0;
	if (q) {
		q->client = -1;         /* the answer has no one to go to: nor does its sandbox run on */
		req_cancel(p, q);
	}
}

/* A client with a request: the end of its side cancels the request (a byte it
 * sends meanwhile means nothing: one request at a time). */
static void client_watch(struct pool *p, int ci)
{
	struct pool_client *c = &p->clients[ci];
	char b[64];
	ssize_t n = read(c->fd, b, sizeof(b));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		pool_client_close(p, ci);
	} else if (n == 0) {
		c->eof = true;
		req_cancel(p, c->req);
	}
}

void pool_client_flush(struct pool *p, int ci)
{
	struct pool_client *c = &p->clients[ci];
	ssize_t n = send(c->fd, c->obuf + c->ooff, c->olen - c->ooff, MSG_NOSIGNAL | MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		pool_client_close(p, ci);
		return;
	}
	if (n > 0)
		c->out_since = monotonic_us();
	c->ooff += (size_t)n;
	if (c->ooff == c->olen) {
		c->ooff = c->olen = 0;
		if (c->eof && !c->req)
			pool_client_close(p, ci);  /* it sends nothing more */
	}
}

int pool_client_queue(struct pool *p, int ci, const void *a, size_t alen, const void *b, size_t blen)
{
	struct pool_client *c = &p->clients[ci];
	char *buf;

	if (c->ooff) {
		memmove(c->obuf, c->obuf + c->ooff, c->olen - c->ooff);
		c->olen -= c->ooff;
		c->ooff = 0;
	}
	if (!(buf = realloc(c->obuf, c->olen + alen + blen)))
		return -1;
	c->obuf = buf;
	memcpy(buf + c->olen, a, alen);
	if (blen)
		memcpy(buf + c->olen + alen, b, blen);
	if (!c->olen)
		c->out_since = monotonic_us();
	c->olen += alen + blen;
	return 0;
}

/* Queues a stream frame (kind, then len bytes of data) for client ci.  Returns 0
 * or -1 (no memory: the frame is lost, as output past a full pipe would not be). */
static int client_frame(struct pool *p, int ci, unsigned char kind, const char *data, size_t len)
{
	size_t n = len + 1;
	unsigned char hdr[5] = { (unsigned char)(n >> 24), (unsigned char)(n >> 16), (unsigned char)(n >> 8),
				 (unsigned char)n, kind };

	return pool_client_queue(p, ci, hdr, sizeof(hdr), data, len);
}

static void client_read(struct pool *p, int ci)
{
	struct pool_client *c = &p->clients[ci];
	ssize_t n;

	if (c->hdr_have < 4) {
		n = read(c->fd, c->hdr + c->hdr_have, 4 - c->hdr_have);
		if (n == 0 && !c->hdr_have && c->olen > c->ooff) {
			c->eof = true;  /* closed once its answer is out (pool_client_flush) */
			return;
		}
		if (n <= 0) {
			if (n == 0 || (errno != EAGAIN && errno != EINTR))
				pool_client_close(p, ci);
			return;
		}
		c->hdr_have += (size_t)n;
		c->in_since = monotonic_us();
		if (c->hdr_have < 4)
			return;
		c->need = (uint32_t)c->hdr[0] << 24 | (uint32_t)c->hdr[1] << 16 | (uint32_t)c->hdr[2] << 8 | c->hdr[3];
		if (c->need > POOL_MAX_FRAME || !(c->buf = malloc(c->need + 1))) {
			char msg[96];
			int fd = steal_fd(&c->fd);
			if (c->need > POOL_MAX_FRAME)
				snprintf(msg, sizeof(msg), "pool: a request of %u bytes: more than %u MiB, the most it takes",
					 (unsigned)c->need, POOL_MAX_FRAME >> 20);
			else
				snprintf(msg, sizeof(msg), "pool: a request of %u bytes: no memory for it", (unsigned)c->need);
			pool_client_close(p, ci);
			pool_refuse(p, fd, 0, msg, "send large input as a file in a volume of the pool's, not in the request");
			return;
		}
		c->have = 0;
	}
	n = c->need > c->have ? read(c->fd, c->buf + c->have, c->need - c->have) : 0;
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0 || (n == 0 && c->need > c->have)) {
		pool_client_close(p, ci);
		return;
	}
	c->have += (size_t)n;
	c->in_since = monotonic_us();
	if (c->have < c->need)
		return;
	c->buf[c->need] = '\0';
	c->hdr_have = 0;
	client_request(p, ci, steal_ptr(&c->buf), c->need);
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
	if (q->stream) {
		/* sent as it comes, nothing kept: the client prints it (and says what was cut) */
		int k = st == &q->r.out ? 0 : 1;
		size_t keep = (size_t)n;
		if (q->streamed[k] >= q->output_limit)
			keep = 0;
		else if (q->streamed[k] + keep > q->output_limit)
			keep = (size_t)(q->output_limit - q->streamed[k]);
		if (keep && q->client >= 0)
			client_frame(p, q->client, k ? POOL_FRAME_STDERR : POOL_FRAME_STDOUT, buf, keep);
		q->streamed[k] += keep;
	} else if (st->len < q->output_limit) {
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
		if (p->cfg.output.limit_kill && !slot_killed(q)) {
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

/* A slot ended: m is R's report of P's end ({"status": W, "utime": s, "stime": s,
 * "maxrss": KiB}), or NULL when its pipe closed without one (the slot was killed,
 * or its set-up failed). */
static void slot_exited(struct pool *p, struct pool_slot *s, yajl_val m)
{
	const char *st_path[] = { "status", NULL }, *u_path[] = { "utime", NULL }, *s_path[] = { "stime", NULL },
		   *rss_path[] = { "maxrss", NULL };
	yajl_val st = m ? yajl_tree_get(m, st_path, yajl_t_number) : NULL;
	struct pool_req *q;

	if (!(q = s->req)) {
		/* an idle slot ended: its set-up failed (the zygote's stderr says why) */
		pool_slot_remove(p, s);
		return;
	}
	q->exited = true;
	p->running--;
	memwatch_close(&s->mw);         /* its figures are final then */
	if (s->mw.samples)
		q->r.memory_peak_bytes = s->mw.peak_bytes;
	if (q->timed_out) {
		q->r.status = NSRUN_STATUS_TIMED_OUT;
		q->r.timeout_us = q->timeout_us;
	} else if (q->killed_for_memory) {
		q->r.status = NSRUN_STATUS_OOM_KILLED;
		q->r.memory_limit_bytes = q->memory_bytes;
	} else if (q->r.error.msg[0]) {
		q->r.status = NSRUN_STATUS_ERROR;           /* its memory could not be measured */
	} else if (q->killed_for_output) {
		q->r.status = NSRUN_STATUS_OUTPUT_LIMIT;
	} else if (q->cancelled && !st) {
		q->r.status = NSRUN_STATUS_SIGNALED;        /* the zygote SIGKILLed its slot */
		q->r.signal = SIGKILL;
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

/* True once the zygote's end of its socket is closed (it died or is dying). */
static bool zygote_gone_within(struct pool *p, int timeout_ms)
{
	struct pollfd z = { .fd = p->zfd, .events = POLLIN };

	return p->zfd < 0 || (poll(&z, 1, timeout_ms) > 0 && (z.revents & (POLLHUP | POLLERR)));
}


/* R's message on the slot's stat socket (SOCK_SEQPACKET): "r", its name, with its
 * pid in SCM_CREDENTIALS (unix(7): the kernel's, as our pid namespace sees it); its
 * report; or its end. */
static void slot_stat(struct pool *p, struct pool_slot *s)
{
	char buf[4096];
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(struct ucred))];
	} cm;
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) - 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.b, .msg_controllen = sizeof(cm.b) };
	ssize_t n;
	_cleanup_yajl_ yajl_val m = NULL;

	buf[0] = '\0';
	n = recvmsg(s->stat, &mh, MSG_CMSG_CLOEXEC);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n == 1 && buf[0] == 'r') {
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
			    c->cmsg_len == CMSG_LEN(sizeof(struct ucred))) {
				struct ucred u;
				memcpy(&u, CMSG_DATA(c), sizeof(u));
				s->r_pid = u.pid;
			}
		slot_watch(p, s);
		return;
	}
	close(s->stat);
	s->stat = -1;
	/* no report because the zygote died (its slots die with it, after its socket
	 * closed): the request is failed as such once its container's end is seen
	 * (pool_zygote_ended), not as a sandbox that ended without a status */
	/* (its socket may close a moment after the slot's, the slot's processes being
	 * the last to hold it: a slot that ended with no report waits that moment) */
	if (n <= 0 && s->req && zygote_gone_within(p, 200))
		return;
	if (n > 0) {
		buf[n] = '\0';
		if (json_scan_depth(buf, (size_t)n, JSON_MAX_DEPTH) == (size_t)n)
			m = yajl_tree_parse(buf, NULL, 0);
	}
	slot_exited(p, s, m);
}

static void zygote_message(struct pool *p)
{
	char buf[4096];
	char cbuf[CMSG_SPACE(5 * sizeof(int))];
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) - 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	int fds[5] = { -1, -1, -1, -1, -1 };
	size_t nfds = 0;
	ssize_t n = recvmsg(p->zfd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	_cleanup_yajl_ yajl_val m = NULL;
	const char *ready_path[] = { "ready", NULL }, *hello_path[] = { "hello", NULL };
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
				if (nfds < 5)
					fds[nfds++] = fd;
				else
					close(fd);
			}
		}
	m = json_scan_depth(buf, strlen(buf), JSON_MAX_DEPTH) < strlen(buf) ? NULL : yajl_tree_parse(buf, NULL, 0);
	if (m && (v = yajl_tree_get(m, ready_path, yajl_t_number)) && nfds == 5) {
		struct pool_slot *s = realloc(p->slots, (p->n_slots + 1) * sizeof(*s));
		if (s) {
			p->slots = s;
			for (size_t i = 0; i < p->n_slots; i++)
				if (s[i].req)
					s[i].req->slot = &s[i];
			s = &p->slots[p->n_slots++];
			*s = (struct pool_slot){ .id = (int)YAJL_GET_INTEGER(v), .ctl = fds[0], .in = fds[1],
						 .out = fds[2], .err = fds[3], .stat = fds[4] };
			memwatch_init(&s->mw, 0, NULL, NULL, false);
			for (size_t i = 0; i < 5; i++)
				fcntl(fds[i], F_SETFL, O_NONBLOCK);
			dispatch(p);
			return;
		}
	}
	for (size_t i = 0; i < nfds; i++)
		close(fds[i]);
	if (!m)
		return;
	if (yajl_tree_get(m, hello_path, yajl_t_number)) {
		p->zready = true;
		p->start_fails = 0;
		if (!p->announced) {
			printf("%s\n", p->socket_path);
			fflush(stdout);
			p->announced = true;
			if (p->ready_fd >= 0) {         /* -d: the caller returns now */
				write_all(p->ready_fd, "1", 1);
				close(p->ready_fd);
				p->ready_fd = -1;
			}
		}
		dispatch(p);
	}
}

/* ---- the loop ------------------------------------------------------------ */

/* When client c is closed for stalling (POOL_CLIENT_STALL_US): an answer, or a
 * streaming request's output, it takes none of (its request is then cancelled,
 * as when it goes away); without a request, a frame it began and adds nothing
 * to; or UINT64_MAX. */
static uint64_t client_deadline(const struct pool_client *c)
{
	uint64_t d = UINT64_MAX;

	if (c->fd < 0)
		return d;
	if (c->olen > c->ooff)
		d = c->out_since + POOL_CLIENT_STALL_US;
	if (!c->req && c->hdr_have && c->in_since + POOL_CLIENT_STALL_US < d)
		d = c->in_since + POOL_CLIENT_STALL_US;
	return d;
}

static uint64_t next_deadline(struct pool *p)
{
	uint64_t d = UINT64_MAX, now = monotonic_us();

	for (int i = 0; i < POOL_MAX_CLIENTS; i++)
		if (client_deadline(&p->clients[i]) < d)
			d = client_deadline(&p->clients[i]);

	for (size_t i = 0; i < p->n_slots; i++) {
		struct pool_req *q = p->slots[i].req;
		if (q && q->timeout_us && !q->timed_out && q->t_start + q->timeout_us < d)
			d = q->t_start + q->timeout_us;
		/* the time now, not d: a sample that starts later is to be looked at a
		 * stall's time after it (d + that never came first, and the loop slept to
		 * the request's timeout, its memory unmeasured: breaker, session 21).
		 * Not a slot being killed: slot_measure takes no sample of it, and a sample
		 * due in the past would make poll spin until its report comes */
		uint64_t m = q && !q->exited && !slot_killed(q) ? memwatch_next_us(&p->slots[i].mw, now) : UINT64_MAX;
		if (m < d)
			d = m;
	}
	return d;
}

/* A sample of slot s's memory, if one is due: past its request's limit, or when it
 * cannot be measured (a limit that cannot be kept must not pass for one that holds:
 * as a cold run, memwatch.h), the slot is killed; not once R's report waits to be
 * read (the request ended, and its slot's /proc with it). */
static void slot_measure(struct pool *p, struct pool_slot *s, uint64_t now)
{
	struct pool_req *q = s->req;
	struct nsrun_error e = { 0 };
	struct pollfd st = { .fd = s->stat, .events = POLLIN };
	int r;

	if (slot_killed(q))
		return;
	s->mw.deadline_us = q->timeout_us ? q->t_start + q->timeout_us : 0;
	r = memwatch_poll(&s->mw, now, &e);
	if (r == 0)
		return;
	if (s->stat >= 0 && poll(&st, 1, 0) > 0)
		return;
	if (r > 0) {
		q->killed_for_memory = true;
	} else {
		q->r.error = e;
		q->r.error.stage = STAGE_SUPERVISE;
	}
	zsend(p, "kill", s->id);
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
		if (q && !q->exited)
			slot_measure(p, &p->slots[i], now);
	}
	for (int i = 0; i < POOL_MAX_CLIENTS; i++)
		if (now >= client_deadline(&p->clients[i]))
			pool_client_close(p, i);
}

/* What poll(2) watched, to find its entry again. */
enum pool_what { W_SIG, W_STDIN, W_LISTEN, W_ZLISTEN, W_ZFD, W_CLIENT, W_CTL, W_IN, W_OUT, W_ERR, W_STAT, W_MEM };

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
				pool_zygote_ended(p, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), err);
		} else if (si.ssi_signo != SIGPIPE) {
			p->stopping = true;
		}
	}
}

int pool_loop(struct pool *p, struct nsrun_error *err)
{
	size_t cap = 0;
	_cleanup_free_ struct pollfd *fds = NULL;
	_cleanup_free_ struct pool_watch *w = NULL;

	while (!p->stopping) {
		size_t n = 0, need = 5 + POOL_MAX_CLIENTS + 6 * p->n_slots;
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
			add(fds, w, &n, p->zfd, (short)(POLLIN | (p->zq_n ? POLLOUT : 0)), W_ZFD, 0);
		for (int i = 0; i < POOL_MAX_CLIENTS; i++)
			if (p->clients[i].fd >= 0) {
				/* one request at a time per connection: the next is read after the
				 * answer has gone out, whole (else a client that sends and never
				 * reads would have its answers pile up here without bound);
				 * meanwhile the end of its side cancels the request */
				struct pool_client *c = &p->clients[i];
				bool unsent = c->olen > c->ooff;
				short ev = (short)((c->eof || (!c->req && unsent) ? 0 : POLLIN) | (unsent ? POLLOUT : 0));
				add(fds, w, &n, c->fd, ev, W_CLIENT, i);
			}
		for (size_t i = 0; i < p->n_slots; i++) {
			struct pool_slot *s = &p->slots[i];
			/* an idle slot's too: its end without a report is a failed set-up */
			if (s->stat >= 0)
				add(fds, w, &n, s->stat, POLLIN, W_STAT, (int)i);
			if (!s->req)
				continue;
			/* the verdict of its measuring thread (memwatch.h): slot_measure reads it */
			if (memwatch_fd(&s->mw) >= 0 && !slot_killed(s->req))
				add(fds, w, &n, memwatch_fd(&s->mw), POLLIN, W_MEM, (int)i);
			if (s->ctl >= 0)
				add(fds, w, &n, s->ctl, POLLOUT, W_CTL, (int)i);
			if (s->in >= 0)
				add(fds, w, &n, s->in, POLLOUT, W_IN, (int)i);
			/* a streaming request's output waits while its client is behind;
			 * not once its slot is being killed: what is left in its pipes is
			 * read, so that it is answered and its slot freed (its client, if it
			 * takes none of it, is closed for stalling) */
			if (s->req->stream && s->req->client >= 0 && !slot_killed(s->req) &&
			    p->clients[s->req->client].olen - p->clients[s->req->client].ooff > POOL_STREAM_BACKLOG)
				continue;
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
					pool_refuse(p, c, 0, "pool: busy: 256 clients are connected, the most it serves",
						    "send it again later, or share connections between threads");
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
				if (p->zfd >= 0 && (fds[k].revents & POLLOUT))
					zflush(p);
				if (p->zfd >= 0 && (fds[k].revents & (POLLIN | POLLHUP | POLLERR)))
					zygote_message(p);
				break;
			case W_CLIENT: {
				struct pool_client *c = &p->clients[w[k].index];
				if (c->fd != fds[k].fd)
					break;
				if ((fds[k].revents & POLLOUT) && c->olen > c->ooff)
					pool_client_flush(p, w[k].index);
				if (c->fd < 0)
					break;
				if (!c->req && (fds[k].revents & (POLLIN | POLLHUP | POLLERR)))
					client_read(p, w[k].index);
				else if (c->req && !c->eof && (fds[k].revents & (POLLIN | POLLHUP | POLLERR)))
					client_watch(p, w[k].index);
				else if (c->req && (fds[k].revents & (POLLHUP | POLLERR)))
					pool_client_close(p, w[k].index);
				break;
			}
			default:
				/* slots move in p->slots as others end: find it by its fd */
				if ((size_t)w[k].index >= p->n_slots)
					break;
				s = &p->slots[w[k].index];
				if (w[k].what == W_STAT && s->stat == fds[k].fd) {
					slot_stat(p, s);
					break;
				}
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
				pool_reply(p, s->req);       /* removes the slot: i now holds another */
				dispatch(p);
				continue;
			}
			i++;
		}
	}
	return err->msg[0] ? -1 : 0;
}

