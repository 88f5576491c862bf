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

#include "cleanup.h"
#include "oci.h"
#include "oci_config.h"
#include "publish.h"
#include "result.h"
#include "run.h"
#include "state.h"
#include "sys.h"

#ifndef NSRUN_VERSION
#define NSRUN_VERSION "0.0.0-dev"
#endif

#define FIFO_FILE "exec.fifo"
#define SECCOMP_FILE "seccomp.json"
#define CREATE_WAIT_US (120ULL * 1000000) /* set-up of a created container, on a loaded machine */
#define GONE_WAIT_US (10ULL * 1000000)

struct oci_globals {
	const char *root;       /* --root, or NULL: the default */
	const char *log;        /* --log FILE, or NULL: stderr only */
	bool log_json;          /* --log-format json */
};

static const char *const verbs[] = { "create", "start", "state", "kill", "delete", "run", "list", "features", NULL };

bool oci_is_command(int argc, char **argv)
{
	if (argc < 2)
		return false;
	for (size_t i = 0; verbs[i]; i++)
		if (strcmp(argv[1], verbs[i]) == 0)
			return true;
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
static int fail(const struct oci_globals *g, const struct nsrun_error *err)
{
	char line[512];

	error_print(err, stderr);
	error_format(err, line, sizeof(line));
	log_line(g, "error", line);
	return 1;
}

static int __attribute__((format(printf, 2, 3))) failf(const struct oci_globals *g, const char *fmt, ...)
{
	struct nsrun_error err = { 0 };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err.msg, sizeof(err.msg), fmt, ap);
	va_end(ap);
	return fail(g, &err);
}

/* Warnings go to --log when there is one (stderr may be the container's: conmon's
 * pipes), else to stderr. */
