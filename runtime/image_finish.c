/* image_finish.c - the pulled tree made safe to share, and the pull's tree
 * walks (see image_fetch.h).  The tree is reachable by the puller alone
 * (its temporary directory is 0700) while this runs, so paths cannot be
 * swapped meanwhile; no walk follows a link.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <fts.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cleanup.h"
#include "image_fetch.h"

/* Files whose contents are secrets (password hashes, private keys): no access
 * for others (fnmatch(3) patterns of paths inside the rootfs). */
static const char *const secrets[] = { "etc/shadow",	     "etc/shadow-",	    "etc/gshadow",
				       "etc/gshadow-",	     "etc/security/opasswd", "etc/sudoers",
				       "etc/sudoers.d",	     "etc/ssl/private",	    "etc/ssh/ssh_host_*_key",
				       "var/cache/debconf/passwords.dat", NULL };

/* The runtime's mount points in every image. */
static const char *const mount_points[] = { "work", "tmp", "proc", "dev", "sys", NULL };

static bool is_secret(const char *rel)
{
	for (const char *const *p = secrets; *p; p++)
		if (fnmatch(*p, rel, FNM_PATHNAME) == 0)
			return true;
	return false;
}

/* Removes every extended attribute of path but user.* (security.capability,
 * trusted.*, ACLs). */
static int strip_xattrs(const char *path)
{
	char list[65536];
	ssize_t n = llistxattr(path, list, sizeof(list));

	if (n < 0)
		return errno == ENOTSUP ? 0 : -1;
	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(list + i) + 1)
		if (strncmp(list + i, "user.", 5) != 0 && lremovexattr(path, list + i) < 0 && errno != ENODATA)
			return -1;
	return 0;
}

/* One entry of the finishing walk: deleted, or its owner, xattrs and mode set. */
static int finish_one(FTSENT *e, size_t root_len, bool as_root)
{
	const struct stat *st = e->fts_statp;
	const char *rel = e->fts_path + root_len + (e->fts_level > 0);
	bool secret;
	mode_t mode;

	if (S_ISFIFO(st->st_mode) || S_ISSOCK(st->st_mode) || S_ISBLK(st->st_mode) || S_ISCHR(st->st_mode))
		return unlink(e->fts_accpath) < 0 && errno != ENOENT ? -1 : 0;
	if (as_root && lchown(e->fts_accpath, 0, 0) < 0)
		return -1;
	if (strip_xattrs(e->fts_accpath) < 0)
		return -1;
	if (S_ISLNK(st->st_mode))
		return 0;
	secret = (e->fts_level > 0 && e->fts_parent->fts_number) || (e->fts_level > 0 && is_secret(rel));
	e->fts_number = secret;
	mode = st->st_mode & 07777 & ~07022;
	if (S_ISDIR(st->st_mode))
		mode |= 0700;
	if (secret) {
		mode &= ~(mode_t)0007;
	} else {
		mode |= 0444;
		if ((mode & 0111) || S_ISDIR(st->st_mode))
			mode |= 0111;
	}
	return chmod(e->fts_accpath, mode);
}

/* /dev emptied (the runtime mounts its own), the mount points made: real
 * directories, 0755 (the runtime mounts /tmp's tmpfs over it; nothing in the
 * store is writable by others). */
static int make_mount_points(const char *rootfs)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/dev", rootfs);
	if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		_cleanup_closedir_ DIR *d = opendir(path);
		struct dirent *de;
		char sub[PATH_MAX + 256];
		while (d && (de = readdir(d)))
			if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
				snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
				if (fetch_remove_tree(sub) < 0)
					return -1;
			}
	}
	for (const char *const *m = mount_points; *m; m++) {
		snprintf(path, sizeof(path), "%s/%s", rootfs, *m);
		if (lstat(path, &st) == 0 && !S_ISDIR(st.st_mode) && unlink(path) < 0)
			return -1;
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			return -1;
		if (chmod(path, 0755) < 0)
			return -1;
	}
	return 0;
}

