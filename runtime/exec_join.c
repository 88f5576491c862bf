/* exec_join.c - see exec_join.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/nsfs.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "caps.h"
#include "cleanup.h"
#include "config.h"
#include "exec.h"
#include "exec_join.h"
#include "exec_spec.h"
#include "landlock.h"
#include "ns.h"
#include "relay.h"
#include "seccomp.h"
#include "state.h"
#include "sys.h"
#include "tier.h"

#define MAX_CGROUPS 16
#define FLUSH_GRACE_US 1000000  /* after the command's exit, for its last output to reach the caller */

static const int forward_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, 0 };

enum ns_kind { NS_MNT, NS_PID, NS_NET, NS_IPC, NS_UTS, NS_CGROUP, NS__COUNT };

/* In the order they are joined: the mount namespace first after the user one. */
static const struct {
	const char *name;       /* of /proc/PID/ns/NAME */
	int flag;               /* setns(2)'s nstype */
} ns_kinds[NS__COUNT] = {
	{ "mnt", CLONE_NEWNS }, { "pid", CLONE_NEWPID }, { "net", CLONE_NEWNET },
	{ "ipc", CLONE_NEWIPC }, { "uts", CLONE_NEWUTS }, { "cgroup", CLONE_NEWCGROUP },
};

/* The service's payload and what is joined of it, all opened before the fork. */
struct exec_target {
	pid_t monitor, init, payload;   /* host pids (our pid namespace's numbers) */
	int pidfd[3];                   /* of the monitor, init, the payload */
	int proc_fd;                    /* /proc/PAYLOAD */
	int userns_outer;               /* the container's user namespace (init's) */
	int userns_payload;             /* the payload's own, a child of it */
	int ns[NS__COUNT];              /* the container's; -1: ours (not joined) */
	char *cgroup_procs[MAX_CGROUPS];        /* cgroup.procs of the cgroups the run made */
	size_t n_cgroups;
	struct rlimit rl[RLIM_NLIMITS]; /* the payload's */
};

static void target_init(struct exec_target *t)
{
	memset(t, 0, sizeof(*t));
	t->pidfd[0] = t->pidfd[1] = t->pidfd[2] = t->proc_fd = t->userns_outer = t->userns_payload = -1;
	for (int i = 0; i < NS__COUNT; i++)
		t->ns[i] = -1;
}

static void target_close(struct exec_target *t)
{
	int *fds[] = { &t->pidfd[0], &t->pidfd[1], &t->pidfd[2], &t->proc_fd, &t->userns_outer, &t->userns_payload };

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
	*inner = -1;
	*levels = 0;
	if ((p = strstr(buf, "\nPPid:")))
		*ppid = (pid_t)strtol(p + 6, NULL, 10);
	if ((p = strstr(buf, "\nNSpid:"))) {
		char *end;
		p += 7;
		for (;;) {
			long v = strtol(p, &end, 10);
			if (end == p)
				break;
			*inner = v;
			++*levels;
			p = end;
		}
	}
	if (*ppid < 0 || *levels == 0) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* The child of parent in the pid namespace one level below parent's (levels + 1
 * numbers in NSpid) with the smallest number there, and that number.  Returns
 * its pid, or 0 when there is none, or -1 (errno of opendir). */
static pid_t child_below(pid_t parent, int levels, long *inner_out)
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
		if (status_ids(dirfd(d), e->d_name, &ppid, &inner, &lv) < 0 || ppid != parent || lv != levels + 1)
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
 * (pid 1 one pid namespace below), and init's first child, the payload; each
 * taken as a pidfd before its parent is checked, and all alive at the end, so a
 * pid reused meanwhile is never taken for them.  Returns 0 or -1 with err. */
