/* oci.c - see oci.h.  Option names and what callers pass: runc's command line
 * (podman through conmon, containerd-shim-runc-v2, CRI-O). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "cleanup.h"
#include "oci.h"
#include "oci_internal.h"
#include "state.h"
#include "sys.h"

#ifndef NSRUN_VERSION
#define NSRUN_VERSION "0.0.0-dev"
#endif


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

bool oci_is_creating(int dir_fd)
{
	return faccessat(dir_fd, CREATING_FILE, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

bool oci_create_ended(int dir_fd)
{
	_cleanup_close_ int fd = openat(dir_fd, CREATING_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	return fd >= 0 && flock(fd, LOCK_SH | LOCK_NB) == 0;
}

bool oci_is_paused(int dir_fd)
{
	return faccessat(dir_fd, PAUSED_FILE, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

const char *oci_status_of(int dir_fd)
{
	if (!state_is_alive(dir_fd))
		return "stopped";
	if (oci_is_creating(dir_fd))
		return "creating";
	return oci_is_created(dir_fd) ? "created" : oci_is_paused(dir_fd) ? "paused" : "running";
}

int oci_state_read(int dir_fd, struct service_state *st)
{
	uint64_t end = monotonic_us() + GONE_WAIT_US;

	while (state_read(dir_fd, st) < 0) {
		int e = errno;
		if (monotonic_us() >= end || !state_is_alive(dir_fd) || !oci_is_creating(dir_fd) ||
		    oci_create_ended(dir_fd)) {
			errno = e;
			return -1;
		}
		usleep(10000);
	}
	return 0;
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
		return oci_cmd_create(&g, argc, argv, strcmp(argv[0], "run") == 0);
	if (strcmp(argv[0], "start") == 0)
		return oci_cmd_start(&g, argc, argv);
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
