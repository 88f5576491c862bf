/* api_create.c - POST /containers/create: Docker's container config to nsrun's
 * options (the command line's names, parsed by the command line's own parser), after
 * refusing whatever would weaken the host's side.  The result is the service's
 * config.json: what start runs (`nsrun -d --name NAME OPTIONS`) and what inspect shows. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api_internal.h"
#include "caps.h"
#include "cleanup.h"
#include "cli.h"
#include "config.h"
#include "image.h"
#include "image_store.h"
#include "subid.h"
#include "sys.h"

/* A refusal or a mistake: HTTP status and Docker's message. */
struct create_ctx {
	const struct api_server *srv;
	struct strv args;
	struct strv mounted;    /* the container paths of the request's binds and tmpfs mounts */
	unsigned status;
	char *msg;
	size_t msg_len;
	char image_entry[IMAGE_STORE_NAME_MAX + 1];     /* the image's store entry */
	bool ryuk;              /* Testcontainers' reaper: served by nsrun api itself (api_ryuk.c) */
	char warning[768];      /* the create response's Warnings[0] and the log's first line, or "" */
};

static int __attribute__((format(printf, 3, 4))) refuse(struct create_ctx *x, unsigned status, const char *fmt, ...)
{
	va_list ap;

	x->status = status;
	va_start(ap, fmt);
	vsnprintf(x->msg, x->msg_len, fmt, ap);
	va_end(ap);
	/* one line, whatever of the request it quotes (a "\n" in a JSON string is one) */
	for (char *c = x->msg; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return -1;
}

/* Adds a warning to x->warning (one line: "; " between them). */
static void __attribute__((format(printf, 2, 3))) warn(struct create_ctx *x, const char *fmt, ...)
{
	size_t o = strlen(x->warning);
	va_list ap;

	if (o && o + 2 < sizeof(x->warning)) {
		memcpy(x->warning + o, "; ", 3);
		o += 2;
	}
	va_start(ap, fmt);
	vsnprintf(x->warning + o, sizeof(x->warning) - o, fmt, ap);
	va_end(ap);
}

static int add(struct create_ctx *x, const char *opt, const char *value)
{
	if (strv_push(&x->args, opt) < 0 || (value && strv_push(&x->args, value) < 0))
		return refuse(x, 500, "out of memory");
	return 0;
}

static int add_fmt(struct create_ctx *x, const char *opt, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int add_fmt(struct create_ctx *x, const char *opt, const char *fmt, ...)
{
	char buf[PATH_MAX * 2 + 64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return add(x, opt, buf);
}

static bool is_true(yajl_val v)
{
	return v && YAJL_IS_TRUE(v);
}

static bool nonempty(yajl_val v)
{
	return v && ((YAJL_IS_ARRAY(v) && v->u.array.len) || (YAJL_IS_OBJECT(v) && v->u.object.len));
}

/* What a field of a create request may hold (or null: Go's zero value). */
enum field_kind { K_BOOL, K_STR, K_NUM, K_OBJ, K_ARR, K_STRS, K_STRSLICE };

static const char *const field_kind_names[] = {
	[K_BOOL] = "a boolean", [K_STR] = "a string", [K_NUM] = "a whole number", [K_OBJ] = "an object",
	[K_ARR] = "an array", [K_STRS] = "an array of strings",
	[K_STRSLICE] = "a string or an array of strings",
};

struct field {
	const char *name;
	enum field_kind kind;
};

/* The fields nsrun api reads, as Docker's types have them (api/types/container:
 * Config, HostConfig, mount.Mount); K_STRSLICE is strslice.StrSlice, which
 * takes one string too.  Docker answers 400 to any other type: so do we, as a
 * field of another type would otherwise be left out, and with it the isolation
 * it asked for (CapDrop "ALL", ReadonlyRootfs "true"). */
static const struct field config_fields[] = {
	{ "Image", K_STR },       { "Hostname", K_STR },     { "Domainname", K_STR },  { "User", K_STR },
	{ "WorkingDir", K_STR },  { "StopSignal", K_STR },   { "Env", K_STRS },        { "Cmd", K_STRSLICE },
	{ "Entrypoint", K_STRSLICE }, { "Tty", K_BOOL },     { "OpenStdin", K_BOOL },  { "StdinOnce", K_BOOL },
	{ "AttachStdin", K_BOOL }, { "AttachStdout", K_BOOL }, { "AttachStderr", K_BOOL },
	{ "NetworkDisabled", K_BOOL }, { "Labels", K_OBJ },  { "ExposedPorts", K_OBJ }, { "Volumes", K_OBJ },
	{ "Healthcheck", K_OBJ }, { "StopTimeout", K_NUM },  { "HostConfig", K_OBJ },
};
static const struct field host_fields[] = {
	{ "Binds", K_STRS },        { "CapAdd", K_STRSLICE },  { "CapDrop", K_STRSLICE }, { "SecurityOpt", K_STRS },
	{ "ExtraHosts", K_STRS },   { "Links", K_STRS },       { "VolumesFrom", K_STRS },
	{ "DeviceCgroupRules", K_STRS }, { "ReadonlyRootfs", K_BOOL }, { "Privileged", K_BOOL },
	{ "AutoRemove", K_BOOL },   { "PublishAllPorts", K_BOOL }, { "Init", K_BOOL },  { "Memory", K_NUM },
	{ "MemorySwap", K_NUM },    { "PidsLimit", K_NUM },    { "NanoCpus", K_NUM },    { "Mounts", K_ARR },
	{ "Devices", K_ARR },       { "DeviceRequests", K_ARR }, { "Tmpfs", K_OBJ },     { "PortBindings", K_OBJ },
	{ "Sysctls", K_OBJ },       { "NetworkMode", K_STR },  { "IpcMode", K_STR },     { "PidMode", K_STR },
	{ "UTSMode", K_STR },       { "UsernsMode", K_STR },   { "CgroupnsMode", K_STR },
};
static const struct field mount_fields[] = {
	{ "Type", K_STR },       { "Source", K_STR },      { "Target", K_STR },        { "ReadOnly", K_BOOL },
	{ "BindOptions", K_OBJ }, { "TmpfsOptions", K_OBJ }, { "VolumeOptions", K_OBJ },
};

static bool kind_ok(yajl_val v, enum field_kind k)
{
	if (YAJL_IS_NULL(v))
		return true;
	switch (k) {
	case K_BOOL:
		return YAJL_IS_TRUE(v) || YAJL_IS_FALSE(v);
	case K_STR:
		return YAJL_IS_STRING(v);
	case K_NUM:
		return YAJL_IS_INTEGER(v);
	case K_OBJ:
		return YAJL_IS_OBJECT(v);
	case K_ARR:
		return YAJL_IS_ARRAY(v);
	case K_STRSLICE:
		if (YAJL_IS_STRING(v))
			return true;
		/* fall through */
	case K_STRS:
		if (!YAJL_IS_ARRAY(v))
			return false;
		for (size_t i = 0; i < v->u.array.len; i++)
			if (!YAJL_IS_STRING(v->u.array.values[i]))
				return false;
		return true;
	}
	return false;
}

static int check_fields(struct create_ctx *x, yajl_val o, const char *where, const struct field *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		yajl_val v = api_get(o, f[i].name, yajl_t_any);
		if (v && !kind_ok(v, f[i].kind))
			return refuse(x, 400, "%s%s: expected %s", where, f[i].name, field_kind_names[f[i].kind]);
	}
	return 0;
}

/* Refuses (400) a field of the wrong type, and a mount's bind propagation,
 * which nsrun api does not give (its binds are private, as a Binds entry's
 * "shared" is refused).  Returns 0 or -1. */
static int check_types(struct create_ctx *x, yajl_val body)
{
	yajl_val hc = api_get(body, "HostConfig", yajl_t_object), m = api_get(hc, "Mounts", yajl_t_array);

	if (check_fields(x, body, "", config_fields, sizeof(config_fields) / sizeof(config_fields[0])) < 0 ||
	    check_fields(x, hc, "HostConfig.", host_fields, sizeof(host_fields) / sizeof(host_fields[0])) < 0)
		return -1;
	for (size_t i = 0; m && i < m->u.array.len; i++) {
		yajl_val e = m->u.array.values[i];
		const char *prop;
		char where[64];

		snprintf(where, sizeof(where), "HostConfig.Mounts[%zu].", i);
		if (!YAJL_IS_OBJECT(e))
			return refuse(x, 400, "HostConfig.Mounts[%zu]: expected an object", i);
		if (check_fields(x, e, where, mount_fields, sizeof(mount_fields) / sizeof(mount_fields[0])) < 0)
			return -1;
		prop = api_get_str(api_get(e, "BindOptions", yajl_t_object), "Propagation");
		if (prop && *prop && strcmp(prop, "private") != 0 && strcmp(prop, "rprivate") != 0)
			return refuse(x, 400, "%sBindOptions.Propagation \"%s\": not supported by nsrun api (its binds "
				      "are private)", where, prop);
	}
	return 0;
}

/* The strings of a strslice (K_STRSLICE, checked): one string, or an array. */
static size_t strslice_len(yajl_val v)
{
	return !v ? 0 : YAJL_IS_STRING(v) ? 1 : YAJL_IS_ARRAY(v) ? v->u.array.len : 0;
}

static const char *strslice_at(yajl_val v, size_t i)
{
	return YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : YAJL_GET_STRING(v->u.array.values[i]);
}

static long long get_ll(yajl_val o, const char *key)
{
	yajl_val v = api_get(o, key, yajl_t_number);

	return v && YAJL_IS_INTEGER(v) ? YAJL_GET_INTEGER(v) : 0;
}

int api_image_name(const char *ref, char *name, size_t len)
{
	size_t n = strlen(ref);

	if (n > 7 && strcmp(ref + n - 7, ":latest") == 0)
		n -= 7;
	if (n == 0 || n >= len || n > 128 || ref[0] == '.')
		return -1;
	for (size_t i = 0; i < n; i++) {
		char c = ref[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
		      c == '_' || c == '-'))
			return -1;
	}
	memcpy(name, ref, n);
	name[n] = '\0';
	return 0;
}

static int image_option(struct create_ctx *x, yajl_val body, char *image, size_t len)
{
	const char *ref = api_get_str(body, "Image");
	struct nsrun_error err = { 0 };
	struct image_ref r;

	if (!ref || !ref[0])
		return refuse(x, 400, "config: Image is required");
	/* a name of the store, a reference pulled (redis:7), or an image id */
	if (image_find(ref, x->image_entry, sizeof(x->image_entry), &err) < 0) {
		if (err.errnum == ENOENT)
			return refuse(x, 404, "No such image: %s (pull it: POST /images/create, docker pull, nsrun pull)",
				      ref);
		return refuse(x, 400, "%s", err.msg);
	}
	/* what --image takes: the plain name, or the reference of a pulled entry */
	if (image_store_name_ref(x->image_entry, &r) == 0) {
		if (!image_ref_string(&r, image, len))
			return refuse(x, 400, "image reference too long: %s", ref);
	} else {
		snprintf(image, len, "%s", x->image_entry);
	}
	return add(x, "--image", image);
}

/* Is the real path (no symlink in it) under one of the volume roots? */
static bool under_roots(const struct api_server *srv, const char *real)
{
	for (size_t i = 0; i < srv->volume_roots.n; i++) {
		const char *root = srv->volume_roots.v[i];
		size_t n = strlen(root);
		if (strncmp(real, root, n) == 0 && (real[n] == '\0' || real[n] == '/' || (n == 1 && root[0] == '/')))
			return true;
	}
	return false;
}

/* A host path a bind may use: its real path, under one of the volume roots, the
 * caller's own.  Checked here at create, and again at start (api_source_open):
 * a payload sharing a directory under a root may swap it for a link meanwhile.
 * Returns 0 (real path in out) or -1. */
static int bind_source(struct create_ctx *x, const char *what, const char *src, char *out)
{
	struct stat st;

	if (src[0] != '/')
		return refuse(x, 400, "%s \"%s\": named volumes are not supported by nsrun api: give an absolute host path",
			      what, src);
	if (!realpath(src, out))
		return refuse(x, 400, "%s \"%s\": %s (nsrun api does not create it)", what, src, strerror(errno));
	if (!under_roots(x->srv, out))
		return refuse(x, 403, "%s \"%s\" is outside the volume roots of this nsrun api (--volume-root; now: "
			      "%s%s)", what, src, x->srv->volume_roots.n ? x->srv->volume_roots.v[0] : "none",
			      x->srv->volume_roots.n > 1 ? " and others" : "");
	if (stat(out, &st) < 0)
		return refuse(x, 400, "%s \"%s\": %s", what, src, strerror(errno));
	if (st.st_uid != geteuid())
		return refuse(x, 403, "%s \"%s\" is not owned by uid %u: nsrun api uses only the caller's "
			      "own files", what, src, (unsigned)geteuid());
	return 0;
}

int api_source_open(const struct api_server *srv, const char *what, const char *real, char *msg, size_t msg_len)
{
	_cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct stat st;
	int fd;

	if (root < 0) {
		snprintf(msg, msg_len, "%s \"%s\": open /: %s", what, real, strerror(errno));
		return -1;
	}
	if (real[0] != '/' || !under_roots(srv, real)) {
		snprintf(msg, msg_len, "%s \"%s\" is outside the volume roots of this nsrun api", what, real);
		return -1;
	}
	fd = open_in_root_nofollow(root, real, O_PATH | O_CLOEXEC);
	if (fd < 0) {
		snprintf(msg, msg_len, "%s \"%s\": %s%s", what, real, strerror(errno),
			 errno == ELOOP ? " (a symlink is in its path now: it changed since the container was created)" :
			 "");
		return -1;
	}
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid()) {
		snprintf(msg, msg_len, "%s \"%s\" is not owned by uid %u (now): nsrun api uses only the caller's own "
			 "files", what, real, (unsigned)geteuid());
		close(fd);
		return -1;
	}
	return fd;
}