int fetch_finish_tree(struct fetch *f, const char *rootfs, struct nsrun_error *err)
{
	char *paths[] = { (char *)rootfs, NULL };
	uint64_t files = 0, bytes = 0;
	bool as_root = geteuid() == 0;
	size_t root_len = strlen(rootfs);
	FTS *fts = fts_open(paths, FTS_PHYSICAL | FTS_XDEV | FTS_NOCHDIR, NULL);
	FTSENT *e;
	char size[32];
	int rc = 0;

	if (!fts)
		return error_set(err, errno, "pull \"%s\": walk the rootfs", f->o->name);
	while ((e = fts_read(fts))) {
		if (e->fts_info == FTS_DP)
			continue;
		if (e->fts_info == FTS_NS || e->fts_info == FTS_ERR || e->fts_info == FTS_DNR) {
			rc = error_set(err, e->fts_errno, "pull \"%s\": cannot finish the rootfs: %s", f->o->name,
				       e->fts_path + root_len);
			break;
		}
		files++;
		bytes += (uint64_t)e->fts_statp->st_size;
		if (files > f->o->max_files || bytes > f->o->max_bytes) {
			fetch_iec(f->o->max_bytes, size, sizeof(size));
			if (files > f->o->max_files)
				snprintf(f->reason, sizeof(f->reason),
					 "the image has more than %llu files (--max-files N raises the bound)",
					 (unsigned long long)f->o->max_files);
			else
				snprintf(f->reason, sizeof(f->reason),
					 "the image is larger than %s (--max-size SIZE raises the bound)", size);
			rc = 1;
			break;
		}
		/* a directory is made searchable here, before fts reads it */
		if (finish_one(e, root_len, as_root) < 0) {
			rc = error_set(err, errno, "pull \"%s\": cannot finish the rootfs (strip privileges, set modes) at %s",
				       f->o->name, e->fts_path + root_len);
			break;
		}
	}
	fts_close(fts);
	if (rc == 0 && make_mount_points(rootfs) < 0)
		rc = error_set(err, errno, "pull \"%s\": make the mount points of the rootfs", f->o->name);
	return rc;
}

int fetch_chown_tree(const char *dir, uid_t uid, gid_t gid)
{
	char *paths[] = { (char *)dir, NULL };
	FTS *fts = fts_open(paths, FTS_PHYSICAL | FTS_XDEV | FTS_NOCHDIR, NULL);
	FTSENT *e;
	int rc = 0;

	if (!fts)
		return -1;
	while ((e = fts_read(fts)))
		if (e->fts_info != FTS_DP && lchown(e->fts_accpath, uid, gid) < 0 && errno != ENOENT)
			rc = -1;
	fts_close(fts);
	return rc;
}

int fetch_remove_tree(const char *path)
{
	char *paths[] = { (char *)path, NULL };
	struct stat st;
	FTS *fts;
	FTSENT *e;
	int rc = 0;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlink(path) < 0 && errno != ENOENT ? -1 : 0;
	if (!(fts = fts_open(paths, FTS_PHYSICAL | FTS_XDEV | FTS_NOCHDIR, NULL)))
		return -1;
	while ((e = fts_read(fts))) {
		switch (e->fts_info) {
		case FTS_D:
			/* our own tree may hold directories without write permission */
			if ((e->fts_statp->st_mode & 0700) != 0700)
				chmod(e->fts_accpath, (e->fts_statp->st_mode & 07777) | 0700);
			break;
		case FTS_DP:
			if (rmdir(e->fts_accpath) < 0 && errno != ENOENT)
				rc = -1;
			break;
		case FTS_DNR:
		case FTS_NS:
		case FTS_ERR:
			rc = -1;
			break;
		default:
			if (unlink(e->fts_accpath) < 0 && errno != ENOENT)
				rc = -1;
		}
	}
	fts_close(fts);
	return rc;
}
