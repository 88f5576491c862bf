/* check_ns.c - the probes of `nsrun check` that need namespaces: which kinds
 * can be made (and how deep user namespaces nest), the start of a container done
 * as a run does it, and a container's mounts.  Each runs in a short-lived child
 * that exits at once (check_internal.h). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "caps.h"
#include "check_internal.h"
#include "diagnose.h"
#include "mount.h"
#include "ns.h"
#include "sync.h"
#include "sys.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

/* ---- namespaces ---- */

static const struct {
	const char *name;
	int flag;
	bool needed;
} ns_kinds[] = {
	{ "mount namespace", CLONE_NEWNS, true },
	{ "pid namespace", CLONE_NEWPID, true },
	{ "net namespace", CLONE_NEWNET, true },
	{ "ipc namespace", CLONE_NEWIPC, true },
	{ "uts namespace", CLONE_NEWUTS, true },
	{ "cgroup namespace", CLONE_NEWCGROUP, true },
	{ "time namespace", CLONE_NEWTIME, false },
};
#define N_NS (sizeof(ns_kinds) / sizeof(ns_kinds[0]))
#define MAX_LEVELS 40   /* more than the kernel's 32 */

struct ns_report {
	struct nsrun_error user;
	int ns_errno[N_NS];
	struct nsrun_error use[N_NS];   /* what a run then does there: hostname, lo up */
	int levels;             /* user namespaces that can still be nested below the first */
	bool by_clone[N_NS];    /* unshare(2) refused, clone(2) made it */
};

/* What container.c does once it is in a new namespace of kind flag. */
static void use_namespace(int flag, struct nsrun_error *use)
{
	if (flag == CLONE_NEWUTS && sethostname("nsrun", 5) < 0)
		error_set(use, errno, "set the hostname in a new uts namespace");
	if (flag == CLONE_NEWNET)
		ns_loopback_up(NULL, use);
}

/* Makes a namespace of kind flag as a run does, by clone(2) (ns.c, ns_clone),
 * in a child that uses it (use_namespace) and reports into *use: an outer filter
 * may refuse unshare(2) of a kind and allow clone(2) of it, and check must not
 * then say less than a run gets.  Returns 0, or the errno of clone. */
static int clone_namespace(int flag, struct nsrun_error *use)
{
	struct nsrun_error e = { .stage = STAGE_CONTAINER }, cerr = { 0 };
	bool in_cgroup;
	int pfd[2], status;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return errno;
	pid = ns_clone(flag, -1, &in_cgroup, &cerr);
	if (pid == 0) {
		close(pfd[0]);
		use_namespace(flag, &e);
		write_all(pfd[1], &e, sizeof(e));
		_exit(0);
	}
	close(pfd[1]);
	if (pid > 0 && read_full(pfd[0], &e, sizeof(e)) == (ssize_t)sizeof(e))
		*use = e;
	close(pfd[0]);
	if (pid < 0)
		return cerr.errnum ? cerr.errnum : EPERM;
	waitpid(pid, &status, 0);
	return 0;
}

/* Whether probe_namespaces tries kind flag by clone after unshare failed with err. */
static bool clone_tried(int err, int flag)
{
	return sys_call_refused(err) && flag != CLONE_NEWTIME;
}

static void probe_namespaces(int out_fd, void *p)
{
	struct ns_report *r = p;

	memset(r, 0, sizeof(*r));
	if (check_enter_userns(&r->user) == 0) {
		for (size_t i = 0; i < N_NS; i++) {
			int flag = ns_kinds[i].flag;
			r->ns_errno[i] = unshare(flag) < 0 ? errno : 0;
			r->use[i].stage = STAGE_CONTAINER;
			/* refused alone: the call a run makes (clone(2) cannot make a time
			 * namespace, which nsrun does not use) */
			if (r->ns_errno[i] && clone_tried(r->ns_errno[i], flag)) {
				int e = clone_namespace(flag, &r->use[i]);
				r->by_clone[i] = e == 0;
				if (e == 0)
					r->ns_errno[i] = 0;
				continue;
			}
			if (!r->ns_errno[i])
				use_namespace(flag, &r->use[i]);
		}
		/* as uid 0 with every capability here, each level maps 0 to 0 */
		while (r->levels < MAX_LEVELS && unshare(CLONE_NEWUSER) == 0 &&
		       write_file("/proc/self/uid_map", "0 0 1\n") == 0 && write_file("/proc/self/gid_map", "0 0 1\n") == 0)
			r->levels++;
	}
	write_all(out_fd, r, sizeof(*r));
}

