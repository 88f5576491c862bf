/* image_store.c - see image_store.h */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nettle/sha2.h>
#include <yajl/yajl_tree.h>

#include "cleanup.h"
#include "image.h"
#include "image_store.h"
#include "util.h"
#include "sys.h"

#define IMAGE_JSON_MAX (1 << 20)

static void gstr(yajl_gen g, const char *s)
{
	yajl_gen_string(g, (const unsigned char *)s, strlen(s));
}

static void gkv(yajl_gen g, const char *k, const char *v)
{
	gstr(g, k);
	if (v)
		gstr(g, v);
	else
		yajl_gen_null(g);
}

/* ---- the store ---- */

int image_each(void (*fn)(const char *entry, void *arg), void *arg, struct nsrun_error *err)
{
	_cleanup_free_ char *store = image_store_dir(err);
	struct dirent **names = NULL;
	int n, count = 0;

	if (!store)
		return -1;
	n = scandir(store, &names, NULL, alphasort);
	if (n < 0)
		return errno == ENOENT ? 0 : error_set(err, errno, "list images in %s", store);
	for (int i = 0; i < n; i++) {
		char path[PATH_MAX];
		struct stat st;
		if (names[i]->d_name[0] != '.' &&
		    snprintf(path, sizeof(path), "%s/%s/image.json", store, names[i]->d_name) < (int)sizeof(path) &&
		    stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			fn(names[i]->d_name, arg);
			count++;
		}
		free(names[i]);
	}
	free(names);
	return count;
}

