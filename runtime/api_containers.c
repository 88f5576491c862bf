/* api_containers.c - /containers/...: a container is an nsrun service (service.h);
 * the API adds config.json to its directory (id, labels, the options start runs). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api_internal.h"
#include "cleanup.h"
#include "sys.h"

#define AUTO_REMOVE_AFTER_S 2

/* ---- the containers on disk ---- */

char *api_read_small_file(int dir_fd, const char *file, size_t *len)
{
	_cleanup_close_ int fd = openat(dir_fd, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	char *buf;
	ssize_t n;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)API_MAX_BODY * 2)
		return NULL;
	if (!(buf = malloc((size_t)st.st_size + 1)))
		return NULL;
	n = read(fd, buf, (size_t)st.st_size);
	if (n < 0) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	*len = (size_t)n;
	return buf;
}

/* Writes text to file in dir_fd: a temporary file, then rename(2).  Returns 0 or -1. */
int api_write_file_atomic(int dir_fd, const char *file, const char *text, size_t len)
{
	char tmp[64];
	int fd, rc;

	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -1;
	rc = write_all(fd, text, len);
	close(fd);
	return rc == 0 ? renameat(dir_fd, tmp, dir_fd, file) : -1;
}

/* Fills c from NAME's directory.  Returns 0, or -1 when it is not (yet) a container. */
static int ctr_load(int root_fd, const char *name, struct api_ctr *c)
{
	_cleanup_close_ int fd = openat(root_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_free_ char *text = NULL;
	const char *id;
	size_t len = 0;
	char msg[128], seed[128];

	memset(c, 0, sizeof(*c));
	if (fd < 0)
		return -1;
	c->alive = state_is_alive(fd);
	if (state_read(fd, &c->st) < 0)
		return -1; /* starting: not written yet */
	snprintf(c->name, sizeof(c->name), "%.64s", name);
	if ((text = api_read_small_file(fd, API_CONFIG_FILE, &len)))
		c->config = api_parse(text, len, msg, sizeof(msg));
	if (!c->alive && strcmp(c->st.status, "running") == 0) {
		/* its monitor was killed (kill, OOM): so was the container */
		if (!c->config)
			return -1; /* a plain service: nsrun ps removes it */
		snprintf(c->st.status, sizeof(c->st.status), "exited");
		c->st.exit_code = 128 + SIGKILL;
		state_write(fd, &c->st);
	}
	id = api_get_str(c->config, "id");
	if (id && strlen(id) == API_ID_LEN) {
		snprintf(c->id, sizeof(c->id), "%s", id);
	} else {
		/* a plain `nsrun -d` service: an id as stable as its name and start */
		snprintf(seed, sizeof(seed), "nsrun:%.64s:%lld", name, c->st.created);
		api_sha256_hex(seed, c->id);
	}
	return 0;
}

void api_ctrs_free(struct api_ctr *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		yajl_tree_free(v[i].config);
	free(v);
}

int api_ctrs_load(struct api_ctr **out, size_t *n, char *msg, size_t msg_len)
{
	struct nsrun_error err = { 0 };
	char root[PATH_MAX];
	_cleanup_close_ int root_fd = state_open_root(root, sizeof(root), &err);
	struct api_ctr *v = NULL;
	size_t cap = 0;
	DIR *d;
	struct dirent *e;

	*out = NULL;
	*n = 0;
	if (root_fd < 0) {
		snprintf(msg, msg_len, "%s", err.msg);
		return -1;
	}
	if (!(d = fdopendir(dup(root_fd)))) {
		snprintf(msg, msg_len, "read %s: %s", root, strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || !service_name_valid(e->d_name))
			continue;
		if (*n == cap) {
			struct api_ctr *nv = realloc(v, (cap = cap ? cap * 2 : 16) * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		if (ctr_load(root_fd, e->d_name, &v[*n]) == 0)
			(*n)++;
		else
			yajl_tree_free(v[*n].config);
	}
	closedir(d);
	*out = v;
	return 0;
}

/* Finds ref (an id, a unique id prefix, a name, "/name").  Returns 0 with *c (free its
 * config), or -1: *status 404 or 500 and msg. */
int api_ctr_find(const char *ref, struct api_ctr *c, unsigned *status, char *msg, size_t msg_len)
{
	struct api_ctr *v = NULL;
	size_t n = 0, found = (size_t)-1, matches = 0;

	*status = 500;
	if (api_ctrs_load(&v, &n, msg, msg_len) < 0)
		return -1;
	if (ref[0] == '/')
		ref++;
	for (size_t i = 0; i < n && ref[0]; i++) {
		if (strcmp(v[i].name, ref) == 0 || strcmp(v[i].id, ref) == 0) {
			found = i;
			matches = 1;
			break;
		}
		if (strncmp(v[i].id, ref, strlen(ref)) == 0) {
			found = i;
			matches++;
		}
	}
	*status = 404;
	if (matches != 1) {
		snprintf(msg, msg_len, matches ? "multiple containers match \"%s\": give more of the id" :
			 "No such container: %s", ref);
		api_ctrs_free(v, n);
		return -1;
	}
	*c = v[found];
	v[found].config = NULL;
	api_ctrs_free(v, n);
	return 0;
}

void api_ctr_free(struct api_ctr *c)
{
	yajl_tree_free(c->config);
	c->config = NULL;
}

int api_open_dir(const char *name, int *root_fd)
{
	struct nsrun_error err = { 0 };
	char root[PATH_MAX];

	if ((*root_fd = state_open_root(root, sizeof(root), &err)) < 0)
		return -1;
	return openat(*root_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* Waits until NAME's lock is free, up to timeout_us.  Returns true if it is. */
bool api_wait_gone(const char *name, uint64_t timeout_us)
{
	_cleanup_close_ int root_fd = -1, fd = api_open_dir(name, &root_fd);
	uint64_t end = monotonic_us() + timeout_us;

	while (fd >= 0 && state_is_alive(fd)) {
		if (monotonic_us() >= end)
			return false;
		usleep(10000);
	}
	return true;
}

int api_reap(struct api_server *srv)
{
	struct api_ctr *v = NULL;
	size_t n = 0;
	char msg[256];
	int running = 0;

	pthread_mutex_lock(&srv->lock);
	if (api_ctrs_load(&v, &n, msg, sizeof(msg)) == 0) {
		for (size_t i = 0; i < n; i++) {
			yajl_val ar = api_get(v[i].config, "auto_remove", yajl_t_true);
			if (v[i].alive)
				running++;
			else if (ar && strcmp(v[i].st.status, "exited") == 0) {
				_cleanup_close_ int root_fd = -1, fd = api_open_dir(v[i].name, &root_fd);
				struct stat st;
				/* a second after its exit (state.json's time): a wait that polls
				 * sees the exit code before the container goes */
				if (fd >= 0 && fstatat(fd, STATE_FILE, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
				    time(NULL) - st.st_mtime >= AUTO_REMOVE_AFTER_S)
					state_remove_dead(root_fd, v[i].name, fd);
			}
		}
	}
	api_ctrs_free(v, n);
	pthread_mutex_unlock(&srv->lock);
	return running;
}

/* ---- JSON of a container ---- */

static const char *state_word(const struct api_ctr *c)
{
	if (c->alive)
		return "running";
	return strcmp(c->st.status, "created") == 0 ? "created" : "exited";
}

/* Docker's State.Health of a container with a health check (--health-cmd). */
static void gen_health(yajl_gen g, const struct service_health *h)
{
	char when[32] = "0001-01-01T00:00:00Z";
	time_t t = (time_t)h->checked;
	struct tm tm;

	if (h->checked > 0 && gmtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	api_gen_str(g, "Health");
	yajl_gen_map_open(g);
	api_gen_kv_str(g, "Status", h->status);
	api_gen_kv_int(g, "FailingStreak", h->failing_streak);
	api_gen_str(g, "Log");
	yajl_gen_array_open(g);
	if (h->checked > 0) {
		yajl_gen_map_open(g);
		api_gen_kv_str(g, "Start", when);
		api_gen_kv_str(g, "End", when);
		api_gen_kv_int(g, "ExitCode", h->exit_code);
		api_gen_kv_str(g, "Output", h->output);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
}

static void gen_labels(yajl_gen g, const struct api_ctr *c)
{
	yajl_val l = api_get(c->config, "labels", yajl_t_object);

	api_gen_str(g, "Labels");
	if (l)
		api_gen_value(g, l);
	else {
		yajl_gen_map_open(g);
		yajl_gen_map_close(g);
	}
}

static const char *image_of(const struct api_ctr *c)
{
	const char *ref = api_get_str(c->config, "image_ref");

	return ref ? ref : c->st.image;
}

static void image_id(const struct api_ctr *c, char *out, size_t len)
{
	char hex[API_ID_LEN + 1], seed[300];
	const char *image = api_get_str(c->config, "image");

	snprintf(seed, sizeof(seed), "nsrun-image:%s", image ? image : c->st.image);
	api_sha256_hex(seed, hex);
	snprintf(out, len, "sha256:%s", hex);
}

static void gen_summary(yajl_gen g, const struct api_ctr *c)
{
	char status[64], iid[80], name[NAME_MAX_LEN + 2];

	if (c->alive)
		snprintf(status, sizeof(status), "Up%s%s%s", !c->st.health.status[0] ? "" :
			 strcmp(c->st.health.status, "starting") == 0 ? " (health: " : " (", c->st.health.status,
			 c->st.health.status[0] ? ")" : "");
	else if (strcmp(c->st.status, "created") == 0)
		snprintf(status, sizeof(status), "Created");
	else
		snprintf(status, sizeof(status), "Exited (%lld)", c->st.exit_code);
	image_id(c, iid, sizeof(iid));
	snprintf(name, sizeof(name), "/%s", c->name);
	yajl_gen_map_open(g);
	api_gen_kv_str(g, "Id", c->id);
	api_gen_str(g, "Names");
	yajl_gen_array_open(g);
	api_gen_str(g, name);
	yajl_gen_array_close(g);
	api_gen_kv_str(g, "Image", image_of(c));
	api_gen_kv_str(g, "ImageID", iid);
	api_gen_kv_str(g, "Command", c->st.command);
	api_gen_kv_int(g, "Created", c->st.created);
	api_gen_str(g, "Ports");
	yajl_gen_array_open(g);
	for (size_t i = 0; c->alive && i < c->st.n_ports; i++) {
		yajl_gen_map_open(g);
		api_gen_kv_str(g, "IP", c->st.ports[i].host_ip);
		api_gen_kv_int(g, "PrivatePort", c->st.ports[i].container_port);
		api_gen_kv_int(g, "PublicPort", c->st.ports[i].host_port);
		api_gen_kv_str(g, "Type", "tcp");
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	gen_labels(g, c);
	api_gen_kv_str(g, "State", state_word(c));
	api_gen_kv_str(g, "Status", status);
	api_gen_str(g, "HostConfig");
	yajl_gen_map_open(g);
	api_gen_kv_str(g, "NetworkMode", "none");
	yajl_gen_map_close(g);
	api_gen_str(g, "Mounts");
	yajl_gen_array_open(g);
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
}

bool api_ctr_open_stdin(const struct api_ctr *c)
{
	yajl_val cfg = api_get(c->config, "config", yajl_t_object);

	return c->st.open_stdin || YAJL_IS_TRUE(api_get(cfg, "OpenStdin", yajl_t_true));
}

bool api_ctr_tty(const struct api_ctr *c)
{
	yajl_val cfg = api_get(c->config, "config", yajl_t_object);

	return c->st.tty || YAJL_IS_TRUE(api_get(cfg, "Tty", yajl_t_true));
}

/* Config, as created (with Docker's defaults for what was not given). */
static void gen_config(yajl_gen g, const struct api_ctr *c)
{
	yajl_val cfg = api_get(c->config, "config", yajl_t_object);
	static const char *const skip[] = { "HostConfig", "Labels", "Tty", "Image", "NetworkingConfig" };

	api_gen_str(g, "Config");
	yajl_gen_map_open(g);
	for (size_t i = 0; cfg && i < cfg->u.object.len; i++) {
		bool skipped = false;
		for (size_t j = 0; j < sizeof(skip) / sizeof(skip[0]); j++)
			skipped |= strcmp(cfg->u.object.keys[i], skip[j]) == 0;
		if (skipped)
			continue;
		api_gen_str(g, cfg->u.object.keys[i]);
		api_gen_value(g, cfg->u.object.values[i]);
	}
	api_gen_kv_bool(g, "Tty", api_ctr_tty(c));
	api_gen_kv_str(g, "Image", image_of(c));
	gen_labels(g, c);
	yajl_gen_map_close(g);
}

static void gen_host_config(yajl_gen g, const struct api_ctr *c)
{
	yajl_val hc = api_get(api_get(c->config, "config", yajl_t_object), "HostConfig", yajl_t_object);
	static const char *const ours[] = { "AutoRemove", "NetworkMode", "ReadonlyRootfs", "Privileged",
					    "LogConfig" };

	api_gen_str(g, "HostConfig");
	yajl_gen_map_open(g);
	for (size_t i = 0; hc && i < hc->u.object.len; i++) {
		bool skipped = false;
		for (size_t j = 0; j < sizeof(ours) / sizeof(ours[0]); j++)
			skipped |= strcmp(hc->u.object.keys[i], ours[j]) == 0;
		if (skipped)
			continue;
		api_gen_str(g, hc->u.object.keys[i]);
		api_gen_value(g, hc->u.object.values[i]);
	}
	api_gen_kv_bool(g, "AutoRemove", api_get(c->config, "auto_remove", yajl_t_true) != NULL);
	api_gen_kv_str(g, "NetworkMode", "none");
	/* the image itself is never written; without ReadonlyRootfs the root is
	 * writable through a tmpfs layer (api_create.c), as Docker's */
	api_gen_kv_bool(g, "ReadonlyRootfs", hc && api_get(hc, "ReadonlyRootfs", yajl_t_true) != NULL);
	api_gen_kv_bool(g, "Privileged", false);
	/* the log is kept as json-file's is (logs, follow, since): docker-py's
	 * containers.run reads LogConfig.Type to know it may stream the logs */
	api_gen_str(g, "LogConfig");
	yajl_gen_map_open(g);
	api_gen_kv_str(g, "Type", "json-file");
	api_gen_str(g, "Config");
	yajl_gen_map_open(g);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
}

static void gen_ports(yajl_gen g, const struct api_ctr *c)
{
	api_gen_str(g, "Ports");
	yajl_gen_map_open(g);
	for (size_t i = 0; c->alive && i < c->st.n_ports; i++) {
		char key[32], port[16];
		snprintf(key, sizeof(key), "%u/tcp", (unsigned)c->st.ports[i].container_port);
		snprintf(port, sizeof(port), "%u", (unsigned)c->st.ports[i].host_port);
		api_gen_str(g, key);
		yajl_gen_array_open(g);
		yajl_gen_map_open(g);
		api_gen_kv_str(g, "HostIp", c->st.ports[i].host_ip);
		api_gen_kv_str(g, "HostPort", port);
		yajl_gen_map_close(g);
		yajl_gen_array_close(g);
	}
	yajl_gen_map_close(g);
}

void api_gen_inspect(yajl_gen g, const struct api_ctr *c)
{
	char created[64], iid[80], name[NAME_MAX_LEN + 2];
	yajl_val args = api_get(c->config, "args", yajl_t_array);
	size_t cmd = 0;

	api_time_rfc3339(c->st.created, created, sizeof(created));
	image_id(c, iid, sizeof(iid));
	snprintf(name, sizeof(name), "/%s", c->name);
	for (size_t i = 0; args && i < args->u.array.len; i++)
		if (!cmd && YAJL_IS_STRING(args->u.array.values[i]) &&
		    strcmp(api_str(args->u.array.values[i]), "--") == 0)
			cmd = i + 1;
	yajl_gen_map_open(g);
	api_gen_kv_str(g, "Id", c->id);
	api_gen_kv_str(g, "Created", created);
	api_gen_kv_str(g, "Path", cmd && cmd < args->u.array.len ? YAJL_GET_STRING(args->u.array.values[cmd]) :
		       c->st.command);
	api_gen_str(g, "Args");
	yajl_gen_array_open(g);
	for (size_t i = cmd + 1; cmd && i < args->u.array.len; i++)
		api_gen_value(g, args->u.array.values[i]);
	yajl_gen_array_close(g);
	api_gen_str(g, "State");
	yajl_gen_map_open(g);
	api_gen_kv_str(g, "Status", state_word(c));
	api_gen_kv_bool(g, "Running", c->alive);
	api_gen_kv_bool(g, "Paused", false);
	api_gen_kv_bool(g, "Restarting", false);
	api_gen_kv_bool(g, "OOMKilled", false);
	api_gen_kv_bool(g, "Dead", false);
	api_gen_kv_int(g, "Pid", c->alive ? c->st.pid : 0);
	api_gen_kv_int(g, "ExitCode", strcmp(state_word(c), "exited") == 0 ? c->st.exit_code : 0);
	api_gen_kv_str(g, "Error", "");
	api_gen_kv_str(g, "StartedAt", strcmp(state_word(c), "created") ? created : "0001-01-01T00:00:00Z");
	api_gen_kv_str(g, "FinishedAt", "0001-01-01T00:00:00Z");
	if (c->st.health.status[0]) /* --health-cmd: Docker's State.Health, the last check as its Log */
		gen_health(g, &c->st.health);
	yajl_gen_map_close(g);
	api_gen_kv_str(g, "Image", iid);
	api_gen_kv_str(g, "Name", name);
	api_gen_kv_int(g, "RestartCount", 0);
	api_gen_kv_str(g, "Driver", "nsrun");
	api_gen_kv_str(g, "Platform", "linux");
	api_gen_kv_str(g, "LogPath", c->st.log);
	gen_host_config(g, c);
	gen_config(g, c);
	api_gen_str(g, "NetworkSettings");
	yajl_gen_map_open(g);
	gen_ports(g, c);
	api_gen_kv_str(g, "IPAddress", "");
	api_gen_str(g, "Networks");
	yajl_gen_map_open(g);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	api_gen_str(g, "Mounts");
	yajl_gen_array_open(g);
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
}

/* ---- list ---- */

/* True if c has every label the filter names ("KEY" or "KEY=VALUE"). */
static bool label_matches(const struct api_ctr *c, const char *want)
{
	yajl_val l = api_get(c->config, "labels", yajl_t_object);
	const char *eq = strchr(want, '=');
	size_t klen = eq ? (size_t)(eq - want) : strlen(want);

	for (size_t i = 0; l && i < l->u.object.len; i++) {
		if (strlen(l->u.object.keys[i]) != klen || strncmp(l->u.object.keys[i], want, klen) != 0)
			continue;
		if (!eq)
			return true;
		yajl_val v = l->u.object.values[i];
		return YAJL_IS_STRING(v) && strcmp(api_str(v), eq + 1) == 0;
	}
	return false;
}

/* The values of one filter: ["a", "b"] or {"a": true} (both are sent by clients). */
static size_t filter_values(yajl_val f, const char *key, const char **out, size_t max)
{
	yajl_val v = api_get(f, key, yajl_t_any);
	size_t n = 0;

	if (v && YAJL_IS_ARRAY(v))
		for (size_t i = 0; i < v->u.array.len && n < max; i++)
			if (YAJL_IS_STRING(v->u.array.values[i]))
				out[n++] = YAJL_GET_STRING(v->u.array.values[i]);
	if (v && YAJL_IS_OBJECT(v))
		for (size_t i = 0; i < v->u.object.len && n < max; i++)
			out[n++] = v->u.object.keys[i];
	return n;
}

static bool filters_match(yajl_val f, const struct api_ctr *c)
{
	const char *vals[32];
	size_t n;
	bool any;

	n = filter_values(f, "label", vals, 32);
	for (size_t i = 0; i < n; i++)
		if (!label_matches(c, vals[i]))
			return false;
	n = filter_values(f, "name", vals, 32);
	any = n == 0;
	for (size_t i = 0; i < n; i++)
		any |= strstr(c->name, vals[i][0] == '/' ? vals[i] + 1 : vals[i]) != NULL;
	if (!any)
		return false;
	n = filter_values(f, "id", vals, 32);
	any = n == 0;
	for (size_t i = 0; i < n; i++)
		any |= strncmp(c->id, vals[i], strlen(vals[i])) == 0;
	if (!any)
		return false;
	n = filter_values(f, "status", vals, 32);
	any = n == 0;
	for (size_t i = 0; i < n; i++)
		any |= strcmp(state_word(c), vals[i]) == 0;
	return any;
}

enum MHD_Result api_list(struct api_server *srv, struct MHD_Connection *conn)
{
	const char *ftext = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "filters");
	bool all = api_arg_true(conn, "all");
	yajl_val f = NULL;
	struct api_ctr *v = NULL;
	size_t n = 0;
	char msg[256];
	yajl_gen g;

	if (ftext && !(f = api_parse(ftext, strlen(ftext), msg, sizeof(msg))))
		return api_error(conn, 400, "invalid filters: %s", msg);
	/* Docker's two forms, {"label": ["a"]} and {"label": {"a": true}}: anything
	 * else would match every container (a listing wider than asked) */
	for (size_t i = 0; f && i < (YAJL_IS_OBJECT(f) ? f->u.object.len : 1); i++) {
		yajl_val x = YAJL_IS_OBJECT(f) ? f->u.object.values[i] : NULL;
		bool ok = x && (YAJL_IS_OBJECT(x) || YAJL_IS_ARRAY(x));
		for (size_t j = 0; ok && YAJL_IS_ARRAY(x) && j < x->u.array.len; j++)
			ok = YAJL_IS_STRING(x->u.array.values[j]);
		if (!ok) {
			enum MHD_Result r = api_error(conn, 400, "invalid filters: %s%s%s", x ? "\"" : "",
						      x ? f->u.object.keys[i] : "expected an object",
						      x ? "\": expected an array of strings or an object" : "");
			yajl_tree_free(f);
			return r;
		}
	}
	pthread_mutex_lock(&srv->lock);
	int rc = api_ctrs_load(&v, &n, msg, sizeof(msg));
	pthread_mutex_unlock(&srv->lock);
	if (rc < 0) {
		yajl_tree_free(f);
		return api_error(conn, 500, "%s", msg);
	}
	g = api_gen();
	if (g) {
		yajl_gen_array_open(g);
		for (size_t i = 0; i < n; i++)
			if ((all || v[i].alive) && filters_match(f, &v[i]))
				gen_summary(g, &v[i]);
		yajl_gen_array_close(g);
	}
	api_ctrs_free(v, n);
	yajl_tree_free(f);
	return api_reply_gen(conn, 200, g);
}
