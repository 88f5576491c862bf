/* mount.c - see mount.h.
 *
 * Kernel references: mount_namespaces(7) (propagation, locked mounts in user
 * namespaces), pivot_root(2) ("pivot_root(".", ".")"), open_tree(2), move_mount(2),
 * mount_setattr(2), openat2(2) (RESOLVE_IN_ROOT keeps symlinks of the image inside it).
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

#define STAGING "/tmp"          /* host path over which the staging tmpfs is mounted, in our namespace only */
#define NEWROOT STAGING "/root"

int mount_sys_open_tree(int dfd, const char *path, unsigned flags)
{
	return (int)syscall(SYS_open_tree, dfd, path, flags);
}

static int sys_move_mount(int from_dfd, const char *from, int to_dfd, const char *to, unsigned flags)
{
	return (int)syscall(SYS_move_mount, from_dfd, from, to_dfd, to, flags);
}

static int sys_mount_setattr(int dfd, const char *path, unsigned flags, uint64_t set)
{
	struct mount_attr attr = { .attr_set = set };
	return (int)syscall(SYS_mount_setattr, dfd, path, flags, &attr, sizeof(attr));
}

uint64_t mount_attrs_of(unsigned long ms)
{
	return MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | ((ms & MS_RDONLY) ? MOUNT_ATTR_RDONLY : 0);
}

/* The MS_* flags a mount already has (statfs(2) f_flags): a bind remount in a
 * user namespace must repeat the locked ones or the kernel refuses it with EPERM
 * (mount_namespaces(7), "locked mounts"). */
static unsigned long existing_flags(int fd)
{
	struct statfs sfs;
	unsigned long f = 0;

	if (fstatfs(fd, &sfs) < 0)
		return 0;
	f |= (sfs.f_flags & ST_NOSUID) ? MS_NOSUID : 0;
	f |= (sfs.f_flags & ST_NODEV) ? MS_NODEV : 0;
	f |= (sfs.f_flags & ST_NOEXEC) ? MS_NOEXEC : 0;
	f |= (sfs.f_flags & ST_NOATIME) ? MS_NOATIME : 0;
	f |= (sfs.f_flags & ST_NODIRATIME) ? MS_NODIRATIME : 0;
	f |= (sfs.f_flags & ST_RELATIME) ? MS_RELATIME : 0;
	f |= (sfs.f_flags & ST_RDONLY) ? MS_RDONLY : 0;
	return f;
}

/* Sets attrs (MOUNT_ATTR_*) on the mount fd refers to, with mount_setattr(2) or,
 * where the kernel (before 5.12), valgrind or an outer filter lacks it, a bind remount keeping the
 * mount's other flags.  Returns 0 or -1 with errno. */
int mount_set_attrs(int fd, bool recursive, uint64_t attrs)
{
	char path[64];
	unsigned long ms = 0;

	if (sys_mount_setattr(fd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), attrs) == 0)
		return 0;
	/* EPERM: an outer filter's (in our own mount namespace we may remount) */
	if (!sys_call_refused(errno))
		return -1;
	ms |= (attrs & MOUNT_ATTR_RDONLY) ? MS_RDONLY : 0;
	ms |= (attrs & MOUNT_ATTR_NOSUID) ? MS_NOSUID : 0;
	ms |= (attrs & MOUNT_ATTR_NODEV) ? MS_NODEV : 0;
	ms |= (attrs & MOUNT_ATTR_NOEXEC) ? MS_NOEXEC : 0;
	fd_path(path, sizeof(path), fd);
	return mount("none", path, "none", MS_REMOUNT | MS_BIND | ms | existing_flags(fd), NULL);
}

/* ---- container side ---- */

/* Whether a detached tree can be set up and attached here: move_mount(2) and
 * mount_setattr(2) are there (5.2, 5.12) and no outer filter refuses them.  Each is
 * called with arguments the kernel refuses on their own (EINVAL, ENOENT): ENOSYS or
 * EPERM (we hold CAP_SYS_ADMIN in our mount namespace) can only be the kernel's
 * lack or a filter's.  A kernel of 5.2 to 5.11 has open_tree but no
 * mount_setattr, and a detached tree cannot be remounted (EINVAL): every run
 * failed there. */
static bool new_mount_api(void)
{
	if (sys_move_mount(-1, "", -1, "", 0) < 0 && sys_call_refused(errno))
		return false;
	/* with the flags a detached tree gets (source_tree): a filter that refuses only
	 * AT_RECURSIVE left no way to set them, a detached tree cannot be remounted */
	if (syscall(SYS_mount_setattr, -1, "", AT_EMPTY_PATH | AT_RECURSIVE, NULL, 0) < 0 && sys_call_refused(errno))
		return false;
	return true;
}

