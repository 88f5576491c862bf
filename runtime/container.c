/* container.c - see container.h */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "container.h"
#include "exec.h"
#include "exec_target.h"
#include "ns.h"
#include "oci_hooks.h"
#include "publish.h"
#include "sync.h"
#include "sys.h"
#include "sysctl.h"
#include "landlock.h"
#include "tier.h"
#include "timing.h"
#include "ucounts.h"

#define PAYLOAD_STACK_BYTES (256u << 10)

/* exec_payload's arguments, and pid 1's fds that the payload closes first (they
 * are close-on-exec, but a failure before its execve must not leave them open in
 * a process that then reports and exits). */
struct payload_start {
	const struct container_args *a;
	const int *stdio;
	int report_fd;
	bool unmapped, shared_mm;
	int close_fds[5];
};

static int payload_main(void *arg)
{
	const struct payload_start *ps = arg;
	const struct container_args *a = ps->a;

	for (size_t i = 0; i < sizeof(ps->close_fds) / sizeof(ps->close_fds[0]); i++)
		if (ps->close_fds[i] >= 0)
			close(ps->close_fds[i]);
	exec_payload(a->cfg, a->rlimits, a->seccomp, a->landlock_abi, ps->unmapped, ps->shared_mm, ps->stdio,
		     a->copy_fds, a->timing, ps->report_fd);
}

/* Starts the payload (exec_payload) as our child; returns its pid, or -1 with
 * errno of fork(2).
 *
 * Where nothing but us can be in the container until the payload has exec'd
 * (a->solo: a foreground run, which no nsrun exec, hook or health check can
 * join), the child is made with clone(2) CLONE_VM | CLONE_VFORK on a stack of
 * its own, as posix_spawn(3) makes its child: it runs in our memory while we
 * wait, until its execve(2) gives it its own.  fork(2) would copy our page
 * tables, and then every page either process writes, and every code page the
 * child runs, is a page fault: on a guest with shadow page tables about 10 us
 * each, a tenth of a cold run.  Our memory is dumpable (open to ptrace(2) by our
 * uid) only while the child writes its id maps (exec_payload, shared_mm), when
 * no other process of the container exists; we make it non-dumpable again after,
 * whatever the child did.  Not with the subids maps, the reduced tier (no maps of
 * its own), --copy-archive (the child forks) or under AddressSanitizer (its
 * runtime is not told of the child's stack and warns of false reports, tried:
 * the sanitizer suites cover the fork path); where clone refuses
 * the flags (valgrind, an outer seccomp filter), fork. */
static pid_t payload_spawn(const struct container_args *a, struct payload_start *ps)
{
	pid_t pid;

#ifndef __SANITIZE_ADDRESS__
	ps->shared_mm = a->solo && !ps->unmapped && a->cfg->userns == NSRUN_USERNS_ONE &&
			a->cfg->isolation == NSRUN_ISOLATION_FULL && !a->copy_fds;
#endif
	if (ps->shared_mm) {
		size_t guard = (size_t)sysconf(_SC_PAGESIZE);
		char *stack = mmap(NULL, guard + PAYLOAD_STACK_BYTES, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);

		if (stack != MAP_FAILED && mprotect(stack, guard, PROT_NONE) == 0) {
			int e;
			pid = clone(payload_main, stack + guard + PAYLOAD_STACK_BYTES, CLONE_VM | CLONE_VFORK | SIGCHLD,
				    ps);
			e = errno;
			if (pid >= 0 && a->timing)
				a->timing->payload_vfork = true;  /* --debug-timing says which */
			/* the child has exec'd or exited: the memory is ours alone again */
			prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
			munmap(stack, guard + PAYLOAD_STACK_BYTES);
			if (pid >= 0)
				return pid;
			if (e != EINVAL && !sys_call_refused(e)) {
				errno = e;
				return -1;
			}
		} else if (stack != MAP_FAILED) {
			munmap(stack, guard + PAYLOAD_STACK_BYTES);
		}
		ps->shared_mm = false;
	}
	pid = fork();
	if (pid == 0)
		payload_main(ps);
	return pid;
}

static void __attribute__((noreturn)) die_with_error(int sync_fd, struct nsrun_error *err)
{
	if (sync_send_error(sync_fd, SYNC_ERROR, err) < 0)
		dprintf(2, "nsrun: %s\n", err->msg); /* the supervisor is gone: last resort */
	_exit(125);
}