static void warn_all(const struct oci_globals *g, const struct strv *w)
{
	for (size_t i = 0; i < w->n; i++) {
		if (g->log)
			log_line(g, "warning", w->v[i]);
		else
			fprintf(stderr, "nsrun: warning: %s\n", w->v[i]);
	}
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
static int open_root(const struct oci_globals *g, char *path, size_t len, struct nsrun_error *err)
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
static int open_container(int root_fd, const char *id, struct nsrun_error *err)
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

static bool is_created(int dir_fd)
{
	return faccessat(dir_fd, FIFO_FILE, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

static const char *status_of(int dir_fd)
{
	if (!state_is_alive(dir_fd))
		return "stopped";
	return is_created(dir_fd) ? "created" : "running";
}

static void gen_str(yajl_gen y, const char *k, const char *v)
{
	yajl_gen_string(y, (const unsigned char *)k, strlen(k));
	yajl_gen_string(y, (const unsigned char *)v, strlen(v));
}

/* runtime-spec's state (runtime.md "State"), with runc's "created" and "owner". */
static void gen_state(yajl_gen y, const struct service_state *st, const char *status)
{
	char created[40];
	time_t t = (time_t)st->created;
	struct tm tm;

	strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
	yajl_gen_map_open(y);
	gen_str(y, "ociVersion", OCI_VERSION);
	gen_str(y, "id", st->name);
	gen_str(y, "status", status);
	yajl_gen_string(y, (const unsigned char *)"pid", 3);
	yajl_gen_integer(y, strcmp(status, "stopped") == 0 ? 0 : st->pid);
	gen_str(y, "bundle", st->bundle);
	gen_str(y, "rootfs", st->image);
	gen_str(y, "created", created);
	gen_str(y, "owner", "");
	yajl_gen_string(y, (const unsigned char *)"annotations", 11);
	yajl_gen_map_open(y);
	yajl_gen_map_close(y);
	yajl_gen_map_close(y);
}

static void print_gen(yajl_gen y)
{
	const unsigned char *buf;
	size_t len;

	yajl_gen_get_buf(y, &buf, &len);
	fwrite(buf, 1, len, stdout);
	fputc('\n', stdout);
}

/* Waits up to GONE_WAIT_US for the lock of dir_fd to be free.  Returns true if it is. */
static bool wait_gone(int dir_fd)
{
	uint64_t end = monotonic_us() + GONE_WAIT_US;

	while (state_is_alive(dir_fd)) {
		if (monotonic_us() >= end)
			return false;
		usleep(10000);
	}
	return true;
}

/* Sends sig to the monitor of dir_fd through a pidfd (pidfd_open(2)), taken while
 * the lock shows it alive: a reused pid cannot get it.  Returns 0 or -1 with err. */
static int signal_monitor(int dir_fd, const struct service_state *st, int sig, struct nsrun_error *err)
{
	_cleanup_close_ int pidfd = -1;

	if (st->pid <= 0)
		return error_set(err, 0, "container \"%s\": no monitor pid in its state", st->name);
	pidfd = (int)syscall(SYS_pidfd_open, (pid_t)st->pid, 0);
	if (pidfd < 0 || !state_is_alive(dir_fd))
		return error_set(err, pidfd < 0 ? errno : ESRCH, "container \"%s\": signal its monitor %lld", st->name,
				 st->pid);
	if (syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) < 0)
		return error_set(err, errno, "container \"%s\": signal its monitor %lld", st->name, st->pid);
	return 0;
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
static int write_pid_file(const char *path, pid_t pid, struct nsrun_error *err)
{
	char tmp[PATH_MAX], text[32];
	_cleanup_close_ int fd = -1;
	int n = snprintf(text, sizeof(text), "%d", (int)pid);

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.nsrun-tmp", path) >= sizeof(tmp))
		return error_set(err, ENAMETOOLONG, "--pid-file \"%s\"", path);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644)) < 0)
		return error_set(err, errno, "--pid-file: create %s", tmp);
	if (write(fd, text, (size_t)n) != n || rename(tmp, path) < 0) {
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
	nsrun_run_service(cfg, &result, NULL, &pub, run_ready, -1);
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

/* Makes the container and its monitor; returns 0 with *monitor (our child), the
 * container waiting on its fifo, or -1 with err (nothing left).  *in_monitor is
 * set in the monitor, which returns its exit status in *code. */
static int create_container(const struct oci_globals *g, const struct create_opts *o, pid_t *monitor, bool *in_monitor,
			    int *code, struct nsrun_error *err)
{
	struct nsrun_config cfg;
	struct strv warnings = { 0 };
	_cleanup_free_ char *bundle = NULL, *seccomp_json = NULL;
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
	if ((root_fd = open_root(g, root, sizeof(root), err)) < 0)
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
			rc = 0;
			goto out;
		}
		if (r == 1 && (n = read(ready[0], (char *)&cerr + 1, sizeof(cerr) - 1)) == (ssize_t)sizeof(cerr) - 1) {
			memcpy(&cerr, &c, 1);
			*err = cerr;
		} else {
			error_set_stage(err, STAGE_SUPERVISE, 0, "container \"%s\" %s before it was created", o->id,
					r == 0 ? "was not set up within 120 s" : "ended");
		}
	}
	kill(*monitor, SIGKILL);
	while (waitpid(*monitor, NULL, 0) < 0 && errno == EINTR)
		;
	wait_gone(dir_fd);
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
	if (!is_created(dir_fd))
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
		if (!state_is_alive(dir_fd))
			return error_set(err, 0, "container \"%s\" ended before it started", id);
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
	"  --log-format text|json, --systemd-cgroup, --rootless V, --debug (accepted; docs/oci-runtime.md)\n";

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
				return failf(g, "--preserve-fds: \"%s\": expected a number", optarg);
			break;
		}
		case 'd':
		case 'k':
			if (!run)
				return failf(g, "%s: unknown option %s", argv[0], argv[optind - 1]);
			if (c == 'd')
				o.detach = true;
			else
				o.keep = true;
			break;
		case 'P': case 'K': case 'S': break;
		case 'h': fputs(create_usage, stdout); return 0;
		default:
			return failf(g, "%s: unknown option %s (nsrun %s --help)", argv[0], argv[optind - 1], argv[0]);
		}
	}
	if (optind != argc - 1)
		return failf(g, "%s: expected one container ID (nsrun %s --help)", argv[0], argv[0]);
	o.id = argv[optind];
	if (create_container(g, &o, &monitor, &in_monitor, &code, &err) < 0)
		return fail(g, &err);
	if (in_monitor)
		return code;
	if (o.pid_file && write_pid_file(o.pid_file, monitor, &err) < 0) {
		kill(monitor, SIGKILL);
		return fail(g, &err);
	}
	if (!run)
		return 0;
	{
		char root[PATH_MAX];
		_cleanup_close_ int root_fd = open_root(g, root, sizeof(root), &err), dir_fd = -1;
		if (root_fd < 0 || (dir_fd = open_container(root_fd, o.id, &err)) < 0 ||
		    start_container(dir_fd, o.id, &err) < 0) {
			kill(monitor, SIGKILL);
			return fail(g, &err);
		}
		if (o.detach)
			return 0;
		while (waitpid(monitor, &status, 0) < 0 && errno == EINTR)
			;
		wait_gone(dir_fd);
		if (!o.keep)
			state_remove_dir(root_fd, o.id);
		return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	}
}

