/* ns.h - namespaces: clone of the container, id maps, the payload's own user
 * namespace, hostname and loopback.  See namespaces(7), user_namespaces(7), clone(2).
 */
#ifndef NSRUN_NS_H
#define NSRUN_NS_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"

/* The namespaces of a container: user, mount, pid, net, ipc, uts, and cgroup
 * where the kernel has it (probed once by the caller with ns_has_cgroupns). */
int ns_clone_flags(void);

/* Fork-like clone(2) into new namespaces (no new stack: the child continues from
 * here with a copy of the address space).  With cgroup_fd >= 0, clone3(2) with
 * CLONE_INTO_CGROUP (Linux 5.7) starts the child in that cgroup and *in_cgroup is
 * set; where clone3 is missing or refused (an outer seccomp filter may return
 * ENOSYS) plain clone is used and the caller must move the child itself.  Returns the child's pid in the parent,
 * 0 in the child, or -1 with err (errno of clone(2): EPERM/ENOSPC/EUSERS/EINVAL
 * say why a user namespace cannot be made: diag_userns in diagnose.h names the cause and the fix). */
pid_t ns_clone(int flags, int cgroup_fd, bool *in_cgroup, struct nsrun_error *err);

/* Supervisor: writes "deny" to /proc/PID/setgroups, then gid_map and uid_map that
 * map container id 0 to host_uid/host_gid (a single id: no newuidmap needed).
 * Returns 0 or -1 with err (errno of write(2)). */
int ns_write_id_maps(pid_t pid, uid_t host_uid, gid_t host_gid, struct nsrun_error *err);

/* Payload: unshare(CLONE_NEWUSER) and map uid/gid of the new namespace to this
 * process's ids (0 in the container's namespace).  The caller then drops the
 * bounding set (while it still holds CAP_SETPCAP there) and becomes uid/gid with
 * ns_become().  The payload holds no capability over the container's mount
 * namespace, which belongs to the parent user namespace.  Returns 0 or -1 with err. */
int ns_enter_payload_userns(uid_t uid, gid_t gid, struct nsrun_error *err);

/* setresgid(gid) then setresuid(uid) (credentials(7)); a change from uid 0 to
 * another uid clears the permitted and effective capabilities. Returns 0 or -1. */
int ns_become(uid_t uid, gid_t gid, struct nsrun_error *err);

/* Brings lo up with ioctl(SIOCSIFFLAGS) on an AF_UNIX socket (netdevice(7)), so an
 * outer filter that denies netlink or AF_INET does not matter.  Returns 0 or -1. */
int ns_loopback_up(struct nsrun_error *err);

#endif
