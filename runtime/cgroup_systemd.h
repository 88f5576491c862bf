/* cgroup_systemd.h - a delegated cgroup from the systemd manager, over D-Bus.
 *
 * Where no cgroup is delegated to the caller but a systemd manager runs for it (the
 * user manager of an unprivileged caller, the system manager for root), nsrun asks
 * that manager for a transient scope unit with Delegate=yes and moves itself, the
 * supervisor, into it: org.freedesktop.systemd1.Manager.StartTransientUnit, as
 * systemd-run --user --scope -p Delegate=yes does, and as crun's and runc's systemd
 * cgroup managers do for a container (org.freedesktop.systemd1(5),
 * systemd.scope(5), systemd.resource-control(5) "Delegate=").  The scope's cgroup
 * then belongs to the caller, and cgroup.c uses it as any delegated cgroup: the run's
 * own cgroup with memory.max, pids.max and cpu.max is made below it before the clone.
 * The scope ends when it is empty, that is when nsrun exits (systemd removes its
 * cgroup then); it is started with CollectMode=inactive-or-failed so that a scope
 * whose processes the OOM killer hit is not kept as "failed" either.
 *
 * D-Bus is libdbus-1 (its static library: nsrun is linked static-pie, and Debian
 * ships no static libsystemd).  No manager, no bus, a refusal: the run goes on
 * without a scope; why is reported under --debug only.
 */
#ifndef NSRUN_CGROUP_SYSTEMD_H
#define NSRUN_CGROUP_SYSTEMD_H

#include <stdbool.h>
#include <stddef.h>

/* The bus addresses to try, in order, into out[] (at most max, each a malloc'd
 * string the caller frees): for root the system manager's bus
 * ($DBUS_SYSTEM_BUS_ADDRESS, else /run/dbus/system_bus_socket) then its private
 * socket /run/systemd/private; for others $DBUS_SESSION_BUS_ADDRESS, else
 * $XDG_RUNTIME_DIR/bus, then the user manager's private socket
 * $XDG_RUNTIME_DIR/systemd/private (what systemctl --user uses; there is no bus
 * daemon on some hosts).  Only unix: addresses are taken from the environment (an
 * "autolaunch:" or "unixexec:" one would start a program).  is_bus[i] says whether out[i] is a bus (Hello, AddMatch and
 * Subscribe are needed) or the manager itself.  Pure: reads only the environment
 * given.  Returns how many. */
size_t cgroup_systemd_addresses(bool root, const char *session_bus, const char *system_bus,
				const char *runtime_dir, char **out, bool *is_bus, size_t max);

/* The cgroup path a systemd manager gives an OCI linux.cgroupsPath of runc's
 * --systemd-cgroup form "SLICE:PREFIX:NAME" (runc's libcontainer/specconv and
 * systemd driver; systemd.slice(5) for the slice's path): the slice expanded
 * ("a-b.slice": /a.slice/a-b.slice; "" is system.slice for root, user.slice
 * else; "-.slice" the root), then the unit, "PREFIX-NAME.scope" (NAME itself when it
 * is a slice), into out.  Pure.  Returns 0, or -1 with why set (another form, a
 * bad slice name, too long). */
int cgroup_systemd_path(const char *spec, bool root, char *out, size_t len, char *why, size_t why_len);

/* The scope's unit name for supervisor pid and a random 32-bit value, into buf:
 * "nsrun-<pid>-<8 hex digits>.scope".  Returns buf. */
const char *cgroup_systemd_unit_name(char *buf, size_t len, int pid, unsigned random);

/* The length of the path of the deepest common ancestor of cgroups a and b (paths
 * as in /proc/self/cgroup): "/a/b" and "/a/c" have "/a" (2); 0 for the root. */
size_t cgroup_systemd_common_ancestor(const char *a, const char *b);

/* Asks the first reachable systemd manager (cgroup_systemd_addresses) for a
 * transient scope unit named as cgroup_systemd_unit_name says, with Delegate=yes and
 * this process in it (PIDs=[0]: the manager takes the sender's pid, which is right
 * whatever pid namespace nsrun is in), and waits (at most timeout_ms) for the start
 * job's JobRemoved signal.  On 0 this process is in the scope's cgroup, unit
 * (len unit_len) names the scope and why says "via ADDRESS" (and why not through
 * the addresses before it).  -1 with why set (a sentence for --debug) when no
 * manager answered, or it refused or failed the job, or the move would leave a
 * limit behind: one on nsrun's cgroup own (path in the cgroup2 hierarchy mounted at
 * mnt) or on a cgroup above it that is not above the manager's (a caller started
 * under systemd-run --scope -p MemoryMax=... stays under that limit).  Not an error:
 * nothing was changed then. */
int cgroup_systemd_scope(const char *mnt, const char *own, char *unit, size_t unit_len, int timeout_ms, char *why,
			 size_t why_len);

#endif