/* A detached copy of the mount tree at path (open_tree(2) OPEN_TREE_CLONE,
 * recursive; at_flags added, e.g. AT_SYMLINK_NOFOLLOW), ready for attach_tree.
 * Where the kernel (before 5.2), valgrind or an outer filter has no open_tree, or
 * no move_mount or mount_setattr (new_mount_api): an O_PATH fd of path (o_flags
 * added, e.g. O_NOFOLLOW), to be bound, and *legacy set.
 * Returns the fd, or -1 with errno. */
static int clone_tree(const char *path, unsigned at_flags, int o_flags, bool *legacy)
{
	int fd = new_mount_api() ?
		 mount_sys_open_tree(AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | at_flags) :
		 (errno = ENOSYS, -1);

	*legacy = false;
	if (fd < 0 && sys_call_refused(errno)) {
		*legacy = true;
		fd = open(path, O_PATH | O_CLOEXEC | o_flags);
	}
	return fd;
}

/* A detached tree of source, ready to attach: the supervisor's, or one cloned here
 * by path and checked against the identity the supervisor saw.  Where the kernel
 * (before 5.2) or valgrind has no open_tree, an O_PATH fd opened here (in the
 * container's mount namespace, so it can be bound) and *legacy set. */
static int source_tree(const char *what, const char *path, const struct mount_source *s,
		       unsigned long ms, bool *legacy, struct nsrun_error *err)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	if (s->tree_fd >= 0)
		return s->tree_fd;
	fd = clone_tree(path, AT_SYMLINK_NOFOLLOW, O_NOFOLLOW, legacy);
	if (fd < 0)
		return error_set(err, errno, "%s \"%s\": open_tree", what, path);
	if (fstat(fd, &st) < 0 || st.st_dev != s->dev || st.st_ino != s->ino)
		return error_set(err, EXDEV, "%s \"%s\" changed while nsrun was starting", what, path);
	if (!*legacy && mount_set_attrs(fd, true, mount_attrs_of(ms)) < 0)
		return error_set(err, errno, "%s \"%s\": mount_setattr", what, path);
	return steal_fd(&fd);
}

/* Attaches a tree (or, legacy, binds the O_PATH fd) at the path `to` or at the
 * mount point to_fd. A legacy bind gets its attributes from the caller. */
static int attach_tree(int tree_fd, bool legacy, const char *to, int to_fd, struct nsrun_error *err,
		       const char *what)
{
	char src[64], dst[64] = "";

	if (!legacy) {
		if (sys_move_mount(tree_fd, "", to_fd, to_fd >= 0 ? "" : to,
				   MOVE_MOUNT_F_EMPTY_PATH | (to_fd >= 0 ? MOVE_MOUNT_T_EMPTY_PATH : 0)) < 0)
			return error_set(err, errno, "attach %s", what);
		return 0;
	}
	fd_path(src, sizeof(src), tree_fd);
	if (to_fd >= 0)
		fd_path(dst, sizeof(dst), to_fd);
	if (mount(src, to_fd >= 0 ? dst : to, "none", MS_BIND | MS_REC, NULL) < 0)
		return error_set(err, errno, "bind %s", what);
	return 0;
}

/* The sources of a run in the container: [i] for cfg->mounts[i], [n_mounts] the rootfs. */
struct source_trees {
	int fd[NSRUN_MAX_MOUNTS + 1];
	bool legacy[NSRUN_MAX_MOUNTS + 1];     /* an O_PATH fd to bind, not a detached tree */
};

int mount_make_mount_point(int root_fd, const char *path, enum mount_create create, struct nsrun_error *err)
{
	char buf[PATH_MAX];
	char *p;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = buf + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		_cleanup_close_ int fd = open_in_root(root_fd, buf, O_PATH);
		if (fd < 0) {
			char *slash = strrchr(buf, '/');
			_cleanup_close_ int parent = -1;
			*slash = '\0';
			parent = open_in_root(root_fd, buf[0] ? buf : "/", O_PATH | O_DIRECTORY);
			*slash = '/';
			if (parent < 0 || (mkdirat(parent, slash + 1, 0755) < 0 && errno != EEXIST))
				return error_set(err, errno, "make mount point \"%s\"", buf);
		}
		*p = '/';
	}
	{
		char *slash = strrchr(buf, '/');
		_cleanup_close_ int parent = -1;
		*slash = '\0';
		parent = open_in_root(root_fd, buf[0] ? buf : "/", O_PATH | O_DIRECTORY);
		if (parent < 0)
			return error_set(err, errno, "make mount point \"%s\"", path);
		if (create == CREATE_DIR) {
			if (mkdirat(parent, slash + 1, 0755) < 0 && errno != EEXIST)
				return error_set(err, errno, "make mount point \"%s\"", path);
		} else {
			int fd = openat(parent, slash + 1, O_CREAT | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0444);
			if (fd < 0 && errno != EEXIST)
				return error_set(err, errno, "make mount point \"%s\"", path);
			if (fd >= 0)
				close(fd);
		}
	}
	return 0;
}

