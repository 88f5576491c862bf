/* api.c - `nsrun api`: the socket, the HTTP server (libmicrohttpd), the routing of
 * requests, the endpoints about the engine (/_ping, /version, /info, /images,
 * /networks) and the idle timeout.  See api.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "api_internal.h"
#include "cleanup.h"
#include "image.h"
#include "image_store.h"
#include "sys.h"

#ifndef NSRUN_VERSION
#define NSRUN_VERSION "0.0.0-dev"
#endif

#define DEFAULT_IDLE_TIMEOUT_S 600

static const char api_usage[] =
	"Usage: nsrun api [--socket PATH] [--idle-timeout SECONDS] [--volume-root DIR]...\n"
	"                 [--archive-timeout SECONDS]\n"
	"\n"
	"Serves the Docker Engine API (v" API_VERSION ") on a unix socket of your own (mode 0600), so\n"
	"docker-py and the docker CLI start nsrun containers: DOCKER_HOST=unix://PATH.\n"
	"Containers are nsrun services: nsrun ps, logs, stop and rm see them too.\n"
	"\n"
	"  --socket PATH          default $XDG_RUNTIME_DIR/nsrun/docker.sock (else in the\n"
	"                         services' state directory)\n"
	"  --idle-timeout SECONDS exit when nothing was asked for this long and no container\n"
	"                         runs (default 600; 0: never)\n"
	"  --volume-root DIR      binds may use only the caller's own files under DIR\n"
	"                         (repeatable; default /tmp and the current directory)\n"
	"  --archive-timeout SECONDS  end a docker cp that makes no progress for this long\n"
	"                         (default 60; the payload can stop it)\n"
	"Socket activation: with LISTEN_FDS (systemd), the socket is fd 3.\n"
	"\n"
	"Refused: Privileged, devices, host namespaces, seccomp=unconfined, binds outside\n"
	"the volume roots, and CapAdd of a capability beyond Docker's default set (a root\n"
	"payload has that set already, inside its user namespace only: CapAdd within it\n"
	"changes nothing, CapDrop takes some away).  docs/docker-api.md says what differs.\n";

/* ---- the engine ---- */

