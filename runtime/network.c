/* network.c - see network.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/nsfs.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "exec.h"
#include "network.h"
#include "ns.h"
#include "state.h"
#include "sys.h"

#define HOLDER_FILE "holder"
#define HOSTS_FILE "hosts"
#define RM_WAIT_MS 5000         /* for the killed holder to be gone */

/* Docker's lines for localhost (etc_files.h), the default hostname as a run's;
 * members follow on 127.0.0.1. */
static const char hosts_head[] = "127.0.1.1\t" NSRUN_DEFAULT_HOSTNAME "\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
				 "fe00::0\tip6-localnet\nff00::0\tip6-mcastprefix\nff02::1\tip6-allnodes\n"
				 "ff02::2\tip6-allrouters\n";

static const char name_rule[] = "[a-zA-Z0-9][a-zA-Z0-9_.-]*, at most 64";

/* STATE_ROOT/.networks, made if missing; its path to path.  Returns the fd or -1 with err. */
static int open_networks(char *path, size_t len, struct nsrun_error *err)
{
	_cleanup_close_ int root_fd = -1;
	char root[PATH_MAX];

	if ((root_fd = state_open_root(root, sizeof(root), err)) < 0)
		return -1;
	if ((size_t)snprintf(path, len, "%s/%s", root, NETWORKS_DIR) >= len)
		return error_set(err, ENAMETOOLONG, "the networks' directory under %s", root);
	return state_open_private_dir(root_fd, NETWORKS_DIR, path, err);
}

/* NAME's directory under the networks' (fd nets).  Returns the fd, or -1 with
 * err (errnum 0: no such network). */
static int open_network_dir(int nets, const char *name, struct nsrun_error *err)
{
	int fd;

	if (!service_name_valid(name)) {
		error_set(err, 0, "\"%s\": not a network name (%s)", name, name_rule);
		err->hint = "nsrun network ls shows the networks";
		return -1;
	}
	fd = openat(nets, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		error_set(err, 0, "no such network");
		err->hint = "make it first: nsrun network create NAME (nsrun network ls shows them)";
		return -1;
	}
	if (fd < 0)
		return error_set(err, errno, "open the network's directory");
	return fd;
}

/* True if someone (the holder) holds the flock of fd: our shared one is refused. */
static bool lock_held(int fd)
{
	if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
		flock(fd, LOCK_UN);
		return false;
	}
	return errno == EWOULDBLOCK;
}

/* The holder's pid from HOLDER_FILE of dir, or 0 when there is none. */
static pid_t read_holder(int dir, int *holder_fd)
{
	char buf[32] = "";
	ssize_t n;

	*holder_fd = openat(dir, HOLDER_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (*holder_fd < 0)
		return 0;
	n = pread(*holder_fd, buf, sizeof(buf) - 1, 0);
	return n > 0 ? (pid_t)atol(buf) : 0;
}

/* The holder, a child: waits for its id maps, becomes root of its user
 * namespace, brings lo up, takes HOLDER_FILE's lock, says so and waits until
 * killed.  Never returns. */
static void __attribute__((noreturn)) holder_main(int holder_fd, int go_fd, int ready_fd)
{
	struct nsrun_error err = { .stage = STAGE_CONTAINER };
	int keep[] = { holder_fd, ready_fd };
	char c;
	int null;

	if (read(go_fd, &c, 1) != 1)
		_exit(125);
	if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0) {
		error_set(&err, errno, "become root of the network's user namespace");
		goto fail;
	}
	if (ns_loopback_up(NULL, &err) < 0)
		goto fail;
	if (flock(holder_fd, LOCK_EX | LOCK_NB) < 0) {
		error_set(&err, errno, "lock " HOLDER_FILE);
		goto fail;
	}
	/* out of the caller's session and terminal: it stays until network rm.  It
	 * stays dumpable: a run opens its /proc/PID/ns as the caller (ptrace access,
	 * proc(5)); the runs' processes cannot reach it (another pid namespace, and
	 * no capability in its user namespace, which ptrace would need) */
	if (setsid() < 0 || chdir("/") < 0) {
		error_set(&err, errno, "detach the holder");
		goto fail;
	}
	prctl(PR_SET_NAME, "nsrun-network", 0, 0, 0);
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0) {
		error_set(&err, errno, "open /dev/null");
		goto fail;
	}
	close_fds_except(keep, 2);
	exec_reset_signals();
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	/* EOF on ready_fd: ready */
	close(ready_fd);
	for (;;)
		pause();
