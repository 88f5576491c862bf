/* oci_exec.c - the OCI runtime's verbs on a running container's processes:
 * exec (a process joins it: exec_join.h does the work, as for `nsrun exec`), ps
 * (its pids), pause and resume (cgroup v2's freezer), update (its cgroup's
 * limits).  runc's command line for each (runc(8) exec, ps, pause, update). */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <getopt.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "cleanup.h"
#include "exec_join.h"
#include "exec_target.h"
#include "oci_internal.h"
#include "state.h"
#include "sys.h"
#include "util.h"

#define FREEZE_WAIT_US (10ULL * 1000000) /* pause: how long the kernel may take to freeze every task */
#define PROCESS_MAX (1024 * 1024)        /* --process FILE: the largest process.json read */

/* ---- exec ---- */

/* What --process FILE (runtime-spec's process object, config.md "Process") and
 * the options give the command. */
struct exec_opts {
	struct strv args, env;
	char *cwd;
	bool user_set, tty;
	uid_t uid;
	gid_t gid;
};

static const char *jstr(yajl_val v)
{
	return YAJL_IS_STRING(v) ? v->u.string : NULL;
}

/* Appends the strings of the array v (at JSON path what) to sv.  Returns 0 or -1 with err. */
static int jstrings(yajl_val v, const char *what, struct strv *sv, struct nsrun_error *err)
{
	if (!YAJL_IS_ARRAY(v))
		return error_set(err, 0, "--process: %s: expected an array of strings", what);
	for (size_t i = 0; i < v->u.array.len; i++) {
		const char *s = jstr(v->u.array.values[i]);
		if (!s)
			return error_set(err, 0, "--process: %s[%zu]: expected a string", what, i);
		if (strv_push(sv, s) < 0)
			return error_set(err, ENOMEM, "--process: %s", what);
	}
	return 0;
}

/* An id of process.user (0 to 65534, as config.json's: oci_config.c). */
static int jid(yajl_val v, const char *what, unsigned *out, struct nsrun_error *err)
{
	if (!YAJL_IS_INTEGER(v) || YAJL_GET_INTEGER(v) < 0 || YAJL_GET_INTEGER(v) > 65534)
		return error_set(err, 0, "--process: %s: expected an id from 0 to 65534", what);
	*out = (unsigned)YAJL_GET_INTEGER(v);
	return 0;
}

/* Reads process.json: args, env, cwd, user, terminal are taken; capabilities are
 * bounded by the container's, which has none (a warning when any set is
 * non-empty); the rest is the container's (its rlimits, no_new_privs, labels).
 * Returns 0 or -1 with err naming the JSON path. */