static bool has_cgroupns(void)
{
	return ns_clone_flags() & CLONE_NEWCGROUP;
}

/* Returns whether a user namespace can be made (the mount probes need one). */
bool check_namespaces(struct check_list *l)
{
	struct ns_report r;
	struct nsrun_error err = { 0 };
	char detail[128];

	if (check_in_child(probe_namespaces, &r, sizeof(r), &err) < 0) {
		check_add_error(l, "user namespace", true, &err, NULL);
		return false;
	}
	if (r.user.errnum || r.user.msg[0]) {
		check_add_error(l, "user namespace", true, &r.user, NULL);
		/* made, its maps refused (Codex's Landlock): the reduced tier runs in it */
		if (r.user.stage == STAGE_ID_MAPS) {
			static const char unmapped[] = "unmapped only (one is made, its id maps are refused): ";
			struct check_item *it = &l->items[l->n - 1];
			size_t n = strnlen(it->detail, sizeof(it->detail) - sizeof(unmapped));

			memmove(it->detail + sizeof(unmapped) - 1, it->detail, n);
			memcpy(it->detail, unmapped, sizeof(unmapped) - 1);
			it->detail[sizeof(unmapped) - 1 + n] = '\0';
		}
		return false;
	}
	if (r.levels < 1) {
		struct check_item *it = check_add(l, "user namespace", true, false);
		snprintf(it->detail, sizeof(it->detail), "one can be made, but no second one inside it (a run "
			 "needs two: the container's and the payload's): nested 32 deep, or an outer limit");
		snprintf(it->fix, sizeof(it->fix), "%s", diag_depth_hint);
	} else {
		snprintf(detail, sizeof(detail), "%s%d more levels can be nested below it",
			 r.levels >= MAX_LEVELS ? "at least " : "", r.levels);
		check_add(l, "user namespace", true, true);
		snprintf(l->items[l->n - 1].detail, sizeof(l->items[0].detail), "%s", detail);
	}
	for (size_t i = 0; i < N_NS; i++) {
		bool needed = ns_kinds[i].needed && (ns_kinds[i].flag != CLONE_NEWCGROUP || has_cgroupns());
		struct check_item *it;

		if (r.ns_errno[i] == 0) {
			/* made: then what a run does in it (no error: an ok line) */
			if (r.use[i].msg[0])
				diag_refine(&r.use[i], PROC);
			check_add_error(l, ns_kinds[i].name, needed, &r.use[i], NULL);
			if (r.by_clone[i] && !r.use[i].msg[0])
				snprintf(l->items[l->n - 1].detail, sizeof(l->items[0].detail),
					 "by clone(2), as a run makes it (an outer filter refuses unshare(2) of it)");
			continue;
		}
		it = check_add(l, ns_kinds[i].name, needed, false);
		snprintf(it->detail, sizeof(it->detail), "%s(%s) in a new user namespace: %s%s",
			 clone_tried(r.ns_errno[i], ns_kinds[i].flag) ? "unshare and clone" : "unshare",
			 ns_kinds[i].name, strerror(r.ns_errno[i]),
			 r.ns_errno[i] == EINVAL ? " (the kernel lacks it)" : "");
		snprintf(it->fix, sizeof(it->fix), "%s",
			 !needed ? "none needed: nsrun does not use it"
			 : r.ns_errno[i] == EINVAL ? "a kernel built with this namespace"
			 : "let the outer sandbox allow it (seccomp or LSM policy)");
	}
	return true;
}

/* ---- the start of a container, step for step as run.c and container.c do it ---- */

/* The container's side: wait for the id maps, become 0, set the hostname, bring
 * lo up; the answer (EXEC_OK with the socket lo came up through, or the ERROR)
 * goes back over the same sync channel.  Never returns. */
