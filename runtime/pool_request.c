/* pool_request.c - a pool request read and answered: the client's JSON checked
 * against the pool's limits and made into the document its slot reads, and the
 * result document written back (see pool.h; pool_internal.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "cleanup.h"
#include "pool_internal.h"
#include "sys.h"
#include "util.h"

/* q's result document, as --json writes it, with the pool's timings: into *doc
 * (malloc'd) and *len.  Returns true, or false (*doc NULL or to free). */
static bool reply_doc(struct pool *p, struct pool_req *q, char **doc, size_t *len)
{
	struct nsrun_config cfg = p->cfg;         /* a shallow copy: this request's limits */
	bool ok = false;
	FILE *f;

	*doc = NULL;
	*len = 0;
	cfg.limits.timeout_us = q->timeout_us;
	cfg.limits.memory_bytes = q->memory_bytes;
	cfg.limits.pids = q->pids;
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
	q->r.enforced.memory = !cfg.limits.memory_bytes ? NULL : q->measured ? "supervisor" : "rlimit";
	f = open_memstream(doc, len);
	if (f) {
		ok = result_write_json(&q->r, &cfg, f) == 0;
		ok = fclose(f) == 0 && ok;
	}
	return ok;
}

void pool_refuse(struct pool *p, int fd, int errnum, const char *msg, const char *hint)
{
	struct pool_req q = { .client = -1, .exited = true };
	char *doc;
	size_t len;

	q.t_arrive = monotonic_us();
	q.timeout_us = p->cfg.limits.timeout_us;
	q.output_limit = p->cfg.output.limit_bytes;
	q.memory_bytes = p->cfg.limits.memory_bytes;
	q.pids = p->cfg.limits.pids;
	q.r.status = NSRUN_STATUS_ERROR;
	error_set_stage(&q.r.error, STAGE_PREPARE, errnum, "%s", msg);
	q.r.error.hint = hint;
	if (reply_doc(p, &q, &doc, &len)) {
		unsigned char hdr[4] = { (unsigned char)(len >> 24), (unsigned char)(len >> 16),
					 (unsigned char)(len >> 8), (unsigned char)len };
		/* as far as the socket's buffer takes it at once: the pool never waits here */
		if (send(fd, hdr, 4, MSG_NOSIGNAL | MSG_DONTWAIT) == 4)
			(void)!send(fd, doc, len, MSG_NOSIGNAL | MSG_DONTWAIT);
	}
	free(doc);
	result_free(&q.r);
	close(fd);
}

