/* api_exec.c - the exec endpoints of `nsrun api`: POST /containers/{id}/exec makes
 * an exec instance (kept in the server's memory, as Docker keeps them), POST
 * /exec/{id}/start runs it as `nsrun exec NAME -- CMD` on the upgraded connection,
 * its output in Docker's 8-byte frames, and GET /exec/{id}/json says how it ended.
 * Docker Engine API v1.41, "Exec". */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api_internal.h"
#include "cleanup.h"
#include "sys.h"

#define EXEC_MAX API_EXEC_MAX
#define EXEC_BLOCK 65536

/* One exec instance. */
struct api_exec {
	char id[API_ID_LEN + 1];
	char ctr_id[API_ID_LEN + 1];
	char name[NAME_MAX_LEN + 1];    /* the service it runs in */
	struct strv argv;               /* nsrun exec's whole command line */
	struct strv cmd;                /* CMD [ARG...], for inspect */
	char user[64];
	bool started, running;
	int exit_code;                  /* -1 until it ended */
	long long pid;
};

/* srv's instance id, or NULL (under srv->lock). */
static struct api_exec *exec_find(struct api_server *srv, const char *id)
{
	for (size_t i = 0; i < EXEC_MAX; i++)
		if (srv->execs[i] && strcmp(srv->execs[i]->id, id) == 0)
			return srv->execs[i];
	return NULL;
}

static void exec_free(struct api_exec *x)
{
	if (!x)
		return;
	strv_free(&x->argv);
	strv_free(&x->cmd);
	free(x);
}

/* Keeps x in srv: in a free slot, else in place of one not running (under
 * srv->lock).  Returns 0 or -1 (all run). */
static int exec_keep(struct api_server *srv, struct api_exec *x)
{
	struct api_exec **e = srv->execs;

	for (size_t i = 0; i < EXEC_MAX; i++)
		if (!e[i]) {
			e[i] = x;
			return 0;
		}
	for (size_t i = 0; i < EXEC_MAX; i++)
		if (!e[i]->running) {
			exec_free(e[i]);
			e[i] = x;
			return 0;
		}
	return -1;
}

/* The strings of a JSON array into sv; false if it holds anything else. */
static bool str_array(yajl_val a, struct strv *sv)
{
	if (!a)
		return true;
	if (!YAJL_IS_ARRAY(a))
		return false;
	for (size_t i = 0; i < a->u.array.len; i++) {
		const char *s = api_str(a->u.array.values[i]);
		if (!s || strv_push(sv, s) < 0)
			return false;
	}
	return true;
}

enum MHD_Result api_exec_create(struct api_server *srv, struct MHD_Connection *conn, const char *ref,
				const char *body, size_t len)
{
	char msg[256];
	struct api_ctr c;
	struct api_exec *x;
	enum MHD_Result ret;
	yajl_val v, env;
	const char *wd, *user;
	struct strv envs = { 0 };
	yajl_gen g;

	v = api_parse(body ? body : "", len, msg, sizeof(msg));
	if (!v)
		return api_error(conn, 400, "exec: %s", msg);
	if (YAJL_IS_TRUE(api_get(v, "Tty", yajl_t_true)) || YAJL_IS_TRUE(api_get(v, "AttachStdin", yajl_t_true))) {
		yajl_tree_free(v);
		return api_error(conn, 501, "exec with a TTY or stdin is not supported by nsrun api yet (nsrun exec -it "
				 "NAME -- CMD does it from a terminal)");
	}
	x = calloc(1, sizeof(*x));
	env = api_get(v, "Env", yajl_t_array);
	if (!x || !str_array(api_get(v, "Cmd", yajl_t_array), &x->cmd) || !str_array(env, &envs) || !x->cmd.n) {
		exec_free(x);
		strv_free(&envs);
		yajl_tree_free(v);
		return api_error(conn, 400, "exec: Cmd must be a non-empty array of strings, Env an array of strings");
	}
	wd = api_get_str(v, "WorkingDir");
	user = api_get_str(v, "User");
	snprintf(x->user, sizeof(x->user), "%s", user ? user : "");
	if (!api_find(srv, conn, ref, &c, &ret)) {
		exec_free(x);
		strv_free(&envs);
		yajl_tree_free(v);
		return ret;
	}
	if (!c.alive) {
		ret = api_error(conn, 409, "Container %s is not running", c.id);
		goto out;
	}
	snprintf(x->name, sizeof(x->name), "%s", c.name);
	snprintf(x->ctr_id, sizeof(x->ctr_id), "%s", c.id);
	api_random_id(x->id);
	/* nsrun exec checks each option as its command line would */
	if (strv_push(&x->argv, srv->self_exe) < 0 || strv_push(&x->argv, "exec") < 0)
		goto oom;
	for (size_t i = 0; i < envs.n; i++)
		if (strchr(envs.v[i], '=') && (strv_push(&x->argv, "-e") < 0 || strv_push(&x->argv, envs.v[i]) < 0))
			goto oom;
	if (wd && wd[0] && (strv_push(&x->argv, "-w") < 0 || strv_push(&x->argv, wd) < 0))
		goto oom;
	if (user && user[0] && (strv_push(&x->argv, "-u") < 0 || strv_push(&x->argv, user) < 0))
		goto oom;
	if (strv_push(&x->argv, x->name) < 0 || strv_push(&x->argv, "--") < 0)
		goto oom;
	for (size_t i = 0; i < x->cmd.n; i++)
		if (strv_push(&x->argv, x->cmd.v[i]) < 0)
			goto oom;
	pthread_mutex_lock(&srv->lock);
	int kept = exec_keep(srv, x);
	pthread_mutex_unlock(&srv->lock);
	if (kept < 0) {
		ret = api_error(conn, 503, "exec: %d exec instances are running already", EXEC_MAX);
		goto out;
	}
	g = api_gen();
	yajl_gen_map_open(g);
	api_gen_kv_str(g, "Id", x->id);
	yajl_gen_map_close(g);
	x = NULL;
	ret = api_reply_gen(conn, 201, g);
	goto out;
oom:
	ret = api_error(conn, 500, "out of memory");
out:
	exec_free(x);
	strv_free(&envs);
	api_ctr_free(&c);
	yajl_tree_free(v);
	return ret;
}

