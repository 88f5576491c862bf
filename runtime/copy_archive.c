/* copy_archive.c - see copy_archive.h.  Runs inside the container, confined: it
 * only ever sees the container's root; it resolves paths in it with no magic
 * link (enter_parent). */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "copy_archive.h"
#include "sys.h"

#define BLOCK 65536

/* Go's os.FileMode bits (pkg.go.dev/io/fs#FileMode), which Docker's stat carries */
#define GO_DIR (1U << 31)
#define GO_SYMLINK (1U << 27)
#define GO_DEVICE (1U << 26)
#define GO_PIPE (1U << 25)
#define GO_SOCKET (1U << 24)
#define GO_SETUID (1U << 23)
#define GO_SETGID (1U << 22)
#define GO_CHARDEV (1U << 21)
#define GO_STICKY (1U << 20)

static unsigned go_mode(mode_t m)
{
	unsigned g = m & 0777;

	switch (m & S_IFMT) {
	case S_IFDIR: g |= GO_DIR; break;
	case S_IFLNK: g |= GO_SYMLINK; break;
	case S_IFBLK: g |= GO_DEVICE; break;
	case S_IFCHR: g |= GO_DEVICE | GO_CHARDEV; break;
	case S_IFIFO: g |= GO_PIPE; break;
	case S_IFSOCK: g |= GO_SOCKET; break;
	default: break;
	}
	if (m & S_ISUID)
		g |= GO_SETUID;
	if (m & S_ISGID)
		g |= GO_SETGID;
	if (m & S_ISVTX)
		g |= GO_STICKY;
	return g;
}

/* The error line; returns 1 (the exit status). */
static int fail_line(int errnum, const char *what, const char *path, const char *detail)
{
	dprintf(1, "!%d %s %s: %s\n", errnum > 0 ? errnum : EINVAL, what, path, detail ? detail : "");
	return 1;
}

/* The last component of path (trailing slashes off), "." for the root. */
static void base_name(const char *path, char *out, size_t len)
{
	size_t n = strlen(path);
	const char *b;

	while (n > 1 && path[n - 1] == '/')
		n--;
	if (n == 1 && path[0] == '/') {
		snprintf(out, len, ".");
		return;
	}
	b = path + n;
	while (b > path && b[-1] != '/')
		b--;
	snprintf(out, len, "%.*s", (int)(n - (size_t)(b - path)), b);
}

