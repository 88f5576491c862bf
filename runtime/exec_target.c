/* exec_target.c - see exec_target.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "exec_target.h"
#include "ns.h"
#include "state.h"
#include "sys.h"

/* In the order they are joined: the mount namespace first after the user one. */
static const struct {
	const char *name;       /* of /proc/PID/ns/NAME */
	int flag;               /* setns(2)'s nstype */
} ns_kinds[NS__COUNT] = {
	{ "mnt", CLONE_NEWNS }, { "pid", CLONE_NEWPID }, { "net", CLONE_NEWNET },
	{ "ipc", CLONE_NEWIPC }, { "uts", CLONE_NEWUTS }, { "cgroup", CLONE_NEWCGROUP },
};

void exec_target_init(struct exec_target *t)
{
	memset(t, 0, sizeof(*t));
	t->pidfd[0] = t->pidfd[1] = t->pidfd[2] = t->proc_fd = t->userns_outer = t->userns_payload = t->root_fd = -1;
	t->userns_net = t->userns_join_outer = -1;
	for (int i = 0; i < NS__COUNT; i++)
		t->ns[i] = -1;
}

void exec_target_close(struct exec_target *t)
{
	int *fds[] = { &t->pidfd[0], &t->pidfd[1], &t->pidfd[2], &t->proc_fd, &t->userns_outer, &t->userns_payload,
		       &t->root_fd, &t->userns_net, &t->userns_join_outer };

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		cleanup_closep(fds[i]);
	for (int i = 0; i < NS__COUNT; i++)
		cleanup_closep(&t->ns[i]);
	for (size_t i = 0; i < t->n_cgroups; i++)
		free(t->cgroup_procs[i]);
	t->n_cgroups = 0;
}