void image_id(const char *entry, char *id, size_t len)
{
	struct sha256_ctx ctx;
	uint8_t d[SHA256_DIGEST_SIZE];
	char hex[2 * SHA256_DIGEST_SIZE + 1];

	/* as nsrun api always named its images: stable for an entry */
	sha256_init(&ctx);
	sha256_update(&ctx, 12, (const uint8_t *)"nsrun-image:");
	sha256_update(&ctx, strlen(entry), (const uint8_t *)entry);
	sha256_digest(&ctx, sizeof(d), d);
	for (size_t i = 0; i < sizeof(d); i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
	snprintf(id, len, "sha256:%s", hex);
}

struct find_ctx {
	const char *hex;
	char *entry;
	size_t len;
	int found;
};

static void find_by_id(const char *entry, void *arg)
{
	struct find_ctx *f = arg;
	char id[80];

	image_id(entry, id, sizeof(id));
	if (strncmp(id + 7, f->hex, strlen(f->hex)) == 0 && f->found++ == 0)
		snprintf(f->entry, f->len, "%s", entry);
}

int image_find(const char *name, char *entry, size_t len, struct nsrun_error *err)
{
	_cleanup_free_ char *store = image_store_dir(err);
	_cleanup_free_ char *dir = NULL;
	const char *hex = strncmp(name, "sha256:", 7) == 0 ? name + 7 : name;
	size_t hl = strlen(hex);
	struct stat st;

	if (!store)
		return -1;
	/* an id, or a prefix of at least 12 hex digits, as docker takes them */
	if (hl >= 12 && hl <= 64 && strspn(hex, "0123456789abcdef") == hl) {
		struct find_ctx f = { hex, entry, len, 0 };
		if (image_each(find_by_id, &f, err) < 0)
			return -1;
		if (f.found == 1)
			return 0;
	}
	if (image_store_entry(name, entry, len, err) < 0)
		return -1;
	if (asprintf(&dir, "%s/%s/image.json", store, entry) < 0)
		return error_set(err, ENOMEM, "image");
	if (stat(dir, &st) == 0)
		return 0;
	/* NAME:latest of a built image NAME (as clients spell a name without a tag) */
	size_t nl = strlen(name);
	if (nl > 7 && strcmp(name + nl - 7, ":latest") == 0 && nl - 7 < len && !memchr(name, '/', nl)) {
		free(dir);
		dir = NULL;
		if (asprintf(&dir, "%s/%.*s/image.json", store, (int)(nl - 7), name) < 0)
			return error_set(err, ENOMEM, "image");
		/* a plain name only: letters, digits, '.', '_', '-', not starting with '.' */
		static const char ok[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";
		size_t pn = nl - 7;
		bool plain = pn > 0 && name[0] != '.' && name[0] != '-';
		for (size_t i = 0; plain && i < pn; i++)
			plain = strchr(ok, name[i]) != NULL;
		if (plain && stat(dir, &st) == 0) {
			snprintf(entry, len, "%.*s", (int)(nl - 7), name);
			return 0;
		}
	}
	return error_set(err, ENOENT, "no such image: %s", name);
}

/* image.json of an entry, parsed. */
static yajl_val load_json(const char *entry, char *path, size_t len, struct nsrun_error *err)
{
	_cleanup_free_ char *store = image_store_dir(err);
	_cleanup_free_ char *text = NULL;
	char ebuf[128];
	yajl_val v;

	if (!store)
		return NULL;
	snprintf(path, len, "%s/%s", store, entry);
	_cleanup_free_ char *json = NULL;
	if (asprintf(&json, "%s/image.json", path) < 0) {
		error_set(err, ENOMEM, "image");
		return NULL;
	}
	if (read_file(json, IMAGE_JSON_MAX, &text, NULL) < 0) {
		error_set(err, errno, "read %s", json);
		return NULL;
	}
	/* yajl's tree parser recurses per level: bounded first, as image.c does */
	if (json_scan_depth(text, strlen(text), JSON_MAX_DEPTH) < strlen(text) ||
	    !(v = yajl_tree_parse(text, ebuf, sizeof(ebuf))) || !YAJL_IS_OBJECT(v)) {
		error_set(err, 0, "%s: not a JSON object nsrun can read", json);
		return NULL;
	}
	return v;
}

static const char *jstr(yajl_val root, const char *a, const char *b)
{
	const char *p[] = { a, b, NULL };
	yajl_val v = yajl_tree_get(root, p, yajl_t_string);

	return v ? YAJL_GET_STRING(v) : NULL;
}

static void gen_strings(yajl_gen g, const char *key, yajl_val root, bool null_if_empty)
{
	const char *p[] = { key, NULL };
	yajl_val v = yajl_tree_get(root, p, yajl_t_array);
	size_t n = 0;

	for (size_t i = 0; v && i < v->u.array.len; i++)
		n += YAJL_IS_STRING(v->u.array.values[i]);
	if (n == 0 && null_if_empty) {
		yajl_gen_null(g);
		return;
	}
	yajl_gen_array_open(g);
	for (size_t i = 0; v && i < v->u.array.len; i++)
		if (YAJL_IS_STRING(v->u.array.values[i]))
			gstr(g, YAJL_GET_STRING(v->u.array.values[i]));
	yajl_gen_array_close(g);
}

/* {"6379/tcp": {}, ...} from an array of strings (image.json keeps keys only). */
static void gen_set(yajl_gen g, const char *key, yajl_val root)
{
	const char *p[] = { key, NULL };
	yajl_val v = yajl_tree_get(root, p, yajl_t_array);

	if (!v || v->u.array.len == 0) {
		yajl_gen_null(g);
		return;
	}
	yajl_gen_map_open(g);
	for (size_t i = 0; i < v->u.array.len; i++) {
		if (!YAJL_IS_STRING(v->u.array.values[i]))
			continue;
		gstr(g, YAJL_GET_STRING(v->u.array.values[i]));
		yajl_gen_map_open(g);
		yajl_gen_map_close(g);
	}
	yajl_gen_map_close(g);
}

static long long tree_bytes;
static int add_size(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)path, (void)ftw;
	if (type == FTW_F)
		tree_bytes += st->st_size;
	return 0;
}

/* The apparent size of the entry's files, in bytes (docker's Size). */
static long long entry_size(const char *dir)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	long long n;

	/* nftw has no argument for its callback: one walk at a time (nsrun api has threads) */
	pthread_mutex_lock(&lock);
	tree_bytes = 0;
	nftw(dir, add_size, 32, FTW_PHYS | FTW_MOUNT);
	n = tree_bytes;
	pthread_mutex_unlock(&lock);
	return n;
}

static long long created_secs(const char *s)
{
	struct tm tm = { 0 };
	const char *end;

	if (!s || !(end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)))
		return 0;
	return (long long)timegm(&tm);
}

