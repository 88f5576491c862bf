/* Unit tests of the diagnoses (diagnose.c) on a directory that imitates /proc:
 * the sysctls, self/status, self/uid_map, self/attr/apparmor/current and
 * self/mounts a host can have, including an AppArmor-restricted Ubuntu, which
 * this machine is not. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diagnose.h"
#include "tap.h"

static char root[64];

static void put(const char *rel, const char *text)
{
	char path[256], dir[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(p - path), path);
		mkdir(dir, 0755);
	}
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(2);
	}
	fputs(text, f);
	fclose(f);
}

static void drop(const char *rel)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	unlink(path);
}

static bool has(const char *s, const char *part)
{
	return s && strstr(s, part);
}

static void show(const struct nsrun_error *e)
{
	printf("#   msg:  %s\n#   hint: %s\n", e->msg, e->hint ? e->hint : "(none)");
}

static const char proc_line[] = "proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\n";
static const char root_line[] = "/dev/sda1 / ext4 rw,relatime 0 0\n";

int main(void)
{
	struct tap t = { 0 };
	struct nsrun_error e = { 0 };
	struct diag_host h;
	char covered[200];
	char cmd[128];

	snprintf(root, sizeof(root), "/tmp/nsrun-test-diag.XXXXXX");
	if (!mkdtemp(root))
		return 2;
	put("sys/user/max_user_namespaces", "15000\n");
	put("sys/kernel/apparmor_restrict_unprivileged_userns", "1\n");
	put("self/attr/apparmor/current", "unconfined\n");
	put("self/status", "Name:\tnsrun\nNoNewPrivs:\t0\nSeccomp:\t0\nSeccomp_filters:\t0\n");
	put("self/uid_map", "         0          0 4294967295\n");

	/* Ubuntu 23.10+: the sysctl is 1 and no profile names nsrun */
	diag_read_host(root, &h);
	tap_int(&t, "reads user.max_user_namespaces", 15000, h.max_user_namespaces);
	tap_int(&t, "reads kernel.apparmor_restrict_unprivileged_userns", 1, h.apparmor_restrict);
	tap_int(&t, "no kernel.unprivileged_userns_clone here: -1", -1, h.unprivileged_userns_clone);
	tap_str(&t, "reads the AppArmor label", "unconfined", h.apparmor_label);
	tap_ok(&t, !h.nested_userns, "the identity uid_map is the initial user namespace");
	tap_ok(&t, diag_apparmor_blocks(&h), "AppArmor blocks an unconfined nsrun");
	diag_userns(EPERM, root, &e);
	tap_ok(&t, has(e.msg, "AppArmor") && has(e.msg, "kernel.apparmor_restrict_unprivileged_userns is 1"),
	       "EPERM under AppArmor: names the sysctl");
	tap_ok(&t, has(e.msg, "no profile allows them to nsrun"), "  ... and the missing profile");
	tap_ok(&t, access(DIAG_APPARMOR_PROFILE, F_OK) == 0 ?
	       has(e.hint, "apparmor_parser -r " DIAG_APPARMOR_PROFILE) : has(e.hint, "sudo make install"),
	       "  ... and the one command that fixes it");
	tap_int(&t, "  ... at the clone stage", STAGE_CLONE, e.stage);
	show(&e);

	/* Ubuntu 24.04 lets the namespace be made but denies what follows: a mount */
	memset(&e, 0, sizeof(e));
	error_set_stage(&e, STAGE_MOUNT, EPERM, "bind the rootfs");
	diag_refine(&e, root);
	tap_ok(&t, has(e.msg, "bind the rootfs: AppArmor restricts") && e.hint, "a mount's EPERM under AppArmor says so");

	/* with nsrun's profile loaded the label names it: not AppArmor's doing */
	put("self/attr/apparmor/current", "nsrun (unconfined)\n");
	diag_read_host(root, &h);
	tap_ok(&t, !diag_apparmor_blocks(&h), "the profile's label: AppArmor allows it");
	diag_userns(EPERM, root, &e);
	tap_ok(&t, !has(e.msg, "AppArmor"), "  ... and the diagnosis does not blame it");
	drop("sys/kernel/apparmor_restrict_unprivileged_userns");

	/* Debian's own switch */
	put("sys/kernel/unprivileged_userns_clone", "0\n");
	diag_userns(EPERM, root, &e);
	tap_ok(&t, has(e.msg, "kernel.unprivileged_userns_clone is 0") &&
	       has(e.hint, "sysctl -w kernel.unprivileged_userns_clone=1"), "unprivileged_userns_clone 0: cause and fix");
	drop("sys/kernel/unprivileged_userns_clone");

	put("sys/user/max_user_namespaces", "0\n");
	diag_userns(ENOSPC, root, &e);
	tap_ok(&t, has(e.msg, "user.max_user_namespaces is 0") && has(e.hint, "sysctl -w user.max_user_namespaces="),
	       "max_user_namespaces 0: cause and fix");

	/* inside bwrap --disable-userns: ours reads the default, the outer one is 0 */
	put("sys/user/max_user_namespaces", "2147483647\n");
	put("self/uid_map", "         0       1001          1\n");
	diag_userns(ENOSPC, root, &e);
	tap_ok(&t, has(e.msg, "an outer user namespace allows no more") && has(e.msg, "bubblewrap --disable-userns"),
	       "ENOSPC in a nested namespace: blames the outer limit");
	tap_ok(&t, has(e.hint, "without --disable-userns"), "  ... and says how to lift it");
	show(&e);

	put("self/status", "Name:\tnsrun\nSeccomp:\t2\nSeccomp_filters:\t3\n");
	diag_userns(EPERM, root, &e);
	tap_ok(&t, has(e.msg, "3 seccomp filter(s)") && has(e.hint, "seccomp=unconfined"),
	       "EPERM under a seccomp filter: names the filters and the fix");

	/* Podman's default profile: sethostname refused without CAP_SYS_ADMIN */
	memset(&e, 0, sizeof(e));
	error_set_stage(&e, STAGE_CONTAINER, EPERM, "set the hostname \"nsrun\"");
	diag_refine(&e, root);
	tap_ok(&t, has(e.msg, "set the hostname \"nsrun\": denied by the 3 seccomp filter(s)") &&
	       has(e.hint, "--cap-add SYS_ADMIN"), "EPERM in the container under a filter: names it and the fix");
	put("self/status", "Name:\tnsrun\nSeccomp:\t0\nSeccomp_filters:\t0\n");
	memset(&e, 0, sizeof(e));
	error_set_stage(&e, STAGE_CONTAINER, EPERM, "set the hostname \"nsrun\"");
	diag_refine(&e, root);
	tap_str(&t, "  ... and without a filter leaves the error as it is", "set the hostname \"nsrun\"", e.msg);

	/* /proc as container engines leave it */
	snprintf(cmd, sizeof(cmd), "%s%s", root_line, proc_line);
	put("self/mounts", cmd);
	tap_ok(&t, diag_proc_visible(root, covered, sizeof(covered)), "a bare /proc is fully visible");
	put("self/mounts", "/dev/sda1 / ext4 rw 0 0\n"
	    "proc /proc proc rw 0 0\n"
	    "binfmt_misc /proc/sys/fs/binfmt_misc binfmt_misc rw 0 0\n");
	tap_ok(&t, diag_proc_visible(root, covered, sizeof(covered)), "binfmt_misc (an empty directory) does not hide it");
	put("self/mounts", "/dev/sda1 / ext4 rw 0 0\n"
	    "proc /proc proc rw 0 0\n"
	    "proc /proc/sys proc ro 0 0\n"
	    "udev /proc/kcore devtmpfs rw 0 0\n");
	tap_ok(&t, !diag_proc_visible(root, covered, sizeof(covered)), "masked paths: not fully visible");
	tap_str(&t, "  ... and which", "/proc/sys, /proc/kcore", covered);
	memset(&e, 0, sizeof(e));
	error_set_stage(&e, STAGE_MOUNT, EPERM, "mount proc on \"/proc\"");
	diag_refine(&e, root);
	tap_ok(&t, has(e.msg, "the outer /proc has paths mounted over (/proc/sys, /proc/kcore)") &&
	       has(e.hint, "systempaths=unconfined"), "a run's /proc EPERM: cause and fix");
	show(&e);
	put("self/mounts", "/dev/sda1 / ext4 rw 0 0\n"
	    "proc /proc proc rw 0 0\n"
	    "proc /proc/sys proc ro 0 0\n"
	    "proc /run/hostproc proc rw 0 0\n");
	tap_ok(&t, diag_proc_visible(root, covered, sizeof(covered)), "another whole proc mount is enough");
	put("self/mounts", "/dev/sda1 / ext4 rw 0 0\n"
	    "proc /proc proc rw 0 0\n"
	    "proc /proc/sys proc ro 0 0\n"
	    "proc /srv/rootfs/proc proc ro,relatime 0 0\n");
	tap_ok(&t, !diag_proc_visible(root, covered, sizeof(covered)), "  ... but not a read-only one");
	memset(&e, 0, sizeof(e));
	error_set_stage(&e, STAGE_MOUNT, EACCES, "mount proc on \"/proc\"");
	diag_refine(&e, root);
	tap_str(&t, "other errors stay as they are", "mount proc on \"/proc\"", e.msg);

	if (strncmp(root, "/tmp/nsrun-test-diag.", 21) == 0 && tap_remove_tree(root) < 0)
		return 2;
	return tap_done(&t);
}
