/* exec_spec.c - see exec_spec.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "caps.h"
#include "cleanup.h"
#include "exec_spec.h"
#include "sys.h"
#include "tier.h"
#include "util.h"

#define SPEC_VERSION 1
#define SPEC_MAX_BYTES (1 << 20)

#define GEN_STR(g, s) yajl_gen_string(g, (const unsigned char *)(s), strlen(s))

static void gen_bool(yajl_gen g, const char *k, bool v)
{
	GEN_STR(g, k);
	yajl_gen_bool(g, v);
}

static void gen_int(yajl_gen g, const char *k, long long v)
{
	GEN_STR(g, k);
	yajl_gen_integer(g, v);
}

static void gen_str_or_null(yajl_gen g, const char *k, const char *v)
{
	GEN_STR(g, k);
	if (v)
		GEN_STR(g, v);
	else
		yajl_gen_null(g);
}

int exec_spec_format(const struct nsrun_config *cfg, const char *profiles_dir, char **out, struct nsrun_error *err)
{
	yajl_gen g = yajl_gen_alloc(NULL);
	const unsigned char *buf;
	size_t len;

	if (!g)
		return error_set(err, ENOMEM, "exec spec");
	yajl_gen_config(g, yajl_gen_beautify, 1);
	yajl_gen_map_open(g);
	gen_int(g, "version", SPEC_VERSION);
	GEN_STR(g, "isolation");
	GEN_STR(g, tier_name(cfg->isolation));
	gen_int(g, "uid", cfg->process.uid);
	gen_int(g, "gid", cfg->process.gid);
	gen_str_or_null(g, "cwd", cfg->process.cwd);
	GEN_STR(g, "env");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < cfg->process.env.n; i++)
		GEN_STR(g, cfg->process.env.v[i]);
	yajl_gen_array_close(g);
	gen_str_or_null(g, "seccomp", cfg->security.seccomp);
	gen_str_or_null(g, "seccomp_profiles_dir", profiles_dir);
	gen_bool(g, "strict", cfg->security.strict);
	gen_bool(g, "allow_nested", cfg->security.allow_nested);
	gen_bool(g, "landlock", cfg->security.landlock);
	gen_bool(g, "landlock_no_tcp", cfg->security.landlock_no_tcp);
	/* --userns subids: the payload is in the container's user namespace; exec's
	 * command too, with the capabilities of --cap-add as the payload has them */
	gen_bool(g, "userns_subids", cfg->userns == NSRUN_USERNS_SUBIDS);
	gen_int(g, "cap_add", (long long)cfg->security.cap_add);
	gen_bool(g, "rootfs_writable", cfg->rootfs_writable);
	/* what the payload's Landlock ruleset opens for writing and binding */
	GEN_STR(g, "rw_volumes");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < cfg->n_mounts; i++)
		if (cfg->mounts[i].rw)
			GEN_STR(g, cfg->mounts[i].destination);
	yajl_gen_array_close(g);
	GEN_STR(g, "tmpfs");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < cfg->n_tmpfs; i++)
		GEN_STR(g, cfg->tmpfs[i].destination);
	yajl_gen_array_close(g);
	GEN_STR(g, "published_ports");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < cfg->n_publish; i++)
		yajl_gen_integer(g, cfg->publish[i].container_port);
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	if (yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok || !(*out = strndup((const char *)buf, len))) {
		yajl_gen_free(g);
		return error_set(err, ENOMEM, "exec spec");
	}
	yajl_gen_free(g);
	return 0;
}

int exec_spec_write(int dir_fd, const struct nsrun_config *cfg, const char *profiles_dir, struct nsrun_error *err)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int fd = -1;

	if (exec_spec_format(cfg, profiles_dir, &text, err) < 0)
		return -1;
	fd = openat(dir_fd, EXEC_SPEC_FILE ".tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return error_set(err, errno, "create " EXEC_SPEC_FILE);
	if (write_all(fd, text, strlen(text)) < 0 || write_all(fd, "\n", 1) < 0)
		return error_set(err, errno, "write " EXEC_SPEC_FILE);
	if (renameat(dir_fd, EXEC_SPEC_FILE ".tmp", dir_fd, EXEC_SPEC_FILE) < 0)
		return error_set(err, errno, "rename " EXEC_SPEC_FILE);
	return 0;
}

static yajl_val get(yajl_val root, const char *key, yajl_type t)
{
	const char *path[] = { key, NULL };

	return yajl_tree_get(root, path, t);
}

