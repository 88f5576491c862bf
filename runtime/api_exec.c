/* api_exec.c - the exec endpoints of `nsrun api`: POST /containers/{id}/exec makes
 * an exec instance (kept in the server's memory, as Docker keeps them), POST
 * /exec/{id}/start runs it as `nsrun exec [-i] [-t] NAME -- CMD`: on an upgraded
 * connection its stdin from the client and its output in Docker's 8-byte frames
 * (raw through a host-side pty with Tty), without an upgrade its output as the
 * body, with Detach on its own; POST /exec/{id}/resize sizes its pty and GET
 * /exec/{id}/json says how it ended.  Docker Engine API v1.41, "Exec". */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
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
	bool tty;                       /* Tty: a pty, its output raw (no frames) */
	bool stdin_open;                /* AttachStdin: the connection's input is the command's stdin */
	bool detached;                  /* started with Detach: reaped by api_exec_reap */
	bool started, running;
	int exit_code;                  /* -1 until it ended */
	long long pid;
	int master;                     /* Tty: the pty's master while it runs (else -1), for resize */
	struct winsize ws;              /* the last resize, applied when it starts */
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
	{
		/* Docker's exec with Privileged has every capability: never here, said */
		yajl_val priv = api_get(v, "Privileged", yajl_t_any);
		if (priv && !YAJL_IS_NULL(priv) && !YAJL_IS_FALSE(priv)) {
			bool yes = YAJL_IS_TRUE(priv);
			yajl_tree_free(v);
			return yes ? api_error(conn, 403, "Privileged: refused by nsrun api: an exec never gets the "
					       "host's privileges")
				   : api_error(conn, 400, "exec: Privileged: expected a boolean");
		}
	}
	x = calloc(1, sizeof(*x));
	env = api_get(v, "Env", yajl_t_array);
	if (!x || !str_array(api_get(v, "Cmd", yajl_t_array), &x->cmd) || !str_array(env, &envs) || !x->cmd.n) {
		exec_free(x);
		strv_free(&envs);
		yajl_tree_free(v);
		return api_error(conn, 400, "exec: Cmd must be a non-empty array of strings, Env an array of strings");
	}
	x->master = -1;
	x->exit_code = -1;
	x->tty = YAJL_IS_TRUE(api_get(v, "Tty", yajl_t_true));
	x->stdin_open = YAJL_IS_TRUE(api_get(v, "AttachStdin", yajl_t_true));
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
	/* -t: nsrun exec makes a pty of the container's devpts and relays it to its
	 * stdio, which is ours (api's host-side pty); -i: its stdin is passed on */
	if ((x->stdin_open && strv_push(&x->argv, "-i") < 0) || (x->tty && strv_push(&x->argv, "-t") < 0))
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

/* The ends of a running instance's stdio on our side. */
struct exec_io {
	int in;                 /* its stdin (a pipe), or -1; with a TTY the master is it */
	int out, err;           /* its stdout and stderr (pipes); with a TTY, out is the master */
	int slave;              /* TTY: the pty's slave, the child's stdio */
	bool tty;
};

static void exec_io_close(struct exec_io *io)
{
	cleanup_closep(&io->in);
	cleanup_closep(&io->out);
	cleanup_closep(&io->err);
	cleanup_closep(&io->slave);
}

/* A host-side pty for a TTY instance: raw, so that only the container's pty (made
 * by nsrun exec -t) does line discipline, at size ws if one was asked for.
 * pty(7), posix_openpt(3).  Returns 0 or -1 (errno). */
