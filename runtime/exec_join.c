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
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "caps.h"
#include "cleanup.h"
#include "config.h"
#include "exec.h"
#include "exec_join.h"
#include "exec_spec.h"
#include "exec_target.h"
#include "image_user.h"
#include "landlock.h"
#include "ns.h"
#include "relay.h"
#include "seccomp.h"
#include "state.h"
#include "sys.h"
#include "tier.h"

#define FLUSH_GRACE_US 1000000  /* after the command's exit, for its last output to reach the caller */

static const int forward_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, 0 };

/* What the joiner and the command get, copied by fork. */
struct joiner_args {
	const struct nsrun_config *cfg;         /* the command: args, env, cwd, uid/gid, security */
	const struct exec_target *t;
	const struct nsrun_seccomp *seccomp;
	int landlock_abi;
	bool own_userns;                        /* -u other than the payload's: a user namespace of its own */
	bool tty;                               /* -t: stdio is a pty's slave, to become the controlling terminal */
	bool detach;                            /* OCI --detach: it outlives nsrun exec (no parent-death signal) */
	int stdio[3];                           /* the relay's ends for fds 0-2, -1: ours as they are */
	int pid_fd;                             /* the command's pid goes there */
	int report_fd;                          /* exec_report_read's protocol (exec.h) */
	pid_t parent;                           /* nsrun exec */
	enum copy_archive_op archive;           /* not NONE: this instead of the command */
	const char *archive_path;
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
	if ((!a->detach && prctl(PR_SET_PDEATHSIG, SIGKILL) < 0) || setsid() < 0) {
		error_set(&err, errno, "setsid");
		report(a->report_fd, &err, 125);
	}
	for (int i = 0; i < 3; i++) {
		if (a->stdio[i] >= 0 && dup2(a->stdio[i], i) < 0) {
			error_set(&err, errno, "set up fd %d", i);
			report(a->report_fd, &err, 125);
		}
	}
	/* -t: the pty becomes our controlling terminal (we lead a new session), so ^C
	 * on it sends SIGINT to our process group; ioctl_tty(2) TIOCSCTTY */
	if (a->tty && ioctl(0, TIOCSCTTY, 0) < 0) {
		error_set(&err, errno, "-t: make the pty the controlling terminal");
		report(a->report_fd, &err, 125);
	}
	/* -u other than the payload's ids: a user namespace of its own beside the
	 * payload's, as a run makes one (ns.h); its maps are written through this
	 * pid namespace's /proc, in which we have a number */
	if (a->own_userns && (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0 ||
			      ns_enter_payload_userns(proc->uid, proc->gid, &err) < 0))
		report(a->report_fd, &err, 125);
	if (caps_keep_bounding(a->cfg->security.cap_add, &err) < 0 || ns_become(proc->uid, proc->gid, &err) < 0)
		report(a->report_fd, &err, 125);
	/* credential changes clear it */
	if (!a->detach && prctl(PR_SET_PDEATHSIG, SIGKILL) < 0) {
		error_set(&err, errno, "set the parent-death signal");
		report(a->report_fd, &err, 125);
	}
	if (a->archive != COPY_ARCHIVE_NONE) {
		/* no execve follows: nsrun's fds (state dir, /proc/<pid>, namespaces, pipes)
		 * must really be closed, not only marked close-on-exec; fds 0-2 and the
		 * report stay.  Confined as the command would be; then the report says
		 * it started. */
		int keep = a->report_fd;
		close_fds_except(&keep, 1);
		exec_confine(a->cfg, a->seccomp, a->landlock_abi, NULL, a->report_fd);
		exec_report_confined(a->report_fd);
		close(a->report_fd);
		_exit(copy_archive_run(a->archive, a->archive_path));
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
	/* a service on a joined network (netjoin.h), an OCI container of joined
	 * paths: their owner is the parent of the container's user namespace, so
	 * they are joined from there first; our capabilities there cover its child,
	 * joined next.  Of our own user namespace (root's ip netns add, the host's
	 * ipc): joined while we have our capabilities over them */
	{
		/* ours (no user namespace to join), the outer owner's, the owner's */
		const int users[3] = { -1, t->userns_join_outer, t->userns_net };
		const unsigned kinds[3] = { t->join_ours, t->join_outer, t->join_first };
		for (int l = 0; l < 3; l++) {
			if (users[l] >= 0 && setns(users[l], CLONE_NEWUSER) < 0) {
				error_set(&err, errno, "join the user namespace that owns the namespaces the service "
					  "joined");
				report(a->report_fd, &err, 125);
			}
			for (int k = 0; k < NS__COUNT; k++) {
				if ((kinds[l] & (1u << k)) && setns(t->ns[k], exec_target_ns_flag((enum ns_kind)k)) < 0) {
					error_set(&err, errno, "join the %s namespace the service joined",
						  exec_target_ns_name((enum ns_kind)k));
					report(a->report_fd, &err, 125);
				}
			}
		}
	}
	/* the container's user namespace first: it owns the others, and joining it
	 * gives us every capability in it (user_namespaces(7)) */
	if (setns(t->userns_outer, CLONE_NEWUSER) < 0) {
		error_set(&err, errno, "join the container's user namespace");
		report(a->report_fd, &err, 125);
	}
	for (int k = 0; k < NS__COUNT; k++) {
		if ((t->join_ours | t->join_outer | t->join_first) & (1u << k))
			continue; /* joined above */
		if (t->ns[k] >= 0 && setns(t->ns[k], exec_target_ns_flag((enum ns_kind)k)) < 0) {
			error_set(&err, errno, "join the container's %s namespace", exec_target_ns_name((enum ns_kind)k));
			report(a->report_fd, &err, 125);
		}
	}
	/* full: the payload's root is its mount namespace's, where pivot_root put it;
	 * reduced chroots the payload into a tree of the host's mounts, which is no
	 * root to put the command at */
	{
		struct stat ns_root, payload_root;
		if (stat("/", &ns_root) < 0 || fstat(t->root_fd, &payload_root) < 0 ||
		    ns_root.st_dev != payload_root.st_dev || ns_root.st_ino != payload_root.st_ino) {
			error_set(&err, 0, "its payload's root is not the root of its mount namespace (a chroot: "
				  "isolation reduced): exec joins only a service of isolation full");
			report(a->report_fd, &err, 125);
		}
	}
	if (t->multi_id) {
		/* --userns subids: the payload's namespace is this one, where setgroups
		 * is allowed: the caller's groups go, as the payload's went */
		if (setgroups(0, NULL) < 0) {
			error_set(&err, errno, "drop supplementary groups");
			report(a->report_fd, &err, 125);
		}
		/* root of it until the command has set its bounding set (command_main) */
		if (ns_become(0, 0, &err) < 0)
			report(a->report_fd, &err, 125);
	} else if (!a->own_userns) {
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

static pid_t wait_child(pid_t pid, int *status)
{
	pid_t r;

	while ((r = waitpid(pid, status, 0)) < 0 && errno == EINTR)
		;
	return r;
}

/* The command's stdio as nsrun exec sees it: the relay's pipes, or with -t the
 * master of a pty of the container's devpts instance. */
struct exec_io {
	struct stdio_relay relay;
	int master;                     /* -t: nonblocking, or -1 */
	struct pty_input in;            /* -t: our stdin on its way to the master */
	struct termios saved;           /* -t: our terminal's mode before raw mode */
	bool termios_saved;
};

/* -t: a new pty of the container's own devpts (mounted newinstance, ptmxmode
 * 0666: mount.c), reached through the payload's root with openat2 inside it, so
 * no symlink of the container leads elsewhere; its size ours.  The master to
 * io, the slave (for the command's stdio) to *slave.  Returns 0 or -1 with err.
 * devpts(5), pty(7), TIOCGPTPEER in ioctl_tty(2). */
static int open_pty(const struct exec_target *t, struct exec_io *io, int *slave, struct nsrun_error *err)
{
	_cleanup_close_ int root = openat(t->proc_fd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct winsize ws;
	struct stat st;

	if (root < 0)
		return error_set(err, errno, "-t: open its payload's root");
	io->master = open_in_root(root, "/dev/pts/ptmx", O_RDWR | O_NOCTTY | O_NONBLOCK);
	if (io->master < 0)
		return error_set(err, errno, "-t: open the container's /dev/pts/ptmx");
	/* the multiplexer of a devpts (5:2), nothing else a payload could put there */
	if (fstat(io->master, &st) < 0 || !S_ISCHR(st.st_mode) || major(st.st_rdev) != 5 || minor(st.st_rdev) != 2)
		return error_set(err, 0, "-t: the container's /dev/pts/ptmx is not a pty multiplexer");
	if (unlockpt(io->master) < 0)
		return error_set(err, errno, "-t: unlock the pty");
	if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0 || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0)
		ioctl(io->master, TIOCSWINSZ, &ws);
	*slave = ioctl(io->master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (*slave < 0)
		return error_set(err, errno, "-t: open the pty's slave");
	return 0;
}

/* -t: our terminal goes raw (cfmakeraw(3)), so every key reaches the pty, whose
 * line discipline does the rest; io_close restores it.  Returns 0 or -1. */
static int tty_raw(struct exec_io *io, struct nsrun_error *err)
{
	struct termios raw;

	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &io->saved) < 0)
		return 0;
	io->termios_saved = true;
	raw = io->saved;
	cfmakeraw(&raw);
	if (tcsetattr(STDIN_FILENO, TCSADRAIN, &raw) < 0)
		return error_set(err, errno, "-t: put the terminal in raw mode");
	return 0;
}

static void io_close(struct exec_io *io)
{
	if (io->master >= 0)
		close(io->master);
	io->master = -1;
	relay_close(&io->relay);
	if (io->termios_saved)
		tcsetattr(STDIN_FILENO, TCSADRAIN, &io->saved);
	io->termios_saved = false;
}

/* Relays stdio and forwards signals until the command has exited and its output
 * reached the caller (at most FLUSH_GRACE_US later: a process it left behind
 * may hold the pipes).  Returns its wait status. */
static int supervise(pid_t cmd, int sfd, struct exec_io *io)
{
	uint64_t flush_end = 0;
	int status = 0;
	bool exited = false;

	for (;;) {
		struct pollfd pfd[3 + RELAY_POLLFDS] = {
			{ .fd = sfd, .events = POLLIN },
			{ .fd = io->in.len ? io->master : -1, .events = POLLOUT },
			{ .fd = io->master >= 0 && io->in.open && !io->in.len && !exited ? STDIN_FILENO : -1,
			  .events = POLLIN },
		};
		int timeout_ms = -1;

		if (exited && !relay_busy(&io->relay))
			return status;
		relay_poll(&io->relay, pfd + 3, &timeout_ms);
		if (exited) {
			uint64_t now = monotonic_us();
			if (now >= flush_end) {
				relay_abandon(&io->relay);
				return status;
			}
			if (timeout_ms < 0 || (uint64_t)timeout_ms > (flush_end - now) / 1000 + 1)
				timeout_ms = (int)((flush_end - now) / 1000 + 1);
		}
		if (poll(pfd, 3 + RELAY_POLLFDS, timeout_ms) < 0) {
			if (errno == EINTR)
				continue;
			relay_abandon(&io->relay);
			kill(cmd, SIGKILL);
			wait_child(cmd, &status);
			return status;
		}
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGWINCH) { /* the kernel tells the command */
					struct winsize ws;
					if (io->master >= 0 && (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0 ||
								ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0))
						ioctl(io->master, TIOCSWINSZ, &ws);
					continue;
				}
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
		relay_handle(&io->relay, pfd + 3);
		if ((pfd[2].revents & (POLLIN | POLLHUP | POLLERR)) || (pfd[1].revents & POLLOUT))
			pty_input_pump(&io->in, io->master, pfd[2].revents != 0, !io->termios_saved);
	}
}

/* Forks the joiner, learns the command's pid, waits for its exec, supervises.
 * Returns the exit status (126/127 after printing why it could not exec), or -1
 * with err. */
static int run_command(const struct nsrun_config *cfg, const struct exec_target *t,
		       const struct nsrun_seccomp *seccomp, int landlock_abi, const struct nsrun_exec_config *x,
		       bool own_userns, struct nsrun_error *err)
{
	_cleanup_close_ int null_fd = -1, sfd = -1, pid_r = -1, report_r = -1, slave = -1;
	struct exec_io io = { .master = -1 };
	struct joiner_args a = { .cfg = cfg, .t = t, .seccomp = seccomp, .landlock_abi = landlock_abi,
				 .parent = getpid(), .own_userns = own_userns, .tty = x->tty,
				 .detach = x->oci && x->detach, .archive = x->archive, .archive_path = x->archive_path };
	struct nsrun_error cerr = { 0 };
	int pid_p[2] = { -1, -1 }, report_p[2] = { -1, -1 }, status = 0, rc = -1;
	sigset_t set, saved;
	pid_t joiner = -1, cmd = -1;
	ssize_t n;

	sigemptyset(&set);
	/* -t: a resize from the moment open_pty reads our size is kept pending for the
	 * signalfd below (SIGWINCH's default is to be discarded) */
	if (x->tty)
		sigaddset(&set, SIGWINCH);
	sigprocmask(SIG_BLOCK, &set, &saved);
	if (!x->interactive && !x->oci && (null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0) {
		error_set(err, errno, "open /dev/null");
		goto out;
	}
	/* OCI: nothing to relay (an empty relay, as for -t): the caller's fds as they are */
	if (relay_prepare(&io.relay, x->interactive ? STDIN_FILENO : null_fd, false, x->tty || x->oci, NULL,
			  err) < 0)
		goto out;
	for (int i = 0; i < 3; i++)
		a.stdio[i] = io.relay.payload[i];
	if (x->tty) {
		int out = -1;
		if (open_pty(t, &io, &slave, err) < 0)
			goto out;
		a.stdio[0] = a.stdio[1] = a.stdio[2] = slave;
		io.in.open = x->interactive;
		if (x->oci && x->console_socket) {
			/* the caller (conmon, containerd's shim) relays the terminal, blocking as runc's */
			fcntl(io.master, F_SETFL, O_RDWR);
			if (send_console_fd(x->console_socket, io.master) < 0) {
				error_set(err, errno, "--console-socket \"%s\": send the terminal", x->console_socket);
				goto out;
			}
			close(io.master);
			io.master = -1;
			io.in.open = false;
		} else if ((out = fcntl(io.master, F_DUPFD_CLOEXEC, 3)) < 0) {
			error_set(err, errno, "-t: dup the pty");
			goto out;
		}
		if (io.master >= 0 && relay_add_pty_output(&io.relay, out, err) < 0)
			goto out;
	}
	if (pipe2(pid_p, O_CLOEXEC) < 0 || pipe2(report_p, O_CLOEXEC) < 0) {
		error_set(err, errno, "pipe");
		goto out;
	}
	pid_r = pid_p[0];
	report_r = report_p[0];
	a.pid_fd = pid_p[1];
	a.report_fd = report_p[1];
	sigaddset(&set, SIGCHLD);
	for (const int *s = forward_signals; *s; s++)
		sigaddset(&set, *s);
	if (x->tty)
		sigaddset(&set, SIGWINCH); /* our terminal's size goes to the pty */
	/* blocked before the fork: a signal that comes early waits for the command */
	sigprocmask(SIG_BLOCK, &set, NULL);
	if ((sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		error_set(err, errno, "signalfd");
		goto out;
	}
	fflush(stdout);
	fflush(stderr);
	joiner = fork();
	if (joiner == 0) {
		close(pid_r);
		close(report_r);
		close(sfd);
		if (io.master >= 0)
			close(io.master);
		joiner_main(&a);
	}
	cleanup_closep(&pid_p[1]);
	cleanup_closep(&report_p[1]);
	relay_close_payload_ends(&io.relay);
	/* ours must go, or the master never says EIO when the command is gone */
	cleanup_closep(&slave);
	if (joiner < 0) {
		error_set(err, errno, "fork");
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
	/* sync: the command's report (exec_report_read) */
	n = exec_report_read(report_r, &cerr);
	if (n != 1) {
		cerr.hint = NULL;
		wait_child(cmd, &status);
		cmd = -1;
		if (n < 0)
			exec_report_died(status, &cerr);
		if (cerr.stage != STAGE_EXEC) {
			*err = cerr;
			goto out;
		}
		/* as a run says it: nsrun: exec "CMD": No such file or directory */
		error_print(&cerr, stderr);
		rc = cerr.errnum == ENOENT ? 127 : 126;
		goto out;
	}
	if (x->started && x->started(cmd, x->started_ctx, err) < 0)
		goto out;
	if (x->oci && x->detach) {
		/* it exec'd: it runs on without us (our parent, a subreaper, gets it) */
		cmd = -1;
		rc = 0;
		goto out;
	}
	if (x->tty && io.master >= 0 && tty_raw(&io, err) < 0)
		goto out;
	status = supervise(cmd, sfd, &io);
	cmd = -1;
	rc = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
out:
	if (cmd > 0) {
		kill(cmd, SIGKILL);
		wait_child(cmd, &status);
	}
	/* the ends not handed over yet (a failure between the two pipes) */
	cleanup_closep(&pid_p[1]);
	cleanup_closep(&report_p[1]);
	if (pid_r < 0)
		cleanup_closep(&pid_p[0]);
	if (report_r < 0)
		cleanup_closep(&report_p[0]);
	io_close(&io);
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

	if (x->oci) {
		/* the OCI runtime's container (oci.h): its directory is opened, it is running */
		if ((*dir_fd = fcntl(x->oci_dir_fd, F_DUPFD_CLOEXEC, 3)) < 0)
			return error_set(err, errno, "dup its state directory");
	} else if (!service_name_valid(x->name)) {
		return error_set(err, 0, "not a service name");
	} else if ((root_fd = state_open_root(root, sizeof(root), err)) < 0) {
		return -1;
	} else {
		*dir_fd = openat(root_fd, x->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (*dir_fd < 0) {
		error_set(err, 0, "no such service (see nsrun ps)");
		err->hint = "start one with nsrun -d --name NAME ...";
		return -1;
	}
	/* (an OCI container's state.json says created until it ends: its caller checked it runs) */
	if (!state_is_alive(*dir_fd) || state_read(*dir_fd, &st) < 0 || (!x->oci && strcmp(st.status, "running") != 0) ||
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
	if (x->env_replace)
		strv_free(&cfg->process.env);
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
	error_warn(stderr, "%s", line);
}

/* -u: the ids the command runs as, into cfg->process.  A name is looked up in the
 * container's own /etc/passwd and /etc/group (t's root, the payload's: image_user.h),
 * as docker exec does.  Ids other than the payload's are mapped in a user namespace
 * of the command's own (*own_userns), but where every id of the range is mapped
 * (--userns subids).  Returns 0 or -1 with err. */
static int exec_user(const struct nsrun_exec_config *x, const struct exec_target *t, struct nsrun_config *cfg,
		     bool *own_userns, struct nsrun_error *err)
{
	uid_t uid = x->uid;
	gid_t gid = x->gid;
	size_t n_groups = 0;

	if (!x->user_set)
		return 0;
	if (x->user_spec && image_user_lookup(t->root_fd, x->user_spec, &uid, &gid, NULL, 0, &n_groups, err) < 0) {
		error_prefix(err, "--user");
		return -1;
	}
	if (uid == cfg->process.uid && gid == cfg->process.gid)
		return 0;
	*own_userns = !t->multi_id;
	cfg->process.uid = uid;
	cfg->process.gid = gid;
	return 0;
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
	pid_t monitor = -1;

	err->stage = STAGE_PREPARE;
	exec_target_init(&t);
	if (config_init(&cfg, err) < 0)
		goto out;
	if (load_service(x, &dir_fd, &cfg, &profiles_dir, &monitor, err) < 0)
		goto out;
	/* OCI exec --preserve-fds: fds 3 to 3+N-1 reach the command (exec.c leaves them open) */
	cfg.preserve_fds = x->oci ? x->preserve_fds : 0;
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
	t.multi_id = cfg.userns == NSRUN_USERNS_SUBIDS;
	if (exec_target_open(&t, dir_fd, monitor, err) < 0)
		goto out;
	if (exec_user(x, &t, &cfg, &own_userns, err) < 0)
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
	rc = run_command(&cfg, &t, seccomp, landlock, x, own_userns, err);
out:
	if (rc < 0 && x->name)
		error_prefix(err, "exec %s", x->name);
	seccomp_free(seccomp);
	exec_target_close(&t);
	config_free(&cfg);
	return rc;
}