/* Opens the mount point of op in the new root, making it where the plan allows. */
static int open_target(int root_fd, const struct mount_op *op, bool overlay, struct nsrun_error *err)
{
	/* a mount point inside a volume: the volume's links may have been written by an
	 * earlier payload, to move this mount over /proc, /dev or /: none is followed */
	bool in_volume = !op->in_image && op->create == CREATE_NONE;
	int fd = in_volume ? open_in_root_nofollow(root_fd, op->target, O_PATH) : open_in_root(root_fd, op->target, O_PATH);

	if (fd >= 0 || errno != ENOENT)
		goto out;
	if (op->create == CREATE_NONE || (op->in_image && !overlay))
		goto out;
	if (mount_make_mount_point(root_fd, op->target, op->create, err) < 0)
		return -1;
	fd = open_in_root(root_fd, op->target, O_PATH);
out:
	if (fd < 0)
		return error_set(err, errno, "mount point \"%s\"", op->target);
	return fd;
}

static int mount_on_fd(const char *source, int fd, const char *fstype, unsigned long flags,
		       const char *data, const char *target, struct nsrun_error *err)
{
	char path[64];

	fd_path(path, sizeof(path), fd);
	if (mount(source, path, fstype, flags, data) < 0)
		return error_set(err, errno, "mount %s on \"%s\"", strcmp(fstype, "none") ? fstype : source, target);
	return 0;
}

/* A tmpfs with tmpcopyup: the directory it covers is opened first (its tree stays
 * readable through that fd), then the tmpfs is mounted and the tree copied into it,
 * found by its path as the top mount there.  Returns 0 or -1 with err. */
