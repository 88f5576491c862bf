/* mount_sources.c - the supervisor's side of the mount plan (see mount.h): the
 * sources of binds checked and opened before clone, and the image's idmapped tree.
 *
 * Kernel references: open_tree(2), mount_setattr(2) (MOUNT_ATTR_IDMAP),
 * openat2(2).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "diagnose.h"
#include "etc_files.h"
#include "mount.h"
#include "mount_internal.h"
#include "sys.h"

/* ---- supervisor side ---- */

static int stat_source(const char *what, const char *path, const struct nsrun_mount *m, bool want_dir,
		       bool any_type, struct mount_source *s, struct nsrun_error *err)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return error_set(err, errno, "%s \"%s\"", what, path);
	/* the object -v resolved to (config_add_volume), not what a link swapped in since leads to */
	if (m && m->pinned && (st.st_dev != m->dev || st.st_ino != m->ino))
		return error_set(err, EXDEV, "%s \"%s\" changed while nsrun was starting", what, path);
	if (want_dir && !S_ISDIR(st.st_mode))
		return error_set(err, ENOTDIR, "%s \"%s\"", what, path);
	if (!any_type && !want_dir && !S_ISREG(st.st_mode))
		return error_set(err, S_ISDIR(st.st_mode) ? EISDIR : EINVAL, "%s \"%s\"", what, path);
	if (any_type && !S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		return error_set(err, 0, "%s \"%s\": not a directory or regular file", what, path);
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	s->is_dir = S_ISDIR(st.st_mode);
	s->tree_fd = -1;
	return 0;
}

/* Makes every mount of the detached tree fd private (mount_setattr(2)
 * propagation).  A clone of a shared mount is in that mount's peer group
 * (open_tree(2), mount_namespaces(7)): what the container then mounted on it
 * (its /proc, /dev, /tmp) appeared on the host beneath the source and stayed
 * after the run, and pivot_root(2) refused the shared root (EINVAL).
 * Returns 0 or -1 with errno (ENOSYS: before Linux 5.12). */
static int make_tree_private(int fd)
{
	struct mount_attr attr = { .propagation = MS_PRIVATE };

	return (int)syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof(attr));
}

/* Root only: a detached, private copy of path's mount tree with the attributes
 * set, made in the supervisor's namespace (open_tree needs CAP_SYS_ADMIN there).
 * With may_decline, no such capability (EPERM), no open_tree (ENOSYS) or a
 * kernel that cannot make the clone private (ENOSYS, before 5.12) returns 1 and
 * keeps nothing.  Returns 0, 1, or -1 with err. */
static int open_tree_privileged(const char *what, const char *path, unsigned long ms, bool may_decline,
				struct mount_source *s, struct nsrun_error *err)
{
	_cleanup_close_ int fd = mount_sys_open_tree(AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
					       AT_RECURSIVE | AT_SYMLINK_NOFOLLOW);
	struct stat st;

	if (fd < 0 && may_decline && sys_call_refused(errno))
		return 1;
	if (fd < 0)
		return error_set(err, errno, "%s \"%s\": open_tree", what, path);
	if (fstat(fd, &st) < 0 || st.st_dev != s->dev || st.st_ino != s->ino)
		return error_set(err, EXDEV, "%s \"%s\" changed while nsrun was starting", what, path);
	if (make_tree_private(fd) < 0) {
		/* a kernel that cannot make the clones private (before 5.12): the
		 * container clones them, from its namespace made private first (the
		 * clone closed here unmounts: only there is a grace period waited for) */
		if (may_decline && errno == ENOSYS)
			return 1;
		return error_set(err, errno, "%s \"%s\": mount_setattr", what, path);
	}
	if (mount_set_attrs(fd, true, mount_attrs_of(ms)) < 0)
		return error_set(err, errno, "%s \"%s\": mount_setattr", what, path);
	s->tree_fd = steal_fd(&fd);
	return 0;
}

int mount_idmap_rootfs(const struct mount_sources *src, long n, const char *why, struct nsrun_error *err)
{
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_IDMAP };
	_cleanup_close_ int userns = -1;
	char path[64];

	if (src->rootfs.tree_fd < 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%ld/ns/user", n);
	userns = open(path, O_RDONLY | O_CLOEXEC);
	if (userns < 0)
		return error_set_stage(err, STAGE_ID_MAPS, errno, "open %s", path);
	attr.userns_fd = (__u64)userns;
	if (syscall(SYS_mount_setattr, src->rootfs.tree_fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr,
		    sizeof(attr)) < 0) {
		error_set_stage(err, STAGE_ID_MAPS, errno, "%s: map the image's ids onto the container's (an "
				"idmapped mount of the rootfs)", why);
		err->hint = "the image's file system must support idmapped mounts (ext4, xfs, btrfs, tmpfs "
			    "since Linux 6.3), or run nsrun as an unprivileged user with an image of its own";
		return -1;
	}
	return 0;
}

