/* oci_create.c - the OCI verbs create, run and start (runtime.md "Operations",
 * "Lifecycle"): a container's monitor and init made from a bundle, waiting on its
 * exec fifo until start, and the hooks of those steps (oci_hooks.h). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup_systemd.h"
#include "cleanup.h"
#include "exec_spec.h"
#include "netjoin.h"
#include "oci_config.h"
#include "oci_hooks.h"
#include "oci_internal.h"
#include "publish.h"
#include "result.h"
#include "run.h"
#include "seccomp.h"
#include "state.h"
#include "sys.h"

#define SECCOMP_FILE "seccomp.json"
#define CREATE_WAIT_US (120ULL * 1000000) /* set-up of a created container, on a loaded machine */

static void warn_all(const struct oci_globals *g, const struct strv *w)
{
	for (size_t i = 0; i < w->n; i++)
		oci_warn(g, w->v[i]);
}

/* ---- create, run ---- */

struct create_opts {
	const char *bundle;
	const char *pid_file;
	const char *console_socket;
	long preserve_fds;
	bool detach;            /* run --detach */
	bool keep;              /* run --keep */
	const char *id;
};

#define START_ERROR_FILE "start-error" /* in ROOT/ID/: why the container ended at start */

/* The error of a start that failed, for start to say (start_error): "ERRNUM
 * STAGE", the message and the hint, a line each.  Returns 0 or -1. */
static int keep_start_error(int dir_fd, const struct nsrun_error *err)
{
	_cleanup_close_ int fd = openat(dir_fd, START_ERROR_FILE, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
					0600);
	const char *hint = error_hint(err);
	char text[1024];
	int n;

	if (fd < 0)
		return -1;
	n = snprintf(text, sizeof(text), "%d %d\n%s\n%s\n", err->errnum, err->stage, err->msg, hint ? hint : "");
	return write_all(fd, text, (size_t)n < sizeof(text) ? (size_t)n : sizeof(text) - 1);
}

/* The error keep_start_error kept for container id (dir_fd) into err, its hint in
 * hint (of size len; err->hint points there), or one saying the container ended.
 * Returns -1. */