char *copy_archive_stat_json(const struct stat *st, const char *shown, const char *link)
{
	char name[256], mtime[64];
	const unsigned char *buf;
	size_t len;
	struct tm tm;
	char *out = NULL;
	yajl_gen g;

	base_name(shown, name, sizeof(name));
	gmtime_r(&st->st_mtim.tv_sec, &tm);
	strftime(mtime, sizeof(mtime), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(mtime + strlen(mtime), sizeof(mtime) - strlen(mtime), ".%09ldZ", st->st_mtim.tv_nsec);
	if (!(g = yajl_gen_alloc(NULL)))
		return NULL;
	yajl_gen_map_open(g);
	yajl_gen_string(g, (const unsigned char *)"name", 4);
	yajl_gen_string(g, (const unsigned char *)name, strlen(name));
	yajl_gen_string(g, (const unsigned char *)"size", 4);
	yajl_gen_integer(g, (long long)st->st_size);
	yajl_gen_string(g, (const unsigned char *)"mode", 4);
	yajl_gen_integer(g, (long long)go_mode(st->st_mode));
	yajl_gen_string(g, (const unsigned char *)"mtime", 5);
	yajl_gen_string(g, (const unsigned char *)mtime, strlen(mtime));
	yajl_gen_string(g, (const unsigned char *)"linkTarget", 10);
	yajl_gen_string(g, (const unsigned char *)link, strlen(link));
	yajl_gen_map_close(g);
	if (yajl_gen_get_buf(g, &buf, &len) == yajl_gen_status_ok)
		out = strndup((const char *)buf, len);
	yajl_gen_free(g);
	return out;
}

/* Writes the stat line of path (not following a last symlink; relative to the
 * working directory copy_archive_run chose), shown as shown (the path asked for).
 * Returns 0, or 1 after writing the error line. */
static int stat_line(const char *path, const char *shown)
{
	struct stat st;
	char link[2 * PATH_MAX + 2] = "";
	char *json;

	if (lstat(path, &st) < 0)
		return fail_line(errno, "stat", shown, strerror(errno));
	if (S_ISLNK(st.st_mode)) {
		/* Docker gives the target resolved; resolving here sees the container's root */
		char *r = realpath(path, NULL), t[PATH_MAX];
		ssize_t n;
		if (r) {
			snprintf(link, sizeof(link), "%s", r);
		} else if ((n = readlink(path, t, sizeof(t) - 1)) > 0) {
			/* dangling: where it points, in the container's root (docker cp -L
			 * then asks for that, and finds nothing there) */
			t[n] = '\0';
			if (t[0] == '/')
				snprintf(link, sizeof(link), "%s", t);
			else
				snprintf(link, sizeof(link), "%.*s/%s", (int)(strrchr(shown, '/') - shown), shown, t);
		}
		free(r);
	}
	if (!(json = copy_archive_stat_json(&st, shown, link)))
		return fail_line(ENOMEM, "stat", shown, "out of memory");
	dprintf(1, "%s\n", json);
	free(json);
	return 0;
}

/* The tar of path (relative, as stat_line's) on fd 1, members renamed from path
 * to shown's base name. */
static int get(const char *path, const char *shown)
{
	struct archive *disk = archive_read_disk_new(), *out = archive_write_new();
	struct archive_entry *e = NULL;
	char base[256], *name = NULL, *buf = malloc(BLOCK);
	size_t plen = strlen(path);
	int rc = 1, r;

	while (plen > 1 && path[plen - 1] == '/')
		plen--;
	base_name(shown, base, sizeof(base));
	if (!disk || !out || !buf)
		goto out;
	archive_read_disk_set_symlink_physical(disk);
	archive_read_disk_set_behavior(disk, ARCHIVE_READDISK_NO_XATTR | ARCHIVE_READDISK_NO_ACL |
					     ARCHIVE_READDISK_NO_FFLAGS | ARCHIVE_READDISK_NO_SPARSE);
	if (archive_write_set_format_pax_restricted(out) != ARCHIVE_OK ||
	    archive_write_set_bytes_in_last_block(out, 1) != ARCHIVE_OK || archive_write_open_fd(out, 1) != ARCHIVE_OK ||
	    archive_read_disk_open(disk, path) != ARCHIVE_OK)
		goto out;
	for (;;) {
		const char *p, *rest;
		archive_entry_free(e);
		if (!(e = archive_entry_new()))
			goto out;
		r = archive_read_next_header2(disk, e);
		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_WARN)
			goto out;
		archive_read_disk_descend(disk);
		p = archive_entry_pathname(e);
		rest = p && strlen(p) >= plen ? p + plen : "";
		free(name);
		name = NULL;
		if (asprintf(&name, "%s%s%s", base, rest[0] && rest[0] != '/' ? "/" : "", rest) < 0) {
			name = NULL;
			goto out;
		}
		archive_entry_set_pathname(e, name);
		archive_entry_set_uname(e, NULL);
		archive_entry_set_gname(e, NULL);
		if (archive_write_header(out, e) < ARCHIVE_WARN)
			goto out_w;
		if (archive_entry_filetype(e) != AE_IFREG)
			continue;
		for (la_ssize_t n; (n = archive_read_data(disk, buf, BLOCK)) != 0;) {
			if (n < 0)
				goto out;
			if (archive_write_data(out, buf, (size_t)n) < 0)
				goto out_w;
		}
	}
	rc = archive_write_close(out) == ARCHIVE_OK ? 0 : 1;
	if (rc)
		goto out_w;
	goto done;
out_w:
	fprintf(stderr, "nsrun: archive %s: %s\n", shown, archive_error_string(out) ? archive_error_string(out) : "");
	goto done;
out:
	fprintf(stderr, "nsrun: archive %s: %s\n", shown,
		disk && archive_error_string(disk) ? archive_error_string(disk) : strerror(ENOMEM));
done:
	archive_entry_free(e);
	archive_read_free(disk);
	archive_write_free(out);
	free(name);
	free(buf);
	return rc;
}