static int find_payload(struct exec_target *t, int dir_fd, struct nsrun_error *err)
{
	struct stat lock;
	pid_t ppid;
	long inner = 0;
	int mlevels, levels;
	char name[32];

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
	t->init = child_below(t->monitor, mlevels, &inner);
	if (t->init <= 0 || inner != 1)
		return error_set(err, 0, "its container's init is gone (the service is stopping)");
	t->pidfd[1] = (int)syscall(SYS_pidfd_open, t->init, 0);
	snprintf(name, sizeof(name), "/proc/%d", (int)t->init);
	if (t->pidfd[1] < 0 || status_ids(AT_FDCWD, name, &ppid, &inner, &levels) < 0 || ppid != t->monitor)
		return error_set(err, 0, "its container's init is gone (the service is stopping)");
	t->payload = child_below(t->init, mlevels, &inner);
	if (t->payload <= 0)
		return error_set(err, 0, "its payload is gone (the service is stopping)");
	t->pidfd[2] = (int)syscall(SYS_pidfd_open, t->payload, 0);
	snprintf(name, sizeof(name), "/proc/%d", (int)t->payload);
	t->proc_fd = open(name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
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
	t->userns_payload = openat(t->proc_fd, "ns/user", O_RDONLY | O_CLOEXEC);
	if (t->userns_payload < 0)
		return error_set(err, errno, "open its payload's user namespace");
	if (same_file(t->userns_payload, self))
		return error_set(err, 0, "its payload has no user namespace of its own (isolation minimal): exec joins "
				 "only a service of isolation full");
	t->userns_outer = ioctl(t->userns_payload, NS_GET_PARENT);
	if (t->userns_outer < 0)
		return error_set(err, errno, "the parent of its payload's user namespace (NS_GET_PARENT)");
	if (same_file(t->userns_outer, self))
		return error_set(err, 0, "its payload runs in the container's user namespace (isolation reduced): "
				 "exec joins only a service of isolation full");
	above = ioctl(t->userns_outer, NS_GET_PARENT);
	if (above < 0 || !same_file(above, self))
		return error_set(err, above < 0 ? errno : 0, "its payload is not in the user namespace nsrun made "
				 "for it (it made one of its own?)");
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
		if (ours >= 0 && same_file(fd, ours)) {
			if (k == NS_CGROUP)
				continue; /* none was made: there is none to join */
			return error_set(err, 0, "its payload shares our %s namespace: not a container of isolation full",
					 ns_kinds[k].name);
		}
		owner = ioctl(fd, NS_GET_USERNS);
		if (owner < 0 || !same_file(owner, t->userns_outer))
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
		if (t->n_cgroups == MAX_CGROUPS)
			return error_set(err, 0, "its payload is in more than %d cgroups of its own", MAX_CGROUPS);
		if (asprintf(&file, "%s%s/cgroup.procs", mnt, strcmp(rel, "/") == 0 ? "" : rel) < 0)
			return error_set(err, ENOMEM, "cgroup path");
		t->cgroup_procs[t->n_cgroups++] = file;
	}
	return 0;
}

/* The payload's rlimits, all of them (prlimit(2)). Returns 0 or -1 with err. */
static int read_rlimits(struct exec_target *t, struct nsrun_error *err)
{
	for (int r = 0; r < RLIM_NLIMITS; r++)
		if (prlimit(t->payload, (enum __rlimit_resource)r, NULL, &t->rl[r]) < 0)
			return error_set(err, errno, "read its payload's rlimit %d", r);
	return 0;
}

/* What the joiner and the command get, copied by fork. */
struct joiner_args {
	const struct nsrun_config *cfg;         /* the command: args, env, cwd, uid/gid, security */
	const struct exec_target *t;
	const struct nsrun_seccomp *seccomp;
	int landlock_abi;
	bool own_userns;                        /* -u other than the payload's: a user namespace of its own */
	int stdio[3];                           /* the relay's ends for fds 0-2, -1: ours as they are */
	int pid_fd;                             /* the command's pid goes there */
	int report_fd;                          /* a struct nsrun_error on failure; EOF: exec'd */
	pid_t parent;                           /* nsrun exec */
};

static void __attribute__((noreturn)) report(int fd, struct nsrun_error *err, int code)
{
	if (write_all(fd, err, sizeof(*err)) < 0)
		dprintf(2, "nsrun: %s\n", err->msg);
	_exit(code);
}

/* The rlimit r of the payload; where ours is lower (an unprivileged caller
 * cannot raise its hard limit) the lower one.  Returns 0 or -1 with err. */