/* Is the mount point of op present in the image, with the right type?  In
 * place (an OCI root.readonly false), one that is missing is made now, by the
 * caller, as runc makes them: the container's root may not write where its
 * engine's maps put root.path's owner out of reach. */
static int check_target(int rootfs_fd, const struct mount_op *op, bool want_dir, bool in_place,
			struct mount_plan *plan, struct nsrun_error *err)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	if (!op->in_image || op->kind == MOP_ROOTFS)
		return 0;
	/* nsrun's /etc files replace a symlink of the image, never follow it */
	fd = open_in_root(rootfs_fd, op->target, O_PATH | (op->kind == MOP_ETC_FILE ? O_NOFOLLOW : 0));
	if (fd < 0) {
		if (errno == ENOENT && op->create != CREATE_NONE && in_place)
			return mount_make_mount_point(rootfs_fd, op->target, op->create, err);
		if (errno == ENOENT && op->create != CREATE_NONE) {
			plan->needs_overlay = true;
			return 0;
		}
		return error_set(err, errno, "mount point \"%s\" in the image", op->target);
	}
	if (fstat(fd, &st) < 0)
		return error_set(err, errno, "mount point \"%s\" in the image", op->target);
	if (op->kind == MOP_ETC_FILE && S_ISLNK(st.st_mode)) {
		plan->needs_overlay = true;
		return 0;
	}
	if (want_dir != !!S_ISDIR(st.st_mode))
		return error_set(err, want_dir ? ENOTDIR : EISDIR, "mount point \"%s\" in the image",
				 op->target);
	return 0;
}

int mount_prepare_sources(const struct nsrun_config *cfg, struct mount_plan *plan,
			  bool privileged, struct mount_sources *out, struct nsrun_error *err)
{
	_cleanup_close_ int rootfs_fd = -1;

	memset(out, 0, sizeof(*out));
	out->rootfs.tree_fd = -1;
	if (stat_source("rootfs", cfg->rootfs, NULL, true, false, &out->rootfs, err) < 0)
		return -1;
	out->mounts = calloc(cfg->n_mounts ? cfg->n_mounts : 1, sizeof(*out->mounts));
	if (!out->mounts)
		return error_set(err, ENOMEM, "mount sources");
	out->n = cfg->n_mounts;
	for (size_t i = 0; i < cfg->n_mounts; i++)
		out->mounts[i].tree_fd = -1;
	for (size_t i = 0; i < cfg->n_mounts; i++) {
		const struct nsrun_mount *m = &cfg->mounts[i];
		if (stat_source(m->is_file_arg ? "file" : "volume", m->source, m, false, !m->is_file_arg,
				&out->mounts[i], err) < 0)
			return -1;
	}
	rootfs_fd = open(cfg->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfs_fd < 0)
		return error_set(err, errno, "rootfs \"%s\"", cfg->rootfs);
	for (size_t i = 0; i < plan->n; i++) {
		struct mount_op *op = &plan->ops[i];
		bool want_dir = op->kind == MOP_BIND ? out->mounts[op->source_index].is_dir : op->kind != MOP_ETC_FILE;
		/* a mount point that may be made takes the type of its source */
		if (op->kind == MOP_BIND && op->create != CREATE_NONE)
			op->create = want_dir ? CREATE_DIR : CREATE_FILE;
		if (check_target(rootfs_fd, op, want_dir, cfg->rootfs_in_place, plan, err) < 0)
			return -1;
	}
	if (!privileged)
		return 0;
	/* root of a user namespace (unshare -r) has no CAP_SYS_ADMIN over the host's
	 * mounts: then the container clones the trees itself, as for any user.  The
	 * rootfs's own open_tree tells (no probe first: closing a probe's detached
	 * tree unmounts it, which waits for an RCU grace period, namespace_unlock in
	 * fs/namespace.c) */
	switch (open_tree_privileged("rootfs", cfg->rootfs, cfg->rootfs_in_place ? 0 : MS_RDONLY, true, &out->rootfs,
				     err)) {
	case 1:
		return 0;
	case 0:
		break;
	default:
		return -1;
	}
	for (size_t i = 0; i < plan->n; i++) {
		const struct mount_op *op = &plan->ops[i];
		if (op->kind != MOP_BIND)
			continue;
		const struct nsrun_mount *m = &cfg->mounts[op->source_index];
		if (open_tree_privileged(m->is_file_arg ? "file" : "volume", m->source, op->flags, false,
					 &out->mounts[op->source_index], err) < 0)
			return -1;
	}
	return 0;
}

void mount_sources_close(struct mount_sources *src)
{
	if (src->rootfs.tree_fd >= 0)
		close(src->rootfs.tree_fd);
	src->rootfs.tree_fd = -1;
	for (size_t i = 0; i < src->n; i++) {
		if (src->mounts[i].tree_fd >= 0)
			close(src->mounts[i].tree_fd);
	}
	free(src->mounts);
	src->mounts = NULL;
	src->n = 0;
}