static void __attribute__((noreturn)) start_child(int sync_fd)
{
	struct nsrun_error e = { .stage = STAGE_CONTAINER };
	struct sync_msg msg;
	const char *via = NULL;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* sync: ID_MAPS_WRITTEN */
	if (sync_expect(sync_fd, SYNC_ID_MAPS_WRITTEN, &msg, &e) < 0)
		_exit(1);
	if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
		error_set(&e, errno, "become root of the user namespace");
	else if (sethostname("nsrun", 5) < 0)
		error_set(&e, errno, "set the hostname \"nsrun\"");
	else if (ns_loopback_up(&via, &e) == 0)
		caps_clear_and_nnp(&e); /* as every tier's payload does (an outer filter may deny capset) */
	/* sync: EXEC_OK (as the answer of the probe: the name of the socket lo came up
	 * through, a static string, is valid in both copies of the program, as sync.h's hint) */
	if (e.msg[0])
		sync_send_error(sync_fd, SYNC_ERROR, &e);
	else
		sync_send(sync_fd, SYNC_EXEC_OK, (int64_t)(intptr_t)via, &e);
	_exit(0);
}

/* What a run does up to its mounts: a socketpair for the sync channel, clone
 * with every namespace of a run, the id maps written by this process through
 * the same path (ns_write_id_maps: as root 0 -> 65534), ID_MAPS_WRITTEN by
 * write(2), the answer read back.  Proxies (unshare in a child that maps
 * itself) miss what differs: the /proc of another pid namespace, a root
 * caller's map, an outer filter's denied calls. */
void check_start(struct check_list *l)
{
	struct nsrun_error err = { 0 };
	struct sync_msg msg;
	uid_t uid;
	gid_t gid;
	bool in_cgroup;
	int sv[2], status;
	char detail[200];
	pid_t child;

	if (ns_host_ids(&uid, &gid, &err) < 0) {
		check_add_error(l, "container start", true, &err, NULL);
		return;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		error_set_stage(&err, STAGE_PREPARE, errno, "socketpair(AF_UNIX, SOCK_STREAM) for the channel to the "
				"container");
		if (errno == EPERM || errno == EACCES)
			err.hint = sync_socketpair_denied_hint;
		check_add_error(l, "container start", true, &err, NULL);
		return;
	}
	child = ns_clone(ns_clone_flags(), -1, &in_cgroup, &err);
	if (child == 0) {
		close(sv[0]);
		start_child(sv[1]);
	}
	close(sv[1]);
	if (child > 0 && ns_write_id_maps(child, uid, gid, &err) == 0 &&
	    sync_send(sv[0], SYNC_ID_MAPS_WRITTEN, 0, &err) == 0 &&
	    sync_expect(sv[0], SYNC_EXEC_OK, &msg, &err) == 0)
		memset(&err, 0, sizeof(err));
	close(sv[0]);
	if (child > 0) {
		kill(child, SIGKILL);
		while (waitpid(child, &status, 0) < 0 && errno == EINTR)
			;
	}
	if (err.msg[0]) {
		diag_refine(&err, PROC);
		if (!err.hint)
			err.hint = "no fix inside this sandbox: what refuses the call named is the outer sandbox's "
				   "(its seccomp filter or security module); run nsrun outside it";
		check_add_error(l, "container start", true, &err, NULL);
		return;
	}
	snprintf(detail, sizeof(detail), "clone with a run's namespaces, id maps 0 -> %u written by nsrun, sync "
		 "by write/read, hostname, lo up through %s, capabilities cleared", (unsigned)uid,
		 msg.value ? (const char *)(intptr_t)msg.value : "?");
	check_add_error(l, "container start", true, &err, detail);
}

/* ---- mounts: a fresh /proc, the /dev nodes, pivot_root ---- */

static const char *const dev_nodes[] = { "null", "zero", "full", "random", "urandom", "tty" };

struct mount_report {
	struct nsrun_error tmpfs, proc, dev, pivot;
};

/* pid 1 of the probe's pid namespace: the steps a container takes, on a tmpfs
 * over /tmp (in this mount namespace only, as mount.c stages a run there). */