static int add_bind(struct create_ctx *x, const char *src, const char *dst, bool ro)
{
	char real[PATH_MAX];

	if (!dst || dst[0] != '/')
		return refuse(x, 400, "bind \"%s\": the container path must be absolute", src);
	if (strchr(dst, ':') || strchr(src, ','))
		return refuse(x, 400, "bind \"%s:%s\": a ':' in the container path is not supported", src, dst);
	if (bind_source(x, "bind source", src, real) < 0)
		return -1;
	if (strv_push(&x->mounted, dst) < 0)
		return refuse(x, 500, "out of memory");
	return add_fmt(x, "-v", "%s:%s:%s", real, dst, ro ? "ro" : "rw");
}

static int binds(struct create_ctx *x, yajl_val hc)
{
	yajl_val b = api_get(hc, "Binds", yajl_t_array);

	for (size_t i = 0; b && i < b->u.array.len; i++) {
		const char *spec = YAJL_GET_STRING(b->u.array.values[i]);
		char buf[PATH_MAX * 2], *src, *dst, *opts;
		bool ro = false;
		if (!spec || strlen(spec) >= sizeof(buf))
			return refuse(x, 400, "HostConfig.Binds[%zu]: expected \"HOST:CONTAINER[:OPTIONS]\"", i);
		snprintf(buf, sizeof(buf), "%s", spec);
		src = buf;
		if (!(dst = strchr(src, ':')))
			return refuse(x, 400, "bind \"%s\": expected HOST:CONTAINER[:OPTIONS]", spec);
		*dst++ = '\0';
		if ((opts = strchr(dst, ':')))
			*opts++ = '\0';
		for (char *o = opts, *save = NULL, *t; o && (t = strtok_r(o, ",", &save)); o = NULL) {
			if (strcmp(t, "ro") == 0)
				ro = true;
			else if (strcmp(t, "rw") && strcmp(t, "z") && strcmp(t, "Z") && strcmp(t, "private") &&
				 strcmp(t, "rprivate") && strcmp(t, "nocopy"))
				return refuse(x, 400, "bind \"%s\": option \"%s\" is not supported by nsrun api", spec, t);
		}
		if (add_bind(x, src, dst, ro) < 0)
			return -1;
	}
	return 0;
}

