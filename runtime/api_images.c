/* api_images.c - /images: list, inspect, pull (/images/create) and delete,
 * on image_store.c, the code of `nsrun image` and `nsrun pull`. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api_internal.h"
#include "image.h"
#include "image_store.h"

static void add_entry(const char *entry, void *arg)
{
	struct nsrun_error err = { 0 };

	image_gen((yajl_gen)arg, entry, false, &err); /* an unreadable one is left out */
}

static enum MHD_Result list(struct MHD_Connection *c)
{
	struct nsrun_error err = { 0 };
	yajl_gen g = api_gen();

	if (!g)
		return api_error(c, 500, "out of memory");
	yajl_gen_array_open(g);
	if (image_each(add_entry, g, &err) < 0) {
		yajl_gen_free(g);
		return api_error(c, 500, "%s", err.msg);
	}
	yajl_gen_array_close(g);
	return api_reply_gen(c, 200, g);
}

static enum MHD_Result not_found(struct MHD_Connection *c, const char *name, const struct nsrun_error *err)
{
	if (err->errnum == ENOENT)
		return api_error(c, 404, "No such image: %s", name);
	return api_error(c, 400, "%s", err->msg);
}

/* Testcontainers' reaper image, which nsrun api serves itself (api_ryuk.c): it
 * "exists", with Docker's inspect shape, and nothing of it is pulled. */
static enum MHD_Result ryuk_image(struct MHD_Connection *c)
{
	char hex[API_ID_LEN + 1], id[API_ID_LEN + 8];
	yajl_gen g = api_gen();

	if (!g)
		return api_error(c, 500, "out of memory");
	api_sha256_hex("nsrun-image:testcontainers/ryuk", hex);
	snprintf(id, sizeof(id), "sha256:%s", hex);
	yajl_gen_map_open(g);
	api_gen_kv_str(g, "Id", id);
	api_gen_str(g, "RepoTags");
	yajl_gen_array_open(g);
	api_gen_str(g, "testcontainers/ryuk:latest");
	yajl_gen_array_close(g);
	api_gen_str(g, "RepoDigests");
	yajl_gen_array_open(g);
	yajl_gen_array_close(g);
	api_gen_kv_int(g, "Created", 0);
	api_gen_kv_int(g, "Size", 0);
	api_gen_kv_str(g, "Os", "linux");
	api_gen_kv_str(g, "Architecture", "amd64");
	api_gen_str(g, "Config");
	yajl_gen_map_open(g);
	api_gen_kv_str(g, "Cmd", NULL);
	api_gen_kv_str(g, "Entrypoint", NULL);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	return api_reply_gen(c, 200, g);
}

static enum MHD_Result inspect(struct MHD_Connection *c, const char *name)
{
	struct nsrun_error err = { 0 };
	char entry[IMAGE_STORE_NAME_MAX + 1];
	yajl_gen g;

	if (api_is_ryuk(name))
		return ryuk_image(c);
	if (image_find(name, entry, sizeof(entry), &err) < 0)
		return not_found(c, name, &err);
	if (!(g = api_gen()))
		return api_error(c, 500, "out of memory");
	if (image_gen(g, entry, true, &err) < 0) {
		yajl_gen_free(g);
		return api_error(c, 500, "%s", err.msg);
	}
	return api_reply_gen(c, 200, g);
}

static enum MHD_Result delete(struct MHD_Connection *c, const char *name)
{
	struct nsrun_error err = { 0 };
	char entry[IMAGE_STORE_NAME_MAX + 1], shown[IMAGE_REF_MAX], id[80];
	yajl_gen g;

	if (image_find(name, entry, sizeof(entry), &err) < 0)
		return not_found(c, name, &err);
	image_display_name(entry, shown, sizeof(shown));
	image_id(entry, id, sizeof(id));
	if (image_remove(entry, &err) < 0)
		return api_error(c, 500, "%s", err.msg);
	if (!(g = api_gen()))
		return api_error(c, 500, "out of memory");
	yajl_gen_array_open(g);
	yajl_gen_map_open(g);
	api_gen_kv_str(g, "Untagged", shown);
	yajl_gen_map_close(g);
	yajl_gen_map_open(g);
	api_gen_kv_str(g, "Deleted", id);
	yajl_gen_map_close(g);
	yajl_gen_array_close(g);
	return api_reply_gen(c, 200, g);
}

/* Appends one JSON object of Docker's pull stream ({"status", "id"} or
 * {"errorDetail", "error"}) and a newline to buf (size len, used *o). */
static void stream_line(char *buf, size_t len, size_t *o, const char *status, const char *id, const char *error,
			const struct image_pull_step *detail)
{
	yajl_gen g = api_gen();
	const unsigned char *b;
	size_t n;

	if (!g)
		return;
	yajl_gen_map_open(g);
	if (error) {
		api_gen_str(g, "errorDetail");
		yajl_gen_map_open(g);
		api_gen_kv_str(g, "message", error);
		yajl_gen_map_close(g);
		api_gen_kv_str(g, "error", error);
	} else {
		api_gen_kv_str(g, "status", status);
		if (detail && detail->detail) {
			/* Docker's: {"current": N, "total": M} (no total when unknown) */
			api_gen_str(g, "progressDetail");
			yajl_gen_map_open(g);
			api_gen_str(g, "current");
			yajl_gen_integer(g, (long long)detail->current);
			if (detail->total) {
				api_gen_str(g, "total");
				yajl_gen_integer(g, (long long)detail->total);
			}
			yajl_gen_map_close(g);
		}
		if (id)
			api_gen_kv_str(g, "id", id);
	}
	yajl_gen_map_close(g);
	yajl_gen_get_buf(g, &b, &n);
	if (*o + n + 2 <= len) {
		memcpy(buf + *o, b, n);
		*o += n;
		buf[(*o)++] = '\n';
		buf[*o] = '\0';
	}
	yajl_gen_free(g);
}

