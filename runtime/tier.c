/* tier.c - see tier.h */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/openat2.h>

#include <seccomp.h>    /* libseccomp's (runtime/ is an -iquote directory) */

#include "caps.h"
#include "diagnose.h"
#include "landlock.h"
#include "mount.h"
#include "ns.h"
#include "sync.h"
#include "sys.h"
#include "tier.h"

#define CRUMB_LEN 32 /* the longest call name a probe leaves (crumb) */

#define PROC "/proc"

const char *tier_name(enum nsrun_isolation t)
{
	switch (t) {
	case NSRUN_ISOLATION_FULL:
		return "full";
	case NSRUN_ISOLATION_REDUCED:
		return "reduced";
	case NSRUN_ISOLATION_MINIMAL:
		return "minimal";
	default:
		return "auto";
	}
}

int tier_parse(const char *s, enum nsrun_isolation *t, struct nsrun_error *err)
{
	if (strcmp(s, "full") == 0 || strcmp(s, "default") == 0)
		*t = NSRUN_ISOLATION_FULL;
	else if (strcmp(s, "reduced") == 0 || strcmp(s, "chroot") == 0)
		*t = NSRUN_ISOLATION_REDUCED;
	else if (strcmp(s, "minimal") == 0)
		*t = NSRUN_ISOLATION_MINIMAL;
	else
		return error_set_stage(err, STAGE_CONFIG, 0, "--isolation: \"%s\": unknown (full, reduced or minimal)", s);
	return 0;
}

void tier_warn(const struct nsrun_config *cfg, FILE *out)
{
	if (cfg->isolation != NSRUN_ISOLATION_REDUCED && cfg->isolation != NSRUN_ISOLATION_MINIMAL)
		return;
	error_warn(out, "isolation %s%s%s%s: %s (--strict refuses it)", tier_name(cfg->isolation),
		cfg->isolation_why ? " (" : "", cfg->isolation_why ? cfg->isolation_why : "",
		cfg->isolation_why ? ")" : "", tier_lacks(cfg->isolation, geteuid() == 0));
}

bool tier_host_root(void)
{
	return ns_is_host_root();
}

const char *tier_lacks(enum nsrun_isolation t, bool root)
{
	switch (t) {
	case NSRUN_ISOLATION_REDUCED:
		return "no mount namespace of its own: no fresh /proc, no /dev, no tmpfs /tmp, no volumes, no "
		       "/etc/hosts or /etc/hostname of nsrun's (the image's own: without one, localhost may not "
		       "resolve); the image read-only by Landlock, not by a mount; where the outer sandbox refuses "
		       "the id maps the user namespace stays unmapped";
	case NSRUN_ISOLATION_MINIMAL:
		return root ? "no namespace at all: host pid, network (sockets refused by seccomp, but "
			      "socketpair), ipc and hostname; chroot into the image as uid 65534; no /proc, no /dev, no "
			      "/etc/hosts of nsrun's; "
			      "a process that outlives nsrun is not killed with it"
			    : "no namespace at all: host pid, network (sockets refused by seccomp, but "
			      "socketpair), ipc and hostname; the payload runs as you, on this sandbox's own file "
			      "system (read-only by Landlock), not in the image; --pids-limit is not enforced "
			      "without a cgroup; a process that outlives nsrun is not killed with it";
	default:
		return "";
	}
}

static const char outer_denies_hint[] = "no fix inside this sandbox: what refuses the call named is the outer "
					"sandbox's (its seccomp filter or security module); run nsrun outside it";

/* Names the call the probe makes next in the page the parent reads (in_child):
 * a filter that kills the call (SECCOMP_RET_KILL_PROCESS) leaves no report but
 * this. */
static void crumb(char *page, const char *call)
{
	if (page)
		snprintf(page, CRUMB_LEN, "%s", call);
}