fail:
	if (write_all(ready_fd, &err, sizeof(err)) < 0)
		_exit(125);
	_exit(125);
}

/* Starts the holder of the network whose directory is dir; its pid goes to
 * HOLDER_FILE.  Returns 0 or -1 with err. */
static int start_holder(int dir, struct nsrun_error *err)
{
	_cleanup_close_ int holder_fd = -1, go_r = -1, go_w = -1, ready_r = -1, ready_w = -1;
	struct nsrun_error child_err;
	uid_t uid;
	gid_t gid;
	int p[2], status;
	bool in_cgroup;
	pid_t pid;
	ssize_t n;
	char text[32];

	if (ns_host_ids(&uid, &gid, err) < 0)
		return -1;
	holder_fd = openat(dir, HOLDER_FILE, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (holder_fd < 0)
		return error_set(err, errno, "create " HOLDER_FILE);
	if (pipe2(p, O_CLOEXEC) < 0)
		return error_set(err, errno, "pipe");
	go_r = p[0];
	go_w = p[1];
	if (pipe2(p, O_CLOEXEC) < 0)
		return error_set(err, errno, "pipe");
	ready_r = p[0];
	ready_w = p[1];
	pid = ns_clone(CLONE_NEWUSER | CLONE_NEWNET, -1, &in_cgroup, err);
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(go_w);
		close(ready_r);
		holder_main(holder_fd, go_r, ready_w);
	}
	cleanup_closep(&go_r);
	cleanup_closep(&ready_w);
	/* its pid before "G": were we killed past it, network rm finds the holder */
	snprintf(text, sizeof(text), "%d\n", (int)pid);
	if (pwrite(holder_fd, text, strlen(text), 0) != (ssize_t)strlen(text)) {
		error_set(err, errno, "write " HOLDER_FILE);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return -1;
	}
	/* the caller's id only (root's: 65534, as for a run: ns.h) */
	if (ns_write_id_maps(pid, uid, gid, err) < 0 || write_all(go_w, "G", 1) < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return err->msg[0] ? -1 : error_set(err, errno, "start the holder");
	}
	cleanup_closep(&go_w);
	n = read(ready_r, &child_err, sizeof(child_err));
	if (n != 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		if (n == (ssize_t)sizeof(child_err)) {
			*err = child_err;
			err->msg[sizeof(err->msg) - 1] = '\0';
			return -1;
		}
		return error_set(err, 0, "the network's holder ended while starting");
	}
	return 0;
}

/* Writes a new file name in dir with text, mode.  Returns 0 or -1 with err. */
static int write_new(int dir, const char *name, const char *text, mode_t mode, struct nsrun_error *err)
{
	_cleanup_close_ int fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);

	if (fd < 0 || write_all(fd, text, strlen(text)) < 0 || fchmod(fd, mode) < 0)
		return error_set(err, errno, "create %s", name);
	return 0;
}

static int network_create(int nets, const char *name, struct nsrun_error *err)
{
	_cleanup_close_ int dir = -1;

	if (!service_name_valid(name)) {
		error_set(err, 0, "\"%s\": not a network name (%s)", name, name_rule);
		err->hint = "for example: nsrun network create backend";
		return -1;
	}
	/* --network takes these as modes: such a network could not be named there */
	if (strcmp(name, "none") == 0 || strcmp(name, "pasta") == 0 || strcmp(name, "host") == 0 ||
	    strcmp(name, "bridge") == 0 || strcmp(name, "default") == 0 || strncmp(name, "container", 9) == 0) {
		error_set(err, 0, "\"%s\": a reserved name (none, pasta, host, bridge, default, container...)", name);
		err->hint = "pick another name, for example: nsrun network create backend";
		return -1;
	}
	if (mkdirat(nets, name, 0700) < 0) {
		if (errno != EEXIST)
			return error_set(err, errno, "create the network's directory");
		error_set(err, 0, "the network exists");
		err->hint = "nsrun network ls shows the networks; nsrun network rm NAME removes one";
		return -1;
	}
	dir = openat(nets, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0 || write_new(dir, LOCK_FILE, "", 0600, err) < 0 || write_new(dir, HOSTS_FILE, hosts_head, 0644, err) < 0 ||
	    start_holder(dir, err) < 0) {
		if (dir < 0)
			error_set(err, errno, "open the network's directory");
		state_remove_dir(nets, name);
		return -1;
	}
	return 0;
}