/* The image's Volumes the request does not bind or mount: a tmpfs each (--tmpfs:
 * --tmpfs-size, counted in --memory, mode 1777 so any user of the image writes
 * it), where Docker makes an anonymous volume.  Returns 0 or -1 (refused). */
static int image_volumes(struct create_ctx *x)
{
	struct strv vols = { 0 };
	struct nsrun_error err = { 0 };
	int rc = 0;

	if (api_image_volumes(x->image_entry, &x->mounted, &vols, &err) < 0)
		return refuse(x, 500, "image %s: %s", x->image_entry, err.msg);
	/* tmpcopyup: the tmpfs starts with what the image has there, as Docker fills a
	 * new anonymous volume */
	for (size_t i = 0; rc == 0 && i < vols.n; i++)
		rc = add_fmt(x, "--tmpfs", "%s:tmpcopyup", vols.v[i]);
	strv_free(&vols);
	return rc;
}

/* Docker's tmpfs options: size= and mode= are kept, the rest (rw, noexec, ...) are nsrun's anyway. */
static int add_tmpfs(struct create_ctx *x, const char *path, const char *opts, long long size, long long mode)
{
	char keep[256] = "";
	size_t o = 0;

	if (strv_push(&x->mounted, path) < 0)
		return refuse(x, 500, "out of memory");
	if (opts && strlen(opts) < 1024) {
		char buf[1024];
		snprintf(buf, sizeof(buf), "%s", opts);
		for (char *p = buf, *save = NULL, *t; (t = strtok_r(p, ",", &save)); p = NULL)
			if ((strncmp(t, "size=", 5) == 0 || strncmp(t, "mode=", 5) == 0) && o < sizeof(keep))
				o += (size_t)snprintf(keep + o, sizeof(keep) - o, "%s%s", o ? "," : "", t);
	}
	if (size > 0 && o < sizeof(keep))
		o += (size_t)snprintf(keep + o, sizeof(keep) - o, "%ssize=%lld", o ? "," : "", size);
	if (mode > 0 && o < sizeof(keep))
		o += (size_t)snprintf(keep + o, sizeof(keep) - o, "%smode=%llo", o ? "," : "", mode);
	return o ? add_fmt(x, "--tmpfs", "%s:%s", path, keep) : add(x, "--tmpfs", path);
}