static enum MHD_Result ping(struct MHD_Connection *c)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(2, (void *)"OK", MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	MHD_add_response_header(r, "Api-Version", API_VERSION);
	MHD_add_response_header(r, "Docker-Experimental", "false");
	MHD_add_response_header(r, "Ostype", "linux");
	MHD_add_response_header(r, "Cache-Control", "no-cache, no-store, must-revalidate");
	ret = MHD_queue_response(c, 200, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result version(struct MHD_Connection *c)
{
	struct utsname u;
	yajl_gen g = api_gen();

	if (uname(&u) < 0)
		memset(&u, 0, sizeof(u));
	if (g) {
		yajl_gen_map_open(g);
		api_gen_kv_str(g, "Version", NSRUN_VERSION);
		api_gen_kv_str(g, "ApiVersion", API_VERSION);
		api_gen_kv_str(g, "MinAPIVersion", API_MIN_VERSION);
		api_gen_kv_str(g, "Os", "linux");
		api_gen_kv_str(g, "Arch", "amd64");
		api_gen_kv_str(g, "KernelVersion", u.release);
		api_gen_kv_str(g, "GitCommit", "nsrun");
		api_gen_kv_str(g, "GoVersion", "none");
		api_gen_str(g, "Components");
		yajl_gen_array_open(g);
		yajl_gen_map_open(g);
		api_gen_kv_str(g, "Name", "nsrun");
		api_gen_kv_str(g, "Version", NSRUN_VERSION);
		yajl_gen_map_close(g);
		yajl_gen_array_close(g);
		yajl_gen_map_close(g);
	}
	return api_reply_gen(c, 200, g);
}

static void count_image(const char *entry, void *arg)
{
	(void)entry;
	(*(size_t *)arg)++;
}

static enum MHD_Result info(struct api_server *srv, struct MHD_Connection *c)
{
	struct api_ctr *v = NULL;
	size_t n = 0, running = 0, created = 0;
	char msg[256];
	size_t images = 0;
	struct nsrun_error ierr = { 0 };
	struct utsname u;
	yajl_gen g;

	pthread_mutex_lock(&srv->lock);
	api_ctrs_load(&v, &n, msg, sizeof(msg));
	pthread_mutex_unlock(&srv->lock);
	for (size_t i = 0; i < n; i++) {
		running += v[i].alive;
		created += !v[i].alive && strcmp(v[i].st.status, "created") == 0;
	}
	api_ctrs_free(v, n);
	if (uname(&u) < 0)
		memset(&u, 0, sizeof(u));
	if (!(g = api_gen()))
		return api_error(c, 500, "out of memory");
	yajl_gen_map_open(g);
	api_gen_kv_str(g, "ID", "nsrun");
	api_gen_kv_int(g, "Containers", (long long)n);
	api_gen_kv_int(g, "ContainersRunning", (long long)running);
	api_gen_kv_int(g, "ContainersPaused", 0);
	api_gen_kv_int(g, "ContainersStopped", (long long)(n - running - created));
	image_each(count_image, &images, &ierr);
	api_gen_kv_int(g, "Images", (long long)images);
	api_gen_kv_str(g, "Driver", "nsrun");
	api_gen_kv_str(g, "Name", u.nodename);
	api_gen_kv_str(g, "ServerVersion", NSRUN_VERSION);
	api_gen_kv_str(g, "OperatingSystem", "nsrun (rootless)");
	api_gen_kv_str(g, "OSType", "linux");
	api_gen_kv_str(g, "Architecture", u.machine);
	api_gen_kv_str(g, "KernelVersion", u.release);
	api_gen_kv_int(g, "NCPU", sysconf(_SC_NPROCESSORS_ONLN));
	api_gen_kv_int(g, "MemTotal", (long long)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE));
	api_gen_kv_str(g, "DockerRootDir", "");
	api_gen_kv_str(g, "CgroupVersion", "2");
	api_gen_str(g, "SecurityOptions");
	yajl_gen_array_open(g);
	api_gen_str(g, "name=seccomp,profile=default");
	api_gen_str(g, "name=rootless");
	api_gen_str(g, "name=no-new-privileges");
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	return api_reply_gen(c, 200, g);
}

static enum MHD_Result networks(struct MHD_Connection *c, const char *rest)
{
	static const char *const nets[] = { "bridge", "host", "none" };
	yajl_gen g = api_gen();
	bool one = rest && rest[0];
	size_t found = 0;

	if (!g)
		return api_error(c, 500, "out of memory");
	if (!one)
		yajl_gen_array_open(g);
	for (size_t i = 0; i < 3; i++) {
		char id[API_ID_LEN + 1];
		api_sha256_hex(nets[i], id);
		if (one && strcmp(rest, nets[i]) != 0 && strncmp(id, rest, strlen(rest)) != 0)
			continue;
		found++;
		yajl_gen_map_open(g);
		api_gen_kv_str(g, "Name", nets[i]);
		api_gen_kv_str(g, "Id", id);
		api_gen_kv_str(g, "Scope", "local");
		api_gen_kv_str(g, "Driver", i == 2 ? "null" : nets[i]);
		api_gen_kv_bool(g, "Internal", true);
		yajl_gen_map_close(g);
		if (one)
			break;
	}
	if (!one)
		yajl_gen_array_close(g);
	if (one && !found) {
		yajl_gen_free(g);
		return api_error(c, 404, "network %s not found", rest);
	}
	return api_reply_gen(c, 200, g);
}

/* ---- requests ---- */

/* The path without a /v1.NN prefix. */
static const char *strip_version(const char *url)
{
	if (strncmp(url, "/v", 2) == 0 && url[2] >= '0' && url[2] <= '9') {
		const char *p = url + 2;
		while ((*p >= '0' && *p <= '9') || *p == '.')
			p++;
		if (*p == '/')
			return p;
	}
	return url;
}

static enum MHD_Result route(struct api_server *srv, struct MHD_Connection *c, const char *method, const char *url,
			     struct api_request *req)
{
	const char *path = strip_version(url);
	bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;

	if (strcmp(path, "/_ping") == 0)
		return get ? ping(c) : api_error(c, 405, "use GET or HEAD /_ping");
	if (get && strcmp(path, "/version") == 0)
		return version(c);
	if (get && strcmp(path, "/info") == 0)
		return info(srv, c);
	if (strncmp(path, "/images/", 8) == 0)
		return api_images(srv, c, method, path + 8);
	if (get && (strcmp(path, "/networks") == 0 || strncmp(path, "/networks/", 10) == 0))
		return networks(c, path[9] == '/' ? path + 10 : NULL);
	if (strncmp(path, "/containers/", 12) == 0)
		return api_containers(srv, c, method, path, req);
	if (strncmp(path, "/exec/", 6) == 0)
		return api_exec(srv, c, method, path + 6, req->body, req->len);
	return api_error(c, 404, "page not found: %s %s (nsrun api serves a part of the Docker Engine API: "
			 "docs/docker-api.md)", method, path);
}

/* Whether this is PUT /[v1.NN/]containers/{ref}/archive, by the rule route and
 * api_containers follow (any other URL's body is buffered for route's answer);
 * then its ref in ref (len bytes).  The body then goes to an extraction as it
 * comes. */
static bool archive_put_ref(const char *method, const char *url, char *ref, size_t len)
{
	const char *path = strip_version(url), *p;
	size_t n;

	if (!api_archive_is_put(method, url) || strncmp(path, "/containers/", 12) != 0)
		return false;
	p = path + 12;
	n = strcspn(p, "/");
	if (n == 0 || n >= len || strncmp(p + n, "/archive", 8) != 0 || (p[n + 8] && p[n + 8] != '?'))
		return false;
	snprintf(ref, len, "%.*s", (int)n, p);
	return true;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				  const char *version_, const char *upload, size_t *upload_size, void **con_cls)
{
	struct api_server *srv = cls;
	struct api_request *req = *con_cls;
	(void)version_;

	if (!req) {
		if (!(req = calloc(1, sizeof(*req))))
			return MHD_NO;
		*con_cls = req;
		pthread_mutex_lock(&srv->lock);
		srv->inflight++;
		req->counted = true;
		pthread_mutex_unlock(&srv->lock);
		return MHD_YES;
	}
	char ref[256];
	if (*upload_size && archive_put_ref(method, url, ref, sizeof(ref))) {
		if (api_archive_upload(srv, c, ref, req, upload, *upload_size) < 0)
			return MHD_NO;
		*upload_size = 0;
		return MHD_YES;
	}
	if (*upload_size) {
		if (!req->too_big && req->len + *upload_size <= API_MAX_BODY) {
			char *nb = realloc(req->body, req->len + *upload_size + 1);
			if (!nb)
				return MHD_NO;
			req->body = nb;
			memcpy(req->body + req->len, upload, *upload_size);
			req->len += *upload_size;
			req->body[req->len] = '\0';
		} else {
			req->too_big = true;
		}
		*upload_size = 0;
		return MHD_YES;
	}
	if (req->too_big)
		return api_error(c, 413, "request body larger than %u bytes", API_MAX_BODY);
	return route(srv, c, method, url, req);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
	struct api_server *srv = cls;
	struct api_request *req = *con_cls;
	(void)c;
	(void)toe;

	if (!req)
		return;
	pthread_mutex_lock(&srv->lock);
	if (req->counted)
		srv->inflight--;
	srv->last_activity_us = monotonic_us();
	pthread_mutex_unlock(&srv->lock);
	api_archive_put_free(req->put);
	free(req->body);
	free(req);
	*con_cls = NULL;
}

/* ---- the socket ---- */

/* Binds and listens on path, mode 0600: an existing socket nobody answers on is
 * replaced, anything else refused.  Returns the fd or -1 with err. */
static int listen_socket(const char *path, struct nsrun_error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = -1;
	struct stat st;
	mode_t old;

	if (strlen(path) >= sizeof(sa.sun_path))
		return error_set(err, ENAMETOOLONG, "--socket \"%s\"", path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (lstat(path, &st) == 0) {
		_cleanup_close_ int probe = -1;
		if (!S_ISSOCK(st.st_mode))
			return error_set(err, EEXIST, "--socket \"%s\": not a socket, refused to replace it", path);
		probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			return error_set(err, EADDRINUSE, "--socket \"%s\": another server answers there", path);
		if (unlink(path) < 0)
			return error_set(err, errno, "remove the stale socket \"%s\"", path);
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return error_set(err, errno, "socket");
	old = umask(0177); /* 0600 from its first instant: no window for another user to connect */
	int rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc < 0)
		return error_set(err, errno, "bind \"%s\"", path);
	if (chmod(path, 0600) < 0 || listen(fd, 64) < 0) {
		rc = errno;
		unlink(path);
		return error_set(err, rc, "listen on \"%s\"", path);
	}
	return steal_fd(&fd);
}

/* A socket passed by systemd's socket activation (sd_listen_fds(3): LISTEN_PID is
 * ours, LISTEN_FDS >= 1, the first at fd 3), which must be a listening unix stream
 * socket.  The variables are removed, so the containers do not see them.  Returns
 * the fd, -1 when none was passed, or -2 with err. */
static int activated_socket(struct nsrun_error *err)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	struct sockaddr_un sa;
	socklen_t len = sizeof(sa);
	int listening = 0;
	socklen_t ilen = sizeof(listening);
	bool ours = pid && fds && strtol(pid, NULL, 10) == (long)getpid() && strtol(fds, NULL, 10) >= 1;

	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	if (!ours)
		return -1;
	if (getsockname(3, (struct sockaddr *)&sa, &len) < 0 || sa.sun_family != AF_UNIX ||
	    getsockopt(3, SOL_SOCKET, SO_ACCEPTCONN, &listening, &ilen) < 0 || !listening) {
		error_set(err, errno, "LISTEN_FDS: fd 3 is not a listening unix socket");
		return -2;
	}
	if (fcntl(3, F_SETFD, FD_CLOEXEC) < 0) {
		error_set(err, errno, "LISTEN_FDS: fd 3");
		return -2;
	}
	return 3;
}

static int default_socket(char *path, size_t len, struct nsrun_error *err)
{
	char root[PATH_MAX];
	_cleanup_close_ int fd = state_open_root(root, sizeof(root), err);

	if (fd < 0)
		return -1;
	if ((size_t)snprintf(path, len, "%s/docker.sock", root) >= len)
		return error_set(err, ENAMETOOLONG, "the socket path under %s", root);
	return 0;
}

static int parse_args(struct api_server *srv, int argc, char **argv, struct nsrun_error *err)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "idle-timeout", required_argument, NULL, 'i' },
		{ "volume-root", required_argument, NULL, 'v' },
		{ "archive-timeout", required_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t idle = DEFAULT_IDLE_TIMEOUT_S;
	char real[PATH_MAX];
	int c;

	srv->idle_timeout_s = DEFAULT_IDLE_TIMEOUT_S;
	srv->archive_idle_ms = 60000;
	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc - 1, argv + 1, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(api_usage, stdout);
			return 1;
		case 's':
			if (optarg[0] != '/')
				return error_set(err, 0, "--socket \"%s\": give an absolute path", optarg);
			snprintf(srv->socket_path, sizeof(srv->socket_path), "%s", optarg);
			break;
		case 'i':
			if (parse_uint("--idle-timeout", optarg, 365ULL * 24 * 3600, &idle, err) < 0)
				return -1;
			srv->idle_timeout_s = (unsigned)idle;
			break;
		case 'a':
			if (parse_uint("--archive-timeout", optarg, 24 * 3600, &idle, err) < 0)
				return -1;
			if (idle == 0)
				return error_set(err, 0, "--archive-timeout 0: give a number of seconds (1 or more)");
			srv->archive_idle_ms = (int)idle * 1000;
			break;
		case 'v':
			if (!realpath(optarg, real))
				return error_set(err, errno, "--volume-root \"%s\"", optarg);
			if (strv_push(&srv->volume_roots, real) < 0)
				return error_set(err, ENOMEM, "--volume-root");
			break;
		default:
			return error_set(err, 0, "%s: unknown option or missing value (see nsrun api --help)",
					 argv[optind]);
		}
	}
	if (optind + 1 < argc)
		return error_set(err, 0, "\"%s\": nsrun api takes no arguments (see nsrun api --help)", argv[optind + 1]);
	if (srv->volume_roots.n == 0) {
		/* the caller's /tmp and where the server was started (their own files only) */
		if (realpath("/tmp", real) && strv_push(&srv->volume_roots, real) < 0)
			return error_set(err, ENOMEM, "--volume-root");
		if (getcwd(real, sizeof(real)) && strcmp(real, "/") != 0 && strv_push(&srv->volume_roots, real) < 0)
			return error_set(err, ENOMEM, "--volume-root");
	}
	for (size_t i = 0; i < srv->volume_roots.n; i++)
		if (strcmp(srv->volume_roots.v[i], "/") == 0)
			return error_set(err, 0, "--volume-root /: would let a request bind any file of yours; name "
					 "the directories");
	return 0;
}

