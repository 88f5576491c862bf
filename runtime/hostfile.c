/* hostfile.c - see hostfile.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "hostfile.h"
#include "sys.h"

/* Root follows no symlink it does not own on the way to dir (a payload's links on
 * the host are 65534's: root's container maps to it): a link planted in a rw volume
 * must not turn `--json vol/out/r.json` into a file in /etc/sudoers.d.  Another
 * caller's own links are followed: a payload's links are that caller's too, and
 * lead nowhere the caller could not write anyway.  Returns 0 or -1 with err. */
static int check_dir_links(const char *dir, const char *what, const char *path, struct nsrun_error *err)
{
	_cleanup_free_ char *prefix = strdup(dir);
	struct stat st;

	if (!prefix)
		return error_set(err, ENOMEM, "%s", what);
	if (geteuid() != 0)
		return 0;
	for (char *p = prefix + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;
		*p = '\0';
		if (lstat(prefix, &st) == 0 && S_ISLNK(st.st_mode) && st.st_uid != 0)
			return error_set(err, ELOOP, "%s \"%s\": \"%s\" is a symlink that root does not own, not "
					 "followed by root (a payload may have made it)", what, path, prefix);
		*p = c;
		if (!c)
			return 0;
	}
}

/* Opens the directory part of path (following the caller's links) and sets *name
 * to a malloc'd last component.  Returns the fd or -1 with err. */
static int open_parent(const char *path, const char *what, char **name, struct nsrun_error *err)
{
	_cleanup_free_ char *copy = strdup(path);
	char *slash;
	const char *dir = ".", *last;
	int fd;

	*name = NULL;
	if (!copy)
		return error_set(err, ENOMEM, "%s", what);
	slash = strrchr(copy, '/');
	last = copy;
	if (slash) {
		*slash = '\0';
		dir = slash == copy ? "/" : copy;
		last = slash + 1;
	}
	if (!*last || strcmp(last, ".") == 0 || strcmp(last, "..") == 0)
		return error_set(err, EISDIR, "%s \"%s\"", what, path);
	if (check_dir_links(dir, what, path, err) < 0)
		return -1;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return error_set(err, errno, "%s \"%s\"", what, path);
	*name = strdup(last);
	if (!*name) {
		close(fd);
		return error_set(err, ENOMEM, "%s", what);
	}
	return fd;
}

/* The last component: *follow when it is a symlink root owns, an error for any
 * other symlink; *st gets what lstat says (st_mode 0: it does not exist). */
static int check_last(int dir_fd, const char *name, const char *what, const char *path, bool *follow,
		      struct stat *st, struct nsrun_error *err)
{
	*follow = false;
	if (fstatat(dir_fd, name, st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno != ENOENT)
			return error_set(err, errno, "%s \"%s\"", what, path);
		memset(st, 0, sizeof(*st));
		return 0;
	}
	if (S_ISLNK(st->st_mode)) {
		if (st->st_uid != 0)
			return error_set(err, ELOOP, "%s \"%s\": a symlink that root does not own is not followed "
					 "(a payload may have made it): name the file itself", what, path);
		*follow = true;
	}
	return 0;
}

int host_in_open(const char *path, const char *what, struct nsrun_error *err)
{
	_cleanup_close_ int dir_fd = -1, fd = -1;
	_cleanup_free_ char *name = NULL;
	struct stat st;
	bool follow;

	dir_fd = open_parent(path, what, &name, err);
	if (dir_fd < 0 || check_last(dir_fd, name, what, path, &follow, &st, err) < 0)
		return -1;
	/* O_NONBLOCK: a FIFO's open waits for a writer, and no --timeout runs yet
	 * (one a payload planted in a rw volume would wait for ever); blocking again
	 * after, its read without a writer is the end of input */
	fd = openat(dir_fd, name, O_RDONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK | (follow ? 0 : O_NOFOLLOW));
	if (fd < 0 || fd_set_nonblock(fd, false) < 0)
		return error_set(err, errno, "%s \"%s\"", what, path);
	/* a directory as stdin would be a way into the host's tree (/proc/self/fd/0/...) */
	if (fstat(fd, &st) < 0 || S_ISDIR(st.st_mode))
		return error_set(err, S_ISDIR(st.st_mode) ? EISDIR : errno, "%s \"%s\"", what, path);
	return steal_fd(&fd);
}

/* Is dir (a real path) in one of cfg's rw volumes? Returns its source or NULL. */
static const char *in_rw_volume(const struct nsrun_config *cfg, const char *dir)
{
	for (size_t i = 0; i < cfg->n_mounts; i++) {
		const struct nsrun_mount *m = &cfg->mounts[i];
		size_t n = strlen(m->source);
		if (m->rw && strncmp(dir, m->source, n) == 0 && (dir[n] == '\0' || dir[n] == '/' || n == 1))
			return m->source;
	}
	return NULL;
}

/* A name for the new file in the directory: never an existing one (O_EXCL). */
static int open_new(struct host_out *h, struct nsrun_error *err)
{
	unsigned rnd = 0;
	int fd;

	if (getrandom(&rnd, sizeof(rnd), 0) < 0)
		rnd = (unsigned)getpid();
	snprintf(h->tmp, sizeof(h->tmp), ".nsrun-%08x.tmp", rnd);
	fd = openat(h->dir_fd, h->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0666);
	if (fd < 0) {
		h->tmp[0] = '\0';
		return error_set(err, errno, "%s \"%s\"", h->what, h->path);
	}
	return fd;
}

