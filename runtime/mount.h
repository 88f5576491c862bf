/* mount.h - executes a mount plan (mount_plan.h) inside the container.
 *
 * Sources are checked in the supervisor before clone (mount_prepare_sources) and
 * mounted in the container by identity: a caller with CAP_SYS_ADMIN (root) opens
 * detached trees with open_tree(2) before clone and the container attaches them
 * with move_mount(2); an unprivileged caller's container clones the trees itself,
 * by path, in its own mount namespace (a tree of the host's namespace cannot be
 * bound there: do_loopback's check_mnt), and refuses a source whose device and
 * inode differ from what the supervisor checked, so a path swapped in between
 * cannot smuggle another file in.
 */
#ifndef NSRUN_MOUNT_H
#define NSRUN_MOUNT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "error.h"
#include "mount_plan.h"
#include "timing.h"

struct mount_source {
	dev_t dev;              /* identity checked by the supervisor */
	ino_t ino;
	bool is_dir;
	int tree_fd;            /* detached tree from open_tree(2) in the supervisor, or -1 */
};

struct mount_sources {
	struct mount_source rootfs;
	struct mount_source *mounts;    /* parallel to cfg->mounts */
	size_t n;
};

/* Supervisor side, before clone: checks every source (exists, right type), opens
 * detached trees when privileged (root: read-only, nosuid, nodev set on them), and
 * sets plan->needs_overlay when a mount point is missing from the image.
 * Returns 0, or -1 with err (errno of stat(2), open_tree(2), ...). */
int mount_prepare_sources(const struct nsrun_config *cfg, struct mount_plan *plan,
			  bool privileged, struct mount_sources *out, struct nsrun_error *err);

void mount_sources_close(struct mount_sources *src);

/* Root, --userns subids, or an OCI root written in place (cfg->rootfs_in_place,
 * whose tree is read-write): makes the detached rootfs tree (opened before clone)
 * an idmapped mount (mount_setattr(2) MOUNT_ATTR_IDMAP) with the user namespace of
 * process n (a number of our /proc), so the image's host ids 0..N-1 are the
 * container's 0..N-1: an image root owns is the container root's.  why names the
 * option in the error.  Without a tree (unprivileged, before Linux 5.2) it does
 * nothing: an unprivileged caller's images are its own, which is container 0 already.
 * Returns 0 or -1 with err (errno of open(2) or mount_setattr(2)). */
int mount_idmap_rootfs(const struct mount_sources *src, long n, const char *why, struct nsrun_error *err);

/* The host's /tmp, which the staging tmpfs hides, kept for the OCI createContainer
 * hooks: a detached tree, or (before Linux 5.2) an O_PATH fd to bind. */
struct mount_host_tmp {
	int fd;
	bool legacy;
};

/* Container side (pid 1, uid 0 of its user namespace, in its own mount namespace):
 * makes propagation private, builds the root in a private staging tmpfs over /tmp,
 * runs every op of the plan, and leaves the new root the working directory (the
 * host's tree is still "/": OCI createContainer hooks run here, oci_hooks.h).
 * host_tmp (NULL: not wanted): the host's /tmp, taken before the staging hides
 * it, for mount_host_tmp_back; the caller closes its fd.
 * Returns 0, or -1 with err (stage STAGE_MOUNT; errno of the failing call). */
int mount_build_root(const struct nsrun_config *cfg, const struct mount_plan *plan,
		     const struct mount_sources *src, struct mount_host_tmp *host_tmp, struct timing *timing,
		     struct nsrun_error *err);

/* Container side, after mount_build_root: the host's /tmp attached over the staging
 * tmpfs again, so that a createContainer hook's paths are the runtime namespace's
 * (config.md); the new root, our working directory, is below it, and pivot_root
 * detaches both with the old root.  Returns 0 or -1 with err (errno of
 * move_mount(2), or mount(2) before Linux 5.2). */
int mount_host_tmp_back(const struct mount_host_tmp *host_tmp, struct nsrun_error *err);

/* Makes the working directory the root of this process's mount namespace, as a
 * run does it: pivot_root(".", ".") and the old root detached (pivot_root(2)), or,
 * where "/" is the kernel's initramfs and pivot_root fails with EINVAL, the working
 * directory moved over "/" and chrooted into, as switch_root(8) does.  The working
 * directory is then the new root.  Used by the run and by the probes of nsrun check
 * and of the isolation tiers, so that they agree.  Returns 0, or -1 with err (stage
 * STAGE_MOUNT; errno of the failing call, EINVAL in a chroot, with a hint). */
int mount_pivot_here(struct nsrun_error *err);

/* Container side, after mount_build_root: pivot_root(2) into the working directory
 * and detaches the old root (switch_root's move where the old root is the
 * initramfs), then the root's and the binds' propagation (OCI).  Returns 0, or -1
 * with err (stage STAGE_MOUNT; errno of the failing call). */
int mount_pivot_root(const struct nsrun_config *cfg, struct timing *timing, struct nsrun_error *err);

/* Container side, in build_dev: each of cfg->devices (OCI linux.devices) in the
 * container's /dev (dev: its fd, still writable): a character or block device
 * is the host's node at the same path bound onto an empty file (a user
 * namespace cannot mknod(2): user_namespaces(7)), then checked to be the device
 * asked for; a FIFO is made (mkfifo(3)).  Directories above are made 0755.
 * Returns 0 or -1 with err (errno of mount(2), openat(2); 0: another device). */
int mount_devices(int dev, const struct nsrun_config *cfg, struct nsrun_error *err);

/* Container side, after pivot_root: flags (MS_SHARED, MS_SLAVE, MS_PRIVATE or
 * MS_UNBINDABLE, with MS_REC or not; 0: nothing) on the mount at "/", as runc
 * applies linux.rootfsPropagation (mount_namespaces(7), "Shared subtrees").
 * Returns 0 or -1 with err (errno of mount(2)). */
int mount_root_propagation(unsigned long flags, struct nsrun_error *err);

/* Container side, after mount_root_propagation: each bind mount's propagation of
 * cfg->mounts (OCI mounts[].options: shared, slave, private, unbindable, r-forms),
 * set on its destination as runc does after the bind.  Every mount of the
 * container's namespace was made private first (mount_build_root), so "shared"
 * starts a peer group of the container's own mounts, never joins the host's, and
 * "slave" of a private mount leaves it private (mount_namespaces(7)).  Returns 0
 * or -1 with err (errno of mount(2)). */
int mount_binds_propagation(const struct nsrun_config *cfg, struct nsrun_error *err);

/* Sets attrs (MOUNT_ATTR_*) on the mount fd refers to, with mount_setattr(2) or,
 * where the kernel (before 5.12), valgrind or an outer filter lacks or refuses it
 * (sys_call_refused), a bind remount keeping the mount's other flags.  Returns 0
 * or -1 with errno. */
int mount_set_attrs(int fd, bool recursive, uint64_t attrs);

#endif
