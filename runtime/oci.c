/* oci.c - see oci.h.  Option names and what callers pass: runc's command line
 * (podman through conmon, containerd-shim-runc-v2, CRI-O). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "cgroup_systemd.h"
#include "cleanup.h"
#include "exec_spec.h"
#include "netjoin.h"
#include "oci.h"
#include "oci_config.h"
#include "oci_hooks.h"
#include "oci_internal.h"
#include "publish.h"
#include "result.h"
#include "run.h"
#include "seccomp.h"
#include "state.h"
#include "sys.h"

#ifndef NSRUN_VERSION
#define NSRUN_VERSION "0.0.0-dev"
#endif

#define SECCOMP_FILE "seccomp.json"
#define CREATE_WAIT_US (120ULL * 1000000) /* set-up of a created container, on a loaded machine */


static const char *const verbs[] = { "create", "start", "state", "kill", "delete", "run", "list", "features",
				     "pause", "resume", "update", NULL };

/* runc's ps ID: nsrun's own ps takes no word but its options' values. */
static bool ps_is_oci(int argc, char **argv)
{
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--format") == 0 || strcmp(argv[i], "-f") == 0 || strcmp(argv[i], "--filter") == 0)
			i++;
		else if (argv[i][0] != '-')
			return true;
	}
	return false;
}

bool oci_is_command(int argc, char **argv)
{
	if (argc < 2)
		return false;
	for (size_t i = 0; verbs[i]; i++)
		if (strcmp(argv[1], verbs[i]) == 0)
			return true;
	if (strcmp(argv[1], "ps") == 0)
		return ps_is_oci(argc, argv);
	if (strcmp(argv[1], "exec") == 0)
		return oci_exec_is_oci(argc, argv);
	return strcmp(argv[1], "--root") == 0 || strncmp(argv[1], "--root=", 7) == 0 || strcmp(argv[1], "--log") == 0 ||
	       strncmp(argv[1], "--log=", 6) == 0 || strncmp(argv[1], "--log-format", 12) == 0 ||
	       strcmp(argv[1], "--systemd-cgroup") == 0 || strncmp(argv[1], "--rootless", 10) == 0;
}

/* ---- messages: stderr and --log ---- */

static void log_line(const struct oci_globals *g, const char *level, const char *msg)
{
	FILE *f;

	if (!g->log || !(f = fopen(g->log, "ae")))
		return;
	if (g->log_json) {
		yajl_gen y = yajl_gen_alloc(NULL);
		char now[40];
		time_t t = time(NULL);
		struct tm tm;
		const unsigned char *buf;
		size_t len;
		strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
		if (y) {
			yajl_gen_map_open(y);
			yajl_gen_string(y, (const unsigned char *)"level", 5);
			yajl_gen_string(y, (const unsigned char *)level, strlen(level));
			yajl_gen_string(y, (const unsigned char *)"msg", 3);
			yajl_gen_string(y, (const unsigned char *)msg, strlen(msg));
			yajl_gen_string(y, (const unsigned char *)"time", 4);
			yajl_gen_string(y, (const unsigned char *)now, strlen(now));
			yajl_gen_map_close(y);
			yajl_gen_get_buf(y, &buf, &len);
			fprintf(f, "%.*s\n", (int)len, (const char *)buf);
			yajl_gen_free(y);
		}
	} else {
		fprintf(f, "nsrun: %s: %s\n", level, msg);
	}
	fclose(f);
}

/* The one error of a command: stderr (with its hint) and --log.  Returns 1. */
int oci_fail(const struct oci_globals *g, const struct nsrun_error *err)
{
	char line[512];

	error_print(err, stderr);
	error_format(err, line, sizeof(line));
	log_line(g, "error", line);
	return 1;
}

int __attribute__((format(printf, 2, 3))) oci_failf(const struct oci_globals *g, const char *fmt, ...)
{
	struct nsrun_error err = { 0 };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err.msg, sizeof(err.msg), fmt, ap);
	va_end(ap);
	return oci_fail(g, &err);
}

/* Warnings go to --log when there is one (stderr may be the container's: conmon's
 * pipes), else to stderr. */
void oci_warn(const struct oci_globals *g, const char *msg)
{
	char line[1024];

	/* a config's strings (paths, options) may be in it: one printable line (error.h) */
	snprintf(line, sizeof(line), "%s", msg);
	error_one_line(line);
	if (g->log)
		log_line(g, "warning", line);
	else
		error_warn(stderr, "%s", line);
}

