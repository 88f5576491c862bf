/* mount_plan.h - the container's file system as data: an ordered list of mount
 * operations built from the configuration, printable (--debug) and unit-tested
 * without privileges.  mount.c executes a plan inside the container.
 *
 * Order (why): the rootfs first and read-only before anything writable is stacked
 * on it, so a recursive read-only flag cannot catch /tmp; /proc, its masks, /dev,
 * /tmp, /work, then volumes parents-first, then nsrun's /etc/hosts and /etc/hostname
 * (unless a volume gives them: at their path or above); read-only remounts of the tmpfs mounts
 * that hold mount points last; pivot_root after all of them, because the sources
 * are only reachable through the old root.
 */
#ifndef NSRUN_MOUNT_PLAN_H
#define NSRUN_MOUNT_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "error.h"

enum mount_op_kind {
	MOP_ROOTFS,     /* the image rootfs (recursive bind, or overlay when mount points are missing), ro nosuid nodev */
	MOP_PROC,       /* a fresh proc for the container's pid namespace */
	MOP_MASK_FILE,  /* /dev/null bound over a sensitive /proc file (skipped if absent) */
	MOP_MASK_DIR,   /* an empty read-only tmpfs over a sensitive /proc directory (skipped if absent) */
	MOP_READONLY,   /* target bound onto itself and made read-only (skipped if absent) */
	MOP_DEV,        /* tmpfs /dev with null zero full random urandom tty, devpts, shm, links; then ro */
	MOP_TMPFS,      /* a tmpfs at target: data has size and mode */
	MOP_BIND,       /* volume or FILE: source_index into cfg->mounts */
	MOP_WORKDIR,    /* the working directory: made (in an overlay or a tmpfs) when missing, as docker does */
	MOP_REMOUNT_RO, /* make the mount at target read-only (after its mount points were made) */
	MOP_ETC_FILE,   /* /etc/hosts or /etc/hostname written by nsrun (etc_files.h), bound read-only */
};

enum mount_create {
	CREATE_NONE = 0,        /* the target must exist */
	CREATE_DIR,             /* the target may be made as a directory */
	CREATE_FILE,            /* the target may be made as an empty file */
};

struct mount_op {
	enum mount_op_kind kind;
	const char *target;             /* absolute path inside the container */
	int source_index;               /* MOP_BIND: index into cfg->mounts; else -1 */
	unsigned long flags;            /* MS_* flags for mount(2) */
	char data[96];                  /* fs data string ("size=67108864,mode=1777") */
	enum mount_create create;
	bool in_image;                  /* target lies in the rootfs (not in a tmpfs of ours) */
	bool copy_up;                   /* MOP_TMPFS: the tree below copied into it (tmpcopyup) */
};

struct mount_plan {
	struct mount_op *ops;
	size_t n;
	bool needs_overlay;             /* set by mount_plan_check(): mount points missing from the image */
};

/* Builds the plan for cfg (pure: no syscalls).  Volumes are ordered parents first.
 * Returns 0, or -1 with err (ENOMEM). */
int mount_plan_build(const struct nsrun_config *cfg, struct mount_plan *plan, struct nsrun_error *err);

/* Name of an op kind ("bind", "tmpfs", ...). */
const char *mount_op_kind_name(enum mount_op_kind kind);

/* Writes one line per op to buf ("tmpfs /tmp size=... flags=0x6"), for --debug and tests.
 * Returns the length that was needed (as snprintf). */
size_t mount_plan_format(const struct mount_plan *plan, const struct nsrun_config *cfg, char *buf, size_t len);

void mount_plan_free(struct mount_plan *plan);

#endif
