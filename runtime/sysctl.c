/* sysctl.c - see sysctl.h */
#include "sysctl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "cleanup.h"

/* /proc/sys/ and key with '.' and '/' swapped (sysctl(8)) into path.  Returns 0,
 * or -1: too long. */
static int key_path(const char *key, size_t klen, char *path, size_t len)
{
	static const char prefix[] = "/proc/sys/";

	if (sizeof(prefix) + klen > len)
		return -1;
	memcpy(path, prefix, sizeof(prefix) - 1);
	for (size_t i = 0; i < klen; i++)
		path[sizeof(prefix) - 1 + i] = key[i] == '.' ? '/' : key[i] == '/' ? '.' : key[i];
	path[sizeof(prefix) - 1 + klen] = '\0';
	return 0;
}

/* True if our network namespace is owned by a user namespace other than ours
 * (ioctl_ns(2) NS_GET_USERNS; EPERM: one above ours): joined by path, its
 * maker's. */
static bool net_of_other_owner(void)
{
	_cleanup_close_ int net = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	_cleanup_close_ int user = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
	_cleanup_close_ int owner = net >= 0 ? ioctl(net, NS_GET_USERNS) : -1;
	struct stat a, b;

	if (net >= 0 && owner < 0 && errno == EPERM)
		return true; /* an owner above ours, out of our sight */
	return owner >= 0 && user >= 0 && fstat(owner, &a) == 0 && fstat(user, &b) == 0 &&
	       (a.st_dev != b.st_dev || a.st_ino != b.st_ino);
}

/* Is value (a number) above what the file at path holds now? */
static bool above_current(const char *path, const char *value)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	char buf[32];
	ssize_t n;

	if (fd < 0 || (n = read(fd, buf, sizeof(buf) - 1)) <= 0)
		return false; /* the write says what is wrong */
	buf[n] = '\0';
	return strtoull(value, NULL, 10) > strtoull(buf, NULL, 10);
}

int sysctl_apply(const struct strv *kv, uint64_t ipc_bytes, struct nsrun_error *err)
{
	/* what ucounts.c sets from the memory limit, and msgmnb, by which it divides it */
	static const char *const ipc_limited[] = { "kernel.shmmax=", "kernel.shmall=", "kernel.msgmni=",
						   "kernel.msgmnb=", NULL };

	for (size_t i = 0; i < kv->n; i++) {
		const char *eq = strchr(kv->v[i], '='), *value = eq + 1;
		int klen = (int)(eq - kv->v[i]);
		char path[PATH_MAX];
		size_t vlen = strlen(value);
		_cleanup_close_ int fd = -1;

		if (key_path(kv->v[i], (size_t)klen, path, sizeof(path)) < 0)
			return error_set_stage(err, STAGE_CONTAINER, ENAMETOOLONG, "linux.sysctl: %.*s", klen, kv->v[i]);
		for (size_t k = 0; ipc_bytes && ipc_limited[k]; k++)
			if (strncmp(kv->v[i], ipc_limited[k], (size_t)klen + 1) == 0 && above_current(path, value))
				return error_set_stage(err, STAGE_CONTAINER, 0, "linux.sysctl: %.*s: %s is above nsrun's "
						       "limit for System V IPC under the memory limit", klen,
						       kv->v[i], value);
		fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
		/* podman adds it to every run of a network of its own (containers.conf's
		 * default_sysctls), whose namespace it makes: owned by its user namespace,
		 * above the container's, whose root may not write its keys (net/sysctl_net.c:
		 * CAP_NET_ADMIN over the owner).  Unprivileged ping then stays as the
		 * namespace has it (off): said, not an error */
		if (fd < 0 && (errno == EACCES || errno == EPERM) && strncmp(kv->v[i], "net.ipv4.ping_group_range=", (size_t)klen + 1) == 0 &&
		    net_of_other_owner()) {
			error_warn(stderr, "linux.sysctl: net.ipv4.ping_group_range: not set: the network "
				"namespace joined is owned by a user namespace above the container's, whose root may not "
				"write it (unprivileged ping stays off)");
			continue;
		}
		if (fd < 0)
			return error_set_stage(err, STAGE_CONTAINER, errno, "linux.sysctl: %.*s: open %s%s", klen,
					       kv->v[i], path, errno == ENOENT ? " (no such key in the container's "
					       "namespace)" : errno == EROFS ? " (a read-only /proc/sys: an outer "
					       "sandbox's)" : "");
		if (write(fd, value, vlen) != (ssize_t)vlen)
			return error_set_stage(err, STAGE_CONTAINER, errno, "linux.sysctl: %.*s: write \"%s\"", klen,
					       kv->v[i], value);
	}
	return 0;
}
