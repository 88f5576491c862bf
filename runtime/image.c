/* image.c - see image.h */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yajl/yajl_tree.h>

#include "cleanup.h"
#include "image.h"
#include "sys.h"
#include "util.h"

#define IMAGE_JSON_MAX (1 << 20)

static void yajl_freep(yajl_val *v)
{
	if (*v)
		yajl_tree_free(*v);
}
#define _cleanup_yajl_ __attribute__((cleanup(yajl_freep)))

char *image_store_dir(struct nsrun_error *err)
{
	const char *env = getenv("NSRUN_IMAGES");
	const char *xdg = getenv("XDG_DATA_HOME");
	const char *home = getenv("HOME");
	char *out = NULL;

	if (env && *env)
		out = strdup(env);
	else if (xdg && xdg[0] == '/')
		return asprintf(&out, "%s/nsrun/images", xdg) < 0 ? NULL : out;
	else if (home && home[0] == '/')
		return asprintf(&out, "%s/.local/share/nsrun/images", home) < 0 ? NULL : out;
	else {
		error_set(err, 0, "cannot find the image store: HOME is not set (set NSRUN_IMAGES)");
		return NULL;
	}
	if (!out)
		error_set(err, ENOMEM, "image store");
	return out;
}

static bool is_valid_image_name(const char *name)
{
	if (!name[0] || name[0] == '.' || strlen(name) > 128)
		return false;
	for (const char *p = name; *p; p++) {
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == '.' || *p == '_' || *p == '-'))
			return false;
	}
	return true;
}

/* Appends the names of the store's images, comma separated, to buf. */
static void list_names(const char *store, char *buf, size_t len)
{
	_cleanup_closedir_ DIR *d = opendir(store);
	struct dirent *de;
	size_t o = 0;

	buf[0] = '\0';
	if (!d)
		return;
	while ((de = readdir(d))) {
		char path[PATH_MAX];
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/image.json", store, de->d_name);
		if (access(path, F_OK) != 0)
			continue;
		int n = snprintf(buf + o, len - o, "%s%s", o ? ", " : "", de->d_name);
		if (n < 0 || (size_t)n >= len - o)
			break;
		o += (size_t)n;
	}
}

static int json_strv(yajl_val root, const char *key, const char *file, struct strv *out,
		     struct nsrun_error *err)
{
	const char *path[] = { key, NULL };
	yajl_val v = yajl_tree_get(root, path, yajl_t_any);

	if (!v)
		return 0;
	if (!YAJL_IS_ARRAY(v))
		return error_set(err, 0, "%s: \"%s\" must be an array of strings", file, key);
	for (size_t i = 0; i < v->u.array.len; i++) {
		yajl_val s = v->u.array.values[i];
		if (!YAJL_IS_STRING(s))
			return error_set(err, 0, "%s: %s[%zu] must be a string", file, key, i);
		if (strv_push(out, YAJL_GET_STRING(s)) < 0)
			return error_set(err, ENOMEM, "%s", file);
	}
	return 0;
}