static int tmpfs_and_mounts(struct create_ctx *x, yajl_val hc)
{
	yajl_val t = api_get(hc, "Tmpfs", yajl_t_object);
	yajl_val m = api_get(hc, "Mounts", yajl_t_array);

	for (size_t i = 0; t && i < t->u.object.len; i++) {
		yajl_val v = t->u.object.values[i];
		if (add_tmpfs(x, t->u.object.keys[i], YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : NULL, 0, 0) < 0)
			return -1;
	}
	for (size_t i = 0; m && i < m->u.array.len; i++) {
		yajl_val e = m->u.array.values[i];
		const char *type = api_get_str(e, "Type"), *src = api_get_str(e, "Source"), *dst = api_get_str(e, "Target");
		if (type && strcmp(type, "bind") == 0 && src) {
			if (add_bind(x, src, dst, is_true(api_get(e, "ReadOnly", yajl_t_any))) < 0)
				return -1;
		} else if (type && strcmp(type, "tmpfs") == 0 && dst) {
			yajl_val o = api_get(e, "TmpfsOptions", yajl_t_object);
			if (add_tmpfs(x, dst, NULL, get_ll(o, "SizeBytes"), get_ll(o, "Mode")) < 0)
				return -1;
		} else {
			return refuse(x, 400, "HostConfig.Mounts[%zu]: type \"%s\" is not supported by nsrun api (bind with "
				      "Source and Target, or tmpfs)", i, type ? type : "");
		}
	}
	return image_volumes(x);
}

/* PublishAllPorts (docker run -P): each exposed TCP port of the image and of the
 * request not in PortBindings, on a free port of 127.0.0.1 (as HostPort "").
 * Returns 0 or -1 (refused). */
static int publish_all(struct create_ctx *x, yajl_val body, yajl_val hc)
{
	unsigned p[64];
	size_t n = 0;
	char skipped[256];
	struct nsrun_error err = { 0 };

	if (!is_true(api_get(hc, "PublishAllPorts", yajl_t_any)))
		return 0;
	if (api_publish_all(x->image_entry, body, hc, p, sizeof(p) / sizeof(p[0]), &n, skipped, sizeof(skipped),
			    &err) < 0)
		return refuse(x, 500, "image %s: %s", x->image_entry, err.msg);
	if (skipped[0])
		warn(x, "nsrun: PublishAllPorts: %s not published: nsrun publishes TCP ports only", skipped);
	for (size_t i = 0; i < n; i++)
		if (add_fmt(x, "-p", "127.0.0.1:0:%u", p[i]) < 0)
			return -1;
	return 0;
}

static int ports(struct create_ctx *x, yajl_val body, yajl_val hc)
{
	yajl_val pb = api_get(hc, "PortBindings", yajl_t_object);

	for (size_t i = 0; pb && i < pb->u.object.len; i++) {
		const char *key = pb->u.object.keys[i];
		yajl_val list = pb->u.object.values[i];
		char *end;
		unsigned long port = strtoul(key, &end, 10);
		if (port == 0 || port > 65535 || (*end && strcmp(end, "/tcp") != 0))
			return refuse(x, 400, "HostConfig.PortBindings: \"%s\": nsrun publishes TCP ports (PORT or "
				      "PORT/tcp)", key);
		size_t nb = list && YAJL_IS_ARRAY(list) ? list->u.array.len : 0;
		for (size_t j = 0; j < (nb ? nb : 1); j++) {
			yajl_val b = nb ? list->u.array.values[j] : NULL;
			const char *ip = api_get_str(b, "HostIp"), *hp = api_get_str(b, "HostPort");
			char bind_ip[INET6_ADDRSTRLEN + 2];
			/* every address and none at all mean loopback: a request cannot open the
			 * host's other interfaces (api_loopback_host_ip) */
			if (api_loopback_host_ip(ip, bind_ip, sizeof(bind_ip)) < 0)
				return refuse(x, 403, "HostConfig.PortBindings: HostIp \"%s\": refused by nsrun api: a port "
					      "is published on the host's loopback only (\"\", 0.0.0.0, ::, 127.0.0.1 or ::1)",
					      ip);
			if (!hp || !hp[0])
				hp = "0";
			if (add_fmt(x, "-p", "%s:%s:%lu", bind_ip, hp, port) < 0)
				return -1;
		}
	}
	return publish_all(x, body, hc);
}

