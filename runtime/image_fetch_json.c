/* image_fetch_json.c - the pulled layout's configuration, and the image.json
 * made from it
 * (see image_fetch.h; the fields are docs/images.md's).  Nothing is judged
 * here: nsrun image check does that before the image lands.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nettle/sha2.h>
#include <yajl/yajl_gen.h>

#include "cleanup.h"
#include "image_fetch.h"
#include "sys.h"

#define OCI_TAG "nsrun" /* the layout's tag of the image (image_fetch.c copies to it) */
#define MANIFEST_MAX (4 << 20)
#define CONFIG_MAX (32 << 20)
#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static void gstr(yajl_gen g, const char *s)
{
	yajl_gen_string(g, (const unsigned char *)s, strlen(s));
}

/* Any JSON value as it is (an image's Env entry that is not a string is left
 * for nsrun image check to refuse). */
static void gen_val(yajl_gen g, yajl_val v)
{
	if (!v || YAJL_IS_NULL(v)) {
		yajl_gen_null(g);
	} else if (YAJL_IS_STRING(v)) {
		gstr(g, YAJL_GET_STRING(v));
	} else if (YAJL_IS_NUMBER(v)) {
		yajl_gen_number(g, v->u.number.r, strlen(v->u.number.r));
	} else if (YAJL_IS_TRUE(v) || YAJL_IS_FALSE(v)) {
		yajl_gen_bool(g, YAJL_IS_TRUE(v));
	} else if (YAJL_IS_ARRAY(v)) {
		yajl_gen_array_open(g);
		for (size_t i = 0; i < v->u.array.len; i++)
			gen_val(g, v->u.array.values[i]);
		yajl_gen_array_close(g);
	} else {
		yajl_gen_map_open(g);
		for (size_t i = 0; i < v->u.object.len; i++) {
			gstr(g, v->u.object.keys[i]);
			gen_val(g, v->u.object.values[i]);
		}
		yajl_gen_map_close(g);
	}
}

static yajl_val field(yajl_val obj, const char *key)
{
	if (!YAJL_IS_OBJECT(obj))
		return NULL;
	for (size_t i = 0; i < obj->u.object.len; i++)
		if (strcmp(obj->u.object.keys[i], key) == 0)
			return obj->u.object.values[i];
	return NULL;
}

static bool has_key(yajl_val env, const char *kv)
{
	size_t k = strcspn(kv, "=");

	for (size_t i = 0; i < env->u.array.len; i++) {
		const char *s = YAJL_GET_STRING(env->u.array.values[i]);
		if (s && strncmp(s, kv, k) == 0 && s[k] == '=')
			return true;
	}
	return false;
}

/* Is kv's key (up to its '=') one of the --env entries'? */
static bool replaced(const struct strv *add, const char *kv)
{
	for (size_t i = 0; i < add->n; i++) {
		size_t k = strcspn(add->v[i], "=") + 1;
		if (strncmp(kv, add->v[i], k) == 0)
			return true;
	}
	return false;
}

static void gen_env(yajl_gen g, yajl_val c, const struct fetch_opts *o, const struct strv *interp)
{
	yajl_val env = field(c, "Env");
	const char *base;

	if (env && !YAJL_IS_ARRAY(env) && !YAJL_IS_NULL(env)) {
		gen_val(g, env); /* refused by the check, in nsrun's words */
		return;
	}
	yajl_gen_array_open(g);
	if (!env || !YAJL_IS_ARRAY(env) || !has_key(env, "PATH="))
		if (!replaced(&o->env_add, "PATH="))
			gstr(g, "PATH=" DEFAULT_PATH);
	for (size_t i = 0; env && YAJL_IS_ARRAY(env) && i < env->u.array.len; i++) {
		yajl_val e = env->u.array.values[i];
		if (!YAJL_IS_STRING(e) || !replaced(&o->env_add, YAJL_GET_STRING(e)))
			gen_val(g, e);
	}
	base = interp->n ? strrchr(interp->v[0], '/') : NULL;
	base = base ? base + 1 : interp->n ? interp->v[0] : "";
	if (strncmp(base, "python", 6) == 0 && !(env && YAJL_IS_ARRAY(env) && has_key(env, "PYTHONDONTWRITEBYTECODE=")) &&
	    !replaced(&o->env_add, "PYTHONDONTWRITEBYTECODE="))
		gstr(g, "PYTHONDONTWRITEBYTECODE=1");
	for (size_t i = 0; i < o->env_add.n; i++)
		gstr(g, o->env_add.v[i]);
	yajl_gen_array_close(g);
}