static bool get_bool(yajl_val root, const char *key)
{
	const char *path[] = { key, NULL };

	return YAJL_IS_TRUE(yajl_tree_get(root, path, yajl_t_any));
}

/* Copies the string at key (or NULL for null or absent) into *slot. Returns 0 or -1 (ENOMEM). */
static int get_str(yajl_val root, const char *key, char **slot)
{
	yajl_val v = get(root, key, yajl_t_string);
	const char *text = v ? YAJL_GET_STRING(v) : NULL;
	char *s = NULL;

	if (text && !(s = strdup(text)))
		return -1;
	free(*slot);
	*slot = s;
	return 0;
}

/* The id at key: 0 to 2^32 - 2.  Returns 0 or -1. */
static int get_id(yajl_val root, const char *key, unsigned *out)
{
	yajl_val v = get(root, key, yajl_t_number);

	if (!v || !YAJL_IS_INTEGER(v) || YAJL_GET_INTEGER(v) < 0 || YAJL_GET_INTEGER(v) >= 0xffffffffLL)
		return -1;
	*out = (unsigned)YAJL_GET_INTEGER(v);
	return 0;
}

/* The array of strings at key (absent: empty), each an absolute path when
 * absolute.  Returns 0 or -1 (errno ENOMEM, or EINVAL for a wrong element). */
static int get_strings(yajl_val root, const char *key, bool absolute, struct strv *out)
{
	yajl_val a = get(root, key, yajl_t_array);

	for (size_t i = 0; a && i < a->u.array.len; i++) {
		yajl_val v = a->u.array.values[i];
		const char *text = YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : NULL;
		if (!text || (absolute && text[0] != '/')) {
			errno = EINVAL;
			return -1;
		}
		if (strv_push(out, text) < 0)
			return -1;
	}
	return 0;
}

static int parse_root(yajl_val root, struct nsrun_config *cfg, char **profiles_dir, struct nsrun_error *err)
{
	yajl_val version = get(root, "version", yajl_t_number), ports;
	struct strv rw = { 0 }, tmpfs = { 0 }, env = { 0 };
	unsigned uid, gid;
	int rc = -1;

	if (!version || !YAJL_IS_INTEGER(version) || YAJL_GET_INTEGER(version) != SPEC_VERSION)
		return error_set(err, 0, EXEC_SPEC_FILE ": not of version %d", SPEC_VERSION);
	if (get_id(root, "uid", &uid) < 0 || get_id(root, "gid", &gid) < 0)
		return error_set(err, 0, EXEC_SPEC_FILE ": no uid or gid");
	{
		yajl_val v = get(root, "isolation", yajl_t_string);
		const char *iso = v ? YAJL_GET_STRING(v) : NULL;
		struct nsrun_error ignored = { 0 };
		if (!iso || strcmp(iso, "auto") == 0)
			cfg->isolation = NSRUN_ISOLATION_AUTO;
		else if (tier_parse(iso, &cfg->isolation, &ignored) < 0)
			return error_set(err, 0, EXEC_SPEC_FILE ": unknown isolation \"%s\"", iso);
	}
	cfg->process.uid = uid;
	cfg->process.gid = gid;
	cfg->security.strict = get_bool(root, "strict");
	cfg->security.allow_nested = get_bool(root, "allow_nested");
	cfg->security.landlock = get_bool(root, "landlock");
	cfg->security.landlock_no_tcp = get_bool(root, "landlock_no_tcp");
	cfg->userns = get_bool(root, "userns_subids") ? NSRUN_USERNS_SUBIDS : NSRUN_USERNS_ONE;
	cfg->rootfs_writable = get_bool(root, "rootfs_writable");
	{
		/* never more than Docker's default set, whatever the file says */
		yajl_val v = get(root, "cap_add", yajl_t_number);
		if (v && YAJL_IS_INTEGER(v) && YAJL_GET_INTEGER(v) > 0)
			cfg->security.cap_add = (uint64_t)YAJL_GET_INTEGER(v) & caps_docker_default();
	}
	if (get_str(root, "cwd", &cfg->process.cwd) < 0 || get_str(root, "seccomp", &cfg->security.seccomp) < 0 ||
	    get_str(root, "seccomp_profiles_dir", profiles_dir) < 0 || get_strings(root, "env", false, &env) < 0 ||
	    get_strings(root, "rw_volumes", true, &rw) < 0 || get_strings(root, "tmpfs", true, &tmpfs) < 0) {
		error_set(err, errno == ENOMEM ? ENOMEM : 0, EXEC_SPEC_FILE ": a field of the wrong type");
		goto out;
	}
	if (!cfg->process.cwd || cfg->process.cwd[0] != '/' || !cfg->security.seccomp) {
		error_set(err, 0, EXEC_SPEC_FILE ": no cwd or seccomp");
		goto out;
	}
	for (size_t i = 0; i < env.n; i++) {
		if (!is_env_assignment(env.v[i])) {
			error_set(err, 0, EXEC_SPEC_FILE ": env[%zu] is no KEY=VALUE", i);
			goto out;
		}
		if (strv_setenv(&cfg->process.env, env.v[i]) < 0) {
			error_set(err, ENOMEM, EXEC_SPEC_FILE);
			goto out;
		}
	}
	if (rw.n && !(cfg->mounts = calloc(rw.n, sizeof(*cfg->mounts)))) {
		error_set(err, ENOMEM, EXEC_SPEC_FILE);
		goto out;
	}
	for (; cfg->n_mounts < rw.n; cfg->n_mounts++) {
		cfg->mounts[cfg->n_mounts].rw = true;
		cfg->mounts[cfg->n_mounts].destination = steal_ptr(&rw.v[cfg->n_mounts]);
	}
	if (tmpfs.n && !(cfg->tmpfs = calloc(tmpfs.n, sizeof(*cfg->tmpfs)))) {
		error_set(err, ENOMEM, EXEC_SPEC_FILE);
		goto out;
	}
	for (; cfg->n_tmpfs < tmpfs.n; cfg->n_tmpfs++)
		cfg->tmpfs[cfg->n_tmpfs].destination = steal_ptr(&tmpfs.v[cfg->n_tmpfs]);
	ports = get(root, "published_ports", yajl_t_array);
	if (ports && ports->u.array.len > NSRUN_MAX_PUBLISH) {
		error_set(err, 0, EXEC_SPEC_FILE ": more than %d published ports", NSRUN_MAX_PUBLISH);
		goto out;
	}
	if (ports && ports->u.array.len && !(cfg->publish = calloc(ports->u.array.len, sizeof(*cfg->publish)))) {
		error_set(err, ENOMEM, EXEC_SPEC_FILE);
		goto out;
	}
	for (size_t i = 0; ports && i < ports->u.array.len; i++) {
		yajl_val p = ports->u.array.values[i];
		if (!YAJL_IS_INTEGER(p) || YAJL_GET_INTEGER(p) < 1 || YAJL_GET_INTEGER(p) > 65535) {
			error_set(err, 0, EXEC_SPEC_FILE ": published_ports[%zu] is no port", i);
			goto out;
		}
		cfg->publish[cfg->n_publish++].container_port = (uint16_t)YAJL_GET_INTEGER(p);
	}
	rc = 0;
out:
	strv_free(&rw);
	strv_free(&tmpfs);
	strv_free(&env);
	return rc;
}