/* True if fds a and b are the same namespace (same nsfs inode). */
static bool same_file(int a, int b)
{
	struct stat sa, sb;

	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static bool pidfd_alive(int pidfd)
{
	return syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0;
}

/* PPid and the NSpid numbers of /proc/PID/status at dir_fd/name ("N" or "."):
 * *levels of them, the innermost in *inner.  Returns 0 or -1 (errno). */
static int status_ids(int dir_fd, const char *name, pid_t *ppid, long *inner, int *levels)
{
	char path[64], buf[4096];
	_cleanup_close_ int fd = -1;
	ssize_t n;
	char *p;

	snprintf(path, sizeof(path), "%s/status", name);
	fd = openat(dir_fd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	*ppid = -1;
	if ((p = strstr(buf, "\nPPid:")))
		*ppid = (pid_t)strtol(p + 6, NULL, 10);
	*inner = ns_status_nspid(buf, -1, levels);
	if (*ppid < 0 || *levels == 0) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* The child of parent in the pid namespace one level below parent's (levels + 1
 * numbers in NSpid; with deeper, any level below: a pid namespace joined by
 * path, which may be nested deeper) with the smallest number there, and that
 * number.  Returns its pid, or 0 when there is none, or -1 (errno of opendir). */
static pid_t child_below(pid_t parent, int levels, bool deeper, long *inner_out)
{
	_cleanup_closedir_ DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t best = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		pid_t ppid;
		long inner;
		int lv;
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		if (status_ids(dirfd(d), e->d_name, &ppid, &inner, &lv) < 0 || ppid != parent ||
		    (deeper ? lv <= levels : lv != levels + 1))
			continue;
		if (!best || inner < *inner_out) {
			best = (pid_t)atol(e->d_name);
			*inner_out = inner;
		}
	}
	return best;
}

/* True if process pid holds an fd open on the file want (by /proc/PID/fd). */
static bool holds_file(pid_t pid, const struct stat *want)
{
	char path[64];
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *e;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if (!(d = opendir(path)))
		return false;
	while ((e = readdir(d))) {
		struct stat st;
		if (e->d_name[0] != '.' && fstatat(dirfd(d), e->d_name, &st, 0) == 0 && st.st_dev == want->st_dev &&
		    st.st_ino == want->st_ino)
			return true;
	}
	return false;
}

/* The monitor (it holds the service's lock), its child the container's init
 * (pid 1 one pid namespace below; an OCI container that joined a pid namespace
 * by path, as its state.json's "joined" says: any number in a pid namespace
 * below), and init's first child, the payload; each taken as a pidfd before
 * its parent is checked, and all alive at the end, so a pid reused meanwhile is
 * never taken for them.  Returns 0 or -1 with err. */
static int find_payload(struct exec_target *t, int dir_fd, bool need_payload, struct nsrun_error *err)
{
	struct service_state st = { 0 };
	struct stat lock;
	pid_t ppid;
	long inner = 0;
	int mlevels, levels;
	char name[32];
	bool joined_pid = state_read(dir_fd, &st) == 0 && state_joined(&st, "pid");

	if (ns_proc_pid(t->monitor) != t->monitor)
		return error_set(err, 0, "the /proc mounted here is not of nsrun's pid namespace: the service's "
				 "processes cannot be found in it");
	t->pidfd[0] = (int)syscall(SYS_pidfd_open, t->monitor, 0);
	if (t->pidfd[0] < 0)
		return error_set(err, errno == ESRCH ? 0 : errno, errno == ESRCH ? "the service is not running "
				 "(its monitor is gone)" : "pidfd_open of its monitor");
	if (fstatat(dir_fd, LOCK_FILE, &lock, AT_SYMLINK_NOFOLLOW) < 0)
		return error_set(err, errno, "stat its lock");
	if (!holds_file(t->monitor, &lock))
		return error_set(err, 0, "pid %d, its monitor in state.json, does not hold its lock", (int)t->monitor);
	snprintf(name, sizeof(name), "/proc/%d", (int)t->monitor);
	if (status_ids(AT_FDCWD, name, &ppid, &inner, &mlevels) < 0)
		return error_set(err, errno, "read %s/status", name);
	t->init = child_below(t->monitor, mlevels, joined_pid, &inner);
	if (t->init <= 0 || (inner != 1 && !joined_pid))
		return error_set(err, 0, "its container's init is not there (the service is stopping, or it has no pid "
				 "namespace: isolation minimal): exec joins only a running service of isolation full");
	t->pidfd[1] = (int)syscall(SYS_pidfd_open, t->init, 0);
	snprintf(name, sizeof(name), "/proc/%d", (int)t->init);
	if (t->pidfd[1] < 0 || status_ids(AT_FDCWD, name, &ppid, &inner, &levels) < 0 || ppid != t->monitor)
		return error_set(err, 0, "its container's init is gone (the service is stopping)");
	t->payload = child_below(t->init, levels - 1, false, &inner);
	if (t->payload <= 0 && !need_payload && pidfd_alive(t->pidfd[0]) && pidfd_alive(t->pidfd[1]))
		return 0;
	if (t->payload <= 0)
		return error_set(err, 0, "its payload is gone (the service is stopping)");
	t->pidfd[2] = (int)syscall(SYS_pidfd_open, t->payload, 0);
	{
		/* its leader may have exited, its other threads running on: one of them */
		_cleanup_close_ int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		char dir[48];

		if (proc >= 0) {
			(void)proc_mm_dir(proc, t->payload, dir, sizeof(dir), NULL);
			t->proc_fd = openat(proc, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		}
	}
	if (t->pidfd[2] < 0 || t->proc_fd < 0 || status_ids(t->proc_fd, ".", &ppid, &inner, &levels) < 0 ||
	    ppid != t->init)
		return error_set(err, 0, "its payload is gone (the service is stopping)");
	if (!pidfd_alive(t->pidfd[0]) || !pidfd_alive(t->pidfd[1]) || !pidfd_alive(t->pidfd[2]))
		return error_set(err, 0, "it stopped meanwhile");
	return 0;
}

/* Opens the payload's namespaces and checks they are the container's: the
 * payload's user namespace a child of the container's, a child of ours (the
 * full tier's two levels); each other namespace owned by the container's
 * (NS_GET_USERNS, NS_GET_PARENT in ioctl_ns(2)).  Returns 0 or -1 with err. */
static int open_namespaces(struct exec_target *t, struct nsrun_error *err)
{
	_cleanup_close_ int self = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC), above = -1;
	char path[32];

	if (self < 0)
		return error_set(err, errno, "open /proc/self/ns/user");
	/* the joiner checks it is the root of the mount namespace it joins (not a chroot) */
	t->root_fd = openat(t->proc_fd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (t->root_fd < 0)
		return error_set(err, errno, "open its payload's root");
	t->userns_payload = openat(t->proc_fd, "ns/user", O_RDONLY | O_CLOEXEC);
	if (t->userns_payload < 0)
		return error_set(err, errno, "open its payload's user namespace");
	if (same_file(t->userns_payload, self))
		return error_set(err, 0, "its payload has no user namespace of its own (isolation minimal): exec joins "
				 "only a service of isolation full");
	t->userns_outer = ioctl(t->userns_payload, NS_GET_PARENT);
	if (t->userns_outer < 0)
		return error_set(err, errno, "the parent of its payload's user namespace (NS_GET_PARENT)");
	if (same_file(t->userns_outer, self) && t->multi_id) {
		/* --userns subids: one level, the container's (the joiner checks the root
		 * is no chroot, as the reduced tier's is) */
		close(t->userns_outer);
		t->userns_outer = t->userns_payload;
		t->userns_payload = -1;
		above = ioctl(t->userns_outer, NS_GET_PARENT);
		if (above < 0 || !same_file(above, self))
			return error_set(err, above < 0 ? errno : 0, "its payload is not in the user namespace nsrun "
					 "made for it");
	} else if (same_file(t->userns_outer, self)) {
		return error_set(err, 0, "its payload runs in the container's user namespace (isolation reduced): "
				 "exec joins only a service of isolation full");
	} else {
		above = ioctl(t->userns_outer, NS_GET_PARENT);
		if (above >= 0 && !same_file(above, self) && (t->joined_net || t->joined_paths)) {
			/* joined another's network: the container's user namespace is a child of
			 * the one that owns the net namespace (netjoin.h), a child of ours; or
			 * (OCI paths of two owners) of the inner owner, whose parent the outer
			 * is, a child of ours */
			_cleanup_close_ int top = ioctl(above, NS_GET_PARENT);
			_cleanup_close_ int top2 = top >= 0 && !same_file(top, self) ? ioctl(top, NS_GET_PARENT) : -1;
			if (top >= 0 && same_file(top, self))
				t->userns_net = steal_fd(&above);
			else if (t->joined_paths && top2 >= 0 && same_file(top2, self)) {
				t->userns_net = steal_fd(&above);
				t->userns_join_outer = steal_fd(&top);
			}
		}
		if (t->userns_net < 0 && (above < 0 || !same_file(above, self)))
			return error_set(err, above < 0 ? errno : 0, "its payload is not in the user namespace nsrun made "
					 "for it (it made one of its own?)");
	}
	for (int k = 0; k < NS__COUNT; k++) {
		_cleanup_close_ int fd = -1, ours = -1, owner = -1;
		snprintf(path, sizeof(path), "ns/%s", ns_kinds[k].name);
		fd = openat(t->proc_fd, path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT && k == NS_CGROUP)
			continue; /* a kernel without cgroup namespaces */
		if (fd < 0)
			return error_set(err, errno, "open its payload's %s namespace", ns_kinds[k].name);
		snprintf(path, sizeof(path), "/proc/self/ns/%s", ns_kinds[k].name);
		ours = open(path, O_RDONLY | O_CLOEXEC);
		bool joined = (k == NS_NET && t->joined_net) || (t->joined_paths & (1u << k));
		if (ours >= 0 && same_file(fd, ours) && !joined) {
			if (k == NS_CGROUP)
				continue; /* none was made: there is none to join */
			return error_set(err, 0, "its payload shares our %s namespace: not a container of isolation full",
					 ns_kinds[k].name);
		}
		owner = ioctl(fd, NS_GET_USERNS);
		if (owner >= 0 && joined && t->userns_net >= 0 && same_file(owner, t->userns_net)) {
			t->join_first |= 1u << k;
		} else if (owner >= 0 && joined && t->userns_join_outer >= 0 && same_file(owner, t->userns_join_outer)) {
			t->join_outer |= 1u << k;
		} else if (owner >= 0 && joined && t->userns_net >= 0 && !same_file(owner, self)) {
			return error_set(err, 0, "its payload's %s namespace is not the one it joined", ns_kinds[k].name);
		} else if (owner >= 0 && joined && same_file(owner, self)) {
			/* netjoin.c's owner_is_ours */
			t->net_ours = t->net_ours || k == NS_NET;
			t->join_ours |= 1u << k;
		} else if (owner < 0 || !same_file(owner, t->userns_outer))
			return error_set(err, owner < 0 ? errno : 0, "its payload's %s namespace is not the container's",
					 ns_kinds[k].name);
		t->ns[k] = steal_fd(&fd);
	}
	return 0;
}

/* The mount point of the cgroup hierarchy of a /proc/PID/cgroup line's
 * CONTROLLERS ("" for cgroup2; "memory", "cpu,cpuacct", "name=systemd" for v1)
 * from our mountinfo (proc(5)), and the mount's root.  Returns 0 or -1. */
static int hierarchy_mount(const char *controllers, char *mnt, size_t mlen, char *root, size_t rlen)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char r[1024], m[1024], type[64], src[256], opts[1024];
		const char *dash = strstr(line, " - ");
		bool all = true;
		if (!dash || sscanf(line, "%*s %*s %*s %1023s %1023s", r, m) != 2 ||
		    sscanf(dash + 3, "%63s %255s %1023s", type, src, opts) != 3 || strchr(m, '\\'))
			continue;
		if (!controllers[0]) {
			if (strcmp(type, "cgroup2") != 0)
				continue;
		} else {
			_cleanup_free_ char *want = strdup(controllers);
			char *save = NULL;
			if (strcmp(type, "cgroup") != 0 || !want)
				continue;
			for (char *c = strtok_r(want, ",", &save); c && all; c = strtok_r(NULL, ",", &save)) {
				size_t n = strlen(c);
				const char *o = opts;
				bool found = false;
				while (!found && (o = strstr(o, c))) {
					found = (o == opts || o[-1] == ',') && (o[n] == ',' || o[n] == '\0');
					o += n;
				}
				all = found;
			}
			if (!all)
				continue;
		}
		snprintf(mnt, mlen, "%s", m);
		snprintf(root, rlen, "%s", r);
		return 0;
	}
	errno = ENOENT;
	return -1;
}