/* Blanks nsrun's command line in this process, leaving "nsrun-init": pid 1 is
 * a copy of nsrun, and /proc/1/cmdline, which anyone in the container may read,
 * would show nsrun's arguments (host paths, -e values).  The bounds of the
 * argument area are fields 48 and 49 of /proc/self/stat (proc(5), Linux 3.5);
 * the kernel then reads the zeroed area (get_mm_cmdline in fs/proc/base.c).
 * Nothing is written unless glibc's argv[0] lies in that area (under valgrind the
 * area is valgrind's own).  No allocation (a forked child).  Returns 0, or -1
 * with *err (errno of open(2) or read(2), EINVAL for a stat line it cannot
 * parse). */
static int hide_cmdline(struct nsrun_error *err)
{
	static const char title[] = "nsrun-init";
	unsigned long long area[2];
	unsigned long start, end;

	if (proc_stat_fields(AT_FDCWD, "/proc/self", 48, 2, area) < 0) {
		if (errno != EINVAL)
			return error_set_stage(err, STAGE_CONTAINER, errno, "read /proc/self/stat to hide nsrun's command "
					       "line");
		area[0] = area[1] = 0;
	}
	if (area[1] <= area[0])
		return error_set_stage(err, STAGE_CONTAINER, EINVAL,
		                       "/proc/self/stat: no argument area (fields 48 and 49)");
	start = (unsigned long)area[0];
	end = (unsigned long)area[1];
	/* the area the kernel shows must be our own argv: under valgrind it is
	 * valgrind's, which its client may not write (and nsrun's is not there) */
	if ((unsigned long)program_invocation_name < start || (unsigned long)program_invocation_name >= end)
		return 0;
	memset((void *)start, 0, end - start);
	memcpy((void *)start, title, end - start > sizeof(title) ? sizeof(title) : end - start - 1);
	return 0;
}

/* OCI process.oomScoreAdj: adj (-1000 to 1000) into /proc/self/oom_score_adj,
 * which the payload inherits.  Lowering it needs CAP_SYS_RESOURCE of the host's
 * user namespace, so rootless only raises it: then an error, not less than asked.
 * proc(5), /proc/pid/oom_score_adj.  Returns 0 or -1 with err. */
static int set_oom_score_adj(int adj, struct nsrun_error *err)
{
	char buf[16];
	int fd, n = snprintf(buf, sizeof(buf), "%d", adj);

	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return error_set_stage(err, STAGE_CONTAINER, errno, "process.oomScoreAdj: open /proc/self/oom_score_adj");
	if (write(fd, buf, (size_t)n) != n) {
		int e = errno;
		close(fd);
		return error_set_stage(err, STAGE_CONTAINER, e, "process.oomScoreAdj: set oom_score_adj to %d%s", adj,
				       e == EACCES ? " (lowering it needs privilege on the host)" : "");
	}
	close(fd);
	return 0;
}