int exec_spec_parse(const char *text, size_t len, struct nsrun_config *cfg, char **profiles_dir,
		    struct nsrun_error *err)
{
	_cleanup_free_ char *copy = strndup(text, len);
	char ebuf[128];
	yajl_val root;
	int rc;

	*profiles_dir = NULL;
	if (!copy)
		return error_set(err, ENOMEM, EXEC_SPEC_FILE);
	if (json_scan_depth(copy, strlen(copy), JSON_MAX_DEPTH) < strlen(copy))
		return error_set(err, 0, EXEC_SPEC_FILE ": nested too deep");
	root = yajl_tree_parse(copy, ebuf, sizeof(ebuf));
	if (!root || !YAJL_IS_OBJECT(root)) {
		yajl_tree_free(root);
		return error_set(err, 0, EXEC_SPEC_FILE ": not a JSON object");
	}
	rc = parse_root(root, cfg, profiles_dir, err);
	yajl_tree_free(root);
	if (rc < 0) {
		free(*profiles_dir);
		*profiles_dir = NULL;
	}
	return rc;
}

int exec_spec_read(int dir_fd, struct nsrun_config *cfg, char **profiles_dir, struct nsrun_error *err)
{
	_cleanup_close_ int fd = openat(dir_fd, EXEC_SPEC_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	_cleanup_free_ char *text = NULL;
	char path[64];
	size_t len = 0;

	*profiles_dir = NULL;
	if (fd < 0)
		return error_set(err, errno, "open " EXEC_SPEC_FILE);
	fd_path(path, sizeof(path), fd);
	if (read_file(path, SPEC_MAX_BYTES, &text, &len) < 0)
		return error_set(err, errno, "read " EXEC_SPEC_FILE);
	return exec_spec_parse(text, len, cfg, profiles_dir, err);
}
