/* ns.c - see ns.h */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <linux/netlink.h>
#include <linux/sched.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
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
	/* an outer filter that kills clone3 would end nsrun here (sys_clone3_usable):
	 * then clone, and the caller moves the child into the cgroup */
	if (cgroup_fd >= 0 && sys_clone3_usable(NULL, 0)) {
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
		if (!sys_call_refused(errno) && errno != E2BIG && errno != EINVAL)
			return diag_userns(errno, "/proc", err);
	}
	/* raw syscall, no stack: fork semantics; x86-64 argument order (flags, stack, ptid, ctid, tls) */
	pid = syscall(SYS_clone, (unsigned long)flags | SIGCHLD, NULL, NULL, NULL, 0);

	if (pid < 0)
		return diag_userns(errno, "/proc", err);
	return (pid_t)pid;
}

long ns_fdinfo_pid(const char *fdinfo)
{
	const char *line = strstr(fdinfo, "Pid:");
	char *end;
	long pid;

	/* "Pid:" at the start of a line (not the "NSpid:" line) */
	while (line && line != fdinfo && line[-1] != '\n')
		line = strstr(line + 4, "Pid:");
	if (!line)
		return -1;
	pid = strtol(line + 4, &end, 10);
	return end == line + 4 || pid <= 0 ? -1 : pid;
}

/* The number of pid in the pid namespace of the /proc mounted here: it is the
 * one /proc/N names.  A pidfd's fdinfo prints Pid in that namespace (kernel/pid.c
 * pidfd_show_fdinfo, Linux 5.3), whichever ours is: under `bwrap --unshare-pid`
 * without --proc, /proc is the host's and our child's number there is not the
 * one clone returned.  Returns the number, or -1 with errno: ESRCH when pid has
 * none there (the /proc is of a pid namespace that does not contain ours). */
long ns_proc_pid(pid_t pid)
{
	_cleanup_close_ int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	_cleanup_close_ int fd = -1;
	/* on the stack, not malloc'd: the supervisor calls this right after its clone,
	 * when each heap page malloc touches is a copy-on-write fault */
	char path[64], text[512];
	size_t len = 0;
	ssize_t r;
	long n;

	if (pidfd < 0) {
		/* no pidfd (before 5.3, or a filter): the numbers agree if /proc is ours */
		char self[32];
		ssize_t k = readlink("/proc/self", self, sizeof(self) - 1);
		if (k > 0) {
			self[k] = '\0';
			if (atol(self) == getpid())
				return pid;
		}
		errno = ESRCH;
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	while (fd >= 0 && len < sizeof(text) - 1 &&
	       ((r = read(fd, text + len, sizeof(text) - 1 - len)) > 0 || (r < 0 && errno == EINTR)))
		len += r > 0 ? (size_t)r : 0;
	if (fd < 0 || len == 0) {
		errno = ESRCH;
		return -1;
	}
	text[len] = '\0';
	n = ns_fdinfo_pid(text);
	if (n < 0)
		errno = ESRCH;
	return n;
}

long ns_status_nspid(const char *status, int k, int *levels)
{
	const char *p = strstr(status, "\nNSpid:");
	long v = -1;
	int i = 0;

	if (levels)
		*levels = 0;
	if (!p)
		return -1;
	p += strlen("\nNSpid:");
	for (;;) {
		char *end;
		long x;

		while (*p == ' ' || *p == '\t')
			p++;
		x = strtol(p, &end, 10);
		if (end == p)
			break;
		if (i == k || k < 0)
			v = x;
		i++;
		p = end;
	}
	if (levels)
		*levels = i;
	return v;
}

long ns_own_pid(long proc_pid)
{
	_cleanup_free_ char *self = NULL, *other = NULL;
	char path[64];
	int levels;
	long n;

	if (read_file("/proc/thread-self/status", 8192, &self, NULL) < 0)
		return -1;
	ns_status_nspid(self, 0, &levels);
	snprintf(path, sizeof(path), "/proc/%ld/status", proc_pid);
	if (levels < 1 || read_file(path, 8192, &other, NULL) < 0) {
		errno = ESRCH;
		return -1;
	}
	n = ns_status_nspid(other, levels - 1, NULL);
	if (n < 0)
		errno = ESRCH;
	return n;
}

/* Writes s to /proc/N/name; the error names the file. */
static int write_map(long n, const char *name, const char *s, bool optional, struct nsrun_error *err)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%ld/%s", n, name);
	if (write_file(path, s) < 0 && !(optional && errno == ENOENT)) {
		error_set_stage(err, STAGE_ID_MAPS, errno, "write %s", path);
		if (errno == EROFS)
			err->hint = "the /proc here is read-only (an outer sandbox's --ro-bind /proc or --remount-ro "
				    "/proc): mount a /proc of nsrun's own there (bubblewrap: --proc /proc), or "
				    "--isolation reduced, which runs unmapped";
		else if (errno == EACCES)
			err->hint = NS_MAPS_EACCES_HINT;
		return -1;
	}
	return 0;
}