static int mount_tmpfs_copy_up(int root_fd, int target, const struct mount_op *op, struct nsrun_error *err)
{
	_cleanup_close_ int below = openat(target, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int top = -1;

	if (below < 0)
		return error_set(err, errno, "tmpcopyup \"%s\": open what the tmpfs covers", op->target);
	if (mount_on_fd("tmpfs", target, "tmpfs", op->flags, op->data, op->target, err) < 0)
		return -1;
	top = open_in_root(root_fd, op->target, O_RDONLY | O_DIRECTORY);
	if (top < 0)
		return error_set(err, errno, "tmpcopyup \"%s\": open the tmpfs", op->target);
	return mount_copy_up(below, top, op->target, err);
}

static int setattr_path(int root_fd, const char *target, uint64_t attrs, struct nsrun_error *err)
{
	_cleanup_close_ int fd = open_in_root(root_fd, target, O_PATH);

	if (fd < 0 || mount_set_attrs(fd, false, attrs) < 0)
		return error_set(err, errno, "make \"%s\" read-only", target);
	return 0;
}

/* the first four are needed; full and tty are left out (with a warning) where the host lacks them */
static const char *const dev_nodes[] = { "null", "zero", "random", "urandom", "full", "tty" };

/* --allow-nested: a container inside this one must mount its own proc, and the
 * kernel allows that to a user namespace only while a proc it can see reveals as
 * much as the new one (mount_too_revealing() in fs/namespace.c): the masks over
 * our /proc forbid it.  So a second, unmasked proc of the container's pid
 * namespace is mounted at /dev/.nsrun/proc and /dev/.nsrun is covered by an empty
 * read-only tmpfs: the kernel still counts the proc (it has no mount of its own
 * on it), the payload cannot reach it, and in the payload's namespaces the cover
 * is locked (mount_namespaces(7)): it cannot be lifted. */
static int nested_proc(int dev, struct nsrun_error *err)
{
	_cleanup_close_ int dir = -1, proc = -1;

	if (mkdirat(dev, ".nsrun", 0755) < 0 || (dir = openat(dev, ".nsrun", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    mkdirat(dir, "proc", 0555) < 0 || (proc = openat(dir, "proc", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return error_set(err, errno, "make /dev/.nsrun/proc for --allow-nested");
	if (mount_on_fd("proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL, "/dev/.nsrun/proc", err) < 0)
		return -1;
	return mount_on_fd("tmpfs", dir, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=000,size=0",
			   "/dev/.nsrun", err);
}

static int build_dev(int root_fd, const struct mount_op *op, const struct nsrun_config *cfg,
		     struct nsrun_error *err)
{
	_cleanup_close_ int target = open_target(root_fd, op, false, err);
	_cleanup_close_ int dev = -1;
	char shm_data[96];

	if (target < 0)
		return -1;
	if (mount_on_fd("tmpfs", target, "tmpfs", op->flags, op->data, "/dev", err) < 0)
		return -1;
	dev = open_in_root(root_fd, "/dev", O_PATH | O_DIRECTORY);
	if (dev < 0)
		return error_set(err, errno, "open /dev");
	for (size_t i = 0; i < sizeof(dev_nodes) / sizeof(dev_nodes[0]); i++) {
		char host[32];
		struct stat st;
		snprintf(host, sizeof(host), "/dev/%s", dev_nodes[i]);
		/* a user namespace cannot mknod: nodes are bound from the host's /dev.  An outer
		 * sandbox's /dev may lack full or tty: the container then lacks it too, with a
		 * warning; the others are needed by almost every program: an error */
		int e = stat(host, &st) < 0 ? errno : !S_ISCHR(st.st_mode) ? ENODEV : 0;
		if (e) {
			if (i >= 4 && !cfg->security.strict) {
				dprintf(2, "nsrun: warning: the container has no %s: nsrun's own %s: %s\n", host, host,
					e == ENODEV ? "not a character device" : strerror(e));
				continue;
			}
			error_set(err, e, "bind the host's %s into the container: it is missing or "
				  "not a character device", host);
			err->hint = "a user namespace cannot create device nodes: give nsrun a /dev that has null, zero, "
				    "full, random, urandom and tty (bwrap: --dev /dev)";
			return -1;
		}
		_cleanup_close_ int node = openat(dev, dev_nodes[i], O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666);
		if (node < 0)
			return error_set(err, errno, "create /dev/%s", dev_nodes[i]);
		if (mount_on_fd(host, node, "none", MS_BIND, NULL, host, err) < 0)
			return -1;
	}
	if (mkdirat(dev, "pts", 0755) < 0 || mkdirat(dev, "shm", 01777) < 0)
		return error_set(err, errno, "make /dev/pts and /dev/shm");
	{
		_cleanup_close_ int pts = openat(dev, "pts", O_PATH | O_DIRECTORY | O_CLOEXEC);
		_cleanup_close_ int shm = openat(dev, "shm", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (pts < 0 || shm < 0)
			return error_set(err, errno, "open /dev/pts");
		if (mount_on_fd("devpts", pts, "devpts", MS_NOSUID | MS_NOEXEC,
				"newinstance,ptmxmode=0666,mode=0620", "/dev/pts", err) < 0)
			return -1;
		snprintf(shm_data, sizeof(shm_data), "mode=1777,size=%llu,nr_inodes=%llu",
			 (unsigned long long)cfg->limits.tmpfs_bytes, NSRUN_TMPFS_INODES(cfg->limits.tmpfs_bytes));
		if (mount_on_fd("shm", shm, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, shm_data, "/dev/shm",
				err) < 0)
			return -1;
	}
	if (symlinkat("pts/ptmx", dev, "ptmx") < 0 || symlinkat("/proc/self/fd", dev, "fd") < 0 ||
	    symlinkat("/proc/self/fd/0", dev, "stdin") < 0 || symlinkat("/proc/self/fd/1", dev, "stdout") < 0 ||
	    symlinkat("/proc/self/fd/2", dev, "stderr") < 0)
		return error_set(err, errno, "make the /dev links");
	if (cfg->security.allow_nested && nested_proc(dev, err) < 0)
		return -1;
	if (mount_devices(dev, cfg, err) < 0)
		return -1;
	/* read-only after it is populated; /dev/pts and /dev/shm are separate mounts and stay writable */
	return setattr_path(root_fd, "/dev", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, err);
}

/* An OCI config's bind, attached at the mount point target: replaced by a clone of
 * itself made now, so that its mounts are created after the config's earlier ones.
 * The tree was cloned by the supervisor before the container's other mounts were
 * made, and /proc/PID/mountinfo lists a namespace's mounts in the order they were
 * created (Linux 6.8 and later keep them sorted by their unique id), where
 * runtime-tools and runc's callers look for config.md's "listed order".  The
 * clone has the same flags (open_tree(2) OPEN_TREE_CLONE).  Returns 0 or -1 with err. */
static int reclone_here(int root_fd, const struct mount_op *op, int target, struct nsrun_error *err)
{
	/* resolved as open_target resolved the mount point: its top is the bind */
	bool in_volume = !op->in_image && op->create == CREATE_NONE;
	_cleanup_close_ int top = in_volume ? open_in_root_nofollow(root_fd, op->target, O_PATH) :
					      open_in_root(root_fd, op->target, O_PATH);
	_cleanup_close_ int tree = -1;
	char path[64];

	if (top < 0)
		return error_set(err, errno, "bind \"%s\": open it to clone it", op->target);
	tree = mount_sys_open_tree(top, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
	if (tree < 0)
		return error_set(err, errno, "bind \"%s\": clone it in the container", op->target);
	fd_path(path, sizeof(path), top);
	if (umount2(path, MNT_DETACH) < 0)
		return error_set(err, errno, "bind \"%s\": detach the supervisor's clone", op->target);
	return attach_tree(tree, false, NULL, target, err, op->target);
}

/* nsrun's /etc/hosts or /etc/hostname (etc_files.h): written into the staging
 * tmpfs, which only this namespace sees, and bound read-only onto the image's
 * regular file or the one the plan made.  The payload cannot lift the flag: the
 * mount belongs to a user namespace it has no capability in (mount_namespaces(7)). */
static int mount_etc_file(int root_fd, const struct mount_op *op, const struct nsrun_config *cfg, bool overlay,
			  struct nsrun_error *err)
{
	char name[32], src[64];
	_cleanup_close_ int staging = open(STAGING, O_PATH | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int target = -1;
	struct stat st;

	snprintf(name, sizeof(name), "etc-%s", strrchr(op->target, '/') + 1);
	if (staging < 0)
		return error_set(err, errno, "open %s", STAGING);
	if (etc_file_write(cfg, op->target, staging, name, err) < 0)
		return -1;
	/* a root written in place (OCI root.readonly false) keeps the caller's link:
	 * the file it leads to, resolved inside the root, is covered instead */
	target = open_in_root(root_fd, op->target, O_PATH | (cfg->rootfs_in_place ? 0 : O_NOFOLLOW));
	if (target < 0 && errno == ENOENT && op->create != CREATE_NONE && (!op->in_image || overlay)) {
		if (mount_make_mount_point(root_fd, op->target, op->create, err) < 0)
			return -1;
		target = open_in_root(root_fd, op->target, O_PATH | O_NOFOLLOW);
	}
	if (target < 0 || fstat(target, &st) < 0)
		return error_set(err, errno, "mount point \"%s\"", op->target);
	if (!S_ISREG(st.st_mode))
		return error_set(err, S_ISDIR(st.st_mode) ? EISDIR : EINVAL, "mount point \"%s\": not a regular file",
				 op->target);
	snprintf(src, sizeof(src), STAGING "/%s", name);
	if (mount_on_fd(src, target, "none", MS_BIND, NULL, op->target, err) < 0)
		return -1;
	return setattr_path(root_fd, op->target, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOEXEC | mount_attrs_of(0), err);
}

static int apply_op(int root_fd, const struct mount_op *op, const struct nsrun_config *cfg,
		    const struct mount_plan *plan, const struct source_trees *trees, struct nsrun_error *err)
{
	_cleanup_close_ int target = -1;

	switch (op->kind) {
	case MOP_ROOTFS:
		return 0; /* done by build_rootfs */
	case MOP_DEV:
		return build_dev(root_fd, op, cfg, err);
	case MOP_REMOUNT_RO:
		return setattr_path(root_fd, op->target, MOUNT_ATTR_RDONLY | mount_attrs_of(0), err);
	case MOP_ETC_FILE:
		return mount_etc_file(root_fd, op, cfg, plan->needs_overlay, err);
	case MOP_MASK_FILE:
	case MOP_MASK_DIR:
	case MOP_READONLY:
		/* after the volumes: a link a payload wrote in one must not move a mask
		 * elsewhere (leaving the path it names unmasked), so no link is followed */
		target = open_in_root_nofollow(root_fd, op->target, O_PATH);
		if (target < 0)
			return errno == ENOENT ? 0 : error_set(err, errno, "open \"%s\" (a mask or read-only path: "
							       "no symlink is followed)", op->target);
		break;
	case MOP_PROC:
	case MOP_TMPFS:
	case MOP_BIND:
	case MOP_WORKDIR:
		target = open_target(root_fd, op, plan->needs_overlay, err);
		if (target < 0)
			return -1;
		break;
	}
	switch (op->kind) {
	case MOP_PROC:
		/* EPERM here is most often an outer /proc with masked paths: the supervisor's
		 * diag_refine() names them (diagnose.h) */
		return mount_on_fd("proc", target, "proc", op->flags, NULL, op->target, err);
	case MOP_TMPFS:
		if (op->copy_up)
			return mount_tmpfs_copy_up(root_fd, target, op, err);
		return mount_on_fd("tmpfs", target, "tmpfs", op->flags, op->data, op->target, err);
	case MOP_MASK_DIR:
		return mount_on_fd("tmpfs", target, "tmpfs", op->flags, "mode=0555,size=0", op->target, err);
	case MOP_MASK_FILE: {
		struct stat st;
		if (fstat(target, &st) == 0 && S_ISDIR(st.st_mode))
			return mount_on_fd("tmpfs", target, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV,
					   "mode=0555,size=0", op->target, err);
		return mount_on_fd("/dev/null", target, "none", MS_BIND, NULL, op->target, err);
	}
	case MOP_READONLY: {
		char self[64];
		fd_path(self, sizeof(self), target);
		if (mount(self, self, "none", MS_BIND | MS_REC, NULL) < 0)
			return error_set(err, errno, "bind \"%s\" onto itself", op->target);
		return setattr_path(root_fd, op->target, MOUNT_ATTR_RDONLY | mount_attrs_of(0), err);
	}
	case MOP_BIND:
		if (attach_tree(trees->fd[op->source_index], trees->legacy[op->source_index], NULL, target, err,
				op->target) < 0)
			return -1;
		if (trees->legacy[op->source_index])
			return setattr_path(root_fd, op->target, mount_attrs_of(op->flags), err);
		if (cfg->mounts[op->source_index].listed)
			return reclone_here(root_fd, op, target, err);
		return 0;
	default:
		return 0;
	}
}

/* The canonical path inside lower_fd's tree of the longest existing prefix of
 * path (symlinks of the image resolved inside it, but for the last component
 * with nofollow_last), and the rest of path.
 * Returns 0 or -1 with err. */
static int split_existing(int lower_fd, const char *path, bool nofollow_last, char *canon, size_t clen,
			  const char **rest, struct nsrun_error *err)
{
	char prefix[PATH_MAX], link[64], real[PATH_MAX];
	const char *p = path, *done = path;
	_cleanup_close_ int fd = -1;
	ssize_t n;

	snprintf(canon, clen, "/");
	for (;;) {
		const char *seg = p + 1;
		const char *end = strchrnul(seg, '/');
		if (!*seg)
			break;
		snprintf(prefix, sizeof(prefix), "%.*s", (int)(end - path), path);
		int f = open_in_root(lower_fd, prefix, O_PATH | (nofollow_last && !*end ? O_NOFOLLOW : 0));
		if (f < 0)
			break;
		if (fd >= 0)
			close(fd);
		fd = f;
		done = end;
		p = end;
		if (!*end)
			break;
	}
	*rest = done;
	if (fd < 0)
		return 0;
	fd_path(link, sizeof(link), fd);
	n = readlink(link, real, sizeof(real) - 1);
	if (n < 0)
		return error_set(err, errno, "resolve \"%s\" in the image", path);
	real[n] = '\0';
	if (strncmp(real, STAGING "/lower", strlen(STAGING "/lower")) != 0)
		return error_set(err, EXDEV, "\"%s\" leads out of the image", path);
	snprintf(canon, clen, "%s", real[strlen(STAGING "/lower")] ? real + strlen(STAGING "/lower") : "/");
	return 0;
}

/* Makes the mount point of path in the overlay's upper layer (our tmpfs), before
 * the overlay is mounted: the directories of the image above it are owned by ids
 * that are not mapped here, so it could not be made through the overlay.  The
 * upper copies of existing directories keep the image's modes.  With shadow_link
 * a symlink of the image at path is hidden by the new file, not followed. */
static int populate_upper(int lower_fd, int upper_fd, const char *path, enum mount_create create,
			  bool shadow_link, struct nsrun_error *err)
{
	char canon[PATH_MAX], full[PATH_MAX];
	const char *rest;
	size_t base;

	if (split_existing(lower_fd, path, shadow_link, canon, sizeof(canon), &rest, err) < 0)
		return -1;
	snprintf(full, sizeof(full), "%s%s", strcmp(canon, "/") ? canon : "", rest);
	base = strlen(strcmp(canon, "/") ? canon : "");
	for (char *p = full + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		struct stat st;
		_cleanup_close_ int lf = (size_t)(p - full) <= base ? open_in_root(lower_fd, full, O_PATH) : -1;
		mode_t mode = (lf >= 0 && fstat(lf, &st) == 0) ? (st.st_mode & 07777) : 0755;
		if (lf >= 0 && !S_ISDIR(st.st_mode))
			return error_set(err, ENOTDIR, "mount point \"%s\": \"%s\" in the image", path, full);
		if (mkdirat(upper_fd, full + 1, mode) < 0 && errno != EEXIST)
			return error_set(err, errno, "make mount point \"%s\"", path);
		*p = '/';
	}
	if (create == CREATE_DIR) {
		if (mkdirat(upper_fd, full + 1, 0755) < 0 && errno != EEXIST)
			return error_set(err, errno, "make mount point \"%s\"", path);
	} else {
		int fd = openat(upper_fd, full + 1, O_CREAT | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0444);
		if (fd < 0)
			return error_set(err, errno, "make mount point \"%s\"", path);
		close(fd);
	}
	return 0;
}

/* An overlay over the image whose upper layer holds the mount points it lacks,
 * so nsrun never writes into an image (overlayfs(5): "userxattr" for a mount in
 * a user namespace). */
static int mount_overlay_root(const struct nsrun_config *cfg, const struct mount_plan *plan, int tree, bool legacy,
			      struct nsrun_error *err)
{
	_cleanup_close_ int lower = -1;
	_cleanup_close_ int upper = -1;
	char size[96];

	if (mkdir(STAGING "/lower", 0755) < 0 || mkdir(STAGING "/rw", 0755) < 0)
		return error_set(err, errno, "make the overlay directories");
	/* --read-only=false: the writes of the payload go to a tmpfs of their own,
	 * --tmpfs-size at most, which ends with the mount namespace */
	snprintf(size, sizeof(size), "mode=0755,size=%llu,nr_inodes=%llu",
		 (unsigned long long)(cfg->rootfs_writable ? cfg->limits.tmpfs_bytes : 1ULL << 20),
		 NSRUN_TMPFS_INODES(cfg->rootfs_writable ? cfg->limits.tmpfs_bytes : 1ULL << 20));
	if (cfg->rootfs_writable &&
	    mount("nsrun-root", STAGING "/rw", "tmpfs", MS_NOSUID | MS_NODEV, size) < 0)
		return error_set(err, errno, "mount the tmpfs of the writable root");
	if (mkdir(STAGING "/rw/upper", 0755) < 0 || mkdir(STAGING "/rw/work", 0755) < 0)
		return error_set(err, errno, "make the overlay directories");
	if (attach_tree(tree, legacy, STAGING "/lower", -1, err, "the rootfs") < 0)
		return -1;
	lower = open(STAGING "/lower", O_PATH | O_DIRECTORY | O_CLOEXEC);
	upper = open(STAGING "/rw/upper", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (lower < 0 || upper < 0)
		return error_set(err, errno, "open the overlay directories");
	for (size_t i = 0; i < plan->n; i++) {
		const struct mount_op *op = &plan->ops[i];
		_cleanup_close_ int fd = -1;
		bool etc = op->kind == MOP_ETC_FILE;
		struct stat st;
		if (!op->in_image || op->create == CREATE_NONE || op->kind == MOP_ROOTFS)
			continue;
		fd = open_in_root(lower, op->target, O_PATH | (etc ? O_NOFOLLOW : 0));
		if ((fd < 0 || (etc && fstat(fd, &st) == 0 && S_ISLNK(st.st_mode))) &&
		    populate_upper(lower, upper, op->target, op->create, etc, err) < 0)
			return -1;
	}
	if (mount("overlay", NEWROOT, "overlay", MS_NOSUID | MS_NODEV | (cfg->rootfs_writable ? 0 : MS_RDONLY),
		  "lowerdir=" STAGING "/lower,upperdir=" STAGING "/rw/upper,workdir=" STAGING "/rw/work,userxattr") < 0)
		return error_set(err, errno, "mount an overlay over the image (%s)",
				 cfg->rootfs_writable ? "--read-only=false" : "it lacks mount points");
	return 0;
}

/* The staging tmpfs, the rootfs (or an overlay over it) at NEWROOT, read-only.
 * Returns an O_PATH fd of the new root or -1. */
static int build_rootfs(const struct nsrun_config *cfg, const struct mount_plan *plan, int tree, bool legacy,
			struct nsrun_error *err)
{
	int root_fd;

	/* staging: a tmpfs over /tmp of our private copy of the host's tree, never seen outside */
	if (mount("nsrun-staging", STAGING, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700,size=1m") < 0)
		return error_set(err, errno, "mount the staging tmpfs on %s", STAGING);
	if (mkdir(NEWROOT, 0755) < 0)
		return error_set(err, errno, "mkdir %s", NEWROOT);
	if (cfg->rootfs_in_place || (!plan->needs_overlay && !cfg->rootfs_writable)) {
		/* in place (OCI root.readonly false): the tree is read-write and the
		 * missing mount points are made in it (open_target), as runc does */
		if (attach_tree(tree, legacy, NEWROOT, -1, err, "the rootfs") < 0)
			return -1;
	} else if (mount_overlay_root(cfg, plan, tree, legacy, err) < 0) {
		return -1;
	}
	root_fd = open(NEWROOT, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0)
		return error_set(err, errno, "open %s", NEWROOT);
	if (legacy && !plan->needs_overlay && !cfg->rootfs_writable &&
	    mount_set_attrs(root_fd, false, MOUNT_ATTR_RDONLY | mount_attrs_of(0)) < 0) {
		close(root_fd);
		return error_set(err, errno, "make the rootfs read-only");
	}
	return root_fd;
}

/* Detached trees of every source, in the order of cfg->mounts, taken before the
 * staging tmpfs hides the host's /tmp. trees[n] is the rootfs. */
static int open_source_trees(const struct nsrun_config *cfg, const struct mount_plan *plan,
			     const struct mount_sources *src, struct source_trees *trees, struct nsrun_error *err)
{
	size_t n = cfg->n_mounts;

	trees->fd[n] = source_tree("rootfs", cfg->rootfs, &src->rootfs, cfg->rootfs_in_place ? 0 : MS_RDONLY,
				   &trees->legacy[n], err);
	if (trees->fd[n] < 0)
		return -1;
	for (size_t i = 0; i < plan->n; i++) {
		const struct mount_op *op = &plan->ops[i];
		if (op->kind != MOP_BIND)
			continue;
		const struct nsrun_mount *m = &cfg->mounts[op->source_index];
		size_t i_src = (size_t)op->source_index;
		trees->fd[i_src] = source_tree(m->is_file_arg ? "file" : "volume", m->source, &src->mounts[i_src],
					       op->flags, &trees->legacy[i_src], err);
		if (trees->fd[i_src] < 0)
			return -1;
	}
	return 0;
}

/* pivot_root(2) refuses (EINVAL) to leave the kernel's initial rootfs, which a
 * system running from its initramfs still has as "/" (known-bugs B23).  There the
 * new root (our cwd) is moved over "/" and made the root with chroot, as
 * switch_root does; the initramfs stays beneath it, unreachable: no capability to
 * chroot is left to the payload, and the kernel does not count this root as a
 * chroot (current_chrooted() follows mounts on the namespace's root), so the
 * payload's own user namespace can still be made.  Returns 0 or -1 with err. */
static int move_root(struct nsrun_error *err)
{
	struct statfs sfs;

	if (statfs("/", &sfs) < 0 || (sfs.f_type != RAMFS_MAGIC && sfs.f_type != TMPFS_MAGIC)) {
		error_set(err, EINVAL, "pivot_root");
		err->hint = "the root is not a mount point nsrun can pivot from (is nsrun in a chroot?)";
		return -1;
	}
	if (mount(".", "/", NULL, MS_MOVE, NULL) < 0)
		return error_set(err, errno, "pivot_root failed on the initramfs root (EINVAL): move the new root over it");
	if (chroot(".") < 0 || chdir("/") < 0)
		return error_set(err, errno, "pivot_root failed on the initramfs root (EINVAL): chroot into the new root");
	return 0;
}

int mount_build_root(const struct nsrun_config *cfg, const struct mount_plan *plan,
		     const struct mount_sources *src, struct mount_host_tmp *host_tmp, struct timing *timing,
		     struct nsrun_error *err)
{
	_cleanup_close_ int root_fd = -1;
	struct source_trees trees = { .legacy = { false } };

	err->stage = STAGE_MOUNT;
	/* before anything else: nothing we mount may propagate back to the host */
	if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0)
		return errno == EPERM ? diag_mount_refused(err, "/proc") :
		       error_set(err, errno, "make mount propagation private");
	if (open_source_trees(cfg, plan, src, &trees, err) < 0)
		return -1;
	if (host_tmp) {
		host_tmp->fd = clone_tree(STAGING, 0, O_DIRECTORY, &host_tmp->legacy);
		if (host_tmp->fd < 0)
			return error_set(err, errno, "keep the host's %s for the createContainer hooks", STAGING);
	}
	root_fd = build_rootfs(cfg, plan, trees.fd[cfg->n_mounts], trees.legacy[cfg->n_mounts], err);
	if (root_fd < 0)
		return -1;
	timing_mark(timing, TP_ROOTFS);
	for (size_t i = 0; i < plan->n; i++) {
		if (apply_op(root_fd, &plan->ops[i], cfg, plan, &trees, err) < 0)
			return -1;
	}
	timing_mark(timing, TP_MOUNTS);
	if (fchdir(root_fd) < 0)
		return error_set(err, errno, "chdir to the new root");
	return 0;
}

int mount_host_tmp_back(const struct mount_host_tmp *host_tmp, struct nsrun_error *err)
{
	err->stage = STAGE_MOUNT;
	return attach_tree(host_tmp->fd, host_tmp->legacy, STAGING, -1, err, "the host's " STAGING " again");
}

int mount_pivot_here(struct nsrun_error *err)
{
	err->stage = STAGE_MOUNT;
	/* pivot_root(".", "."): the old root is stacked on the new one and detached at once */
	if (syscall(SYS_pivot_root, ".", ".") == 0) {
		if (umount2(".", MNT_DETACH) < 0)
			return error_set(err, errno, "detach the old root");
		return 0;
	}
	if (errno != EINVAL)
		return error_set(err, errno, "pivot_root");
	return move_root(err);
}

int mount_pivot_root(const struct nsrun_config *cfg, struct timing *timing, struct nsrun_error *err)
{
	if (mount_pivot_here(err) < 0)
		return -1;
	if (chdir("/") < 0)
		return error_set(err, errno, "chdir /");
	if (mount_root_propagation(cfg->rootfs_propagation, err) < 0 || mount_binds_propagation(cfg, err) < 0)
		return -1;
	timing_mark(timing, TP_PIVOT);
	return 0;
}
