/* landlock.c - see landlock.h */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "landlock.h"
#include "sys.h"

/* The uapi of landlock.h up to ABI 6, spelled out: Debian 12's headers stop at ABI 2. */
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_RULE_NET_PORT 2              /* ABI 4 */
#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_MAKE_CHAR (1ULL << 6)
#define LL_FS_MAKE_BLOCK (1ULL << 11)
#define LL_FS_REFER (1ULL << 13)        /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14)     /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15)    /* ABI 5 */
#define LL_NET_BIND_TCP (1ULL << 0)     /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ULL << 1)  /* ABI 4 */
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)     /* ABI 6 */

struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

struct ll_net_port_attr {
	uint64_t allowed_access;
	uint64_t port;
};

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

int landlock_abi(void)
{
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);

	if (v <= 0)
		return 0;
	/* the other two calls, with a flag no kernel knows: add_rule checks it before
	 * anything else (EINVAL), so ENOSYS or EPERM is an outer filter's; restrict_self
	 * first says EPERM without no_new_privs, which is ours only where an outer
	 * sandbox set it (bwrap does).  A refusal would fail the payload's ruleset, so
	 * none is made, as on a kernel without Landlock. */
	if (syscall(SYS_landlock_add_rule, -1, 0, NULL, 0x80000000U) < 0 && sys_call_refused(errno))
		return 0;
	if (syscall(SYS_landlock_restrict_self, -1, 0x80000000U) < 0 && sys_call_refused(errno) &&
	    (errno != EPERM || prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1))
		return 0;
	return (int)v;
}

/* Every filesystem access right of ABI abi. */
static uint64_t fs_rights(int abi)
{
	uint64_t r = (1ULL << 13) - 1; /* ABI 1: EXECUTE .. MAKE_SYM */

	if (abi >= 2)
		r |= LL_FS_REFER;
	if (abi >= 3)
		r |= LL_FS_TRUNCATE;
	if (abi >= 5)
		r |= LL_FS_IOCTL_DEV;
	return r;
}

/* The rights that apply to a file that is not a directory: the kernel refuses a
 * rule on one that names others (EINVAL, landlock_append_fs_rule(), ACCESS_FILE). */
#define LL_FS_FILE_RIGHTS (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)

static int add_path(int ruleset, const char *path, uint64_t access, struct nsrun_error *err)
{
	struct ll_path_beneath_attr pb = { .allowed_access = access };
	_cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR || errno == EACCES ? 0 :
		       error_set(err, errno, "landlock: open \"%s\"", path);
	/* a volume may be a single file (-v HOST_FILE:CONTAINER_FILE:rw) */
	if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
		pb.allowed_access &= LL_FS_FILE_RIGHTS;
	pb.parent_fd = fd;
	if (syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &pb, 0) < 0)
		return error_set(err, errno, "landlock: add a rule for \"%s\"", path);
	return 0;
}

