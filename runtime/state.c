/* state.c - see state.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "cleanup.h"
#include "util.h"
#include "state.h"
#include "sys.h"

#define GEN_STR(g, s) yajl_gen_string(g, (const unsigned char *)(s), strlen(s))

bool service_name_valid(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > NAME_MAX_LEN)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
		if (!alnum && (i == 0 || (c != '_' && c != '.' && c != '-')))
			return false;
	}
	return true;
}

bool state_is_kept(const struct service_state *st)
{
	return strcmp(st->status, "exited") == 0 || strcmp(st->status, "created") == 0;
}

bool state_has_label(const struct service_state *st, const char *want)
{
	size_t klen = strcspn(want, "=");

	for (size_t i = 0; i < st->n_labels; i++)
		if (strlen(st->labels[i].key) == klen && strncmp(st->labels[i].key, want, klen) == 0)
			return !want[klen] || strcmp(st->labels[i].value, want + klen + 1) == 0;
	return false;
}

bool state_joined(const struct service_state *st, const char *kind)
{
	size_t n = strlen(kind);

	for (const char *p = st->joined; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
		if (strncmp(p, kind, n) == 0 && (p[n] == ',' || p[n] == '\0'))
			return true;
	}
	return false;
}

/* Opens dir (made 0700 if missing) under parent_fd, refusing a symlink, another
 * owner, or access for group and others.  Returns the fd or -1 with err. */