bool ns_id_maps_refused(int errnum)
{
	return errnum == EACCES || errnum == EPERM || errnum == EROFS;
}

int ns_write_id_maps(pid_t pid, uid_t host_uid, gid_t host_gid, struct nsrun_error *err)
{
	char map[64];
	long n = ns_proc_pid(pid);

	if (n < 0) {
		error_set_stage(err, STAGE_ID_MAPS, errno, "write the id maps of the container (pid %d): the /proc "
				"mounted here is of a pid namespace in which nsrun's processes have no number",
				(int)pid);
		err->hint = "mount a /proc of nsrun's own pid namespace there (bubblewrap: --proc /proc)";
		return -1;
	}
	if (write_map(n, "setgroups", "deny", true, err) < 0)
		return -1;
	snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)host_gid);
	if (write_map(n, "gid_map", map, false, err) < 0)
		return -1;
	snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)host_uid);
	return write_map(n, "uid_map", map, false, err);
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

/* The sockets lo can be brought up through, in order: any socket of this network
 * namespace takes the interface ioctls (net/socket.c sock_ioctl falls back to
 * dev_ioctl for every family).  Outer filters leave different ones: Claude Code's
 * sandbox-runtime denies socket(AF_UNIX) but not a stream socketpair; Codex's
 * linux-sandbox denies every family but AF_UNIX. */
enum lo_socket { LO_UNIX_DGRAM, LO_UNIX_PAIR, LO_NETLINK, LO_INET, LO_INET6, LO__COUNT };

static const char *const lo_socket_names[LO__COUNT] = {
	"socket(AF_UNIX)", "socketpair(AF_UNIX)", "socket(AF_NETLINK)", "socket(AF_INET)", "socket(AF_INET6)",
};

static int lo_socket_open(enum lo_socket kind)
{
	int sv[2];

	switch (kind) {
	case LO_UNIX_DGRAM:
		return socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	case LO_UNIX_PAIR:
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
			return -1;
		close(sv[1]);
		return sv[0];
	case LO_NETLINK:
		return socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	case LO_INET:
		return socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	case LO_INET6:
		return socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	case LO__COUNT:
		break;
	}
	errno = EINVAL;
	return -1;
}