/* *unmapped: reduced, and the supervisor could not write the id maps */
static int container_setup(const struct container_args *a, bool *unmapped, struct nsrun_error *err)
{
	struct sync_msg msg;
	struct nsrun_config layered;
	const struct nsrun_config *cfg = a->cfg;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		return error_set_stage(err, STAGE_CONTAINER, errno, "set the parent-death signal");
	/* sync: ID_MAPS_WRITTEN */
	if (sync_expect(a->sync_fd, SYNC_ID_MAPS_WRITTEN, &msg, err) < 0)
		_exit(1); /* the supervisor died or failed: it reports, we just go */
	*unmapped = msg.value == SYNC_UNMAPPED;
	/* an OCI root the supervisor could not idmap (sync.h): layered, not in place */
	if (msg.value == SYNC_ROOT_LAYERED) {
		layered = *a->cfg;
		layered.rootfs_in_place = false;
		cfg = &layered;
	}
	if (a->cfg->oom_score_adj_set && set_oom_score_adj(a->cfg->oom_score_adj, err) < 0)
		return -1;
	/* a joined network (netjoin.c): the helper's clone left us dumpable as
	 * host uid 65534 (as root) while we hold the supervisor's fds; the maps are
	 * written now, so nothing needs it any more */
	if ((a->cfg->network == NSRUN_NETWORK_CONTAINER || a->cfg->network == NSRUN_NETWORK_NAMED ||
	     a->cfg->network == NSRUN_NETWORK_PATH || a->cfg->ns_path[NSRUN_JOIN_IPC] ||
	     a->cfg->ns_path[NSRUN_JOIN_UTS] || a->cfg->ns_path[NSRUN_JOIN_PID] || a->cfg->ns_path[NSRUN_JOIN_USER]) &&
	    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return error_set_stage(err, STAGE_CONTAINER, errno, "set init non-dumpable");
	/* a joined pid namespace (an OCI pod's): we are not its pid 1, whose end
	 * would kill the rest; what the payload leaves comes to us, to be killed
	 * at the end (kill_and_reap_all), as runc kills such a container through
	 * its cgroup */
	if (a->cfg->ns_path[NSRUN_JOIN_PID] && prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		return error_set_stage(err, STAGE_CONTAINER, errno, "become a subreaper");
	if (a->cfg->isolation == NSRUN_ISOLATION_MINIMAL) {
		/* no namespace: orphans of the payload come to us, and (ABI 6) a signal
		 * domain of our own makes kill(-1) reach only our descendants */
		if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
			return error_set_stage(err, STAGE_CONTAINER, errno, "become a subreaper");
		if (a->landlock_abi >= 6 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			return error_set_stage(err, STAGE_CONTAINER, errno, "set no_new_privs on init");
		if (a->landlock_abi >= 6 && landlock_scope_signals(a->landlock_abi, err) < 0)
			return -1;
		/* init stays dumpable: the supervisor's memory watch reads its /proc/PID/root;
		 * the payload cannot ptrace it (seccomp, and Landlock's domain hierarchy) */
		timing_mark(a->timing, TP_INIT_GO);
		timing_mark(a->timing, TP_INIT_READY);
		return 0;
	}
	/* a map does not change our ids, it translates them: move onto the mapped 0;
	 * unmapped (reduced): we stay nobody with every capability of the namespace */
	if (!*unmapped && (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0))
		return error_set_stage(err, STAGE_CONTAINER, errno, "become root of the user namespace");
	timing_mark(a->timing, TP_INIT_GO);
	/* before the mounts: /proc is still the one the supervisor checked */
	if (ucounts_apply(a->ucounts, err) < 0)
		return -1;
	/* OCI linux.sysctl, after: a value of nsrun's IPC limits is checked against them */
	if (sysctl_apply(&a->cfg->sysctl, a->ucounts->ipc_bytes, err) < 0)
		return -1;
	/* credential changes clear the parent-death signal: set it again */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		return error_set_stage(err, STAGE_CONTAINER, errno, "set the parent-death signal");
	/* reduced: no mount at all; the payload chroots itself (exec.c) */
	if (a->cfg->isolation != NSRUN_ISOLATION_REDUCED) {
		struct mount_host_tmp host_tmp = { .fd = -1 };
		int rc = mount_build_root(cfg, a->plan, a->sources, cfg->oci_inside.create_container ? &host_tmp : NULL,
					  a->timing, err);
		/* OCI createContainer hooks: in the container's namespaces, its mounts
		 * made, before pivot_root, their paths the runtime's (config.md
		 * "createContainer Hooks"): the host's /tmp shown again */
		if (rc == 0 && host_tmp.fd >= 0) {
			rc = mount_host_tmp_back(&host_tmp, err);
			err->stage = STAGE_CONTAINER;
			if (rc == 0)
				rc = oci_hooks_run_inside(&cfg->oci_inside, "createContainer", getpid(), err);
		}
		if (host_tmp.fd >= 0)
			close(host_tmp.fd);
		if (rc < 0 || mount_pivot_root(cfg, a->timing, err) < 0)
			return -1;
	}
	err->stage = STAGE_CONTAINER;
	/* a joined uts namespace (an OCI pod's) keeps its maker's hostname: our root
	 * has no capability over it (oci_config_linux.c says so of a hostname) */
	if (!a->cfg->ns_path[NSRUN_JOIN_UTS] && sethostname(a->cfg->hostname, strlen(a->cfg->hostname)) < 0)
		return error_set(err, errno, "set the hostname \"%s\"", a->cfg->hostname);
	/* a namespace joined by path (OCI) is its maker's: runc leaves it as it is,
	 * and our root has no capability over it to change it */
	if (a->cfg->network != NSRUN_NETWORK_PATH && ns_loopback_up(NULL, err) < 0)
		return -1;
	/* the payload has our host uid when the caller is unprivileged: keep it from
	 * ptracing (or reading the memory of) the one process that holds the mounts */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return error_set(err, errno, "set init non-dumpable");
	timing_mark(a->timing, TP_INIT_READY);
	return 0;
}

/* -t: a new pty of the container's own devpts instance (mounted newinstance at
 * /dev/pts, /dev/ptmx -> pts/ptmx: no host pty is reachable), its master sent to
 * the supervisor, which relays it.  Returns the slave fd for the payload's stdio,
 * or -1 with err.  devpts(5), pty(7), TIOCGPTPEER in ioctl_tty(2). */
static int open_pty(const struct container_args *a, struct nsrun_error *err)
{
	int master, slave;

	master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (master < 0)
		return error_set(err, errno, "--tty: open the container's /dev/ptmx");
	if (unlockpt(master) < 0) {
		error_set(err, errno, "--tty: unlock the pty");
		close(master);
		return -1;
	}
	if (a->winsize.ws_row && a->winsize.ws_col && ioctl(master, TIOCSWINSZ, &a->winsize) < 0) {
		error_set(err, errno, "--tty: set the window size");
		close(master);
		return -1;
	}
	slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (slave < 0) {
		error_set(err, errno, "--tty: open the pty's slave");
		close(master);
		return -1;
	}
	/* sync: PTY */
	if (sync_send_fd(a->sync_fd, SYNC_PTY, master, err) < 0) {
		close(master);
		close(slave);
		return -1;
	}
	close(master); /* the supervisor's copy is the only one: EIO there once the slave is gone */
	return slave;
}

/* Reaps every child; returns 1 and sets *status when the payload was among them. */
static int reap(pid_t payload, int *status)
{
	int st, found = 0;
	pid_t p;

	while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
		if (p == payload) {
			*status = st;
			found = 1;
		}
	}
	return found;
}

/* Kills every other process of the pid namespace and reaps them, so their CPU time
 * and memory are counted in our rusage: when init just exits, the kernel reaps them
 * itself with SIGCHLD ignored (zap_pid_ns_processes) and their usage is lost. */
static void kill_and_reap_all(const struct container_args *a)
{
	if (a->cfg->isolation == NSRUN_ISOLATION_MINIMAL) {
		/* no pid namespace: kill(-1) would reach every process of ours on the
		 * host, unless the signal domain above confines it */
		if (a->landlock_abi >= 6)
			kill(-1, SIGKILL);
		tier_kill_descendants();
		return;
	}
	if (a->cfg->ns_path[NSRUN_JOIN_PID]) {
		/* the pod's pid namespace: kill(-1) would reach its other processes.
		 * Ours: what exec started in our mount namespace (it does not descend
		 * from us), then our descendants, reaped.  Numbers of our /proc only */
		char link[32] = "";
		int mnt = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
		if (readlink("/proc/self", link, sizeof(link) - 1) > 0 && atoi(link) == (int)getpid())
			exec_target_kill_own("/proc", getpid(), mnt);
		if (mnt >= 0)
			close(mnt);
		tier_kill_descendants();
		return;
	}
	kill(-1, SIGKILL);
	while (waitpid(-1, NULL, __WALL) > 0 || errno == EINTR)
		;
}

static void __attribute__((noreturn)) init_loop(const struct container_args *a, int sfd, pid_t payload)
{
	struct pollfd pfd[3] = { { .fd = sfd, .events = POLLIN }, { .fd = a->sync_fd, .events = POLLIN },
				 { .fd = a->publish_fd, .events = POLLIN } };
	struct nsrun_error err = { 0 };
	int status;

	for (;;) {
		if (poll(pfd, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		/* -p: a socket in this network namespace for the forwarder (publish.h) */
		if ((pfd[2].revents & (POLLIN | POLLHUP | POLLERR)) && publish_serve(pfd[2].fd) < 0) {
			close(pfd[2].fd);
			pfd[2].fd = -1;
		}
		if (pfd[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			struct sync_msg msg;
			/* sync: KILL_ALL (timeout, output limit); anything else: the supervisor is gone */
			if (sync_recv(a->sync_fd, false, &msg, &err) > 0 && msg.type == SYNC_KILL_ALL) {
				kill_and_reap_all(a);
				_exit(0);
			}
			_exit(1);
		}
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;
			if (read(sfd, &si, sizeof(si)) != sizeof(si))
				continue;
			if (si.ssi_signo != SIGCHLD) {
				kill(payload, (int)si.ssi_signo);
				continue;
			}
			if (reap(payload, &status)) {
				/* whatever the payload left behind dies with it */
				kill_and_reap_all(a);
				/* sync: PAYLOAD_EXITED */
				if (sync_send(a->sync_fd, SYNC_PAYLOAD_EXITED, status, &err) < 0)
					_exit(1);
				_exit(0);
			}
		}
	}
}

/* OCI create: tells the supervisor the container is made, then opens the exec
 * fifo for writing, which blocks until `nsrun start` opens it for reading
 * (fifo(7)).  The byte start waits for is written once the payload exec'd
 * (exec_fifo_done), so start returns only then: a signal, exec or ps right
 * after it finds the payload (runc's init writes it just before its exec).  The
 * fd is reopened through /proc/self/fd (the new /proc is mounted by now).
 * Returns the fifo's fd or -1 with err. */
static int wait_exec_fifo(const struct container_args *a, struct nsrun_error *err)
{
	char path[64];
	int fd;

	/* sync: CREATED */
	if (sync_send(a->sync_fd, SYNC_CREATED, 0, err) < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", a->exec_fifo_fd);
	while ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0 && errno == EINTR)
		;
	if (fd < 0)
		return error_set(err, errno, "open the exec fifo");
	close(a->exec_fifo_fd);
	return fd;
}

/* The payload exec'd: start may return (wait_exec_fifo).  A start that is gone
 * meanwhile (EPIPE; SIGPIPE ignored here) changes nothing: the payload runs. */
static void exec_fifo_done(int fd)
{
	signal(SIGPIPE, SIG_IGN);
	if (write(fd, "0", 1) != 1) {
		/* nobody waits for it */
	}
	close(fd);
}

void container_main(const struct container_args *a)
{
	struct nsrun_error err = { .stage = STAGE_CONTAINER };
	int report[2];
	int stdio[3] = { a->stdio[0], a->stdio[1], a->stdio[2] };
	sigset_t set;
	pid_t payload;
	bool unmapped = false;
	int sfd, fifo_fd = -1;

	for (size_t i = 0; i < sizeof(a->close_fds) / sizeof(a->close_fds[0]); i++)
		if (a->close_fds[i] >= 0)
			close(a->close_fds[i]);
	if (hide_cmdline(&err) < 0 || container_setup(a, &unmapped, &err) < 0)
		die_with_error(a->sync_fd, &err);
	if (a->cfg->tty) {
		int slave = open_pty(a, &err);
		if (slave < 0)
			die_with_error(a->sync_fd, &err);
		stdio[0] = stdio[1] = stdio[2] = slave;
	}
	/* the supervisor blocked these before clone: they stay pending until read here */
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	for (const int *s = a->forward_signals; *s; s++)
		sigaddset(&set, *s);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (sfd < 0) {
		error_set(&err, errno, "signalfd");
		die_with_error(a->sync_fd, &err);
	}
	/* OCI create: a command the container lacks fails create, as runc's does */
	if (a->exec_fifo_fd >= 0 &&
	    ((a->cfg->isolation == NSRUN_ISOLATION_FULL && exec_check_command(a->cfg, &err) < 0) ||
	     (fifo_fd = wait_exec_fifo(a, &err)) < 0))
		die_with_error(a->sync_fd, &err);
	if (pipe2(report, O_CLOEXEC) < 0) {
		error_set(&err, errno, "pipe for the exec report");
		die_with_error(a->sync_fd, &err);
	}
	payload = payload_spawn(a, &(struct payload_start){
		.a = a, .stdio = stdio, .report_fd = report[1], .unmapped = unmapped,
		.close_fds = { report[0], sfd, a->sync_fd, fifo_fd, a->publish_fd } });
	if (payload < 0) {
		error_set(&err, errno, "fork the payload");
		die_with_error(a->sync_fd, &err);
	}
	close(report[1]);
	/* the payload's now */
	for (size_t i = 0; a->copy_fds && i < a->cfg->copy_archive_tars.n; i++)
		close(a->copy_fds[i]);
	/* the payload holds the output pipes now: the supervisor sees EOF when it and
	 * everything it started are gone */
	for (int i = 0; i < 3; i++)
		if (stdio[i] >= 0 && (i == 0 || stdio[i] != stdio[i - 1]))
			close(stdio[i]);
	int exec_rc = exec_report_read(report[0], &err);
	if (exec_rc == 1) {
		timing_mark(a->timing, TP_EXEC_OK);
		/* sync: EXEC_OK */
		if (sync_send(a->sync_fd, SYNC_EXEC_OK, payload, &err) < 0)
			_exit(1);
		if (fifo_fd >= 0)
			exec_fifo_done(fifo_fd);
	} else {
		/* sync: EXEC_OK (as EXEC_FAILED or ERROR) */
		int status = 0;
		waitpid(payload, &status, 0);
		if (exec_rc < 0)
			exec_report_died(status, &err);
		sync_send_error(a->sync_fd, err.stage == STAGE_EXEC ? SYNC_EXEC_FAILED : SYNC_ERROR, &err);
		_exit(125);
	}
	close(report[0]);
	init_loop(a, sfd, payload);
}