static int read_process(const char *path, struct exec_opts *o, struct strv *warnings, struct nsrun_error *err)
{
	_cleanup_free_ char *text = NULL;
	char ebuf[256] = "";
	yajl_val t, v;
	int rc = -1;

	if (read_file(path, PROCESS_MAX, &text, NULL) < 0)
		return error_set(err, errno, "--process: read %s", path);
	if (!(t = yajl_tree_parse(text, ebuf, sizeof(ebuf))) || !YAJL_IS_OBJECT(t)) {
		yajl_tree_free(t);
		return error_set(err, 0, "--process %s: not a JSON object%s%s", path, ebuf[0] ? ": " : "",
				 strtok(ebuf, "\n") ? ebuf : "");
	}
	if ((v = yajl_tree_get(t, (const char *[]){ "args", NULL }, yajl_t_any))) {
		if (jstrings(v, "args", &o->args, err) < 0)
			goto out;
	}
	if ((v = yajl_tree_get(t, (const char *[]){ "env", NULL }, yajl_t_any))) {
		if (jstrings(v, "env", &o->env, err) < 0)
			goto out;
	}
	if ((v = yajl_tree_get(t, (const char *[]){ "cwd", NULL }, yajl_t_any))) {
		if (!jstr(v) || v->u.string[0] != '/') {
			error_set(err, 0, "--process: cwd: expected an absolute path");
			goto out;
		}
		free(o->cwd);
		if (!(o->cwd = strdup(v->u.string))) {
			error_set(err, ENOMEM, "--process: cwd");
			goto out;
		}
	}
	if ((v = yajl_tree_get(t, (const char *[]){ "user", NULL }, yajl_t_object))) {
		unsigned uid = 0, gid = 0;
		yajl_val u = yajl_tree_get(v, (const char *[]){ "uid", NULL }, yajl_t_any),
			 g = yajl_tree_get(v, (const char *[]){ "gid", NULL }, yajl_t_any),
			 extra = yajl_tree_get(v, (const char *[]){ "additionalGids", NULL }, yajl_t_array);
		if ((u && jid(u, "user.uid", &uid, err) < 0) || (g && jid(g, "user.gid", &gid, err) < 0))
			goto out;
		o->user_set = true;
		o->uid = uid;
		o->gid = gid;
		if (extra && extra->u.array.len && strv_push(warnings, "--process: user.additionalGids: not applied "
							      "(one group is mapped)") < 0)
			goto oom;
	}
	if ((v = yajl_tree_get(t, (const char *[]){ "terminal", NULL }, yajl_t_any)))
		o->tty = YAJL_IS_TRUE(v);
	if ((v = yajl_tree_get(t, (const char *[]){ "capabilities", NULL }, yajl_t_object))) {
		for (size_t i = 0; i < v->u.object.len; i++) {
			yajl_val set = v->u.object.values[i];
			if (YAJL_IS_ARRAY(set) && set->u.array.len) {
				char line[160];
				snprintf(line, sizeof(line), "--process: capabilities.%s: not given: the container's "
					 "bounding set is empty, and an exec'd process gets no more", v->u.object.keys[i]);
				if (strv_push(warnings, line) < 0)
					goto oom;
				break;
			}
		}
	}
	rc = 0;
	goto out;
oom:
	error_set(err, ENOMEM, "--process");
out:
	yajl_tree_free(t);
	return rc;
}

/* -u UID[:GID] */
static int parse_user(const char *s, struct exec_opts *o, struct nsrun_error *err)
{
	uint64_t uid, gid = 0;
	_cleanup_free_ char *copy = strdup(s);
	char *colon = copy ? strchr(copy, ':') : NULL;

	if (!copy)
		return error_set(err, ENOMEM, "--user");
	if (colon)
		*colon = '\0';
	if (parse_uint("--user", copy, 65534, &uid, err) < 0 || (colon && parse_uint("--user", colon + 1, 65534, &gid,
										   err) < 0))
		return -1;
	o->user_set = true;
	o->uid = (uid_t)uid;
	o->gid = (gid_t)gid;
	return 0;
}

static const char exec_usage[] =
	"Usage: nsrun [GLOBAL] exec [OPTIONS] ID [CMD [ARG...]]\n"
	"Runs a process in the running container ID: its namespaces, cgroup, rlimits, seccomp\n"
	"filter, no capabilities, no_new_privs (docs/oci-runtime.md).\n"
	"  -p, --process FILE        runtime-spec's process object (args, env, cwd, user, terminal)\n"
	"  -d, --detach              return once it exec'd; it runs on (our parent gets it)\n"
	"  --pid-file FILE           write its pid there\n"
	"  --console-socket PATH     with a terminal, the pty's master goes there (SCM_RIGHTS)\n"
	"  -t, --tty                 a terminal (pty) of the container's devpts\n"
	"  --preserve-fds N          our fds 3 to 3+N-1 reach the process as they are\n"
	"  --cwd DIR, -e/--env KEY=VALUE, -u/--user UID[:GID]   over process.json's\n"
	"  --cap, --apparmor, --process-label, --no-new-privs, -g/--additional-gids   accepted:\n"
	"                            no capability is given; no_new_privs is always set\n";