/* ---- start, state, kill, delete, list, features ---- */

/* Opens root and ID (argv[optind], the only argument left) into *root_fd, *dir_fd.
 * Returns 0 or -1 with err. */
static int open_id(const struct oci_globals *g, int argc, char **argv, int *root_fd, int *dir_fd,
		   struct nsrun_error *err)
{
	char root[PATH_MAX];

	if (optind >= argc)
		return error_set(err, 0, "%s: expected a container ID", argv[0]);
	if ((*root_fd = open_root(g, root, sizeof(root), err)) < 0)
		return -1;
	return (*dir_fd = open_container(*root_fd, argv[optind], err)) < 0 ? -1 : 0;
}

static int cmd_start(const struct oci_globals *g, int argc, char **argv)
{
	struct nsrun_error err = { 0 };
	_cleanup_close_ int root_fd = -1, dir_fd = -1;

	optind = 1;
	if (argc != 2)
		return failf(g, "start: expected one container ID");
	if (open_id(g, argc, argv, &root_fd, &dir_fd, &err) < 0 || start_container(dir_fd, argv[1], &err) < 0)
		return fail(g, &err);
	return 0;
}

static int cmd_state(const struct oci_globals *g, int argc, char **argv)
{
	struct nsrun_error err = { 0 };
	_cleanup_close_ int root_fd = -1, dir_fd = -1;
	struct service_state st;
	yajl_gen y;

	optind = 1;
	if (argc != 2)
		return failf(g, "state: expected one container ID");
	if (open_id(g, argc, argv, &root_fd, &dir_fd, &err) < 0)
		return fail(g, &err);
	if (state_read(dir_fd, &st) < 0)
		return failf(g, "container \"%s\": read its state: %s", argv[1], strerror(errno));
	if (!(y = yajl_gen_alloc(NULL)))
		return failf(g, "state: out of memory");
	yajl_gen_config(y, yajl_gen_beautify, 1);
	gen_state(y, &st, status_of(dir_fd));
	print_gen(y);
	yajl_gen_free(y);
	return 0;
}

/* A signal by name (KILL, SIGKILL, sigkill) or number.  Returns it or -1. */
static int parse_signal(const char *s)
{
	static const struct { const char *name; int sig; } names[] = {
		{ "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT }, { "KILL", SIGKILL }, { "USR1", SIGUSR1 },
		{ "USR2", SIGUSR2 }, { "TERM", SIGTERM }, { "ABRT", SIGABRT }, { "ALRM", SIGALRM }, { "CONT", SIGCONT },
		{ "STOP", SIGSTOP }, { "TSTP", SIGTSTP }, { "WINCH", SIGWINCH }, { "PIPE", SIGPIPE },
	};
	char *end;
	long n;

	if (strncasecmp(s, "SIG", 3) == 0)
		s += 3;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcasecmp(s, names[i].name) == 0)
			return names[i].sig;
	errno = 0;
	n = strtol(s, &end, 10);
	return !errno && *s && !*end && n > 0 && n < 65 ? (int)n : -1;
}

static int cmd_kill(const struct oci_globals *g, int argc, char **argv)
{
	static const struct option opts[] = { { "all", no_argument, NULL, 'a' }, { NULL, 0, NULL, 0 } };
	struct nsrun_error err = { 0 };
	_cleanup_close_ int root_fd = -1, dir_fd = -1;
	struct service_state st;
	int c, sig = SIGTERM;
	bool forwarded;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+a", opts, NULL)) != -1)
		if (c != 'a')
			return failf(g, "kill: unknown option %s", argv[optind - 1]);
	if (optind != argc - 1 && optind != argc - 2)
		return failf(g, "kill: expected ID [SIGNAL]");
	if (optind == argc - 2 && (sig = parse_signal(argv[argc - 1])) < 0)
		return failf(g, "kill: \"%s\": not a signal name or number", argv[argc - 1]);
	if (open_id(g, argc, argv, &root_fd, &dir_fd, &err) < 0)
		return fail(g, &err);
	if (state_read(dir_fd, &st) < 0 || !state_is_alive(dir_fd))
		return failf(g, "container \"%s\" is not running", argv[optind]);
	/* the monitor forwards these to the payload (run.c); a created container has
	 * no payload yet: any of them ends it, as it would runc's waiting init */
	forwarded = sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT || sig == SIGUSR1 ||
		    sig == SIGUSR2;
	if (sig != SIGKILL && !forwarded)
		return failf(g, "kill: signal %d: nsrun forwards only TERM, INT, HUP, QUIT, USR1, USR2 and KILL",
			     sig);
	if (is_created(dir_fd))
		sig = SIGKILL;
	if (signal_monitor(dir_fd, &st, sig, &err) < 0)
		return fail(g, &err);
	return 0;
}

