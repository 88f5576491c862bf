/* netjoin.h - a run in another's network namespace: --network container:NAME
 * (the namespace of the running service NAME, docker's form) and --network NAME
 * (the namespace of nsrun network NAME, network.h).
 *
 * Only the network namespace is shared (and, for an OCI config's paths, a
 * pod's ipc and uts namespaces too, joined by the same helper before it clones):
 * the run has its own user, mount, pid, ipc, uts and cgroup namespaces, made as for any run, so it sees nothing of the
 * other's files or processes.  setns(2) into a network namespace needs
 * CAP_SYS_ADMIN over the user namespace that owns it and over our own; a run's
 * user namespace is a sibling of the service's, which gives it none.  So the
 * container's user namespace is made as a child of the owner: a helper process
 * joins the owner (its creator's rights cover it: user_namespaces(7)), becomes
 * its root (the caller's own host id; root's 65534), joins the network
 * namespace, and clones the container with CLONE_PARENT, so it is nsrun's
 * child as any container is, in that network namespace, with a user namespace
 * of its own below the owner.  The helper writes its id maps ("0 0 1": the
 * owner's root, the caller's id again, which only a process of the parent user
 * namespace may write) and exits; with --userns subids, every id the owner maps,
 * each as itself (a service of --userns subids maps its range: the container's
 * ids are then the service's own host ids, as Docker's containers share theirs).  The container's root has its capabilities in
 * its own user namespace only: none over the joined network namespace (lo is up
 * already; no interface or route can change) nor over the owner's processes.
 */
#ifndef NSRUN_NETJOIN_H
#define NSRUN_NETJOIN_H

#include <stdbool.h>
#include <sys/types.h>

#include "config.h"
#include "error.h"

/* The namespaces joined, opened before anything is made. */
struct net_join {
	int userns_fd;          /* the user namespace that owns the network namespace */
	int netns_fd;           /* the network namespace */
	int ns_fd[NSRUN_JOIN__COUNT];   /* OCI ipc, uts, pid and user paths, owned by userns_fd too (the
					 * user path is userns_fd itself); -1: none */
	bool join_owner;        /* an OCI pid or user path: the container's user namespace is
				 * userns_fd itself (no child, no maps of ours), so its root may
				 * mount the pod's /proc (proc(5)); never nsrun's own */
	int outer_userns_fd;    /* OCI paths of two owners: the outer, an ancestor of userns_fd,
				 * joined first (with the kinds it owns), or -1 */
	bool outer_is_ours;     /* it is nsrun's own user namespace: not joined, as owner_is_ours */
	unsigned outer_kinds;   /* what it owns: 1 << 0 network, 1 << 1 ipc, 1 << 2 uts */
	int lock_fd;            /* a named network's lock, held shared while the run lasts, or -1 */
	bool all_ids;           /* --userns subids: the container maps every id of the owner, as it is */
	bool owner_is_ours;     /* a path's namespace owned by nsrun's own user namespace (root's
				 * `ip netns add`): the helper joins only the network namespace */
	const struct nsrun_config *cfg; /* OCI linux.uidMappings ranges (cfg->n_uid_mappings), written
					 * by the helper as the owner's ids of those host ids; or NULL */
	uid_t map_uid;          /* container id 0 maps to this id of the owner: its root (0), or */
	gid_t map_gid;          /* with owner_is_ours, the run's host ids (ns_host_ids) */
};

/* Nothing held. */
void net_join_init(struct net_join *j);

/* Opens what cfg->network names (container: or a named network; for any other
 * network nothing is done and 0 returned): the service must be running and of
 * isolation full (exec_target.h finds it as nsrun exec does); the network's
 * holder alive and its lock free of removal (network.h).  A path (OCI
 * linux.namespaces[].path) must name a network namespace (ioctl_ns(2)
 * NS_GET_NSTYPE) whose owning user namespace the caller has CAP_SYS_ADMIN in
 * (user_namespaces(7): ours as root, or one below ours that the caller's uid
 * made); nsrun's own network namespace is a warning on stderr, refused with
 * --strict.  Returns 0, or -1 with err (errnum 0: no such service or network,
 * not running, not nsrun's, not a network namespace, no rights over it).
 * The OCI ipc and uts paths (cfg->ns_path) are checked as a network path is;
 * all of them must have one owning user namespace, or two of which one is an
 * ancestor of the other (a pod's CNI network namespace, the host's, with the
 * ipc and uts of a pause container nsrun made): the outer one is joined first,
 * its namespaces with it, then the inner one, of which the container's user
 * namespace is made a child.  With --network container: or NAME they are
 * refused. */
int net_join_open(const struct nsrun_config *cfg, struct net_join *j, struct nsrun_error *err);

/* An OCI path /proc/PID/ns/TYPE whose PID is the monitor of a container under
 * root_fd (the pid file's process: conmon's, which podman names a pod's
 * namespaces by) is made /proc/N/ns/TYPE of the container's payload (its init
 * while it is created, not started; found as exec finds them, exec_target_find):
 * the monitor is in the caller's namespaces, not the container's, and the init
 * is not dumpable, so a rootless caller could not open its /proc/PID/ns.  Any other path is left as it is; net_join_open checks
 * what it names.  Returns 0 or -1 with err (ENOMEM). */
int net_join_resolve_monitors(int root_fd, struct nsrun_config *cfg, struct nsrun_error *err);

/* True if j joins anything (a network, an ipc, uts, pid or user namespace): the
 * container is then cloned by net_join_clone. */
bool net_join_active(const struct net_join *j);

/* The clone(2) flags of the namespaces j joins (CLONE_NEWNET, CLONE_NEWIPC,
 * CLONE_NEWUTS, CLONE_NEWPID; CLONE_NEWUSER with j->join_owner): the container
 * makes none of these. */
int net_join_clone_flags(const struct net_join *j);

/* Moves pid into the run's cgroups; 0 or -1 with err. */
typedef int (*net_join_enter_fn)(pid_t pid, void *arg, struct nsrun_error *err);

/* Clones the container (clone(2) flags: ns_clone_flags without
 * net_join_clone_flags) in j's network (ipc, uts) namespace with its user namespace a child of j's, as above,
 * and writes its id maps.  enter (may be NULL) moves the helper into the run's
 * cgroups before it clones, so the container starts there and its cgroup
 * namespace is rooted there (cgroup_namespaces(7)), as CLONE_INTO_CGROUP does
 * on the path without a join.  Returns as fork(2): 0 in the container, its pid
 * (our child) here, or -1 with err (errno of setns(2), clone(2), the map
 * writes, enter). */
pid_t net_join_clone(const struct net_join *j, int flags, net_join_enter_fn enter, void *arg,
		     struct nsrun_error *err);

/* Closes what j holds; idempotent. */
void net_join_close(struct net_join *j);

#endif
