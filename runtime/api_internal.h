/* api_internal.h - what the files of `nsrun api` share (api.c: server and routing;
 * api_json.c: replies and JSON helpers; api_create.c: a create request to nsrun's
 * options; api_containers.c: the containers on disk, list, inspect;
 * api_lifecycle.c: create, start, stop, wait, delete; api_stream.c: logs, attach,
 * resize; api_exec.c: exec instances; api_ryuk.c: Testcontainers' reaper).  Not an
 * interface of nsrun. */
#ifndef NSRUN_API_INTERNAL_H
#define NSRUN_API_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <microhttpd.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "state.h"
#include "util.h"

#define API_VERSION "1.41"
#define API_MIN_VERSION "1.24"
#define API_MAX_BODY (1U << 20)         /* a create request is a few kB */
#define API_CONFIG_FILE "config.json"   /* in a service's directory: what create was given */
#define API_ID_LEN 64

#define API_EXEC_MAX 256        /* exec instances kept; finished ones make room */
struct api_exec;

/* The server: one per `nsrun api`, shared by the connection threads. */
struct api_server {
	struct api_exec *execs[API_EXEC_MAX];   /* api_exec.c's (under lock) */
	pid_t *exec_orphans;            /* api_exec.c's children no instance waits for (under lock) */
	size_t n_exec_orphans;
	pthread_mutex_t lock;           /* serialises changes to the services' state */
	char self_exe[PATH_MAX];        /* this nsrun, run as `nsrun -d` to start a container */
	char socket_path[PATH_MAX];
	struct strv volume_roots;       /* real paths: binds must be under one of them */
	unsigned idle_timeout_s;        /* 0: never idle */
	int archive_idle_ms;            /* --archive-timeout: a docker cp job idle this long ends */
	int inflight;                   /* requests being answered (under lock) */
	uint64_t last_activity_us;      /* monotonic, of the last request's end (under lock) */
};

/* One request, across the calls of the access handler. */
struct api_archive_put;

struct api_request {
	char *body;
	size_t len;
	bool too_big;
	bool counted;
	struct api_archive_put *put;    /* PUT .../archive: its body streams there (api_archive.c) */
};

/* A container: an nsrun service, with the config.json of the API when it made it. */
struct api_ctr {
	char name[NAME_MAX_LEN + 1];
	char id[API_ID_LEN + 1];
	struct service_state st;
	bool alive;                     /* its lock is held: the monitor or init runs */
	yajl_val config;                /* config.json, or NULL for a plain `nsrun -d` service */
};

/* ---- api_json.c ---- */