static void gen_strings(yajl_gen g, const char *key, yajl_val list)
{
	gstr(g, key);
	yajl_gen_array_open(g);
	for (size_t i = 0; YAJL_IS_ARRAY(list) && i < list->u.array.len; i++)
		if (YAJL_IS_STRING(list->u.array.values[i]))
			gstr(g, YAJL_GET_STRING(list->u.array.values[i]));
	yajl_gen_array_close(g);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* An object's keys, sorted (as jq's keys). */
static void gen_keys(yajl_gen g, const char *key, yajl_val obj)
{
	const char **k = NULL;
	size_t n = YAJL_IS_OBJECT(obj) ? obj->u.object.len : 0;

	gstr(g, key);
	yajl_gen_array_open(g);
	if (n && (k = malloc(n * sizeof(*k)))) {
		memcpy(k, obj->u.object.keys, n * sizeof(*k));
		qsort(k, n, sizeof(*k), cmp_str);
		for (size_t i = 0; i < n; i++)
			gstr(g, k[i]);
		free(k);
	}
	yajl_gen_array_close(g);
}

int fetch_write_image_json(const struct fetch_opts *o, const char *dir, yajl_val cfg, const struct strv *interp,
			   const char *digest, const char *manifest, struct nsrun_error *err)
{
	yajl_val c = field(cfg, "config"), wd = field(c, "WorkingDir"), user = field(c, "User");
	const char *epoch = getenv("SOURCE_DATE_EPOCH");
	time_t now = epoch && *epoch ? (time_t)strtoll(epoch, NULL, 10) : time(NULL);
	char created[32], path[4096];
	const unsigned char *buf;
	size_t len;
	struct tm tm;
	int fd, rc = 0;
	yajl_gen g = yajl_gen_alloc(NULL);

	if (!g)
		return error_set(err, ENOMEM, "pull \"%s\": image.json", o->name);
	yajl_gen_config(g, yajl_gen_beautify, 1);
	strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
	yajl_gen_map_open(g);
	gstr(g, "schema");
	yajl_gen_integer(g, 1);
	gstr(g, "name");
	gstr(g, o->name);
	gstr(g, "interpreter");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < interp->n; i++)
		gstr(g, interp->v[i]);
	yajl_gen_array_close(g);
	gstr(g, "env");
	gen_env(g, c, o, interp);
	gstr(g, "workdir");
	gstr(g, YAJL_IS_STRING(wd) && YAJL_GET_STRING(wd)[0] == '/' ? YAJL_GET_STRING(wd) : "/");
	gen_strings(g, "entrypoint", field(c, "Entrypoint"));
	gen_strings(g, "cmd", field(c, "Cmd"));
	gstr(g, "user");
	gstr(g, YAJL_IS_STRING(user) ? YAJL_GET_STRING(user) : "");
	gen_keys(g, "exposed_ports", field(c, "ExposedPorts"));
	gen_keys(g, "volumes", field(c, "Volumes"));
	gstr(g, "source");
	yajl_gen_map_open(g);
	gstr(g, "type");
	gstr(g, "oci");
	gstr(g, "ref");
	gstr(g, o->ref);
	gstr(g, "digest");
	gstr(g, digest);
	gstr(g, "manifest");
	gstr(g, manifest);
	yajl_gen_map_close(g);
	gstr(g, "created");
	gstr(g, created);
	yajl_gen_map_close(g);
	if (yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok) {
		yajl_gen_free(g);
		return error_set(err, EINVAL, "pull \"%s\": cannot write image.json", o->name);
	}
	snprintf(path, sizeof(path), "%s/image.json", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || write_all(fd, buf, len) < 0 || fchmod(fd, 0644) < 0)
		rc = error_set(err, errno, "pull \"%s\": cannot write image.json", o->name);
	if (fd >= 0 && close(fd) < 0 && rc == 0)
		rc = error_set(err, errno, "pull \"%s\": cannot write image.json", o->name);
	yajl_gen_free(g);
	return rc;
}

/* ---- the layout ---- */

/* "sha256:" and 64 lower-case hex digits */
static bool is_digest(const char *s)
{
	return s && strncmp(s, "sha256:", 7) == 0 && strlen(s) == 71 && strspn(s + 7, "0123456789abcdef") == 64;
}

