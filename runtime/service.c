/* service.c - see service.h. */
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
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "cleanup.h"
#include "exec_spec.h"
#include "hostfile.h"
#include "log_index.h"
#include "publish.h"
#include "result.h"
#include "run.h"
#include "seccomp.h"
#include "service.h"
#include "service_wait.h"
#include "service_stdin.h"
#include "state.h"
#include "sys.h"

#define LOG_TAIL_LINES 20
#define DEFAULT_STOP_TIMEOUT_US (10ULL * 1000000)
#define KILL_WAIT_US (5ULL * 1000000)


static void state_from_config(const struct nsrun_config *cfg, const struct publish_state *pub, const char *name,
			      const char *dir, struct service_state *st)
{
	memset(st, 0, sizeof(*st));
	snprintf(st->name, sizeof(st->name), "%s", name);
	snprintf(st->status, sizeof(st->status), "running");
	if ((size_t)snprintf(st->log, sizeof(st->log), "%s/%s", dir, LOG_FILE) >= sizeof(st->log))
		st->log[0] = '\0';
	const char *image = cfg->image ? cfg->image : cfg->rootfs;
	snprintf(st->image, sizeof(st->image), "%s", image ? image : "");
	/* as given: an empty argument or one with a space stays visible (shell words) */
	shell_quote_join((const char *const *)cfg->process.args.v, cfg->process.args.n, st->command, sizeof(st->command));
	st->created = (long long)time(NULL);
	st->tty = cfg->tty;
	st->open_stdin = cfg->service.open_stdin;
	/* container:NAME to it refuses a pasta service's way out (netjoin.c) */
	static const char *const modes[] = { [NSRUN_NETWORK_NONE] = "none", [NSRUN_NETWORK_PASTA] = "pasta",
		[NSRUN_NETWORK_CONTAINER] = "container", [NSRUN_NETWORK_NAMED] = "named",
		[NSRUN_NETWORK_PATH] = "path" };
	snprintf(st->network, sizeof(st->network), "%s", modes[cfg->network]);
	st->n_ports = cfg->n_publish;
	for (size_t i = 0; i < cfg->n_publish; i++) {
		st->ports[i] = cfg->publish[i];
		st->ports[i].host_port = pub->host_port[i];
	}
	for (size_t i = 0; i < cfg->service.labels.n && i < NSRUN_MAX_LABELS; i++) {
		const char *kv = cfg->service.labels.v[i];
		size_t klen = strcspn(kv, "=");
		snprintf(st->labels[i].key, sizeof(st->labels[i].key), "%.*s", (int)klen, kv);
		snprintf(st->labels[i].value, sizeof(st->labels[i].value), "%s", kv[klen] ? kv + klen + 1 : "");
		st->n_labels = i + 1;
	}
	if (cfg->service.health.cmd) {
		snprintf(st->health.status, sizeof(st->health.status), "starting");
		st->health.exit_code = -1;
	}
}

/* Waits until the service at dir_fd has released its lock, up to timeout_us. Returns true if it did. */
static bool wait_gone(int dir_fd, uint64_t timeout_us)
{
	uint64_t end = monotonic_us() + timeout_us;

	while (state_is_alive(dir_fd)) {
		if (monotonic_us() >= end)
			return false;
		usleep(10000);
	}
	return true;
}

/* ---- nsrun -d ---- */

/* The start time of pid (field 22 of /proc/PID/stat, proc(5)), or 0 if unreadable. */
static unsigned long long proc_start_time(pid_t pid)
{
	char dir[32];
	unsigned long long t;

	snprintf(dir, sizeof(dir), "/proc/%d", (int)pid);
	return proc_stat_fields(AT_FDCWD, dir, 22, 1, &t) < 0 ? 0 : t;
}