static const struct option exec_options[] = {
	{ "process", required_argument, NULL, 'p' },
	{ "detach", no_argument, NULL, 'd' },
	{ "pid-file", required_argument, NULL, 'P' },
	{ "console-socket", required_argument, NULL, 'c' },
	{ "tty", no_argument, NULL, 't' },
	{ "cwd", required_argument, NULL, 'w' },
	{ "env", required_argument, NULL, 'e' },
	{ "user", required_argument, NULL, 'u' },
	{ "cap", required_argument, NULL, 'C' },
	{ "additional-gids", required_argument, NULL, 'g' },
	{ "apparmor", required_argument, NULL, 'a' },
	{ "process-label", required_argument, NULL, 'l' },
	{ "no-new-privs", no_argument, NULL, 'n' },
	{ "preserve-fds", required_argument, NULL, 'f' },
	{ "ignore-paused", no_argument, NULL, 'i' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

bool oci_exec_is_oci(int argc, char **argv)
{
	/* nsrun exec NAME has none of these: runc's callers always pass one (conmon and
	 * containerd's shim: --pid-file, --process) */
	/* options (either's) whose value is the next word */
	static const char *const valued[] = { "-e", "--env", "-w", "--workdir", "-u", "--user", "-p", "--process",
					      "--pid-file", "--console-socket", "--cwd", "--cap", "--process-label",
					      "--apparmor", "--preserve-fds", "-g", "--additional-gids", NULL };
	static const char *const own[] = { "--process", "--pid-file", "--console-socket", "--detach", "-d",
					   "--cwd", "--cap", "--process-label", "--apparmor", "--no-new-privs",
					   "--preserve-fds", "--ignore-paused", NULL };

	for (int i = 2; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--") == 0)
			return false;
		for (size_t k = 0; own[k]; k++) {
			size_t n = strlen(own[k]);
			if (strncmp(argv[i], own[k], n) == 0 && (argv[i][n] == '\0' || argv[i][n] == '='))
				return true;
		}
		for (size_t k = 0; valued[k]; k++)
			if (strcmp(argv[i], valued[k]) == 0)
				i++;
	}
	return false;
}

/* exec's --pid-file, once the process exec'd (x.started) */
static int write_started_pid(pid_t pid, void *ctx, struct nsrun_error *err)
{
	return oci_write_pid_file((const char *)ctx, pid, err);
}

static void exec_opts_free(struct exec_opts *o)
{
	strv_free(&o->args);
	strv_free(&o->env);
	free(o->cwd);
}

int oci_cmd_exec(const struct oci_globals *g, int argc, char **argv)
{
	struct exec_opts o = { 0 };
	struct strv extra_env = { 0 }, warnings = { 0 };
	struct nsrun_error err = { 0 };
	_cleanup_close_ int root_fd = -1, dir_fd = -1;
	const char *process = NULL, *pid_file = NULL, *console = NULL, *cwd = NULL, *user = NULL;
	bool detach = false, tty = false;
	long preserve = 0;
	int c, rc = 1;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+p:dtw:e:u:g:h", exec_options, NULL)) != -1) {
		switch (c) {
		case 'p': process = optarg; break;
		case 'd': detach = true; break;
		case 'P': pid_file = optarg; break;
		case 'c': console = optarg; break;
		case 't': tty = true; break;
		case 'w': cwd = optarg; break;
		case 'u': user = optarg; break;
		case 'e':
			if (!strchr(optarg, '=') || strv_push(&extra_env, optarg) < 0) {
				rc = oci_failf(g, "exec: --env \"%s\": expected KEY=VALUE", optarg);
				goto out;
			}
			break;
		case 'f': {
			char *end;
			errno = 0;
			preserve = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || preserve < 0 || preserve > 1024) {
				rc = oci_failf(g, "exec: --preserve-fds \"%s\": expected a number from 0 to 1024", optarg);
				goto out;
			}
			/* open now, before nsrun opens anything that could take a free number */
			for (long fd = 3; fd < 3 + preserve; fd++)
				if (fcntl((int)fd, F_GETFD) < 0) {
					rc = oci_failf(g, "exec: --preserve-fds %ld: fd %ld is not open", preserve, fd);
					goto out;
				}
			break;
		}
		case 'C': case 'g': case 'a': case 'l': case 'n': case 'i': break;
		case 'h': fputs(exec_usage, stdout); rc = 0; goto out;
		default:
			rc = oci_failf(g, "exec: unknown option %s (nsrun exec --help)", argv[optind - 1]);
			goto out;
		}
	}
	if (optind >= argc) {
		rc = oci_failf(g, "exec: expected a container ID");
		goto out;
	}
	if (process && read_process(process, &o, &warnings, &err) < 0)
		goto fail;
	if (optind + 1 < argc) {
		strv_free(&o.args);
		for (int i = optind + 1; i < argc; i++)
			if (strv_push(&o.args, argv[i]) < 0)
				goto oom;
	}
	if (!o.args.n) {
		rc = oci_failf(g, "exec: no command: give --process FILE or CMD after the ID");
		goto out;
	}
	for (size_t i = 0; i < extra_env.n; i++)
		if (strv_setenv(&o.env, extra_env.v[i]) < 0)
			goto oom;
	if (cwd && (cwd[0] != '/' || !(free(o.cwd), o.cwd = strdup(cwd)))) {
		rc = oci_failf(g, "exec: --cwd \"%s\": expected an absolute path", cwd);
		goto out;
	}
	if (user && parse_user(user, &o, &err) < 0)
		goto fail;
	o.tty = o.tty || tty;
	if (o.tty && !console && detach) {
		rc = oci_failf(g, "exec: a terminal with --detach: give --console-socket PATH, where the terminal goes");
		goto out;
	}
	if (console && !o.tty) {
		rc = oci_failf(g, "exec: --console-socket given without a terminal (--tty or process.terminal)");
		goto out;
	}
	if (oci_open_id(g, argc, argv, &root_fd, &dir_fd, &err) < 0)
		goto fail;
	if (strcmp(oci_status_of(dir_fd), "running") != 0) {
		rc = oci_failf(g, "exec: container \"%s\" is %s: a process can join only a running one", argv[optind],
			       oci_status_of(dir_fd));
		goto out;
	}
	for (size_t i = 0; i < warnings.n; i++)
		oci_warn(g, warnings.v[i]);
	{
		struct nsrun_exec_config x = {
			.name = argv[optind], .argv = o.args.v, .env = o.env.v, .workdir = o.cwd,
			.user_set = o.user_set, .uid = o.uid, .gid = o.gid, .interactive = true, .tty = o.tty,
			.oci = true, .oci_dir_fd = dir_fd, .env_replace = process != NULL, .detach = detach,
			.console_socket = console, .preserve_fds = (unsigned)preserve, .started = pid_file ? write_started_pid : NULL,
			.started_ctx = (void *)pid_file,
		};
		rc = exec_in_service(&x, &err);
	}
	if (rc < 0)
		goto fail;
	goto out;
oom:
	error_set(&err, ENOMEM, "exec");
fail:
	rc = oci_fail(g, &err);
out:
	exec_opts_free(&o);
	strv_free(&extra_env);
	strv_free(&warnings);
	return rc;
}