/* The JSON blob digest of the layout at f->work/oci (at most max bytes). */
static yajl_val read_blob(struct fetch *f, const char *digest, size_t max, struct nsrun_error *err)
{
	_cleanup_free_ char *text = NULL;
	char path[PATH_MAX], why[128];
	yajl_val v;

	if (!is_digest(digest)) {
		error_set(err, 0, "pull \"%s\": invalid digest in the OCI layout", f->o->name);
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/oci/blobs/sha256/%s", f->work, digest + 7);
	if (read_file(path, max, &text, NULL) < 0) {
		error_set(err, errno, "pull \"%s\": cannot read the blob %s of the layout", f->o->name, digest);
		return NULL;
	}
	if (!(v = yajl_tree_parse(text, why, sizeof(why))))
		error_set(err, 0, "pull \"%s\": the blob %s of the layout is not JSON", f->o->name, digest);
	return v;
}

/* The image configuration: index -> manifest (the one tagged OCI_TAG) ->
 * config, from the layout that was unpacked.  mdigest gets the manifest's
 * digest.  Returns the config (an object), or NULL with err. */
yajl_val fetch_read_config(struct fetch *f, char *mdigest, size_t len, struct nsrun_error *err)
{
	_cleanup_free_ char *text = NULL;
	char path[PATH_MAX], why[128];
	const char *mpath[] = { "manifests", NULL }, *ann[] = { "annotations", "org.opencontainers.image.ref.name", NULL };
	const char *dpath[] = { "digest", NULL }, *cpath[] = { "config", "digest", NULL };
	yajl_val index, list, manifest, cfg = NULL;

	snprintf(path, sizeof(path), "%s/oci/index.json", f->work);
	if (read_file(path, MANIFEST_MAX, &text, NULL) < 0 || !(index = yajl_tree_parse(text, why, sizeof(why)))) {
		error_set(err, errno, "pull \"%s\": cannot read the OCI layout's index.json", f->o->name);
		return NULL;
	}
	mdigest[0] = '\0';
	list = yajl_tree_get(index, mpath, yajl_t_array);
	for (size_t i = 0; list && i < list->u.array.len && !mdigest[0]; i++) {
		yajl_val m = list->u.array.values[i], tag = yajl_tree_get(m, ann, yajl_t_string);
		yajl_val d = yajl_tree_get(m, dpath, yajl_t_string);
		const char *ts = tag ? YAJL_GET_STRING(tag) : NULL, *ds = d ? YAJL_GET_STRING(d) : NULL;
		if (ts && ds && strcmp(ts, OCI_TAG) == 0)
			snprintf(mdigest, len, "%s", ds);
	}
	yajl_tree_free(index);
	if (!(manifest = read_blob(f, mdigest, MANIFEST_MAX, err)))
		return NULL;
	yajl_val c = yajl_tree_get(manifest, cpath, yajl_t_string);
	if (!c)
		error_set(err, 0, "pull \"%s\": cannot read the image manifest", f->o->name);
	else
		cfg = read_blob(f, YAJL_GET_STRING(c), CONFIG_MAX, err);
	yajl_tree_free(manifest);
	if (cfg && !YAJL_IS_OBJECT(cfg)) {
		yajl_tree_free(cfg);
		error_set(err, 0, "pull \"%s\": the image configuration is not a JSON object", f->o->name);
		return NULL;
	}
	return cfg;
}

/* sha256 of the file at path, "sha256:HEX" into out (72 bytes). */
int fetch_file_digest(const char *path, char *out)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct sha256_ctx ctx;
	uint8_t buf[65536], d[SHA256_DIGEST_SIZE];
	ssize_t n;

	if (fd < 0)
		return -1;
	sha256_init(&ctx);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		sha256_update(&ctx, (size_t)n, buf);
	if (n < 0)
		return -1;
	sha256_digest(&ctx, sizeof(d), d);
	memcpy(out, "sha256:", 7);
	for (int i = 0; i < SHA256_DIGEST_SIZE; i++)
		snprintf(out + 7 + 2 * i, 3, "%02x", d[i]);
	return 0;
}


uint64_t fetch_manifest_layer_size(const char *manifest, const char *digest)
{
	_cleanup_free_ char *text = NULL;
	yajl_val m, layers;
	uint64_t size = 0;

	if (!manifest || read_file(manifest, 4 << 20, &text, NULL) < 0 || !(m = yajl_tree_parse(text, NULL, 0)))
		return 0;
	layers = field(m, "layers");
	for (size_t i = 0; layers && YAJL_IS_ARRAY(layers) && i < layers->u.array.len; i++) {
		yajl_val l = layers->u.array.values[i], d = field(l, "digest"), n = field(l, "size");
		const char *ds = YAJL_IS_STRING(d) ? YAJL_GET_STRING(d) : NULL;
		if (ds && strcmp(ds, digest) == 0 && n && YAJL_IS_INTEGER(n) &&
		    YAJL_GET_INTEGER(n) > 0) {
			size = (uint64_t)YAJL_GET_INTEGER(n);
			break;
		}
	}
	yajl_tree_free(m);
	return size;
}
