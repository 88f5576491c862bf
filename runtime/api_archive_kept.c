/* api_archive_kept.c - PUT /containers/{id}/archive into a container that is
 * created, not started (docker create, docker cp, docker start; Testcontainers'
 * withCopyContentToContainer; docker-py's put_archive before start).
 *
 * Its root's writable layer is a tmpfs made inside it at start, so there is
 * nothing to extract into yet: the upload is kept in the container's state
 * directory (archive-NN.tar, 0600, its target in archive-NN.path; removed with
 * the directory), bounded as the layer it will land in (--tmpfs-size bytes after
 * decompression, NSRUN_TMPFS_INODES members, NSRUN_MAX_COPY_ARCHIVES uploads), read
 * through once here to refuse what the extraction would (absolute or ".." names
 * and link targets, device nodes), and handed to `nsrun -d` at start as
 * --copy-archive, whose payload extracts it, confined as the running case's
 * `nsrun exec --archive-put` is (exec.h), before its command. */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api_internal.h"
#include "cleanup.h"
#include "config.h"
#include "copy_archive.h"
#include "image.h"
#include "image_store.h"
#include "sys.h"

#define KEPT_TAR "archive-%02zu.tar"
#define KEPT_PATH "archive-%02zu.path"
#define BLOCK 65536

struct api_kept_upload {
	int dir_fd;                     /* the container's state directory */
	int fd;                         /* the upload, being written */
	char tmp[96];                   /* its temporary name in dir_fd ("" once renamed) */
	char id[API_ID_LEN + 1];
	char path[PATH_MAX];            /* where it goes, inside */
	uint64_t bytes, max_bytes;      /* written; the most (the layer less what is kept already) */
	unsigned long long max_entries;
};

/* True when name is absolute or has a ".." component. */
static bool escapes(const char *name)
{
	if (!name)
		return false;
	if (name[0] == '/')
		return true;
	for (const char *p = name; (p = strstr(p, "..")); p += 2)
		if ((p == name || p[-1] == '/') && (p[2] == '\0' || p[2] == '/'))
			return true;
	return false;
}

/* The archive's own symlinks (hsearch_r(3) table of their names; the keys in
 * names), so that a later member through one is refused as the extraction
 * (ARCHIVE_EXTRACT_SECURE_SYMLINKS) would refuse it at start. */
struct links {
	struct hsearch_data tab;
	struct strv names;
	bool made;
};

/* name without its leading "./" (tar's usual "./dir/file") */
static const char *plain(const char *name)
{
	while (name[0] == '.' && name[1] == '/')
		for (name += 2; *name == '/'; name++)
			;
	return name;
}

static void links_free(struct links *l)
{
	if (l->made)
		hdestroy_r(&l->tab);
	strv_free(&l->names);
}

/* True when a directory on name's way is one of l's symlinks. */
static bool through_link(struct links *l, const char *name)
{
	char buf[PATH_MAX];
	ENTRY want, *found;

	if (!l->names.n || !name)
		return false;
	snprintf(buf, sizeof(buf), "%s", plain(name));
	for (char *p = buf; (p = strchr(p, '/')); p++) {
		*p = '\0';
		want = (ENTRY){ .key = buf };
		if (hsearch_r(want, FIND, &found, &l->tab) && found)
			return true;
		*p = '/';
	}
	return false;
}

/* Adds a symlink's name (trailing slashes off).  Returns 0 or -1 (ENOMEM; full). */
static int add_link(struct links *l, const char *name)
{
	ENTRY e, *found;
	size_t n;

	name = plain(name);
	n = strlen(name);
	while (n > 1 && name[n - 1] == '/')
		n--;
	if (strv_push(&l->names, "") < 0)
		return -1;
	free(l->names.v[l->names.n - 1]);
	if (!(l->names.v[l->names.n - 1] = strndup(name, n)))
		return -1;
	e = (ENTRY){ .key = l->names.v[l->names.n - 1] };
	return hsearch_r(e, ENTER, &found, &l->tab) ? 0 : -1;
}