/* True if text (lines) has a line equal to line. */
static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (strncmp(p, line, n) == 0 && (p[n] == '\n' || p[n] == '\0'))
			return true;
	return false;
}

/* Reads name (at most 64 KiB) at dir_fd into a malloc'd NUL-terminated *out.
 * Returns 0 or -1 (errno). */
static int read_at(int dir_fd, const char *name, char **out)
{
	_cleanup_close_ int fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC);
	char path[64];

	if (fd < 0)
		return -1;
	fd_path(path, sizeof(path), fd);
	return read_file(path, 65536, out, NULL);
}

/* The cgroups the run made for the service: where the payload's cgroup differs
 * from its monitor's, in each hierarchy (cgroup v2, and a v1 memory group on a
 * hybrid host: cgroup_v1.h); where nsrun made none, the two are the same and
 * nothing is joined.  The cgroup.procs of each goes to t.  Returns 0 or -1 with
 * err. */
static int cgroups_to_join(struct exec_target *t, struct nsrun_error *err)
{
	_cleanup_free_ char *mine = NULL, *mon = NULL;
	char path[64];
	char *save = NULL;

	if (read_at(t->proc_fd, "cgroup", &mine) < 0)
		return error_set(err, errno, "read its payload's cgroups");
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)t->monitor);
	if (read_file(path, 65536, &mon, NULL) < 0)
		return error_set(err, errno, "read its monitor's cgroups");
	for (char *line = strtok_r(mine, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		char mnt[1024], root[1024], *file;
		const char *rel;

		if (!c2 || has_line(mon, line))
			continue;
		*c2 = '\0'; /* line: "ID:CONTROLLERS", c2 + 1: the path */
		if (hierarchy_mount(c1 + 1, mnt, sizeof(mnt), root, sizeof(root)) < 0)
			return error_set(err, 0, "its payload's cgroup %s of hierarchy \"%s\" is mounted nowhere here",
					 c2 + 1, c1 + 1);
		rel = c2 + 1;
		if (strcmp(root, "/") != 0) {
			size_t rl = strlen(root);
			if (strncmp(rel, root, rl) != 0 || (rel[rl] != '/' && rel[rl] != '\0'))
				return error_set(err, 0, "its payload's cgroup %s is outside the mount of its hierarchy", rel);
			rel += rl;
		}
		if (t->n_cgroups == EXEC_MAX_CGROUPS)
			return error_set(err, 0, "its payload is in more than %d cgroups of its own", EXEC_MAX_CGROUPS);
		if (asprintf(&file, "%s%s/cgroup.procs", mnt, strcmp(rel, "/") == 0 ? "" : rel) < 0)
			return error_set(err, ENOMEM, "cgroup path");
		t->cgroup_procs[t->n_cgroups++] = file;
	}
	return 0;
}