int network_open(const char *name, int *userns_fd, int *netns_fd, int *lock_fd, struct nsrun_error *err)
{
	_cleanup_close_ int nets = -1, dir = -1, lock = -1, holder_fd = -1, pidfd = -1, proc = -1, owner = -1;
	_cleanup_close_ int self = -1, above = -1;
	char path[PATH_MAX];
	struct stat a, b;
	pid_t pid;

	if ((nets = open_networks(path, sizeof(path), err)) < 0 || (dir = open_network_dir(nets, name, err)) < 0)
		return -1;
	/* shared for as long as the run lasts: network rm refuses it meanwhile */
	lock = openat(dir, LOCK_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (lock < 0)
		return error_set(err, errno, "open its lock");
	/* blocking: network ls and rm hold it exclusive only for a moment; a network
	 * removed meanwhile has its lock unlinked */
	while (flock(lock, LOCK_SH) < 0)
		if (errno != EINTR)
			return error_set(err, errno, "lock it");
	if (fstat(lock, &a) < 0 || a.st_nlink == 0) {
		error_set(err, 0, "no such network (it was removed just now)");
		err->hint = "make it first: nsrun network create NAME (nsrun network ls shows them)";
		return -1;
	}
	/* the pidfd first: while the holder holds its lock, its pid is not reused */
	pid = read_holder(dir, &holder_fd);
	if (pid > 0)
		pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pid <= 0 || pidfd < 0 || !lock_held(holder_fd)) {
		error_set(err, 0, "its holder process is gone (killed?): the network is of no use");
		err->hint = "remove it and make it again: nsrun network rm NAME; nsrun network create NAME";
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if ((proc = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    (*userns_fd = openat(proc, "ns/user", O_RDONLY | O_CLOEXEC)) < 0 ||
	    (*netns_fd = openat(proc, "ns/net", O_RDONLY | O_CLOEXEC)) < 0)
		return error_set(err, errno, "open its holder's namespaces (%s)", path);
	/* as network create made them: the network namespace owned by a child of ours */
	self = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
	owner = ioctl(*netns_fd, NS_GET_USERNS);
	above = ioctl(*userns_fd, NS_GET_PARENT);
	if (self < 0 || owner < 0 || above < 0 || fstat(owner, &a) < 0 || fstat(*userns_fd, &b) < 0 ||
	    a.st_ino != b.st_ino || a.st_dev != b.st_dev || fstat(above, &a) < 0 || fstat(self, &b) < 0 ||
	    a.st_ino != b.st_ino || a.st_dev != b.st_dev)
		return error_set(err, 0, "its holder's namespaces are not those network create made");
	if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0 || !lock_held(holder_fd))
		return error_set(err, 0, "its holder process ended meanwhile");
	*lock_fd = steal_fd(&lock);
	return 0;
}

#define HOSTS_MAX (1 << 20)     /* bytes: the network's hosts file is refused past it */

int network_add_member(struct nsrun_config *cfg, struct nsrun_error *err)
{
	_cleanup_close_ int nets = -1, dir = -1;
	char path[PATH_MAX], spec[PATH_MAX + 64];

	if ((nets = open_networks(path, sizeof(path), err)) < 0 ||
	    (dir = open_network_dir(nets, cfg->network_name, err)) < 0) {
		error_prefix(err, "--network %s", cfg->network_name);
		return -1;
	}
	snprintf(spec, sizeof(spec), "%s/%s/" HOSTS_FILE ":/etc/hosts:ro", path, cfg->network_name);
	return config_add_volume(cfg, spec, err);
}

int network_write_member(const struct nsrun_config *cfg, struct nsrun_error *err)
{
	_cleanup_close_ int nets = -1, dir = -1, fd = -1;
	_cleanup_free_ char *text = NULL;
	char path[PATH_MAX], line[NAME_MAX_LEN * 2 + 32], fdp[64];
	/* its service name and a --hostname of its own; a run with neither adds nothing */
	bool own_host = strcmp(cfg->hostname, NSRUN_DEFAULT_HOSTNAME) != 0;
	const char *name = cfg->service.name ? cfg->service.name : own_host ? cfg->hostname : NULL;
	size_t len = 0;

	if (!name)
		return 0;
	if (!own_host || strcmp(name, cfg->hostname) == 0)
		snprintf(line, sizeof(line), "127.0.0.1\t%s\n", name);
	else
		snprintf(line, sizeof(line), "127.0.0.1\t%s %s\n", name, cfg->hostname);
	if ((nets = open_networks(path, sizeof(path), err)) < 0 ||
	    (dir = open_network_dir(nets, cfg->network_name, err)) < 0)
		return -1;
	fd = openat(dir, HOSTS_FILE, O_RDWR | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || flock(fd, LOCK_EX) < 0)
		return error_set(err, errno, "open its " HOSTS_FILE);
	fd_path(fdp, sizeof(fdp), fd);
	if (read_file(fdp, HOSTS_MAX, &text, &len) < 0 && errno != EFBIG)
		return error_set(err, errno, "read its " HOSTS_FILE);
	/* one line a member: a name that joins again is there already */
	if (text && strstr(text, line))
		return 0;
	if (!text || len + strlen(line) > HOSTS_MAX - 1) {
		error_set(err, 0, "its " HOSTS_FILE " file is full (%d bytes: a line a name that ever joined)", HOSTS_MAX);
		err->hint = "remove the network and make it again: nsrun network rm NAME; nsrun network create NAME";
		return -1;
	}
	if (write_all(fd, line, strlen(line)) < 0)
		return error_set(err, errno, "write its " HOSTS_FILE);
	return 0;
}

/* `network ls`: NAME, whether its holder lives, whether a run uses it. */
static int network_ls(int nets)
{
	_cleanup_closedir_ DIR *d = fdopendir(dup(nets));
	struct dirent *e;

	if (!d)
		return 125;
	printf("NAME\tSTATUS\tIN USE\n");
	while ((e = readdir(d))) {
		_cleanup_close_ int dir = -1, holder_fd = -1, lock = -1;
		bool alive, used;
		if (!service_name_valid(e->d_name))
			continue;
		dir = openat(nets, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dir < 0)
			continue;
		alive = read_holder(dir, &holder_fd) > 0 && lock_held(holder_fd);
		lock = openat(dir, LOCK_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		used = lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) < 0;
		printf("%s\t%s\t%s\n", e->d_name, alive ? "ready" : "holder gone", used ? "yes" : "no");
	}
	return 0;
}

static int network_rm(int nets, const char *name, struct nsrun_error *err)
{
	_cleanup_close_ int dir = -1, lock = -1, holder_fd = -1, pidfd = -1;
	pid_t pid;

	if ((dir = open_network_dir(nets, name, err)) < 0)
		return -1;
	lock = openat(dir, LOCK_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) < 0) {
		error_set(err, errno == EWOULDBLOCK ? 0 : errno, "%s", errno == EWOULDBLOCK ?
			  "it is in use by a run or service" : "lock it");
		err->hint = "stop what runs on it first (nsrun ps; nsrun stop NAME)";
		return -1;
	}
	pid = read_holder(dir, &holder_fd);
	if (pid > 0 && (pidfd = (int)syscall(SYS_pidfd_open, pid, 0)) >= 0 && lock_held(holder_fd)) {
		struct pollfd p = { .fd = pidfd, .events = POLLIN };
		if (syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0) < 0)
			return error_set(err, errno, "kill its holder (pid %d)", (int)pid);
		/* a pidfd is readable once its process is gone (pidfd_open(2)) */
		while (poll(&p, 1, RM_WAIT_MS) < 0 && errno == EINTR)
			;
	}
	if (state_remove_dir(nets, name) < 0)
		return error_set(err, errno, "remove its directory");
	return 0;
}

