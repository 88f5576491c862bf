/* mount_detach.h - the old root's detach after pivot_root(2), off the start's path. */
#ifndef NSRUN_MOUNT_DETACH_H
#define NSRUN_MOUNT_DETACH_H

#include "error.h"

struct old_root_detach;

/* Starts a thread that will detach the old root (umount2(".", MNT_DETACH)) once
 * mount_detach_old_root() asks it to, with every signal blocked (pid 1's signalfd
 * must get them all).  Returns the handle, or NULL (no thread: the detach is then
 * done in line).  The caller is single-threaded and shares its cwd with the thread. */
struct old_root_detach *mount_detach_prepare(void);

/* Right after pivot_root(".", "."), with the old root stacked on the new one: has
 * the old root detached, and returns once it is out of the mount namespace (gone
 * from /proc/self/mountinfo; "/.." is then "/" itself), which is before the kernel's
 * wait for an RCU grace period in namespace_unlock() (fs/namespace.c) ends: the
 * thread waits that out alone and ends.  d may be NULL (in line).  Frees d.
 * Returns 0, or -1 with err (errno of umount2(2)). */
int mount_detach_old_root(struct old_root_detach *d, struct nsrun_error *err);

/* Ends an unused thread (pivot_root failed, or not reached) and frees d; NULL is
 * a no-op. */
void mount_detach_cancel(struct old_root_detach *d);

static inline void mount_detach_cancelp(struct old_root_detach **d)
{
	mount_detach_cancel(*d);
}

#endif
