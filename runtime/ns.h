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

/* Supervisor: writes "deny" to /proc/N/setgroups, then gid_map and uid_map that
 * map container id 0 to host_uid/host_gid (a single id: no newuidmap needed).
 * N is pid's number in the pid namespace of the /proc mounted here, read from a
 * pidfd's fdinfo, so the maps are found whichever pid namespace /proc belongs to
 * (bubblewrap --unshare-pid without --proc).  This process opens and writes the
 * files, as the kernel wants for a map of another id (kernel/user_namespace.c
 * new_idmap_permitted: CAP_SETUID over the parent namespace for opener and
 * writer: a root caller's 0 -> 65534).  Returns 0 or -1 with err (errno of
 * open(2)/write(2); ESRCH when pid has no number in that /proc). */
int ns_write_id_maps(pid_t pid, uid_t host_uid, gid_t host_gid, struct nsrun_error *err);

/* True when errnum, of ns_write_id_maps, is an outer sandbox's refusal of the
 * maps, under which the reduced tier goes on unmapped: EACCES or EPERM (a
 * Landlock ruleset, a masked /proc), EROFS (a read-only /proc: bubblewrap
 * --remount-ro /proc or --ro-bind /proc /proc). */
bool ns_id_maps_refused(int errnum);

/* The hint for EACCES on a write of our own /proc id map files, which their mode
 * allows: a Linux security module refused it. */
#define NS_MAPS_EACCES_HINT                                                                                  \
	"a security module refuses writes to /proc: an outer Landlock domain (Codex's sandbox allows writes "   \
	"only to its workspace and /tmp), or AppArmor; without --isolation full a run takes the reduced "      \
	"tier, which runs unmapped"

/* The "Pid:" field of a /proc/PID/fdinfo text of a pidfd (proc(5)): a number > 0,
 * or -1 when there is none or it is 0 (the process has no number in that /proc's
 * pid namespace).  Pure, for unit tests. */
long ns_fdinfo_pid(const char *fdinfo);

/* The k-th (from 0, the outermost; k < 0: the last, the innermost) number of the
 * "NSpid:" line of a /proc/PID/status text (proc(5)), and through *levels (if not
 * NULL) how many it has.  Returns it, or -1 when there is no such number.  Pure. */
long ns_status_nspid(const char *status, int k, int *levels);

/* The number of pid (ours, as clone(2) returned it) in the pid namespace of the
 * /proc mounted here, which need not be ours (`bwrap --unshare-pid` without
 * --proc): read from a pidfd's fdinfo (kernel/pid.c pidfd_show_fdinfo, Linux 5.3).
 * Returns it, or -1 with errno ESRCH when this /proc cannot name pid. */
long ns_proc_pid(pid_t pid);

/* The reverse: the number in our pid namespace of the process that the /proc
 * mounted here names proc_pid, from the "NSpid:" lines of its status and ours
 * (proc(5)); it must be in our pid namespace or below.  Returns it, or -1 with
 * errno (ESRCH: no such process, or not below ours). */
long ns_own_pid(long proc_pid);

/* Payload: unshare(CLONE_NEWUSER) and map uid/gid of the new namespace to this
 * process's ids (0 in the container's namespace).  The caller then drops the
 * bounding set (while it still holds CAP_SETPCAP there) and becomes uid/gid with
 * ns_become().  The payload holds no capability over the container's mount
 * namespace, which belongs to the parent user namespace.  Returns 0 or -1 with err. */
int ns_enter_payload_userns(uid_t uid, gid_t gid, struct nsrun_error *err);

/* setresgid(gid) then setresuid(uid) (credentials(7)); a change from uid 0 to
 * another uid clears the permitted and effective capabilities. Returns 0 or -1. */
int ns_become(uid_t uid, gid_t gid, struct nsrun_error *err);

/* Brings lo up with ioctl(SIOCSIFFLAGS) (netdevice(7)) on the first socket an
 * outer filter lets this process make in its network namespace: socket(AF_UNIX),
 * else a socketpair(AF_UNIX, SOCK_STREAM), else AF_NETLINK, AF_INET, AF_INET6.
 * Returns 0 or -1 with err (when no socket can be made, the message lists each
 * call and its errno).  *via (if via is not NULL) gets the call that made the
 * socket, for `nsrun check`. */
int ns_loopback_up(const char **via, struct nsrun_error *err);

#define NS_OVERFLOW_ID 65534    /* what a root caller's container maps to: never host root */

/* The host ids container 0 maps to: the caller's own, except for root, whose
 * container maps to 65534 (nothing inside is ever host root) where that id is
 * mapped in our user namespace.  Returns 0, or -1 with err (EPERM) where the
 * caller's uid is the parent namespace's uid 0 and, for root, 65534 is not
 * mapped (bwrap --unshare-user started by root maps only 0 -> 0): the container, and
 * with it the payload, would be host root, which RLIMIT_NPROC does not count
 * (fork(2)) and which owns root's files.  user_namespaces(7). */
int ns_host_ids(uid_t *uid, gid_t *gid, struct nsrun_error *err);

/* True if our effective uid is host root: root in the initial namespace, or any
 * uid of a namespace that host root made mapping only itself, as bwrap
 * --unshare-user [--uid N] run by root does.  Where our uid is the parent
 * namespace's 0 but that parent is not the initial one (unprivileged bwrap maps
 * UID -> 0 of an intermediate namespace of its own), a child proves it: only
 * host root forks past RLIMIT_NPROC 0 without capabilities (kernel/fork.c).
 * Unreadable uid_map: true for uid 0, assume the worst.  user_namespaces(7). */
bool ns_is_host_root(void);

#endif