/* --stop-with-parent, --stop-with-pid: a pidfd (pidfd_open(2), Linux 5.3) of the
 * process the service ends with, or -1 when none is asked.  The parent is checked
 * after the open (getppid(2) unchanged: it did not die meanwhile, so its pid was not
 * reused); a PID by its start time (/proc/PID/stat): not after ours (a process
 * started since cannot be the one named), the same before and after the open.
 * Returns -2 with err on failure. */
static int open_stop_watch(const struct nsrun_config *cfg, struct nsrun_error *err)
{
	const char *what = cfg->service.stop_with_parent ? "--stop-with-parent" : "--stop-with-pid";
	pid_t pid = cfg->service.stop_with_parent ? getppid() : cfg->service.stop_with_pid;
	unsigned long long start = 0;
	int fd;

	if (!cfg->service.stop_with_parent && !cfg->service.stop_with_pid)
		return -1;
	if (!cfg->service.stop_with_parent && !(start = proc_start_time(pid))) {
		error_set(err, 0, "%s %d: no such process", what, (int)pid);
		return -2;
	}
	if (start > proc_start_time(getpid())) {
		/* the one meant was older than we are: this is another that got its pid */
		error_set(err, 0, "%s %d: that process started after nsrun (the one meant ended)", what, (int)pid);
		return -2;
	}
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0) {
		error_set(err, errno, "%s: pidfd_open of pid %d (Linux 5.3 or later)", what, (int)pid);
		return -2;
	}
	if (cfg->service.stop_with_parent ? getppid() != pid : proc_start_time(pid) != start) {
		close(fd);
		error_set(err, 0, "%s: process %d ended before the service started", what, (int)pid);
		return -2;
	}
	return fd;
}

/* True once the process of the pidfd fd (-1: none) has ended. */
static bool watched_ended(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return fd >= 0 && poll(&pfd, 1, 0) == 1;
}

