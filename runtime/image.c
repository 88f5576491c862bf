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
#include "exec.h"
#include "image.h"
#include "image_ref.h"
#include "sys.h"
#include "util.h"

#define IMAGE_JSON_MAX (1 << 20)

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
		char shown[IMAGE_REF_MAX];
		image_display_name(de->d_name, shown, sizeof(shown));
		int n = snprintf(buf + o, len - o, "%s%s", o ? ", " : "", shown);
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

/* The one place of the rules image.json must follow (a run and `nsrun image check`
 * both come here): depth, NUL, types, env entries execve can take, a workdir that
 * is an absolute path without "..".  Merges env and workdir into cfg and hands the
 * interpreter to *interp (the caller frees it).  Returns 0 or -1 with err. */
static int merge_json(struct nsrun_config *cfg, const char *file, const char *text, struct strv *interp,
		      struct strv *ep, struct strv *cmd, struct nsrun_error *err)
{
	_cleanup_yajl_ yajl_val root = NULL;
	struct strv env = { 0 };
	char ebuf[256];
	const char *wd_path[] = { "workdir", NULL }, *user_path[] = { "user", NULL };
	yajl_val wd, user;
	int rc = -1;
	size_t len = strlen(text), off;

	/* before yajl: its tree parser recurses once per level (a deep file is a crash) */
	if ((off = json_scan_depth(text, len, JSON_MAX_DEPTH)) < len)
		return error_set(err, 0, "image.json \"%s\": nested deeper than %d levels at offset %zu",
				 file, JSON_MAX_DEPTH, off);
	/* yajl's tree keeps no length: "A=1\u0000B=2" would pass as "A=1" */
	if ((off = json_scan_nul(text, len)) < len)
		return error_set(err, 0, "image.json \"%s\": a string holds a NUL character (\\u0000) at "
				 "offset %zu: no argument, path or environment entry can", file, off);
	root = yajl_tree_parse(text, ebuf, sizeof(ebuf));
	if (!root) {
		char *nl = strchr(ebuf, '\n');
		if (nl)
			*nl = '\0';
		return error_set(err, 0, "image.json \"%s\": %s", file, ebuf);
	}
	if (!YAJL_IS_OBJECT(root))
		return error_set(err, 0, "image.json \"%s\": must be a JSON object", file);
	/* an OCI image's Entrypoint and Cmd (prepend_interpreter puts them together) */
	if (json_strv(root, "interpreter", file, interp, err) < 0 ||
	    json_strv(root, "env", file, &env, err) < 0 ||
	    json_strv(root, "entrypoint", file, ep, err) < 0 ||
	    json_strv(root, "cmd", file, cmd, err) < 0)
		goto out;
	if ((ep->n && !ep->v[0][0]) || (!ep->n && cmd->n && !cmd->v[0][0])) {
		error_set(err, 0, "image.json \"%s\": the entrypoint's (or cmd's) first element is an empty string", file);
		goto out;
	}
	user = yajl_tree_get(root, user_path, yajl_t_any);
	if (user && !YAJL_IS_STRING(user)) {
		error_set(err, 0, "image.json \"%s\": \"user\" must be a string", file);
		goto out;
	}
	free(cfg->image_user);
	cfg->image_user = NULL;
	const char *user_s = user ? YAJL_GET_STRING(user) : NULL;
	if (user_s && user_s[0] && !(cfg->image_user = strdup(user_s))) {
		error_set(err, ENOMEM, "image user");
		goto out;
	}
	for (size_t i = 0; i < interp->n; i++) {
		if (!interp->v[i][0]) {
			error_set(err, 0, "image.json \"%s\": interpreter[%zu] is an empty string", file, i);
			goto out;
		}
	}
	for (size_t i = 0; i < env.n; i++) {
		if (!is_env_assignment(env.v[i])) {
			error_set(err, 0, "image.json \"%s\": env[%zu] is not KEY=VALUE", file, i);
			goto out;
		}
		if (strlen(env.v[i]) > ENV_ENTRY_MAX) {
			error_set(err, 0, "image.json \"%s\": env[%zu] is longer than %d bytes, which execve(2) "
				  "refuses", file, i, ENV_ENTRY_MAX);
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
	if (wd && YAJL_GET_STRING(wd)[0]) {
		/* checked even when -w wins: the image is wrong either way */
		char *cwd = config_container_path("image workdir", YAJL_GET_STRING(wd), err);
		if (!cwd)
			goto out;
		if (cfg->process.cwd)
			free(cwd);
		else
			cfg->process.cwd = cwd;
	}
	rc = 0;
out:
	strv_free(&env);
	return rc;
}

/* COMMAND mode, docker run's rule (its reference, "ENTRYPOINT" and "CMD"): the
 * entrypoint (--entrypoint, else the image's; --entrypoint "" none), then the
 * given command, else the image's Cmd unless --entrypoint was given.  An image
 * without an Entrypoint (nsrun-image's) runs -- CMD as it is.  Returns 0 or -1
 * with err (no command at all). */
static int command_argv(struct nsrun_config *cfg, const struct strv *ep, const struct strv *cmd,
			struct nsrun_error *err)
{
	struct strv argv = { 0 };
	const struct strv *rest = cfg->process.args.n || cfg->entrypoint ? &cfg->process.args : cmd;

	if (cfg->entrypoint) {
		if (cfg->entrypoint[0] && strv_push(&argv, cfg->entrypoint) < 0)
			goto oom;
	} else {
		for (size_t i = 0; i < ep->n; i++)
			if (strv_push(&argv, ep->v[i]) < 0)
				goto oom;
	}
	for (size_t i = 0; i < rest->n; i++)
		if (strv_push(&argv, rest->v[i]) < 0)
			goto oom;
	if (argv.n == 0) {
		error_set(err, 0, "no command: give FILE, - or -- CMD [ARG...] (image \"%s\" has no entrypoint or "
			  "cmd to run%s)", cfg->image, cfg->entrypoint ? ", and --entrypoint \"\" clears its entrypoint" : "");
		err->hint = "see nsrun --help";
		return -1;
	}
	strv_free(&cfg->process.args);
	cfg->process.args = argv;
	return 0;
oom:
	strv_free(&argv);
	return error_set(err, ENOMEM, "image entrypoint");
}

/* FILE and STDIN modes: the argv becomes the interpreter's, then the user's.
 * COMMAND mode: the image's Entrypoint and Cmd by docker run's rule (command_argv). */
static int prepend_interpreter(struct nsrun_config *cfg, const struct strv *interp, const struct strv *ep,
			       const struct strv *cmd, struct nsrun_error *err)
{
	struct strv argv = { 0 };

	if (cfg->mode == NSRUN_MODE_COMMAND)
		return command_argv(cfg, ep, cmd, err);
	if (cfg->entrypoint)
		return error_set(err, 0, "--entrypoint: only with -- CMD or the image's own command, not FILE or -");
	if (interp->n == 0)
		return error_set(err, 0, "image \"%s\" has no interpreter: use -- CMD", cfg->image);
	for (size_t i = 0; i < interp->n; i++)
		if (strv_push(&argv, interp->v[i]) < 0)
			goto oom;
	for (size_t i = 0; i < cfg->process.args.n; i++)
		if (strv_push(&argv, cfg->process.args.v[i]) < 0)
			goto oom;
	strv_free(&cfg->process.args);
	cfg->process.args = argv;
	return 0;
oom:
	strv_free(&argv);
	return error_set(err, ENOMEM, "image interpreter");
}

int image_merge_json(struct nsrun_config *cfg, const char *file, const char *text, struct nsrun_error *err)
{
	struct strv interp = { 0 }, ep = { 0 }, cmd = { 0 };
	int rc = merge_json(cfg, file, text, &interp, &ep, &cmd, err);

	if (rc == 0)
		rc = prepend_interpreter(cfg, &interp, &ep, &cmd, err);
	strv_free(&interp);
	strv_free(&ep);
	strv_free(&cmd);
	return rc;
}

int image_load_dir(struct nsrun_config *cfg, const char *dir, struct strv *interp, struct nsrun_error *err)
{
	_cleanup_free_ char *json = NULL;
	_cleanup_free_ char *rootfs = NULL;
	_cleanup_free_ char *text = NULL;
	_cleanup_free_ char *dir_copy = strdup(dir);
	struct strv own = { 0 }, ep = { 0 }, cmd = { 0 };
	struct stat st;
	int rc;

	if (!dir_copy || asprintf(&json, "%s/image.json", dir) < 0 || asprintf(&rootfs, "%s/rootfs", dir) < 0)
		return error_set(err, ENOMEM, "image");
	if (stat(rootfs, &st) < 0)
		return error_set(err, errno, "image \"%s\": rootfs \"%s\"", cfg->image, rootfs);
	if (!S_ISDIR(st.st_mode))
		return error_set(err, ENOTDIR, "image \"%s\": rootfs \"%s\"", cfg->image, rootfs);
	if (read_file(json, IMAGE_JSON_MAX, &text, NULL) < 0)
		return error_set(err, errno, "read image.json \"%s\"", json);
	rc = merge_json(cfg, json, text, interp ? interp : &own, &ep, &cmd, err);
	if (rc == 0 && !interp)
		rc = prepend_interpreter(cfg, &own, &ep, &cmd, err);
	strv_free(&own);
	strv_free(&ep);
	strv_free(&cmd);
	if (rc < 0)
		return -1;
	cfg->image_dir = steal_ptr(&dir_copy);
	cfg->rootfs = steal_ptr(&rootfs);
	return 0;
}

int image_store_entry(const char *image, char *name, size_t len, struct nsrun_error *err)
{
	_cleanup_free_ char *store = image_store_dir(err);
	_cleanup_free_ char *dir = NULL;
	struct image_ref ref;
	struct stat st;

	if (!store)
		return -1;
	/* a plain name (nsrun-image build NAME) in the store is that image, as it always was */
	if (is_valid_image_name(image) && snprintf(name, len, "%s", image) < (int)len) {
		if (asprintf(&dir, "%s/%s", store, image) < 0)
			return error_set(err, ENOMEM, "image");
		if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
			return 0;
	}
	const char *why = NULL;
	if (image_ref_check(image, &ref, &why) < 0) {
		error_set(err, 0, "\"%.160s\": not a valid image name or reference: %s", image, why);
		err->hint = image_ref_hint;
		return -1;
	}
	return image_ref_store_name(&ref, name, len, err);
}

/* What to do about an image the store lacks, as a static hint: the README's python
 * image is built from Debian's packages (make image), not pulled; a reference with a
 * tag, digest or registry is pulled; another name may be either, and image ls shows
 * what the store has (a typo, or NSRUN_IMAGES naming another store). */
static const char *missing_image_hint(const char *image)
{
	if (strcmp(image, "python") == 0)
		return "build it: make image (in nsrun's source tree), or nsrun-image build python --include "
		       "python3; or set NSRUN_IMAGES to the store that has it (docs/images.md)";
	if (strpbrk(image, ":/@"))
		return "pull it first: nsrun pull REFERENCE (docs/images.md); nsrun image ls lists the store's images";
	return "nsrun image ls lists the store's images; nsrun pull NAME[:TAG] pulls one from a registry, "
	       "nsrun-image build NAME --include PKG,... builds one from Debian's packages (docs/images.md)";
}

int image_resolve(struct nsrun_config *cfg, struct nsrun_error *err)
{
	_cleanup_free_ char *store = image_store_dir(err);
	_cleanup_free_ char *dir = NULL;
	char name[IMAGE_STORE_NAME_MAX + 1];
	struct stat st;

	if (!store)
		return -1;
	if (image_store_entry(cfg->image, name, sizeof(name), err) < 0)
		return error_prefix(err, "--image");
	if (asprintf(&dir, "%s/%s", store, name) < 0)
		return error_set(err, ENOMEM, "image");
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		char names[512];
		list_names(store, names, sizeof(names));
		error_set(err, 0, "image \"%s\" not found in %s (images there: %s)", cfg->image,
			  store, names[0] ? names : "none");
		err->hint = missing_image_hint(cfg->image);
		return -1;
	}
	return image_load_dir(cfg, dir, NULL, err);
}

void image_display_name(const char *entry, char *buf, size_t len)
{
	struct image_ref ref;

	if (image_store_name_ref(entry, &ref) < 0 || !image_ref_familiar(&ref, buf, len))
		snprintf(buf, len, "%s", entry);
}

/* Is p the container path dir or below it? */
static bool path_is_under(const char *p, const char *dir)
{
	size_t n = strlen(dir);

	while (n > 0 && dir[n - 1] == '/')
		n--;
	return strncmp(p, dir, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

/* Does a mount of the run (a volume, a --tmpfs, or nsrun's own /tmp, /dev,
 * /proc) cover the container path p?  What is there then is not the image's. */
static bool run_mount_covers(const struct nsrun_config *cfg, const char *p)
{
	static const char *const own[] = { "/tmp", "/dev", "/proc" };

	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (path_is_under(p, own[i]))
			return true;
	for (size_t i = 0; i < cfg->n_mounts; i++)
		if (path_is_under(p, cfg->mounts[i].destination))
			return true;
	for (size_t i = 0; i < cfg->n_tmpfs; i++)
		if (path_is_under(p, cfg->tmpfs[i].destination))
			return true;
	return false;
}

int image_find_interpreter(const struct nsrun_config *cfg, char *found, size_t len, struct nsrun_error *err)
{
	_cleanup_close_ int root = -1;
	_cleanup_free_ char (*cand)[PATH_MAX] = NULL;
	const char *cmd = cfg->process.args.v[0];
	const char *path_env = strv_getenv(&cfg->process.env, "PATH");
	size_t n;
	int saved = ENOENT;

	root = open(cfg->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return error_set(err, errno, "image \"%s\": rootfs \"%s\"", cfg->image, cfg->rootfs);
	cand = calloc(EXEC_CANDIDATES_MAX, sizeof(*cand));
	if (!cand)
		return error_set(err, ENOMEM, "image interpreter");
	n = exec_candidates(cmd, path_env, cand, EXEC_CANDIDATES_MAX);
	for (size_t i = 0; i < n; i++) {
		char p[PATH_MAX];
		_cleanup_close_ int fd = -1;
		struct stat st;

		/* a relative PATH entry is looked up from the working directory, as exec does */
		if (snprintf(p, sizeof(p), "%s%s%s", cand[i][0] == '/' ? "" : cfg->process.cwd,
			     cand[i][0] == '/' ? "" : "/", cand[i]) >= (int)sizeof(p))
			continue;
		if (run_mount_covers(cfg, p)) {
			snprintf(found, len, "%s", p);
			return 0;
		}
		/* links resolve inside the image, as they will in the container */
		fd = open_in_root(root, p, O_PATH);
		if (fd < 0) {
			if (errno != ENOENT && errno != ENOTDIR)
				saved = errno;
			continue;
		}
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111)) {
			snprintf(found, len, "%s", p);
			return 0;
		}
		saved = EACCES;
	}
	if (strchr(cmd, '/'))
		error_set(err, 0, "image \"%s\": interpreter \"%s\" is not an executable file inside the image (%s)",
			  cfg->image, cmd, strerror(saved));
	else
		error_set(err, 0, "image \"%s\": interpreter \"%s\" is not an executable file on the image's "
			  "PATH (%zu directories looked in, inside the image)", cfg->image, cmd, n);
	err->hint = "the image's symbolic links are followed inside the image only, as in the container; "
		    "set the interpreter with nsrun-image --interpreter, or run a command with -- CMD";
	return -1;
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