static int cmd_delete(const struct oci_globals *g, int argc, char **argv)
{
	static const struct option opts[] = { { "force", no_argument, NULL, 'f' }, { NULL, 0, NULL, 0 } };
	struct nsrun_error err = { 0 };
	_cleanup_close_ int root_fd = -1, dir_fd = -1;
	struct service_state st;
	bool force = false;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+f", opts, NULL)) != -1) {
		if (c != 'f')
			return failf(g, "delete: unknown option %s", argv[optind - 1]);
		force = true;
	}
	if (optind != argc - 1)
		return failf(g, "delete: expected one container ID");
	if (open_id(g, argc, argv, &root_fd, &dir_fd, &err) < 0) {
		/* delete --force of one that is gone: nothing to do (runc's) */
		return force && !err.errnum ? 0 : fail(g, &err);
	}
	if (state_is_alive(dir_fd)) {
		if (!force && !is_created(dir_fd))
			return failf(g, "container \"%s\" is running: stop it first (nsrun kill), or delete --force",
				     argv[optind]);
		if (state_read(dir_fd, &st) < 0 || signal_monitor(dir_fd, &st, SIGKILL, &err) < 0) {
			if (state_is_alive(dir_fd))
				return fail(g, err.msg[0] ? &err : &(struct nsrun_error){ .msg = "read the state" });
		}
		if (!wait_gone(dir_fd))
			return failf(g, "container \"%s\" still running 10 s after SIGKILL", argv[optind]);
	}
	if (state_remove_dir(root_fd, argv[optind]) < 0)
		return failf(g, "container \"%s\": remove its state: %s", argv[optind], strerror(errno));
	return 0;
}

