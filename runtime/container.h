/* container.h - the container's init (pid 1 of the new pid namespace).
 *
 * Runs in the outer user namespace as its uid 0: waits for the id maps, builds the
 * root file system, sets hostname and loopback, forks the payload (exec.h), reports
 * whether it exec'd, then reaps every process of the container, forwards signals to
 * the payload, and reports the payload's wait status.  When it exits the kernel
 * kills every process left in the namespace (pid_namespaces(7)).
 */
#ifndef NSRUN_CONTAINER_H
#define NSRUN_CONTAINER_H

#include <sys/ioctl.h>

#include "config.h"
#include "mount.h"
#include "mount_plan.h"

struct nsrun_seccomp;
struct ucounts_plan;

/* What the container side needs from the supervisor (inherited over fork-like clone). */
struct container_args {
	const struct nsrun_config *cfg;
	const struct mount_plan *plan;
	const struct mount_sources *sources;
	const struct nsrun_seccomp *seccomp;
	int sync_fd;            /* the container's end of the sync socket */
	int close_fds[9];       /* supervisor-only fds to close at once (-1: unused) */
	int stdio[3];           /* the payload's fds 0, 1, 2 (-1: nsrun's own) */
	const int *forward_signals;     /* signals to forward to the payload, 0-terminated */
	struct timing *timing;          /* shared phase stamps, or NULL */
	const struct nsrun_limits *rlimits;     /* the limits the payload sets as rlimits */
	int landlock_abi;               /* the ruleset's ABI (landlock.h), 0: none */
	int publish_fd;                 /* -p: init's end of the socket channel (publish.h), or -1 */
	struct winsize winsize;         /* -t: the pty's first size (nsrun's terminal; 0x0: none) */
	const struct ucounts_plan *ucounts;     /* limits of the container's user namespace */
	int exec_fifo_fd;               /* OCI create: O_PATH fd of the exec fifo to wait on, or -1 */
	const int *copy_fds;            /* --copy-archive: the archives, for the payload (exec.h); NULL: none */
	bool solo;                      /* no process can join the container before its payload has
					 * exec'd (a foreground run: no state directory names it), so
					 * the payload may start in pid 1's memory (container.c) */
};

/* Never returns: exits 0 after reporting the payload's status, 125 when set-up
 * failed (after sending the error over the sync socket), or 1 on parent death. */
void container_main(const struct container_args *args) __attribute__((noreturn));

#endif
