/* mount_oci.c - see mount.h: what only an OCI bundle's config.json asks of the
 * container's mounts (oci_config.h): linux.devices' nodes in /dev,
 * linux.rootfsPropagation on its root and its bind mounts' propagation. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cleanup.h"
#include "mount.h"
#include "sys.h"

/* Makes the directories of rel (a path inside dev, "net/tun") above its last
 * name, 0755, following no link on the way (the config refuses paths beneath
 * nsrun's own links: this holds whatever else /dev has).  Returns an O_PATH fd
 * of the last one (or of dev) and *name the last name in rel, or -1 with errno. */
static int make_parents(int dev, const char *rel, const char **name)
{
	char dir[PATH_MAX];
	char *seg = dir;
	int fd = fcntl(dev, F_DUPFD_CLOEXEC, 3);

	if ((size_t)snprintf(dir, sizeof(dir), "%s", rel) >= sizeof(dir)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	*name = rel;
	for (char *p = strchr(seg, '/'); fd >= 0 && p; seg = p + 1, p = strchr(seg, '/')) {
		int next;
		*p = '\0';
		if (mkdirat(fd, seg, 0755) < 0 && errno != EEXIST) {
			next = -1;
		} else {
			next = openat(fd, seg, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			*name = rel + (p + 1 - dir);
		}
		close(fd);
		fd = next;
	}
	return fd;
}

static int bind_device(int dev, const struct nsrun_device *d, struct nsrun_error *err)
{
	const char *rel = d->path + strlen("/dev/"), *name;
	char where[64];
	_cleanup_close_ int parent = -1, node = -1, bound = -1;
	struct stat st;

	if ((parent = make_parents(dev, rel, &name)) < 0)
		return error_set(err, errno, "linux.devices: %s: make its directories", d->path);
	if (d->type == 'p') {
		/* fchmodat follows a link: the FIFO just made is no link */
		if (mkfifoat(parent, name, d->file_mode) < 0 || fchmodat(parent, name, d->file_mode, 0) < 0)
			return error_set(err, errno, "linux.devices: %s: make the FIFO", d->path);
		return 0;
	}
	/* a user namespace cannot mknod (user_namespaces(7)): the host's node is bound
	 * onto an empty file */
	node = openat(parent, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0666);
	if (node < 0)
		return error_set(err, errno, "linux.devices: %s: create its mount point", d->path);
	fd_path(where, sizeof(where), node);
	if (mount(d->path, where, NULL, MS_BIND, NULL) < 0)
		return error_set(err, errno, "linux.devices: bind the host's %s", d->path);
	/* checked before clone; the host's path may have changed since: check what was bound */
	bound = openat(parent, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (bound < 0 || fstat(bound, &st) < 0)
		return error_set(err, errno, "linux.devices: %s: open what was bound", d->path);
	if ((d->type == 'c' ? !S_ISCHR(st.st_mode) : !S_ISBLK(st.st_mode)) || major(st.st_rdev) != d->major ||
	    minor(st.st_rdev) != d->minor)
		return error_set(err, 0, "linux.devices: %s: the host's node changed: it is not %s %u:%u any more",
				 d->path, d->type == 'c' ? "char" : "block", d->major, d->minor);
	return 0;
}

int mount_devices(int dev, const struct nsrun_config *cfg, struct nsrun_error *err)
{
	for (size_t i = 0; i < cfg->n_devices; i++)
		if (bind_device(dev, &cfg->devices[i], err) < 0)
			return -1;
	return 0;
}

int mount_root_propagation(unsigned long flags, struct nsrun_error *err)
{
	if (flags && mount("none", "/", NULL, flags, NULL) < 0)
		return error_set(err, errno, "linux.rootfsPropagation: set the propagation of the container's root");
	return 0;
}

int mount_binds_propagation(const struct nsrun_config *cfg, struct nsrun_error *err)
{
	for (size_t i = 0; i < cfg->n_mounts; i++) {
		const struct nsrun_mount *m = &cfg->mounts[i];
		if (m->propagation && mount("none", m->destination, NULL, m->propagation, NULL) < 0)
			return error_set(err, errno, "mounts[]: set the propagation of the bind mount at %s",
					 m->destination);
	}
	return 0;
}