static int open_private_dir(int parent_fd, const char *dir, const char *shown, struct nsrun_error *err)
{
	struct stat st;
	int fd;

	if (mkdirat(parent_fd, dir, 0700) < 0 && errno != EEXIST)
		return error_set(err, errno, "create the state directory %s", shown);
	fd = openat(parent_fd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return error_set(err, errno == ENOTDIR || errno == ELOOP ? ELOOP : errno,
				 "open the state directory %s (a symlink is refused)", shown);
	if (fstat(fd, &st) < 0) {
		close(fd);
		return error_set(err, errno, "stat %s", shown);
	}
	if (st.st_uid != geteuid() || (st.st_mode & 077)) {
		close(fd);
		return error_set(err, 0, "the state directory %s is not private to uid %u (owner %u, mode %04o): remove it",
				 shown, (unsigned)geteuid(), (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
	}
	return fd;
}

int state_open_private_dir(int parent_fd, const char *dir, const char *shown, struct nsrun_error *err)
{
	return open_private_dir(parent_fd, dir, shown, err);
}

/* Opens (made 0700 if missing) dir under parent_fd, following a symlink there (the
 * caller's own: it must be ours), refusing another owner or write access for group
 * and others.  Returns the fd or -1 with err. */
static int open_own_dir(int parent_fd, const char *dir, const char *shown, struct nsrun_error *err)
{
	struct stat st;
	int fd;

	if (mkdirat(parent_fd, dir, 0700) < 0 && errno != EEXIST)
		return error_set(err, errno, "create %s", shown);
	fd = openat(parent_fd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return error_set(err, errno, "open %s", shown);
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
		close(fd);
		return error_set(err, 0, "%s is not yours alone (owner %u, mode %04o, uid %u)", shown,
				 (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), (unsigned)geteuid());
	}
	return fd;
}

/* The base directory of the state, never one another user can make first: the
 * session's XDG_RUNTIME_DIR, else ${XDG_STATE_HOME:-$HOME/.local/state} in a HOME
 * of our own (a name in /tmp can be taken by anyone, and would then deny this user
 * every service: issue 17).  Its path in shown.  Returns the fd or -1 with err. */
static int open_state_base(char *shown, size_t len, const char **sub, struct nsrun_error *err)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	const char *state = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	_cleanup_close_ int home_fd = -1, local_fd = -1;
	struct stat st;
	int fd;

	if (xdg && xdg[0] == '/') {
		*sub = "nsrun";
		fd = open(xdg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return error_set(err, errno, "open XDG_RUNTIME_DIR \"%s\"", xdg);
		snprintf(shown, len, "%s", xdg);
		return fd;
	}
	*sub = "nsrun-services";
	if (state && state[0] == '/') {
		snprintf(shown, len, "XDG_STATE_HOME \"%s\"", state);
		return open_own_dir(AT_FDCWD, state, shown, err);
	}
	if (!home || home[0] != '/')
		return error_set(err, 0, "no private directory for the services' state: XDG_RUNTIME_DIR and HOME are "
				 "unset (set XDG_RUNTIME_DIR to a directory only you can write)");
	home_fd = open(home, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (home_fd < 0)
		return error_set(err, errno, "open HOME \"%s\" for the services' state (or set XDG_RUNTIME_DIR)", home);
	if (fstat(home_fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022))
		return error_set(err, 0, "no private directory for the services' state: XDG_RUNTIME_DIR is unset and "
				 "HOME \"%s\" is not yours alone (set XDG_RUNTIME_DIR to a directory only you can write)",
				 home);
	snprintf(shown, len, "%s/.local", home);
	local_fd = open_own_dir(home_fd, ".local", shown, err);
	if (local_fd < 0)
		return -1;
	snprintf(shown, len, "%s/.local/state", home);
	return open_own_dir(local_fd, "state", shown, err);
}

/* The fd of the state root (see state.h), made when missing; its path in path. */
int state_open_root(char *path, size_t len, struct nsrun_error *err)
{
	_cleanup_close_ int base = -1;
	char shown[PATH_MAX];
	const char *sub = NULL;
	const char *xdg_state = getenv("XDG_STATE_HOME");

	base = open_state_base(shown, sizeof(shown), &sub, err);
	if (base < 0)
		return -1;
	if (xdg_state && xdg_state[0] == '/' && strcmp(sub, "nsrun") != 0)
		snprintf(shown, sizeof(shown), "%s", xdg_state);
	if ((size_t)snprintf(path, len, "%s/%s", shown, sub) >= len)
		return error_set(err, ENAMETOOLONG, "the state directory under %s", shown);
	return open_private_dir(base, sub, path, err);
}

static void gen_kv_str(yajl_gen g, const char *k, const char *v)
{
	GEN_STR(g, k);
	GEN_STR(g, v);
}

static void gen_kv_int(yajl_gen g, const char *k, long long v)
{
	GEN_STR(g, k);
	yajl_gen_integer(g, v);
}

/* The state as a JSON map into g. */
void state_gen(yajl_gen g, const struct service_state *st, const char *dir)
{
	yajl_gen_map_open(g);
	gen_kv_str(g, "name", st->name);
	gen_kv_str(g, "status", st->status);
	gen_kv_int(g, "pid", st->pid);
	if (strcmp(st->status, "exited") == 0)
		gen_kv_int(g, "exit_code", st->exit_code);
	GEN_STR(g, "ports");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < st->n_ports; i++) {
		yajl_gen_map_open(g);
		gen_kv_str(g, "host_ip", st->ports[i].host_ip);
		gen_kv_int(g, "host_port", st->ports[i].host_port);
		gen_kv_int(g, "container_port", st->ports[i].container_port);
		gen_kv_str(g, "protocol", "tcp");
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	gen_kv_str(g, "log", st->log);
	if (dir)
		gen_kv_str(g, "state_dir", dir);
	gen_kv_str(g, "image", st->image);
	gen_kv_str(g, "command", st->command);
	gen_kv_int(g, "created", st->created);
	GEN_STR(g, "labels");
	yajl_gen_map_open(g);
	for (size_t i = 0; i < st->n_labels; i++)
		gen_kv_str(g, st->labels[i].key, st->labels[i].value);
	yajl_gen_map_close(g);
	if (st->health.status[0]) {
		GEN_STR(g, "health");
		yajl_gen_map_open(g);
		gen_kv_str(g, "status", st->health.status);
		gen_kv_int(g, "failing_streak", st->health.failing_streak);
		gen_kv_int(g, "exit_code", st->health.exit_code);
		gen_kv_str(g, "output", st->health.output);
		gen_kv_int(g, "checked", st->health.checked);
		yajl_gen_map_close(g);
	}
	if (st->bundle[0])
		gen_kv_str(g, "bundle", st->bundle);
	GEN_STR(g, "tty");
	yajl_gen_bool(g, st->tty);
	GEN_STR(g, "open_stdin");
	yajl_gen_bool(g, st->open_stdin);
	gen_kv_str(g, "network", st->network);
	if (st->joined[0])
		gen_kv_str(g, "joined", st->joined);
	yajl_gen_map_close(g);
}

/* Writes state.json in dir_fd atomically (temporary file, then rename(2)). Returns 0 or -1. */
int state_write(int dir_fd, const struct service_state *st)
{
	yajl_gen g = yajl_gen_alloc(NULL);
	const unsigned char *buf;
	size_t len;
	int fd, rc = -1;

	if (!g)
		return -1;
	yajl_gen_config(g, yajl_gen_beautify, 1);
	state_gen(g, st, NULL);
	yajl_gen_get_buf(g, &buf, &len);
	fd = openat(dir_fd, STATE_FILE ".tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0) {
		rc = write_all(fd, buf, len) == 0 && fsync(fd) == 0 ? 0 : -1;
		close(fd);
		if (rc == 0)
			rc = renameat(dir_fd, STATE_FILE ".tmp", dir_fd, STATE_FILE);
	}
	yajl_gen_free(g);
	return rc;
}

static void copy_str(yajl_val root, const char *key, char *out, size_t len)
{
	const char *path[] = { key, NULL };
	yajl_val v = yajl_tree_get(root, path, yajl_t_string);

	snprintf(out, len, "%s", v ? YAJL_GET_STRING(v) : "");
}

static long long get_int(yajl_val root, const char *key)
{
	const char *path[] = { key, NULL };
	yajl_val v = yajl_tree_get(root, path, yajl_t_number);

	return v && YAJL_IS_INTEGER(v) ? YAJL_GET_INTEGER(v) : -1;
}

/* Reads state.json of dir_fd. Returns 0, or -1 (errno ENOENT: none yet; EINVAL: not ours). */
int state_read(int dir_fd, struct service_state *st)
{
	_cleanup_close_ int fd = openat(dir_fd, STATE_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	char text[32768], ebuf[128];
	ssize_t n;
	yajl_val root, ports, labels, health;
	const char *ports_path[] = { "ports", NULL }, *labels_path[] = { "labels", NULL };
	const char *health_path[] = { "health", NULL };

	memset(st, 0, sizeof(*st));
	if (fd < 0)
		return -1;
	n = read(fd, text, sizeof(text) - 1);
	if (n < 0)
		return -1;
	text[n] = '\0';
	if (json_scan_depth(text, (size_t)n, JSON_MAX_DEPTH) < (size_t)n) {
		errno = EINVAL;
		return -1;
	}
	root = yajl_tree_parse(text, ebuf, sizeof(ebuf));
	if (!root) {
		errno = EINVAL;
		return -1;
	}
	copy_str(root, "name", st->name, sizeof(st->name));
	copy_str(root, "status", st->status, sizeof(st->status));
	copy_str(root, "log", st->log, sizeof(st->log));
	copy_str(root, "image", st->image, sizeof(st->image));
	copy_str(root, "command", st->command, sizeof(st->command));
	copy_str(root, "bundle", st->bundle, sizeof(st->bundle));
	copy_str(root, "network", st->network, sizeof(st->network));
	copy_str(root, "joined", st->joined, sizeof(st->joined));
	st->pid = get_int(root, "pid");
	st->exit_code = get_int(root, "exit_code");
	st->created = get_int(root, "created");
	st->tty = YAJL_IS_TRUE(yajl_tree_get(root, (const char *[]){ "tty", NULL }, yajl_t_true));
	st->open_stdin = YAJL_IS_TRUE(yajl_tree_get(root, (const char *[]){ "open_stdin", NULL }, yajl_t_true));
	ports = yajl_tree_get(root, ports_path, yajl_t_array);
	for (size_t i = 0; ports && YAJL_IS_ARRAY(ports) && i < ports->u.array.len && i < NSRUN_MAX_PUBLISH; i++) {
		yajl_val p = ports->u.array.values[i];
		copy_str(p, "host_ip", st->ports[i].host_ip, sizeof(st->ports[i].host_ip));
		st->ports[i].host_port = (uint16_t)get_int(p, "host_port");
		st->ports[i].container_port = (uint16_t)get_int(p, "container_port");
		st->n_ports = i + 1;
	}
	labels = yajl_tree_get(root, labels_path, yajl_t_object);
	for (size_t i = 0; labels && i < labels->u.object.len && st->n_labels < NSRUN_MAX_LABELS; i++) {
		yajl_val v = labels->u.object.values[i];
		if (!YAJL_IS_STRING(v))
			continue;
		snprintf(st->labels[st->n_labels].key, sizeof(st->labels[0].key), "%s", labels->u.object.keys[i]);
		snprintf(st->labels[st->n_labels].value, sizeof(st->labels[0].value), "%s", YAJL_GET_STRING(v));
		st->n_labels++;
	}
	health = yajl_tree_get(root, health_path, yajl_t_object);
	if (health) {
		copy_str(health, "status", st->health.status, sizeof(st->health.status));
		copy_str(health, "output", st->health.output, sizeof(st->health.output));
		st->health.failing_streak = get_int(health, "failing_streak");
		st->health.exit_code = get_int(health, "exit_code");
		st->health.checked = get_int(health, "checked");
	}
	yajl_tree_free(root);
	return 0;
}

/* True while the monitor (or the container's init) holds the lock of dir_fd. */
bool state_is_alive(int dir_fd)
{
	_cleanup_close_ int fd = openat(dir_fd, LOCK_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return false;
	if (flock(fd, LOCK_SH | LOCK_NB) == 0)
		return false;
	return errno == EWOULDBLOCK;
}

/* Unlinks what the directory dir_fd holds (regular files only, no recursion),
 * read through a copy of dir_fd from its start.  Returns 0 or -1 (errno). */
static int unlink_entries(int dir_fd)
{
	int fd = dup(dir_fd);
	DIR *d;
	struct dirent *e;

	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	rewinddir(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
	return 0;
}

/* Removes NAME's directory and what it holds (regular files only, no recursion). */
int state_remove_dir(int root_fd, const char *name)
{
	_cleanup_close_ int fd = openat(root_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 || unlink_entries(fd) < 0)
		return -1;
	return unlinkat(root_fd, name, AT_REMOVEDIR);
}

/* NAME's directory under root_fd removed if it is still ours (a new one made
 * under NAME stays).  Returns 0 (removed, or not ours), 1 (ours and not empty:
 * errno ENOTEMPTY) or -1 (errno). */
static int remove_name_if_ours(int root_fd, const char *name, const struct stat *ours)
{
	struct stat now;
	int why;

	if (unlinkat(root_fd, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
		return 0;
	why = errno;
	/* not empty: the name is another directory's now (a service started under
	 * it meanwhile, whose files are made before its name), which stays */
	if (fstatat(root_fd, name, &now, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -1;
	if (now.st_dev != ours->st_dev || now.st_ino != ours->st_ino)
		return 0;
	errno = why;
	return why == ENOTEMPTY ? 1 : -1;
}

int state_remove_dead(int root_fd, const char *name, int dir_fd)
{
	_cleanup_close_ int lock = -1;
	struct stat ours;
	bool emptied = false; /* its files are gone: another removed them */

	if (fstat(dir_fd, &ours) < 0)
		return -1;
	/* the lock, taken: no monitor holds it, and a second remover waits for the first */
	for (int tries = 0;; tries++) {
		lock = openat(dir_fd, LOCK_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (lock < 0 && errno == ENOENT) {
			emptied = true;
			break;
		}
		if (lock < 0)
			return -1;
		if (flock(lock, LOCK_EX | LOCK_NB) == 0)
			break;
		if (errno != EWOULDBLOCK || tries == 200) {
			errno = errno == EWOULDBLOCK ? EBUSY : errno;
			return -1;
		}
		cleanup_closep(&lock);
		usleep(5000);
	}
	/* a file made while a pass ran (a last write of a process that was ending,
	 * its temporary file renamed in) is taken by the next */
	for (int pass = 0;; pass++) {
		int rc;

		if (!emptied && unlink_entries(dir_fd) < 0)
			return -1;
		emptied = false;
		rc = remove_name_if_ours(root_fd, name, &ours);
		if (rc <= 0)
			return rc;
		if (pass == 200)
			return -1; /* errno: ENOTEMPTY */
		usleep(10000);
	}
}

/* Prints the last lines of the log at dir_fd to out. */
void state_print_log_tail(int dir_fd, FILE *out, int max_lines)
{
	_cleanup_close_ int fd = openat(dir_fd, LOG_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	char buf[8192];
	off_t size, start;
	ssize_t n;
	int lines = 0;
	char *p;

	if (fd < 0 || (size = lseek(fd, 0, SEEK_END)) <= 0)
		return;
	start = size > (off_t)sizeof(buf) - 1 ? size - (off_t)sizeof(buf) + 1 : 0;
	n = pread(fd, buf, sizeof(buf) - 1, start);
	if (n <= 0)
		return;
	buf[n] = '\0';
	for (p = buf + n - 1; p > buf; p--)
		if (*p == '\n' && p != buf + n - 1 && ++lines == max_lines)
			break;
	fprintf(out, "nsrun: the service's last log lines:\n%s%s", *p == '\n' ? p + 1 : p,
		buf[n - 1] == '\n' ? "" : "\n");
}

/* Makes NAME's directory: built under a temporary name, then renamed without
 * replacing (RENAME_NOREPLACE), so a duplicate fails and `ps` never sees it half
 * made.  Returns its fd (lock_fd: the lock, taken; log_fd: the log) or -1 with err. */
int state_create_dir(int root_fd, const char *name, int *lock_fd, int *log_fd, struct nsrun_error *err)
{
	return state_create_dir_held(root_fd, name, NULL, NULL, lock_fd, log_fd, err);
}

int state_create_dir_held(int root_fd, const char *name, const char *held, int *held_fd, int *lock_fd, int *log_fd,
			  struct nsrun_error *err)
{
	char tmp[NAME_MAX_LEN + 32];
	unsigned rnd = 0;
	int fd;

	if (held)
		*held_fd = -1;
	if (getrandom(&rnd, sizeof(rnd), 0) < 0)
		rnd = (unsigned)getpid();
	snprintf(tmp, sizeof(tmp), ".%s.%08x", name, rnd);
	if (mkdirat(root_fd, tmp, 0700) < 0)
		return error_set(err, errno, "create the state directory of \"%s\"", name);
	fd = openat(root_fd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return error_set(err, errno, "open the state directory of \"%s\"", name);
	*lock_fd = openat(fd, LOCK_FILE, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	*log_fd = openat(fd, LOG_FILE, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (*lock_fd < 0 || *log_fd < 0 || flock(*lock_fd, LOCK_EX | LOCK_NB) < 0) {
		error_set(err, errno, "create the lock and log of \"%s\"", name);
		goto fail;
	}
	if (held && ((*held_fd = openat(fd, held, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0 ||
		     flock(*held_fd, LOCK_EX | LOCK_NB) < 0)) {
		error_set(err, errno, "create \"%s\" in the state directory of \"%s\"", held, name);
		goto fail;
	}
	if (renameat2(root_fd, tmp, root_fd, name, RENAME_NOREPLACE) < 0) {
		if (errno == EEXIST)
			error_set(err, 0, "the name \"%s\" is already in use by a service (nsrun ps; nsrun rm %s)", name, name);
		else
			error_set(err, errno, "rename the state directory of \"%s\"", name);
		goto fail;
	}
	return fd;
fail:
	if (*lock_fd >= 0)
		close(*lock_fd);
	if (*log_fd >= 0)
		close(*log_fd);
	*lock_fd = *log_fd = -1;
	if (held && *held_fd >= 0)
		close(*held_fd);
	if (held)
		*held_fd = -1;
	close(fd);
	state_remove_dir(root_fd, tmp);
	return -1;
}