/* NetworkMode "container:REF": the network namespace of that container (a
 * service: nsrun's --network container:NAME, netjoin.h), found by id, id prefix
 * or name as Docker finds it; with published ports refused as Docker refuses
 * them.  Returns 0 or -1 (refused). */
static int network_container(struct create_ctx *x, yajl_val hc, const char *ref)
{
	struct api_ctr c;
	unsigned status = 404;
	char msg[256];
	int rc;

	if (nonempty(api_get(hc, "PortBindings", yajl_t_any)) || is_true(api_get(hc, "PublishAllPorts", yajl_t_any)))
		return refuse(x, 400, "conflicting options: port publishing and the container type network mode");
	if (api_ctr_find(ref, &c, &status, msg, sizeof(msg)) < 0)
		return refuse(x, status, "%s", msg);
	/* a plain nsrun -d service is the caller's, not the API clients' to join */
	if (!c.config) {
		api_ctr_free(&c);
		return refuse(x, 403, "NetworkMode \"container:%s\": refused by nsrun api: only a container made "
			      "through the API can be joined, not a service of nsrun -d", ref);
	}
	rc = add_fmt(x, "--network", "container:%s", c.name);
	api_ctr_free(&c);
	return rc;
}

static int host_namespaces(struct create_ctx *x, yajl_val hc)
{
	static const char *const modes[] = { "PidMode", "IpcMode", "UTSMode", "UsernsMode", "CgroupnsMode" };
	const char *net = api_get_str(hc, "NetworkMode");

	if (is_true(api_get(hc, "Privileged", yajl_t_any)))
		return refuse(x, 403, "Privileged: refused by nsrun api: a container never gets the host's privileges");
	if (nonempty(api_get(hc, "Devices", yajl_t_any)) || nonempty(api_get(hc, "DeviceRequests", yajl_t_any)) ||
	    nonempty(api_get(hc, "DeviceCgroupRules", yajl_t_any)))
		return refuse(x, 403, "Devices: refused by nsrun api: no host device is given to a container");
	if (nonempty(api_get(hc, "Sysctls", yajl_t_any)))
		return refuse(x, 403, "Sysctls: refused by nsrun api");
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		const char *m = api_get_str(hc, modes[i]);
		if (m && (strcmp(m, "host") == 0 || strncmp(m, "container:", 10) == 0))
			return refuse(x, 403, "%s \"%s\": refused by nsrun api: a container shares no namespace with the "
				      "host or another container", modes[i], m);
	}
	if (net && strcmp(net, "host") == 0)
		return refuse(x, 403, "NetworkMode \"%s\": refused by nsrun api: a container shares no network "
			      "namespace with the host", net);
	if (nonempty(api_get(hc, "VolumesFrom", yajl_t_any)) || nonempty(api_get(hc, "Links", yajl_t_any)))
		return refuse(x, 501, "VolumesFrom and Links are not supported by nsrun api");
	if (net && strncmp(net, "container:", 10) == 0)
		return network_container(x, hc, net + 10);
	if (net && net[0] && strcmp(net, "none") && strcmp(net, "default") && strcmp(net, "bridge"))
		return refuse(x, 404, "network %s not found (nsrun api has bridge, host and none)", net);
	return 0;
}

static int security_opts(struct create_ctx *x, yajl_val hc)
{
	yajl_val so = api_get(hc, "SecurityOpt", yajl_t_array);

	for (size_t i = 0; so && i < so->u.array.len; i++) {
		const char *o = YAJL_GET_STRING(so->u.array.values[i]);
		const char *v;
		if (!o)
			return refuse(x, 400, "HostConfig.SecurityOpt[%zu]: expected a string", i);
		if (strncmp(o, "no-new-privileges", 17) == 0)
			continue; /* always on in nsrun, whatever is asked */
		v = strpbrk(o, "=:");
		if (v && (strcmp(v + 1, "unconfined") == 0 || strcmp(v + 1, "disable") == 0))
			return refuse(x, 403, "SecurityOpt \"%s\": refused by nsrun api: it would weaken the isolation", o);
		if (v && strncmp(o, "seccomp", 7) == 0 && v == o + 7) {
			if (v[1] == '{')
				return refuse(x, 501, "SecurityOpt seccomp: an inline profile is not supported by nsrun api yet: "
					      "give a profile name (default, strict) or a file path");
			char real[PATH_MAX];
			/* a path is a host file the server would read: under the roots, the caller's */
			if (strchr(v + 1, '/') && bind_source(x, "seccomp profile", v + 1, real) < 0)
				return -1;
			if (add_fmt(x, "--security-opt", "seccomp=%s", strchr(v + 1, '/') ? real : v + 1) < 0)
				return -1;
			continue;
		}
		if (v && (strncmp(o, "apparmor", 8) == 0 || strncmp(o, "label", 5) == 0))
			continue; /* nsrun's isolation does not rest on a per-container LSM profile */
		return refuse(x, 400, "SecurityOpt \"%s\": not supported by nsrun api", o);
	}
	return 0;
}

