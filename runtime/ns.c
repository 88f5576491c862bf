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
#include "diagnose.h"
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
			return diag_userns(errno, "/proc", err);
	}
	/* raw syscall, no stack: fork semantics; x86-64 argument order (flags, stack, ptid, ctid, tls) */
	pid = syscall(SYS_clone, (unsigned long)flags | SIGCHLD, NULL, NULL, NULL, 0);

	if (pid < 0)
		return diag_userns(errno, "/proc", err);
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

	/* the second level a run needs: nested 32 deep, this is the one refused (ENOSPC,
	 * kernel/user_namespace.c create_user_ns); diag_refine gives the fix */
	if (unshare(CLONE_NEWUSER) < 0)
		return error_set(err, errno, "create the payload's user namespace%s", errno == ENOSPC ?
				 ": the container's is nested 32 deep (the kernel's limit), or "
				 "user.max_user_namespaces is reached" : "");
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
