/* mount_internal.h - what mount.c and mount_sources.c share: the new mount API's
 * constants where the libc headers lack them, and its calls. */
#ifndef NSRUN_MOUNT_INTERNAL_H
#define NSRUN_MOUNT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>

#include "error.h"
#include "mount_plan.h"

#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef OPEN_TREE_CLOEXEC
#define OPEN_TREE_CLOEXEC O_CLOEXEC
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif
#ifndef MOVE_MOUNT_T_EMPTY_PATH
#define MOVE_MOUNT_T_EMPTY_PATH 0x00000040
#endif
#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#define MOUNT_ATTR_NOSUID 0x00000002
#define MOUNT_ATTR_NODEV 0x00000004
#define MOUNT_ATTR_NOEXEC 0x00000008
struct mount_attr {
	__u64 attr_set;
	__u64 attr_clr;
	__u64 propagation;
	__u64 userns_fd;
};
#endif
#ifndef MOUNT_ATTR_IDMAP
#define MOUNT_ATTR_IDMAP 0x00100000
#endif


/* open_tree(2) of path at dfd with flags (OPEN_TREE_*): a mount fd, or -1 with errno. */
int mount_sys_open_tree(int dfd, const char *path, unsigned flags);

/* MOUNT_ATTR_NOSUID|NODEV, and RDONLY where ms (MS_* flags) has MS_RDONLY. */
uint64_t mount_attrs_of(unsigned long ms);


/* Makes the missing parents and the mount point of path inside root_fd (a
 * directory, or with CREATE_FILE an empty file), resolving in the root
 * (openat2(2) RESOLVE_IN_ROOT): the container's, or the supervisor's for an OCI
 * root written in place.  Returns 0 or -1 with err. */
int mount_make_mount_point(int root_fd, const char *path, enum mount_create create, struct nsrun_error *err);

/* Copies the tree of the directory from (an fd, read) into the directory to (the
 * tmpfs just mounted over from's place): directories, regular files and symlinks
 * with their modes (no set-id bit) and, where the user namespace maps them, owners;
 * no link followed, devices, FIFOs and sockets left out (mount_copyup.c).  target
 * names the tmpfs in messages.  Returns 0 or -1 with err (ENOSPC: the tmpfs is full,
 * with a hint). */
int mount_copy_up(int from, int to, const char *target, struct nsrun_error *err);

#endif