static int limits(struct create_ctx *x, yajl_val hc)
{
	long long mem = get_ll(hc, "Memory"), swap = get_ll(hc, "MemorySwap"), pids = get_ll(hc, "PidsLimit");
	long long cpus = get_ll(hc, "NanoCpus");

	/* Docker's own floor (daemon/daemon_unix.go linuxMinMemory) */
	if (mem > 0 && mem < 6 * 1024 * 1024)
		return refuse(x, 400, "Minimum memory limit allowed is 6MB");
	/* 0 keeps nsrun's default limits (Docker's 0 is "none") */
	if (mem > 0 && add_fmt(x, "--memory", "%lld", mem) < 0)
		return -1;
	if (swap == -1 && add(x, "--memory-swap", "-1") < 0)
		return -1;
	if (swap > 0 && add_fmt(x, "--memory-swap", "%lld", swap) < 0)
		return -1;
	if (pids > 0 && add_fmt(x, "--pids-limit", "%lld", pids) < 0)
		return -1;
	if (cpus > 0 && add_fmt(x, "--cpus", "%lld.%09lld", cpus / 1000000000LL, cpus % 1000000000LL) < 0)
		return -1;
	return 0;
}

/* Is User (Docker's "user[:group]") root, or empty, which is root in Docker? */
static bool user_is_root(const char *user)
{
	size_t n = user ? strcspn(user, ":") : 0;

	return !user || !user[0] || (n == 1 && user[0] == '0') || (n == 4 && strncmp(user, "root", 4) == 0);
}

/* The container's user, as Docker picks it: the request's User, else the image's
 * (its OCI config's), else root (NULL).  A name is looked up in the image's own
 * /etc/passwd and /etc/group when the container starts (nsrun's --user NAME,
 * image_user.h), where Docker looks it up: an unknown one fails the start. */
static const char *effective_user(struct create_ctx *x, yajl_val body, char *buf, size_t size)
{
	const char *user = api_get_str(body, "User");
	struct nsrun_error e = { 0 };

	if (user && user[0])
		return user;
	if (!x->image_entry[0] || image_default_user(x->image_entry, buf, size, &e) < 0 || !buf[0])
		return NULL;
	return buf;
}

/* Without subordinate ids a root container has one id: an entrypoint that switches
 * user (setpriv, gosu, su) then fails with EINVAL (setresuid(2): the id is not
 * mapped in the user namespace).  Says so, why and the fix, in x->warning. */
static void subid_warning(struct create_ctx *x, const struct nsrun_error *e)
{
	_cleanup_free_ char *me = subid_user_name(geteuid());
	const char *why = strncmp(e->msg, "--userns subids: ", 17) == 0 ? e->msg + 17 : e->msg;

	char fix[256];

	if (strstr(e->msg, "has no subordinate ids") || !e->hint)
		snprintf(fix, sizeof(fix), "usermod --add-subuids 100000-165535 --add-subgids 100000-165535 %s",
			 me ? me : "USER");
	else
		snprintf(fix, sizeof(fix), "%s", e->hint);
	warn(x, "nsrun: one id inside this container (%s): an entrypoint that switches user (setpriv, gosu, su) "
	     "fails with \"Invalid argument\"; fix: %s (docs/userns.md)", why, fix);
}

/* Docker's run semantics (docs/userns.md): root inside unless User says otherwise,
 * with Docker's default capabilities (less CapDrop, plus CapAdd within that set:
 * nothing beyond it), bounded by the container's user namespace; more than one id
 * where the caller has subordinate ids, so an entrypoint may switch user; a
 * writable root unless ReadonlyRootfs. */
static int docker_semantics(struct create_ctx *x, yajl_val body, yajl_val hc)
{
	char ubuf[128];
	const char *user = effective_user(x, body, ubuf, sizeof(ubuf));
	/* each a string or an array of strings (check_types) */
	yajl_val add_caps = api_get(hc, "CapAdd", yajl_t_any), drop = api_get(hc, "CapDrop", yajl_t_any);
	uint64_t keep = caps_docker_default(), dropped = 0;
	struct subid_maps m;
	struct nsrun_error e = { 0 };
	char names[256];

	for (size_t i = 0; i < strslice_len(add_caps); i++) {
		const char *c = strslice_at(add_caps, i);
		/* as Docker (moby oci/caps NormalizeLegacyCapabilities): 400 for a name it does not know */
		if (strcasecmp(c, "ALL") != 0 && !caps_known(c))
			return refuse(x, 400, "invalid CapAdd: unknown capability: \"%s\"", c);
		/* Docker's ALL is every capability, not its default set */
		if (strcasecmp(c, "ALL") == 0 || caps_parse_add(c, &keep, &e) < 0)
			return refuse(x, 403, "CapAdd: refused by nsrun api: \"%s\" is beyond Docker's default "
				      "capabilities, the most a container gets (inside its user namespace)", c);
	}
	for (size_t i = 0; i < strslice_len(drop); i++) {
		const char *c = strslice_at(drop, i);
		/* a misspelt name would leave the capability it meant: refused, as Docker does */
		if (strcasecmp(c, "ALL") != 0 && !caps_known(c))
			return refuse(x, 400, "invalid CapDrop: unknown capability: \"%s\"", c);
		caps_parse_add(c, &dropped, &e); /* one never granted is dropped already */
	}
	keep &= ~dropped;
	if (!is_true(api_get(hc, "ReadonlyRootfs", yajl_t_any)) && add(x, "--read-only=false", NULL) < 0)
		return -1;
	if (!user_is_root(user))
		return 0;
	/* rootless with subordinate ids: the range; otherwise one id, root inside still,
	 * said in the response's Warnings and at the head of the log (subid_warning) */
	if (subid_maps_for_caller(&m, &e) == 0) {
		if (add(x, "--userns", "subids") < 0)
			return -1;
	} else {
		subid_warning(x, &e);
	}
	caps_format(keep, names, sizeof(names));
	if (names[0] && add(x, "--cap-add", names) < 0)
		return -1;
	return 0;
}

