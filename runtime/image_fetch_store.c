/* image_fetch_store.c - the store's side of a pull (see image_fetch.h): the
 * name's lock, leftovers of interrupted pulls, and the landing of the
 * finished tree.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "image_fetch.h"
#include "sys.h"

/* ---- the store ---- */

/* Is a tree moved aside (.NAME.old.XXXXXX) still the root of a run?  A run
 * holds a shared flock(2) on the tree's rootfs while it lasts; older runs are
 * found by their mounts (the kernel shows a bind mount's root's current path). */
bool fetch_tree_in_use(const char *dir)
{
	_cleanup_free_ char *rootfs = NULL, *needle = NULL;
	_cleanup_close_ int fd = -1;
	_cleanup_closedir_ DIR *proc = NULL;
	const char *base = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
	struct dirent *de;

	if (asprintf(&rootfs, "%s/rootfs", dir) < 0 || asprintf(&needle, "/%s/", base) < 0)
		return true;
	fd = open(rootfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0)
		return true;
	if (!(proc = opendir("/proc")))
		return false;
	while ((de = readdir(proc))) {
		_cleanup_free_ char *text = NULL;
		if (strspn(de->d_name, "0123456789") != strlen(de->d_name))
			continue;
		char path[300];
		snprintf(path, sizeof(path), "/proc/%s/mountinfo", de->d_name);
		if (read_file(path, 16 << 20, &text, NULL) == 0 && strstr(text, needle))
			return true;
	}
	return false;
}

/* Removes leftovers of interrupted pulls, builds and removals of the name: a
 * temporary directory still flock'ed belongs to a pull in progress and is
 * left alone; an old tree still used by a run is left for later. */
void fetch_remove_stale(const struct fetch *f, const char *store)
{
	_cleanup_closedir_ DIR *d = opendir(store);
	struct dirent *de;
	size_t nl = strlen(f->o->name);

	while (d && (de = readdir(d))) {
		const char *s = de->d_name;
		char path[PATH_MAX];
		bool old;
		int fd;
		if (s[0] != '.' || strncmp(s + 1, f->o->name, nl) != 0 || strlen(s) != 1 + nl + 5 + 6 ||
		    (strncmp(s + 1 + nl, ".tmp.", 5) != 0 && strncmp(s + 1 + nl, ".old.", 5) != 0))
			continue;
		old = strncmp(s + 1 + nl, ".old.", 5) == 0;
		snprintf(path, sizeof(path), "%s/%s", store, s);
		if (old && fetch_tree_in_use(path))
			continue;
		if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			continue;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			fetch_info(f, "removing stale %s", path);
			if (fetch_remove_tree(path) < 0)
				error_warn(stderr, "cannot remove stale %s (permission denied?)", path);
		}
		close(fd);
	}
}

/* Takes STORE/.lock/NAME (kept), waiting up to --timeout for another pull or
 * build of the name.  Returns the locked fd, or -1 with err. */
int fetch_lock_name(const struct fetch *f, const char *store, struct nsrun_error *err)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/.lock", store);
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return error_set(err, errno, "pull \"%s\": cannot create %s", f->o->name, path);
	snprintf(path, sizeof(path), "%s/.lock/%s", store, f->o->name);
	if ((fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644)) < 0)
		return error_set(err, errno, "pull \"%s\": cannot open the lock %s", f->o->name, path);
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return fd;
	fetch_info(f, "waiting for another build or import of \"%s\"", f->o->name);
	while (!fetch_stop_signal() && monotonic_us() < f->deadline_us) {
		nanosleep(&(struct timespec){ .tv_nsec = 250000000 }, NULL);
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return fd;
	}
	close(fd);
	if (fetch_stop_signal())
		return error_set(err, EINTR, "pull \"%s\"", f->o->name);
	return error_set(err, 0, "pull \"%s\": another build or import of \"%s\" still runs after %llu s", f->o->name,
			 f->o->name, (unsigned long long)f->o->timeout_s);
}

/* Moves the finished f->tmp to STORE/NAME; an image it replaces is renamed
 * aside first and deleted unless a run still uses it (then a later pull,
 * build or rm of the name deletes it). */
int fetch_land(struct fetch *f, const char *store, struct nsrun_error *err)
{
	_cleanup_free_ char *dest = NULL, *old = NULL;
	struct stat st;
	int e;

	if (asprintf(&dest, "%s/%s", store, f->o->name) < 0 || asprintf(&old, "%s/.%s.old.XXXXXX", store, f->o->name) < 0)
		return error_set(err, ENOMEM, "pull \"%s\"", f->o->name);
	if (lstat(dest, &st) == 0) {
		if (!f->o->force)
			return error_set(err, EEXIST, "image \"%s\" already exists in %s (use --force to replace it)",
					 f->o->name, store);
		if (!mkdtemp(old))
			return error_set(err, errno, "pull \"%s\": cannot create a directory in %s", f->o->name, store);
		if (rename(dest, old) < 0) {
			e = errno;
			rmdir(old);
			return error_set(err, e, "pull \"%s\": cannot move the old image aside", f->o->name);
		}
	} else {
		old[0] = '\0';
	}
	if (rename(f->tmp, dest) < 0) {
		e = errno;
		if (old[0])
			rename(old, dest);
		return error_set(err, e, "pull \"%s\": cannot rename %s to %s", f->o->name, f->tmp, dest);
	}
	free(f->tmp);
	f->tmp = NULL;
	if (old[0]) {
		if (fetch_tree_in_use(old))
			fetch_info(f, "the old image is still in use by a run: kept in %s until a later pull or rm of \"%s\"", old,
			     f->o->name);
		else if (fetch_remove_tree(old) < 0)
			error_warn(stderr, "cannot delete the old image in %s (permission denied?)", old);
	}
	return 0;
}