/* True when path is dst or below it. */
static bool under(const char *path, const char *dst)
{
	size_t n = strlen(dst);

	while (n > 1 && dst[n - 1] == '/')
		n--;
	return strncmp(path, dst, n) == 0 && (path[n] == '\0' || path[n] == '/' || (n == 1 && dst[0] == '/'));
}

/* Whether path may be written in the container its args (config.json's) describe,
 * as Docker decides it (daemon/archive.go, checkIfPathIsInAVolume): the deepest
 * mount holding it must be writable; the root only without ReadonlyRootfs.
 * nsrun's own /tmp is a tmpfs, as the running case finds it.  *tmpfs_bytes gets
 * --tmpfs-size.  Returns 0, or Docker's status with msg. */
static unsigned writable(yajl_val args, const char *path, uint64_t *tmpfs_bytes, char *msg, size_t len)
{
	struct nsrun_error err = { 0 };
	bool root_rw = false;
	size_t best = 0; /* the length of the deepest mount holding path, 0: none */
	bool rw = false; /* and whether it is writable */

	*tmpfs_bytes = NSRUN_DEFAULT_TMPFS_BYTES;
	if (under(path, "/tmp")) {
		best = 4;
		rw = true;
	}
	for (size_t i = 0; args && i < args->u.array.len; i++) {
		const char *a = api_str(args->u.array.values[i]);
		const char *v = i + 1 < args->u.array.len ? api_str(args->u.array.values[i + 1]) : "";
		char dst[PATH_MAX];
		bool ro = false;
		if (strcmp(a, "--") == 0)
			break;
		if (strcmp(a, "--read-only=false") == 0)
			root_rw = true;
		if (strcmp(a, "--tmpfs-size") == 0)
			parse_size_bytes("--tmpfs-size", v, tmpfs_bytes, &err);
		if (strcmp(a, "-v") == 0) {
			/* SRC:DST:ro|rw as api_create.c writes it; SRC may hold ':' */
			const char *m = strrchr(v, ':'), *d = m;
			while (d && d > v && d[-1] != ':')
				d--;
			if (!m || d <= v)
				continue;
			snprintf(dst, sizeof(dst), "%.*s", (int)(m - d), d);
			ro = strcmp(m + 1, "ro") == 0;
		} else if (strcmp(a, "--tmpfs") == 0) {
			snprintf(dst, sizeof(dst), "%.*s", (int)strcspn(v, ":"), v);
		} else {
			continue;
		}
		if (under(path, dst) && strlen(dst) >= best) {
			best = strlen(dst);
			rw = !ro;
		}
	}
	if (best ? rw : root_rw)
		return 0;
	if (best) {
		snprintf(msg, len, "mounted volume is marked read-only");
		return 400;
	}
	snprintf(msg, len, "container rootfs is marked read-only");
	return 403;
}

/* path (absolute) cleaned lexically into out, as Docker's filepath.Clean in the
 * container's root: "." and empty components dropped, ".." takes one back (never
 * above "/").  out gets len bytes; false when it does not fit. */
static bool clean_path(const char *path, char *out, size_t len)
{
	size_t o = 0;

	if (len < 2)
		return false;
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			while (o > 0 && out[--o] != '/')
				;
		} else if (n && !(n == 1 && p[0] == '.')) {
			if (o + 1 + n >= len)
				return false;
			out[o++] = '/';
			memcpy(out + o, p, n);
			o += n;
		}
		p += n;
		while (*p == '/')
			p++;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return true;
}