int image_gen(yajl_gen g, const char *entry, bool full, struct nsrun_error *err)
{
	char dir[PATH_MAX], id[80], tag[IMAGE_REF_MAX + 16], repo_digest[IMAGE_REF_MAX + 96];
	yajl_val root = load_json(entry, dir, sizeof(dir), err);
	struct image_ref ref;
	bool is_ref = image_store_name_ref(entry, &ref) == 0;
	const char *digest = root ? jstr(root, "source", "digest") : NULL;
	const char *created = root ? jstr(root, "created", NULL) : NULL;

	if (!root)
		return -1;
	image_id(entry, id, sizeof(id));
	tag[0] = repo_digest[0] = '\0';
	if (is_ref) {
		struct image_ref r = ref;
		if (r.tag[0]) {
			r.digest[0] = '\0';
			image_ref_familiar(&r, tag, sizeof(tag));
		}
		r = ref;
		r.tag[0] = '\0';
		if (digest && strncmp(digest, "sha256:", 7) == 0)
			snprintf(r.digest, sizeof(r.digest), "%s", digest);
		if (r.digest[0])
			image_ref_familiar(&r, repo_digest, sizeof(repo_digest));
	} else {
		snprintf(tag, sizeof(tag), "%s:latest", entry);
	}
	yajl_gen_map_open(g);
	gkv(g, "Id", id);
	gstr(g, "RepoTags");
	yajl_gen_array_open(g);
	if (tag[0])
		gstr(g, tag);
	yajl_gen_array_close(g);
	gstr(g, "RepoDigests");
	yajl_gen_array_open(g);
	if (repo_digest[0])
		gstr(g, repo_digest);
	yajl_gen_array_close(g);
	if (full) {
		char when[32] = "";
		long long secs = created_secs(created);
		struct tm tm;
		time_t t = (time_t)secs;
		if (secs && gmtime_r(&t, &tm))
			strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
		gkv(g, "Parent", "");
		gkv(g, "Comment", "");
		gkv(g, "Created", when[0] ? when : NULL);
		gkv(g, "Os", "linux");
		gkv(g, "Architecture", "amd64");
		gstr(g, "Size");
		yajl_gen_integer(g, entry_size(dir));
		gstr(g, "Config");
		yajl_gen_map_open(g);
		gkv(g, "User", jstr(root, "user", NULL) ? jstr(root, "user", NULL) : "");
		gstr(g, "ExposedPorts");
		gen_set(g, "exposed_ports", root);
		gstr(g, "Env");
		gen_strings(g, "env", root, false);
		gstr(g, "Cmd");
		gen_strings(g, "cmd", root, true);
		gstr(g, "Volumes");
		gen_set(g, "volumes", root);
		gkv(g, "WorkingDir", jstr(root, "workdir", NULL) ? jstr(root, "workdir", NULL) : "");
		gstr(g, "Entrypoint");
		gen_strings(g, "entrypoint", root, true);
		gstr(g, "Labels");
		yajl_gen_null(g);
		yajl_gen_map_close(g);
		gstr(g, "RootFS");
		yajl_gen_map_open(g);
		gkv(g, "Type", "layers");
		yajl_gen_map_close(g);
		gstr(g, "Nsrun");
		yajl_gen_map_open(g);
		gkv(g, "Path", dir);
		gstr(g, "Interpreter");
		gen_strings(g, "interpreter", root, true);
		yajl_gen_map_close(g);
	} else {
		gkv(g, "ParentId", "");
		gstr(g, "Created");
		yajl_gen_integer(g, created_secs(created));
		gstr(g, "Size");
		yajl_gen_integer(g, entry_size(dir));
		gstr(g, "SharedSize");
		yajl_gen_integer(g, -1);
		gstr(g, "VirtualSize");
		yajl_gen_integer(g, entry_size(dir));
		gstr(g, "Containers");
		yajl_gen_integer(g, -1);
		gstr(g, "Labels");
		yajl_gen_map_open(g);
		yajl_gen_map_close(g);
	}
	yajl_gen_map_close(g);
	yajl_tree_free(root);
	return 0;
}

static int strings_of(yajl_val root, const char *key, struct strv *out)
{
	const char *p[] = { key, NULL };
	yajl_val v = yajl_tree_get(root, p, yajl_t_array);

	for (size_t i = 0; v && i < v->u.array.len; i++)
		if (YAJL_IS_STRING(v->u.array.values[i]) && strv_push(out, YAJL_GET_STRING(v->u.array.values[i])) < 0)
			return -1;
	return 0;
}

int image_default_command(const char *entry, struct strv *entrypoint, struct strv *cmd, struct nsrun_error *err)
{
	char dir[PATH_MAX];
	yajl_val root = load_json(entry, dir, sizeof(dir), err);
	int rc;

	if (!root)
		return -1;
	rc = strings_of(root, "entrypoint", entrypoint) < 0 || strings_of(root, "cmd", cmd) < 0 ? -1 : 0;
	yajl_tree_free(root);
	return rc < 0 ? error_set(err, ENOMEM, "image %s", entry) : 0;
}

int image_config_strings(const char *entry, const char *key, struct strv *out, struct nsrun_error *err)
{
	char dir[PATH_MAX];
	yajl_val root = load_json(entry, dir, sizeof(dir), err);
	int rc;

	if (!root)
		return -1;
	rc = strings_of(root, key, out);
	yajl_tree_free(root);
	return rc < 0 ? error_set(err, ENOMEM, "image %s", entry) : 0;
}

