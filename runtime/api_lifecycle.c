/* api_lifecycle.c - the container endpoints that change a container or wait for
 * it: create, start, stop, kill, restart, wait, delete; and the routing of
 * /containers/... (logs and attach are api_stream.c's).  Start runs this nsrun
 * as `nsrun -d --name NAME OPTIONS`, so a container is exactly the service the
 * command line would make. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api_internal.h"
#include "cleanup.h"
#include "sys.h"

#define STOP_DEFAULT_S 10
#define KILL_WAIT_US (5ULL * 1000000)
#define POLL_MS 100
#define START_OUTPUT_MAX 4096

extern char **environ;

/* ---- create ---- */

static void command_of(yajl_val args, char *out, size_t len)
{
	size_t o = 0;
	bool cmd = false;

	out[0] = '\0';
	for (size_t i = 0; args && i < args->u.array.len && o + 1 < len; i++) {
		const char *s = YAJL_GET_STRING(args->u.array.values[i]);
		if (!s)
			continue;
		if (!cmd) {
			cmd = strcmp(s, "--") == 0;
			continue;
		}
		int n = snprintf(out + o, len - o, "%s%s", o ? " " : "", s);
		if (n < 0)
			break;
		o += (size_t)n;
	}
}

/* Makes NAME's directory in the "created" state holding config (text, len bytes).
 * Returns 0 or -1 with msg. */
static int make_created(int root_fd, const char *root, const char *name, const char *config, size_t len,
			char *msg, size_t msg_len)
{
	struct nsrun_error err = { 0 };
	_cleanup_close_ int lock_fd = -1, log_fd = -1, dir_fd = -1;
	struct service_state st = { 0 };
	char why[128];
	yajl_val doc;

	if ((dir_fd = state_create_dir(root_fd, name, &lock_fd, &log_fd, &err)) < 0) {
		snprintf(msg, msg_len, "%s%s%s", err.msg, err.errnum ? ": " : "", err.errnum ? strerror(err.errnum) : "");
		return -1;
	}
	doc = api_parse(config, len, why, sizeof(why));
	snprintf(st.name, sizeof(st.name), "%s", name);
	snprintf(st.status, sizeof(st.status), "created");
	snprintf(st.log, sizeof(st.log), "%s/%s/%s", root, name, LOG_FILE);
	snprintf(st.image, sizeof(st.image), "%s", api_get_str(doc, "image") ? api_get_str(doc, "image") : "");
	command_of(api_get(doc, "args", yajl_t_array), st.command, sizeof(st.command));
	st.created = api_get(doc, "created", yajl_t_number) ? YAJL_GET_INTEGER(api_get(doc, "created", yajl_t_number)) :
		     (long long)time(NULL);
	yajl_tree_free(doc);
	if (api_write_file_atomic(dir_fd, API_CONFIG_FILE, config, len) < 0 || state_write(dir_fd, &st) < 0) {
		snprintf(msg, msg_len, "write the state of \"%s\": %s", name, strerror(errno));
		state_remove_dir(root_fd, name);
		return -1;
	}
	return 0;
}