static int exec_open_pty(struct exec_io *io, const struct winsize *ws)
{
	struct termios t;
	char name[64];

	if ((io->out = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0)
		return -1;
	if (grantpt(io->out) < 0 || unlockpt(io->out) < 0 || ptsname_r(io->out, name, sizeof(name)) != 0)
		return -1;
	if ((io->slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0)
		return -1;
	/* not raw, ISIG would let the client's ^\ or ^C signal our side: a failure ends it */
	if (tcgetattr(io->slave, &t) < 0)
		return -1;
	cfmakeraw(&t);
	if (tcsetattr(io->slave, TCSANOW, &t) < 0)
		return -1;
	if (ws->ws_row && ws->ws_col)
		ioctl(io->out, TIOCSWINSZ, ws);
	return 0;
}

/* Starts nsrun exec (argv) with its stdio from io (stdin from the connection when
 * with_stdin, else /dev/null).  The child leads a session whose controlling
 * terminal is the pty, so that a resize's SIGWINCH reaches it.  Returns the pid or
 * -1 (errno). */
static pid_t exec_spawn(char **argv, struct exec_io *io, bool with_stdin)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, err[2] = { -1, -1 };
	pid_t pid;

	if (!io->tty && ((with_stdin && pipe2(in, O_CLOEXEC) < 0) || pipe2(out, O_CLOEXEC) < 0 ||
			 pipe2(err, O_CLOEXEC) < 0))
		goto fail;
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		sigset_t none;

		/* the server's blocked and ignored signals are not nsrun exec's */
		signal(SIGPIPE, SIG_DFL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (null < 0 || setsid() < 0)
			_exit(125);
		if (io->tty) {
			if (ioctl(io->slave, TIOCSCTTY, 0) < 0 || dup2(with_stdin ? io->slave : null, 0) < 0 ||
			    dup2(io->slave, 1) < 0 || dup2(io->slave, 2) < 0)
				_exit(125);
		} else if (dup2(with_stdin ? in[0] : null, 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0) {
			_exit(125);
		}
		execv(argv[0], argv);
		_exit(125);
	}
	if (pid < 0)
		goto fail;
	if (!io->tty) {
		close(in[0]);
		close(out[1]);
		close(err[1]);
		io->in = in[1];
		io->out = out[0];
		io->err = err[0];
		if (io->in >= 0)
			fcntl(io->in, F_SETFL, O_NONBLOCK);
	} else {
		/* ours must go, or the master never says EIO when the command is gone */
		cleanup_closep(&io->slave);
		fcntl(io->out, F_SETFL, O_NONBLOCK);
	}
	return pid;
fail:
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (out[i] >= 0)
			close(out[i]);
		if (err[i] >= 0)
			close(err[i]);
	}
	return -1;
}

/* Relays between the upgraded connection sock and a running instance until its
 * output ends: the connection's bytes (first extra, those MHD read past the
 * headers) to its stdin, a half-close as its EOF (with a TTY, nothing: Docker's
 * way); its output back, raw with a TTY, else in Docker's frames.  A client that
 * goes away ends the command (SIGTERM to nsrun exec, which forwards it). */
static void exec_relay(int sock, pid_t pid, struct exec_io *io, bool with_stdin, const char *extra,
		       size_t extra_len)
{
	size_t cap = extra_len > EXEC_BLOCK ? extra_len : EXEC_BLOCK, in_len = 0;
	char *in = malloc(cap), buf[EXEC_BLOCK];
	bool sock_open = with_stdin, killed = false;

	if (!in) {
		kill(pid, SIGTERM);
		killed = true;
	} else if (with_stdin && extra_len) {
		memcpy(in, extra, extra_len);
		in_len = extra_len;
	}
	while (io->out >= 0 || io->err >= 0) {
		int to = io->tty ? io->out : io->in;   /* where stdin goes (-1: nowhere any more) */
		struct pollfd p[4] = {
			{ .fd = io->out, .events = POLLIN },
			{ .fd = io->err, .events = POLLIN },
			{ .fd = killed ? -1 : sock, .events = sock_open && !in_len ? POLLIN : 0 },
			{ .fd = in_len && !io->tty ? to : -1, .events = POLLOUT },
		};
		if (io->tty && in_len)
			p[0].events |= POLLOUT;
		if (poll(p, 4, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[2].revents & POLLIN) {
			ssize_t n = read(sock, in, cap);
			if (n > 0) {
				in_len = to >= 0 ? (size_t)n : 0; /* its stdin is closed: the bytes go nowhere */
			} else if (n == 0 || errno != EINTR) {
				/* the client's half-close: the command's EOF */
				sock_open = false;
				if (!io->tty)
					cleanup_closep(&io->in);
			}
		} else if (p[2].revents & (POLLHUP | POLLERR)) {
			kill(pid, SIGTERM);
			killed = true;
		}
		if (in_len && to >= 0 && ((p[0].revents | p[3].revents) & (POLLOUT | POLLERR | POLLHUP))) {
			ssize_t n = write(to, in, in_len);
			if (n > 0) {
				memmove(in, in + n, in_len - (size_t)n);
				in_len -= (size_t)n;
			} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
				in_len = 0; /* it closed its stdin: the rest goes nowhere */
			}
			if (!in_len && !sock_open && !io->tty)
				cleanup_closep(&io->in);
		}
		for (int i = 0; i < 2; i++) {
			int *fd = i ? &io->err : &io->out;
			ssize_t n;

			if (*fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			n = read(*fd, buf, sizeof(buf));
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0) {
				/* with a TTY, EIO: every slave is closed */
				cleanup_closep(fd);
			} else if (!killed && (io->tty ? write_all(sock, buf, (size_t)n)
						       : api_send_frame(sock, (unsigned char)(i + 1), buf, (size_t)n)) < 0) {
				kill(pid, SIGTERM);
				killed = true;
			}
		}
	}
	free(in);
}

/* Copies instance id's argv (NULL if it is gone or out of memory); the instance
 * may be replaced while it runs. */
static char **exec_argv(struct api_server *srv, const char *id, bool *tty, bool *with_stdin, struct winsize *ws)
{
	struct api_exec *x;
	char **argv = NULL;

	pthread_mutex_lock(&srv->lock);
	x = exec_find(srv, id);
	if (x && x->argv.n && (argv = calloc(x->argv.n + 1, sizeof(*argv)))) {
		for (size_t i = 0; i < x->argv.n; i++)
			if (!(argv[i] = strdup(x->argv.v[i])))
				break;
		*tty = x->tty;
		*with_stdin = x->stdin_open;
		*ws = x->ws;
	}
	pthread_mutex_unlock(&srv->lock);
	return argv;
}

static void argv_free(char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

/* Records that instance id runs as pid (master: its pty, for resize), or ended
 * with code (pid -1). */
static void exec_mark(struct api_server *srv, const char *id, pid_t pid, int master, int code)
{
	struct api_exec *x;

	pthread_mutex_lock(&srv->lock);
	if ((x = exec_find(srv, id))) {
		x->running = pid > 0;
		x->pid = pid > 0 ? pid : x->pid;
		x->master = master;
		/* a resize that came after the start read the size is not lost */
		if (master >= 0 && x->ws.ws_row && x->ws.ws_col)
			ioctl(master, TIOCSWINSZ, &x->ws);
		if (pid <= 0)
			x->exit_code = code;
	}
	pthread_mutex_unlock(&srv->lock);
}

static int wait_code(int status)
{
	return WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 125;
}

/* Keeps pid, a child no instance waits for any more, for api_exec_reap to reap
 * with WNOHANG (a request handler must not block on it).  Only if no memory is
 * left is it waited for here. */
static void exec_orphan(struct api_server *srv, pid_t pid)
{
	pid_t *v;

	pthread_mutex_lock(&srv->lock);
	v = realloc(srv->exec_orphans, (srv->n_exec_orphans + 1) * sizeof(*v));
	if (v) {
		srv->exec_orphans = v;
		v[srv->n_exec_orphans++] = pid;
	}
	pthread_mutex_unlock(&srv->lock);
	if (!v)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
}

/* The upgraded connection of a start: runs the instance, relays its stdio. */
static void exec_upgraded(void *cls, struct MHD_Connection *conn, void *con_cls, const char *extra_in,
			  size_t extra_in_size, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh)
{
	struct exec_run *r = cls;
	struct exec_io io = { .in = -1, .out = -1, .err = -1, .slave = -1 };
	struct winsize ws = { 0 };
	bool with_stdin = false;
	int status = 0, code = 125;
	char **argv;
	pid_t pid = -1;
	(void)conn, (void)con_cls;

	argv = exec_argv(r->srv, r->id, &io.tty, &with_stdin, &ws);
	if (!argv || (io.tty && exec_open_pty(&io, &ws) < 0) || (pid = exec_spawn(argv, &io, with_stdin)) < 0)
		goto done;
	exec_mark(r->srv, r->id, pid, io.tty ? io.out : -1, 0);
	exec_relay(sock, pid, &io, with_stdin, extra_in, extra_in_size);
	/* no resize may touch the master once it is closed */
	exec_mark(r->srv, r->id, pid, -1, 0);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	code = wait_code(status);
done:
	exec_io_close(&io);
	exec_mark(r->srv, r->id, -1, -1, code);
	argv_free(argv);
	free(r);
	MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
}

/* A start without a connection upgrade (dockerode's): the output in Docker's
 * frames as the response's body, stdin /dev/null. */
struct exec_plain {
	struct api_server *srv;
	int client; /* the connection's socket, watched for its end (the server's shutdown too) */
	char id[API_ID_LEN + 1];
	struct exec_io io;
	pid_t pid;
	bool reaped; /* its end is recorded already */
};

/* The output has ended: the command is ending.  Docker's stream ends with it, and a
 * client inspects the instance right after the body for its ExitCode (Testcontainers
 * does): so its end is waited for here (this connection's thread), a bounded while
 * (10 s, in steps of 50 ms); one that runs on with its output closed is left to
 * exec_plain_free and api_exec_reap. */
static void exec_plain_wait(struct exec_plain *e)
{
	int status = 0;
	pid_t w;

	for (int i = 0; i < 200; i++) {
		while ((w = waitpid(e->pid, &status, WNOHANG)) < 0 && errno == EINTR)
			;
		if (w == e->pid) {
			exec_mark(e->srv, e->id, -1, -1, wait_code(status));
			e->reaped = true;
			return;
		}
		if (w < 0)
			return;
		(void)poll(NULL, 0, 50);
	}
}

static ssize_t exec_plain_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct exec_plain *e = cls;
	(void)pos;

	if (max <= 8)
		return 0;
	while (e->io.out >= 0 || e->io.err >= 0) {
		struct pollfd p[3] = { { .fd = e->io.out, .events = POLLIN }, { .fd = e->io.err, .events = POLLIN },
				       { .fd = e->client, .events = 0 } };
		if (poll(p, 3, -1) < 0 && errno != EINTR)
			return MHD_CONTENT_READER_END_WITH_ERROR;
		/* the client closed its end (a half-close is not that), or the server
		 * shuts its connections down (SIGTERM): this thread must not wait for
		 * the command, which exec_plain_free ends */
		if (p[2].revents & (POLLHUP | POLLERR))
			return MHD_CONTENT_READER_END_WITH_ERROR;
		for (int i = 0; i < 2; i++) {
			int *fd = i ? &e->io.err : &e->io.out;
			ssize_t n;
			if (*fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			n = read(*fd, buf + 8, max - 8 < EXEC_BLOCK ? max - 8 : EXEC_BLOCK);
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0) {
				cleanup_closep(fd);
				continue;
			}
			api_frame_header((unsigned char *)buf, (unsigned char)(i + 1), (size_t)n);
			return n + 8;
		}
	}
	exec_plain_wait(e);
	return MHD_CONTENT_READER_END_OF_STREAM;
}

/* The response's end: the command is ended if the client left; its end is
 * recorded now if it came, else by api_exec_reap (a handler never blocks on it). */
static void exec_plain_free(void *cls)
{
	struct exec_plain *e = cls;
	struct api_exec *x;
	int status = 0;
	pid_t w;

	if (e->io.out >= 0 || e->io.err >= 0)
		kill(e->pid, SIGTERM);
	exec_io_close(&e->io);
	if (e->reaped) {
		free(e);
		return;
	}
	while ((w = waitpid(e->pid, &status, WNOHANG)) < 0 && errno == EINTR)
		;
	if (w == e->pid || w < 0) {
		exec_mark(e->srv, e->id, -1, -1, w == e->pid ? wait_code(status) : 125);
	} else {
		pthread_mutex_lock(&e->srv->lock);
		if ((x = exec_find(e->srv, e->id)))
			x->detached = true; /* api_exec_reap's from now on */
		pthread_mutex_unlock(&e->srv->lock);
		if (!x)
			exec_orphan(e->srv, e->pid);
	}
	free(e);
}

static enum MHD_Result exec_plain(struct api_server *srv, struct MHD_Connection *conn, const char *id)
{
	struct winsize ws = { 0 };
	bool tty = false, with_stdin = false;
	char **argv = exec_argv(srv, id, &tty, &with_stdin, &ws);
	struct exec_plain *e = calloc(1, sizeof(*e));

	if (!argv || !e) {
		argv_free(argv);
		free(e);
		exec_mark(srv, id, -1, -1, 125);
		return api_error(conn, 500, "out of memory");
	}
	e->srv = srv;
	{
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		e->client = ci ? ci->connect_fd : -1;
	}
	snprintf(e->id, sizeof(e->id), "%s", id);
	e->io = (struct exec_io){ .in = -1, .out = -1, .err = -1, .slave = -1 };
	/* no connection to read from or to be a terminal: -i and -t are dropped, only
	 * where api_exec_create put them (right after "exec"): the same words later are
	 * the values of -e, -w or -u, or the command's */
	{
		size_t i = 2, j = 2;
		while (argv[0] && argv[1] && argv[i] && (strcmp(argv[i], "-i") == 0 || strcmp(argv[i], "-t") == 0))
			free(argv[i++]);
		if (argv[0] && argv[1] && i > j)
			while ((argv[j++] = argv[i++]))
				;
	}
	e->pid = exec_spawn(argv, &e->io, false);
	argv_free(argv);
	if (e->pid < 0) {
		free(e);
		exec_mark(srv, id, -1, -1, 125);
		return api_error(conn, 500, "exec start: %s", strerror(errno));
	}
	exec_mark(srv, id, e->pid, -1, 0);
	return api_queue_stream(conn, "application/vnd.docker.multiplexed-stream", EXEC_BLOCK + 8, exec_plain_read, e,
				exec_plain_free, NULL, NULL);
}

/* Start with Detach: the instance runs on its own, its stdio /dev/null (as
 * Docker's); api_exec_reap records its end.  Returns 0 or -1 (errno). */
static int exec_detached(struct api_server *srv, const char *id)
{
	struct winsize ws = { 0 };
	bool tty = false, with_stdin = false;
	char **argv = exec_argv(srv, id, &tty, &with_stdin, &ws);
	struct api_exec *x;
	pid_t pid = -1;
	int e;

	if (argv && (pid = fork()) == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		sigset_t none;

		signal(SIGPIPE, SIG_DFL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (null < 0 || setsid() < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
			_exit(125);
		execv(argv[0], argv);
		_exit(125);
	}
	e = argv ? errno : ENOMEM;
	argv_free(argv);
	if (pid < 0) {
		exec_mark(srv, id, -1, -1, 125);
		errno = e;
		return -1;
	}
	pthread_mutex_lock(&srv->lock);
	if ((x = exec_find(srv, id))) {
		x->detached = true;
		x->running = true;
		x->pid = pid;
	}
	pthread_mutex_unlock(&srv->lock);
	if (!x) /* replaced already (all others run): api_exec_reap reaps it */
		exec_orphan(srv, pid);
	return 0;
}

void api_exec_reap(struct api_server *srv)
{
	pthread_mutex_lock(&srv->lock);
	for (size_t i = 0; i < srv->n_exec_orphans;) {
		pid_t w = waitpid(srv->exec_orphans[i], NULL, WNOHANG);
		if (w == 0 || (w < 0 && errno == EINTR))
			i++;
		else
			srv->exec_orphans[i] = srv->exec_orphans[--srv->n_exec_orphans];
	}
	for (size_t i = 0; i < EXEC_MAX; i++) {
		struct api_exec *x = srv->execs[i];
		int status;

		if (x && x->detached && x->running && waitpid((pid_t)x->pid, &status, WNOHANG) == (pid_t)x->pid) {
			x->running = false;
			x->exit_code = wait_code(status);
		}
	}
	pthread_mutex_unlock(&srv->lock);
}

/* POST /exec/{id}/resize?h=&w=: the pty's size (TIOCSWINSZ on its master, whose
 * SIGWINCH nsrun exec passes on to the container's pty); kept for a start to come. */
static enum MHD_Result exec_resize(struct api_server *srv, struct MHD_Connection *conn, const char *id)
{
	struct winsize ws = { 0 };
	struct api_exec *x;
	bool tty;

	if (!api_winsize(conn, &ws))
		return api_error(conn, 400, "resize: h and w must be numbers from 1 to 65535");
	pthread_mutex_lock(&srv->lock);
	x = exec_find(srv, id);
	tty = x && x->tty;
	if (tty) {
		x->ws = ws;
		if (x->master >= 0)
			ioctl(x->master, TIOCSWINSZ, &ws);
	}
	pthread_mutex_unlock(&srv->lock);
	if (!x)
		return api_error(conn, 404, "No such exec instance: %s", id);
	if (!tty)
		return api_error(conn, 400, "exec instance %s has no TTY to resize", id);
	return api_reply(conn, 200, "text/plain", "", 0);
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
	bool detach, tty;
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
		api_gen_kv_bool(g, "OpenStdin", x->stdin_open);
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
		api_gen_kv_bool(g, "tty", x->tty);
		api_gen_kv_bool(g, "privileged", false);
		api_gen_kv_str(g, "user", x->user);
		yajl_gen_map_close(g);
		yajl_gen_map_close(g);
		pthread_mutex_unlock(&srv->lock);
		return api_reply_gen(conn, 200, g);
	}
	if (strcmp(method, "POST") == 0 && strcmp(act, "resize") == 0)
		return exec_resize(srv, conn, id);
	if (strcmp(method, "POST") != 0 || strcmp(act, "start") != 0)
		return api_error(conn, 501, "%s /exec/{id}/%s is not supported by nsrun api", method, act);
	v = api_parse(body && len ? body : "{}", body && len ? len : 2, msg, sizeof(msg));
	if (!v)
		return api_error(conn, 400, "exec start: %s", msg);
	detach = YAJL_IS_TRUE(api_get(v, "Detach", yajl_t_true));
	yajl_tree_free(v);
	pthread_mutex_lock(&srv->lock);
	x = exec_find(srv, id);
	status = !x ? 404 : x->started ? 409 : 0;
	tty = x && x->tty;
	if (x)
		x->started = true;
	pthread_mutex_unlock(&srv->lock);
	if (status == 404)
		return api_error(conn, 404, "No such exec instance: %s", id);
	if (status)
		return api_error(conn, 409, "exec instance %s has been started already", id);
	if (!detach && !up)
		return exec_plain(srv, conn, id);
	if (detach) {
		if (exec_detached(srv, id) < 0)
			return api_error(conn, 500, "exec start: %s", strerror(errno));
		return api_reply(conn, 200, "application/json", "", 0);
	}
	if (!(r = calloc(1, sizeof(*r))))
		return api_error(conn, 500, "out of memory");
	r->srv = srv;
	snprintf(r->id, sizeof(r->id), "%s", id);
	return api_queue_upgrade(conn, exec_upgraded, r,
				 tty ? "application/vnd.docker.raw-stream" : "application/vnd.docker.multiplexed-stream");
}

void api_exec_free_all(struct api_server *srv)
{
	free(srv->exec_orphans);
	srv->exec_orphans = NULL;
	srv->n_exec_orphans = 0;
	for (size_t i = 0; i < EXEC_MAX; i++) {
		exec_free(srv->execs[i]);
		srv->execs[i] = NULL;
	}
}
