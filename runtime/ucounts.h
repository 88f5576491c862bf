/* ucounts.h - the container's own per-user kernel counters (/proc/sys/user).
 *
 * Inotify instances and watches, fanotify groups and marks, and namespaces are
 * counted per user in each user namespace and charged up the chain of
 * namespaces to the caller's user on the host (kernel/ucount.c, inc_ucount):
 * a root caller's payload exhausted root's host-wide inotify limit (issue 17,
 * kind 5).  A new user namespace starts with no limit of its own (INT_MAX), so
 * the container init sets its namespace's limits, which the namespace's root
 * may write (set_permissions in kernel/ucount.c; user_namespaces(7)): half of
 * what the caller's own namespace allows, so the payload can never take more
 * than half of the caller's share.
 */
#ifndef NSRUN_UCOUNTS_H
#define NSRUN_UCOUNTS_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

#define UCOUNTS_MAX 12

struct ucounts_plan {
	bool settable;                  /* /proc/sys is writable here (not a read-only mount) */
	uint64_t ipc_bytes;             /* System V shm and message queues at most (--memory), 0: as they are */
	unsigned n;
	struct ucount_limit {
		char name[32];          /* "max_inotify_instances" */
		long value;
	} limits[UCOUNTS_MAX];
};

/* Supervisor side, before clone: reads the caller's limits from
 * /proc/sys/user/max_* and plans half of each (at least 1) for the container.
 * p->settable is false when /proc/sys is mounted read-only (an outer sandbox),
 * and p is empty (no limit known) where /proc shows no sys/ (subset=pid):
 * nothing is written, and the payload is charged against the caller's limits
 * only.  Returns 0, or
 * -1 with *err (errno of open(2)/read(2) when /proc/sys/user is unreadable). */
int ucounts_plan(struct ucounts_plan *p, struct nsrun_error *err);

/* The planned value of name ("max_inotify_instances"), or -1 when not planned. */
long ucounts_value(const struct ucounts_plan *p, const char *name);

/* Container init, as root of the container's user namespace, before its mounts:
 * writes each planned limit to /proc/sys/user/NAME (the values apply to the
 * writer's user namespace); with ipc_bytes, also the System V IPC limits of the
 * container's IPC namespace (/proc/sys/kernel/shmmax, shmall, msgmni: the
 * writer's IPC namespace, its root may write them, ipc/ipc_sysctl.c), so that
 * segments and queues no process maps, which the supervisor's memory measure
 * cannot see (memwatch.h), hold at most ipc_bytes each.  No allocation.
 * Returns 0, or -1 with *err (errno of open(2)/write(2)). */
int ucounts_apply(const struct ucounts_plan *p, struct nsrun_error *err);

#endif