int image_default_user(const char *entry, char *user, size_t size, struct nsrun_error *err)
{
	char dir[PATH_MAX];
	yajl_val root = load_json(entry, dir, sizeof(dir), err);
	const char *path[] = { "user", NULL };
	yajl_val v;

	if (!root)
		return -1;
	v = yajl_tree_get(root, path, yajl_t_string);
	snprintf(user, size, "%s", v && YAJL_GET_STRING(v) ? YAJL_GET_STRING(v) : "");
	yajl_tree_free(root);
	return 0;
}

/* ---- rm ---- */

static int open_up(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	/* our own tree may hold directories without write permission (as the image had them) */
	if (type == FTW_D && st->st_uid == geteuid() && (st->st_mode & 0700) != 0700)
		chmod(path, (st->st_mode & 07777) | 0700);
	return 0;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)ftw;
	return (type == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT ? -1 : 0;
}

int image_remove(const char *entry, struct nsrun_error *err)
{
	_cleanup_free_ char *store = image_store_dir(err);
	_cleanup_free_ char *dest = NULL, *aside = NULL, *rootfs = NULL;
	_cleanup_close_ int fd = -1;

	if (!store)
		return -1;
	if (asprintf(&dest, "%s/%s", store, entry) < 0 || asprintf(&aside, "%s/.%s.old.XXXXXX", store, entry) < 0)
		return error_set(err, ENOMEM, "rm");
	/* the same dance as nsrun-image rm: aside at once, so the name is free, deleted if unused */
	if (!mkdtemp(aside))
		return error_set(err, errno, "rm: cannot write to the store %s", store);
	if (rename(dest, aside) < 0) {
		int e = errno;
		rmdir(aside);
		return error_set(err, e, "rm: cannot move %s aside", dest);
	}
	/* a run holds a shared flock(2) on the rootfs while it lasts */
	if (asprintf(&rootfs, "%s/rootfs", aside) < 0)
		return error_set(err, ENOMEM, "rm");
	fd = open(rootfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 && errno != ENOENT)
		return 0; /* cannot tell whether a run holds it: kept, as for a run */
	if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0)
		return 0; /* kept for the run; a later pull, build or rm of the name deletes it */
	nftw(aside, open_up, 32, FTW_PHYS | FTW_MOUNT);
	if (nftw(aside, remove_one, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) < 0) {
		error_set(err, errno, "rm: the image is gone from the store, but deleting its files in %s failed", aside);
		err->hint = "an image imported by root is root's: delete that directory as root";
		return -1;
	}
	return 0;
}

/* ---- the commands ---- */

static void usage_error(struct nsrun_error *err, const char *hint)
{
	err->hint = hint;
	error_print(err, stderr);
}

static void human_size(long long b, char *buf, size_t len)
{
	static const char *const units[] = { "B", "kB", "MB", "GB", "TB" };
	double v = (double)b;
	size_t u = 0;

	while (v >= 1000 && u < 4) {
		v /= 1000;
		u++;
	}
	snprintf(buf, len, v < 10 && u ? "%.2f%s" : v < 100 && u ? "%.1f%s" : "%.0f%s", v, units[u]);
}

static void human_ago(long long secs, char *buf, size_t len)
{
	long long d = (long long)time(NULL) - secs;

	if (!secs)
		snprintf(buf, len, "N/A");
	else if (d < 60)
		snprintf(buf, len, "Less than a minute ago");
	else if (d < 3600)
		snprintf(buf, len, "%lld minute%s ago", d / 60, d / 60 == 1 ? "" : "s");
	else if (d < 86400 * 2)
		snprintf(buf, len, "%lld hour%s ago", d / 3600, d / 3600 == 1 ? "" : "s");
	else
		snprintf(buf, len, "%lld days ago", d / 86400);
}

static void ls_row(const char *entry, void *arg)
{
	bool quiet = *(bool *)arg;
	char dir[PATH_MAX], id[80], repo[IMAGE_REF_MAX], tag[160], size[32], ago[48];
	struct nsrun_error err = { 0 };
	struct image_ref ref;
	yajl_val root;

	image_id(entry, id, sizeof(id));
	if (quiet) {
		printf("%.12s\n", id + 7);
		return;
	}
	if (!(root = load_json(entry, dir, sizeof(dir), &err)))
		return;
	if (image_store_name_ref(entry, &ref) == 0) {
		struct image_ref r = ref;
		r.tag[0] = r.digest[0] = '\0';
		image_ref_familiar(&r, repo, sizeof(repo));
		snprintf(tag, sizeof(tag), "%s", ref.tag[0] ? ref.tag : "<none>");
	} else {
		snprintf(repo, sizeof(repo), "%s", entry);
		snprintf(tag, sizeof(tag), "latest");
	}
	human_size(entry_size(dir), size, sizeof(size));
	human_ago(created_secs(jstr(root, "created", NULL)), ago, sizeof(ago));
	printf("%-32s %-16s %-14.12s %-24s %s\n", repo, tag, id + 7, ago, size);
	yajl_tree_free(root);
}