/* The supervisor's calls that have no fallback there, made for real and their
 * errors left alone (a refusal is met where each is made): only a filter that
 * kills one matters here, which took nsrun down with exit 159 and no word
 * (helper, session 20): the image's lock (image.c), the container's files
 * through openat2 (sys.c, open_in_root), /proc read (readlinkat, getdents64)
 * and the container's init by pidfd (ns.c, ns_proc_pid). */
static void supervisor_calls(char *page)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT };
	char link[64];
	DIR *d;
	int fd;

	crumb(page, "open(2)");
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	crumb(page, "flock(2)");
	if (fd >= 0 && flock(fd, LOCK_SH | LOCK_NB) == 0)
		flock(fd, LOCK_UN);
	crumb(page, "openat2(2)");
	if (fd >= 0) {
		int f = (int)syscall(SYS_openat2, fd, ".", &how, sizeof(how));
		if (f >= 0)
			close(f);
	}
	crumb(page, "getdents64(2)");
	if (fd >= 0 && (d = fdopendir(fd))) {
		while (readdir(d))
			;
		closedir(d);
		fd = -1;
	}
	if (fd >= 0)
		close(fd);
	crumb(page, "readlinkat(2)");
	if (readlinkat(AT_FDCWD, "/proc/self/exe", link, sizeof(link)) < 0) {
		/* no /proc here: the run says so where it reads it */
	}
	crumb(page, "pidfd_open(2)");
	fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (fd >= 0)
		close(fd);
}

/* The calls every tier's set-up makes outside the namespaces' own work: the
 * supervisor's signal mask, its channel to the container (run.c) and its
 * nonblocking output pipes (relay.c), init's signalfd and poll loop
 * (container.c), the payload's setsid, dup2 of its stdio and fchdir to its
 * working directory (exec.c), the fstatfs of the file systems looked at
 * (mount.c, memwatch.c); first, supervisor_calls (page: crumb's).  An
 * outer filter that refuses one fails every run of every tier; the probes of
 * the namespaces alone then said a tier worked (breaker, session 19).  Each call
 * is made for real, with arguments it accepts, in the probe's own child.
 * Returns 0 or -1 with e. */
static int common_calls(struct nsrun_error *e, char *page)
{
	struct pollfd pfd = { .events = POLLIN };
	struct statfs sfs;
	sigset_t none;
	int sv[2], fd;

	e->stage = STAGE_PREPARE;
	supervisor_calls(page);
	crumb(page, "the calls of every tier");
	sigemptyset(&none);
	if (sigprocmask(SIG_BLOCK, &none, NULL) < 0) {
		error_set(e, errno, "block signals");
		e->hint = outer_denies_hint;
		return -1;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		error_set(e, errno, "socketpair(AF_UNIX, SOCK_STREAM) for the channel to the container");
		e->hint = errno == EPERM || errno == EACCES ? sync_socketpair_denied_hint : outer_denies_hint;
		return -1;
	}
	pfd.fd = sv[0];
	if ((fd = signalfd(-1, &none, SFD_CLOEXEC)) < 0) {
		error_set(e, errno, "signalfd");
	} else {
		close(fd);
		if (poll(&pfd, 1, 0) < 0)
			error_set(e, errno, "poll");
		else if (fstatfs(sv[0], &sfs) < 0)
			error_set(e, errno, "fstatfs");
		else if (fcntl(sv[0], F_SETFL, O_NONBLOCK) < 0)
			error_set(e, errno, "make the output pipe nonblocking");
		else if (dup2(sv[0], sv[1]) < 0)
			error_set(e, errno, "dup2");
		else if (setsid() < 0)
			error_set(e, errno, "setsid");
		else if ((fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC)) >= 0) {
			if (fchdir(fd) < 0)
				error_set(e, errno, "fchdir to the working directory");
			close(fd);
		}
	}
	close(sv[0]);
	close(sv[1]);
	if (!e->msg[0])
		return 0;
	e->hint = outer_denies_hint;
	return -1;
}