int host_out_prepare(const char *path, const char *what, const struct nsrun_config *cfg, bool refuse_rw,
		     struct host_out *h, struct nsrun_error *err)
{
	struct stat st;
	bool follow;
	int fd;

	memset(h, 0, sizeof(*h));
	h->path = path;
	h->what = what;
	h->fd = -1;
	h->dir_fd = open_parent(path, what, &h->name, err);
	if (h->dir_fd < 0 || check_last(h->dir_fd, h->name, what, path, &follow, &st, err) < 0)
		return -1;
	if (refuse_rw) {
		char real[PATH_MAX], link[64];
		const char *vol;
		ssize_t n;
		fd_path(link, sizeof(link), h->dir_fd);
		n = readlink(link, real, sizeof(real) - 1);
		if (n > 0) {
			real[n] = '\0';
			if ((vol = in_rw_volume(cfg, real)))
				return error_set(err, 0, "%s \"%s\" is in the rw volume \"%s\": the service could "
						 "replace it; name a file outside it", what, path, vol);
		}
	}
	/* a FIFO named as it is: whoever reads it gets the document, and a payload
	 * with a rw volume can make one where a later run's --json will be */
	if (!follow && S_ISFIFO(st.st_mode)) {
		error_set(err, EINVAL, "%s \"%s\": a FIFO, not written (whoever opened it would read the "
			  "document; a payload with a rw volume can make one)", what, path);
		err->hint = "name a regular file, or give - and send standard output where the document should go";
		return -1;
	}
	if (follow || (st.st_mode && !S_ISREG(st.st_mode))) {
		/* /dev/stdout, a pipe, a terminal: there is nothing to rename over.
		 * O_NONBLOCK: a FIFO without a reader is ENXIO now, not a wait before
		 * --timeout runs */
		h->fd = openat(h->dir_fd, h->name, O_WRONLY | O_CREAT | O_TRUNC | O_NOCTTY | O_CLOEXEC | O_NONBLOCK |
			       (follow ? 0 : O_NOFOLLOW), 0666);
		if (h->fd < 0 || fd_set_nonblock(h->fd, false) < 0 || fstat(h->fd, &st) < 0) {
			error_set(err, errno, "%s \"%s\"%s", what, path, errno == ENXIO ? ": a FIFO no one reads" : "");
			return -1;
		}
		h->dev = st.st_dev;
		h->ino = st.st_ino;
		return 0;
	}
	/* refused now, not after the run: a directory nsrun may not write */
	fd = open_new(h, err);
	if (fd < 0)
		return -1;
	close(fd);
	unlinkat(h->dir_fd, h->tmp, 0);
	h->tmp[0] = '\0';
	return 0;
}

FILE *host_out_begin(struct host_out *h, struct nsrun_error *err)
{
	_cleanup_close_ int fd = -1;
	struct stat st;
	FILE *f;

	fd = h->fd >= 0 ? fcntl(h->fd, F_DUPFD_CLOEXEC, 3) : open_new(h, err);
	if (fd < 0)
		return h->fd >= 0 ? (error_set(err, errno, "%s \"%s\"", h->what, h->path), NULL) : NULL;
	if (h->fd < 0) {
		if (fstat(fd, &st) < 0) {
			error_set(err, errno, "%s \"%s\"", h->what, h->path);
			return NULL;
		}
		h->dev = st.st_dev;
		h->ino = st.st_ino;
	}
	f = fdopen(fd, "w");
	if (!f) {
		error_set(err, errno, "%s \"%s\"", h->what, h->path);
		return NULL;
	}
	fd = -1; /* f owns it */
	return f;
}

int host_out_commit(struct host_out *h, FILE *f, struct nsrun_error *err)
{
	struct stat st;

	if (fclose(f) != 0)
		return error_set(err, errno, "write the %s document \"%s\"", h->what, h->path);
	if (h->tmp[0]) {
		if (renameat(h->dir_fd, h->tmp, h->dir_fd, h->name) < 0)
			return error_set(err, errno, "%s \"%s\": rename the new document over it", h->what, h->path);
		h->tmp[0] = '\0';
	}
	/* what was opened is what was named: a directory moved away or swapped during
	 * the run would leave the document where the caller does not look */
	if (stat(h->path, &st) < 0 || st.st_dev != h->dev || st.st_ino != h->ino)
		return error_set(err, EXDEV, "%s \"%s\" no longer leads to the document nsrun wrote "
				 "(changed during the run)", h->what, h->path);
	return 0;
}

void host_out_free(struct host_out *h)
{
	if (h->dir_fd > 0 && h->tmp[0])
		unlinkat(h->dir_fd, h->tmp, 0);
	h->tmp[0] = '\0';
	if (h->dir_fd > 0)
		close(h->dir_fd);
	if (h->fd >= 0)
		close(h->fd);
	h->dir_fd = h->fd = -1;
	free(h->name);
	h->name = NULL;
}