/* Extracts fd 0's tar into dir; the line after. */
static int put(const char *dir)
{
	struct archive *in = archive_read_new(), *disk = archive_write_disk_new();
	struct archive_entry *e;
	struct stat st;
	int rc = 1, r;

	if (!in || !disk) {
		rc = fail_line(ENOMEM, "extract into", dir, "out of memory");
		goto out;
	}
	if (stat(".", &st) < 0) {
		rc = fail_line(errno, "extract into", dir, strerror(errno));
		goto out;
	}
	if (!S_ISDIR(st.st_mode)) {
		rc = fail_line(ENOTDIR, "extract into", dir, "extraction point is not a directory");
		goto out;
	}
	/* access(2) says EROFS for a read-only mount, which libarchive's messages lose */
	if (access(".", W_OK) < 0) {
		rc = fail_line(errno, "extract into", dir, strerror(errno));
		goto out;
	}
	umask(0);
	archive_read_support_format_tar(in);
	archive_read_support_filter_gzip(in);
	archive_read_support_filter_bzip2(in);
	archive_read_support_filter_xz(in);
	/* no ARCHIVE_EXTRACT_PERM: no setuid, setgid or sticky bit; _OWNER: the
	 * member's uid and gid, as Docker keeps them, where ours may chown(2) to them
	 * (a root payload with CAP_CHOWN, the ids mapped); else ours (libarchive
	 * warns, which is not a failure) */
	archive_write_disk_set_options(disk, ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_UNLINK | ARCHIVE_EXTRACT_OWNER |
						     ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT |
						     ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS);
	if (archive_read_open_fd(in, 0, BLOCK) != ARCHIVE_OK) {
		rc = fail_line(archive_errno(in), "extract into", dir, archive_error_string(in));
		goto out;
	}
	while ((r = archive_read_next_header(in, &e)) != ARCHIVE_EOF) {
		const void *buf;
		size_t len;
		la_int64_t off;

		if (r < ARCHIVE_WARN) {
			rc = fail_line(archive_errno(in), "extract into", dir, archive_error_string(in));
			goto out;
		}
		if (archive_entry_filetype(e) == AE_IFCHR || archive_entry_filetype(e) == AE_IFBLK) {
			char msg[512];
			snprintf(msg, sizeof(msg), "%s: a device node is not extracted", archive_entry_pathname(e));
			rc = fail_line(EPERM, "extract into", dir, msg);
			goto out;
		}
		if (archive_write_header(disk, e) < ARCHIVE_WARN) {
			rc = fail_line(archive_errno(disk), "extract into", dir, archive_error_string(disk));
			goto out;
		}
		/* a data block's ARCHIVE_WARN is a failed write(2) (ENOSPC in a full
		 * tmpfs) or a truncation: the file would be left short, its tail zeros */
		while ((r = archive_read_data_block(in, &buf, &len, &off)) == ARCHIVE_OK)
			if (archive_write_data_block(disk, buf, len, off) < ARCHIVE_OK) {
				char msg[768];
				int errnum = archive_errno(disk);

				snprintf(msg, sizeof(msg), "%s: %s%s%s", archive_entry_pathname(e),
					 archive_error_string(disk) ? archive_error_string(disk) : "write",
					 errnum > 0 ? ": " : "", errnum > 0 ? strerror(errnum) : "");
				rc = fail_line(errnum, "extract into", dir, msg);
				goto out;
			}
		if (r < ARCHIVE_WARN) {
			rc = fail_line(archive_errno(in), "extract into", dir, archive_error_string(in));
			goto out;
		}
		if (archive_write_finish_entry(disk) < ARCHIVE_WARN) {
			rc = fail_line(archive_errno(disk), "extract into", dir, archive_error_string(disk));
			goto out;
		}
	}
	if (archive_write_close(disk) < ARCHIVE_WARN) {
		rc = fail_line(archive_errno(disk), "extract into", dir, archive_error_string(disk));
		goto out;
	}
	rc = stat_line(".", dir);
out:
	archive_read_free(in);
	archive_write_free(disk);
	return rc;
}

/* Makes the directory that holds path's last component (PUT: path itself) the
 * working directory, resolved by openat2(2) RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS
 * (open_in_root, sys.h): a payload's link to /proc/self/fd/N, /proc/self/root or
 * another process's is not followed; ordinary links are, inside the root.  *last
 * is what is left to look up from there ("." when the path ends in '/' or is a
 * directory to extract into).  Returns 0, or 1 after writing the error line. */
static int enter_parent(enum copy_archive_op op, const char *path, char *last, size_t len)
{
	char dir[PATH_MAX];
	size_t n = strlen(path);
	int root, fd, rc;

	if (n >= sizeof(dir))
		return fail_line(ENAMETOOLONG, "stat", path, strerror(ENAMETOOLONG));
	memcpy(dir, path, n + 1);
	/* a trailing '/' follows the last component, as lstat(2) would */
	if (op == COPY_ARCHIVE_PUT || dir[n - 1] == '/') {
		snprintf(last, len, ".");
	} else {
		char *slash = strrchr(dir, '/');
		snprintf(last, len, "%s", slash + 1);
		slash[slash == dir ? 1 : 0] = '\0';
	}
	if ((root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return fail_line(errno, "stat", path, strerror(errno));
	fd = open_in_root(root, dir, O_PATH | O_DIRECTORY);
	rc = fd < 0 || fchdir(fd) < 0 ? -1 : 0;
	if (rc < 0) {
		int e = errno;
		close(root);
		if (fd >= 0)
			close(fd);
		/* ELOOP: a magic link on the way, which is as good as not there */
		if (e == ELOOP || e == EXDEV)
			e = ENOENT;
		return fail_line(e, op == COPY_ARCHIVE_PUT ? "extract into" : "stat", path, strerror(e));
	}
	close(fd);
	close(root);
	return 0;
}

int copy_archive_run(enum copy_archive_op op, const char *path)
{
	char last[NAME_MAX + 2];

	if (op != COPY_ARCHIVE_NONE && (!*path || enter_parent(op, path, last, sizeof(last))))
		return 1;
	switch (op) {
	case COPY_ARCHIVE_STAT:
		return stat_line(last, path);
	case COPY_ARCHIVE_GET:
		return stat_line(last, path) ? 1 : get(last, path);
	case COPY_ARCHIVE_PUT:
		return put(path);
	default:
		return 1;
	}
}