static int apply_rlimit(int r, const struct rlimit *want, struct nsrun_error *err)
{
	struct rlimit rl = *want, cur;

	if (setrlimit((enum __rlimit_resource)r, &rl) == 0)
		return 0;
	if (errno != EPERM || getrlimit((enum __rlimit_resource)r, &cur) < 0)
		return error_set(err, errno, "setrlimit %d", r);
	if (rl.rlim_max > cur.rlim_max)
		rl.rlim_max = cur.rlim_max;
	if (rl.rlim_cur > rl.rlim_max)
		rl.rlim_cur = rl.rlim_max;
	return setrlimit((enum __rlimit_resource)r, &rl) < 0 ? error_set(err, errno, "setrlimit %d", r) : 0;
}

/* The command, in the container's namespaces: never returns. */
static void __attribute__((noreturn)) command_main(const struct joiner_args *a)
{
	struct nsrun_error err = { .stage = STAGE_CONTAINER };
	const struct nsrun_process *proc = &a->cfg->process;

	exec_reset_signals();
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || setsid() < 0) {
		error_set(&err, errno, "setsid");
		report(a->report_fd, &err, 125);
	}
	for (int i = 0; i < 3; i++) {
		if (a->stdio[i] >= 0 && dup2(a->stdio[i], i) < 0) {
			error_set(&err, errno, "set up fd %d", i);
			report(a->report_fd, &err, 125);
		}
	}
	/* -u other than the payload's ids: a user namespace of its own beside the
	 * payload's, as a run makes one (ns.h); its maps are written through this
	 * pid namespace's /proc, in which we have a number */
	if (a->own_userns && (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0 ||
			      ns_enter_payload_userns(proc->uid, proc->gid, &err) < 0))
		report(a->report_fd, &err, 125);
	if (caps_drop_bounding(&err) < 0 || ns_become(proc->uid, proc->gid, &err) < 0)
		report(a->report_fd, &err, 125);
	/* credential changes clear it */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0) {
		error_set(&err, errno, "set the parent-death signal");
		report(a->report_fd, &err, 125);
	}
	exec_command(a->cfg, a->seccomp, a->landlock_abi, NULL, a->report_fd);
}

/* The joiner: limits, cgroups, namespaces, then the command by clone(2). */
static void __attribute__((noreturn)) joiner_main(const struct joiner_args *a)
{
	struct nsrun_error err = { .stage = STAGE_CONTAINER };
	const struct exec_target *t = a->t;
	long cmd;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != a->parent)
		_exit(125);
	/* while we hold rights over the container, its processes may not read us */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
		error_set(&err, errno, "set non-dumpable");
		report(a->report_fd, &err, 125);
	}
	/* as the payload's: once in its user namespace (setgroups denied) none can go */
	if (geteuid() == 0 && setgroups(0, NULL) < 0 && errno != EPERM) {
		error_set(&err, errno, "drop supplementary groups");
		report(a->report_fd, &err, 125);
	}
	/* here, where root may still raise a hard limit */
	for (int r = 0; r < RLIM_NLIMITS; r++)
		if (apply_rlimit(r, &t->rl[r], &err) < 0)
			report(a->report_fd, &err, 125);
	for (size_t i = 0; i < t->n_cgroups; i++) {
		if (write_file(t->cgroup_procs[i], "0") < 0) {
			error_set(&err, errno, "join the service's cgroup (write %s)", t->cgroup_procs[i]);
			report(a->report_fd, &err, 125);
		}
	}
	/* the container's user namespace first: it owns the others, and joining it
	 * gives us every capability in it (user_namespaces(7)) */
	if (setns(t->userns_outer, CLONE_NEWUSER) < 0) {
		error_set(&err, errno, "join the container's user namespace");
		report(a->report_fd, &err, 125);
	}
	for (int k = 0; k < NS__COUNT; k++) {
		if (t->ns[k] >= 0 && setns(t->ns[k], ns_kinds[k].flag) < 0) {
			error_set(&err, errno, "join the container's %s namespace", ns_kinds[k].name);
			report(a->report_fd, &err, 125);
		}
	}
	if (!a->own_userns) {
		/* a child of the container's: our capabilities there cover it */
		if (setns(t->userns_payload, CLONE_NEWUSER) < 0) {
			error_set(&err, errno, "join the payload's user namespace");
			report(a->report_fd, &err, 125);
		}
		/* before clone: RLIMIT_NPROC counts the processes of this uid in this namespace */
		if (ns_become(a->cfg->process.uid, a->cfg->process.gid, &err) < 0)
			report(a->report_fd, &err, 125);
	} else if (ns_become(0, 0, &err) < 0) {
		/* root of the container's namespace, which may make the command's own */
		report(a->report_fd, &err, 125);
	}
	/* a child of nsrun exec, in the container's pid namespace (setns(2) CLONE_NEWPID
	 * applies to children); its exit signal is ours, SIGCHLD */
	cmd = syscall(SYS_clone, CLONE_PARENT | SIGCHLD, NULL, NULL, NULL, 0);
	if (cmd < 0) {
		error_set(&err, errno, "start the command in the container's pid namespace%s",
			  errno == ENOMEM ? " (is the service stopping?)" : "");
		report(a->report_fd, &err, 125);
	}
	if (cmd == 0)
		command_main(a);
	{
		pid_t p = (pid_t)cmd;
		if (write_all(a->pid_fd, &p, sizeof(p)) < 0)
			_exit(125);
	}
	_exit(0);
}