static void warn_all(const struct oci_globals *g, const struct strv *w)
{
	for (size_t i = 0; i < w->n; i++)
		oci_warn(g, w->v[i]);
}

/* ---- the state directory ---- */

/* True unless we are root of the initial user namespace (or root as such in
 * another, USER=root): runc's rule for its state directory, which sends rootless
 * podman's runtime (uid 0 in podman's user namespace) to XDG_RUNTIME_DIR. */
static bool rootless(void)
{
	char map[128] = "";
	const char *user = getenv("USER");
	_cleanup_close_ int fd = -1;
	unsigned long a, b, n;

	if (geteuid() != 0)
		return true;
	if (!getenv("XDG_RUNTIME_DIR") || (user && strcmp(user, "root") == 0))
		return false;
	fd = open("/proc/self/uid_map", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, map, sizeof(map) - 1) <= 0)
		return false;
	/* the initial namespace maps every id to itself (user_namespaces(7)) */
	return !(sscanf(map, "%lu %lu %lu", &a, &b, &n) == 3 && a == 0 && b == 0 && n == 4294967295UL);
}

/* mkdir -p of path, the last level 0700 (and as root the default /run/nsrun too).
 * Returns an fd of it or -1 with err. */
int oci_open_root(const struct oci_globals *g, char *path, size_t len, struct nsrun_error *err)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	struct stat st;
	int fd;

	if (g->root)
		snprintf(path, len, "%s", g->root);
	else if (!rootless())
		snprintf(path, len, "/run/nsrun");
	else if (xdg && xdg[0] == '/')
		snprintf(path, len, "%s/nsrun/oci", xdg);
	else
		return error_set(err, 0, "no state directory: XDG_RUNTIME_DIR is not set; give --root DIR");
	for (char *p = path + 1;; p++) {
		if (*p == '/' || !*p) {
			char c = *p;
			*p = '\0';
			if (mkdir(path, 0700) < 0 && errno != EEXIST)
				return error_set(err, errno, "--root: make %s", path);
			*p = c;
			if (!c)
				break;
		}
	}
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return error_set(err, errno, "--root: open %s", path);
	if (path[0] != '/') {
		/* the paths made from it (exec.fifo, seccomp.json) are used after a chdir */
		char *abs = realpath(path, NULL);
		if (abs && strlen(abs) < len)
			snprintf(path, len, "%s", abs);
		free(abs);
	}
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
		close(fd);
		return error_set(err, 0, "--root %s: not a private directory of ours (owner uid %u, mode %03o)", path,
				 (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777));
	}
	return fd;
}

