/* image_confine.c - the sandbox of the pull's tools and its bounds (see
 * image_fetch.h).
 *
 * Why bwrap and not nsrun: the fetch must reach registries on the host's
 * loopback (local registries, the tests' registry), which nsrun's network
 * deliberately hides, and it needs the host's skopeo and umoci, not an
 * image's.  bwrap gives exactly: a user namespace of the caller's id only (as
 * root: uid 65534, so nothing it writes can be host-root-owned or carry a
 * capability that means anything on the host), no capabilities, a mount
 * namespace holding a read-only /usr, the few /etc files the tools need and
 * the work directory (the only writable place, also /tmp and /var/tmp), and
 * the network only for registry requests.  The chain around bwrap is
 * setpriv(1) (death signal; as root the unpacking id), prlimit(1) (no file
 * past the size bound, no core) and env -i (nothing of ours reaches it).
 */
#include <errno.h>
#include <fcntl.h>
#include <fts.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "image_fetch.h"
#include "sys.h"
#include "tier.h"

/* Run in the sandbox before the tool: first writes a byte to the fd %d (the
 * sandbox is set up: what fails from here on is the tool's), then closes every
 * fd but 0-2.  bwrap passes on what it inherits (the work directory's fd it
 * binds), and a directory fd from outside the sandbox's root is a way out of it
 * (openat(fd, "..")). */
static const char close_fds[] = "printf . >&%d; for f in /proc/self/fd/*; do n=${f##*/}; if ((n > 2)) && [[ -e $f ]]; "
				"then eval \"exec $n>&-\"; fi; done; exec \"$@\"";

/* Where fetch_reach_work binds the work directory: existing directories every
 * user may traverse, whose contents nothing of the pull needs (the sandbox has
 * a /dev of its own). */
static const char *const reach_points[] = { "/dev/shm", "/mnt", NULL };

/* May every user look up path (/ and each directory on it searchable by
 * others)? */
static bool world_reachable(const char *path)
{
	char p[PATH_MAX];
	struct stat st;

	snprintf(p, sizeof(p), "%s", path);
	if (stat("/", &st) < 0 || !(st.st_mode & S_IXOTH))
		return false;
	for (char *s = p;;) {
		s = strchr(s + 1, '/');
		if (s)
			*s = '\0';
		if (stat(p, &st) < 0 || !S_ISDIR(st.st_mode) || !(st.st_mode & S_IXOTH))
			return false;
		if (!s)
			return true;
		*s = '/';
	}
}

