/* exec_target.h - the running payload of a service that `nsrun exec` joins
 * (exec_join.h): found through its monitor with pidfds, its namespaces opened and
 * checked to be the container's, the cgroups the run made for it, its rlimits. */
#ifndef NSRUN_EXEC_TARGET_H
#define NSRUN_EXEC_TARGET_H

#include <stdbool.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "error.h"

#define EXEC_MAX_CGROUPS 16

enum ns_kind { NS_MNT, NS_PID, NS_NET, NS_IPC, NS_UTS, NS_CGROUP, NS__COUNT };

/* The service's payload and what is joined of it, all opened before the fork. */
struct exec_target {
	pid_t monitor, init, payload;   /* host pids (our pid namespace's numbers) */
	int pidfd[3];                   /* of the monitor, init, the payload */
	int proc_fd;                    /* /proc/PAYLOAD */
	int userns_outer;               /* the container's user namespace (init's) */
	int userns_payload;             /* the payload's own, a child of it; -1 with multi_id */
	bool multi_id;                  /* set before exec_target_open for a service of --userns
					 * subids: its payload is in the container's user namespace
					 * (one level), which maps more than one id */
	bool joined_net;                /* a service of --network container:NAME or NAME (its
					 * state.json says, read by exec_target_open): only then may
					 * its user namespace be a child of the net namespace's owner */
	int userns_net;                 /* the owner of its net namespace, the parent of the container's,
					 * when the service joined another's network (netjoin.h); else -1 */
	bool net_ours;                  /* an OCI container joined (by path) a net namespace of our own
					 * user namespace (root's ip netns add): joined first, as we are */
	unsigned joined_paths;          /* an OCI container's ipc and uts joined by path (1 << NS_IPC,
					 * 1 << NS_UTS; its state.json's "joined"): of the same owner as
					 * a joined network, userns_net, or of ours */
	int userns_join_outer;          /* OCI paths of two owners (netjoin.h): the outer, the parent
					 * of userns_net, a child of ours; else -1 */
	unsigned join_ours;             /* the kinds joined first, of our own user namespace (net_ours's) */
	unsigned join_outer;            /* then those of userns_join_outer, from there */
	unsigned join_first;            /* then those of userns_net, from there; then the
					 * container's user namespace and the rest */
	int root_fd;                    /* the payload's root directory (O_PATH), /proc/PAYLOAD/root */
	int ns[NS__COUNT];              /* the container's, in the order to join them; -1: ours */
	char *cgroup_procs[EXEC_MAX_CGROUPS];   /* cgroup.procs of the cgroups the run made */
	size_t n_cgroups;
	struct rlimit rl[RLIM_NLIMITS]; /* the payload's */
};

/* setns(2)'s nstype of namespace kind k, and its name in /proc/PID/ns. */
int exec_target_ns_flag(enum ns_kind k);
const char *exec_target_ns_name(enum ns_kind k);

/* Fills t for the service whose state directory is dir_fd and whose monitor (from
 * state.json) is monitor: the monitor must hold the lock of dir_fd; the
 * container's init is its child one pid namespace below (pid 1 there), the
 * payload init's child with the smallest number; each is held by a pidfd before
 * its parent is checked, and all are alive at the end, so a pid reused meanwhile
 * is never taken.  The payload's user namespace must be a child of the
 * container's, a child of ours (the full tier), and its mount, pid, net, ipc,
 * uts and cgroup namespaces owned by the container's (ioctl_ns(2)); or, for a
 * service that joined another's network (netjoin.h), the container's a child of
 * the user namespace that owns its net namespace, itself a child of ours (an
 * OCI container's ipc and uts joined by path likewise: of that owner, or of ours).  The
 * service's state.json (state.h) says whether it joined a network.  The
 * cgroups are those where the payload's differs from its monitor's
 * (/proc/PID/cgroup), their cgroup.procs found through our mountinfo.  The
 * rlimits are read with prlimit(2).  Returns 0, or -1 with err (errnum 0 for a
 * service that is not running, not of isolation full, or not as nsrun made it).
 * t (exec_target_init'ed) is released by exec_target_close in either case. */
int exec_target_open(struct exec_target *t, int dir_fd, pid_t monitor, struct nsrun_error *err);

/* Only the first step of exec_target_open: the monitor, init and payload pids
 * (and their pidfds) of the service whose state directory is dir_fd, nothing
 * opened inside it; payload 0 while the init has no child yet (an OCI container
 * created, not started).  Returns 0 or -1 with err; t is released by
 * exec_target_close. */
int exec_target_find(struct exec_target *t, int dir_fd, pid_t monitor, struct nsrun_error *err);

/* SIGKILLs, pass after pass until one finds none (at most 500), every process
 * listed in proc ("/proc", or a container's own) other than ourselves and init
 * whose mount namespace is mnt_fd's (-1: none) or that descends from init (a
 * number of that /proc): an OCI container's own processes in a pid namespace it
 * joined by path (its payload's, what it left, and what exec started there),
 * not the pod's others, which the kernel would not kill with it (init is not
 * that namespace's pid 1: pid_namespaces(7)).  A process whose /proc/PID/ns is
 * closed to us (ptrace access mode, proc(5)) is judged by its parents only.
 * Returns how many were signalled. */
unsigned exec_target_kill_own(const char *proc, pid_t init, int mnt_fd);

/* An empty t: nothing held. */
void exec_target_init(struct exec_target *t);

/* Closes and frees what t holds; idempotent. */
void exec_target_close(struct exec_target *t);

#endif