int landlock_apply(const struct nsrun_config *cfg, int abi, struct nsrun_error *err)
{
	const uint64_t all = fs_rights(abi);
	const uint64_t read = LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR;
	/* every right but making device nodes and device ioctls, which stay /dev's */
	const uint64_t writable = all & ~(LL_FS_MAKE_CHAR | LL_FS_MAKE_BLOCK | LL_FS_IOCTL_DEV);
	struct ll_ruleset_attr attr = { .handled_access_fs = all };
	size_t attr_size = sizeof(attr.handled_access_fs);
	_cleanup_close_ int ruleset = -1;

	if (abi <= 0)
		return 0;
	if (abi >= 4 && cfg->security.landlock_no_tcp) {
		/* no rule for any port: no TCP bind or connect at all, loopback included */
		attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
		attr_size = offsetof(struct ll_ruleset_attr, scoped);
	}
	if (abi >= 6) {
		/* no signals to, and no abstract sockets of, processes outside the payload */
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
		attr_size = sizeof(attr);
	}
	ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0);
	if (ruleset < 0)
		return error_set(err, errno, "landlock: create the ruleset (ABI %d)", abi);
	/* read and execute everywhere; device nodes (a read-only tmpfs holds them) stay
	 * usable; /proc's own permissions and masks decide what is written there.
	 * --read-only=false gives on / what a writable root needs: to make, change and
	 * remove files, directories, links, FIFOs and sockets; not device nodes
	 * (MAKE_CHAR, MAKE_BLOCK: the kernel still lets anyone make a 0:0 whiteout) nor
	 * device ioctls (IOCTL_DEV), which stay /dev's alone, as with a read-only root.
	 * A rule covers what is beneath it, mounts included, and cannot be narrowed
	 * below: granting only the entries that hold no mount would refuse a new file in
	 * / (Docker's `echo >/new` works) and in /etc, which holds nsrun's /etc/hosts.
	 * So a read-only volume, /sys and /dev rest on their read-only mount flags for
	 * the rest, which Landlock itself keeps: a restricted process may not mount(2),
	 * remount or pivot_root(2) at all, whatever its capabilities and seccomp filter
	 * (Documentation/userspace-api/landlock.rst, "Filesystem topology
	 * modification"); 33-multi-id.t tries it. */
	if (add_path(ruleset, "/", cfg->rootfs_writable ? writable : read, err) < 0)
		return -1;
	if (cfg->isolation == NSRUN_ISOLATION_MINIMAL) {
		/* the outer /dev and /proc: only the harmless nodes are writable */
		static const char *const nodes[] = { "/dev/null", "/dev/zero", "/dev/full" };
		for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++)
			if (add_path(ruleset, nodes[i], LL_FS_READ_FILE | LL_FS_WRITE_FILE, err) < 0)
				return -1;
	} else if (add_path(ruleset, "/dev", read | LL_FS_WRITE_FILE | (all & (LL_FS_IOCTL_DEV | LL_FS_TRUNCATE)),
			    err) < 0 ||
		   add_path(ruleset, "/proc", read | LL_FS_WRITE_FILE, err) < 0) {
		return -1;
	}
	if (cfg->isolation == NSRUN_ISOLATION_FULL || cfg->isolation == NSRUN_ISOLATION_AUTO) {
		/* our tmpfs mounts; in chroot mode /tmp is the image's and stays read-only */
		if (add_path(ruleset, "/tmp", writable, err) < 0 || add_path(ruleset, "/dev/shm", writable, err) < 0)
			return -1;
	}
	/* writable places as / under --read-only=false: no device node made, no device
	 * ioctl, in a volume either (a host directory may hold a node) */
	for (size_t i = 0; i < cfg->n_mounts; i++)
		if (cfg->mounts[i].rw && add_path(ruleset, cfg->mounts[i].destination, writable, err) < 0)
			return -1;
	for (size_t i = 0; i < cfg->n_tmpfs; i++)
		if (add_path(ruleset, cfg->tmpfs[i].destination, writable, err) < 0)
			return -1;
	/* landlock=strict: a service still listens on its published ports */
	for (size_t i = 0; attr.handled_access_net && i < cfg->n_publish; i++) {
		struct ll_net_port_attr np = { .allowed_access = LL_NET_BIND_TCP, .port = cfg->publish[i].container_port };
		if (syscall(SYS_landlock_add_rule, ruleset, LL_RULE_NET_PORT, &np, 0) < 0)
			return error_set(err, errno, "landlock: allow binding port %u", cfg->publish[i].container_port);
	}
	if (syscall(SYS_landlock_restrict_self, ruleset, 0) < 0)
		return error_set(err, errno, "landlock: enforce the ruleset");
	return 0;
}

int landlock_scope_signals(int abi, struct nsrun_error *err)
{
	struct ll_ruleset_attr attr = { .scoped = LL_SCOPE_SIGNAL };
	_cleanup_close_ int ruleset = -1;

	if (abi < 6)
		return error_set(err, ENOSYS, "landlock: signal scoping needs ABI 6, this kernel has %d", abi);
	ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (ruleset < 0)
		return error_set(err, errno, "landlock: create a signal-scoped ruleset");
	if (syscall(SYS_landlock_restrict_self, ruleset, 0) < 0)
		return error_set(err, errno, "landlock: enforce the signal-scoped ruleset");
	return 0;
}