int image_merge_json(struct nsrun_config *cfg, const char *file, const char *text, struct nsrun_error *err)
{
	_cleanup_yajl_ yajl_val root = NULL;
	struct strv interp = { 0 }, env = { 0 };
	char ebuf[256];
	const char *wd_path[] = { "workdir", NULL };
	yajl_val wd;
	int rc = -1;
	size_t len = strlen(text), off;

	/* before yajl: its tree parser recurses once per level (a deep file is a crash) */
	if ((off = json_scan_depth(text, len, JSON_MAX_DEPTH)) < len)
		return error_set(err, 0, "image.json \"%s\": nested deeper than %d levels at offset %zu",
				 file, JSON_MAX_DEPTH, off);
	root = yajl_tree_parse(text, ebuf, sizeof(ebuf));
	if (!root) {
		char *nl = strchr(ebuf, '\n');
		if (nl)
			*nl = '\0';
		return error_set(err, 0, "image.json \"%s\": %s", file, ebuf);
	}
	if (!YAJL_IS_OBJECT(root))
		return error_set(err, 0, "image.json \"%s\": must be a JSON object", file);
	if (json_strv(root, "interpreter", file, &interp, err) < 0 ||
	    json_strv(root, "env", file, &env, err) < 0)
		goto out;
	for (size_t i = 0; i < env.n; i++) {
		if (!is_env_assignment(env.v[i])) {
			error_set(err, 0, "image.json \"%s\": env[%zu] is not KEY=VALUE", file, i);
			goto out;
		}
		if (strv_setenv(&cfg->process.env, env.v[i]) < 0) {
			error_set(err, ENOMEM, "image env");
			goto out;
		}
	}
	wd = yajl_tree_get(root, wd_path, yajl_t_any);
	if (wd && !YAJL_IS_STRING(wd)) {
		error_set(err, 0, "image.json \"%s\": \"workdir\" must be a string", file);
		goto out;
	}
	if (!cfg->process.cwd && wd && YAJL_GET_STRING(wd)[0]) {
		cfg->process.cwd = config_container_path("image workdir", YAJL_GET_STRING(wd), err);
		if (!cfg->process.cwd)
			goto out;
	}
	if (cfg->mode != NSRUN_MODE_COMMAND) {
		struct strv argv = { 0 };
		if (interp.n == 0) {
			error_set(err, 0, "image \"%s\" has no interpreter: use -- CMD", cfg->image);
			goto out;
		}
		for (size_t i = 0; i < interp.n; i++)
			if (strv_push(&argv, interp.v[i]) < 0)
				goto oom;
		for (size_t i = 0; i < cfg->process.args.n; i++)
			if (strv_push(&argv, cfg->process.args.v[i]) < 0)
				goto oom;
		strv_free(&cfg->process.args);
		cfg->process.args = argv;
		goto ok;
oom:
		strv_free(&argv);
		error_set(err, ENOMEM, "image interpreter");
		goto out;
	}
ok:
	rc = 0;
out:
	strv_free(&interp);
	strv_free(&env);
	return rc;
}

int image_resolve(struct nsrun_config *cfg, struct nsrun_error *err)
{
	_cleanup_free_ char *store = image_store_dir(err);
	_cleanup_free_ char *dir = NULL;
	_cleanup_free_ char *json = NULL;
	_cleanup_free_ char *rootfs = NULL;
	_cleanup_free_ char *text = NULL;
	struct stat st;

	if (!store)
		return -1;
	if (!is_valid_image_name(cfg->image))
		return error_set(err, 0, "--image: \"%s\": not a valid image name", cfg->image);
	if (asprintf(&dir, "%s/%s", store, cfg->image) < 0 ||
	    asprintf(&json, "%s/image.json", dir) < 0 || asprintf(&rootfs, "%s/rootfs", dir) < 0)
		return error_set(err, ENOMEM, "image");
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		char names[512];
		list_names(store, names, sizeof(names));
		return error_set(err, 0, "image \"%s\" not found in %s (images there: %s)", cfg->image,
				 store, names[0] ? names : "none; build one with `make image`");
	}
	if (stat(rootfs, &st) < 0)
		return error_set(err, errno, "image \"%s\": rootfs \"%s\"", cfg->image, rootfs);
	if (!S_ISDIR(st.st_mode))
		return error_set(err, ENOTDIR, "image \"%s\": rootfs \"%s\"", cfg->image, rootfs);
	if (read_file(json, IMAGE_JSON_MAX, &text, NULL) < 0)
		return error_set(err, errno, "read image.json \"%s\"", json);
	if (image_merge_json(cfg, json, text, err) < 0)
		return -1;
	cfg->image_dir = steal_ptr(&dir);
	cfg->rootfs = steal_ptr(&rootfs);
	return 0;
}

int image_list(FILE *out, struct nsrun_error *err)
{
	_cleanup_free_ char *store = image_store_dir(err);
	struct dirent **names = NULL;
	int n, count = 0;

	if (!store)
		return -1;
	n = scandir(store, &names, NULL, alphasort);
	if (n < 0) {
		if (errno == ENOENT)
			return 0;
		return error_set(err, errno, "list images in %s", store);
	}
	for (int i = 0; i < n; i++) {
		char path[PATH_MAX];
		struct stat st;
		if (names[i]->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s/image.json", store, names[i]->d_name);
			if (stat(path, &st) == 0) {
				fprintf(out, "%s\n", names[i]->d_name);
				count++;
			}
		}
		free(names[i]);
	}
	free(names);
	return count;
}