/* ---- ps ---- */

/* The running container of argv[optind] into t (its payload, namespaces and
 * cgroups: exec_target.h).  Returns 0 or -1 with err. */
static int open_target(const struct oci_globals *g, int argc, char **argv, int *dir_fd, struct exec_target *t,
		       struct nsrun_error *err)
{
	_cleanup_close_ int root_fd = -1;
	struct service_state st;
	const char *status;

	if (oci_open_id(g, argc, argv, &root_fd, dir_fd, err) < 0)
		return -1;
	status = oci_status_of(*dir_fd);
	if (strcmp(status, "running") != 0 && strcmp(status, "paused") != 0)
		return error_set(err, 0, "container \"%s\" is %s, not running", argv[optind], status);
	if (state_read(*dir_fd, &st) < 0)
		return error_set(err, errno, "container \"%s\": read its state", argv[optind]);
	if (exec_target_open(t, *dir_fd, (pid_t)st.pid, err) < 0)
		return error_prefix(err, "container \"%s\"", argv[optind]);
	return 0;
}

int oci_cmd_ps(const struct oci_globals *g, int argc, char **argv)
{
	static const struct option opts[] = { { "format", required_argument, NULL, 'f' }, { NULL, 0, NULL, 0 } };
	struct nsrun_error err = { 0 };
	struct exec_target t;
	_cleanup_close_ int dir_fd = -1;
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *e;
	struct stat want;
	bool json = false;
	yajl_gen y = NULL;
	int c, rc = 1;

	exec_target_init(&t);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+f:", opts, NULL)) != -1) {
		if (c == 'f' && (strcmp(optarg, "json") == 0 || strcmp(optarg, "table") == 0))
			json = strcmp(optarg, "json") == 0;
		else
			return oci_failf(g, "ps: expected [--format table|json] ID");
	}
	/* runc passes what follows the ID to ps(1); nsrun reads /proc itself */
	if (optind >= argc)
		return oci_failf(g, "ps: expected [--format table|json] ID");
	if (open_target(g, optind + 1, argv, &dir_fd, &t, &err) < 0) {
		rc = oci_fail(g, &err);
		goto out;
	}
	/* every process of the container's pid namespace: nsrun's init, the payload,
	 * what they and exec'd processes started */
	if (fstat(t.ns[NS_PID], &want) < 0 || !(d = opendir("/proc"))) {
		rc = oci_failf(g, "ps: read /proc: %s", strerror(errno));
		goto out;
	}
	if (json) {
		y = yajl_gen_alloc(NULL);
		yajl_gen_array_open(y);
	} else {
		printf("%-8s %-8s %s\n", "PID", "PPID", "CMD");
	}
	while ((e = readdir(d))) {
		char path[sizeof(e->d_name) + 16], comm[64] = "?";
		struct stat st;
		long ppid = 0;
		_cleanup_free_ char *stat_text = NULL;
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "%s/ns/pid", e->d_name);
		/* nsrun's init is not dumpable (rootless, its ns links are not ours to read) */
		if (atol(e->d_name) != (long)t.init &&
		    (fstatat(dirfd(d), path, &st, 0) < 0 || st.st_dev != want.st_dev || st.st_ino != want.st_ino))
			continue;
		if (y) {
			yajl_gen_integer(y, atol(e->d_name));
			continue;
		}
		/* /proc/PID/stat: "PID (COMM) STATE PPID ...", COMM up to the last ')' */
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		if (read_file(path, 4096, &stat_text, NULL) == 0) {
			char *open = strchr(stat_text, '('), *close = strrchr(stat_text, ')');
			if (open && close && close > open) {
				snprintf(comm, sizeof(comm), "%.*s", (int)(close - open - 1), open + 1);
				sscanf(close + 1, " %*c %ld", &ppid);
			}
		}
		/* the name is the payload's to set (PR_SET_NAME): no control character of
		 * it reaches the caller's terminal */
		for (char *ch = comm; *ch; ch++)
			if ((unsigned char)*ch < 0x20 || *ch == 0x7f)
				*ch = '?';
		printf("%-8s %-8ld %s\n", e->d_name, ppid, comm);
	}
	if (y) {
		const unsigned char *buf;
		size_t len;
		yajl_gen_array_close(y);
		yajl_gen_get_buf(y, &buf, &len);
		printf("%.*s\n", (int)len, (const char *)buf);
		yajl_gen_free(y);
	}
	rc = 0;