void pool_reply(struct pool *p, struct pool_req *q)
{
	struct pool_client *c = q->client >= 0 ? &p->clients[q->client] : NULL;
	char *doc = NULL;
	size_t len = 0;
	bool ok = reply_doc(p, q, &doc, &len);

	if (c) {
		c->req = NULL;
		/* after its stream frames; written as its socket takes it, never waited on:
		 * a client that takes none of it for POOL_CLIENT_STALL_US is closed */
		if (ok) {
			unsigned char hdr[4] = { (unsigned char)(len >> 24), (unsigned char)(len >> 16),
						 (unsigned char)(len >> 8), (unsigned char)len };
			/* the stall clock runs from when output became pending
			 * (pool_client_queue), not from this answer */
			if (pool_client_queue(p, q->client, hdr, 4, doc, len) < 0)
				ok = false;
		}
		if (!ok)
			pool_client_close(p, q->client);  /* no answer: it must not wait for one */
		else
			pool_client_flush(p, q->client);
	}
	free(doc);
	if (q->slot)
		pool_slot_remove(p, q->slot);
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

/* The request's key (a whole number, 1 or more) into *limit, which holds the
 * pool's (0: none).  Returns 0, or -1 with err when above the pool's. */
static int req_limit(yajl_val root, const char *key, const char *flag, uint64_t *limit, struct nsrun_error *err)
{
	const char *path[] = { key, NULL };
	yajl_val v = yajl_tree_get(root, path, yajl_t_number);
	double d;

	if (!v)
		return 0;
	d = YAJL_GET_DOUBLE(v);
	/* (a double past 2^64 is whole, and no uint64_t holds it) */
	if (!(d >= 1) || (d < 18446744073709551616.0 && d != (double)(uint64_t)d))
		return error_set(err, 0, "pool: \"%s\": a whole number, 1 or more", key);
	if (*limit && d > (double)*limit) {
		error_set(err, 0, "pool: \"%s\": %.0f is more than the pool's %s %llu", key, d, flag,
			  (unsigned long long)*limit);
		err->hint = "a request may lower the pool's limits, not raise them: start the pool with a higher one";
		return -1;
	}
	if (d > 9007199254740992.0)
		return error_set(err, 0, "pool: \"%s\": %.0f is more than 2^53", key, d);
	*limit = (uint64_t)d;
	return 0;
}

int pool_req_parse(struct pool *p, struct pool_req *q, char *text, size_t text_len, struct nsrun_error *err)
{
	char ebuf[256] = "";
	const char *code_path[] = { "code", NULL }, *args_path[] = { "args", NULL }, *env_path[] = { "env", NULL };
	const char *t_path[] = { "timeout", NULL }, *o_path[] = { "output_limit", NULL };
	/* yajl has no depth limit, and frees a tree by recursion: a request of [[[[...
	 * took the server down (its stack) */
	_cleanup_yajl_ yajl_val root =
		json_scan_depth(text, strlen(text), JSON_MAX_DEPTH) < strlen(text) ? NULL :
		yajl_tree_parse(text, ebuf, sizeof(ebuf));
	yajl_val code, args, env, t, o;
	struct strv envv = { 0 };
	const char *in;
	yajl_gen g = NULL;
	const unsigned char *buf;
	size_t len;

	/* (JSON has no place for one: after the document it would hide what follows) */
	if (strlen(text) != text_len)
		return error_set(err, 0, "pool: the request holds a NUL byte at %zu, which JSON does not allow",
				 strlen(text));
	if (json_scan_depth(text, strlen(text), JSON_MAX_DEPTH) < strlen(text))
		return error_set(err, 0, "pool: the request is nested deeper than %d levels", JSON_MAX_DEPTH);
	if (json_scan_nul(text, strlen(text)) < strlen(text))
		return error_set(err, 0, "pool: the request holds \"\\u0000\" in a string, which would end it there");
	ebuf[strcspn(ebuf, "\n")] = '\0'; /* yajl's first line says what; the rest points at it */
	if (!root || !YAJL_IS_OBJECT(root))
		return error_set(err, 0, "pool: the request is not a JSON object%s%s", root ? "" : ": ", root ? "" : ebuf);
	if (!(code = yajl_tree_get(root, code_path, yajl_t_string)))
		return error_set(err, 0, "pool: the request has no \"code\" string");
	/* a key given with the wrong type is an error, not a default */
	for (size_t i = 0; i < root->u.object.len; i++) {
		static const struct { const char *key; yajl_type t; } keys[] = {
			{ "code", yajl_t_string }, { "stdin", yajl_t_string }, { "args", yajl_t_array },
			{ "env", yajl_t_array }, { "timeout", yajl_t_number }, { "output_limit", yajl_t_number },
			{ "memory", yajl_t_number }, { "pids_limit", yajl_t_number }, { "stream", yajl_t_true },
		};
		const char *k = root->u.object.keys[i];
		yajl_val v = root->u.object.values[i];
		size_t j;
		for (j = 0; j < sizeof(keys) / sizeof(keys[0]) && strcmp(keys[j].key, k) != 0; j++)
			;
		if (j == sizeof(keys) / sizeof(keys[0]))
			return error_set(err, 0, "pool: the request's \"%s\": unknown (code, stdin, args, env, timeout, "
					 "output_limit, memory, pids_limit, stream)", k);
		/* (yajl keeps both; its lookup would take the first, a reader of the text the last) */
		for (size_t d = 0; d < i; d++)
			if (strcmp(root->u.object.keys[d], k) == 0)
				return error_set(err, 0, "pool: the request's \"%s\": given twice", k);
		if (keys[j].t == yajl_t_true) {
			if (!YAJL_IS_TRUE(v) && !YAJL_IS_FALSE(v))
				return error_set(err, 0, "pool: the request's \"%s\": expected true or false", k);
			q->stream = YAJL_IS_TRUE(v);
			continue;
		}
		if (v->type != keys[j].t)
			return error_set(err, 0, "pool: the request's \"%s\": expected a %s", k,
					 keys[j].t == yajl_t_string ? "string" : keys[j].t == yajl_t_array ? "list" : "number");
	}
	args = yajl_tree_get(root, args_path, yajl_t_array);
	env = yajl_tree_get(root, env_path, yajl_t_array);
	/* a request may shorten the pool's timeout and lower its output limit, never
	 * raise them (a security review: the pool's --timeout bounds what one request
	 * can hold a slot for); 0 or absent is the pool's, above it is capped at it */
	q->timeout_us = p->cfg.limits.timeout_us;
	q->output_limit = p->cfg.output.limit_bytes;
	if ((t = yajl_tree_get(root, t_path, yajl_t_number))) {
		double s = YAJL_GET_DOUBLE(t);
		if (!(s >= 0))
			return error_set(err, 0, "pool: \"timeout\": seconds, 0 (the pool's) or more");
		/* (a pool without one: a year at most, which its microseconds hold) */
		if (s > 86400 * 365)
			s = 86400 * 365;
		if (s > 0 && (!q->timeout_us || s * 1e6 < (double)q->timeout_us))
			q->timeout_us = s * 1e6 < 1 ? 1 : (uint64_t)(s * 1e6);
	}
	if ((o = yajl_tree_get(root, o_path, yajl_t_number))) {
		double b = YAJL_GET_DOUBLE(o);
		/* (above the pool's: capped, docs/pool.md) */
		if (b > (double)NSRUN_MAX_OUTPUT_LIMIT)
			b = (double)NSRUN_MAX_OUTPUT_LIMIT;
		if (!(b >= 0) || b != (double)(uint64_t)b)
			return error_set(err, 0, "pool: \"output_limit\": a whole number of bytes");
		if (b < (double)q->output_limit)
			q->output_limit = (uint64_t)b;
	}
	/* a request may lower the pool's memory and pids limits, not raise them: P
	 * lowers its own rlimits, which takes no privilege; raising would */
	q->memory_bytes = p->cfg.limits.memory_bytes;
	q->pids = p->cfg.limits.pids;
	if (req_limit(root, "memory", "--memory", &q->memory_bytes, err) < 0 ||
	    req_limit(root, "pids_limit", "--pids-limit", &q->pids, err) < 0)
		return -1;
	if ((in = json_str(root, "stdin"))) {
		q->in_len = strlen(in);
		if (!(q->in = strdup(in)))
			return error_set(err, ENOMEM, "pool: request");
	}
	for (size_t i = 0; i < p->cfg.process.env.n; i++)
		if (strv_push(&envv, p->cfg.process.env.v[i]) < 0)
			goto nomem;
	if (env && env->u.array.len) {
		/* (the request's, over the pool's: one sort, as n strv_setenv would be n^2:
		 * 60,000 of them held the pool for 12 s, a breaker's) */
		_cleanup_free_ const char **kvs = calloc(env->u.array.len, sizeof(*kvs));
		if (!kvs)
			goto nomem;
		for (size_t i = 0; i < env->u.array.len; i++) {
			yajl_val e = env->u.array.values[i];
			if (!YAJL_IS_STRING(e) || !is_env_assignment(YAJL_GET_STRING(e))) {
				strv_free(&envv);
				return error_set(err, 0, "pool: \"env\"[%zu]: expected \"KEY=VALUE\"", i);
			}
			kvs[i] = YAJL_GET_STRING(e);
		}
		if (strv_setenv_many(&envv, kvs, env->u.array.len) < 0)
			goto nomem;
	}
	if (!(g = yajl_gen_alloc(NULL)))
		goto nomem;
	yajl_gen_map_open(g);
	pool_gen_str(g, "code");
	pool_gen_str(g, YAJL_GET_STRING(code));
	pool_gen_str(g, "cwd");
	pool_gen_str(g, p->cfg.process.cwd);
	pool_gen_str(g, "args");
	yajl_gen_array_open(g);
	for (size_t i = 0; args && i < args->u.array.len; i++) {
		yajl_val a = args->u.array.values[i];
		if (!YAJL_IS_STRING(a)) {
			yajl_gen_free(g);
			strv_free(&envv);
			return error_set(err, 0, "pool: \"args\"[%zu]: expected a string", i);
		}
		pool_gen_str(g, YAJL_GET_STRING(a));
	}
	yajl_gen_array_close(g);
	if (q->memory_bytes != p->cfg.limits.memory_bytes) {
		pool_gen_str(g, "memory_bytes");
		yajl_gen_integer(g, (long long)q->memory_bytes);
	}
	if (q->pids != p->cfg.limits.pids) {
		pool_gen_str(g, "pids");
		yajl_gen_integer(g, (long long)q->pids);
	}
	pool_gen_str(g, "env");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < envv.n; i++)
		pool_gen_str(g, envv.v[i]);
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

/* Sends what waits for the zygote, in order, as far as its socket takes it. */