struct exec_run {
	struct api_server *srv;
	char id[API_ID_LEN + 1];
};

/* The upgraded connection: nsrun exec's stdout and stderr as frames until both end;
 * a client that goes away ends the command (SIGTERM to nsrun exec, which forwards it). */
static void exec_upgraded(void *cls, struct MHD_Connection *conn, void *con_cls, const char *extra_in,
			  size_t extra_in_size, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh)
{
	struct exec_run *r = cls;
	struct api_server *srv = r->srv;
	struct api_exec *x;
	int out[2] = { -1, -1 }, err[2] = { -1, -1 }, status = 0, code = 125;
	char **argv = NULL, buf[EXEC_BLOCK];
	pid_t pid = -1;
	bool killed = false;
	(void)conn, (void)con_cls, (void)extra_in, (void)extra_in_size;

	pthread_mutex_lock(&srv->lock);
	x = exec_find(srv, r->id);
	if (x && x->argv.n) {
		/* a copy: the instance may be replaced while this runs */
		argv = calloc(x->argv.n + 1, sizeof(*argv));
		for (size_t i = 0; argv && i < x->argv.n; i++)
			if (!(argv[i] = strdup(x->argv.v[i])))
				break;
	}
	pthread_mutex_unlock(&srv->lock);
	if (!argv || pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)
		goto done;
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		sigset_t none;

		/* the server's blocked and ignored signals are not nsrun exec's */
		signal(SIGPIPE, SIG_DFL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (null < 0 || dup2(null, 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0)
			_exit(125);
		execv(argv[0], argv);
		_exit(125);
	}
	close(out[1]);
	close(err[1]);
	out[1] = err[1] = -1;
	if (pid < 0)
		goto done;
	pthread_mutex_lock(&srv->lock);
	if ((x = exec_find(srv, r->id))) {
		x->running = true;
		x->pid = pid;
	}
	pthread_mutex_unlock(&srv->lock);
	while (out[0] >= 0 || err[0] >= 0) {
		struct pollfd p[3] = { { .fd = out[0], .events = POLLIN }, { .fd = err[0], .events = POLLIN },
				       { .fd = killed ? -1 : sock, .events = 0 } };
		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[2].revents & (POLLHUP | POLLERR)) {
			kill(pid, SIGTERM);
			killed = true;
		}
		for (int i = 0; i < 2; i++) {
			int *fd = i ? &err[0] : &out[0];
			ssize_t n;

			if (*fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			n = read(*fd, buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				close(*fd);
				*fd = -1;
			} else if (!killed && api_send_frame(sock, (unsigned char)(i + 1), buf, (size_t)n) < 0) {
				kill(pid, SIGTERM);
				killed = true;
			}
		}
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 125;
done:
	for (int i = 0; i < 2; i++) {
		if (out[i] >= 0)
			close(out[i]);
		if (err[i] >= 0)
			close(err[i]);
	}
	pthread_mutex_lock(&srv->lock);
	if ((x = exec_find(srv, r->id))) {
		x->running = false;
		x->exit_code = code;
	}
	pthread_mutex_unlock(&srv->lock);
	for (size_t i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
	free(r);
	MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
}

enum MHD_Result api_exec(struct api_server *srv, struct MHD_Connection *conn, const char *method, const char *path,
			 const char *body, size_t len)
{
	const char *up = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_UPGRADE);
	char id[API_ID_LEN + 1], act[16] = "", msg[256];
	struct api_exec *x;
	unsigned status;
	struct exec_run *r;
	const char *slash = strchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : strlen(path);
	yajl_val v;
	bool detach;
	yajl_gen g;

	if (n == 0 || n > API_ID_LEN)
		return api_error(conn, 404, "No such exec instance: %.*s", (int)n, path);
	snprintf(id, sizeof(id), "%.*s", (int)n, path);
	if (slash)
		snprintf(act, sizeof(act), "%s", slash + 1);
	if (strcmp(method, "GET") == 0 && strcmp(act, "json") == 0) {
		pthread_mutex_lock(&srv->lock);
		x = exec_find(srv, id);
		if (!x) {
			pthread_mutex_unlock(&srv->lock);
			return api_error(conn, 404, "No such exec instance: %s", id);
		}
		g = api_gen();
		yajl_gen_map_open(g);
		api_gen_kv_str(g, "ID", x->id);
		api_gen_kv_str(g, "ContainerID", x->ctr_id);
		api_gen_kv_bool(g, "Running", x->running);
		if (x->exit_code >= 0)
			api_gen_kv_int(g, "ExitCode", x->exit_code);
		else {
			api_gen_str(g, "ExitCode");
			yajl_gen_null(g);
		}
		api_gen_kv_bool(g, "OpenStdin", false);
		api_gen_kv_bool(g, "OpenStdout", true);
		api_gen_kv_bool(g, "OpenStderr", true);
		api_gen_kv_int(g, "Pid", x->running ? x->pid : 0);
		api_gen_str(g, "ProcessConfig");
		yajl_gen_map_open(g);
		api_gen_kv_str(g, "entrypoint", x->cmd.v[0]);
		api_gen_str(g, "arguments");
		yajl_gen_array_open(g);
		for (size_t i = 1; i < x->cmd.n; i++)
			api_gen_str(g, x->cmd.v[i]);
		yajl_gen_array_close(g);
		api_gen_kv_bool(g, "tty", false);
		api_gen_kv_bool(g, "privileged", false);
		api_gen_kv_str(g, "user", x->user);
		yajl_gen_map_close(g);
		yajl_gen_map_close(g);
		pthread_mutex_unlock(&srv->lock);
		return api_reply_gen(conn, 200, g);
	}
	if (strcmp(method, "POST") != 0 || strcmp(act, "start") != 0)
		return api_error(conn, 501, "%s /exec/{id}/%s is not supported by nsrun api", method, act);
	v = api_parse(body && len ? body : "{}", body && len ? len : 2, msg, sizeof(msg));
	if (!v)
		return api_error(conn, 400, "exec start: %s", msg);
	detach = YAJL_IS_TRUE(api_get(v, "Detach", yajl_t_true));
	if (YAJL_IS_TRUE(api_get(v, "Tty", yajl_t_true))) {
		yajl_tree_free(v);
		return api_error(conn, 501, "exec with a TTY is not supported by nsrun api yet");
	}
	yajl_tree_free(v);
	if (detach || !up)
		return api_error(conn, 501, "exec start %s is not supported by nsrun api yet: it streams the output on an "
				 "upgraded connection", detach ? "with Detach" : "without a connection upgrade");
	pthread_mutex_lock(&srv->lock);
	x = exec_find(srv, id);
	status = !x ? 404 : x->started ? 409 : 0;
	if (x)
		x->started = true;
	pthread_mutex_unlock(&srv->lock);
	if (status == 404)
		return api_error(conn, 404, "No such exec instance: %s", id);
	if (status)
		return api_error(conn, 409, "exec instance %s has been started already", id);
	if (!(r = calloc(1, sizeof(*r))))
		return api_error(conn, 500, "out of memory");
	r->srv = srv;
	snprintf(r->id, sizeof(r->id), "%s", id);
	return api_queue_upgrade(conn, exec_upgraded, r, "application/vnd.docker.multiplexed-stream");
}

void api_exec_free_all(struct api_server *srv)
{
	for (size_t i = 0; i < EXEC_MAX; i++) {
		exec_free(srv->execs[i]);
		srv->execs[i] = NULL;
	}
}