out:
	exec_target_close(&t);
	return rc;
}

/* ---- pause, resume ---- */

/* The directory of the cgroup.procs path p into dir.  Returns false if too long. */
static bool cgroup_dir(const char *p, char *dir, size_t len)
{
	const char *slash = strrchr(p, '/');

	return slash && (size_t)(slash - p) < len && snprintf(dir, len, "%.*s", (int)(slash - p), p) > 0;
}

/* The first cgroup of t (one nsrun made for the container) with file, into path;
 * Returns true if there is one. */
static bool cgroup_with(const struct exec_target *t, const char *file, char *path, size_t len)
{
	for (size_t i = 0; i < t->n_cgroups; i++) {
		char dir[PATH_MAX];
		if (cgroup_dir(t->cgroup_procs[i], dir, sizeof(dir)) &&
		    (size_t)snprintf(path, len, "%s/%s", dir, file) < len && access(path, W_OK) == 0)
			return true;
	}
	return false;
}

/* Why t has no cgroup file: none of its own, or none with it. */
static const char *why_no_cgroup(const struct exec_target *t)
{
	return t->n_cgroups ? "none of its cgroups has it (cgroup v1, or not delegated with that controller)" :
	       "it has no cgroup of its own (none is delegated to nsrun here: its limits are rlimits)";
}