/* Docker's Config.Healthcheck as --health-cmd and its kin: Test ["CMD-SHELL", CMD]
 * or ["CMD", ARG...] (as shell words), ["NONE"] or none: no check; the durations are
 * nanoseconds, 0 Docker's default.  Returns 0 or -1 (refused). */
static int healthcheck(struct create_ctx *x, yajl_val body)
{
	yajl_val h = api_get(body, "Healthcheck", yajl_t_object);
	yajl_val test = api_get(h, "Test", yajl_t_array);
	static const char *const durations[][2] = { { "Interval", "--health-interval" },
						    { "Timeout", "--health-timeout" },
						    { "StartPeriod", "--health-start-period" } };
	const char *kind = test && test->u.array.len ? YAJL_GET_STRING(test->u.array.values[0]) : NULL;
	const char *words[64];
	char cmd[4096];
	size_t n = 0;

	if (!kind || strcmp(kind, "NONE") == 0)
		return 0;
	for (size_t i = 1; i < test->u.array.len && n < 64; i++)
		if (!(words[n++] = YAJL_GET_STRING(test->u.array.values[i])))
			return refuse(x, 400, "Healthcheck.Test[%zu]: expected a string", i);
	if (strcmp(kind, "CMD-SHELL") == 0 && n == 1)
		snprintf(cmd, sizeof(cmd), "%s", words[0]);
	else if (strcmp(kind, "CMD") == 0 && n >= 1 && n < 64)
		shell_quote_join(words, n, cmd, sizeof(cmd));
	else
		return refuse(x, 400, "Healthcheck.Test: expected [\"CMD-SHELL\", CMD], [\"CMD\", ARG...] or [\"NONE\"]");
	if (add(x, "--health-cmd", cmd) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(durations) / sizeof(durations[0]); i++) {
		long long ns = get_ll(h, durations[i][0]);
		if (ns > 0 && add_fmt(x, durations[i][1], "%lld.%09lld", ns / 1000000000LL, ns % 1000000000LL) < 0)
			return -1;
	}
	if (get_ll(h, "Retries") > 0 && add_fmt(x, "--health-retries", "%lld", get_ll(h, "Retries")) < 0)
		return -1;
	return 0;
}

static int process(struct create_ctx *x, yajl_val body, yajl_val hc)
{
	char ubuf[128];
	const char *user = effective_user(x, body, ubuf, sizeof(ubuf)), *wd = api_get_str(body, "WorkingDir");
	const char *host = api_get_str(body, "Hostname");
	yajl_val env = api_get(body, "Env", yajl_t_array), ep = api_get(body, "Entrypoint", yajl_t_any);
	yajl_val cmd = api_get(body, "Cmd", yajl_t_any), eh = api_get(hc, "ExtraHosts", yajl_t_array);
	long long stop = get_ll(body, "StopTimeout");

	/* the service holds its stdin (and pty) for attaching clients (service_stdin.h) */
	if (is_true(api_get(body, "Tty", yajl_t_any)) && add(x, "-t", NULL) < 0)
		return -1;
	if (is_true(api_get(body, "OpenStdin", yajl_t_any)) &&
	    (add(x, "-i", NULL) < 0 ||
	     (is_true(api_get(body, "StdinOnce", yajl_t_any)) && add(x, "--stdin-once", NULL) < 0)))
		return -1;
	if (user_is_root(user)) {
		const char *group = user ? strchr(user, ':') : NULL;
		if (add_fmt(x, "--user", "0%s", group && strcmp(group, ":root") ? group : "") < 0)
			return -1;
	} else if (add(x, "--user", user) < 0) {
		return -1;
	}
	if (wd && wd[0] && add(x, "-w", wd) < 0)
		return -1;
	if (host && host[0] && add(x, "--hostname", host) < 0)
		return -1;
	if (stop > 0 && add_fmt(x, "--stop-timeout", "%lld", stop) < 0)
		return -1;
	for (size_t i = 0; env && i < env->u.array.len; i++) {
		const char *kv = YAJL_GET_STRING(env->u.array.values[i]);
		/* KEY alone would take the server's value: the client resolves those */
		if (kv && strchr(kv, '=') && add(x, "-e", kv) < 0)
			return -1;
	}
	for (size_t i = 0; eh && i < eh->u.array.len; i++) {
		const char *h = YAJL_GET_STRING(eh->u.array.values[i]);
		if (h && add(x, "--add-host", h) < 0)
			return -1;
	}
	/* the command below is whole, by the rule below: no entrypoint of the image's
	 * is put before it again (--entrypoint "" clears it) */
	if (healthcheck(x, body) < 0 || add(x, "--entrypoint", "") < 0 || add(x, "--", NULL) < 0)
		return -1;
	/* docker's rule: the request's Entrypoint, else the image's; the request's
	 * Cmd, else the image's unless the request set an Entrypoint */
	bool own_ep = ep && !YAJL_IS_NULL(ep), own_cmd = cmd && !YAJL_IS_NULL(cmd);
	if (!own_ep || !own_cmd) {
		struct strv iep = { 0 }, icmd = { 0 };
		struct nsrun_error err = { 0 };
		int rc = image_default_command(x->image_entry, &iep, &icmd, &err);
		for (size_t i = 0; rc == 0 && !own_ep && i < iep.n; i++)
			rc = add(x, iep.v[i], NULL);
		for (size_t i = 0; rc == 0 && !own_ep && !own_cmd && i < icmd.n; i++)
			rc = add(x, icmd.v[i], NULL);
		strv_free(&iep);
		strv_free(&icmd);
		if (rc < 0)
			return x->status ? -1 : refuse(x, 500, "image %s: %s", x->image_entry, err.msg);
	}
	for (int pass = 0; pass < 2; pass++) {
		yajl_val a = pass ? cmd : ep;
		if (a && YAJL_IS_STRING(a) && add(x, YAJL_GET_STRING(a), NULL) < 0)
			return -1;
		for (size_t i = 0; a && YAJL_IS_ARRAY(a) && i < a->u.array.len; i++) {
			const char *s = YAJL_GET_STRING(a->u.array.values[i]);
			if (!s)
				return refuse(x, 400, "%s[%zu]: expected a string", pass ? "Cmd" : "Entrypoint", i);
			if (add(x, s, NULL) < 0)
				return -1;
		}
	}
	if (strcmp(x->args.v[x->args.n - 1], "--") == 0)
		return refuse(x, 400, "No command specified (the image has no Entrypoint or Cmd: give Cmd)");
	return 0;
}