/* Reads exactly len bytes, or fewer at EOF.  Returns the count, or -1. */
static ssize_t read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

static pid_t wait_child(pid_t pid, int *status)
{
	pid_t r;

	while ((r = waitpid(pid, status, 0)) < 0 && errno == EINTR)
		;
	return r;
}

/* Relays stdio and forwards signals until the command has exited and its output
 * reached the caller (at most FLUSH_GRACE_US later: a process it left behind
 * may hold the pipes).  Returns its wait status. */
static int supervise(pid_t cmd, int sfd, struct stdio_relay *relay)
{
	uint64_t flush_end = 0;
	int status = 0;
	bool exited = false;

	for (;;) {
		struct pollfd pfd[1 + RELAY_POLLFDS] = { { .fd = sfd, .events = POLLIN } };
		int timeout_ms = -1;

		if (exited && !relay_busy(relay))
			return status;
		relay_poll(relay, pfd + 1, &timeout_ms);
		if (exited) {
			uint64_t now = monotonic_us();
			if (now >= flush_end) {
				relay_abandon(relay);
				return status;
			}
			if (timeout_ms < 0 || (uint64_t)timeout_ms > (flush_end - now) / 1000 + 1)
				timeout_ms = (int)((flush_end - now) / 1000 + 1);
		}
		if (poll(pfd, 1 + RELAY_POLLFDS, timeout_ms) < 0) {
			if (errno == EINTR)
				continue;
			relay_abandon(relay);
			kill(cmd, SIGKILL);
			wait_child(cmd, &status);
			return status;
		}
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo != SIGCHLD) {
					if (!exited)
						kill(cmd, (int)si.ssi_signo);
					continue;
				}
				if (!exited && waitpid(cmd, &status, WNOHANG) == cmd) {
					exited = true;
					flush_end = monotonic_us() + FLUSH_GRACE_US;
				}
			}
		}
		relay_handle(relay, pfd + 1);
	}
}

/* Forks the joiner, learns the command's pid, waits for its exec, supervises.
 * Returns the exit status (126/127 after printing why it could not exec), or -1
 * with err. */
static int run_command(const struct nsrun_config *cfg, const struct exec_target *t,
		       const struct nsrun_seccomp *seccomp, int landlock_abi, bool own_userns, bool interactive,
		       struct nsrun_error *err)
{
	_cleanup_close_ int null_fd = -1, sfd = -1, pid_r = -1, report_r = -1;
	struct stdio_relay relay;
	struct joiner_args a = { .cfg = cfg, .t = t, .seccomp = seccomp, .landlock_abi = landlock_abi,
				 .parent = getpid() };
	struct nsrun_error cerr = { 0 };
	int pid_p[2], report_p[2], status = 0, rc = -1;
	sigset_t set, saved;
	pid_t joiner, cmd = -1;
	ssize_t n;