/* True once "frozen V" is in the cgroup.events beside the cgroup.freeze at path. */
static bool frozen_is(const char *freeze, char v)
{
	char events[PATH_MAX], want[] = "frozen 0";
	_cleanup_free_ char *text = NULL;
	const char *slash = strrchr(freeze, '/');

	want[7] = v;
	if (!slash || (size_t)snprintf(events, sizeof(events), "%.*s/cgroup.events", (int)(slash - freeze), freeze) >=
	    sizeof(events) || read_file(events, 4096, &text, NULL) < 0)
		return false;
	return strstr(text, want) != NULL;
}

int oci_cmd_pause(const struct oci_globals *g, int argc, char **argv, bool pause)
{
	const char *verb = pause ? "pause" : "resume";
	struct nsrun_error err = { 0 };
	struct exec_target t;
	_cleanup_close_ int dir_fd = -1;
	char freeze[PATH_MAX];
	uint64_t end;
	int rc = 1;

	exec_target_init(&t);
	optind = 1;
	if (argc != 2)
		return oci_failf(g, "%s: expected one container ID", verb);
	if (open_target(g, argc, argv, &dir_fd, &t, &err) < 0) {
		error_prefix(&err, "%s", verb);
		rc = oci_fail(g, &err);
		goto out;
	}
	if (pause != !oci_is_paused(dir_fd)) {
		rc = oci_failf(g, "%s: container \"%s\" is %s", verb, argv[1], pause ? "paused already" : "not paused");
		goto out;
	}
	/* cgroup v2's freezer (cgroup-v2.rst "Core Interface Files": cgroup.freeze);
	 * never a SIGSTOP, which the payload could see and undo */
	if (!cgroup_with(&t, "cgroup.freeze", freeze, sizeof(freeze))) {
		error_set(&err, 0, "%s %s: no cgroup v2 freezer: %s", verb, argv[1], why_no_cgroup(&t));
		err.hint = "nsrun check says which cgroups nsrun may use (docs/oci-runtime.md, pause)";
		rc = oci_fail(g, &err);
		goto out;
	}
	if (pause) {
		/* state says paused from now on (oci_status_of) */
		int fd = openat(dir_fd, PAUSED_FILE, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0) {
			rc = oci_failf(g, "%s %s: mark it paused: %s", verb, argv[1], strerror(errno));
			goto out;
		}
		close(fd);
	}
	if (write_file(freeze, pause ? "1" : "0") < 0) {
		rc = oci_failf(g, "%s %s: write %s: %s", verb, argv[1], freeze, strerror(errno));
		if (pause)
			unlinkat(dir_fd, PAUSED_FILE, 0);
		goto out;
	}
	for (end = monotonic_us() + FREEZE_WAIT_US; !frozen_is(freeze, pause ? '1' : '0');) {
		if (monotonic_us() >= end) {
			rc = oci_failf(g, "%s %s: its cgroup is not %s after 10 s", verb, argv[1],
				       pause ? "frozen" : "thawed");
			goto out;
		}
		usleep(10000);
	}
	if (!pause)
		unlinkat(dir_fd, PAUSED_FILE, 0);
	rc = 0;
out:
	exec_target_close(&t);
	return rc;
}

/* ---- update ---- */

struct update {
	bool memory_set, swap_set, pids_set, cpu_set;
	long long memory, swap, pids;   /* -1: unlimited */
	long long quota, period;        /* cpu.max: quota -1 unlimited; period in µs */
};