/* One limit of /proc/PID/limits ("unlimited" or a number) at s into *v.
 * Returns the text after it, or NULL. */
static const char *limit_value(const char *s, rlim_t *v)
{
	char *end;

	while (*s == ' ')
		s++;
	if (strncmp(s, "unlimited", 9) == 0) {
		*v = RLIM_INFINITY;
		return s + 9;
	}
	errno = 0;
	*v = (rlim_t)strtoull(s, &end, 10);
	return errno || end == s ? NULL : end;
}

/* The payload's rlimits from /proc/PAYLOAD/limits (proc(5): a line a limit
 * after the header, in RLIMIT_* order, name, soft and hard limits at columns
 * 26 and 47 of fs/proc/base.c's proc_pid_limits).  Returns 0 or -1 (errno). */
static int read_limits_file(struct exec_target *t)
{
	_cleanup_free_ char *text = NULL;
	const char *line;
	int r = 0;

	if (read_at(t->proc_fd, "limits", &text) < 0)
		return -1;
	line = strchr(text, '\n'); /* past the header */
	for (; line && r < RLIM_NLIMITS; r++) {
		const char *p = line + 1;
		line = strchr(p, '\n');
		if (!line || line - p < 47 || !(p = limit_value(p + 26, &t->rl[r].rlim_cur)) ||
		    !limit_value(p, &t->rl[r].rlim_max)) {
			errno = EINVAL;
			return -1;
		}
	}
	return r == RLIM_NLIMITS ? 0 : (errno = EINVAL, -1);
}