struct api_kept_upload *api_kept_start(const struct api_ctr *c, const char *path, unsigned *status, char *msg,
				       size_t len)
{
	_cleanup_free_ struct api_kept_upload *k = calloc(1, sizeof(*k));
	_cleanup_close_ int root_fd = -1;
	uint64_t layer = 0, kept = 0;
	size_t n = 0;
	char name[API_ID_LEN + 1];
	struct stat st;

	*status = 500;
	if (!k) {
		snprintf(msg, len, "out of memory");
		return NULL;
	}
	k->fd = k->dir_fd = -1;
	if (!clean_path(path, k->path, sizeof(k->path))) {
		*status = 400;
		snprintf(msg, len, "path: too long");
		return NULL;
	}
	path = k->path;
	if ((*status = writable(api_get(c->config, "args", yajl_t_array), path, &layer, msg, len)))
		return NULL;
	*status = 500;
	if ((k->dir_fd = api_open_dir(c->name, &root_fd)) < 0) {
		snprintf(msg, len, "open the state of %s: %s", c->name, strerror(errno));
		return NULL;
	}
	for (;; n++) {
		snprintf(name, sizeof(name), KEPT_TAR, n + 1);
		if (fstatat(k->dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			break;
		kept += (uint64_t)st.st_size;
	}
	if (n >= NSRUN_MAX_COPY_ARCHIVES || kept >= layer) {
		*status = 413;
		snprintf(msg, len, "container %s is created, not started: the archives copied into it so far (%zu, "
			 "%llu bytes) fill what it takes before start (%d archives, its writable layer: %llu bytes); "
			 "start it, then copy", c->id, n, (unsigned long long)kept, NSRUN_MAX_COPY_ARCHIVES,
			 (unsigned long long)layer);
		close(k->dir_fd);
		return NULL;
	}
	k->max_bytes = layer - kept;
	k->max_entries = NSRUN_TMPFS_INODES(layer);
	snprintf(k->id, sizeof(k->id), "%s", c->id);
	api_random_id(name);
	snprintf(k->tmp, sizeof(k->tmp), "archive-upload-%.16s.tmp", name);
	if ((k->fd = openat(k->dir_fd, k->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0) {
		snprintf(msg, len, "keep the archive for %s: %s", c->name, strerror(errno));
		close(k->dir_fd);
		return NULL;
	}
	*status = 0;
	return steal_ptr(&k);
}

void api_kept_free(struct api_kept_upload *k)
{
	if (!k)
		return;
	cleanup_closep(&k->fd);
	if (k->tmp[0] && k->dir_fd >= 0)
		unlinkat(k->dir_fd, k->tmp, 0);
	cleanup_closep(&k->dir_fd);
	free(k);
}

unsigned api_kept_write(struct api_kept_upload *k, const char *data, size_t len, char *msg, size_t msg_len)
{
	if (k->fd < 0)
		return 0;
	/* compressed or not, it may not be larger than what it unpacks into */
	if (len > k->max_bytes - k->bytes) {
		snprintf(msg, msg_len, "archive larger than the container's writable layer takes (%llu bytes more; "
			 "--tmpfs-size): start the container, then copy, or bind a host directory (-v)",
			 (unsigned long long)k->max_bytes);
		return 413;
	}
	if (write_all(k->fd, data, len) < 0) {
		snprintf(msg, msg_len, "keep the archive: %s", strerror(errno));
		return 500;
	}
	k->bytes += len;
	return 0;
}

/* True when the member e, whose header in has just read, does not fit in
 * max_bytes of decompressed data: the bytes read so far (its header
 * included) and its declared size (archive_entry_size(3), the logical size,
 * so a sparse member counts whole).  A member without a size counts 0 here
 * (scan checks the count again after its skip). */
static bool too_big(struct archive *in, struct archive_entry *e, uint64_t max_bytes)
{
	int64_t used = archive_filter_bytes(in, 0), size = archive_entry_size_is_set(e) ? archive_entry_size(e) : 0;

	return used < 0 || size < 0 || (uint64_t)used > max_bytes || (uint64_t)size > max_bytes - (uint64_t)used;
}

/* Reads the upload through as the extraction will (copy_archive.c's formats and
 * filters), its members' data skipped, bounded by k's limits; refuses what the
 * extraction would.  Returns 0, or Docker's status with msg. */
static unsigned scan(struct api_kept_upload *k, char *msg, size_t len)
{
	struct archive *in = archive_read_new();
	struct archive_entry *e;
	unsigned long long entries = 0;
	unsigned status = 0;
	struct links links = { .made = false };
	int fd = openat(k->dir_fd, k->tmp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), r;

	if (!in || fd < 0 || !(links.made = hcreate_r(k->max_entries, &links.tab))) {
		snprintf(msg, len, "read the archive kept: %s", in && fd >= 0 ? "out of memory" : strerror(errno));
		status = 500;
		goto out;
	}
	archive_read_support_format_tar(in);
	archive_read_support_filter_gzip(in);
	archive_read_support_filter_bzip2(in);
	archive_read_support_filter_xz(in);
	if (archive_read_open_fd(in, fd, BLOCK) != ARCHIVE_OK) {
		snprintf(msg, len, "extract into %s: %s", k->path, archive_error_string(in));
		status = 400;
		goto out;
	}
	while ((r = archive_read_next_header(in, &e)) != ARCHIVE_EOF) {
		const char *name;
		if (r < ARCHIVE_WARN) {
			snprintf(msg, len, "extract into %s: %s", k->path, archive_error_string(in));
			status = 400;
			goto out;
		}
		name = archive_entry_pathname(e);
		if (escapes(name) || escapes(archive_entry_hardlink(e))) {
			snprintf(msg, len, "extract into %s: %s: a member may not be absolute, hold \"..\" or be a "
				 "hard link out", k->path, name ? name : "");
			status = 400;
			goto out;
		}
		if (through_link(&links, name)) {
			snprintf(msg, len, "extract into %s: %s: Cannot extract through symlink (a link of the archive)",
				 k->path, name);
			status = 400;
			goto out;
		}
		if (archive_entry_filetype(e) == AE_IFLNK && add_link(&links, name ? name : "") < 0) {
			snprintf(msg, len, "extract into %s: out of memory", k->path);
			status = 500;
			goto out;
		}
		if (archive_entry_filetype(e) == AE_IFCHR || archive_entry_filetype(e) == AE_IFBLK) {
			snprintf(msg, len, "extract into %s: %s: a device node is not extracted", k->path, name);
			status = 403;
			goto out;
		}
		/* the bound before the work: a member's declared size (a small xz or
		 * gzip stream may declare gigabytes of zeros) must fit what is left,
		 * so the decompression is never more than max_bytes in all */
		if (++entries > k->max_entries || too_big(in, e, k->max_bytes)) {
			snprintf(msg, len, "extract into %s: more than the container's writable layer takes "
				 "(--tmpfs-size)", k->path);
			status = 413;
			goto out;
		}
		if (archive_read_data_skip(in) < ARCHIVE_WARN) {
			snprintf(msg, len, "extract into %s: %s", k->path, archive_error_string(in));
			status = 400;
			goto out;
		}
		if ((uint64_t)archive_filter_bytes(in, 0) > k->max_bytes) {
			snprintf(msg, len, "extract into %s: more than the container's writable layer takes "
				 "(--tmpfs-size)", k->path);
			status = 413;
			goto out;
		}
	}
out:
	links_free(&links);
	archive_read_free(in);
	if (fd >= 0)
		close(fd);
	return status;
}

unsigned api_kept_commit(struct api_server *srv, struct api_kept_upload *k, const char *ref, char *msg, size_t len)
{
	char tar[64], path_file[64];
	struct api_ctr c;
	unsigned status;
	size_t n = 0;

	cleanup_closep(&k->fd);
	if ((status = scan(k, msg, len)))
		return status;
	pthread_mutex_lock(&srv->lock);
	/* still the container it was, still created: a start takes the lock too */
	if (api_ctr_find(ref, &c, &status, msg, len) < 0) {
		pthread_mutex_unlock(&srv->lock);
		return status;
	}
	if (strcmp(c.id, k->id) != 0 || c.alive || strcmp(c.st.status, "created") != 0) {
		snprintf(msg, len, "Container %s was started or removed while its archive came: copy again", k->id);
		status = 409;
		goto out;
	}
	for (;; n++) {
		struct stat st;
		snprintf(tar, sizeof(tar), KEPT_TAR, n + 1);
		if (fstatat(k->dir_fd, tar, &st, AT_SYMLINK_NOFOLLOW) < 0)
			break;
	}
	snprintf(path_file, sizeof(path_file), KEPT_PATH, n + 1);
	if (n >= NSRUN_MAX_COPY_ARCHIVES) {
		snprintf(msg, len, "container %s: more than %d archives before start", k->id, NSRUN_MAX_COPY_ARCHIVES);
		status = 413;
	} else if (api_write_file_atomic(k->dir_fd, path_file, k->path, strlen(k->path)) < 0 ||
		   renameat(k->dir_fd, k->tmp, k->dir_fd, tar) < 0) {
		snprintf(msg, len, "keep the archive for %s: %s", c.name, strerror(errno));
		unlinkat(k->dir_fd, path_file, 0);
		status = 500;
	} else {
		k->tmp[0] = '\0';
		status = 0;
	}
out:
	pthread_mutex_unlock(&srv->lock);
	api_ctr_free(&c);
	return status;
}

size_t api_kept_open(int dir_fd, int *fds, char **paths, size_t max)
{
	size_t n = 0;

	for (; n < max; n++) {
		char tar[64], path_file[64];
		size_t len = 0;
		int fd;
		snprintf(tar, sizeof(tar), KEPT_TAR, n + 1);
		snprintf(path_file, sizeof(path_file), KEPT_PATH, n + 1);
		if ((fd = openat(dir_fd, tar, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			break;
		if (!(paths[n] = api_read_small_file(dir_fd, path_file, &len)) || paths[n][0] != '/') {
			free(paths[n]);
			close(fd);
			break;
		}
		fds[n] = fd;
	}
	return n;
}

void api_kept_restore(int dir_fd, const int *fds, char *const *paths, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char tar[64], path_file[64];
		_cleanup_close_ int out = -1;
		off_t off = 0;
		ssize_t r;
		snprintf(tar, sizeof(tar), KEPT_TAR, i + 1);
		snprintf(path_file, sizeof(path_file), KEPT_PATH, i + 1);
		if (api_write_file_atomic(dir_fd, path_file, paths[i], strlen(paths[i])) < 0 ||
		    (out = openat(dir_fd, tar, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0)
			return;
		while ((r = copy_file_range(fds[i], &off, out, NULL, 1 << 20, 0)) > 0)
			;
	}
}

bool api_kept_any(const struct api_ctr *c)
{
	_cleanup_close_ int root_fd = -1, dir_fd = api_open_dir(c->name, &root_fd);
	char tar[64];
	struct stat st;

	snprintf(tar, sizeof(tar), KEPT_TAR, (size_t)1);
	return dir_fd >= 0 && fstatat(dir_fd, tar, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

unsigned api_kept_stat(const struct api_ctr *c, const char *path, char **json, char *msg, size_t len)
{
	yajl_val args = api_get(c->config, "args", yajl_t_array);
	struct nsrun_error err = { 0 };
	_cleanup_free_ char *store = NULL, *rootfs = NULL;
	_cleanup_close_ int root = -1, fd = -1;
	char entry[PATH_MAX], t[PATH_MAX], link[2 * PATH_MAX + 2] = "";
	const char *image = NULL;
	struct stat st;
	ssize_t n;

	for (size_t i = 0; args && i + 1 < args->u.array.len; i++) {
		const char *a = api_str(args->u.array.values[i]);
		if (strcmp(a, "--") == 0)
			break;
		if (strcmp(a, "--image") == 0)
			image = api_str(args->u.array.values[i + 1]);
	}
	*json = NULL;
	/* the image's root, where the container's will be (its mounts are not there yet) */
	if (!image || image_find(image, entry, sizeof(entry), &err) < 0 || !(store = image_store_dir(&err)) ||
	    asprintf(&rootfs, "%s/%s/rootfs", store, entry) < 0 ||
	    (root = open(rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    (fd = open_in_root(root, path, O_PATH | O_NOFOLLOW)) < 0 || fstat(fd, &st) < 0) {
		snprintf(msg, len, "Could not find the file %s in container %s", path, c->id);
		return 404;
	}
	if (S_ISLNK(st.st_mode) && (n = readlinkat(fd, "", t, sizeof(t) - 1)) > 0) {
		/* as the running case shows a dangling one: where it points, in the container */
		t[n] = '\0';
		if (t[0] == '/')
			snprintf(link, sizeof(link), "%s", t);
		else
			snprintf(link, sizeof(link), "%.*s/%s", (int)(strrchr(path, '/') - path), path, t);
	}
	if (!(*json = copy_archive_stat_json(&st, path, link))) {
		snprintf(msg, len, "out of memory");
		return 500;
	}
	return 0;
}