/* -r FILE: runtime-spec's linux.resources object (config-linux.md), the fields
 * update takes: memory.limit, memory.swap, pids.limit, cpu.quota, cpu.period.
 * Returns 0 or -1 with err naming the JSON path. */
static int read_resources(const char *path, struct update *u, struct nsrun_error *err)
{
	static const struct { const char *a, *b; } known[] = {
		{ "memory", "limit" }, { "memory", "swap" }, { "pids", "limit" }, { "cpu", "quota" }, { "cpu", "period" },
	};
	_cleanup_free_ char *text = NULL;
	char ebuf[256] = "";
	yajl_val t;

	if (read_file(strcmp(path, "-") == 0 ? "/dev/stdin" : path, PROCESS_MAX, &text, NULL) < 0)
		return error_set(err, errno, "--resources: read %s", path);
	if (!(t = yajl_tree_parse(text, ebuf, sizeof(ebuf))) || !YAJL_IS_OBJECT(t)) {
		yajl_tree_free(t);
		return error_set(err, 0, "--resources %s: not a JSON object", path);
	}
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		yajl_val v = yajl_tree_get(t, (const char *[]){ known[i].a, known[i].b, NULL }, yajl_t_any);
		long long n;
		if (!v || YAJL_IS_NULL(v))
			continue;
		if (!YAJL_IS_INTEGER(v)) {
			yajl_tree_free(t);
			return error_set(err, 0, "--resources: %s.%s: expected an integer", known[i].a, known[i].b);
		}
		n = YAJL_GET_INTEGER(v);
		switch (i) {
		case 0: u->memory_set = true; u->memory = n; break;
		case 1: u->swap_set = true; u->swap = n; break;
		case 2: u->pids_set = true; u->pids = n; break;
		case 3: u->cpu_set = true; u->quota = n; break;
		default: u->cpu_set = true; u->period = n; break;
		}
	}
	yajl_tree_free(t);
	return 0;
}

/* A limit update may change: its option, its files (the cgroup v2 name, then
 * v1's or NULL), and what "unlimited" is in each. */
struct limit_file {
	const char *opt;
	const char *file[2];
};

static const struct limit_file limit_files[] = {
	{ "--memory", { "memory.max", "memory.limit_in_bytes" } },
	{ "--memory-swap", { "memory.swap.max", "memory.memsw.limit_in_bytes" } },
	{ "--pids-limit", { "pids.max", NULL } },
	{ "--cpus", { "cpu.max", NULL } },
};

/* The file of limit l in t's cgroups into path, and whether it is v1's.
 * Returns 0, or -1 with err naming why there is none. */
static int limit_path(const struct exec_target *t, const struct limit_file *l, char *path, size_t len, bool *v1,
		      struct nsrun_error *err)
{
	for (int k = 0; k < 2 && l->file[k]; k++) {
		if (cgroup_with(t, l->file[k], path, len)) {
			*v1 = k == 1;
			return 0;
		}
	}
	error_set(err, 0, "%s: no %s to change: %s", l->opt, l->file[0], why_no_cgroup(t));
	err->hint = "nsrun check says which cgroups nsrun may use (docs/oci-runtime.md, update)";
	return -1;
}

/* A size (512m, 1g; -1: unlimited) of --memory, --memory-swap. */
static int parse_limit(const char *opt, const char *s, long long *out, struct nsrun_error *err)
{
	uint64_t n;

	if (strcmp(s, "-1") == 0) {
		*out = -1;
		return 0;
	}
	if (parse_size_bytes(opt, s, &n, err) < 0)
		return -1;
	*out = (long long)n;
	return 0;
}