/* The payload's rlimits, all of them (prlimit(2)); where prlimit is refused
 * (root without CAP_SYS_RESOURCE, an outer sandbox's, over a payload whose user
 * namespace another user made: a pod's joined by path), /proc/PID/limits,
 * which anyone may read.  Returns 0 or -1 with err. */
static int read_rlimits(struct exec_target *t, struct nsrun_error *err)
{
	for (int r = 0; r < RLIM_NLIMITS; r++) {
		if (prlimit(t->payload, (enum __rlimit_resource)r, NULL, &t->rl[r]) == 0)
			continue;
		if (errno == EPERM && read_limits_file(t) == 0)
			return 0;
		return error_set(err, errno, "read its payload's rlimit %d", r);
	}
	return 0;
}

/* True if pid (a number in the /proc of proc_fd) descends from ancestor, by
 * the PPid of each /proc/PID/status up the chain (at most 256 steps). */
static bool descends_from(int proc_fd, pid_t pid, pid_t ancestor)
{
	for (int step = 0; step < 256 && pid > 1; step++) {
		char name[24];
		pid_t ppid;
		long inner;
		int levels;
		snprintf(name, sizeof(name), "%d", (int)pid);
		if (status_ids(proc_fd, name, &ppid, &inner, &levels) < 0)
			return false;
		if (ppid == ancestor)
			return true;
		pid = ppid;
	}
	return false;
}

