/* oci_verbs.c - the OCI runtime's verbs that read or end a container: state,
 * kill, delete, list, features (oci.h; create, run and start are in oci.c). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "cleanup.h"
#include "exec_target.h"
#include "oci_config.h"
#include "oci_hooks.h"
#include "oci_internal.h"
#include "state.h"
#include "sys.h"

#ifndef NSRUN_VERSION
#define NSRUN_VERSION "0.0.0-dev"
#endif

static void gen_str(yajl_gen y, const char *k, const char *v)
{
	yajl_gen_string(y, (const unsigned char *)k, strlen(k));
	yajl_gen_string(y, (const unsigned char *)v, strlen(v));
}

/* The annotations create kept in the state directory dir_fd, into y's open map
 * (none when there are none). */
static void gen_annotations(yajl_gen y, int dir_fd)
{
	_cleanup_close_ int fd = openat(dir_fd, ANNOTATIONS_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	_cleanup_free_ char *text = NULL;
	char path[32];
	yajl_val t;

	if (fd < 0)
		return;
	fd_path(path, sizeof(path), fd);
	if (read_file(path, 4 * 1024 * 1024, &text, NULL) < 0 || !(t = yajl_tree_parse(text, NULL, 0)))
		return;
	for (size_t i = 0; YAJL_IS_OBJECT(t) && i < t->u.object.len; i++)
		if (YAJL_IS_STRING(t->u.object.values[i]))
			gen_str(y, t->u.object.keys[i], t->u.object.values[i]->u.string);
	yajl_tree_free(t);
}

/* runtime-spec's state (runtime.md "State"), with runc's "created" and "owner";
 * dir_fd: the container's state directory, where its annotations are. */
static void gen_state(yajl_gen y, int dir_fd, const struct service_state *st, const char *status, long long pid)
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
	yajl_gen_integer(y, strcmp(status, "stopped") == 0 ? 0 : pid);
	gen_str(y, "bundle", st->bundle);
	gen_str(y, "rootfs", st->image);
	gen_str(y, "created", created);
	gen_str(y, "owner", "");
	yajl_gen_string(y, (const unsigned char *)"annotations", 11);
	yajl_gen_map_open(y);
	gen_annotations(y, dir_fd);
	yajl_gen_map_close(y);
	yajl_gen_map_close(y);
}

/* The state's pid (runtime.md "State": the container's process, as seen by the
 * caller): the container's init, pid 1 of its pid namespace and in every namespace
 * of the container from create on (the payload is its child once started), never
 * the monitor, which is in the caller's (a hook's `nsenter -t PID` would act on the
 * host).  The pid file keeps the monitor, the process whose exit is the
 * container's, which a caller that reaps (containerd's shim, conmon) can wait for.
 * 0 when it cannot be found (stopping, or no pid namespace of its own). */
static long long oci_container_pid(int dir_fd, const struct service_state *st)
{
	struct exec_target t;
	struct nsrun_error err = { 0 };
	long long pid = 0;

	exec_target_init(&t);
	if (st->pid > 0 && exec_target_find(&t, dir_fd, (pid_t)st->pid, &err) == 0)
		pid = t.init;
	exec_target_close(&t);
	return pid;
}

/* A container that joined a pid namespace by path (state.json's "joined"): its
 * init is not that namespace's pid 1, so its end would leave what the payload
 * and exec started there to the pod; those are SIGKILLed first, and only those
 * (exec_target_kill_own: init's descendants, and the processes of the
 * payload's mount namespace), as runc kills such a container through its
 * cgroup.  Nothing for any other container. */
static void kill_own_in_joined_pid(int dir_fd, const struct service_state *st)
{
	struct exec_target t;
	struct nsrun_error err = { 0 };

	if (!state_joined(st, "pid") || st->pid <= 0)
		return;
	exec_target_init(&t);
	if (exec_target_find(&t, dir_fd, (pid_t)st->pid, &err) == 0) {
		char path[48];
		_cleanup_close_ int mnt = -1;
		if (t.payload > 0) {
			snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)t.payload);
			mnt = open(path, O_RDONLY | O_CLOEXEC);
		}
		exec_target_kill_own("/proc", t.init, mnt);
	}
	exec_target_close(&t);
}

char *oci_state_text(int dir_fd)
{
	struct service_state st;
	const unsigned char *buf;
	size_t len;
	char *out = NULL;
	yajl_gen y;

	if (state_read(dir_fd, &st) < 0 || !(y = yajl_gen_alloc(NULL)))
		return NULL;
	gen_state(y, dir_fd, &st, oci_status_of(dir_fd), oci_container_pid(dir_fd, &st));
	yajl_gen_get_buf(y, &buf, &len);
	out = strndup((const char *)buf, len);
	yajl_gen_free(y);
	return out;
}