int oci_cmd_update(const struct oci_globals *g, int argc, char **argv)
{
	enum { O_MEM = 256, O_SWAP, O_PIDS, O_QUOTA, O_PERIOD, O_CPUS, O_IGNORED };
	static const struct option opts[] = {
		{ "memory", required_argument, NULL, O_MEM }, { "memory-swap", required_argument, NULL, O_SWAP },
		{ "pids-limit", required_argument, NULL, O_PIDS }, { "cpu-quota", required_argument, NULL, O_QUOTA },
		{ "cpu-period", required_argument, NULL, O_PERIOD }, { "cpus", required_argument, NULL, O_CPUS },
		{ "resources", required_argument, NULL, 'r' }, { NULL, 0, NULL, 0 },
	};
	struct update u = { .period = 100000 };
	struct nsrun_error err = { 0 };
	struct exec_target t;
	_cleanup_close_ int dir_fd = -1;
	int c, rc = 1;
	char *end;

	exec_target_init(&t);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+r:", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			if (read_resources(optarg, &u, &err) < 0)
				return oci_fail(g, &err);
			break;
		case O_MEM:
			if (parse_limit("--memory", optarg, &u.memory, &err) < 0)
				return oci_fail(g, &err);
			u.memory_set = true;
			break;
		case O_SWAP:
			if (parse_limit("--memory-swap", optarg, &u.swap, &err) < 0)
				return oci_fail(g, &err);
			u.swap_set = true;
			break;
		case O_PIDS:
		case O_QUOTA:
		case O_PERIOD: {
			long long n;
			errno = 0;
			n = strtoll(optarg, &end, 10);
			if (errno || *end || !*optarg || n < -1 || (c == O_PERIOD && n <= 0))
				return oci_failf(g, "update: %s \"%s\": expected a number", argv[optind - 1], optarg);
			if (c == O_PIDS) {
				u.pids_set = true;
				u.pids = n <= 0 ? -1 : n;
			} else if (c == O_QUOTA) {
				u.cpu_set = true;
				u.quota = n <= 0 ? -1 : n;
			} else {
				u.cpu_set = true;
				u.period = n;
			}
			break;
		}
		case O_CPUS: {
			double cpus = strtod(optarg, &end);
			if (*end || !*optarg || !(cpus > 0) || cpus > 1024)
				return oci_failf(g, "update: --cpus \"%s\": expected a number of CPUs", optarg);
			u.cpu_set = true;
			u.quota = (long long)(cpus * (double)u.period);
			break;
		}
		default:
			return oci_failf(g, "update: unknown option %s (docs/oci-runtime.md, update)", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return oci_failf(g, "update: expected options and one container ID");
	if (!u.memory_set && !u.swap_set && !u.pids_set && !u.cpu_set)
		return oci_failf(g, "update: nothing to change (--memory, --memory-swap, --pids-limit, --cpus, "
				 "--cpu-quota, --cpu-period, --resources)");
	if (open_target(g, argc, argv, &dir_fd, &t, &err) < 0)
		goto fail;
	/* every change is checked possible before one is made */
	{
		bool set[4] = { u.memory_set, u.swap_set, u.pids_set, u.cpu_set };
		long long value[4] = { u.memory, u.swap, u.pids, u.quota };
		char path[4][PATH_MAX];
		bool v1[4] = { false };
		for (int i = 0; i < 4; i++)
			if (set[i] && limit_path(&t, &limit_files[i], path[i], sizeof(path[i]), &v1[i], &err) < 0)
				goto fail;
		for (int i = 0; i < 4; i++) {
			char text[64];
			if (!set[i])
				continue;
			if (i == 3 && value[i] < 0)
				snprintf(text, sizeof(text), "max %lld", u.period);
			else if (i == 3)
				snprintf(text, sizeof(text), "%lld %lld", value[i], u.period);
			else if (value[i] < 0)
				snprintf(text, sizeof(text), "%s", v1[i] ? "-1" : "max");
			else
				snprintf(text, sizeof(text), "%lld", value[i]);
			if (write_file(path[i], text) < 0) {
				error_set(&err, errno, "%s: write %s to %s", limit_files[i].opt, text, path[i]);
				goto fail;
			}
		}
	}
	rc = 0;
	goto out;
fail:
	error_prefix(&err, "update %s", argv[argc - 1]);
	rc = oci_fail(g, &err);
out:
	exec_target_close(&t);
	return rc;
}
