/* ns.c - see ns.h */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <linux/sched.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "ns.h"
#include "sys.h"

int ns_clone_flags(void)
{
	int flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS;
	struct stat st;

	if (stat("/proc/self/ns/cgroup", &st) == 0)
		flags |= CLONE_NEWCGROUP;
	return flags;
}

/* Reads a small integer sysctl; returns -1 when it is absent or unreadable. */
static long read_sysctl(const char *path)
{
	char buf[32] = "";
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || read(fd, buf, sizeof(buf) - 1) <= 0)
		return -1;
	return strtol(buf, NULL, 10);
}

/* The seccomp mode of this process (proc(5) "Seccomp:"), or -1. */
static int own_seccomp_mode(void)
{
	char *status = NULL;
	const char *line;
	int mode = -1;

	if (read_file("/proc/self/status", 1 << 16, &status, NULL) < 0)
		return -1;
	line = strstr(status, "\nSeccomp:");
	if (line)
		mode = atoi(line + 9);
	free(status);
	return mode;
}

int ns_diagnose_userns(int errnum, struct nsrun_error *err)
{
	long max = read_sysctl("/proc/sys/user/max_user_namespaces");
	long clone_ok = read_sysctl("/proc/sys/kernel/unprivileged_userns_clone");
	long apparmor = read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
	int seccomp = own_seccomp_mode();

	err->stage = STAGE_CLONE;
	if (max == 0) {
		error_set(err, errnum, "cannot create a user namespace: user.max_user_namespaces is 0");
		err->hint = "allow them, as root: sysctl -w user.max_user_namespaces=15000 "
			    "(or raise it in the outer user namespace that set it to 0)";
	} else if (errnum == ENOSPC) {
		error_set(err, errnum, "cannot create a user namespace: the limit user.max_user_namespaces (%ld) "
			  "is reached, or they are nested 32 deep", max);
		err->hint = "raise it, as root: sysctl -w user.max_user_namespaces=15000";
	} else if (errnum == EUSERS) {
		error_set(err, errnum, "cannot create a user namespace: they are nested 32 deep, the kernel's limit");
	} else if (errnum == EPERM && clone_ok == 0) {
		error_set(err, errnum, "cannot create a user namespace: kernel.unprivileged_userns_clone is 0");
		err->hint = "allow them, as root: sysctl -w kernel.unprivileged_userns_clone=1";
	} else if (errnum == EPERM && apparmor == 1) {
		error_set(err, errnum, "cannot create a user namespace: AppArmor restricts them "
			  "(kernel.apparmor_restrict_unprivileged_userns is 1) and nsrun has no AppArmor profile");
		err->hint = "install nsrun's AppArmor profile (make install), "
			    "or as root: sysctl -w kernel.apparmor_restrict_unprivileged_userns=0";
	} else if (errnum == EPERM && seccomp == 2) {
		error_set(err, errnum, "cannot create a user namespace: this process runs under a seccomp filter "
			  "(Seccomp: 2 in /proc/self/status) that denies it");
		err->hint = "an outer sandbox (a container engine, bubblewrap, nsrun) forbids nested namespaces: "
			    "allow them there (for nsrun: --security-opt seccomp=unconfined)";
	} else {
		error_set(err, errnum, "cannot create the container's namespaces");
	}
	return -1;
}

pid_t ns_clone(int flags, int cgroup_fd, bool *in_cgroup, struct nsrun_error *err)
{
	long pid;

	*in_cgroup = false;
	if (cgroup_fd >= 0) {
		struct clone_args args = {
			.flags = (uint64_t)flags | CLONE_INTO_CGROUP,
			.exit_signal = SIGCHLD,
			.cgroup = (uint64_t)cgroup_fd,
		};
		pid = syscall(SYS_clone3, &args, sizeof(args));
		if (pid >= 0) {
			*in_cgroup = true;
			return (pid_t)pid;
		}
		if (errno != ENOSYS && errno != E2BIG && errno != EINVAL && errno != EPERM)
			return ns_diagnose_userns(errno, err);
	}
	/* raw syscall, no stack: fork semantics; x86-64 argument order (flags, stack, ptid, ctid, tls) */
	pid = syscall(SYS_clone, (unsigned long)flags | SIGCHLD, NULL, NULL, NULL, 0);

	if (pid < 0)
		return ns_diagnose_userns(errno, err);
	return (pid_t)pid;
}

int ns_write_id_maps(pid_t pid, uid_t host_uid, gid_t host_gid, struct nsrun_error *err)
{
	char path[64], map[64];

	snprintf(path, sizeof(path), "/proc/%d/setgroups", (int)pid);
	if (write_file(path, "deny") < 0 && errno != ENOENT)
		return error_set_stage(err, STAGE_ID_MAPS, errno, "write %s", path);
	snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)pid);
	snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)host_gid);
	if (write_file(path, map) < 0)
		return error_set_stage(err, STAGE_ID_MAPS, errno, "write %s", path);
	snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
	snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)host_uid);
	if (write_file(path, map) < 0)
		return error_set_stage(err, STAGE_ID_MAPS, errno, "write %s", path);
	return 0;
}

int ns_enter_payload_userns(uid_t uid, gid_t gid, struct nsrun_error *err)
{
	char map[64];

	if (unshare(CLONE_NEWUSER) < 0)
		return error_set(err, errno, "create the payload's user namespace");
	if (write_file("/proc/self/setgroups", "deny") < 0)
		return error_set(err, errno, "write /proc/self/setgroups");
	snprintf(map, sizeof(map), "%u 0 1\n", (unsigned)gid);
	if (write_file("/proc/self/gid_map", map) < 0)
		return error_set(err, errno, "write /proc/self/gid_map");
	snprintf(map, sizeof(map), "%u 0 1\n", (unsigned)uid);
	if (write_file("/proc/self/uid_map", map) < 0)
		return error_set(err, errno, "write /proc/self/uid_map");
	return 0;
}

int ns_become(uid_t uid, gid_t gid, struct nsrun_error *err)
{
	if (setresgid(gid, gid, gid) < 0)
		return error_set(err, errno, "setresgid %u", (unsigned)gid);
	if (setresuid(uid, uid, uid) < 0)
		return error_set(err, errno, "setresuid %u", (unsigned)uid);
	return 0;
}

int ns_loopback_up(struct nsrun_error *err)
{
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct ifreq ifr;

	if (fd < 0)
		return error_set(err, errno, "socket for bringing lo up");
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		return error_set(err, errno, "read the flags of lo");
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		return error_set(err, errno, "bring lo up");
	return 0;
}