/* With a probe's wait status: -1 with *why when SIGSYS killed it at the call
 * its page names (crumb), else 0.  Unmaps the page either way. */
static int killed_at(int status, char *page, struct nsrun_error *why)
{
	char call[CRUMB_LEN] = "";

	if (page) {
		memcpy(call, page, CRUMB_LEN - 1);
		munmap(page, CRUMB_LEN);
	}
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSYS || !call[0])
		return 0;
	error_set(why, 0, "the isolation probe was killed by SIGSYS at %s: an outer seccomp filter "
		  "kills that call, which nsrun makes (a run there ends the same way, exit 159, "
		  "with no message)", call);
	why->hint = outer_denies_hint;
	return -1;
}

/* A shared page for crumb, or NULL. */
static char *crumb_page(void)
{
	char *page = mmap(NULL, CRUMB_LEN, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return page == MAP_FAILED ? NULL : page;
}

int tier_supervisor_probe(struct nsrun_error *why)
{
	char *page = crumb_page();
	int status = 0;
	pid_t pid;

	fflush(NULL);   /* nothing buffered may be written twice */
	pid = fork();
	if (pid < 0) {
		if (page)
			munmap(page, CRUMB_LEN);
		return error_set(why, errno, "fork a probe of nsrun's own calls");
	}
	if (pid == 0) {
		supervisor_calls(page);
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return killed_at(status, page, why);
}

/* Runs fn in a child that reports a struct nsrun_error over a pipe, after the
 * calls every tier makes (common_calls).  Returns 0 when the child reported no
 * error, else -1 with *why. */
static int in_child(void (*fn)(struct nsrun_error *e), struct nsrun_error *why)
{
	struct nsrun_error e = { 0 };
	int fds[2], status = 0;
	ssize_t got;
	pid_t pid;
	/* shared with the child: the call it makes next (crumb) */
	char *page = crumb_page();

	if (pipe2(fds, O_CLOEXEC) < 0) {
		if (page)
			munmap(page, CRUMB_LEN);
		return error_set(why, errno, "pipe for an isolation probe");
	}
	fflush(NULL);   /* nothing buffered may be written twice */
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		if (page)
			munmap(page, CRUMB_LEN);
		return error_set(why, errno, "fork an isolation probe");
	}
	if (pid == 0) {
		close(fds[0]);
		if (common_calls(&e, page) == 0) {
			crumb(page, "");
			fn(&e);
		}
		write_all(fds[1], &e, sizeof(e));
		_exit(0);
	}
	close(fds[1]);
	got = read(fds[0], &e, sizeof(e));
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (got != (ssize_t)sizeof(e)) {
		if (killed_at(status, page, why) < 0)
			return -1;
		if (WIFSIGNALED(status))
			return error_set(why, 0, "the isolation probe was killed by signal %d (%s): an outer seccomp "
					 "filter?", WTERMSIG(status), strsignal(WTERMSIG(status)));
		return error_set(why, 0, "the isolation probe exited (status %d) without a report", status);
	}
	if (page)
		munmap(page, CRUMB_LEN);
	e.msg[sizeof(e.msg) - 1] = '\0';
	if (!e.msg[0])
		return 0;
	*why = e;
	return -1;
}

/* What the payload of every tier does last before its filters (exec.c):
 * every capability set cleared, no_new_privs.  An outer seccomp filter that
 * denies capset(2) fails every tier there.  Returns 0 or -1. */
static int drop_privileges(struct nsrun_error *e)
{
	e->stage = STAGE_EXEC;
	return caps_clear_and_nnp(e);
}

/* The prctls of init and the payload around the payload's user namespace
 * (container.c, exec.c): the parent-death signal set again after the ids
 * changed, init non-dumpable, the payload dumpable while it writes its maps.  A
 * filter may refuse prctl by its option alone (breaker, session 20).  Returns 0
 * or -1. */
static int init_prctls(struct nsrun_error *e)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		return error_set(e, errno, "set the parent-death signal");
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return error_set(e, errno, "set init non-dumpable");
	return 0;
}

