/* mount_copyup.c - a tmpfs that starts with what was below it (tmpcopyup: podman's
 * --tmpfs option, which crun and runc implement; docker's populated volume for an
 * image's Volume): the tree of the directory the tmpfs covers, copied into it by
 * the container's init before the payload starts.
 *
 * The tree is the image's (untrusted): every step is relative to a directory fd,
 * no link is followed (fstatat AT_SYMLINK_NOFOLLOW, openat O_NOFOLLOW), a file is
 * opened only once fstat(2) says it is a regular file and read only if the open
 * fd is one too (O_NONBLOCK: a FIFO put there in between never blocks), links are
 * copied as links, and devices, FIFOs and sockets are left out.  The tmpfs's own
 * size and inode count bound what is copied (ENOSPC: the run fails, naming it).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "mount_internal.h"

#define COPYUP_DEPTH_MAX 128
#define COPYUP_BUF (64 * 1024)

struct copyup {
	const char *target;     /* the tmpfs's path inside, for messages */
	char path[PATH_MAX];    /* the entry being copied, relative to target */
	char *buf;
	struct nsrun_error *err;
};

static int fail(struct copyup *c, int e, const char *what)
{
	error_set(c->err, e, "tmpcopyup \"%s\": %s \"%s\"", c->target, what, c->path[0] ? c->path : ".");
	if (e == ENOSPC)
		c->err->hint = "the tmpfs is too small for what the image has there: a bigger size= for it";
	return -1;
}

/* Owner and mode as below; an owner the container's user namespace does not map
 * (EINVAL) or may not give (EPERM) stays the container's own. */
static void keep_attrs(int fd, const struct stat *st)
{
	if (fchown(fd, st->st_uid, st->st_gid) < 0) {
		/* unmapped or not ours to give: the file stays the container's */
	}
	if (fchmod(fd, st->st_mode & 01777) < 0) {
		/* a mode the tmpfs refuses: it keeps the one it was made with */
	}
}

static int copy_file(struct copyup *c, int from_dir, int to_dir, const char *name, const struct stat *st)
{
	_cleanup_close_ int in = openat(from_dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	_cleanup_close_ int out = -1;
	struct stat now;
	ssize_t n;

	if (in < 0)
		return fail(c, errno, "open");
	if (fstat(in, &now) < 0 || !S_ISREG(now.st_mode))
		return 0; /* not the regular file it was a moment ago: left out */
	out = openat(to_dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		return fail(c, errno, "create");
	while ((n = read(in, c->buf, COPYUP_BUF)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return fail(c, errno, "read");
		}
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, c->buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return fail(c, errno, "write");
			off += w;
		}
	}
	keep_attrs(out, st);
	return 0;
}

static int copy_dir(struct copyup *c, int from, int to, int depth);

/* One entry of from, name, into to. */
static int copy_entry(struct copyup *c, int from, int to, const char *name, int depth)
{
	struct stat st;
	size_t len = strlen(c->path);

	if (len + 1 + strlen(name) >= sizeof(c->path))
		return fail(c, ENAMETOOLONG, "a path under");
	snprintf(c->path + len, sizeof(c->path) - len, "%s%s", len ? "/" : "", name);
	if (fstatat(from, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno != ENOENT)
			return fail(c, errno, "stat");
	} else if (S_ISREG(st.st_mode)) {
		if (copy_file(c, from, to, name, &st) < 0)
			return -1;
	} else if (S_ISLNK(st.st_mode)) {
		char link[PATH_MAX];
		ssize_t n = readlinkat(from, name, link, sizeof(link) - 1);
		if (n < 0)
			return fail(c, errno, "read the link");
		link[n] = '\0';
		if (symlinkat(link, to, name) < 0)
			return fail(c, errno, "make the link");
		if (fchownat(to, name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) < 0) {
			/* as keep_attrs */
		}
	} else if (S_ISDIR(st.st_mode)) {
		_cleanup_close_ int sub_from = -1, sub_to = -1;
		if (depth >= COPYUP_DEPTH_MAX)
			return fail(c, ELOOP, "directories nested too deep at");
		if (mkdirat(to, name, 0700) < 0)
			return fail(c, errno, "make the directory");
		sub_from = openat(from, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub_from < 0)
			return fail(c, errno, "open the directory");
		sub_to = openat(to, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub_to < 0)
			return fail(c, errno, "open the directory");
		if (copy_dir(c, sub_from, sub_to, depth + 1) < 0)
			return -1;
		keep_attrs(sub_to, &st);
	}
	/* devices, FIFOs and sockets: left out, as a copy cannot carry them */
	c->path[len] = '\0';
	return 0;
}

static int copy_dir(struct copyup *c, int from, int to, int depth)
{
	int fd = fcntl(from, F_DUPFD_CLOEXEC, 3);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	int rc = 0;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return fail(c, errno, "read the directory");
	}
	rewinddir(d);
	while (rc == 0 && (errno = 0, e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		rc = copy_entry(c, from, to, e->d_name, depth);
	}
	if (rc == 0 && errno)
		rc = fail(c, errno, "read the directory");
	closedir(d);
	return rc;
}

int mount_copy_up(int from, int to, const char *target, struct nsrun_error *err)
{
	struct copyup c = { .target = target, .err = err };
	int rc;

	/* the tmpfs's own root keeps the mode it was mounted with (--tmpfs mode=) */
	if (!(c.buf = malloc(COPYUP_BUF)))
		return error_set(err, ENOMEM, "tmpcopyup \"%s\"", target);
	rc = copy_dir(&c, from, to, 0);
	free(c.buf);
	return rc;
}