/* A pull's stream: image_pull's steps, one JSON line each, as they come. */
struct pull_stream {
	struct image_pull pull;
	char buf[4096];
	size_t len, off;
	bool ended;
};

/* MHD's content reader (blocking: a thread per connection, api.c). */
static ssize_t pull_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct pull_stream *s = cls;
	size_t n;
	(void)pos;

	if (s->off == s->len) {
		struct nsrun_error err = { 0 };
		struct image_pull_step step;
		int rc;

		if (s->ended)
			return MHD_CONTENT_READER_END_OF_STREAM;
		s->off = s->len = 0;
		rc = image_pull_next(&s->pull, &step, &err);
		if (rc > 0) {
			stream_line(s->buf, sizeof(s->buf), &s->len, step.status, step.id[0] ? step.id : NULL, NULL, &step);
		} else if (rc < 0 && err.errnum == ECONNRESET) {
			return MHD_CONTENT_READER_END_WITH_ERROR;
		} else if (rc < 0) {
			char msg[1400];
			snprintf(msg, sizeof(msg), "%s%s%.1000s", err.msg, s->pull.why[0] ? ": " : "", s->pull.why);
			stream_line(s->buf, sizeof(s->buf), &s->len, NULL, NULL, msg, NULL);
			s->ended = true;
		} else {
			return MHD_CONTENT_READER_END_OF_STREAM;
		}
		if (s->len == 0)
			return MHD_CONTENT_READER_END_WITH_ERROR;
	}
	n = s->len - s->off < max ? s->len - s->off : max;
	memcpy(buf, s->buf + s->off, n);
	s->off += n;
	return (ssize_t)n;
}

/* The response is done or the client went away: a pull still running is
 * stopped (the tool removes its partial image). */
static void pull_done(void *cls)
{
	struct pull_stream *s = cls;

	image_pull_close(&s->pull);
	free(s);
}

/* POST /images/create?fromImage=NAME&tag=TAG: the pull of `nsrun pull`, its
 * steps streamed as Docker's JSON objects while it runs. */
static enum MHD_Result create(struct api_server *srv, struct MHD_Connection *c)
{
	const char *from = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "fromImage");
	const char *tag = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "tag");
	const char *src = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "fromSrc");
	struct nsrun_error err = { 0 };
	struct image_ref ref;
	char refstr[IMAGE_REF_MAX + 8];
	struct pull_stream *s;

	if (src && src[0])
		return api_error(c, 501, "fromSrc (docker import) is not supported by nsrun api: use nsrun-image import");
	if (!from || !from[0])
		return api_error(c, 400, "fromImage is required");
	if (api_is_ryuk(from)) {
		static const char done[] = "{\"status\":\"testcontainers/ryuk is served by nsrun api itself: "
					   "nothing to pull\"}\r\n";
		return api_reply(c, 200, "application/json", done, sizeof(done) - 1);
	}
	/* docker pull redis:7 sends fromImage=redis&tag=7, a digest comes as the tag
	 * too; some clients put the tag in fromImage (then a tag parameter is not added) */
	const char *last = strrchr(from, '/');
	bool tagged = strchr(from, '@') || strchr(last ? last : from, ':');
	if (tag && tag[0] && !tagged)
		snprintf(refstr, sizeof(refstr), "%s%s%s", from, strncmp(tag, "sha", 3) == 0 && strchr(tag, ':') ? "@" : ":",
			 tag);
	else
		snprintf(refstr, sizeof(refstr), "%s", from);
	if (image_ref_parse(refstr, &ref, &err) < 0)
		return api_error(c, 400, "%s", err.msg);
	if (!(s = calloc(1, sizeof(*s))))
		return api_error(c, 500, "out of memory");
	if (image_pull_start(&s->pull, srv->self_exe, &ref, true, &err) < 0) {
		free(s);
		return api_error(c, 500, "%s", err.msg);
	}
	/* a client that leaves mid-pull stops it at once (pull_done), not at its next step */
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (ci)
		s->pull.client_fd = ci->connect_fd;
	return api_queue_stream(c, "application/json", sizeof(s->buf), pull_read, s, pull_done, NULL, NULL);
}

enum MHD_Result api_images(struct api_server *srv, struct MHD_Connection *c, const char *method, const char *rest)
{
	bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
	size_t len = strlen(rest);
	char name[IMAGE_REF_MAX + 8];

	if (get && strcmp(rest, "json") == 0)
		return list(c);
	if (strcmp(rest, "create") == 0)
		return strcmp(method, "POST") == 0 ? create(srv, c) : api_error(c, 405, "use POST /images/create");
	if (get && len > 5 && strcmp(rest + len - 5, "/json") == 0 && len - 5 < sizeof(name)) {
		snprintf(name, sizeof(name), "%.*s", (int)(len - 5), rest);
		return inspect(c, name);
	}
	if (strcmp(method, "DELETE") == 0 && len && len < sizeof(name) && !strchr(rest, '?'))
		return delete(c, rest);
	return api_error(c, 501, "%s /images/%s is not supported by nsrun api", method, rest);
}
