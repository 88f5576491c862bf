/* floor-run.c - the kernel floor of a container start, part 2: only the steps the
 * kernel makes unavoidable for nsrun's isolation, in the plainest code.
 *
 *   clone(user, mount, pid, net, ipc, uts, cgroup namespaces)
 *   parent: setgroups deny, gid_map and uid_map (65534 inside = the caller), go
 *   child (pid 1): propagation private; the rootfs bound onto itself, read-only,
 *          nosuid, nodev (mount_setattr); proc; a tmpfs /dev with null, zero,
 *          full, random, urandom, tty bound in; a tmpfs /tmp; pivot_root(".", ".")
 *          and the old root detached; capabilities cleared; no_new_privs; exec.
 *   parent: waits, exits with the payload's status.
 *
 * Left out on purpose (nsrun does them, the floor does not): a separate init
 * process and a second user namespace for the payload, /proc masks, devpts and
 * /dev/shm, loopback up, hostname, rlimits, a seccomp filter, fd hygiene, the
 * supervisor's deadline and report.  The rootfs must have /proc, /dev, /tmp and
 * the device files' mount points are made in the /dev tmpfs.
 *
 * Usage: floor-run ROOTFS CMD [ARG...]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define NS_FLAGS (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | \
		  CLONE_NEWCGROUP)
#define PAYLOAD_ID 65534

static void die(const char *what)
{
	fprintf(stderr, "floor-run: %s: %s\n", what, strerror(errno));
	_exit(125);
}

static void write_to(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		die(path);
	close(fd);
}

static void bind_dev(const char *name)
{
	char from[64], to[64];
	int fd;

	snprintf(from, sizeof(from), "/dev/%s", name);
	snprintf(to, sizeof(to), "dev/%s", name);
	fd = open(to, O_CREAT | O_WRONLY | O_CLOEXEC, 0666);
	if (fd < 0)
		die(to);
	close(fd);
	if (mount(from, to, NULL, MS_BIND, NULL) < 0)
		die(from);
}

static void child(const char *rootfs, char **argv, int go_fd)
{
	static const char *const devs[] = { "null", "zero", "full", "random", "urandom", "tty", NULL };
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV };
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct caps[2];
	char c;

	if (read(go_fd, &c, 1) != 1) /* the id maps are written */
		_exit(125);
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		die("make / private");
	if (mount(rootfs, rootfs, NULL, MS_BIND | MS_REC, NULL) < 0)
		die("bind the rootfs");
	if (chdir(rootfs) < 0)
		die("chdir to the rootfs");
	if (syscall(SYS_mount_setattr, AT_FDCWD, ".", AT_RECURSIVE, &attr, sizeof(attr)) < 0)
		die("make the rootfs read-only");
	if (mount("proc", "proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		die("mount proc");
	if (mount("tmpfs", "dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k") < 0)
		die("mount /dev");
	for (int i = 0; devs[i]; i++)
		bind_dev(devs[i]);
	attr.attr_set = MOUNT_ATTR_RDONLY;
	if (syscall(SYS_mount_setattr, AT_FDCWD, "dev", 0, &attr, sizeof(attr)) < 0)
		die("make /dev read-only");
	if (mount("tmpfs", "tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=64m") < 0)
		die("mount /tmp");
	if (syscall(SYS_pivot_root, ".", ".") < 0)
		die("pivot_root");
	if (umount2(".", MNT_DETACH) < 0)
		die("detach the old root");
	if (chdir("/") < 0)
		die("chdir /");
	memset(caps, 0, sizeof(caps));
	for (int cap = 0; cap <= CAP_LAST_CAP; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			die("drop the bounding set");
	if (syscall(SYS_capset, &hdr, caps) < 0)
		die("capset");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		die("no_new_privs");
	execvp(argv[0], argv);
	die(argv[0]);
}

int main(int argc, char **argv)
{
	char path[64], map[64];
	int go[2], status;
	long pid;

	if (argc < 3) {
		fprintf(stderr, "usage: floor-run ROOTFS CMD [ARG...]\n");
		return 125;
	}
	if (pipe2(go, O_CLOEXEC) < 0)
		die("pipe");
	pid = syscall(SYS_clone, (unsigned long)NS_FLAGS | SIGCHLD, NULL, NULL, NULL, 0);
	if (pid < 0)
		die("clone");
	if (pid == 0) {
		close(go[1]);
		child(argv[1], argv + 2, go[0]);
	}
	close(go[0]);
	snprintf(path, sizeof(path), "/proc/%ld/setgroups", pid);
	write_to(path, "deny");
	snprintf(path, sizeof(path), "/proc/%ld/gid_map", pid);
	snprintf(map, sizeof(map), "%d %d 1\n", PAYLOAD_ID, (int)getegid());
	write_to(path, map);
	snprintf(path, sizeof(path), "/proc/%ld/uid_map", pid);
	snprintf(map, sizeof(map), "%d %d 1\n", PAYLOAD_ID, (int)geteuid());
	write_to(path, map);
	if (write(go[1], "g", 1) != 1)
		die("start the child");
	if (waitpid((pid_t)pid, &status, 0) < 0)
		die("waitpid");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