int ns_loopback_up(const char **via, struct nsrun_error *err)
{
	char tried[LO__COUNT * 48] = "";
	_cleanup_close_ int fd = -1;
	struct ifreq ifr;
	int k, last = 0;

	for (k = 0; k < LO__COUNT; k++) {
		size_t n = strlen(tried);
		fd = lo_socket_open((enum lo_socket)k);
		if (fd >= 0)
			break;
		last = errno;
		snprintf(tried + n, sizeof(tried) - n, "%s%s: %s", n ? ", " : "", lo_socket_names[k], strerror(errno));
	}
	if (fd < 0)
		return error_set(err, last, "no socket to bring lo up through (%s)", tried);
	if (via)
		*via = lo_socket_names[k];
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		return error_set(err, errno, "read the flags of lo");
	/* up already: a joined network namespace (netjoin.h), where we may not change it */
	if ((ifr.ifr_flags & (IFF_UP | IFF_RUNNING)) == (IFF_UP | IFF_RUNNING))
		return 0;
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		return error_set(err, errno, "bring lo up");
	return 0;
}

/* True if id is mapped in this process's user namespace (user_namespaces(7)). */
static bool id_is_mapped(const char *map_file, unsigned id)
{
	FILE *f = fopen(map_file, "re");
	unsigned inside, outside, count;
	bool found = false;

	if (!f)
		return false;
	while (!found && fscanf(f, "%u %u %u", &inside, &outside, &count) == 3)
		found = id >= inside && id - inside < count;
	fclose(f);
	return found;
}

/* True if the kernel exempts our real uid from RLIMIT_NPROC as it exempts only
 * host root (kernel/fork.c copy_process: p->real_cred->user != INIT_USER, in a
 * user namespace without capabilities in the initial one): a child sets the
 * limit to 0 and forks once. */
static bool nproc_exempt(void)
{
	int status;
	pid_t pid = fork();

	/* EAGAIN: RLIMIT_NPROC (a low one of the caller's, prlimit --nproc=15) already
	 * holds us, which it never does host root; anything else: cannot tell, assume
	 * the worst */
	if (pid < 0)
		return errno != EAGAIN;
	if (pid == 0) {
		struct rlimit none = { 0, 0 };
		pid_t g;

		if (setrlimit(RLIMIT_NPROC, &none) < 0)
			_exit(2);
		g = fork();
		if (g == 0)
			_exit(0);
		_exit(g > 0 ? 1 : 0);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return true;
	return !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

bool ns_is_host_root(void)
{
	unsigned inside, outside, count, euid = (unsigned)geteuid();
	bool zero = false, initial = false;
	FILE *f = fopen("/proc/self/uid_map", "re");

	if (!f)
		return euid == 0;       /* cannot tell: assume the worst for root */
	while (!zero && fscanf(f, "%u %u %u", &inside, &outside, &count) == 3) {
		zero = euid >= inside && euid - inside < count && outside + (euid - inside) == 0;
		initial = inside == 0 && outside == 0 && count == UINT32_MAX;
	}
	fclose(f);
	if (!zero)
		return false;
	/* our uid is the parent namespace's 0: host root, or root of an intermediate
	 * namespace (unprivileged bwrap maps 0 -> the caller, then UID -> 0 below it).
	 * In the initial namespace nothing needs proving. */
	if (initial)
		return true;
	return nproc_exempt();
}

int ns_host_ids(uid_t *uid, gid_t *gid, struct nsrun_error *err)
{
	*uid = geteuid();
	*gid = getegid();
	if (*uid == 0 && id_is_mapped("/proc/self/uid_map", NS_OVERFLOW_ID) &&
	    id_is_mapped("/proc/self/gid_map", NS_OVERFLOW_ID)) {
		*uid = NS_OVERFLOW_ID;
		*gid = NS_OVERFLOW_ID;
		return 0;
	}
	if (!ns_is_host_root())
		return 0;
	error_set(err, EPERM, "the payload's host uid: uid %u here is host root (this user namespace maps it to uid 0 "
		  "outside%s): the payload would run as host root, which no limit here contains", (unsigned)*uid,
		  *uid == 0 ? ", and 65534, what root's containers map to, is not mapped" : "");
	err->hint = "run nsrun as an unprivileged user, or start the outer sandbox as one (runuser -u USER -- "
		    "bwrap ...) or with uid 65534 mapped in it";
	return -1;
}