static int cmd_ls(int argc, char **argv)
{
	struct nsrun_error err = { 0 };
	bool quiet = false;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-q") == 0 || strcmp(argv[i], "--quiet") == 0) {
			quiet = true;
			continue;
		}
		error_set(&err, 0, "image ls: %s: unknown argument", argv[i]);
		usage_error(&err, "nsrun image ls [-q]");
		return 125;
	}
	if (!quiet)
		printf("%-32s %-16s %-14s %-24s %s\n", "REPOSITORY", "TAG", "IMAGE ID", "CREATED", "SIZE");
	if (image_each(ls_row, &quiet, &err) < 0) {
		error_print(&err, stderr);
		return 125;
	}
	return 0;
}

static int cmd_inspect(int argc, char **argv)
{
	struct nsrun_error err = { 0 };
	char entry[IMAGE_STORE_NAME_MAX + 1];
	const unsigned char *buf;
	size_t len;
	int rc = 0;
	yajl_gen g;

	if (argc < 2) {
		error_set(&err, 0, "image inspect: no image");
		usage_error(&err, "nsrun image inspect IMAGE [IMAGE...]");
		return 125;
	}
	if (!(g = yajl_gen_alloc(NULL))) {
		error_set(&err, ENOMEM, "image inspect");
		error_print(&err, stderr);
		return 125;
	}
	yajl_gen_config(g, yajl_gen_beautify, 1);
	yajl_gen_config(g, yajl_gen_indent_string, "    ");
	yajl_gen_array_open(g);
	for (int i = 1; i < argc; i++) {
		/* docker prints what it found and an error for each of the others */
		if (image_find(argv[i], entry, sizeof(entry), &err) < 0 || image_gen(g, entry, true, &err) < 0) {
			if (err.errnum == ENOENT)
				err.errnum = 0;
			error_print(&err, stderr);
			rc = 1;
		}
	}
	yajl_gen_array_close(g);
	yajl_gen_get_buf(g, &buf, &len);
	fwrite(buf, 1, len, stdout);
	fputc('\n', stdout);
	yajl_gen_free(g);
	return rc;
}

static int cmd_rm(int argc, char **argv)
{
	struct nsrun_error err = { 0 };
	char entry[IMAGE_STORE_NAME_MAX + 1], shown[IMAGE_REF_MAX], id[80];
	int rc = 0;

	if (argc < 2) {
		error_set(&err, 0, "image rm: no image");
		usage_error(&err, "nsrun image rm IMAGE [IMAGE...]");
		return 125;
	}
	for (int i = 1; i < argc; i++) {
		if (image_find(argv[i], entry, sizeof(entry), &err) < 0) {
			if (err.errnum == ENOENT)
				err.errnum = 0;
			error_print(&err, stderr);
			rc = 1;
			continue;
		}
		image_display_name(entry, shown, sizeof(shown));
		image_id(entry, id, sizeof(id));
		if (image_remove(entry, &err) < 0) {
			error_print(&err, stderr);
			rc = 1;
			continue;
		}
		printf("Untagged: %s\nDeleted: %s\n", shown, id);
	}
	return rc;
}

int image_cmd_main(int argc, char **argv)
{
	struct nsrun_error err = { 0 };

	if (argc >= 2 && (strcmp(argv[1], "ls") == 0 || strcmp(argv[1], "list") == 0))
		return cmd_ls(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "inspect") == 0)
		return cmd_inspect(argc - 1, argv + 1);
	if (argc >= 2 && (strcmp(argv[1], "rm") == 0 || strcmp(argv[1], "remove") == 0))
		return cmd_rm(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "pull") == 0)
		return image_pull_main(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "check") == 0)
		return image_check_main(argc, argv, stdout);
	error_set(&err, 0, "image: %s: unknown command", argc >= 2 ? argv[1] : "(none)");
	usage_error(&err, "nsrun image ls|inspect|rm|pull|check (see nsrun --help)");
	return 125;
}
