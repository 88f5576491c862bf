/* api_json.c - replies in Docker's shapes, and JSON helpers for `nsrun api`. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <nettle/sha2.h>

#include "api_internal.h"

enum MHD_Result api_reply(struct MHD_Connection *c, unsigned status, const char *type, const void *body, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	if (type)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, "Api-Version", API_VERSION);
	MHD_add_response_header(r, "Server", "nsrun");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

enum MHD_Result api_reply_gen(struct MHD_Connection *c, unsigned status, yajl_gen g)
{
	const unsigned char *buf;
	size_t len;
	enum MHD_Result ret;

	if (!g)
		return api_reply(c, 500, "application/json", "{\"message\":\"out of memory\"}\n", 28);
	yajl_gen_get_buf(g, &buf, &len);
	ret = api_reply(c, status, "application/json", buf, len);
	yajl_gen_free(g);
	return ret;
}

enum MHD_Result api_error(struct MHD_Connection *c, unsigned status, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	yajl_gen g;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	g = api_gen();
	if (g) {
		yajl_gen_map_open(g);
		api_gen_kv_str(g, "message", msg);
		yajl_gen_map_close(g);
	}
	return api_reply_gen(c, status, g);
}

yajl_gen api_gen(void)
{
	yajl_gen g = yajl_gen_alloc(NULL);

	/* a client may read a stream line by line: the document is one line */
	if (g)
		yajl_gen_config(g, yajl_gen_validate_utf8, 0);
	return g;
}

void api_gen_str(yajl_gen g, const char *s)
{
	yajl_gen_string(g, (const unsigned char *)s, strlen(s));
}

void api_gen_kv_str(yajl_gen g, const char *k, const char *v)
{
	api_gen_str(g, k);
	if (v)
		api_gen_str(g, v);
	else
		yajl_gen_null(g);
}

void api_gen_kv_int(yajl_gen g, const char *k, long long v)
{
	api_gen_str(g, k);
	yajl_gen_integer(g, v);
}

void api_gen_kv_bool(yajl_gen g, const char *k, bool v)
{
	api_gen_str(g, k);
	yajl_gen_bool(g, v);
}

void api_gen_value(yajl_gen g, yajl_val v)
{
	if (!v) {
		yajl_gen_null(g);
	} else if (YAJL_IS_STRING(v)) {
		api_gen_str(g, YAJL_GET_STRING(v));
	} else if (YAJL_IS_NUMBER(v)) {
		const char *s = YAJL_GET_NUMBER(v);
		yajl_gen_number(g, s, strlen(s));
	} else if (YAJL_IS_OBJECT(v)) {
		yajl_gen_map_open(g);
		for (size_t i = 0; i < v->u.object.len; i++) {
			api_gen_str(g, v->u.object.keys[i]);
			api_gen_value(g, v->u.object.values[i]);
		}
		yajl_gen_map_close(g);
	} else if (YAJL_IS_ARRAY(v)) {
		yajl_gen_array_open(g);
		for (size_t i = 0; i < v->u.array.len; i++)
			api_gen_value(g, v->u.array.values[i]);
		yajl_gen_array_close(g);
	} else if (YAJL_IS_TRUE(v) || YAJL_IS_FALSE(v)) {
		yajl_gen_bool(g, YAJL_IS_TRUE(v));
	} else {
		yajl_gen_null(g);
	}
}

yajl_val api_parse(const char *text, size_t len, char *msg, size_t msg_len)
{
	char *copy;
	yajl_val v;

	if (json_scan_depth(text, len, JSON_MAX_DEPTH) < len) {
		snprintf(msg, msg_len, "JSON nested deeper than %d levels", JSON_MAX_DEPTH);
		return NULL;
	}
	if (memchr(text, '\0', len)) {
		snprintf(msg, msg_len, "a NUL byte in the JSON body");
		return NULL;
	}
	copy = strndup(text, len);
	if (!copy) {
		snprintf(msg, msg_len, "out of memory");
		return NULL;
	}
	v = yajl_tree_parse(copy, msg, msg_len);
	free(copy);
	/* yajl's message spans lines: keep the first */
	if (!v)
		msg[strcspn(msg, "\n")] = '\0';
	return v;
}

yajl_val api_get(yajl_val v, const char *key, yajl_type type)
{
	yajl_val found = NULL;

	if (!v || !YAJL_IS_OBJECT(v))
		return NULL;
	/* as Docker's decoder (Go's encoding/json) reads a struct: a key matches
	 * in any case, and of several that match the last wins */
	for (size_t i = 0; i < v->u.object.len; i++)
		if (strcasecmp(v->u.object.keys[i], key) == 0)
			found = v->u.object.values[i];
	return found && (type == yajl_t_any || found->type == type) ? found : NULL;
}

const char *api_get_str(yajl_val v, const char *key)
{
	yajl_val s = api_get(v, key, yajl_t_string);

	return s ? YAJL_GET_STRING(s) : NULL;
}

bool api_arg_true(struct MHD_Connection *c, const char *key)
{
	const char *v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, key);

	return v && (strcmp(v, "1") == 0 || strcasecmp(v, "true") == 0);
}

/* A query argument from 1 to 65535, or 0. */
static unsigned short arg_dim(struct MHD_Connection *c, const char *key)
{
	const char *v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, key);
	char *end;
	unsigned long n;

	if (!v || !*v)
		return 0;
	errno = 0;
	n = strtoul(v, &end, 10);
	return *end || errno || n > 65535 || v[0] == '-' ? 0 : (unsigned short)n;
}

bool api_winsize(struct MHD_Connection *c, struct winsize *ws)
{
	ws->ws_row = arg_dim(c, "h");
	ws->ws_col = arg_dim(c, "w");
	ws->ws_xpixel = ws->ws_ypixel = 0;
	return ws->ws_row && ws->ws_col;
}

void api_random_id(char *id)
{
	unsigned char raw[API_ID_LEN / 2];

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
		/* no entropy: an id from time and pid, still unique here */
		char seed[64];
		snprintf(seed, sizeof(seed), "%ld.%ld.%d", (long)time(NULL), (long)clock(), (int)getpid());
		api_sha256_hex(seed, id);
		return;
	}
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(id + 2 * i, 3, "%02x", raw[i]);
}

void api_sha256_hex(const char *s, char *out)
{
	struct sha256_ctx ctx;
	uint8_t d[SHA256_DIGEST_SIZE];

	sha256_init(&ctx);
	sha256_update(&ctx, strlen(s), (const uint8_t *)s);
	sha256_digest(&ctx, sizeof(d), d);
	for (size_t i = 0; i < sizeof(d); i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

void api_time_rfc3339(long long secs, char *buf, size_t len)
{
	time_t t = (time_t)secs;
	struct tm tm;

	if (secs <= 0 || !gmtime_r(&t, &tm))
		snprintf(buf, len, "0001-01-01T00:00:00Z");
	else
		strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

const char *api_str(yajl_val v)
{
	const char *s = v && YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : NULL;

	return s ? s : "";
}
