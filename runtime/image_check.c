/* image_check.c - `nsrun image check [--json] DIR`: refuses an image directory
 * (DIR/rootfs, DIR/image.json) that a run would refuse, with a run's own words.
 * nsrun-image calls it before an image lands in the store, so that everything the
 * runtime refuses is refused at import; the rules themselves are image.c's
 * (image_load_dir, image_find_interpreter), the same calls a run makes. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>

#include "cleanup.h"
#include "config.h"
#include "image.h"

#define GEN_STR(g, s) yajl_gen_string(g, (const unsigned char *)(s), strlen(s))

static const char usage[] = "usage: nsrun image check [--json] [--name NAME] DIR";

static void gen_strv(yajl_gen g, const char *key, const struct strv *sv)
{
	GEN_STR(g, key);
	yajl_gen_array_open(g);
	for (size_t i = 0; i < sv->n; i++)
		GEN_STR(g, sv->v[i]);
	yajl_gen_array_close(g);
}

/* {"image": DIR, "ok": true|false, ...what a run would use, or the error}. */
static int print_json(FILE *out, const char *dir, const struct nsrun_config *cfg, const struct strv *interp,
		      const char *found, const struct nsrun_error *err)
{
	yajl_gen g = yajl_gen_alloc(NULL);
	const unsigned char *buf;
	size_t len;
	int rc = 0;

	if (!g)
		return -1;
	yajl_gen_config(g, yajl_gen_beautify, 0);
	yajl_gen_map_open(g);
	GEN_STR(g, "image");
	GEN_STR(g, dir);
	GEN_STR(g, "ok");
	yajl_gen_bool(g, !err);
	if (err) {
		char line[512];
		const char *hint = error_hint(err);

		error_format(err, line, sizeof(line));
		GEN_STR(g, "error");
		GEN_STR(g, line);
		GEN_STR(g, "hint");
		if (hint)
			GEN_STR(g, hint);
		else
			yajl_gen_null(g);
	} else {
		gen_strv(g, "interpreter", interp);
		GEN_STR(g, "interpreter_path");
		if (found[0])
			GEN_STR(g, found);
		else
			yajl_gen_null(g);
		GEN_STR(g, "workdir");
		GEN_STR(g, cfg->process.cwd);
		gen_strv(g, "env", &cfg->process.env);
	}
	yajl_gen_map_close(g);
	if (yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok || fwrite(buf, 1, len, out) != len ||
	    fputc('\n', out) == EOF || fflush(out) != 0)
		rc = -1;
	yajl_gen_free(g);
	return rc;
}

/* The checks of a run, on dir: image.json's rules, then the interpreter (if the
 * image has one) inside the rootfs.  Fills cfg, interp and found. */
static int check_dir(struct nsrun_config *cfg, const char *dir, struct strv *interp, char *found, size_t len,
		     struct nsrun_error *err)
{
	if (config_env_defaults(cfg, err) < 0 || image_load_dir(cfg, dir, interp, err) < 0)
		return -1;
	if (!cfg->process.cwd && !(cfg->process.cwd = strdup("/")))
		return error_set(err, ENOMEM, "workdir");
	if (interp->n == 0)
		return 0;
	/* the interpreter, looked up as a FILE-mode run looks it up */
	for (size_t i = 0; i < interp->n; i++)
		if (strv_push(&cfg->process.args, interp->v[i]) < 0)
			return error_set(err, ENOMEM, "image interpreter");
	return image_find_interpreter(cfg, found, len, err);
}

int image_check_main(int argc, char **argv, FILE *out)
{
	struct nsrun_config cfg;
	struct nsrun_error err = { 0 };
	struct strv interp = { 0 };
	_cleanup_free_ char *dir = NULL;
	char found[PATH_MAX] = "";
	const char *name = NULL;
	bool json = false;
	int rc;

	if (argc < 2 || strcmp(argv[1], "check") != 0) {
		fprintf(stderr, "nsrun: %s\n", usage);
		return 125;
	}
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (strcmp(argv[i], "--name") == 0 && i + 1 < argc && !name) {
			name = argv[++i];
		} else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			printf("%s\n\nExits 0 if a run would accept the image directory DIR (DIR/rootfs and "
			       "DIR/image.json), else 125\nwith the error a run would print.  --json: the verdict "
			       "as a JSON object on stdout.\n--name NAME: the image's name in messages (default: "
			       "DIR's last component).\n", usage);
			return 0;
		} else if (!dir && argv[i][0] && (argv[i][0] != '-' || strcmp(argv[i], "-") == 0)) {
			if (!(dir = strdup(argv[i])))
				return 125;
		} else {
			fprintf(stderr, "nsrun: image check: unexpected argument \"%s\"\nnsrun: %s\n", argv[i], usage);
			return 125;
		}
	}
	if (!dir) {
		fprintf(stderr, "nsrun: image check: missing DIR\nnsrun: %s\n", usage);
		return 125;
	}
	/* "DIR/" names the same image as "DIR" */
	for (size_t n = strlen(dir); n > 1 && dir[n - 1] == '/'; n--)
		dir[n - 1] = '\0';
	if (config_init(&cfg, &err) < 0) {
		error_print(&err, stderr);
		return 125;
	}
	cfg.mode = NSRUN_MODE_COMMAND;
	/* a run's messages name the image by its directory's name (nsrun-image,
	 * checking a temporary directory, gives the name it will have) */
	if (!name)
		name = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
	cfg.image = strdup(name);
	if (!cfg.image)
		rc = error_set(&err, ENOMEM, "image");
	else
		rc = check_dir(&cfg, dir, &interp, found, sizeof(found), &err);
	if (rc < 0)
		error_print(&err, stderr);
	else if (!json)
		fprintf(out, "image \"%s\": a run would accept it (interpreter: %s)\n", cfg.image,
			found[0] ? found : "none, -- CMD only");
	if (json && print_json(out, dir, &cfg, &interp, found, rc < 0 ? &err : NULL) < 0 && rc == 0) {
		fprintf(stderr, "nsrun: image check: write the --json result: %s\n", strerror(errno));
		rc = -1;
	}
	strv_free(&interp);
	config_free(&cfg);
	return rc < 0 ? 125 : 0;
}