static void probe_mounts_inside(struct mount_report *r)
{
	char path[64];

	if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=755") < 0) {
		error_set_stage(&r->tmpfs, STAGE_MOUNT, errno, "mount a tmpfs");
		diag_refine(&r->tmpfs, PROC);
		return;
	}
	/* a refused mkdir is not a refused mount: diag_refine names an outer filter */
	if (mkdir("/tmp/proc", 0755) < 0) {
		error_set_stage(&r->proc, STAGE_MOUNT, errno, "mkdir /tmp/proc");
		diag_refine(&r->proc, PROC);
	} else if (mount("proc", "/tmp/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
		diag_proc_mount(errno, PROC, &r->proc);
	}
	if (mkdir("/tmp/dev", 0755) < 0) {
		error_set_stage(&r->dev, STAGE_MOUNT, errno, "mkdir /tmp/dev");
		diag_refine(&r->dev, PROC);
	}
	for (size_t i = 0; i < sizeof(dev_nodes) / sizeof(dev_nodes[0]) && !r->dev.msg[0]; i++) {
		char host[32];
		int fd;

		snprintf(path, sizeof(path), "/tmp/dev/%s", dev_nodes[i]);
		snprintf(host, sizeof(host), "/dev/%s", dev_nodes[i]);
		fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0 || close(fd) < 0 || mount(host, path, "none", MS_BIND, NULL) < 0) {
			error_set_stage(&r->dev, STAGE_MOUNT, errno, "bind %s", host);
			diag_refine(&r->dev, PROC);
		}
	}
	/* into the tmpfs as a run does (on the initramfs too, where a run moves the root) */
	if (chdir("/tmp") < 0) {
		error_set_stage(&r->pivot, STAGE_MOUNT, errno, "chdir into the tmpfs");
		diag_refine(&r->pivot, PROC);
	} else if (mount_pivot_here(&r->pivot) < 0) {
		diag_refine(&r->pivot, PROC);
	}
}

static void probe_mounts(int out_fd, void *p)
{
	struct mount_report *r = p;
	int fds[2];
	pid_t pid;

	memset(r, 0, sizeof(*r));
	if (check_enter_userns(&r->tmpfs) < 0)
		goto out;
	if (unshare(CLONE_NEWNS | CLONE_NEWPID) < 0) {
		error_set_stage(&r->tmpfs, STAGE_MOUNT, errno, "unshare a mount and pid namespace");
		goto out;
	}
	if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0) {
		if (errno == EPERM)
			diag_mount_refused(&r->tmpfs, PROC);
		else
			error_set(&r->tmpfs, errno, "make mount propagation private");
		r->tmpfs.stage = STAGE_MOUNT;
		diag_refine(&r->tmpfs, PROC);
		goto out;
	}
	/* the new pid namespace takes effect for children: proc is mounted by its pid 1 */
	if (pipe2(fds, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
		error_set_stage(&r->tmpfs, STAGE_MOUNT, errno, "fork into the pid namespace");
		goto out;
	}
	if (pid == 0) {
		close(fds[0]);
		probe_mounts_inside(r);
		write_all(fds[1], r, sizeof(*r));
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], r, sizeof(*r)) != (ssize_t)sizeof(*r))
		error_set_stage(&r->tmpfs, STAGE_MOUNT, 0, "the probe's pid 1 exited without a report");
	waitpid(pid, NULL, 0);
out:
	write_all(out_fd, r, sizeof(*r));
}

void check_mounts(struct check_list *l)
{
	struct mount_report r;
	struct nsrun_error err = { 0 };

	if (check_in_child(probe_mounts, &r, sizeof(r), &err) < 0) {
		check_add_error(l, "mounts", true, &err, NULL);
		return;
	}
	if (r.tmpfs.errnum || r.tmpfs.msg[0]) {
		check_add_error(l, "mounts", true, &r.tmpfs, NULL);
		return;
	}
	check_add_error(l, "fresh /proc", true, &r.proc, NULL);
	check_add_error(l, "/dev nodes", true, &r.dev, "null, zero, full, random, urandom, tty");
	check_add_error(l, "pivot_root", true, &r.pivot, NULL);
}

void check_mounts_skipped(struct check_list *l)
{
	struct check_item *it = check_add(l, "mounts", true, false);

	snprintf(it->detail, sizeof(it->detail), "not probed: they need a user namespace");
	snprintf(it->fix, sizeof(it->fix), "that of the user namespace line");
}