static int cmd_list(const struct oci_globals *g, int argc, char **argv)
{
	static const struct option opts[] = { { "format", required_argument, NULL, 'f' },
					      { "quiet", no_argument, NULL, 'q' }, { NULL, 0, NULL, 0 } };
	struct nsrun_error err = { 0 };
	char root[PATH_MAX];
	_cleanup_close_ int root_fd = -1;
	bool json = false, quiet = false;
	yajl_gen y = NULL;
	DIR *d;
	struct dirent *e;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+f:q", opts, NULL)) != -1) {
		if (c == 'f' && (strcmp(optarg, "json") == 0 || strcmp(optarg, "table") == 0))
			json = strcmp(optarg, "json") == 0;
		else if (c == 'q')
			quiet = true;
		else
			return failf(g, "list: expected [--format table|json] [--quiet]");
	}
	if ((root_fd = open_root(g, root, sizeof(root), &err)) < 0)
		return fail(g, &err);
	if (!(d = fdopendir(dup(root_fd))))
		return failf(g, "list: read %s: %s", root, strerror(errno));
	if (json) {
		y = yajl_gen_alloc(NULL);
		yajl_gen_array_open(y);
	} else if (!quiet) {
		printf("%-24s %-8s %-8s %s\n", "ID", "PID", "STATUS", "BUNDLE");
	}
	while ((e = readdir(d))) {
		_cleanup_close_ int fd = -1;
		struct service_state st;
		if (e->d_name[0] == '.' ||
		    (fd = openat(root_fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
		    state_read(fd, &st) < 0 || !st.bundle[0])
			continue;
		const char *status = status_of(fd);
		if (y)
			gen_state(y, &st, status);
		else if (quiet)
			printf("%s\n", st.name);
		else
			printf("%-24s %-8lld %-8s %s\n", st.name, strcmp(status, "stopped") ? st.pid : 0, status,
			       st.bundle);
	}
	closedir(d);
	if (y) {
		yajl_gen_array_close(y);
		print_gen(y);
		yajl_gen_free(y);
	}
	return 0;
}

/* runtime-spec's features document (features.md), what nsrun does of it. */
static int cmd_features(void)
{
	static const char *const namespaces[] = { "cgroup", "ipc", "mount", "network", "pid", "user", "uts", NULL };
	static const char *const mount_options[] = { "bind", "rbind", "ro", "rw", "nosuid", "nodev", "noexec", NULL };
	yajl_gen y = yajl_gen_alloc(NULL);

	if (!y)
		return 1;
	yajl_gen_config(y, yajl_gen_beautify, 1);
	yajl_gen_map_open(y);
	gen_str(y, "ociVersionMin", "1.0.0");
	gen_str(y, "ociVersionMax", OCI_VERSION);
	yajl_gen_string(y, (const unsigned char *)"hooks", 5);
	yajl_gen_array_open(y);
	yajl_gen_array_close(y);
	yajl_gen_string(y, (const unsigned char *)"mountOptions", 12);
	yajl_gen_array_open(y);
	for (size_t i = 0; mount_options[i]; i++)
		yajl_gen_string(y, (const unsigned char *)mount_options[i], strlen(mount_options[i]));
	yajl_gen_array_close(y);
	yajl_gen_string(y, (const unsigned char *)"linux", 5);
	yajl_gen_map_open(y);
	yajl_gen_string(y, (const unsigned char *)"namespaces", 10);
	yajl_gen_array_open(y);
	for (size_t i = 0; namespaces[i]; i++)
		yajl_gen_string(y, (const unsigned char *)namespaces[i], strlen(namespaces[i]));
	yajl_gen_array_close(y);
	yajl_gen_string(y, (const unsigned char *)"capabilities", 12);
	yajl_gen_array_open(y); /* every one is dropped */
	yajl_gen_array_close(y);
	yajl_gen_string(y, (const unsigned char *)"seccomp", 7);
	yajl_gen_map_open(y);
	yajl_gen_string(y, (const unsigned char *)"enabled", 7);
	yajl_gen_bool(y, 1);
	yajl_gen_map_close(y);
	yajl_gen_map_close(y);
	yajl_gen_string(y, (const unsigned char *)"annotations", 11);
	yajl_gen_map_open(y);
	gen_str(y, "org.nsrun.version", NSRUN_VERSION);
	yajl_gen_map_close(y);
	yajl_gen_map_close(y);
	print_gen(y);
	yajl_gen_free(y);
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
				return failf(&g, "--%.*s: needs a value", (int)n, a);
			val = argv[++i];
		}
		if (n == 4 && strncmp(a, "root", 4) == 0)
			g.root = val;
		else if (n == 3 && strncmp(a, "log", 3) == 0)
			g.log = val;
		else if (n == 10 && strncmp(a, "log-format", 10) == 0) {
			if (strcmp(val, "json") != 0 && strcmp(val, "text") != 0)
				return failf(&g, "--log-format: \"%s\": use text or json", val);
			g.log_json = strcmp(val, "json") == 0;
		} else if (!takes && !(n == 14 && strncmp(a, "systemd-cgroup", 14) == 0) &&
			   !(n == 5 && strncmp(a, "debug", 5) == 0)) {
			return failf(&g, "unknown global option %s (docs/oci-runtime.md)", argv[i]);
		}
	}
	if (i >= argc)
		return failf(&g, "expected a command: create, start, state, kill, delete, run, list or features");
	argc -= i;
	argv += i;
	if (strcmp(argv[0], "create") == 0 || strcmp(argv[0], "run") == 0)
		return cmd_create(&g, argc, argv, strcmp(argv[0], "run") == 0);
	if (strcmp(argv[0], "start") == 0)
		return cmd_start(&g, argc, argv);
	if (strcmp(argv[0], "state") == 0)
		return cmd_state(&g, argc, argv);
	if (strcmp(argv[0], "kill") == 0)
		return cmd_kill(&g, argc, argv);
	if (strcmp(argv[0], "delete") == 0)
		return cmd_delete(&g, argc, argv);
	if (strcmp(argv[0], "list") == 0)
		return cmd_list(&g, argc, argv);
	if (strcmp(argv[0], "features") == 0)
		return cmd_features();
	return failf(&g, "\"%s\": not a command of nsrun's OCI runtime (create, start, state, kill, delete, run, list, "
		     "features)", argv[0]);
}