/* The payload's own user namespace (exec.c: dumpable while it writes its maps),
 * mapped; then with chroot_too (reduced) a chroot into the image; then its
 * ambient and bounding sets, its ids, and the rest of drop_privileges. */
static void payload_inside(struct nsrun_error *e, bool mapped, bool chroot_too)
{
	if (mapped && (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0 ||
		       ns_enter_payload_userns(NSRUN_DEFAULT_UID, NSRUN_DEFAULT_UID, e) < 0 ||
		       prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)) {
		if (!e->msg[0])
			error_set(e, errno, "set dumpable");
		return;
	}
	if (chroot_too && (chroot("/") < 0 || chdir("/") < 0)) {
		error_set(e, errno, "chroot in the user namespace");
		return;
	}
	if (caps_drop_bounding(e) < 0 || (mapped && ns_become(NSRUN_DEFAULT_UID, NSRUN_DEFAULT_UID, e) < 0))
		return;
	drop_privileges(e);
}

/* The mount calls mount.c builds /dev and masks /proc with, flags and all, on
 * directories of the probe's tmpfs (a filter may refuse a mount by its flags:
 * breaker, session 20): a tmpfs of MOP_DEV's flags, a node created and the
 * host's bound onto it, an empty read-only tmpfs (MOP_MASK_DIR), a directory
 * bound onto itself and made read-only (MOP_READONLY, mount_set_attrs).
 * Returns 0 or -1 with e. */