	a.own_userns = own_userns;
	if (!interactive && (null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0)
		return error_set(err, errno, "open /dev/null");
	if (relay_prepare(&relay, interactive ? STDIN_FILENO : null_fd, false, false, UINT64_MAX, err) < 0) {
		relay_close(&relay);
		return -1;
	}
	for (int i = 0; i < 3; i++)
		a.stdio[i] = relay.payload[i];
	if (pipe2(pid_p, O_CLOEXEC) < 0) {
		relay_close(&relay);
		return error_set(err, errno, "pipe");
	}
	if (pipe2(report_p, O_CLOEXEC) < 0) {
		close(pid_p[0]);
		close(pid_p[1]);
		relay_close(&relay);
		return error_set(err, errno, "pipe");
	}
	pid_r = pid_p[0];
	report_r = report_p[0];
	a.pid_fd = pid_p[1];
	a.report_fd = report_p[1];
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	for (const int *s = forward_signals; *s; s++)
		sigaddset(&set, *s);
	/* blocked before the fork: a signal that comes early waits for the command */
	sigprocmask(SIG_BLOCK, &set, &saved);
	sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	fflush(stdout);
	fflush(stderr);
	joiner = sfd < 0 ? -1 : fork();
	if (joiner == 0) {
		close(pid_r);
		close(report_r);
		close(sfd);
		joiner_main(&a);
	}
	close(pid_p[1]);
	close(report_p[1]);
	relay_close_payload_ends(&relay);
	if (joiner < 0) {
		error_set(err, errno, sfd < 0 ? "signalfd" : "fork");
		goto out;
	}
	n = read_full(pid_r, &cmd, sizeof(cmd));
	wait_child(joiner, &status);
	if (n != (ssize_t)sizeof(cmd)) {
		cmd = -1;
		if (read_full(report_r, &cerr, sizeof(cerr)) == (ssize_t)sizeof(cerr)) {
			cerr.msg[sizeof(cerr.msg) - 1] = '\0';
			cerr.hint = NULL;
			*err = cerr;
		} else {
			error_set(err, 0, "the joiner ended (status %d) without a word", status);
		}
		goto out;
	}
	/* sync: the command's report; EOF: it exec'd (the pipe is close-on-exec) */
	n = read_full(report_r, &cerr, sizeof(cerr));
	if (n == (ssize_t)sizeof(cerr)) {
		cerr.msg[sizeof(cerr.msg) - 1] = '\0';
		cerr.hint = NULL;
		wait_child(cmd, &status);
		cmd = -1;
		if (cerr.stage != STAGE_EXEC) {
			*err = cerr;
			goto out;
		}
		/* as a run says it: nsrun: exec "CMD": No such file or directory */
		error_print(&cerr, stderr);
		rc = cerr.errnum == ENOENT ? 127 : 126;
		goto out;
	}
	status = supervise(cmd, sfd, &relay);
	cmd = -1;
	rc = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
out:
	if (cmd > 0) {
		kill(cmd, SIGKILL);
		wait_child(cmd, &status);
	}
	relay_close(&relay);
	sigprocmask(SIG_SETMASK, &saved, NULL);
	return rc;
}

/* The service's directory, state and exec spec; the command's configuration in
 * cfg: the payload's, with x's command, -e, -w and -u.  Returns 0 or -1 with err. */
static int load_service(const struct nsrun_exec_config *x, int *dir_fd, struct nsrun_config *cfg,
			char **profiles_dir, pid_t *monitor, struct nsrun_error *err)
{
	_cleanup_close_ int root_fd = -1;
	struct service_state st;
	char root[PATH_MAX];

	if (!service_name_valid(x->name))
		return error_set(err, 0, "not a service name");
	if ((root_fd = state_open_root(root, sizeof(root), err)) < 0)
		return -1;
	*dir_fd = openat(root_fd, x->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (*dir_fd < 0) {
		error_set(err, 0, "no such service (see nsrun ps)");
		err->hint = "start one with nsrun -d --name NAME ...";
		return -1;
	}
	if (!state_is_alive(*dir_fd) || state_read(*dir_fd, &st) < 0 || strcmp(st.status, "running") != 0 ||
	    st.pid <= 1) {
		error_set(err, 0, "the service is not running (see nsrun ps)");
		err->hint = "nsrun logs NAME says how it ended; nsrun rm NAME removes it";
		return -1;
	}
	*monitor = (pid_t)st.pid;
	if (exec_spec_read(*dir_fd, cfg, profiles_dir, err) < 0) {
		if (err->errnum == ENOENT)
			error_set(err, 0, "the service has no " EXEC_SPEC_FILE " (started by an nsrun without exec)");
		return -1;
	}
	if (cfg->isolation == NSRUN_ISOLATION_REDUCED || cfg->isolation == NSRUN_ISOLATION_MINIMAL)
		return error_set(err, 0, "the service runs at isolation %s: exec joins only a service of isolation full",
				 tier_name(cfg->isolation));
	cfg->isolation = NSRUN_ISOLATION_FULL;
	for (char *const *a = x->argv; a && *a; a++)
		if (strv_push(&cfg->process.args, *a) < 0)
			return error_set(err, ENOMEM, "arguments");
	if (!cfg->process.args.n)
		return error_set(err, 0, "no command");
	for (char *const *e = x->env; e && *e; e++)
		if (strv_setenv(&cfg->process.env, *e) < 0)
			return error_set(err, ENOMEM, "environment");
	if (x->workdir) {
		char *w = strdup(x->workdir);
		if (!w)
			return error_set(err, ENOMEM, "workdir");
		free(cfg->process.cwd);
		cfg->process.cwd = w;
	}
	return 0;
}

static void warn_line(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "nsrun: warning: %s\n", line);
}

int exec_in_service(const struct nsrun_exec_config *x, struct nsrun_error *err)
{
	struct nsrun_config cfg;
	struct exec_target t;
	struct nsrun_seccomp *seccomp = NULL;
	_cleanup_free_ char *profiles_dir = NULL;
	_cleanup_close_ int dir_fd = -1;
	int landlock = 0, rc = -1;
	bool own_userns = false;

	err->stage = STAGE_PREPARE;
	target_init(&t);
	if (config_init(&cfg, err) < 0)
		goto out;
	if (load_service(x, &dir_fd, &cfg, &profiles_dir, &t.monitor, err) < 0)
		goto out;
	/* -u other than the payload's ids: mapped in a user namespace of the command's own */
	if (x->user_set && (x->uid != cfg.process.uid || x->gid != cfg.process.gid)) {
		own_userns = true;
		cfg.process.uid = x->uid;
		cfg.process.gid = x->gid;
	}
	/* compiled before anything is joined: a profile that fails, fails here */
	if (seccomp_prepare(cfg.security.seccomp, profiles_dir,
			    (cfg.security.strict ? NSRUN_SECCOMP_STRICT : 0) |
			    (cfg.security.allow_nested ? NSRUN_SECCOMP_ALLOW_NESTED : 0), warn_line, NULL, &seccomp,
			    err) < 0)
		goto out;
	/* as run.c decides it for the payload */
	if (cfg.security.landlock && !cfg.security.allow_nested)
		landlock = landlock_abi();
	err->stage = STAGE_PREPARE;
	if (find_payload(&t, dir_fd, err) < 0 || open_namespaces(&t, err) < 0 || cgroups_to_join(&t, err) < 0 ||
	    read_rlimits(&t, err) < 0)
		goto out;
	if (x->debug) {
		fprintf(stderr, "nsrun: debug: exec: monitor %d, init %d, payload %d\n", (int)t.monitor, (int)t.init,
			(int)t.payload);
		for (size_t i = 0; i < t.n_cgroups; i++)
			fprintf(stderr, "nsrun: debug: exec: cgroup %s\n", t.cgroup_procs[i]);
		fprintf(stderr, "nsrun: debug: exec: seccomp %s, landlock ABI %d, uid %u gid %u%s\n",
			seccomp ? cfg.security.seccomp : "unconfined", landlock, (unsigned)cfg.process.uid,
			(unsigned)cfg.process.gid, own_userns ? " (a user namespace of its own)" : "");
	}
	rc = run_command(&cfg, &t, seccomp, landlock, own_userns, x->interactive, err);
out:
	if (rc < 0 && x->name)
		error_prefix(err, "exec %s", x->name);
	seccomp_free(seccomp);
	target_close(&t);
	config_free(&cfg);
	return rc;
}