/* The monitor: in its own session, stdio on the log, runs the container. Returns its exit status. */
static int monitor_main(const struct nsrun_config *cfg, struct timing *timing, struct publish_state *pub, int root_fd,
			int dir_fd, int log_fd, int ready_fd, int stop_fd, struct service_state *st)
{
	struct nsrun_result result;
	struct nsrun_error err = { .stage = STAGE_PREPARE };
	int in_fd = -1;
	int code;
	pid_t checker;

	setsid();
	if (dup2(log_fd, 1) < 0 || dup2(log_fd, 2) < 0)
		_exit(125);
	close(log_fd);
	/* -i/-t: the stdin clients attach to (service_stdin.h); with -t a pty that is
	 * our controlling terminal, so a resize's SIGWINCH reaches the run */
	if (cfg->service.open_stdin || cfg->tty)
		in_fd = service_stdin_start(dir_fd, cfg->service.open_stdin, cfg->tty, cfg->service.stdin_once, &err);
	else
		in_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (in_fd < 0 || dup2(in_fd, 0) < 0 || (cfg->tty && ioctl(0, TIOCSCTTY, 0) < 0)) {
		if (!err.msg[0])
			error_set(&err, errno, "the service's stdin");
		error_print(&err, stderr);
		_exit(125);
	}
	close(in_fd);
	/* the caller's terminal and job control signals are not ours any more */
	signal(SIGHUP, SIG_IGN);
	st->pid = getpid();
	state_write(dir_fd, st);
	checker = health_start(cfg, dir_fd, st->name);
	/* which stream each write to the log came from, and when (the API's logs);
	 * without it the log reads as one stream */
	int index_fd = openat(dir_fd, LOG_INDEX_FILE, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	nsrun_run_service(cfg, &result, timing,
			  &(struct nsrun_service_io){ .pub = pub, .ready_fd = ready_fd, .stop_fd = stop_fd,
						       .log_index_fd = index_fd });
	if (index_fd >= 0)
		close(index_fd);
	/* before state.json is written again: the checker writes it too */
	health_stop(checker);
	if (st->health.status[0]) { /* its last word, for ps and inspect */
		struct service_state last;
		if (state_read(dir_fd, &last) == 0)
			st->health = last.health;
	}
	result_report(&result, stderr);
	code = result_exit_code(&result);
	result_free(&result);
	if (watched_ended(stop_fd)) {
		/* nobody is left to stop or remove it: as nsrun stop would, every trace goes */
		state_remove_dir(root_fd, st->name);
		return code;
	}
	snprintf(st->status, sizeof(st->status), "exited");
	st->exit_code = code;
	state_write(dir_fd, st);
	return code;
}

/* Reaps pid if it exits within timeout_us; *status stays -1 otherwise. */
static void reap_within(pid_t pid, int *status, uint64_t timeout_us)
{
	uint64_t end = monotonic_us() + timeout_us;

	while (monotonic_us() < end) {
		pid_t r = waitpid(pid, status, WNOHANG);
		if (r == pid || (r < 0 && errno != EINTR))
			return;
		usleep(5000);
	}
	*status = -1;
}

/* Waits for "R" on fd up to timeout_us. Returns 1 ready, 0 timed out, -1 closed without it. */
static int wait_ready(int fd, uint64_t timeout_us)
{
	uint64_t end = monotonic_us() + timeout_us;

	for (;;) {
		uint64_t now = monotonic_us();
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		char c;
		int r;

		if (now >= end)
			return 0;
		r = poll(&pfd, 1, (int)((end - now + 999) / 1000));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r == 0 ? 0 : -1;
		r = (int)read(fd, &c, 1);
		return r == 1 && c == 'R' ? 1 : -1;
	}
}

/* The started service on stdout: its name and ports, or with --json its state
 * document (to stdout for "-", else to the file prepared in *h).  Returns 0 or -1
 * with err. */
static int print_started(const struct nsrun_config *cfg, const struct service_state *st, const char *dir,
			 struct host_out *h, struct nsrun_error *err)
{
	if (cfg->output.json_path) {
		bool to_stdout = strcmp(cfg->output.json_path, "-") == 0;
		FILE *out = to_stdout ? stdout : host_out_begin(h, err);
		yajl_gen g = NULL;
		const unsigned char *buf;
		size_t len;
		int rc = 0;
		if (!out)
			return -1;
		g = yajl_gen_alloc(NULL);
		if (!g) {
			if (!to_stdout)
				fclose(out);
			return error_set(err, ENOMEM, "--json");
		}
		state_gen(g, st, dir);
		yajl_gen_get_buf(g, &buf, &len);
		if (fwrite(buf, 1, len, out) != len || fputc('\n', out) == EOF)
			rc = error_set(err, errno, "write the --json document");
		yajl_gen_free(g);
		if (!to_stdout) {
			if (rc < 0)
				fclose(out);
			else
				rc = host_out_commit(h, out, err);
		}
		return rc;
	}
	printf("%s\n", st->name);
	for (size_t i = 0; i < st->n_ports; i++) {
		bool v6 = strchr(st->ports[i].host_ip, ':') != NULL;
		printf("%u/tcp -> %s%s%s:%u\n", (unsigned)st->ports[i].container_port, v6 ? "[" : "", st->ports[i].host_ip,
		       v6 ? "]" : "", (unsigned)st->ports[i].host_port);
	}
	return 0;
}

void service_clean_if_stale(int root_fd, const char *name)
{
	_cleanup_close_ int fd = openat(root_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct service_state st;

	if (fd < 0 || state_is_alive(fd))
		return;
	/* an exited service keeps its name until rm, as docker's; a dead monitor does not */
	if (state_read(fd, &st) == 0 && state_is_kept(&st))
		return;
	state_remove_dead(root_fd, name, fd);
}

int service_detach(struct nsrun_config *cfg, struct timing *timing)
{
	struct nsrun_error err = { .stage = STAGE_CONFIG };
	_cleanup_close_ int root_fd = -1, dir_fd = -1, lock_fd = -1, log_fd = -1, stop_fd = -1;
	struct publish_state pub;
	struct service_state st;
	char root[PATH_MAX], dir[PATH_MAX + NAME_MAX_LEN + 2], name[NAME_MAX_LEN + 1];
	int ready[2] = { -1, -1 };
	int r, status = -1, not_started = 125;
	pid_t monitor;
	struct host_out json = { .dir_fd = -1, .fd = -1 };

	publish_init(&pub);
	if (cfg->service.name) {
		if (!service_name_valid(cfg->service.name)) {
			error_set(&err, 0, "--name: \"%s\": use [a-zA-Z0-9][a-zA-Z0-9_.-]*, at most %d characters",
				  cfg->service.name, NAME_MAX_LEN);
			goto fail;
		}
		snprintf(name, sizeof(name), "%s", cfg->service.name);
	} else {
		unsigned rnd = 0;
		if (getrandom(&rnd, sizeof(rnd), 0) < 0)
			rnd = (unsigned)getpid() ^ (unsigned)time(NULL);
		snprintf(name, sizeof(name), "nsrun-%08x", rnd);
	}
	err.stage = STAGE_PREPARE;
	if ((stop_fd = open_stop_watch(cfg, &err)) == -2) {
		stop_fd = -1;
		goto fail;
	}
	/* before the service starts; one that could write the file is refused (hostfile.h) */
	if (cfg->output.json_path && strcmp(cfg->output.json_path, "-") != 0 &&
	    host_out_prepare(cfg->output.json_path, "--json", cfg, true, &json, &err) < 0)
		goto fail;
	if ((root_fd = state_open_root(root, sizeof(root), &err)) < 0)
		goto fail;
	service_clean_if_stale(root_fd, name);
	if ((dir_fd = state_create_dir(root_fd, name, &lock_fd, &log_fd, &err)) < 0)
		goto fail;
	snprintf(dir, sizeof(dir), "%s/%s", root, name);
	/* what nsrun exec needs of the payload that it cannot read from the running one */
	if (exec_spec_write(dir_fd, cfg, seccomp_profiles_dir(), &err) < 0)
		goto fail_remove;
	if (publish_open(cfg, &pub, &err) < 0 || pipe2(ready, O_CLOEXEC) < 0) {
		if (!err.msg[0])
			error_set(&err, errno, "pipe");
		goto fail_remove;
	}
	state_from_config(cfg, &pub, name, dir, &st);
	/* the monitor's orphans (the forwarder, the container's init, when the monitor
	 * is killed below) come to us, so we can wait until every one is gone */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	fflush(stdout);
	fflush(stderr);
	monitor = fork();
	if (monitor < 0) {
		error_set(&err, errno, "fork the monitor");
		goto fail_remove;
	}
	if (monitor == 0) {
		prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
		close(ready[0]);
		host_out_free(&json);
		r = monitor_main(cfg, timing, &pub, root_fd, dir_fd, log_fd, ready[1], stop_fd, &st);
		/* held until the kernel ends this process: nsrun stop waits for that, not
		 * for the close before our exit's work (an ASan build's leak check) */
		lock_fd = -1;
		return r;
	}
	close(ready[1]);
	cleanup_closep(&stop_fd); /* the monitor's */
	publish_close(&pub); /* the monitor has them */
	close(lock_fd);
	lock_fd = -1;
	uint64_t deadline = monotonic_us() + cfg->service.ready_timeout_us;
	char why[512] = "";
	r = wait_ready(ready[0], cfg->service.ready_timeout_us);
	close(ready[0]);
	if (r == 1 && service_wants_wait(cfg)) {
		r = service_wait(cfg, dir_fd, &st, deadline, why, sizeof(why));
		if (r < 0) /* it cannot be ready: it goes as one that timed out */
			r = -2;
	}
	if (r == 1) {
		st.pid = monitor;
		if (print_started(cfg, &st, dir, &json, &err) < 0 || (fflush(stdout) != 0 &&
									error_set(&err, errno, "write to stdout"))) {
			/* it runs, but the caller cannot learn of it: do not leave it behind */
			error_prefix(&err, "service \"%s\" was stopped", name);
			error_print(&err, stderr);
			kill(monitor, SIGTERM);
			host_out_free(&json);
			return 125;
		}
		host_out_free(&json);
		return 0;
	}
	/* not ready: the monitor goes, and with it (PDEATHSIG) everything it started;
	 * one that closed the pipe is ending by itself: its status and last words count */
	if (r == -1)
		reap_within(monitor, &status, KILL_WAIT_US);
	if (r == 0 || r == -2 || status == -1) {
		kill(monitor, SIGKILL);
		while (waitpid(monitor, &status, 0) < 0 && errno == EINTR)
			;
	}
	while (wait(NULL) > 0 || errno == EINTR)
		;
	if (r == 0) {
		char secs[32];
		format_seconds(cfg->service.ready_timeout_us, secs, sizeof(secs));
		error_set_stage(&err, STAGE_SUPERVISE, 0, "service \"%s\" was not ready within %s (--ready-timeout)%s%s",
				name, secs, why[0] ? ": " : cfg->service.wait_port ? ": its port did not accept a connection" : "",
				why);
	} else if (r == -2) {
		error_set_stage(&err, STAGE_SUPERVISE, 0, "service \"%s\" did not become ready: %s", name, why);
	} else {
		error_set_stage(&err, STAGE_SUPERVISE, 0, "service \"%s\" ended before it was ready (status %d)", name,
				WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
		/* as docker run -d: a command that is not there (127) or cannot be executed
		 * (126) ends the monitor with that status, which is the exit status too */
		if (WIFEXITED(status) && (WEXITSTATUS(status) == 126 || WEXITSTATUS(status) == 127))
			not_started = WEXITSTATUS(status);
	}
	state_print_log_tail(dir_fd, stderr, LOG_TAIL_LINES);
	state_remove_dir(root_fd, name);
	error_print(&err, stderr);
	host_out_free(&json);
	return not_started;
fail_remove:
	publish_close(&pub);
	if (ready[0] >= 0)
		close(ready[0]);
	if (ready[1] >= 0)
		close(ready[1]);
	state_remove_dir(root_fd, name);
fail:
	error_print(&err, stderr);
	host_out_free(&json);
	return 125;
}

/* ---- ps, logs, stop, rm ---- */

static int __attribute__((format(printf, 1, 2))) fail_msg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "nsrun: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 125;
}

/* --filter label=KEY[=VALUE] (docker's; several must all hold) into labels.
 * Returns 0 or 125 after printing why. */
static int add_filter(struct strv *labels, const char *arg)
{
	if (strncmp(arg, "label=", 6) != 0 || !arg[6] || arg[6] == '=')
		return fail_msg("--filter \"%s\": only label=KEY or label=KEY=VALUE is known", arg);
	return strv_push(labels, arg + 6) < 0 ? fail_msg("out of memory") : 0;
}

/* True if st has every label of labels. */
static bool filter_matches(const struct service_state *st, const struct strv *labels)
{
	for (size_t i = 0; i < labels->n; i++)
		if (!state_has_label(st, labels->v[i]))
			return false;
	return true;
}

static const struct option filter_opts[] = { { "json", no_argument, NULL, 'j' },
					     { "filter", required_argument, NULL, 'f' },
					     { NULL, 0, NULL, 0 } };

static int cmd_ps(int argc, char **argv)
{
	struct nsrun_error err = { 0 };
	char root[PATH_MAX];
	_cleanup_close_ int root_fd = -1;
	bool json = false;
	yajl_gen g = NULL;
	DIR *d;
	struct dirent *e;
	struct strv filter = { 0 };
	int c, rc = 0;

	optind = 2;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+f:", filter_opts, NULL)) != -1) {
		if (c == 'j')
			json = true;
		else if (c == 'f')
			rc = rc ? rc : add_filter(&filter, optarg);
		else
			rc = fail_msg("usage: nsrun ps [--json] [--filter label=KEY[=VALUE]]...");
	}
	if (!rc && optind < argc)
		rc = fail_msg("usage: nsrun ps [--json] [--filter label=KEY[=VALUE]]...");
	if (rc) {
		strv_free(&filter);
		return rc;
	}
	if ((root_fd = state_open_root(root, sizeof(root), &err)) < 0) {
		strv_free(&filter);
		error_print(&err, stderr);
		return 125;
	}
	if (!(d = fdopendir(dup(root_fd)))) {
		strv_free(&filter);
		return fail_msg("read %s", root);
	}
	if (json) {
		g = yajl_gen_alloc(NULL);
		if (!g) {
			strv_free(&filter);
			closedir(d);
			return 125;
		}
		yajl_gen_config(g, yajl_gen_beautify, 1);
		yajl_gen_array_open(g);
	} else {
		printf("%-24s %-22s %-8s %-36s %s\n", "NAME", "STATUS", "PID", "PORTS", "COMMAND");
	}
	while ((e = readdir(d))) {
		_cleanup_close_ int fd = -1;
		struct service_state st;
		char dir[PATH_MAX + 300], status[48], ports[512] = "";
		size_t o = 0;

		if (e->d_name[0] == '.' || !service_name_valid(e->d_name))
			continue;
		fd = openat(root_fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		bool alive = state_is_alive(fd);
		if (state_read(fd, &st) < 0 && alive)
			continue; /* starting: not written yet */
		if (!alive && !state_is_kept(&st)) {
			/* its monitor died (SIGKILL, OOM): so did the container; clean up */
			state_remove_dead(root_fd, e->d_name, fd);
			continue;
		}
		if (!filter_matches(&st, &filter))
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", root, e->d_name);
		if (json) {
			state_gen(g, &st, dir);
			continue;
		}
		if (alive && strcmp(st.health.status, "starting") == 0)
			snprintf(status, sizeof(status), "running (health: starting)"); /* docker's words */
		else if (alive && st.health.status[0])
			snprintf(status, sizeof(status), "running (%s)", st.health.status);
		else if (alive)
			snprintf(status, sizeof(status), "running");
		else if (strcmp(st.status, "created") == 0)
			snprintf(status, sizeof(status), "created");
		else
			snprintf(status, sizeof(status), "exited (%lld)", st.exit_code);
		for (size_t i = 0; i < st.n_ports && o < sizeof(ports); i++) {
			int n = snprintf(ports + o, sizeof(ports) - o, "%s%s:%u->%u/tcp", i ? "," : "", st.ports[i].host_ip,
					 (unsigned)st.ports[i].host_port, (unsigned)st.ports[i].container_port);
			if (n < 0)
				break;
			o += (size_t)n;
		}
		printf("%-24s %-22s %-8lld %-36s %s\n", st.name, status, st.pid, ports, st.command);
	}
	closedir(d);
	strv_free(&filter);
	if (json) {
		const unsigned char *buf;
		size_t len;
		yajl_gen_array_close(g);
		yajl_gen_get_buf(g, &buf, &len);
		fwrite(buf, 1, len, stdout);
		yajl_gen_free(g);
	}
	return fflush(stdout) == 0 ? 0 : 125;
}

/* Opens NAME's directory. Returns its fd, or -1 after printing the error. */
static int open_service(const char *name, int *root_fd)
{
	struct nsrun_error err = { 0 };
	char root[PATH_MAX];
	int fd;

	if (!service_name_valid(name)) {
		fail_msg("\"%s\": not a service name", name);
		return -1;
	}
	if ((*root_fd = state_open_root(root, sizeof(root), &err)) < 0) {
		error_print(&err, stderr);
		return -1;
	}
	fd = openat(*root_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		fail_msg("no such service: \"%s\" (see nsrun ps)", name);
	return fd;
}

static int cmd_logs(int argc, char **argv)
{
	bool follow = false;
	const char *name = NULL;
	_cleanup_close_ int root_fd = -1, dir_fd = -1, fd = -1;
	char buf[65536];

	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "-f") == 0 || strcmp(argv[i], "--follow") == 0)
			follow = true;
		else if (!name)
			name = argv[i];
		else
			return fail_msg("usage: nsrun logs [-f] NAME");
	}
	if (!name)
		return fail_msg("usage: nsrun logs [-f] NAME");
	if ((dir_fd = open_service(name, &root_fd)) < 0)
		return 125;
	if ((fd = openat(dir_fd, LOG_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return fail_msg("open the log of \"%s\"", name);
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n > 0) {
			if (write_all(1, buf, (size_t)n) < 0)
				return 125;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fail_msg("read the log of \"%s\"", name);
		if (!follow)
			return 0;
		/* a log at its --output-limit starts again (relay.h): so does the reader */
		{
			struct stat st;
			off_t at = lseek(fd, 0, SEEK_CUR);
			if (fstat(fd, &st) == 0 && at > st.st_size)
				lseek(fd, 0, SEEK_SET);
		}
		/* the end for now: go on while the service lives, then one last read */
		if (!state_is_alive(dir_fd)) {
			while ((n = read(fd, buf, sizeof(buf))) > 0)
				if (write_all(1, buf, (size_t)n) < 0)
					return 125;
			return 0;
		}
		usleep(100000);
	}
}

/* SIGTERM to the monitor (it forwards it to the payload), SIGKILL after timeout_us,
 * then every trace removed.  Returns 0 or 125. */
/* SIGTERM to the monitor of the service at dir_fd, if it runs. */
static void term_service(int dir_fd)
{
	struct service_state st;

	if (state_is_alive(dir_fd) && state_read(dir_fd, &st) == 0 && st.pid > 1)
		kill((pid_t)st.pid, SIGTERM);
}

static int stop_service(int root_fd, int dir_fd, const char *name, uint64_t timeout_us)
{
	struct service_state st;

	if (state_is_alive(dir_fd)) {
		if (state_read(dir_fd, &st) < 0 || st.pid <= 1)
			return fail_msg("\"%s\": no state to stop it by", name);
		term_service(dir_fd); /* again, for one that started since */
		if (!wait_gone(dir_fd, timeout_us)) {
			/* the monitor takes the container with it (PR_SET_PDEATHSIG) */
			kill((pid_t)st.pid, SIGKILL);
			if (!wait_gone(dir_fd, KILL_WAIT_US))
				return fail_msg("\"%s\": still running after SIGKILL", name);
		}
	}
	if (state_remove_dead(root_fd, name, dir_fd) < 0)
		return fail_msg("remove the state of \"%s\": %s", name, strerror(errno));
	return 0;
}

/* The names of every service of the caller with every label of filter into names.
 * Returns 0 or 125 after printing why. */
static int all_services(struct strv *names, const struct strv *filter)
{
	struct nsrun_error err = { 0 };
	char root[PATH_MAX];
	_cleanup_close_ int root_fd = -1;
	DIR *d;
	struct dirent *e;

	if ((root_fd = state_open_root(root, sizeof(root), &err)) < 0) {
		error_print(&err, stderr);
		return 125;
	}
	if (!(d = fdopendir(dup(root_fd))))
		return fail_msg("read %s", root);
	while ((e = readdir(d))) {
		if (!service_name_valid(e->d_name))
			continue;
		if (filter->n) {
			_cleanup_close_ int fd = openat(root_fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			struct service_state st;
			if (fd < 0 || state_read(fd, &st) < 0 || !filter_matches(&st, filter))
				continue;
		}
		if (strv_push(names, e->d_name) < 0) {
			closedir(d);
			return fail_msg("out of memory");
		}
	}
	closedir(d);
	return 0;
}

static int cmd_stop_rm(int argc, char **argv)
{
	bool rm = strcmp(argv[1], "rm") == 0, force = false, all = false;
	uint64_t timeout_us = rm ? 0 : DEFAULT_STOP_TIMEOUT_US;
	struct nsrun_error err = { 0 };
	struct strv names = { 0 }, filter = { 0 };
	int rc = 0, c;
	const char *usage = rm ? "usage: nsrun rm [-f] NAME... | rm [-f] --all [--filter label=KEY[=VALUE]]..." :
				 "usage: nsrun stop [-t SECONDS] NAME... | stop [-t SECONDS] --all [--filter label=KEY[=VALUE]]...";
	static const struct option opts[] = { { "time", required_argument, NULL, 't' },
					      { "force", no_argument, NULL, 'f' },
					      { "all", no_argument, NULL, 'a' },
					      { "filter", required_argument, NULL, 'F' },
					      { NULL, 0, NULL, 0 } };

	optind = 2;
	opterr = 0;
	while ((c = getopt_long(argc, argv, rm ? "+fa" : "+t:a", opts, NULL)) != -1) {
		if (c == 't' && !rm) {
			if (parse_duration_us("-t", optarg, &timeout_us, &err) < 0) {
				error_print(&err, stderr);
				return 125;
			}
		} else if (c == 'f' && rm) {
			force = true;
		} else if (c == 'a') {
			all = true;
		} else if (c == 'F') {
			if ((rc = add_filter(&filter, optarg)) != 0)
				break;
		} else {
			rc = fail_msg("%s", usage);
			break;
		}
	}
	if (!rc && (all ? optind < argc : optind >= argc))
		rc = fail_msg("%s", usage);
	if (!rc && filter.n && !all)
		rc = fail_msg("--filter: only with --all (%s)", usage + 7);
	if (!rc && all)
		rc = all_services(&names, &filter);
	strv_free(&filter);
	if (rc) {
		strv_free(&names);
		return rc;
	}
	for (int i = optind; i < argc; i++)
		if (strv_push(&names, argv[i]) < 0) {
			strv_free(&names);
			return fail_msg("out of memory");
		}
	/* every service is told first, so that they stop in parallel */
	for (size_t i = 0; i < names.n && (!rm || force); i++) {
		_cleanup_close_ int root_fd = -1, dir_fd = -1;
		struct nsrun_error ignored = { 0 };
		char root[PATH_MAX];
		if (!service_name_valid(names.v[i]) || (root_fd = state_open_root(root, sizeof(root), &ignored)) < 0)
			continue;
		if ((dir_fd = openat(root_fd, names.v[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0)
			term_service(dir_fd);
	}
	for (size_t i = 0; i < names.n; i++) {
		_cleanup_close_ int root_fd = -1, dir_fd = -1;
		if (all) {
			/* one that went meanwhile (its own stop, --stop-with-parent) is not an error */
			struct nsrun_error ignored = { 0 };
			char root[PATH_MAX];
			if ((root_fd = state_open_root(root, sizeof(root), &ignored)) < 0 ||
			    (dir_fd = openat(root_fd, names.v[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
				continue;
		} else if ((dir_fd = open_service(names.v[i], &root_fd)) < 0) {
			rc = 125;
			continue;
		}
		if (rm && !force && state_is_alive(dir_fd)) {
			rc = fail_msg("\"%s\" is running: stop it first (nsrun stop NAME) or use nsrun rm -f", names.v[i]);
			continue;
		}
		if (stop_service(root_fd, dir_fd, names.v[i], timeout_us) != 0)
			rc = 125;
		else
			printf("%s\n", names.v[i]);
	}
	strv_free(&names);
	return rc;
}

int service_main(int argc, char **argv)
{
	if (strcmp(argv[1], "ps") == 0)
		return cmd_ps(argc, argv);
	if (strcmp(argv[1], "logs") == 0)
		return cmd_logs(argc, argv);
	return cmd_stop_rm(argc, argv);
}
