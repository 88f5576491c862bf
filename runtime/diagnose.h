/* diagnose.h - why the kernel refuses here what nsrun needs, and the fix: one
 * diagnosis shared by a run's errors (main prints it) and `nsrun check`.
 *
 * Every function takes proc, the path of the proc file system to read facts from:
 * "/proc" always, but for unit tests, which pass a directory that imitates one
 * (sys/user/max_user_namespaces, self/status, self/mounts, ...).
 */
#ifndef NSRUN_DIAGNOSE_H
#define NSRUN_DIAGNOSE_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

/* Where `make install` puts nsrun's AppArmor profile (apparmor/nsrun). */
#define DIAG_APPARMOR_PROFILE "/etc/apparmor.d/nsrun"

/* The fix when a run's second user namespace is refused (nested 32 deep). */
extern const char diag_depth_hint[];

/* The facts behind a diagnosis, read from proc. */
struct diag_host {
	long max_user_namespaces;       /* user.max_user_namespaces of this user namespace; -1 absent */
	long unprivileged_userns_clone; /* kernel.unprivileged_userns_clone (Debian's patch); -1 absent */
	long apparmor_restrict;         /* kernel.apparmor_restrict_unprivileged_userns (Ubuntu); -1 absent */
	char apparmor_label[128];       /* our AppArmor label ("unconfined", "nsrun (unconfined)"), "" without */
	int seccomp_mode;               /* "Seccomp:" of self/status: 0 none, 1 strict, 2 filter; -1 unknown */
	int seccomp_filters;            /* "Seccomp_filters:" (Linux 5.9); -1 unknown */
	bool nested_userns;             /* self/uid_map is not the initial namespace's identity map */
};

/* Reads the facts above from proc (missing files leave -1, "" or false). */
void diag_read_host(const char *proc, struct diag_host *h);

/* True when AppArmor restricts unprivileged user namespaces and this process is
 * not under a profile that allows them (its label does not name nsrun). */
bool diag_apparmor_blocks(const struct diag_host *h);

/* Fills err (stage clone) with why a user namespace could not be made (errnum from
 * clone(2) or unshare(2): EPERM, ENOSPC, EUSERS, ...) and the fix as its hint:
 * user.max_user_namespaces 0 here or in an outer namespace (bubblewrap
 * --disable-userns), the nesting limit (32 levels: kernel/user_namespace.c),
 * kernel.unprivileged_userns_clone, AppArmor's restriction, a seccomp filter of an
 * outer sandbox.  Returns -1. */
int diag_userns(int errnum, const char *proc, struct nsrun_error *err);

/* Whether a fresh proc can be mounted in a new user namespace, judged from
 * proc/self/mounts (getmntent(3)): the kernel allows it only if some proc mount of ours is
 * fully visible, with nothing mounted over its files or non-empty directories,
 * and not read-only (fs/namespace.c mnt_already_visible; container engines mask /proc/kcore,
 * /proc/sys, ... that way).  Returns true when one is; otherwise false, with the
 * over-mounted paths of the first proc mount listed in covered (size len). */
bool diag_proc_visible(const char *proc, char *covered, size_t len);

/* Fills err (stage mount) with why mounting a fresh /proc failed (errnum from
 * mount(2)): over-mounted paths of the outer /proc, AppArmor, or just errnum.
 * Returns -1. */
int diag_proc_mount(int errnum, const char *proc, struct nsrun_error *err);

/* Fills err for mount(2) refused with EPERM to the root of a new user and mount
 * namespace, who holds CAP_SYS_ADMIN there: no capability check failed, so an LSM
 * or a seccomp filter of an outer sandbox refused it.  A Landlock domain refuses
 * every mount (Documentation/userspace-api/landlock.rst, "Filesystem topology
 * modification"), which agent sandboxes built on Landlock apply; the hint is the
 * reduced tier (tier.h).  Reads PROC/self/status.  Returns -1. */
int diag_mount_refused(struct nsrun_error *err, const char *proc);

/* A run's error, made precise where a diagnosis knows more: EPERM while building
 * the container (stage id maps, mount or container) under AppArmor's restriction, from
 * mounting /proc over a masked outer /proc, or under an outer seccomp filter
 * (Podman's default profile refuses sethostname without CAP_SYS_ADMIN); and the
 * fix for ENOSPC from the payload's user namespace (32 levels deep).  Leaves
 * any other error as it is. */
void diag_refine(struct nsrun_error *err, const char *proc);

#endif