/* The directory of container id under root_fd, or -1 with err naming it. */
int oci_open_container(int root_fd, const char *id, struct nsrun_error *err)
{
	int fd;

	if (!service_name_valid(id))
		return error_set(err, 0, "container id \"%s\": use [a-zA-Z0-9][a-zA-Z0-9_.-]*, at most %d characters", id,
				 NAME_MAX_LEN);
	if ((fd = openat(root_fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		error_set(err, errno == ENOENT ? 0 : errno, "container \"%s\" does not exist", id);
		err->hint = "nsrun [--root DIR] list shows the containers under the same --root";
		return -1;
	}
	return fd;
}

bool oci_is_created(int dir_fd)
{
	return faccessat(dir_fd, FIFO_FILE, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

bool oci_is_paused(int dir_fd)
{
	return faccessat(dir_fd, PAUSED_FILE, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

const char *oci_status_of(int dir_fd)
{
	if (!state_is_alive(dir_fd))
		return "stopped";
	return oci_is_created(dir_fd) ? "created" : oci_is_paused(dir_fd) ? "paused" : "running";
}

/* Waits up to GONE_WAIT_US for the lock of dir_fd to be free.  Returns true if it is. */
bool oci_wait_gone(int dir_fd)
{
	uint64_t end = monotonic_us() + GONE_WAIT_US;

	while (state_is_alive(dir_fd)) {
		if (monotonic_us() >= end)
			return false;
		usleep(10000);
	}
	return true;
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

/* The pid file: written to a temporary name and renamed, as runc does, so a reader
 * never sees it half written.  Returns 0 or -1 with err. */
int oci_write_pid_file(const char *path, pid_t pid, struct nsrun_error *err)
{
	char tmp[PATH_MAX], text[32];
	_cleanup_close_ int fd = -1;
	int n = snprintf(text, sizeof(text), "%d", (int)pid);

	/* a new file of a random name (mkstemp: O_EXCL), never one planted there */
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.nsrun-XXXXXX", path) >= sizeof(tmp))
		return error_set(err, ENAMETOOLONG, "--pid-file \"%s\"", path);
	if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0)
		return error_set(err, errno, "--pid-file: create %s", tmp);
	if (fchmod(fd, 0644) < 0 || write(fd, text, (size_t)n) != n || rename(tmp, path) < 0) {
		int e = errno;
		unlink(tmp);
		return error_set(err, e, "--pid-file: write %s", path);
	}
	return 0;
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
	if (result.status == NSRUN_STATUS_ERROR && result.before_payload) {
		/* create is still waiting: the error is said once, by it */
		if (write(ready_fd, &result.error, sizeof(result.error)) < 0) {
			/* create is gone: nobody to tell */
		}
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

/* Makes the container and its monitor; returns 0 with *monitor (our child), the
 * container waiting on its fifo, or -1 with err (nothing left).  *in_monitor is
 * set in the monitor, which returns its exit status in *code. */
static int create_container(const struct oci_globals *g, const struct create_opts *o, pid_t *monitor, bool *in_monitor,
			    int *code, struct nsrun_error *err)
{
	struct nsrun_config cfg;
	struct strv warnings = { 0 };
	_cleanup_free_ char *bundle = NULL, *seccomp_json = NULL, *hooks = NULL, *annotations = NULL;
	_cleanup_close_ int root_fd = -1, dir_fd = -1, lock_fd = -1, log_fd = -1;
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
	if ((dir_fd = state_create_dir(root_fd, o->id, &lock_fd, &log_fd, err)) < 0) {
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
	fflush(stdout);
	fflush(stderr);
	if ((*monitor = fork()) < 0) {
		error_set(err, errno, "fork the monitor");
		goto remove;
	}
	if (*monitor == 0) {
		close(ready[0]);
		*in_monitor = true;
		*code = monitor_main(&cfg, dir_fd, ready[1], &st);
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
			else if (!hooks || (oci_hooks_run(hooks, "prestart", state, err) == 0 &&
					    oci_hooks_run(hooks, "createRuntime", state, err) == 0)) {
				rc = 0;
				goto out;
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
	state_remove_dir(root_fd, o->id);
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
 * container's init), reads the byte it writes, removes the fifo.  Returns 0 or -1 with err. */
static int start_container(int dir_fd, const char *id, struct nsrun_error *err)
{
	_cleanup_close_ int fd = -1;
	char c;

	if (!state_is_alive(dir_fd))
		return error_set(err, 0, "container \"%s\" is stopped: it cannot be started", id);
	if (!oci_is_created(dir_fd))
		return error_set(err, 0, "container \"%s\" is running already", id);
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
			return error_set(err, 0, "container \"%s\" ended before its process was exec'd (its error went to "
						 "create's stderr)", id);
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

static int cmd_create(const struct oci_globals *g, int argc, char **argv, bool run)
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
	if (o.pid_file && oci_write_pid_file(o.pid_file, monitor, &err) < 0) {
		kill(monitor, SIGKILL);
		return oci_fail(g, &err);
	}
	if (!run)
		return 0;
	{
		char root[PATH_MAX];
		_cleanup_close_ int root_fd = oci_open_root(g, root, sizeof(root), &err), dir_fd = -1;
		if (root_fd < 0 || (dir_fd = oci_open_container(root_fd, o.id, &err)) < 0 ||
		    start_container(dir_fd, o.id, &err) < 0) {
			kill(monitor, SIGKILL);
			return oci_fail(g, &err);
		}
		poststart(g, dir_fd);
		if (o.detach)
			return 0;
		while (waitpid(monitor, &status, 0) < 0 && errno == EINTR)
			;
		oci_wait_gone(dir_fd);
		if (!o.keep) {
			_cleanup_free_ char *hooks = oci_hooks_of(dir_fd), *state = hooks ? oci_state_text(dir_fd) : NULL;
			state_remove_dir(root_fd, o.id);
			oci_hooks_warn(g, hooks, "poststop", state);
		}
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

/* Opens root and ID (argv[optind], the only argument left) into *root_fd, *dir_fd.
 * Returns 0 or -1 with err. */
int oci_open_id(const struct oci_globals *g, int argc, char **argv, int *root_fd, int *dir_fd,
		   struct nsrun_error *err)
{
	char root[PATH_MAX];

	if (optind >= argc)
		return error_set(err, 0, "%s: expected a container ID", argv[0]);
	if ((*root_fd = oci_open_root(g, root, sizeof(root), err)) < 0)
		return -1;
	return (*dir_fd = oci_open_container(*root_fd, argv[optind], err)) < 0 ? -1 : 0;
}

static int cmd_start(const struct oci_globals *g, int argc, char **argv)
{
	struct nsrun_error err = { 0 };
	_cleanup_close_ int root_fd = -1, dir_fd = -1;

	optind = 1;
	if (argc != 2)
		return oci_failf(g, "start: expected one container ID");
	if (oci_open_id(g, argc, argv, &root_fd, &dir_fd, &err) < 0 || start_container(dir_fd, argv[1], &err) < 0)
		return oci_fail(g, &err);
	poststart(g, dir_fd);
	return 0;
}

int oci_main(int argc, char **argv)
{
	struct oci_globals g = { 0 };
	int i = 1;

	/* runc's global options, before the verb (urfave/cli: --opt VALUE or --opt=VALUE) */
	for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		const char *a = argv[i] + 2, *eq = strchr(a, '=');
		size_t n = eq ? (size_t)(eq - a) : strlen(a);
		const char *val = eq ? eq + 1 : NULL;
		bool takes = (n == 4 && strncmp(a, "root", 4) == 0) || (n == 3 && strncmp(a, "log", 3) == 0) ||
			     (n == 10 && strncmp(a, "log-format", 10) == 0) || (n == 8 && strncmp(a, "rootless", 8) == 0) ||
			     (n == 4 && strncmp(a, "criu", 4) == 0);
		if (takes && !val) {
			if (i + 1 >= argc)
				return oci_failf(&g, "--%.*s: needs a value", (int)n, a);
			val = argv[++i];
		}
		if (n == 4 && strncmp(a, "root", 4) == 0)
			g.root = val;
		else if (n == 3 && strncmp(a, "log", 3) == 0)
			g.log = val;
		else if (n == 10 && strncmp(a, "log-format", 10) == 0) {
			if (strcmp(val, "json") != 0 && strcmp(val, "text") != 0)
				return oci_failf(&g, "--log-format: \"%s\": use text or json", val);
			g.log_json = strcmp(val, "json") == 0;
		} else if (n == 14 && strncmp(a, "systemd-cgroup", 14) == 0) {
			g.systemd_cgroup = true;
		} else if (!takes && !(n == 5 && strncmp(a, "debug", 5) == 0)) {
			return oci_failf(&g, "unknown global option %s (docs/oci-runtime.md)", argv[i]);
		}
	}
	if (i >= argc)
		return oci_failf(&g, "expected a command: create, start, state, kill, delete, run, list, features, exec, "
				 "ps, pause, resume or update");
	argc -= i;
	argv += i;
	if (strcmp(argv[0], "create") == 0 || strcmp(argv[0], "run") == 0)
		return cmd_create(&g, argc, argv, strcmp(argv[0], "run") == 0);
	if (strcmp(argv[0], "start") == 0)
		return cmd_start(&g, argc, argv);
	if (strcmp(argv[0], "state") == 0)
		return oci_cmd_state(&g, argc, argv);
	if (strcmp(argv[0], "kill") == 0)
		return oci_cmd_kill(&g, argc, argv);
	if (strcmp(argv[0], "delete") == 0)
		return oci_cmd_delete(&g, argc, argv);
	if (strcmp(argv[0], "list") == 0)
		return oci_cmd_list(&g, argc, argv);
	if (strcmp(argv[0], "features") == 0)
		return oci_cmd_features();
	if (strcmp(argv[0], "exec") == 0)
		return oci_cmd_exec(&g, argc, argv);
	if (strcmp(argv[0], "ps") == 0)
		return oci_cmd_ps(&g, argc, argv);
	if (strcmp(argv[0], "pause") == 0 || strcmp(argv[0], "resume") == 0)
		return oci_cmd_pause(&g, argc, argv, strcmp(argv[0], "pause") == 0);
	if (strcmp(argv[0], "update") == 0)
		return oci_cmd_update(&g, argc, argv);
	return oci_failf(&g, "\"%s\": not a command of nsrun's OCI runtime (create, start, state, kill, delete, run, list, "
		     "features, exec, ps, pause, resume, update)", argv[0]);
}