int oci_state_split(int dir_fd, const struct service_state *st, const char *status, char **head, char **tail)
{
	const unsigned char *buf;
	size_t len;
	yajl_gen y;

	*head = *tail = NULL;
	if (!(y = yajl_gen_alloc(NULL)))
		return -1;
	/* pid 0, split there: its first "pid":0, is the key's, as only ociVersion, the
	 * id (a checked name) and the status come before it */
	gen_state(y, dir_fd, st, status, 0);
	yajl_gen_get_buf(y, &buf, &len);
	{
		const char *b = (const char *)buf, *at = memmem(b, len, "\"pid\":0,", 8);
		if (at) {
			*head = strndup(b, (size_t)(at - b) + 6);
			*tail = strndup(at + 7, len - (size_t)(at + 7 - b));
		}
	}
	yajl_gen_free(y);
	if (!*head || !*tail) {
		free(*head);
		free(*tail);
		*head = *tail = NULL;
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

char *oci_hooks_of(int dir_fd)
{
	_cleanup_close_ int fd = openat(dir_fd, HOOKS_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	char path[32];
	char *text = NULL;

	if (fd < 0)
		return NULL;
	fd_path(path, sizeof(path), fd);
	return read_file(path, 4 * 1024 * 1024, &text, NULL) < 0 ? NULL : text;
}

static void warn_hook(void *ctx, const struct nsrun_error *err)
{
	char line[400];

	error_format(err, line, sizeof(line));
	oci_warn(ctx, line);
}

void oci_hooks_warn(const struct oci_globals *g, const char *hooks, const char *kind, const char *state)
{
	if (hooks && state)
		oci_hooks_run_each(hooks, kind, state, warn_hook, (void *)g);
}

int oci_remove(const struct oci_globals *g, int root_fd, int dir_fd, const char *id)
{
	/* poststop: once it is gone (runtime.md "Lifecycle" 12), with the state it had */
	_cleanup_free_ char *hooks = oci_hooks_of(dir_fd), *state = hooks ? oci_state_text(dir_fd) : NULL;

	if (state_remove_dead(root_fd, id, dir_fd) < 0)
		return -1;
	oci_hooks_warn(g, hooks, "poststop", state);
	return 0;
}

static void print_gen(yajl_gen y)
{
	const unsigned char *buf;
	size_t len;

	yajl_gen_get_buf(y, &buf, &len);
	fwrite(buf, 1, len, stdout);
	fputc('\n', stdout);
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

int oci_cmd_state(const struct oci_globals *g, int argc, char **argv)
{
	struct nsrun_error err = { 0 };
	_cleanup_close_ int root_fd = -1, dir_fd = -1;
	struct service_state st;
	yajl_gen y;

	optind = 1;
	if (argc != 2)
		return oci_failf(g, "state: expected one container ID");
	if (oci_open_id(g, argc, argv, &root_fd, &dir_fd, &err) < 0)
		return oci_fail(g, &err);
	if (oci_state_read(dir_fd, &st) < 0)
		return oci_failf(g, "container \"%s\": read its state: %s", argv[1], strerror(errno));
	if (!(y = yajl_gen_alloc(NULL)))
		return oci_failf(g, "state: out of memory");
	yajl_gen_config(y, yajl_gen_beautify, 1);
	gen_state(y, dir_fd, &st, oci_status_of(dir_fd), oci_container_pid(dir_fd, &st));
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

int oci_cmd_kill(const struct oci_globals *g, int argc, char **argv)
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
			return oci_failf(g, "kill: unknown option %s", argv[optind - 1]);
	if (optind != argc - 1 && optind != argc - 2)
		return oci_failf(g, "kill: expected ID [SIGNAL]");
	if (optind == argc - 2 && (sig = parse_signal(argv[argc - 1])) < 0)
		return oci_failf(g, "kill: \"%s\": not a signal name or number", argv[argc - 1]);
	if (oci_open_id(g, argc, argv, &root_fd, &dir_fd, &err) < 0)
		return oci_fail(g, &err);
	if (oci_state_read(dir_fd, &st) < 0 || !state_is_alive(dir_fd))
		return oci_failf(g, "container \"%s\" is not running", argv[optind]);
	/* the monitor forwards these to the payload (run.c); a created container has
	 * no payload yet: any of them ends it, as it would runc's waiting init */
	forwarded = sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT || sig == SIGUSR1 ||
		    sig == SIGUSR2;
	if (sig != SIGKILL && !forwarded)
		return oci_failf(g, "kill: signal %d: nsrun forwards only TERM, INT, HUP, QUIT, USR1, USR2 and KILL",
			     sig);
	if (oci_is_created(dir_fd))
		sig = SIGKILL;
	if (sig == SIGKILL)
		kill_own_in_joined_pid(dir_fd, &st);
	if (signal_monitor(dir_fd, &st, sig, &err) < 0)
		return oci_fail(g, &err);
	return 0;
}

int oci_cmd_delete(const struct oci_globals *g, int argc, char **argv)
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
			return oci_failf(g, "delete: unknown option %s", argv[optind - 1]);
		force = true;
	}
	if (optind != argc - 1)
		return oci_failf(g, "delete: expected one container ID");
	if (oci_open_id(g, argc, argv, &root_fd, &dir_fd, &err) < 0) {
		/* delete --force of one that is gone: nothing to do (runc's) */
		return force && !err.errnum ? 0 : oci_fail(g, &err);
	}
	if (state_is_alive(dir_fd)) {
		/* (a create that ended during its hooks left it "creating": deleted as created) */
		if (!force && oci_is_creating(dir_fd) && !oci_create_ended(dir_fd))
			return oci_failf(g, "container \"%s\" is being created: wait for its create, or delete --force",
				     argv[optind]);
		if (!force && !oci_is_created(dir_fd))
			return oci_failf(g, "container \"%s\" is running: stop it first (nsrun kill), or delete --force",
				     argv[optind]);
		/* the container's init first: its monitor then ends the run as it does when a
		 * payload ends (its cgroup, linux.cgroupsPath's parents too, removed); a
		 * monitor SIGKILLed could remove nothing.  Then the monitor, if still there. */
		if (oci_state_read(dir_fd, &st) == 0) {
			kill_own_in_joined_pid(dir_fd, &st);
			long long init = oci_container_pid(dir_fd, &st);
			_cleanup_close_ int pidfd = init > 0 ? (int)syscall(SYS_pidfd_open, (pid_t)init, 0) : -1;
			if (pidfd >= 0 && syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0) == 0)
				for (int i = 0; i < 500 && state_is_alive(dir_fd); i++)
					usleep(10000);
		}
		if (!state_is_alive(dir_fd))
			; /* (gone) */
		else if (state_read(dir_fd, &st) < 0 || signal_monitor(dir_fd, &st, SIGKILL, &err) < 0) {
			if (state_is_alive(dir_fd))
				return oci_fail(g, err.msg[0] ? &err : &(struct nsrun_error){ .msg = "read the state" });
		}
		if (!oci_wait_gone(dir_fd))
			return oci_failf(g, "container \"%s\" still running 10 s after SIGKILL", argv[optind]);
	}
	/* ENOENT: a create that was still running removed it when its container ended */
	if (oci_remove(g, root_fd, dir_fd, argv[optind]) < 0 && !(force && errno == ENOENT))
		return oci_failf(g, "container \"%s\": remove its state: %s", argv[optind], strerror(errno));
	return 0;
}

int oci_cmd_list(const struct oci_globals *g, int argc, char **argv)
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
			return oci_failf(g, "list: expected [--format table|json] [--quiet]");
	}
	if ((root_fd = oci_open_root(g, root, sizeof(root), &err)) < 0)
		return oci_fail(g, &err);
	if (!(d = fdopendir(dup(root_fd))))
		return oci_failf(g, "list: read %s: %s", root, strerror(errno));
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
		const char *status = oci_status_of(fd);
		if (y)
			gen_state(y, fd, &st, status, oci_container_pid(fd, &st));
		else if (quiet)
			printf("%s\n", st.name);
		else
			printf("%-24s %-8lld %-8s %s\n", st.name, strcmp(status, "stopped") ? oci_container_pid(fd, &st) : 0, status,
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
int oci_cmd_features(void)
{
	static const char *const namespaces[] = { "cgroup", "ipc", "mount", "network", "pid", "user", "uts", NULL };
	static const char *const hooks[] = { "prestart", "createRuntime", "createContainer", "startContainer",
					     "poststart", "poststop", NULL };
	static const char *const mount_options[] = { "bind", "rbind", "ro", "rw", "nosuid", "nodev", "noexec",
						     "shared", "rshared", "slave", "rslave", "private", "rprivate",
						     "unbindable", "runbindable", NULL };
	yajl_gen y = yajl_gen_alloc(NULL);

	if (!y)
		return 1;
	yajl_gen_config(y, yajl_gen_beautify, 1);
	yajl_gen_map_open(y);
	gen_str(y, "ociVersionMin", "1.0.0");
	gen_str(y, "ociVersionMax", OCI_VERSION);
	yajl_gen_string(y, (const unsigned char *)"hooks", 5);
	yajl_gen_array_open(y); /* those nsrun runs (oci_hooks.h) */
	for (size_t i = 0; hooks[i]; i++)
		yajl_gen_string(y, (const unsigned char *)hooks[i], strlen(hooks[i]));
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