static int root_mounts(struct nsrun_error *e)
{
	int fd;

	e->stage = STAGE_MOUNT;
	if (mount("tmpfs", "/tmp/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "size=64k,mode=755") < 0) {
		error_set(e, errno, "mount tmpfs on /dev");
	} else if ((fd = open("/tmp/dev/null", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666)) < 0) {
		error_set(e, errno, "create /dev/null");
	} else if (close(fd), mount("/dev/null", "/tmp/dev/null", "none", MS_BIND, NULL) < 0) {
		error_set(e, errno, "bind the host's /dev/null");
	} else if (mkdir("/tmp/dev/m", 0755) < 0 || mkdir("/tmp/dev/r", 0755) < 0) {
		error_set(e, errno, "mkdir in /dev");
	} else if (mount("tmpfs", "/tmp/dev/m", "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
			 "mode=0555,size=0") < 0) {
		error_set(e, errno, "mount an empty tmpfs over a masked path");
	} else if (mount("/tmp/dev/r", "/tmp/dev/r", "none", MS_BIND | MS_REC, NULL) < 0) {
		error_set(e, errno, "bind a read-only path onto itself");
	} else if ((fd = open("/tmp/dev/r", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
		error_set(e, errno, "open a read-only path");
	} else {
		if (mount_set_attrs(fd, false, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV) < 0)
			error_set(e, errno, "make a path read-only");
		close(fd);
	}
	if (!e->msg[0])
		return 0;
	diag_refine(e, PROC);
	return -1;
}

/* pid 1 of the full probe, mapped: what container.c and mount.c do first. */
static void full_inside(struct nsrun_error *e)
{
	int fd;

	if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0) {
		error_set_stage(e, STAGE_CONTAINER, errno, "become root of the user namespace");
		return;
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		if (errno == EPERM)
			diag_mount_refused(e, PROC);
		else
			error_set(e, errno, "make mount propagation private");
		e->stage = STAGE_MOUNT;
		return;
	}
	if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=755") < 0) {
		error_set_stage(e, STAGE_MOUNT, errno, "mount a tmpfs");
		diag_refine(e, PROC);
		return;
	}
	/* the calls mount.c makes the new root's files with: mkdir (the root),
	 * mkdirat, symlinkat (the /dev links), fchmod (etc_files.c) */
	if (mkdir("/tmp/proc", 0755) < 0 || mkdirat(AT_FDCWD, "/tmp/dev", 0755) < 0 ||
	    symlinkat("/proc/self/fd", AT_FDCWD, "/tmp/dev/fd") < 0) {
		error_set_stage(e, STAGE_MOUNT, errno, "make the new root's directories and links in a tmpfs");
		diag_refine(e, PROC);
		return;
	}
	fd = open("/tmp/dev", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fchmod(fd, 0755) < 0) {
		error_set_stage(e, STAGE_MOUNT, errno, "fchmod in a tmpfs");
		diag_refine(e, PROC);
		if (fd >= 0)
			close(fd);
		return;
	}
	close(fd);
	if (mount("proc", "/tmp/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
		diag_proc_mount(errno, PROC, e);
		return;
	}
	if (root_mounts(e) < 0)
		return;
	/* into the tmpfs as a run does, by fd (its /proc is then at /proc) */
	fd = open("/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fchdir(fd) < 0) {
		error_set_stage(e, STAGE_MOUNT, errno, "chdir into the tmpfs");
		diag_refine(e, PROC);
		if (fd >= 0)
			close(fd);
		return;
	}
	close(fd);
	if (mount_pivot_here(e) < 0)
		return;
	if (chdir("/") < 0) {   /* as mount_pivot_root */
		error_set(e, errno, "chdir /");
		diag_refine(e, PROC);
		return;
	}
	e->stage = STAGE_CONTAINER;
	if (sethostname("nsrun", 5) < 0) {
		error_set(e, errno, "set the hostname");
		diag_refine(e, PROC);
		return;
	}
	if (ns_loopback_up(NULL, e) < 0 || init_prctls(e) < 0)
		return;
	payload_inside(e, true, false);
}

/* reduced: no mount; what container.c and exec.c do there, mapped (the
 * supervisor wrote the id maps) or unmapped (the outer sandbox refused them). */
static void reduced_inside(struct nsrun_error *e, bool mapped)
{
	e->stage = STAGE_CONTAINER;
	/* as container.c: mapped, onto the mapped 0; a refusal fails the run there,
	 * so it fails the probe (it was taken for "unmapped": breaker, session 19) */
	if (mapped && (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)) {
		error_set(e, errno, "become root of the user namespace");
		return;
	}
	if (sethostname("nsrun", 5) < 0) {
		error_set(e, errno, "set the hostname");
		diag_refine(e, PROC);
		return;
	}
	if (ns_loopback_up(NULL, e) < 0 || init_prctls(e) < 0)
		return;
	payload_inside(e, mapped, true);
}

/* Clones the namespaces of tier t; with full, writes the id maps as run.c does
 * (host ids: ours), then lets the child go and returns its report. */
static void clone_probe(enum nsrun_isolation t, struct nsrun_error *e)
{
	int go[2], rep[2];
	bool in_cgroup, mapped;
	pid_t pid;
	uid_t uid;
	gid_t gid;
	char b = 'g';

	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(rep, O_CLOEXEC) < 0) {
		error_set(e, errno, "pipe for an isolation probe");
		return;
	}
	pid = ns_clone(ns_clone_flags(), -1, &in_cgroup, e);
	if (pid < 0)
		return;
	if (pid == 0) {
		struct nsrun_error c = { 0 };
		close(go[1]);
		close(rep[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (read(go[0], &b, 1) != 1)
			_exit(0);
		if (t == NSRUN_ISOLATION_FULL)
			full_inside(&c);
		else
			reduced_inside(&c, b == 'm');
		write_all(rep[1], &c, sizeof(c));
		_exit(0);
	}
	close(go[0]);
	close(rep[1]);
	/* the ids a run maps to; reduced goes on unmapped, except as host root (it
	 * would keep uid 0) */
	if (ns_host_ids(&uid, &gid, e) < 0) {
		/* nothing */
	} else if ((mapped = ns_write_id_maps(pid, uid, gid, e) == 0) ||
	    (t == NSRUN_ISOLATION_REDUCED && !tier_host_root() && ns_id_maps_refused(e->errnum))) {
		b = mapped ? 'm' : 'u';
		memset(e, 0, sizeof(*e));
		if (write(go[1], &b, 1) != 1 || read(rep[0], e, sizeof(*e)) != (ssize_t)sizeof(*e))
			error_set_stage(e, STAGE_CONTAINER, 0, "the isolation probe's pid 1 died without a report "
					"(an outer seccomp filter?)");
	}
	close(go[1]);
	close(rep[0]);
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

static void probe_full(struct nsrun_error *e)
{
	clone_probe(NSRUN_ISOLATION_FULL, e);
}

static void probe_reduced(struct nsrun_error *e)
{
	if (landlock_abi() <= 0) {
		error_set(e, ENOSYS, "the image is kept read-only by Landlock, which is not available here");
		return;
	}
	clone_probe(NSRUN_ISOLATION_REDUCED, e);
}

static void probe_minimal(struct nsrun_error *e)
{
	scmp_filter_ctx ctx;
	uid_t uid;
	gid_t gid;
	int rc;

	/* no tier runs a payload that would be host root */
	if (ns_host_ids(&uid, &gid, e) < 0)
		return;
	/* the payload's prctls of every tier (exec.c), kept as the run keeps them */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL) < 0) {
		error_set(e, errno, "set dumpable and the parent-death signal");
		return;
	}
	if (geteuid() == 0) {
		/* what exec.c does: chroot, then uid and gid 65534 (unmapped here: EINVAL) */
		if (chroot("/") < 0) {
			error_set(e, errno, "chroot");
			return;
		}
		if (setresgid(NSRUN_DEFAULT_UID, NSRUN_DEFAULT_UID, NSRUN_DEFAULT_UID) < 0 ||
		    setresuid(NSRUN_DEFAULT_UID, NSRUN_DEFAULT_UID, NSRUN_DEFAULT_UID) < 0) {
			error_set(e, errno, "become uid and gid %d", NSRUN_DEFAULT_UID);
			return;
		}
	} else if (landlock_abi() < 6) {
		error_set(e, ENOSYS, "without a namespace the payload would see this file system writable and "
			  "could signal your processes: the minimal tier needs Landlock ABI 6 (Linux 6.12), this "
			  "kernel has %d", landlock_abi());
		return;
	}
	if (drop_privileges(e) < 0)
		return;
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx) {
		error_set(e, ENOMEM, "seccomp_init");
		return;
	}
	rc = seccomp_load(ctx);
	seccomp_release(ctx);
	if (rc < 0)
		error_set(e, -rc, "load a seccomp filter");
}

int tier_probe(enum nsrun_isolation t, struct nsrun_error *why)
{
	memset(why, 0, sizeof(*why));
	switch (t) {
	case NSRUN_ISOLATION_FULL:
		return in_child(probe_full, why);
	case NSRUN_ISOLATION_REDUCED:
		return in_child(probe_reduced, why);
	case NSRUN_ISOLATION_MINIMAL:
		return in_child(probe_minimal, why);
	default:
		return error_set(why, EINVAL, "no such isolation tier");
	}
}

enum nsrun_isolation tier_select(char *why_not, size_t len, struct nsrun_error *none)
{
	static const enum nsrun_isolation order[] = { NSRUN_ISOLATION_FULL, NSRUN_ISOLATION_REDUCED,
						      NSRUN_ISOLATION_MINIMAL };
	struct nsrun_error why;
	size_t used = 0;

	if (why_not && len)
		why_not[0] = '\0';
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		char line[sizeof(why.msg) + 64];

		if (tier_probe(order[i], &why) == 0)
			return order[i];
		error_format(&why, line, sizeof(line));
		if (why_not && used < len)
			used += (size_t)snprintf(why_not + used, len - used, "%s%s: %s", used ? "; " : "",
						 tier_name(order[i]), line);
		if (none)
			*none = why;
	}
	return NSRUN_ISOLATION_AUTO;
}