/* The options through the command line's own parser, as start will run them. */
static int check_options(struct create_ctx *x, const char *name)
{
	struct nsrun_config cfg;
	struct nsrun_error err = { 0 };
	struct strv argv = { 0 };
	int rc = 0;

	if (config_init(&cfg, &err) < 0)
		return refuse(x, 500, "%s", err.msg);
	if (strv_push(&argv, "nsrun") < 0 || strv_push(&argv, "-d") < 0 || strv_push(&argv, "--name") < 0 ||
	    strv_push(&argv, name) < 0)
		rc = refuse(x, 500, "out of memory");
	for (size_t i = 0; rc == 0 && i < x->args.n; i++)
		if (strv_push(&argv, x->args.v[i]) < 0)
			rc = refuse(x, 500, "out of memory");
	if (rc == 0 && (cli_parse(&cfg, (int)argv.n, argv.v, &err) < 0 || config_validate_service(&cfg, &err) < 0))
		rc = refuse(x, 400, "%s%s%s", err.msg, err.errnum ? ": " : "", err.errnum ? strerror(err.errnum) : "");
	strv_free(&argv);
	config_free(&cfg);
	return rc;
}

static void gen_doc(yajl_gen g, struct create_ctx *x, yajl_val body, yajl_val hc, const char *name, const char *id,
		    const char *image)
{
	yajl_gen_map_open(g);
	api_gen_kv_str(g, "id", id);
	api_gen_kv_str(g, "name", name);
	api_gen_kv_int(g, "created", (long long)time(NULL));
	api_gen_kv_str(g, "image", image);
	api_gen_kv_str(g, "image_ref", api_get_str(body, "Image"));
	api_gen_kv_bool(g, "auto_remove", is_true(api_get(hc, "AutoRemove", yajl_t_any)));
	api_gen_str(g, "labels");
	api_gen_value(g, api_get(body, "Labels", yajl_t_object));
	/* as given, for inspect */
	api_gen_str(g, "config");
	api_gen_value(g, body);
	if (x->ryuk)
		api_gen_kv_bool(g, "ryuk", true);
	if (x->warning[0])
		api_gen_kv_str(g, "warning", x->warning);
	api_gen_str(g, "args");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < x->args.n; i++)
		api_gen_str(g, x->args.v[i]);
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
}

char *api_create_config(const struct api_server *srv, const char *body_text, size_t body_len, const char *name,
			const char *id, size_t *len, unsigned *status, char *msg, size_t msg_len)
{
	struct create_ctx x = { .srv = srv, .msg = msg, .msg_len = msg_len };
	yajl_val body = NULL, hc;
	char image[IMAGE_REF_MAX + 8], err[256];
	char *out = NULL;
	yajl_gen g = NULL;

	body = api_parse(body_text, body_len, err, sizeof(err));
	if (!body || !YAJL_IS_OBJECT(body)) {
		refuse(&x, 400, "invalid JSON: %s", body ? "not an object" : err);
		goto out;
	}
	hc = api_get(body, "HostConfig", yajl_t_object);
	/* the reaper runs nothing in a container: no option of its applies (the
	 * Docker socket it binds, Privileged), nothing of the host is given to it */
	x.ryuk = api_is_ryuk(api_get_str(body, "Image"));
	if (x.ryuk)
		snprintf(image, sizeof(image), "testcontainers/ryuk");
	else if (check_types(&x, body) < 0 || image_option(&x, body, image, sizeof(image)) < 0 ||
		 host_namespaces(&x, hc) < 0 || security_opts(&x, hc) < 0 || limits(&x, hc) < 0 || binds(&x, hc) < 0 ||
		 tmpfs_and_mounts(&x, hc) < 0 || ports(&x, body, hc) < 0 || docker_semantics(&x, body, hc) < 0 ||
		 process(&x, body, hc) < 0 || check_options(&x, name) < 0)
		goto out;
	if (!(g = api_gen())) {
		refuse(&x, 500, "out of memory");
		goto out;
	}
	gen_doc(g, &x, body, hc, name, id, image);
	{
		const unsigned char *buf;
		yajl_gen_get_buf(g, &buf, len);
		if (!(out = malloc(*len)))
			refuse(&x, 500, "out of memory");
		else
			memcpy(out, buf, *len);
	}
out:
	*status = x.status;
	if (g)
		yajl_gen_free(g);
	yajl_tree_free(body);
	strv_free(&x.args);
	strv_free(&x.mounted);
	return out;
}