static int start_error(int dir_fd, const char *id, struct nsrun_error *err, char *hint, size_t len)
{
	_cleanup_close_ int fd = openat(dir_fd, START_ERROR_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	char text[1024], *msg, *h, *end;
	ssize_t n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : -1;
	int errnum, stage;

	if (n <= 0 || (text[n] = '\0', sscanf(text, "%d %d", &errnum, &stage) != 2) || !(msg = strchr(text, '\n')) ||
	    !(h = strchr(++msg, '\n')))
		return error_set(err, 0, "container \"%s\" ended before its process was exec'd", id);
	*h++ = '\0';
	if ((end = strchr(h, '\n')))
		*end = '\0';
	error_set_stage(err, stage, errnum, "%s", error_one_line(msg));
	snprintf(hint, len, "%s", error_one_line(h));
	err->hint = hint[0] ? hint : NULL;
	return -1;
}

/* True while create still reads ready_fd's other end (it has not had "R" and
 * returned): a pipe whose reader is gone polls POLLERR (pipe(7)). */
static bool create_waits(int ready_fd)
{
	struct pollfd p = { .fd = ready_fd, .events = POLLOUT };

	return poll(&p, 1, 0) >= 0 && !(p.revents & POLLERR);
}

/* The monitor: runs the container with the caller's stdio; tells the waiting
 * create over ready_fd ("R" once the container waits on its fifo, else the error).
 * Returns the run's exit status. */
static int monitor_main(struct nsrun_config *cfg, int dir_fd, int ready_fd, struct service_state *st)
{
	struct publish_state pub;
	struct nsrun_result result;
	int code, run_ready = fcntl(ready_fd, F_DUPFD_CLOEXEC, 3);

	setsid();
	st->pid = getpid();
	state_write(dir_fd, st);
	publish_init(&pub);
	/* the run closes its copy: ours stays for the error */
	nsrun_run_service(cfg, &result, NULL,
			  &(struct nsrun_service_io){ .pub = &pub, .ready_fd = run_ready, .stop_fd = -1, .log_index_fd = -1 });
	if (result.status == NSRUN_STATUS_ERROR && result.before_payload && create_waits(ready_fd)) {
		/* create is still waiting: the error is said once, by it */
		if (write(ready_fd, &result.error, sizeof(result.error)) < 0) {
			/* create is gone: nobody to tell */
		}
	} else if ((result.status == NSRUN_STATUS_ERROR && result.before_payload) ||
		   result.status == NSRUN_STATUS_EXEC_FAILED) {
		/* create returned: an error at start (the payload's exec, a startContainer
		 * hook) is start's to say, as runc's start says it (podman reads "no such
		 * file or directory" there as 127) */
		if (keep_start_error(dir_fd, &result.error) < 0)
			result_report(&result, stderr);
	} else {
		result_report(&result, stderr);
	}
	code = result_exit_code(&result);
	result_free(&result);
	snprintf(st->status, sizeof(st->status), "exited");
	st->exit_code = code;
	state_write(dir_fd, st);
	return code;
}

/* --preserve-fds N and LISTEN_FDS (systemd's socket activation, sd_listen_fds(3),
 * for us when LISTEN_PID is our pid): as runc, the listening fds then the
 * preserved ones, from fd 3, reach the payload, which gets LISTEN_FDS and
 * LISTEN_PID=2 (the payload is pid 2 of its pid namespace, after nsrun's init).
 * Each must be open now, before create opens anything that could take a free
 * number.  Returns 0 or -1 with err. */
static int pass_fds(const struct create_opts *o, struct nsrun_config *cfg, struct nsrun_error *err)
{
	const char *fds = getenv("LISTEN_FDS"), *pid = getenv("LISTEN_PID");
	long listen = 0;
	char kv[32];

	if (fds && pid && atol(pid) == (long)getpid()) {
		char *end;
		listen = strtol(fds, &end, 10);
		if (*end || listen < 0 || listen > 1024)
			return error_set(err, 0, "LISTEN_FDS=\"%s\": expected a number of fds", fds);
	}
	if (o->preserve_fds > 1024)
		return error_set(err, 0, "--preserve-fds %ld: at most 1024", o->preserve_fds);
	cfg->preserve_fds = (unsigned)(listen + o->preserve_fds);
	for (unsigned fd = 3; fd < 3 + cfg->preserve_fds; fd++)
		if (fcntl((int)fd, F_GETFD) < 0)
			return error_set(err, errno, "%s: fd %u is not open", fd < 3 + listen ? "LISTEN_FDS" :
					 "--preserve-fds", fd);
	if (listen) {
		snprintf(kv, sizeof(kv), "LISTEN_FDS=%ld", listen);
		if (strv_setenv(&cfg->process.env, kv) < 0 || strv_setenv(&cfg->process.env, "LISTEN_PID=2") < 0)
			return error_set(err, ENOMEM, "LISTEN_FDS");
	}
	return 0;
}

/* --systemd-cgroup: linux.cgroupsPath "slice:prefix:name" as runc takes it: refused
 * where no systemd runs (runc's "systemd not running on this host"), else the
 * cgroup the manager would give the scope, which nsrun makes itself (a warning: no
 * unit is started).  Returns 0 or -1 with err. */
static int systemd_cgroups_path(struct nsrun_config *cfg, struct strv *warnings, struct nsrun_error *err)
{
	char path[1024], why[256], line[1200];
	struct stat st;

	if (!cfg->cgroups_path)
		return 0;
	if (cgroup_systemd_path(cfg->cgroups_path, geteuid() == 0, path, sizeof(path), why, sizeof(why)) < 0) {
		error_set(err, 0, "config.json: linux.cgroupsPath with --systemd-cgroup: %s", why);
		err->hint = "give \"slice:prefix:name\" (runc's form), or leave --systemd-cgroup out for a cgroup path";
		return -1;
	}
	/* sd_booted(3): the manager's own directory */
	if (lstat("/run/systemd/system", &st) < 0 || !S_ISDIR(st.st_mode)) {
		error_set(err, 0, "--systemd-cgroup: systemd is not running on this host (no /run/systemd/system), "
			  "so no systemd cgroup manager can place linux.cgroupsPath \"%s\"", cfg->cgroups_path);
		err->hint = "leave --systemd-cgroup out (and give linux.cgroupsPath as a path): nsrun makes the cgroup itself";
		return -1;
	}
	snprintf(line, sizeof(line), "linux.cgroupsPath \"%s\" (--systemd-cgroup): no systemd unit is started: "
		 "nsrun makes the cgroup %s itself", cfg->cgroups_path, path);
	if (strv_push(warnings, line) < 0)
		return error_set(err, ENOMEM, "--systemd-cgroup");
	free(cfg->cgroups_path);
	if (!(cfg->cgroups_path = strdup(path)))
		return error_set(err, ENOMEM, "--systemd-cgroup");
	return 0;
}

/* Removes the state directory id under root_fd if it is still dir_fd's: a delete
 * --force may have removed it meanwhile, and a new create made another of that id. */
static void remove_own_state(int root_fd, int dir_fd, const char *id)
{
	struct stat a, b;

	if (fstat(dir_fd, &a) == 0 && fstatat(root_fd, id, &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino)
		state_remove_dir(root_fd, id);
}

/* Makes the container and its monitor; returns 0 with *monitor (our child), the
 * container waiting on its fifo, or -1 with err (nothing left).  *in_monitor is
 * set in the monitor, which returns its exit status in *code. */
static int create_container(const struct oci_globals *g, const struct create_opts *o, pid_t *monitor, bool *in_monitor,
			    int *code, struct nsrun_error *err)
{
	struct nsrun_config cfg;
	struct strv warnings = { 0 };
	_cleanup_free_ char *bundle = NULL, *seccomp_json = NULL, *hooks = NULL, *annotations = NULL;
	_cleanup_close_ int root_fd = -1, dir_fd = -1, lock_fd = -1, log_fd = -1, creating_fd = -1;
	char root[PATH_MAX], fifo[PATH_MAX + NAME_MAX_LEN + 16];
	struct service_state st;
	struct nsrun_error cerr = { 0 };
	int ready[2] = { -1, -1 };
	ssize_t n;
	int rc = -1;

	*in_monitor = false;
	if (config_init(&cfg, err) < 0)
		return -1;
	if (!(bundle = realpath(o->bundle, NULL))) {
		error_set(err, errno, "--bundle \"%s\"", o->bundle);
		goto out;
	}
	if (oci_config_load(bundle, &cfg, &warnings, &seccomp_json, err) < 0) {
		err->hint = "docs/oci-runtime.md says what of config.json nsrun takes";
		goto out;
	}
	if (oci_hooks_load(bundle, &hooks, err) < 0 || oci_annotations_load(bundle, &annotations, err) < 0)
		goto out;
	if (g->systemd_cgroup && systemd_cgroups_path(&cfg, &warnings, err) < 0)
		goto out;
	if (cfg.tty && !o->console_socket) {
		error_set(err, 0, "config.json: process.terminal is true: give --console-socket PATH, where the "
			  "terminal goes");
		goto out;
	}
	if (cfg.tty && !(cfg.console_socket = strdup(o->console_socket))) {
		error_set(err, ENOMEM, "--console-socket");
		goto out;
	}
	if (o->console_socket && !cfg.tty) {
		error_set(err, 0, "--console-socket given but config.json's process.terminal is not true");
		goto out;
	}
	if (pass_fds(o, &cfg, err) < 0)
		goto out;
	if (config_validate(&cfg, err) < 0)
		goto out;
	warn_all(g, &warnings);
	if ((root_fd = oci_open_root(g, root, sizeof(root), err)) < 0)
		goto out;
	/* a pod's namespaces named by its infra container's pid file (podman) */
	if (net_join_resolve_monitors(root_fd, &cfg, err) < 0)
		goto out;
	if (!service_name_valid(o->id)) {
		error_set(err, 0, "container id \"%s\": use [a-zA-Z0-9][a-zA-Z0-9_.-]*, at most %d characters", o->id,
			  NAME_MAX_LEN);
		goto out;
	}
	/* "creating" until this create returns: start and delete refuse it while the
	 * container sets up and its prestart and createRuntime hooks run (runtime.md
	 * "Lifecycle" 2-4), and state, kill and delete --force wait for its state.
	 * Made before the exec fifo, whose opening by a start would let the payload
	 * run: a start that finds the fifo and then no "creating" knows the hooks
	 * have passed (start_container).  It is in the directory before the directory
	 * is seen, held locked (flock(2)) by this create alone, so that no one finds
	 * the container without it and start and delete tell a create that was killed
	 * meanwhile (oci_create_ended) */
	if ((dir_fd = state_create_dir_held(root_fd, o->id, CREATING_FILE, &creating_fd, &lock_fd, &log_fd, err)) < 0) {
		if (!err->errnum)
			snprintf(err->msg, sizeof(err->msg), "container \"%s\" exists (delete it first)", o->id);
		goto out;
	}
	/* the config's profile, compiled by the monitor as a --security-opt seccomp=PATH
	 * would be (a bad one ends the create with its message) */
	if (seccomp_json) {
		char path[sizeof(fifo)];
		_cleanup_close_ int fd = openat(dir_fd, SECCOMP_FILE, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		snprintf(path, sizeof(path), "%s/%s/%s", root, o->id, SECCOMP_FILE);
		free(cfg.security.seccomp);
		if (fd < 0 || write_all(fd, seccomp_json, strlen(seccomp_json)) < 0 ||
		    !(cfg.security.seccomp = strdup(path))) {
			error_set(err, errno, "write %s", path);
			goto remove;
		}
	}
	if (hooks) {
		_cleanup_close_ int fd = openat(dir_fd, HOOKS_FILE, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0 || write_all(fd, hooks, strlen(hooks)) < 0) {
			error_set(err, errno, "write %s/%s/%s", root, o->id, HOOKS_FILE);
			goto remove;
		}
	}
	if (annotations) {
		_cleanup_close_ int fd = openat(dir_fd, ANNOTATIONS_FILE, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0 || write_all(fd, annotations, strlen(annotations)) < 0) {
			error_set(err, errno, "write %s/%s/%s", root, o->id, ANNOTATIONS_FILE);
			goto remove;
		}
	}
	/* what exec needs of the payload that it cannot read from the running one (exec_spec.h) */
	if (exec_spec_write(dir_fd, &cfg, seccomp_profiles_dir(), err) < 0)
		goto remove;
	snprintf(fifo, sizeof(fifo), "%s/%s/%s", root, o->id, FIFO_FILE);
	/* writable by the container's init, whose id on the host is not ours as root */
	if (mkfifoat(dir_fd, FIFO_FILE, 0600) < 0 || fchmodat(dir_fd, FIFO_FILE, 0622, 0) < 0 ||
	    !(cfg.exec_fifo = strdup(fifo)) || pipe2(ready, O_CLOEXEC) < 0) {
		error_set(err, errno, "make %s", fifo);
		goto remove;
	}
	memset(&st, 0, sizeof(st));
	snprintf(st.name, sizeof(st.name), "%s", o->id);
	snprintf(st.status, sizeof(st.status), "created");
	snprintf(st.bundle, sizeof(st.bundle), "%s", bundle);
	snprintf(st.image, sizeof(st.image), "%s", cfg.rootfs);
	/* a joined network namespace: exec joins it as the container did (exec_target.h) */
	snprintf(st.network, sizeof(st.network), "%s", cfg.network == NSRUN_NETWORK_PATH ? "path" : "");
	{
		static const char *const kinds[NSRUN_JOIN__COUNT] = { [NSRUN_JOIN_IPC] = "ipc", [NSRUN_JOIN_UTS] = "uts",
								      [NSRUN_JOIN_PID] = "pid", [NSRUN_JOIN_USER] = "user" };
		size_t used = 0;
		st.joined[0] = '\0';
		for (int k = 0; k < NSRUN_JOIN__COUNT; k++)
			if (cfg.ns_path[k] && kinds[k])
				used += (size_t)snprintf(st.joined + used, sizeof(st.joined) - used, "%s%s",
							 used ? "," : "", kinds[k]);
	}
	shell_quote_join((const char *const *)cfg.process.args.v, cfg.process.args.n, st.command, sizeof(st.command));
	st.created = (long long)time(NULL);
	/* createContainer and startContainer: run by the container itself, with the
	 * state as it will be then (its pid filled in there) */
	if (oci_hooks_count(hooks, "createContainer") || oci_hooks_count(hooks, "startContainer")) {
		struct nsrun_oci_inside *in = &cfg.oci_inside;
		_cleanup_free_ char *same_tail = NULL;

		in->create_container = oci_hooks_count(hooks, "createContainer") > 0;
		if (!(in->hooks = strdup(hooks)) ||
		    oci_state_split(dir_fd, &st, "creating", &in->state_head[0], &in->state_tail) < 0 ||
		    oci_state_split(dir_fd, &st, "created", &in->state_head[1], &same_tail) < 0) {
			error_set(err, ENOMEM, "container \"%s\": its state for the hooks", o->id);
			goto remove;
		}
	}
	fflush(stdout);
	fflush(stderr);
	if ((*monitor = fork()) < 0) {
		error_set(err, errno, "fork the monitor");
		goto remove;
	}
	if (*monitor == 0) {
		close(ready[0]);
		cleanup_closep(&creating_fd); /* its lock is this create's, not the monitor's */
		*in_monitor = true;
		*code = monitor_main(&cfg, dir_fd, ready[1], &st);
		/* held until the kernel ends this process: a stop or delete waits for that,
		 * not for the close before our exit's work (an ASan build's leak check) */
		lock_fd = -1;
		rc = 0;
		goto out;
	}
	close(ready[1]);
	ready[1] = -1;
	cleanup_closep(&lock_fd); /* the monitor holds it */
	{
		struct pollfd pfd = { .fd = ready[0], .events = POLLIN };
		char c = 0;
		int r;
		while ((r = poll(&pfd, 1, (int)(CREATE_WAIT_US / 1000))) < 0 && errno == EINTR)
			;
		if (r == 1 && read(ready[0], &c, 1) == 1 && c == 'R') {
			/* prestart, createRuntime: the container is made (runtime.md "Lifecycle" 3, 4) */
			_cleanup_free_ char *state = hooks ? oci_state_text(dir_fd) : NULL;
			if (hooks && !state)
				error_set(err, errno, "container \"%s\": its state for the hooks", o->id);
			else if ((!hooks || (oci_hooks_run(hooks, "prestart", state, err) == 0 &&
					     oci_hooks_run(hooks, "createRuntime", state, err) == 0)) &&
				 (!o->pid_file || oci_write_pid_file(o->pid_file, *monitor, err) == 0)) {
				/* created now, unless a delete --force or a kill ended it meanwhile.
				 * Asked before "creating" goes: from then on a start may run the
				 * payload, which this create must not then fail and remove
				 * (a payload that ended at once looks like a kill) */
				bool alive = state_is_alive(dir_fd);
				bool deleted = unlinkat(dir_fd, CREATING_FILE, 0) < 0;
				if (!deleted && alive) {
					rc = 0;
					goto out;
				}
				if (o->pid_file)
					unlink(o->pid_file);
				error_set_stage(err, STAGE_SUPERVISE, 0, "container \"%s\" %s while it was being created",
						o->id, deleted ? "was deleted" : "ended");
			}
		} else if (r == 1 && (n = read(ready[0], (char *)&cerr + 1, sizeof(cerr) - 1)) == (ssize_t)sizeof(cerr) - 1) {
			memcpy(&cerr, &c, 1);
			cerr.msg[sizeof(cerr.msg) - 1] = '\0';
			error_one_line(cerr.msg);
			*err = cerr;
			/* the monitor is a fork of ours: a static hint is at the same address */
			err->hint = error_hint_from_peer(err->hint);
		} else {
			error_set_stage(err, STAGE_SUPERVISE, 0, "container \"%s\" %s before it was created", o->id,
					r == 0 ? "was not set up within 120 s" : "ended");
		}
	}
	kill(*monitor, SIGKILL);
	while (waitpid(*monitor, NULL, 0) < 0 && errno == EINTR)
		;
	oci_wait_gone(dir_fd);
remove:
	remove_own_state(root_fd, dir_fd, o->id);
out:
	if (ready[0] >= 0)
		close(ready[0]);
	if (ready[1] >= 0)
		close(ready[1]);
	strv_free(&warnings);
	config_free(&cfg);
	return rc;
}

/* Lets the created container dir_fd go on: opens its fifo (which unblocks the
 * container's init), reads the byte it writes, removes the fifo.  Returns 0 or -1
 * with err: a container that ended before its payload's execve gives the error
 * that ended it (start_error; its hint in hint, of size hint_len). */
static int start_container(int dir_fd, const char *id, struct nsrun_error *err, char *hint, size_t hint_len)
{
	_cleanup_close_ int fd = -1;
	char c;

	if (!state_is_alive(dir_fd))
		return error_set(err, 0, "container \"%s\" is stopped: it cannot be started", id);
	if (oci_is_creating(dir_fd) && oci_create_ended(dir_fd))
		return error_set(err, 0, "container \"%s\": its create ended before its hooks did: delete it", id);
	if (oci_is_creating(dir_fd))
		return error_set(err, 0, "container \"%s\" is still being created: start it once its create has returned",
				 id);
	if (!oci_is_created(dir_fd))
		return error_set(err, 0, "container \"%s\" is running already", id);
	/* again, now that the fifo is there: create makes "creating" before the fifo
	 * and removes it after its hooks, so only this order shuts out a start that
	 * looked before "creating" was made (opening the fifo lets the payload run) */
	if (oci_is_creating(dir_fd))
		return error_set(err, 0, "container \"%s\" is still being created: start it once its create has returned",
				 id);
	if ((fd = openat(dir_fd, FIFO_FILE, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return error_set(err, errno, "container \"%s\": open its exec fifo", id);
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;
		int r = poll(&pfd, 1, 100);
		if (r < 0 && errno != EINTR)
			return error_set(err, errno, "container \"%s\": wait on its exec fifo", id);
		n = read(fd, &c, 1);
		if (n == 1)
			break;
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return error_set(err, errno, "container \"%s\": read its exec fifo", id);
		if (n == 0) {
			/* no writer: the init has not opened it yet, or another start took its byte */
			if (!oci_is_created(dir_fd))
				return error_set(err, 0, "container \"%s\" is running already", id);
			usleep(10000);
		}
		if (!state_is_alive(dir_fd))
			return start_error(dir_fd, id, err, hint, hint_len);
	}
	unlinkat(dir_fd, FIFO_FILE, 0);
	return 0;
}

static const struct option create_options[] = {
	{ "bundle", required_argument, NULL, 'b' },
	{ "pid-file", required_argument, NULL, 'p' },
	{ "console-socket", required_argument, NULL, 'c' },
	{ "no-pivot", no_argument, NULL, 'P' },
	{ "no-new-keyring", no_argument, NULL, 'K' },
	{ "preserve-fds", required_argument, NULL, 'f' },
	{ "detach", no_argument, NULL, 'd' },
	{ "keep", no_argument, NULL, 'k' },
	{ "no-subreaper", no_argument, NULL, 'S' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const char create_usage[] =
	"Usage: nsrun [GLOBAL] create [OPTIONS] ID\n"
	"       nsrun [GLOBAL] run [OPTIONS] [--detach] [--keep] ID\n"
	"Creates the container ID from the OCI bundle DIR (its config.json, runtime-spec 1.2):\n"
	"its init waits until `nsrun start ID`; run is create and start, in the foreground\n"
	"unless --detach (then removed at its end unless --keep).  docs/oci-runtime.md.\n"
	"  -b, --bundle DIR          the bundle (default: the current directory)\n"
	"  --pid-file FILE           write the container's pid (its monitor's) there\n"
	"  --console-socket PATH     process.terminal: the pty's master goes there (SCM_RIGHTS)\n"
	"  --no-pivot, --no-new-keyring, --no-subreaper   accepted; nsrun always pivots, never\n"
	"                            shares a keyring (the container has its own user namespace)\n"
	"  --preserve-fds N          fds 3 to 3+N-1 reach the payload (after LISTEN_FDS's, as runc)\n"
	"GLOBAL: --root DIR (default $XDG_RUNTIME_DIR/nsrun/oci, /run/nsrun as root), --log FILE,\n"
	"  --log-format text|json, --systemd-cgroup (linux.cgroupsPath is slice:prefix:name, as runc),\n"
	"  --rootless V, --debug (accepted); docs/oci-runtime.md\n";

static void poststart(const struct oci_globals *g, int dir_fd);

int oci_cmd_create(const struct oci_globals *g, int argc, char **argv, bool run)
{
	struct create_opts o = { .bundle = "." };
	struct nsrun_error err = { 0 };
	bool in_monitor = false;
	pid_t monitor = -1;
	int c, code = 0, status;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+b:h", create_options, NULL)) != -1) {
		switch (c) {
		case 'b': o.bundle = optarg; break;
		case 'p': o.pid_file = optarg; break;
		case 'c': o.console_socket = optarg; break;
		case 'f': {
			char *end;
			errno = 0;
			o.preserve_fds = strtol(optarg, &end, 10);
			if (errno || *end || o.preserve_fds < 0)
				return oci_failf(g, "--preserve-fds: \"%s\": expected a number", optarg);
			break;
		}
		case 'd':
		case 'k':
			if (!run)
				return oci_failf(g, "%s: unknown option %s", argv[0], argv[optind - 1]);
			if (c == 'd')
				o.detach = true;
			else
				o.keep = true;
			break;
		case 'P': case 'K': case 'S': break;
		case 'h': fputs(create_usage, stdout); return 0;
		default:
			return oci_failf(g, "%s: unknown option %s (nsrun %s --help)", argv[0], argv[optind - 1], argv[0]);
		}
	}
	if (optind != argc - 1)
		return oci_failf(g, "%s: expected one container ID (nsrun %s --help)", argv[0], argv[0]);
	o.id = argv[optind];
	if (create_container(g, &o, &monitor, &in_monitor, &code, &err) < 0)
		return oci_fail(g, &err);
	if (in_monitor)
		return code;
	if (!run)
		return 0;
	{
		char root[PATH_MAX], hint[512];
		_cleanup_close_ int root_fd = oci_open_root(g, root, sizeof(root), &err), dir_fd = -1;
		if (root_fd < 0 || (dir_fd = oci_open_container(root_fd, o.id, &err)) < 0 ||
		    start_container(dir_fd, o.id, &err, hint, sizeof(hint)) < 0) {
			/* run is create, start and delete: a start that failed (the payload
			 * could not be exec'd, a startContainer hook failed) leaves nothing */
			kill(monitor, SIGKILL);
			while (waitpid(monitor, &status, 0) < 0 && errno == EINTR)
				;
			if (dir_fd >= 0) {
				oci_wait_gone(dir_fd);
				oci_remove(g, root_fd, dir_fd, o.id);
			}
			return oci_fail(g, &err);
		}
		poststart(g, dir_fd);
		if (o.detach)
			return 0;
		while (waitpid(monitor, &status, 0) < 0 && errno == EINTR)
			;
		oci_wait_gone(dir_fd);
		if (!o.keep)
			oci_remove(g, root_fd, dir_fd, o.id);
		return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	}
}

/* ---- start (state, kill, delete, list, features: oci_verbs.c) ---- */

/* poststart: the payload exec'd, start has not returned (runtime.md "Lifecycle" 9) */
static void poststart(const struct oci_globals *g, int dir_fd)
{
	_cleanup_free_ char *hooks = oci_hooks_of(dir_fd), *state = hooks ? oci_state_text(dir_fd) : NULL;

	oci_hooks_warn(g, hooks, "poststart", state);
}

int oci_cmd_start(const struct oci_globals *g, int argc, char **argv)
{
	struct nsrun_error err = { 0 };
	char hint[512];
	_cleanup_close_ int root_fd = -1, dir_fd = -1;

	optind = 1;
	if (argc != 2)
		return oci_failf(g, "start: expected one container ID");
	if (oci_open_id(g, argc, argv, &root_fd, &dir_fd, &err) < 0 || start_container(dir_fd, argv[1], &err, hint, sizeof(hint)) < 0)
		return oci_fail(g, &err);
	poststart(g, dir_fd);
	return 0;
}