static enum MHD_Result create(struct api_server *srv, struct MHD_Connection *conn, struct api_request *req)
{
	const char *q = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "name");
	struct nsrun_error err = { 0 };
	char id[API_ID_LEN + 1], name[NAME_MAX_LEN + 1], root[PATH_MAX], msg[1024];
	_cleanup_close_ int root_fd = -1, fd = -1;
	_cleanup_free_ char *config = NULL;
	unsigned status = 500;
	size_t len = 0;
	yajl_gen g;

	api_random_id(id);
	if (q && q[0]) {
		if (q[0] == '/')
			q++;
		if (!service_name_valid(q))
			return api_error(conn, 400, "Invalid container name (%s), only [a-zA-Z0-9][a-zA-Z0-9_.-] are "
					 "allowed, at most %d characters", q, NAME_MAX_LEN);
		snprintf(name, sizeof(name), "%s", q);
	} else {
		snprintf(name, sizeof(name), "nsrun-%.12s", id);
	}
	pthread_mutex_lock(&srv->lock);
	if ((root_fd = state_open_root(root, sizeof(root), &err)) < 0) {
		pthread_mutex_unlock(&srv->lock);
		return api_error(conn, 500, "%s", err.msg);
	}
	if ((fd = openat(root_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
		pthread_mutex_unlock(&srv->lock);
		return api_error(conn, 409, "Conflict. The container name \"/%s\" is already in use (nsrun ps; nsrun rm %s)",
				 name, name);
	}
	config = api_create_config(srv, req->body ? req->body : "", req->len, name, id, &len, &status, msg, sizeof(msg));
	if (!config || make_created(root_fd, root, name, config, len, msg, sizeof(msg)) < 0) {
		pthread_mutex_unlock(&srv->lock);
		return api_error(conn, config ? 500 : status, "%s", msg);
	}
	pthread_mutex_unlock(&srv->lock);
	if (!(g = api_gen()))
		return api_error(conn, 500, "out of memory");
	yajl_gen_map_open(g);
	api_gen_kv_str(g, "Id", id);
	api_gen_str(g, "Warnings");
	yajl_gen_array_open(g);
	{
		/* what create found weaker than asked (api_create.c): the docker CLI prints it */
		char perr[128];
		yajl_val doc = api_parse(config, len, perr, sizeof(perr));
		const char *w = api_get_str(doc, "warning");
		if (w && w[0])
			api_gen_str(g, w);
		yajl_tree_free(doc);
	}
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	return api_reply_gen(conn, 201, g);
}

/* ---- start ---- */

/* Runs argv with stdout and stderr to a pipe, keeping the last bytes in out.
 * Returns the wait status, or -1 (errno). */
static int run_captured(char *const argv[], const int *keep, size_t n_keep, char *out, size_t out_len)
{
	int p[2], status = -1, rc;
	size_t o = 0;
	pid_t pid;
	char buf[1024];
	ssize_t n;

	out[0] = '\0';
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	rc = spawn_child_keep(&pid, argv[0], false, argv, NULL, (int[3]){ -1, p[1], p[1] }, keep, n_keep);
	close(p[1]);
	if (rc < 0) {
		close(p[0]);
		return -1;
	}
	while ((n = read(p[0], buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		/* keep the end: the error is the last line */
		if (o + (size_t)n >= out_len) {
			size_t drop = o + (size_t)n - out_len + 1;
			if (drop > o)
				drop = o;
			memmove(out, out + drop, o - drop);
			o -= drop;
		}
		size_t take = (size_t)n < out_len - 1 - o ? (size_t)n : out_len - 1 - o;
		memcpy(out + o, buf + (size_t)n - take, take);
		o += take;
		out[o] = '\0';
	}
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return status;
}

/* The message of a failed start: nsrun's last error line (not a hint, not the
 * header of the log's tail), without its prefix; else the last line. */
static const char *start_message(char *out)
{
	char *found = NULL, *last = out;

	for (char *line = out, *nl; line && *line; line = nl) {
		if ((nl = strchr(line, '\n')))
			*nl++ = '\0';
		last = line;
		if (strncmp(line, "nsrun: ", 7) == 0 && strncmp(line, "nsrun: hint", 11) != 0 &&
		    strncmp(line, "nsrun: the service's last", 25) != 0)
			found = line + 7;
	}
	return found ? found : last;
}

#define API_MAX_BINDS 64      /* binds of one container */
#define API_MAX_PINNED (API_MAX_BINDS + API_MAX_KEPT)  /* and its kept archives */

/* The host paths of a start's arguments, opened as create checked them. */
struct pinned {
	int fd[API_MAX_PINNED];
	char *arg[API_MAX_PINNED];      /* the argument that names fd[i] */
	size_t n;
};

static void pinned_free(struct pinned *p)
{
	for (size_t i = 0; i < p->n; i++) {
		close(p->fd[i]);
		free(p->arg[i]);
	}
	p->n = 0;
}

/* Each bind source (-v SRC:DST:MODE) of argv[0..n) opened again as create checked
 * it (api_source_open: no symlink on the way, under a volume root, ours), its
 * argument rewritten to /proc/self/fd/N:DST:MODE for nsrun -d, which then mounts
 * that very object; a seccomp profile path checked the same way.  Between create
 * and start a payload sharing a directory under a root could have swapped it for
 * a link to anywhere on the host.  A --network container:NAME must still name a
 * container of the API.  Called under srv->lock.  Returns 0, or Docker's status
 * with msg. */
static int pin_sources(const struct api_server *srv, char **argv, size_t n, struct pinned *p, char *msg,
		       size_t msg_len)
{
	for (size_t i = 1; i + 1 < n && strcmp(argv[i], "--"); i++) {
		bool vol = strcmp(argv[i], "-v") == 0;
		const char *v = argv[i + 1];
		char real[PATH_MAX];
		int fd;
		if (strcmp(argv[i], "--network") == 0 && strncmp(v, "container:", 10) == 0) {
			/* as create checked it: a container made through the API, which the
			 * name may no longer be (removed, and the caller's nsrun -d took it) */
			struct api_ctr t;
			unsigned status = 404;
			bool ours;
			i++;
			if (api_ctr_find(v + 10, &t, &status, msg, msg_len) < 0)
				return (int)status;
			ours = t.config != NULL;
			api_ctr_free(&t);
			if (!ours) {
				snprintf(msg, msg_len, "NetworkMode \"%s\": refused by nsrun api: %s is now a service of "
					 "nsrun -d, not a container made through the API", v, v + 10);
				return 403;
			}
			continue;
		}
		if (!vol && !(strcmp(argv[i], "--security-opt") == 0 && strncmp(v, "seccomp=/", 9) == 0))
			continue;
		i++;
		if (vol)
			snprintf(real, sizeof(real), "%.*s", (int)strcspn(v, ":"), v);
		else
			snprintf(real, sizeof(real), "%s", v + 8);
		if (p->n == API_MAX_PINNED) {
			snprintf(msg, msg_len, "more than %d binds", API_MAX_BINDS);
			return 400;
		}
		if ((fd = api_source_open(srv, vol ? "bind source" : "seccomp profile", real, msg, msg_len)) < 0)
			return 403;
		if (!vol) {
			/* the profile is read by path (its cache is keyed by it): checked, not passed */
			close(fd);
			continue;
		}
		p->fd[p->n] = fd;
		if (asprintf(&p->arg[p->n], "/proc/self/fd/%d%s", fd, v + strlen(real)) < 0) {
			p->arg[p->n] = NULL;
			close(fd);
			snprintf(msg, msg_len, "out of memory");
			return 500;
		}
		argv[i] = p->arg[p->n++];
	}
	return 0;
}

/* docker cp while c was created (api_archive_kept.c): its kept archives as
 * --copy-archive arguments at argv[*n], each through an fd in p, as the binds are;
 * *n_kept of them, opened as kept_fd and kept_path (API_MAX_KEPT; the paths to
 * free).  Returns 0, or 500 with msg. */
static int add_kept(int dir_fd, char **argv, size_t *n, struct pinned *p, int *kept_fd, char **kept_path,
		    size_t *n_kept, char *msg, size_t msg_len)
{
	*n_kept = api_kept_open(dir_fd, kept_fd, kept_path, API_MAX_KEPT);
	for (size_t i = 0; i < *n_kept; i++) {
		p->fd[p->n] = kept_fd[i];
		if (asprintf(&p->arg[p->n], "/proc/self/fd/%d:%s", kept_fd[i], kept_path[i]) < 0) {
			p->arg[p->n] = NULL;
			p->n++;
			for (size_t j = i + 1; j < *n_kept; j++)
				close(kept_fd[j]);
			*n_kept = 0;
			snprintf(msg, msg_len, "out of memory");
			return 500;
		}
		argv[(*n)++] = (char *)"--copy-archive";
		argv[(*n)++] = p->arg[p->n++];
	}
	return 0;
}

/* True for an option of a created container's args (api_create.c) that takes no
 * value; for one that only its running service uses: not for a look at its files. */
static bool arg_is_flag(const char *a)
{
	return strcmp(a, "-i") == 0 || strcmp(a, "-t") == 0 || strcmp(a, "--stdin-once") == 0 ||
	       strncmp(a, "--read-only=", 12) == 0;
}

static bool arg_service_only(const char *a)
{
	return strcmp(a, "-i") == 0 || strcmp(a, "-t") == 0 || strcmp(a, "--stdin-once") == 0 ||
	       strcmp(a, "-p") == 0 || strcmp(a, "--network") == 0 || strncmp(a, "--health-", 9) == 0 ||
	       strcmp(a, "--stop-timeout") == 0;
}

int api_peek_spawn(struct api_server *srv, const struct api_ctr *c, const char *op, const char *path,
		   const int stdio[3], pid_t *pid, char *msg, size_t msg_len)
{
	yajl_val args = api_get(c->config, "args", yajl_t_array);
	_cleanup_close_ int root_fd = -1, dir_fd = -1;
	_cleanup_free_ char **argv = NULL;
	struct pinned src __attribute__((cleanup(pinned_free))) = { 0 };
	char *kept_path[API_MAX_KEPT] = { NULL };
	int kept_fd[API_MAX_KEPT];
	size_t n = 0, n_kept = 0, i = 0;
	int rc;

	if (!args) {
		snprintf(msg, msg_len, "container %s was not made by nsrun api", c->name);
		return 409;
	}
	if ((dir_fd = api_open_dir(c->name, &root_fd)) < 0 ||
	    !(argv = calloc(args->u.array.len + 8 + 2 * API_MAX_KEPT, sizeof(*argv)))) {
		snprintf(msg, msg_len, "read the state of %s: %s", c->name, strerror(errno));
		return 500;
	}
	argv[n++] = srv->self_exe;
	argv[n++] = (char *)op;
	argv[n++] = (char *)path;
	/* as long as the copy makes progress: the API's --archive-timeout ends it else */
	argv[n++] = (char *)"--timeout";
	argv[n++] = (char *)"0";
	if ((rc = add_kept(dir_fd, argv, &n, &src, kept_fd, kept_path, &n_kept, msg, msg_len)) != 0)
		goto out;
	for (; i < args->u.array.len && strcmp(api_str(args->u.array.values[i]), "--") != 0; i++) {
		const char *a = api_str(args->u.array.values[i]);
		bool flag = arg_is_flag(a);
		if (!arg_service_only(a)) {
			argv[n++] = (char *)a;
			if (!flag && i + 1 < args->u.array.len)
				argv[n++] = (char *)api_str(args->u.array.values[i + 1]);
		}
		if (!flag)
			i++;
	}
	/* the command: never run (the copy is done instead), kept for the parse */
	for (; i < args->u.array.len; i++)
		argv[n++] = (char *)api_str(args->u.array.values[i]);
	pthread_mutex_lock(&srv->lock);
	rc = pin_sources(srv, argv, n, &src, msg, msg_len);
	pthread_mutex_unlock(&srv->lock);
	if (rc == 0 && spawn_child_keep(pid, srv->self_exe, false, argv, NULL, stdio, src.fd, src.n) < 0) {
		snprintf(msg, msg_len, "archive: run nsrun: %s", strerror(errno));
		rc = 500;
	}
out:
	for (size_t k = 0; k < n_kept; k++)
		free(kept_path[k]);
	return rc;
}

static int do_start(struct api_server *srv, struct api_ctr *c, char *msg, size_t msg_len)
{
	yajl_val args = api_get(c->config, "args", yajl_t_array);
	struct nsrun_error err = { 0 };
	char root[PATH_MAX], out[START_OUTPUT_MAX];
	_cleanup_close_ int root_fd = -1, dir_fd = -1;
	_cleanup_free_ char *config = NULL;
	_cleanup_free_ char **argv = NULL;
	struct pinned src __attribute__((cleanup(pinned_free))) = { 0 };
	size_t len = 0, n = 0, n_kept = 0;
	int status, rc;
	char *kept_path[API_MAX_KEPT] = { NULL };
	int kept_fd[API_MAX_KEPT];

	if (!args) {
		snprintf(msg, msg_len, "container %s was not made by nsrun api: start it with nsrun -d", c->name);
		return 409;
	}
	char connect_s[32] = "60s", reconnect_s[32] = "10s";
	bool ryuk = YAJL_IS_TRUE(api_get(c->config, "ryuk", yajl_t_true));
	if (ryuk) {
		/* its settings are its environment's, as the image's; the server's own
		 * environment gives the defaults (Testcontainers passes none of these) */
		const char *e;
		if ((e = getenv("RYUK_CONNECTION_TIMEOUT")) && e[0])
			snprintf(connect_s, sizeof(connect_s), "%s", e);
		if ((e = getenv("RYUK_RECONNECTION_TIMEOUT")) && e[0])
			snprintf(reconnect_s, sizeof(reconnect_s), "%s", e);
		yajl_val env = api_get(api_get(c->config, "config", yajl_t_object), "Env", yajl_t_array);
		for (size_t i = 0; env && i < env->u.array.len; i++) {
			const char *kv = api_str(env->u.array.values[i]);
			if (strncmp(kv, "RYUK_CONNECTION_TIMEOUT=", 24) == 0)
				snprintf(connect_s, sizeof(connect_s), "%s", kv + 24);
			else if (strncmp(kv, "RYUK_RECONNECTION_TIMEOUT=", 26) == 0)
				snprintf(reconnect_s, sizeof(reconnect_s), "%s", kv + 26);
		}
	}
	if ((root_fd = state_open_root(root, sizeof(root), &err)) < 0 ||
	    (dir_fd = openat(root_fd, c->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    !(config = api_read_small_file(dir_fd, API_CONFIG_FILE, &len)) ||
	    !(argv = calloc(args->u.array.len + 7 + 2 * API_MAX_KEPT, sizeof(*argv)))) {
		snprintf(msg, msg_len, "read the state of %s: %s", c->name, err.msg[0] ? err.msg : strerror(errno));
		return 500;
	}
	argv[n++] = srv->self_exe;
	if (ryuk) {
		argv[n++] = (char *)"api";
		argv[n++] = (char *)"ryuk";
		argv[n++] = c->name;
		argv[n++] = connect_s;
		argv[n++] = reconnect_s;
	} else {
		argv[n++] = (char *)"-d";
		argv[n++] = (char *)"--name";
		argv[n++] = c->name;
		if ((rc = add_kept(dir_fd, argv, &n, &src, kept_fd, kept_path, &n_kept, msg, msg_len)) != 0)
			goto out;
	}
	for (size_t i = 0; !ryuk && i < args->u.array.len; i++)
		if (YAJL_IS_STRING(args->u.array.values[i]))
			argv[n++] = YAJL_GET_STRING(args->u.array.values[i]);
	if (!ryuk && (rc = pin_sources(srv, argv, n, &src, msg, msg_len)) != 0)
		goto out;
	/* the service's directory is made again by nsrun -d; its config.json goes back in */
	close(dir_fd);
	dir_fd = -1;
	state_remove_dir(root_fd, c->name);
	status = run_captured(argv, src.fd, src.n, out, sizeof(out));
	if (status == 0 && (dir_fd = openat(root_fd, c->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0 &&
	    api_write_file_atomic(dir_fd, API_CONFIG_FILE, config, len) == 0) {
		rc = 204;
		goto out;
	}
	rc = 500;
	if (status == 0) {
		/* it runs but lost its config: stop it rather than leave a container the API cannot see */
		snprintf(msg, msg_len, "write the config of %s: %s", c->name, strerror(errno));
		goto out;
	}
	snprintf(msg, msg_len, "%.900s", status < 0 ? strerror(errno) : start_message(out));
	if (make_created(root_fd, root, c->name, config, len, out, sizeof(out)) < 0) {
		snprintf(msg + strlen(msg), msg_len - strlen(msg), " (and %.100s)", out);
	} else if (n_kept) {
		/* still created: what was copied into it stays for the next start */
		_cleanup_close_ int again = openat(root_fd, c->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (again >= 0)
			api_kept_restore(again, kept_fd, kept_path, n_kept);
	}
out:
	for (size_t i = 0; i < n_kept; i++)
		free(kept_path[i]);
	return rc;
}

/* ---- stop, kill ---- */

static int signal_number(const char *s)
{
	static const struct { const char *name; int sig; } sigs[] = {
		{ "KILL", SIGKILL }, { "TERM", SIGTERM }, { "INT", SIGINT }, { "HUP", SIGHUP }, { "QUIT", SIGQUIT },
		{ "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "STOP", SIGSTOP }, { "CONT", SIGCONT },
	};
	char *end;
	long n;

	if (!s || !s[0])
		return SIGKILL;
	n = strtol(s, &end, 10);
	if (!*end)
		return n > 0 && n < NSIG ? (int)n : -1;
	if (strncmp(s, "SIG", 3) == 0)
		s += 3;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (strcasecmp(s, sigs[i].name) == 0)
			return sigs[i].sig;
	return -1;
}

/* Ends c: SIGTERM (or sig) to its monitor, SIGKILL after timeout_us. */
static void end_container(const struct api_ctr *c, int sig, uint64_t timeout_us)
{
	if (!c->alive || c->st.pid <= 1)
		return;
	kill((pid_t)c->st.pid, sig);
	if (sig == SIGKILL || !api_wait_gone(c->name, timeout_us)) {
		kill((pid_t)c->st.pid, SIGKILL);
		api_wait_gone(c->name, KILL_WAIT_US);
	}
}

bool api_find(struct api_server *srv, struct MHD_Connection *conn, const char *ref, struct api_ctr *c,
		 enum MHD_Result *ret)
{
	char msg[512];
	unsigned status;
	int rc;

	pthread_mutex_lock(&srv->lock);
	rc = api_ctr_find(ref, c, &status, msg, sizeof(msg));
	pthread_mutex_unlock(&srv->lock);
	if (rc < 0)
		*ret = api_error(conn, status, "%s", msg);
	return rc == 0;
}

/* Reads c again (its state after a change; a killed monitor's is written then). */
static void refresh(struct api_server *srv, struct api_ctr *c)
{
	struct api_ctr again;
	unsigned status;
	char msg[256];

	pthread_mutex_lock(&srv->lock);
	if (api_ctr_find(c->id, &again, &status, msg, sizeof(msg)) == 0) {
		api_ctr_free(c);
		*c = again;
	}
	pthread_mutex_unlock(&srv->lock);
}

static uint64_t stop_timeout_us(struct MHD_Connection *conn)
{
	const char *t = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "t");
	char *end;
	long s = t ? strtol(t, &end, 10) : STOP_DEFAULT_S;

	if (!t || *end || s < 0 || s > 24 * 3600)
		s = STOP_DEFAULT_S;
	return (uint64_t)s * 1000000;
}

/* ---- wait ---- */

bool api_client_gone(struct MHD_Connection *conn, int timeout_ms)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct pollfd p = { .fd = ci ? ci->connect_fd : -1, .events = POLLRDHUP };

	if (p.fd < 0) {
		usleep((useconds_t)timeout_ms * 1000);
		return false;
	}
	return poll(&p, 1, timeout_ms) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

struct wait_state {
	struct api_server *srv;
	struct MHD_Connection *conn;
	char id[API_ID_LEN + 1];
	bool removed, not_running;
	char body[160];
	size_t len, off;
	bool done;
};

/* Until c's condition holds: the exit code (0 for "not-running" of a created one),
 * -1 when it went without one, -2 when the client went away. */
static long long wait_condition(struct wait_state *w)
{
	long long code = -1;
	struct api_ctr c;
	unsigned status;
	char msg[256];

	for (;;) {
		pthread_mutex_lock(&w->srv->lock);
		int rc = api_ctr_find(w->id, &c, &status, msg, sizeof(msg));
		pthread_mutex_unlock(&w->srv->lock);
		if (rc < 0)
			return code; /* removed: the code seen last, if any */
		bool created = strcmp(c.st.status, "created") == 0;
		if (!c.alive && !created)
			code = c.st.exit_code;
		api_ctr_free(&c);
		if (code >= 0 && !w->removed)
			return code;
		if (!c.alive && created && w->not_running)
			return 0;
		if (api_client_gone(w->conn, POLL_MS))
			return -2;
	}
}

/* MHD's content reader: the headers are out already (a client waits for them
 * before it starts the container); the body when the condition holds. */
static ssize_t wait_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct wait_state *w = cls;
	size_t n;
	(void)pos;

	if (!w->done) {
		long long code = wait_condition(w);
		if (code == -2)
			return MHD_CONTENT_READER_END_WITH_ERROR;
		if (code >= 0)
			w->len = (size_t)snprintf(w->body, sizeof(w->body), "{\"StatusCode\":%lld,\"Error\":null}\n", code);
		else
			w->len = (size_t)snprintf(w->body, sizeof(w->body),
						  "{\"StatusCode\":-1,\"Error\":{\"Message\":\"the container is gone\"}}\n");
		w->done = true;
	}
	if (w->off >= w->len)
		return MHD_CONTENT_READER_END_OF_STREAM;
	n = w->len - w->off < max ? w->len - w->off : max;
	memcpy(buf, w->body + w->off, n);
	w->off += n;
	return (ssize_t)n;
}

static enum MHD_Result wait_for(struct api_server *srv, struct MHD_Connection *conn, const char *ref)
{
	const char *cond = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "condition");
	struct MHD_Response *r;
	struct wait_state *w;
	enum MHD_Result ret;
	struct api_ctr c;

	if (cond && cond[0] && strcmp(cond, "removed") && strcmp(cond, "not-running") && strcmp(cond, "next-exit"))
		return api_error(conn, 400, "invalid condition: \"%s\" (not-running, next-exit or removed)", cond);
	if (!api_find(srv, conn, ref, &c, &ret))
		return ret;
	if (!(w = calloc(1, sizeof(*w)))) {
		api_ctr_free(&c);
		return api_error(conn, 500, "out of memory");
	}
	w->srv = srv;
	w->conn = conn;
	w->removed = cond && strcmp(cond, "removed") == 0;
	w->not_running = !cond || !cond[0] || strcmp(cond, "not-running") == 0;
	snprintf(w->id, sizeof(w->id), "%s", c.id);
	api_ctr_free(&c);
	if (!(r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, sizeof(w->body), wait_read, w, free))) {
		free(w);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	MHD_add_response_header(r, "Api-Version", API_VERSION);
	ret = MHD_queue_response(conn, 200, r);
	MHD_destroy_response(r);
	return ret;
}

/* ---- routing ---- */

static enum MHD_Result action(struct api_server *srv, struct MHD_Connection *conn, const char *method,
			      const char *ref, const char *act)
{
	bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0, post = strcmp(method, "POST") == 0;
	char msg[1024];
	enum MHD_Result ret;
	struct api_ctr c;
	unsigned status;

	if (get && strcmp(act, "json") == 0) {
		yajl_gen g;
		if (!api_find(srv, conn, ref, &c, &ret))
			return ret;
		if ((g = api_gen()))
			api_gen_inspect(g, &c);
		api_ctr_free(&c);
		return api_reply_gen(conn, 200, g);
	}
	if (get && strcmp(act, "logs") == 0)
		return api_logs(srv, conn, ref);
	if (post && strcmp(act, "wait") == 0)
		return wait_for(srv, conn, ref);
	if (post && strcmp(act, "attach") == 0)
		return api_attach(srv, conn, ref);
	if (post && strcmp(act, "resize") == 0)
		return api_resize(srv, conn, ref);
	if (post && (strcmp(act, "start") == 0 || strcmp(act, "restart") == 0)) {
		if (!api_find(srv, conn, ref, &c, &ret))
			return ret;
		if (c.alive && act[0] == 'r') {
			end_container(&c, SIGTERM, stop_timeout_us(conn));
			refresh(srv, &c);
		}
		pthread_mutex_lock(&srv->lock);
		/* under the lock: another start of the same container waits, then sees it run */
		api_ctr_free(&c);
		if (api_ctr_find(ref, &c, &status, msg, sizeof(msg)) < 0) {
			pthread_mutex_unlock(&srv->lock);
			return api_error(conn, status, "%s", msg);
		}
		status = c.alive ? 304 : (unsigned)do_start(srv, &c, msg, sizeof(msg));
		pthread_mutex_unlock(&srv->lock);
		api_ctr_free(&c);
		return status < 300 || status == 304 ? api_reply(conn, status, NULL, "", 0) :
		       api_error(conn, status, "%s", msg);
	}
	if (post && (strcmp(act, "stop") == 0 || strcmp(act, "kill") == 0)) {
		bool stop = act[0] == 's';
		int sig = stop ? SIGTERM : signal_number(MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "signal"));
		if (sig < 0)
			return api_error(conn, 400, "invalid signal: %s",
					 MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "signal"));
		if (!api_find(srv, conn, ref, &c, &ret))
			return ret;
		if (!c.alive) {
			api_ctr_free(&c);
			return stop ? api_reply(conn, 304, NULL, "", 0) :
			       api_error(conn, 409, "Container %s is not running", ref);
		}
		if (stop || sig == SIGKILL)
			end_container(&c, sig, stop_timeout_us(conn));
		else
			kill((pid_t)c.st.pid, sig);
		refresh(srv, &c);
		api_ctr_free(&c);
		return api_reply(conn, 204, NULL, "", 0);
	}
	return api_error(conn, 501, "%s /containers/{id}/%s is not supported by nsrun api", method, act);
}

static enum MHD_Result remove_container(struct api_server *srv, struct MHD_Connection *conn, const char *ref)
{
	bool force = api_arg_true(conn, "force");
	_cleanup_close_ int root_fd = -1, fd = -1;
	enum MHD_Result ret;
	struct api_ctr c;

	if (!api_find(srv, conn, ref, &c, &ret))
		return ret;
	if (c.alive && !force) {
		ret = api_error(conn, 409, "You cannot remove a running container %s. Stop the container before "
				"attempting removal or force remove", c.id);
		api_ctr_free(&c);
		return ret;
	}
	end_container(&c, SIGKILL, 0);
	pthread_mutex_lock(&srv->lock);
	fd = api_open_dir(c.name, &root_fd);
	if (fd >= 0 && !state_is_alive(fd))
		state_remove_dead(root_fd, c.name, fd);
	pthread_mutex_unlock(&srv->lock);
	api_ctr_free(&c);
	return api_reply(conn, 204, NULL, "", 0);
}

enum MHD_Result api_containers(struct api_server *srv, struct MHD_Connection *conn, const char *method,
			       const char *path, struct api_request *req)
{
	const char *rest = path + strlen("/containers/");
	char ref[256];
	const char *slash;
	size_t n;

	if (strcmp(rest, "create") == 0)
		return strcmp(method, "POST") == 0 ? create(srv, conn, req) :
		       api_error(conn, 405, "use POST /containers/create");
	if (strcmp(rest, "json") == 0)
		return api_list(srv, conn);
	slash = strchr(rest, '/');
	n = slash ? (size_t)(slash - rest) : strlen(rest);
	if (n == 0 || n >= sizeof(ref))
		return api_error(conn, 404, "No such container: %.*s", (int)(n < 200 ? n : 200), rest);
	memcpy(ref, rest, n);
	ref[n] = '\0';
	if (!slash)
		return strcmp(method, "DELETE") == 0 ? remove_container(srv, conn, ref) :
		       api_error(conn, 405, "%s /containers/{id} is not supported (DELETE is)", method);
	if (strcmp(slash + 1, "exec") == 0)
		return strcmp(method, "POST") == 0 ? api_exec_create(srv, conn, ref, req->body, req->len) :
		       api_error(conn, 405, "use POST /containers/{id}/exec");
	if (strcmp(slash + 1, "archive") == 0)
		return api_archive(srv, conn, method, ref, req);
	return action(srv, conn, method, ref, slash + 1);
}