/* Queues body (len bytes) as the reply with status and content type.  Returns MHD's result. */
enum MHD_Result api_reply(struct MHD_Connection *c, unsigned status, const char *type, const void *body, size_t len);
/* Queues g's document as a JSON reply (and frees g). */
enum MHD_Result api_reply_gen(struct MHD_Connection *c, unsigned status, yajl_gen g);
/* Queues Docker's error shape {"message": ...} with status. */
enum MHD_Result api_error(struct MHD_Connection *c, unsigned status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A yajl generator (NULL on ENOMEM). */
yajl_gen api_gen(void);
void api_gen_str(yajl_gen g, const char *s);
void api_gen_kv_str(yajl_gen g, const char *k, const char *v);
void api_gen_kv_int(yajl_gen g, const char *k, long long v);
void api_gen_kv_bool(yajl_gen g, const char *k, bool v);
/* Copies the yajl value v into g as it is (objects, arrays, scalars; null for NULL). */
void api_gen_value(yajl_gen g, yajl_val v);
/* Parses text (len bytes) as JSON, refusing nesting deeper than JSON_MAX_DEPTH.
 * Returns the tree or NULL (why in msg). */
yajl_val api_parse(const char *text, size_t len, char *msg, size_t msg_len);
/* The value at key of the object v with the type (yajl_t_any: any), or NULL.
 * Keys match as Go's encoding/json matches a struct's fields, which is how
 * Docker reads a request: in any case, the last of several winning. */
yajl_val api_get(yajl_val v, const char *key, yajl_type type);
/* v's string, or "" when v is not one. */
const char *api_str(yajl_val v);
/* The string at key of v, or NULL. */
const char *api_get_str(yajl_val v, const char *key);
/* The query arguments h and w (rows, columns: 1 to 65535) into *ws.  Returns false if bad. */
bool api_winsize(struct MHD_Connection *c, struct winsize *ws);
/* True if the query argument key is "1", "true" or "True". */
bool api_arg_true(struct MHD_Connection *c, const char *key);
/* Writes a random 64-hex id into id (API_ID_LEN + 1 bytes). */
void api_random_id(char *id);
/* Writes the hex SHA-256 of s into out (API_ID_LEN + 1 bytes). */
void api_sha256_hex(const char *s, char *out);
/* Formats seconds since the epoch as RFC 3339 UTC into buf. */
void api_time_rfc3339(long long secs, char *buf, size_t len);

/* ---- api_archive_kept.c: docker cp into a created container, kept for its start ---- */

#define API_MAX_KEPT 64         /* = NSRUN_MAX_COPY_ARCHIVES */
struct api_kept_upload;
/* Starts keeping a PUT of path (absolute) for c, created by the API: refused when
 * path is read-only there (Docker's words: 403 for ReadonlyRootfs, 400 for a
 * read-only bind) or what is kept fills the bounds (413).  Returns the upload, or
 * NULL with Docker's *status and msg. */
struct api_kept_upload *api_kept_start(const struct api_ctr *c, const char *path, unsigned *status, char *msg,
				       size_t len);
/* Appends len bytes of the body.  Returns 0, or Docker's status with msg (413:
 * past the bound; 500). */
unsigned api_kept_write(struct api_kept_upload *k, const char *data, size_t len, char *msg, size_t msg_len);
/* Reads the upload through (bounded; absolute, ".." and device members refused)
 * and keeps it as the container's next archive if ref is still that container,
 * created (under srv->lock).  Returns 0, or Docker's status with msg. */
unsigned api_kept_commit(struct api_server *srv, struct api_kept_upload *k, const char *ref, char *msg, size_t len);
/* Closes k; an upload not kept is removed. */
void api_kept_free(struct api_kept_upload *k);
/* The archives kept in a container's directory dir_fd, in order: each opened
 * (fds[i], O_RDONLY) with its target (paths[i], malloc'd).  Returns how many. */
size_t api_kept_open(int dir_fd, int *fds, char **paths, size_t max);
/* Writes them into dir_fd again (a start that failed made it anew). */
void api_kept_restore(int dir_fd, const int *fds, char *const *paths, size_t n);
/* True when c has an archive kept for its start. */
bool api_kept_any(const struct api_ctr *c);
/* HEAD on c, created: the stat of path (absolute) in its image, resolved as in
 * the container (openat2 RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS, a last symlink
 * not followed), as the running case's JSON (copy_archive.h): docker cp asks it
 * of its destination.  Its volumes and tmpfs mounts are not there yet.  Returns
 * 0 with *json (malloc'd), or Docker's status (404) with msg. */
unsigned api_kept_stat(const struct api_ctr *c, const char *path, char **json, char *msg, size_t len);

/* ---- api_exec.c: exec instances, run as `nsrun exec` ---- */

/* POST /containers/{ref}/exec: an instance of Cmd (Env, WorkingDir, User, Tty,
 * AttachStdin) in the running container ref; 201 {"Id": ...}. */
enum MHD_Result api_exec_create(struct api_server *srv, struct MHD_Connection *conn, const char *ref,
				const char *body, size_t len);
/* /exec/{path}: POST {id}/start (on an upgraded connection: stdin from it, the
 * output in Docker's frames, raw with a TTY; with Detach: runs on its own),
 * POST {id}/resize and GET {id}/json (Running, ExitCode). */
enum MHD_Result api_exec(struct api_server *srv, struct MHD_Connection *conn, const char *method, const char *path,
			 const char *body, size_t len);
/* Frees srv's exec instances (at the server's end). */
void api_exec_free_all(struct api_server *srv);
/* Records the end of the instances started with Detach (waitpid WNOHANG). */
void api_exec_reap(struct api_server *srv);

/* ---- api_create.c ---- */

/* Turns a create request's body into config.json for the service name: the nsrun
 * options (Docker's flag names) it stands for, after refusing what would weaken
 * the host's side.  Returns the document (malloc'd, *len) or NULL with the HTTP
 * status in *status and Docker's message in msg. */
char *api_create_config(const struct api_server *srv, const char *body, size_t body_len, const char *name,
			const char *id, size_t *len, unsigned *status, char *msg, size_t msg_len);

/* ---- api_create_image.c: the image's Volumes and ExposedPorts at create ---- */

/* The image's Volumes (the store entry's image.json "volumes") that get a tmpfs
 * each, as Docker gives each an anonymous volume: those no path of taken (the
 * request's binds and tmpfs mounts) is, and none of nsrun's own mounts (/tmp,
 * /dev, /proc, /sys) or /; appended to out.  Returns 0 or -1 with err. */
int api_image_volumes(const char *entry, const struct strv *taken, struct strv *out, struct nsrun_error *err);

/* PublishAllPorts: the image's ExposedPorts (entry "" for none) and the
 * request's (body's ExposedPorts), TCP ones, those PortBindings does not
 * publish already, each once: into ports (*n of at most max).  Ports of another
 * protocol go to skipped ("53/udp, ...", skipped_len bytes) for a warning.
 * Returns 0 or -1 with err. */
int api_publish_all(const char *entry, yajl_val body, yajl_val hc, unsigned *ports, size_t max, size_t *n,
		    char *skipped, size_t skipped_len, struct nsrun_error *err);

/* Where a request's HostIp binds: "" (and none), any spelling of the unspecified
 * address (0.0.0.0, ::, ::0, 0:0:0:0:0:0:0:0, ::ffff:0.0.0.0) and a loopback one
 * (127.0.0.0/8, ::1, ::ffff:127.x) give 0 with the address to bind in out; any
 * other gives -1: a request opens no interface of the host but lo.  The address
 * is compared as inet_pton(3) reads it, never as a string. */
int api_loopback_host_ip(const char *ip, char *out, size_t len);

/* ---- api_containers.c: the containers on disk, list and inspect ---- */

/* Reads every container of the state root into *out (n in *n; free with api_ctrs_free).
 * Returns 0 or -1 with msg. */
int api_ctrs_load(struct api_ctr **out, size_t *n, char *msg, size_t msg_len);
void api_ctrs_free(struct api_ctr *v, size_t n);
/* Finds ref (an id, a unique id prefix, a name, "/name").  Returns 0 with *c (release
 * with api_ctr_free), or -1 with *status (404, 500) and msg. */
int api_ctr_find(const char *ref, struct api_ctr *c, unsigned *status, char *msg, size_t msg_len);
void api_ctr_free(struct api_ctr *c);
/* Opens NAME's directory (the state root's fd in *root_fd).  Returns the fd or -1. */
int api_open_dir(const char *name, int *root_fd);
/* Waits until NAME's lock is free, up to timeout_us.  Returns true if it is. */
bool api_wait_gone(const char *name, uint64_t timeout_us);
/* A regular file of dir_fd (at most 2 MiB), NUL-terminated, malloc'd; NULL if none. */
char *api_read_small_file(int dir_fd, const char *file, size_t *len);
/* Writes file in dir_fd through a temporary file and rename(2).  Returns 0 or -1 (errno). */
int api_write_file_atomic(int dir_fd, const char *file, const char *text, size_t len);
/* Removes exited AutoRemove containers; returns the number of running ones. */
int api_reap(struct api_server *srv);
/* True if c's stdin takes attached clients (OpenStdin when created; -d -i). */
bool api_ctr_open_stdin(const struct api_ctr *c);
/* True if c has a TTY (Tty when created; -t for an nsrun -d service). */
bool api_ctr_tty(const struct api_ctr *c);
/* The inspect document of c into g. */
void api_gen_inspect(yajl_gen g, const struct api_ctr *c);
/* GET /containers/json. */
enum MHD_Result api_list(struct api_server *srv, struct MHD_Connection *conn);

/* ---- api_images.c: /images ---- */

/* Routes /images/REST (json, NAME/json, create, DELETE NAME).  Returns MHD's result. */
enum MHD_Result api_images(struct api_server *srv, struct MHD_Connection *c, const char *method, const char *rest);

/* ---- api_lifecycle.c: create, start, stop, kill, wait, logs, delete ---- */

/* Routes /containers/... (path without the version prefix).  Returns MHD's result. */
enum MHD_Result api_containers(struct api_server *srv, struct MHD_Connection *c, const char *method,
			       const char *path, struct api_request *req);

/* The uid (in our user namespace) owning the TCP socket at the other end of fd, a
 * loopback connection, from /proc/self/net/tcp or tcp6 (the net namespace's table;
 * Documentation/networking/proc_net_tcp.rst): the reaper's way where sock_diag(7)
 * is denied (api_ryuk.c).  Returns 0 with *uid, or -1 (errno: ENOENT not found,
 * EAFNOSUPPORT not TCP over IP, or fopen's). */
int api_peer_uid_proc(int fd, uid_t *uid);

/* One line of /proc/net/tcp{,6} (proc_net_tcp.rst): whether it is the socket with
 * local address local and remote rem (as the kernel prints them: hex words, ':',
 * hex port), ESTABLISHED (st 01) and still owned (inode not 0); then *uid.  A
 * TIME_WAIT or FIN_WAIT2 socket shows uid 0 and inode 0: no owner, never a match.
 * Returns 1 (a match) or 0. */
int api_peer_tcp_line(const char *line, const char *local, const char *rem, uid_t *uid);

/* docker cp from c, created, not started (api_archive.c): spawns `nsrun
 * --archive-get|--archive-stat PATH` (op) with c's args less what only its running
 * service uses (ports, network, health), its binds pinned and its kept archives
 * extracted first, as its start would (api_lifecycle.c), stdio as spawn_child's:
 * the copy is made in the container's root, confined as its payload.  Returns 0
 * with *pid, or Docker's status with msg. */
int api_peek_spawn(struct api_server *srv, const struct api_ctr *c, const char *op, const char *path,
		   const int stdio[3], pid_t *pid, char *msg, size_t msg_len);
/* GET, HEAD and PUT /containers/{ref}/archive (api_archive.c): docker cp. */
enum MHD_Result api_archive(struct api_server *srv, struct MHD_Connection *conn, const char *method, const char *ref,
			    struct api_request *req);
/* True for a PUT of an archive, whose body is streamed, not kept. */
bool api_archive_is_put(const char *method, const char *url);
/* Passes len bytes of a PUT archive's body on (the first call starts the copy).
 * Returns 0, or -1 (out of memory). */
int api_archive_upload(struct api_server *srv, struct MHD_Connection *conn, const char *ref,
		       struct api_request *req, const char *data, size_t len);
void api_archive_put_free(struct api_archive_put *p);

/* Finds ref under the server's lock.  Returns true with *c (release with
 * api_ctr_free), or false with Docker's error queued (MHD's result in *ret). */
bool api_find(struct api_server *srv, struct MHD_Connection *conn, const char *ref, struct api_ctr *c,
	      enum MHD_Result *ret);
/* True when the client closed the connection (waits up to timeout_ms for that). */
bool api_client_gone(struct MHD_Connection *conn, int timeout_ms);

/* ---- api_stream.c: logs and attach ---- */

/* GET /containers/{ref}/logs: Docker's frames; follow, tail, stdout, stderr. */
enum MHD_Result api_logs(struct api_server *srv, struct MHD_Connection *conn, const char *ref);
/* POST /containers/{ref}/attach with an upgrade: its output until it exits (raw
 * with a TTY, else in frames); with stdin=1 what the client sends goes to the
 * service's stdin, its half-close as the end of this client's input. */
enum MHD_Result api_attach(struct api_server *srv, struct MHD_Connection *conn, const char *ref);
/* POST /containers/{ref}/resize?h=&w=: the size of its TTY. */
enum MHD_Result api_resize(struct api_server *srv, struct MHD_Connection *conn, const char *ref);
/* One of Docker's stream frames on an upgraded connection's sock: the 8-byte
 * header (stream: 1 stdout, 2 stderr; n big-endian), then data.  Returns 0 or -1. */
int api_send_frame(int sock, unsigned char stream, const char *data, size_t n);
/* Docker's frame header for n bytes of stream (1 stdout, 2 stderr) into h[8]:
 * stream, 0, 0, 0, n big-endian (Engine API, "Attach to a container", "Stream
 * format"). */
void api_frame_header(unsigned char h[8], unsigned char stream, size_t n);
/* Queues a streamed 200 response of type: MHD calls read(cls, ...) for blocks of up
 * to block bytes and done(cls) at its end, or here when it cannot be made; with
 * extra_name: one more header.  Returns MHD's result. */
enum MHD_Result api_queue_stream(struct MHD_Connection *conn, const char *type, size_t block,
				 MHD_ContentReaderCallback read, void *cls, MHD_ContentReaderFreeCallback done,
				 const char *extra_name, const char *extra_value);
/* Queues 101 Switching Protocols to "tcp" with content type type; handler gets the
 * socket and cls (malloc'd, its to free; freed here if the response cannot be made). */
enum MHD_Result api_queue_upgrade(struct MHD_Connection *conn, MHD_UpgradeHandler handler, void *cls,
				  const char *type);

/* ---- api_exec.c: exec instances, run as `nsrun exec` ---- */

/* POST /containers/{ref}/exec: an instance of Cmd (Env, WorkingDir, User) in the
 * running container ref; 201 {"Id": ...}.  Tty and stdin: 501. */
enum MHD_Result api_exec_create(struct api_server *srv, struct MHD_Connection *conn, const char *ref,
				const char *body, size_t len);
/* /exec/{path}: POST {id}/start (on an upgraded connection: the output in Docker's
 * frames) and GET {id}/json (Running, ExitCode). */
enum MHD_Result api_exec(struct api_server *srv, struct MHD_Connection *conn, const char *method, const char *path,
			 const char *body, size_t len);
/* Frees srv's exec instances (at the server's end). */
void api_exec_free_all(struct api_server *srv);

/* ---- api_ryuk.c: Testcontainers' reaper, served by nsrun ---- */

/* True if the image reference ref is Testcontainers' reaper (testcontainers/ryuk[:TAG]). */
bool api_is_ryuk(const char *ref);
/* `nsrun api ryuk NAME CONNECT_TIMEOUT RECONNECT_TIMEOUT`: the reaper as the
 * monitor of the service NAME (run by start).  Returns the exit status. */
int api_ryuk_main(int argc, char **argv);

/* ---- api_create.c ---- */

/* The store name of a Docker image reference: NAME or NAME:latest (nothing else
 * names a store image).  Returns 0 (name in name) or -1. */
int api_image_name(const char *ref, char *name, size_t len);

/* The host path real (a bind source or seccomp profile that create checked, its
 * real path then) as start is about to use it: opened O_PATH with no symlink on
 * the way (open_in_root_nofollow; a link swapped in since is refused), under a
 * volume root, owned by our euid.  Returns the fd (close it), or -1 with msg
 * (errno's words).  The fd is what nsrun -d is given (/proc/self/fd/N), so what
 * it mounts is the object checked here (config_add_volume pins it). */
int api_source_open(const struct api_server *srv, const char *what, const char *real, char *msg, size_t msg_len);

#endif