/* Serves until SIGTERM, SIGINT or SIGHUP, or the idle timeout. */
static void serve(struct api_server *srv)
{
	sigset_t set;
	struct timespec tick = { .tv_sec = 0, .tv_nsec = 200 * 1000000 };

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	for (;;) {
		int sig = sigtimedwait(&set, NULL, &tick);
		if (sig > 0)
			return;
		int running = api_reap(srv);
		api_exec_reap(srv);
		pthread_mutex_lock(&srv->lock);
		bool idle = srv->idle_timeout_s && srv->inflight == 0 && running == 0 &&
			    monotonic_us() - srv->last_activity_us >= (uint64_t)srv->idle_timeout_s * 1000000;
		pthread_mutex_unlock(&srv->lock);
		if (idle)
			return;
	}
}

int api_main(int argc, char **argv)
{
	struct api_server srv = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct nsrun_error err = { .stage = STAGE_CONFIG };
	struct MHD_Daemon *d = NULL;
	_cleanup_close_ int fd = -1;
	struct stat st = { 0 };
	bool activated;
	sigset_t set;
	char why[96];
	ssize_t n;
	int rc;

	if (argc >= 3 && strcmp(argv[2], "ryuk") == 0)
		return api_ryuk_main(argc, argv);
	if ((rc = parse_args(&srv, argc, argv, &err)) != 0) {
		strv_free(&srv.volume_roots);
		if (rc > 0)
			return 0;
		error_print(&err, stderr);
		return 125;
	}
	err.stage = STAGE_PREPARE;
	if ((n = readlink("/proc/self/exe", srv.self_exe, sizeof(srv.self_exe) - 1)) < 0) {
		error_set(&err, errno, "readlink /proc/self/exe (start runs this nsrun)");
		goto fail;
	}
	srv.self_exe[n] = '\0';
	/* the HTTP server's threads: glibc's clone3 would end nsrun with no word (sys.h) */
	if (!sys_clone3_usable(why, sizeof(why))) {
		error_set(&err, 0, "start the HTTP server's threads: an outer seccomp filter %s, with which "
			  "glibc makes threads (it falls back to clone(2) only on ENOSYS)", why);
		err.hint = "let the outer sandbox answer clone3 with ENOSYS, as Docker's default profile does "
			   "(runs work there without threads)";
		goto fail;
	}
	/* the signals that end the server are taken by serve(), in no other thread */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if ((fd = activated_socket(&err)) == -2)
		goto fail;
	activated = fd >= 0;
	if (activated)
		snprintf(srv.socket_path, sizeof(srv.socket_path), "(fd 3 from LISTEN_FDS)");
	else if (!srv.socket_path[0] && default_socket(srv.socket_path, sizeof(srv.socket_path), &err) < 0)
		goto fail;
	else if ((fd = listen_socket(srv.socket_path, &err)) < 0)
		goto fail;
	else
		lstat(srv.socket_path, &st); /* to remove it at the end only if it is still ours */
	srv.last_activity_us = monotonic_us();
	d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
			     MHD_ALLOW_UPGRADE | MHD_USE_SUPPRESS_DATE_NO_CLOCK, 0, NULL, NULL, on_request, &srv,
			     MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_NOTIFY_COMPLETED, on_completed, &srv,
			     MHD_OPTION_CONNECTION_LIMIT, 256U, MHD_OPTION_CONNECTION_TIMEOUT, 0U,
			     MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(256 * 1024), MHD_OPTION_END);
	if (!d) {
		error_set(&err, errno, "start the HTTP server on \"%s\"", srv.socket_path);
		if (!activated)
			unlink(srv.socket_path);
		goto fail;
	}
	fd = -1; /* the daemon's now */
	fprintf(stderr, "nsrun: api: serving on %s%s\n", activated ? "" : "unix://", srv.socket_path);
	fflush(stderr);
	serve(&srv);
	MHD_stop_daemon(d);
	api_exec_free_all(&srv);
	/* ours only: another server may have taken the path since (an activated one is systemd's) */
	if (!activated) {
		struct stat now;
		if (lstat(srv.socket_path, &now) == 0 && now.st_ino == st.st_ino && now.st_dev == st.st_dev)
			unlink(srv.socket_path);
	}
	strv_free(&srv.volume_roots);
	return 0;
fail:
	error_print(&err, stderr);
	strv_free(&srv.volume_roots);
	return 125;
}