/* True if the process named (a number of the /proc of proc_fd) is a zombie,
 * which a kill(2) "reaches" but which is dead (proc(5), /proc/PID/status). */
static bool is_zombie(int proc_fd, const char *name)
{
	char path[300], buf[512];
	_cleanup_close_ int fd = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/status", name);
	if ((fd = openat(proc_fd, path, O_RDONLY | O_CLOEXEC)) < 0 || (n = read(fd, buf, sizeof(buf) - 1)) <= 0)
		return true; /* gone */
	buf[n] = '\0';
	return strstr(buf, "\nState:\tZ") != NULL || strstr(buf, "\nState:\tX") != NULL;
}

unsigned exec_target_kill_own(const char *proc, pid_t init, int mnt_fd)
{
	_cleanup_close_ int proc_fd = open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat mnt;
	pid_t self = getpid();
	unsigned killed = 0;

	if (proc_fd < 0 || (mnt_fd >= 0 && fstat(mnt_fd, &mnt) < 0))
		return 0;
	/* bounded: each pass kills all it finds, and a process with SIGKILL pending
	 * forks no more; its children come to init, a subreaper (container.c) */
	for (int pass = 0; pass < 500; pass++) {
		_cleanup_closedir_ DIR *d = NULL;
		struct dirent *e;
		unsigned found = 0;
		int scan = fcntl(proc_fd, F_DUPFD_CLOEXEC, 3);

		if (scan < 0 || !(d = fdopendir(scan))) {
			if (scan >= 0)
				close(scan);
			break;
		}
		rewinddir(d); /* a dup shares the offset the pass before moved */
		while ((e = readdir(d))) {
			char path[300];
			struct stat ns;
			pid_t pid;
			if (e->d_name[0] < '1' || e->d_name[0] > '9')
				continue;
			pid = (pid_t)atol(e->d_name);
			if (pid == self || pid == init || is_zombie(proc_fd, e->d_name))
				continue;
			snprintf(path, sizeof(path), "%s/ns/mnt", e->d_name);
			if ((mnt_fd >= 0 && fstatat(proc_fd, path, &ns, 0) == 0 && ns.st_dev == mnt.st_dev &&
			     ns.st_ino == mnt.st_ino) || descends_from(proc_fd, pid, init)) {
				if (kill(pid, SIGKILL) == 0)
					found++;
			}
		}
		if (!found)
			break;
		killed += found;
		usleep(1000);
	}
	return killed;
}

int exec_target_ns_flag(enum ns_kind k)
{
	return ns_kinds[k].flag;
}

const char *exec_target_ns_name(enum ns_kind k)
{
	return ns_kinds[k].name;
}

int exec_target_find(struct exec_target *t, int dir_fd, pid_t monitor, struct nsrun_error *err)
{
	exec_target_close(t);
	t->monitor = monitor;
	return find_payload(t, dir_fd, false, err);
}

int exec_target_open(struct exec_target *t, int dir_fd, pid_t monitor, struct nsrun_error *err)
{
	struct service_state st = { 0 };

	exec_target_close(t);
	t->monitor = monitor;
	t->net_ours = false;
	t->join_first = t->join_outer = t->join_ours = 0;
	/* a service that joined a network (netjoin.h), as its state records it */
	t->joined_net = state_read(dir_fd, &st) == 0 &&
			(strcmp(st.network, "container") == 0 || strcmp(st.network, "named") == 0 ||
			 strcmp(st.network, "path") == 0);
	t->joined_paths = 0;
	if (state_joined(&st, "ipc"))
		t->joined_paths |= 1u << NS_IPC;
	if (state_joined(&st, "uts"))
		t->joined_paths |= 1u << NS_UTS;
	if (find_payload(t, dir_fd, true, err) < 0 || open_namespaces(t, err) < 0 || cgroups_to_join(t, err) < 0 ||
	    read_rlimits(t, err) < 0)
		return -1;
	/* the monitor's cgroups and the payload's rlimits were read by pid: still theirs */
	if (!pidfd_alive(t->pidfd[0]) || !pidfd_alive(t->pidfd[2]))
		return error_set(err, 0, "it stopped meanwhile");
	return 0;
}