int tier_choose(struct nsrun_config *cfg, struct nsrun_error *err)
{
	char why[1024];
	struct nsrun_error none = { 0 };
	enum nsrun_isolation t;

	if (cfg->isolation != NSRUN_ISOLATION_AUTO)
		return 0;
	t = tier_select(why, sizeof(why), &none);
	if (t == NSRUN_ISOLATION_AUTO) {
		/* none works: the full run then fails with its own exact cause and fix */
		cfg->isolation = NSRUN_ISOLATION_FULL;
		return 0;
	}
	cfg->isolation = t;
	if (t != NSRUN_ISOLATION_FULL && !(cfg->isolation_why = strdup(why)))
		return error_set(err, ENOMEM, "isolation");
	return 0;
}

int tier_load_no_net_filter(struct nsrun_error *err)
{
	static const char *const io_uring[] = { "io_uring_setup", "io_uring_enter", "io_uring_register" };
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int rc;

	if (!ctx)
		return error_set_stage(err, STAGE_EXEC, ENOMEM, "seccomp_init");
	/* no_new_privs is already set (exec.c); any other ABI (i386 socketcall) is killed */
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	if (rc == 0 && seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) < 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_THREAD);
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
				      SCMP_A0(SCMP_CMP_NE, AF_UNIX));
	/* nor an AF_UNIX socket: without a network namespace the caller's own
	 * (an `nsrun api` socket, the session bus, ssh-agent) and the host's abstract
	 * ones are in reach, and a Landlock ruleset does not stop a connect(2) to a
	 * socket file.  A socketpair(2) reaches nothing outside and stays. */
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, AF_UNIX));
	/* io_uring can open sockets too (IORING_OP_SOCKET) */
	for (size_t i = 0; rc == 0 && i < sizeof(io_uring) / sizeof(io_uring[0]); i++) {
		int nr = seccomp_syscall_resolve_name(io_uring[i]);
		if (nr != __NR_SCMP_ERROR)
			rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
	}
	if (rc == 0)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	if (rc < 0)
		return error_set_stage(err, STAGE_EXEC, -rc, "isolation minimal: load the filter that refuses network "
				       "sockets");
	return 0;
}

/* SIGKILLs each process whose parent (field 4 of /proc/PID/stat) is self.
 * Returns how many were found. */
static unsigned kill_children(pid_t self)
{
	DIR *d = opendir(PROC);
	struct dirent *de;
	unsigned n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		unsigned long long ppid;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		if (proc_stat_fields(dirfd(d), de->d_name, 4, 1, &ppid) == 0 && ppid == (unsigned long long)self) {
			kill((pid_t)atoi(de->d_name), SIGKILL);
			n++;
		}
	}
	closedir(d);
	return n;
}

void tier_kill_descendants(void)
{
	pid_t self = getpid();
	char link[32] = "";
	/* a /proc of another pid namespace would name other processes by our pid */
	bool own_proc = readlink(PROC "/self", link, sizeof(link) - 1) > 0 && atoi(link) == (int)self;

	/* bounded: a /proc of another pid namespace shows none of them (then only
	 * those already dead are reaped) */
	for (int round = 0; round < 2000; round++) {
		pid_t p;

		if (own_proc)
			kill_children(self);
		while ((p = waitpid(-1, NULL, WNOHANG | __WALL)) > 0)
			;
		if (p < 0 && errno == ECHILD)
			return;
		usleep(1000);
	}
}
