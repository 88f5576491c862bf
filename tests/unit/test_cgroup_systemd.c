/* Unit tests of the systemd scope's pure parts (cgroup_systemd.c): which D-Bus
 * addresses are tried, in which order, for root and for others, the common
 * ancestor of two cgroups (what a move into a scope would leave), and the scope's
 * unit name.  The D-Bus exchange itself is tested against a real systemd user
 * manager in the VM tier (tests/vm/guest-test.sh, "systemd"), and against a bus
 * without systemd in integration/19-cgroup-host.t. */
#include <stdlib.h>
#include <string.h>

#include "cgroup_systemd.h"
#include "tap.h"

struct addrs {
	char *a[4];
	bool bus[4];
	size_t n;
};

static void get(struct addrs *x, bool root, const char *session, const char *system, const char *rundir, size_t max)
{
	memset(x, 0, sizeof(*x));
	x->n = cgroup_systemd_addresses(root, session, system, rundir, x->a, x->bus, max);
}

static void drop(struct addrs *x)
{
	for (size_t i = 0; i < x->n; i++)
		free(x->a[i]);
}

int main(void)
{
	struct tap t = { 0 };
	struct addrs x;
	char unit[64];

	get(&x, false, "unix:path=/run/user/1000/bus,guid=0123", NULL, "/run/user/1000", 4);
	tap_int(&t, "user with DBUS_SESSION_BUS_ADDRESS: two addresses", 2, (long long)x.n);
	tap_str(&t, "... the session bus first, as given", "unix:path=/run/user/1000/bus,guid=0123", x.a[0]);
	tap_ok(&t, x.bus[0], "... which is a bus (Hello, Subscribe)");
	tap_str(&t, "... then the user manager's private socket", "unix:path=/run/user/1000/systemd/private",
		x.n > 1 ? x.a[1] : NULL);
	tap_ok(&t, x.n > 1 && !x.bus[1], "... which is the manager itself, no bus");
	drop(&x);

	get(&x, false, NULL, "unix:path=/elsewhere", "/run/user/1000", 4);
	tap_int(&t, "user without DBUS_SESSION_BUS_ADDRESS: two addresses", 2, (long long)x.n);
	tap_str(&t, "... $XDG_RUNTIME_DIR/bus first", "unix:path=/run/user/1000/bus", x.a[0]);
	tap_str(&t, "... then $XDG_RUNTIME_DIR/systemd/private", "unix:path=/run/user/1000/systemd/private",
		x.n > 1 ? x.a[1] : NULL);
	drop(&x);

	get(&x, false, "autolaunch:", NULL, "/run/user/1000", 4);
	tap_str(&t, "DBUS_SESSION_BUS_ADDRESS autolaunch: (would start dbus-launch) is not used",
		"unix:path=/run/user/1000/bus", x.a[0]);
	drop(&x);
	get(&x, false, "unixexec:path=/bin/true", NULL, "/run/user/1000", 4);
	tap_str(&t, "... nor unixexec: (would start a program)", "unix:path=/run/user/1000/bus", x.a[0]);
	drop(&x);
	get(&x, false, "tcp:host=localhost,port=1;unix:path=/a", NULL, NULL, 4);
	tap_int(&t, "... nor a list of addresses, nor tcp:", 0, (long long)x.n);
	drop(&x);
	get(&x, true, NULL, "unixexec:path=/bin/sh", NULL, 4);
	tap_str(&t, "root: DBUS_SYSTEM_BUS_ADDRESS unixexec: is not used either", "unix:path=/run/dbus/system_bus_socket",
		x.a[0]);
	drop(&x);

	get(&x, false, "", NULL, NULL, 4);
	tap_int(&t, "user with neither (or an empty address): nothing to try", 0, (long long)x.n);
	drop(&x);
	get(&x, false, NULL, NULL, "run/user/1000", 4);
	tap_int(&t, "a relative XDG_RUNTIME_DIR is not used", 0, (long long)x.n);
	drop(&x);

	get(&x, true, "unix:path=/run/user/0/bus", NULL, "/run/user/0", 4);
	tap_int(&t, "root: two addresses, never the session bus", 2, (long long)x.n);
	tap_str(&t, "... the system bus first", "unix:path=/run/dbus/system_bus_socket", x.a[0]);
	tap_str(&t, "... then the system manager's private socket", "unix:path=/run/systemd/private",
		x.n > 1 ? x.a[1] : NULL);
	drop(&x);
	get(&x, true, NULL, "unix:path=/var/run/dbus/other", NULL, 4);
	tap_str(&t, "root with DBUS_SYSTEM_BUS_ADDRESS: that bus", "unix:path=/var/run/dbus/other", x.a[0]);
	drop(&x);

	get(&x, false, "unix:path=/a", NULL, "/r", 1);
	tap_int(&t, "at most max addresses", 1, (long long)x.n);
	drop(&x);

	/* the cgroups a move from a to below b leaves: those of a's path past this length */
	tap_int(&t, "common ancestor of siblings (/u-1.slice)", 10, (long long)cgroup_systemd_common_ancestor(
		"/u-1.slice/session-3.scope", "/u-1.slice/user@1.service"));
	tap_int(&t, "... of a cgroup and one below it: the cgroup (nothing is left)", 2,
		(long long)cgroup_systemd_common_ancestor("/x", "/x/app.slice"));
	tap_int(&t, "... of the same cgroup", 5, (long long)cgroup_systemd_common_ancestor("/x/yz", "/x/yz"));
	tap_int(&t, "... a common prefix that is no path component is not an ancestor", 0,
		(long long)cgroup_systemd_common_ancestor("/user-10", "/user-1000"));
	tap_int(&t, "... /a/bc and /a/b: /a", 2, (long long)cgroup_systemd_common_ancestor("/a/bc", "/a/b"));
	tap_int(&t, "... of disjoint trees: the root (0)", 0,
		(long long)cgroup_systemd_common_ancestor("/system.slice/x.service", "/user.slice"));
	tap_int(&t, "... of the root and anything: the root", 0, (long long)cgroup_systemd_common_ancestor("/", "/a"));

	tap_str(&t, "unit name: nsrun-<pid>-<8 hex digits>.scope", "nsrun-4242-00c0ffee.scope",
		cgroup_systemd_unit_name(unit, sizeof(unit), 4242, 0xc0ffee));
	tap_str(&t, "unit name of the largest values", "nsrun-2147483647-ffffffff.scope",
		cgroup_systemd_unit_name(unit, sizeof(unit), 2147483647, 0xffffffffu));

	/* --systemd-cgroup's linux.cgroupsPath (runc's slice:prefix:name) as the manager places it */
	char path[256], why[256];
	tap_int(&t, "systemd cgroupsPath system.slice:docker:abc", 0,
		cgroup_systemd_path("system.slice:docker:abc", true, path, sizeof(path), why, sizeof(why)));
	tap_str(&t, "... the slice, then prefix-name.scope", "/system.slice/docker-abc.scope", path);
	cgroup_systemd_path("a-b-c.slice:p:n", true, path, sizeof(path), why, sizeof(why));
	tap_str(&t, "... a nested slice expanded (systemd.slice(5))", "/a.slice/a-b.slice/a-b-c.slice/p-n.scope", path);
	cgroup_systemd_path(":libpod:x", false, path, sizeof(path), why, sizeof(why));
	tap_str(&t, "... no slice: user.slice when not root", "/user.slice/libpod-x.scope", path);
	cgroup_systemd_path(":libpod:x", true, path, sizeof(path), why, sizeof(why));
	tap_str(&t, "... system.slice as root", "/system.slice/libpod-x.scope", path);
	cgroup_systemd_path("-.slice:p:k8s.slice", true, path, sizeof(path), why, sizeof(why));
	tap_str(&t, "... the root slice, and a name that is a slice itself", "/k8s.slice", path);
	cgroup_systemd_path("system.slice::n", true, path, sizeof(path), why, sizeof(why));
	tap_str(&t, "... no prefix: NAME.scope", "/system.slice/n.scope", path);
	tap_int(&t, "a path (not slice:prefix:name): refused", -1,
		cgroup_systemd_path("/a/b", true, path, sizeof(path), why, sizeof(why)));
	tap_ok(&t, strstr(why, "slice:prefix:name") != NULL, "... naming the form");
	tap_int(&t, "four parts: refused", -1, cgroup_systemd_path("a.slice:b:c:d", true, path, sizeof(path), why, sizeof(why)));
	tap_int(&t, "no name: refused", -1, cgroup_systemd_path("a.slice:b:", true, path, sizeof(path), why, sizeof(why)));
	tap_int(&t, "a slice without .slice: refused", -1, cgroup_systemd_path("system:b:c", true, path, sizeof(path), why, sizeof(why)));
	tap_int(&t, "a slice with a slash (../x.slice): refused", -1,
		cgroup_systemd_path("../x.slice:b:c", true, path, sizeof(path), why, sizeof(why)));
	tap_int(&t, "a name with a slash: refused", -1, cgroup_systemd_path("x.slice:b:../../c", true, path, sizeof(path), why, sizeof(why)));
	tap_int(&t, "a-.slice, a--b.slice: refused", -2,
		cgroup_systemd_path("a-.slice:b:c", true, path, sizeof(path), why, sizeof(why)) +
		cgroup_systemd_path("a--b.slice:b:c", true, path, sizeof(path), why, sizeof(why)));
	tap_int(&t, "too long for out: refused", -1, cgroup_systemd_path("system.slice:docker:abc", true, path, 10, why, sizeof(why)));
	return tap_done(&t);
}