int network_main(int argc, char **argv)
{
	struct nsrun_error err = { 0 };
	_cleanup_close_ int nets = -1;
	char path[PATH_MAX];
	const char *sub = argc > 2 ? argv[2] : "";
	int rc = 0;

	if (strcmp(sub, "ls") != 0 && ((strcmp(sub, "create") != 0 && strcmp(sub, "rm") != 0) || argc < 4)) {
		fprintf(stderr, "nsrun: usage: nsrun network create NAME | nsrun network ls | nsrun network rm NAME...\n"
			"nsrun: hint: see docs/network.md: runs on one network share its loopback, and nothing else\n");
		return 125;
	}
	if ((nets = open_networks(path, sizeof(path), &err)) < 0) {
		error_print(&err, stderr);
		return 125;
	}
	if (strcmp(sub, "ls") == 0)
		return network_ls(nets);
	for (int i = 3; i < argc; i++) {
		struct nsrun_error e = { 0 };
		if ((strcmp(sub, "create") == 0 ? network_create(nets, argv[i], &e) : network_rm(nets, argv[i], &e)) < 0) {
			error_prefix(&e, "network %s %s", sub, argv[i]);
			error_print(&e, stderr);
			rc = 125;
		} else {
			printf("%s\n", argv[i]);
		}
	}
	fflush(stdout);
	return rc;
}