int fetch_reach_work(struct fetch *f, struct nsrun_error *err)
{
	const char *mp = NULL;
	int fd;

	for (const char *const *r = reach_points; *r && !mp; r++)
		if (world_reachable(*r))
			mp = *r;
	/* not root enough for a mount namespace (an outer sandbox): the store's
	 * own path, as before */
	if (!mp || unshare(CLONE_NEWNS) < 0)
		return 0;
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		return error_set(err, errno, "pull \"%s\": make our mount namespace a slave of the host's", f->o->name);
	/* by path: the fd is on a mount of the host's namespace, which mount(2)
	 * refuses to bind from here (EINVAL); f->tmp is 0700 and no sandbox has
	 * run yet, so nothing can have swapped a path component */
	if (mount(f->work, mp, NULL, MS_BIND, NULL) < 0)
		return error_set(err, errno, "pull \"%s\": bind %s onto %s", f->o->name, f->work, mp);
	f->reach = mp;
	if ((fd = open(mp, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 || dup3(fd, f->work_fd, O_CLOEXEC) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return error_set(err, e, "pull \"%s\": open %s", f->o->name, mp);
	}
	close(fd);
	return 0;
}

void fetch_unreach_work(struct fetch *f)
{
	if (f->reach)
		umount2(f->reach, MNT_DETACH);
	f->reach = NULL;
}

void fetch_iec(uint64_t bytes, char *buf, size_t len)
{
	static const char units[] = "KMGTPE";
	double v = (double)bytes;
	int u = -1;

	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	if (u < 0) {
		snprintf(buf, len, "%llu", (unsigned long long)bytes);
		return;
	}
	/* numfmt rounds away from zero: one decimal below 10, else none */
	if (v < 10) {
		double t = (double)(long long)(v * 10);
		snprintf(buf, len, "%.1f%c", (t < v * 10 ? t + 1 : t) / 10, units[u]);
	} else {
		double t = (double)(long long)v;
		snprintf(buf, len, "%.0f%c", t < v ? t + 1 : t, units[u]);
	}
}

void fetch_tree_usage(const char *dir, uint64_t *files, uint64_t *bytes)
{
	char *paths[] = { (char *)dir, NULL };
	FTS *fts = fts_open(paths, FTS_PHYSICAL | FTS_XDEV | FTS_NOCHDIR, NULL);
	FTSENT *e;

	*files = *bytes = 0;
	if (!fts)
		return;
	while ((e = fts_read(fts))) {
		if (e->fts_info == FTS_DP || !e->fts_statp || e->fts_info == FTS_NS || e->fts_info == FTS_DNR)
			continue;
		(*files)++;
		*bytes += (uint64_t)e->fts_statp->st_size;
	}
	fts_close(fts);
}

char *fetch_registries_conf(void)
{
	const char *env = getenv("CONTAINERS_REGISTRIES_CONF"), *xdg = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");
	char *cand[2] = { NULL, NULL };

	if (env && *env)
		cand[0] = strdup(env);
	if (xdg && *xdg) {
		if (asprintf(&cand[1], "%s/containers/registries.conf", xdg) < 0)
			cand[1] = NULL;
	} else if (asprintf(&cand[1], "%s/.config/containers/registries.conf", home ? home : "/nonexistent") < 0) {
		cand[1] = NULL;
	}
	for (int i = 0; i < 2; i++) {
		struct stat st;
		if (cand[i] && stat(cand[i], &st) == 0 && S_ISREG(st.st_mode) && access(cand[i], R_OK) == 0) {
			free(cand[1 - i]);
			return cand[i];
		}
	}
	free(cand[0]);
	free(cand[1]);
	return NULL;
}

/* Opens the first readable regular file of the caller's registry credentials
 * (as skopeo looks for them): -1 for none. */
static int open_auth(void)
{
	const char *a = getenv("REGISTRY_AUTH_FILE"), *run = getenv("XDG_RUNTIME_DIR"), *home = getenv("HOME");
	char b[PATH_MAX], c[PATH_MAX];
	const char *cand[3] = { a, b, c };

	snprintf(b, sizeof(b), "%s/containers/auth.json", run ? run : "/nonexistent");
	snprintf(c, sizeof(c), "%s/.docker/config.json", home ? home : "/nonexistent");
	for (int i = 0; i < 3; i++) {
		struct stat st;
		int fd;
		if (!cand[i] || !*cand[i])
			continue;
		if ((fd = open(cand[i], O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
			continue;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
			return fd;
		close(fd);
	}
	return -1;
}

static int push_all(struct strv *v, const char *const *a)
{
	for (; *a; a++)
		if (strv_push(v, *a) < 0)
			return -1;
	return 0;
}

/* The whole command line: setpriv, prlimit, env -i, bwrap's arguments, the fd
 * closer (told to write to started_fd), argv.  fds[] gets the fds bwrap reads
 * (-1 for none). */
static int confined_argv(struct fetch *f, bool net, const char *const *argv, int started_fd, struct strv *v,
			 int fds[3])
{
	char fsize[48], wfd[16], afd[16], rfd[16], target[PATH_MAX], path[16], script[sizeof(close_fds) + 16];
	static const char *const top[] = { "--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/usr",
					   "/usr", "--proc", "/proc", "--dev", "/dev", "--dir", "/var", "--dir",
					   "/etc", NULL };
	static const char *const libdirs[] = { "bin", "sbin", "lib", "lib32", "lib64", "libx32", NULL };

	snprintf(fsize, sizeof(fsize), "--fsize=%llu", (unsigned long long)f->o->max_bytes);
	snprintf(wfd, sizeof(wfd), "%d", f->work_fd);
	if (push_all(v, (const char *const[]){ "setpriv", "--pdeathsig=KILL", NULL }) < 0)
		return -1;
	if (geteuid() == 0 && push_all(v, (const char *const[]){ "--reuid=65534", "--regid=65534", "--clear-groups",
							       NULL }) < 0)
		return -1;
	if (push_all(v, (const char *const[]){ "--", "prlimit", fsize, "--core=0", "--", "env", "-i", "bwrap", NULL }) <
		    0 ||
	    push_all(v, top) < 0 ||
	    push_all(v, (const char *const[]){ "--bind-fd", wfd, "/build", "--symlink", "build/tmp", "/tmp",
					       "--symlink", "../build/tmp", "/var/tmp", "--setenv", "TMPDIR",
					       "/build/tmp", "--setenv", "HOME", "/build/home", "--setenv",
					       "XDG_RUNTIME_DIR", "/build/run", "--setenv", "PATH", "/usr/bin:/bin",
					       "--setenv", "LC_ALL", "C", "--chdir", "/build", NULL }) < 0)
		return -1;
	for (const char *const *d = libdirs; *d; d++) {
		struct stat st;
		ssize_t n;
		snprintf(path, sizeof(path), "/%s", *d);
		if (lstat(path, &st) < 0 || !S_ISLNK(st.st_mode) || (n = readlink(path, target, sizeof(target) - 1)) < 0)
			continue;
		target[n] = '\0';
		if (push_all(v, (const char *const[]){ "--symlink", target, path, NULL }) < 0)
			return -1;
	}
	/* skopeo's signature policy and registries configuration */
	if (push_all(v, (const char *const[]){ "--ro-bind-try", "/etc/containers", "/etc/containers", NULL }) < 0)
		return -1;
	if (net) {
		_cleanup_free_ char *conf = fetch_registries_conf();
		/* the caller's registry credentials, as a read-only copy */
		if ((fds[1] = open_auth()) >= 0) {
			snprintf(afd, sizeof(afd), "%d", fds[1]);
			if (push_all(v, (const char *const[]){ "--dir", "/run", "--perms", "0400", "--ro-bind-data", afd,
							       "/run/auth.json", "--setenv", "REGISTRY_AUTH_FILE",
							       "/run/auth.json", NULL }) < 0)
				return -1;
		}
		/* the caller's registries.conf, as a read-only copy (skopeo is given
		 * --registries-conf /run/registries.conf: the sandbox's HOME hides it) */
		if (conf && (fds[2] = open(conf, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) >= 0) {
			snprintf(rfd, sizeof(rfd), "%d", fds[2]);
			if (push_all(v, (const char *const[]){ "--dir", "/run", "--perms", "0400", "--ro-bind-data", rfd,
							       "/run/registries.conf", NULL }) < 0)
				return -1;
		}
		if (push_all(v, (const char *const[]){ "--share-net", "--ro-bind-try", "/etc/ssl", "/etc/ssl",
						       "--ro-bind-try", "/etc/ca-certificates", "/etc/ca-certificates",
						       "--ro-bind-try", "/etc/resolv.conf", "/etc/resolv.conf",
						       "--ro-bind-try", "/etc/hosts", "/etc/hosts", "--ro-bind-try",
						       "/etc/nsswitch.conf", "/etc/nsswitch.conf", NULL }) < 0)
			return -1;
	}
	snprintf(script, sizeof(script), close_fds, started_fd);
	if (push_all(v, (const char *const[]){ "--", "/usr/bin/bash", "-c", script, "close-fds", NULL }) < 0 ||
	    push_all(v, argv) < 0)
		return -1;
	fds[0] = f->work_fd;
	return 0;
}

/* Does the log (a tool's stderr) hold text?  Reads at most its first 1 MiB. */
static bool log_has(int log_fd, const char *text)
{
	_cleanup_free_ char *s = NULL;
	char path[32];

	fd_path(path, sizeof(path), log_fd);
	return read_file(path, 1 << 20, &s, NULL) == 0 && strstr(s, text) != NULL;
}

/* A pipe, both ends close-on-exec and the read end non-blocking.  Returns 0
 * or -1 with errno. */
static int fetch_pipe(int *r, int *w)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	if (fcntl(p[0], F_SETFL, O_NONBLOCK) < 0) {
		int e = errno;
		close(p[0]), close(p[1]);
		errno = e;
		return -1;
	}
	*r = p[0], *w = p[1];
	return 0;
}

/* After a failed step: did the sandbox fail before the tool ran (nothing came
 * through started_r, which the sandbox's first command writes to)?  Then
 * f->reason gets the first line of the log (setpriv's, prlimit's or bwrap's
 * own message, control characters cleaned) and f->hint what to check. */
static bool sandbox_failed(struct fetch *f, int started_r, int log_fd)
{
	_cleanup_free_ char *s = NULL;
	char path[32], c, msg[201] = "no message";
	const char *line;
	size_t len;

	if (read(started_r, &c, 1) == 1)
		return false;
	fd_path(path, sizeof(path), log_fd);
	if (read_file(path, 64 << 10, &s, NULL) == 0) {
		for (line = s; *line == '\n'; line++)
			;
		if ((len = strcspn(line, "\n")) > 0)
			snprintf(msg, sizeof(msg), "%.*s", (int)(len < sizeof(msg) ? len : sizeof(msg) - 1), line);
		for (char *p = msg; *p; p++)
			if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
				*p = '?';
	}
	snprintf(f->reason, sizeof(f->reason), "the image tool's sandbox could not be set up: %s", msg);
	snprintf(f->hint, sizeof(f->hint), "the pull runs skopeo and umoci under setpriv, prlimit and bwrap "
		 "(as root: as uid %d); `nsrun check` shows whether user namespaces work here, and docs/images.md "
		 "what the sandbox needs", FETCH_UNPACK_UID);
	return true;
}

/* Checks the bounds on the work tree; sets f->reason when one is exceeded. */
static void check_bounds(struct fetch *f, bool net, uint64_t *last, uint64_t *since)
{
	uint64_t files, bytes, now = monotonic_us();
	char size[32];

	fetch_tree_usage(f->work, &files, &bytes);
	fetch_iec(f->o->max_bytes, size, sizeof(size));
	if (files > f->o->max_files)
		snprintf(f->reason, sizeof(f->reason), "the image has more than %llu files (--max-files N raises the bound)",
			 (unsigned long long)f->o->max_files);
	else if (bytes > f->o->max_bytes)
		snprintf(f->reason, sizeof(f->reason), "the image is larger than %s (--max-size SIZE raises the bound)",
			 size);
	else if (now > f->deadline_us)
		snprintf(f->reason, sizeof(f->reason),
			 "the import took longer than %llu s (--timeout SECONDS raises the bound)",
			 (unsigned long long)f->o->timeout_s);
	else if (net && bytes != *last) {
		*last = bytes;
		*since = now;
	} else if (net && now - *since >= f->o->net_timeout_s * 1000000) {
		snprintf(f->reason, sizeof(f->reason),
			 "the registry sent nothing for %llu s (--network-timeout SECONDS raises the bound)",
			 (unsigned long long)f->o->net_timeout_s);
	}
}

void fetch_kill_sandbox(struct fetch *f)
{
	if (f->child > 0) {
		kill(f->child, SIGKILL);
		while (waitpid(f->child, NULL, 0) < 0 && errno == EINTR)
			;
		f->child = 0;
	}
	/* bwrap's own child, pid 1 of the sandbox's pid namespace, is ours now
	 * (image_fetch_main made us a subreaper): killed and reaped, which the
	 * kernel does only once every process of that namespace is gone */
	tier_kill_descendants();
}

int fetch_run_confined(struct fetch *f, bool net, int in_fd, int out_fd, int log_fd, const char *const *argv,
		       struct nsrun_error *err)
{
	static char *const env[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL };
	struct strv v = { 0 };
	int fds[3] = { -1, -1, -1 }, keep[4], n_keep = 0, ws = 0, rc;
	_cleanup_close_ int started_r = -1, started_w = -1;
	uint64_t last = UINT64_MAX, since = monotonic_us();
	char size[32];
	unsigned tick = 0;

	f->reason[0] = '\0';
	f->hint[0] = '\0';
	if (fetch_pipe(&started_r, &started_w) < 0)
		return error_set(err, errno, "pull \"%s\": pipe", f->o->name);
	if (confined_argv(f, net, argv, started_w, &v, fds) < 0) {
		rc = errno ? errno : ENOMEM;
		strv_free(&v);
		for (int i = 1; i < 3; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		return error_set(err, rc, "pull \"%s\": build the sandbox's command line", f->o->name);
	}
	for (int i = 0; i < 3; i++)
		if (fds[i] >= 0)
			keep[n_keep++] = fds[i];
	keep[n_keep++] = started_w;
	rc = spawn_child_keep(&f->child, "setpriv", true, v.v, env, (int[3]){ in_fd, out_fd, log_fd }, keep,
			      (size_t)n_keep);
	rc = rc < 0 ? errno : 0;
	strv_free(&v);
	for (int i = 1; i < 3; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	close(started_w);
	started_w = -1;
	if (rc) {
		f->child = 0;
		error_set(err, rc, "pull \"%s\": run setpriv, prlimit and bwrap", f->o->name);
		err->hint = "the pull needs bwrap, setpriv and prlimit (apt-get install bubblewrap util-linux)";
		return -1;
	}
	/* polls every 0.25 s (a signal is seen at once: nanosleep is interrupted),
	 * the bounds every second */
	for (;;) {
		pid_t r = waitpid(f->child, &ws, WNOHANG);
		if (r == f->child)
			break;
		if (r < 0 && errno != EINTR) {
			rc = errno;
			f->child = 0;
			return error_set(err, rc, "pull \"%s\": wait for the sandbox", f->o->name);
		}
		if (fetch_stop_signal()) {
			fetch_kill_sandbox(f);
			return 128 + fetch_stop_signal();
		}
		nanosleep(&(struct timespec){ .tv_nsec = 250000000 }, NULL);
		if (f->p_out)
			fetch_progress_blobs(f);
		if (++tick % 4)
			continue;
		check_bounds(f, net, &last, &since);
		if (f->reason[0]) {
			fetch_kill_sandbox(f);
			return 137;
		}
	}
	f->child = 0;
	rc = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	if (rc != 0 && sandbox_failed(f, started_r, log_fd))
		return rc;
	/* a file over the size bound: SIGXFSZ or EFBIG from the tool */
	fetch_iec(f->o->max_bytes, size, sizeof(size));
	if (rc != 0 && (rc == 128 + SIGXFSZ || log_has(log_fd, "file too large")))
		snprintf(f->reason, sizeof(f->reason),
			 "a file of the image is larger than %s (--max-size SIZE raises the bound)", size);
	/* skopeo's own --command-timeout (a registry request that never ends) */
	else if (rc != 0 && net && log_has(log_fd, "context deadline exceeded"))
		snprintf(f->reason, sizeof(f->reason),
			 "the registry sent nothing for %llu s (--network-timeout SECONDS raises the bound)",
			 (unsigned long long)f->o->net_timeout_s);
	return rc;
}
