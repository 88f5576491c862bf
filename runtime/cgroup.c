/* cgroup.c - see cgroup.h */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <mntent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "cgroup_systemd.h"
#include "cleanup.h"
#include "sys.h"

#define RUN_PREFIX "nsrun-"

char *cgroup_find_mount(const char *const *usual, size_t n, unsigned long magic, const char *probe,
			const char *fstype, const char *option)
{
	char path[PATH_MAX];
	struct statfs sfs;
	struct mntent *ent;
	char *out = NULL;
	FILE *f;

	for (size_t i = 0; i < n; i++)
		if (statfs(usual[i], &sfs) == 0 && (unsigned long)sfs.f_type == magic &&
		    (!probe || (snprintf(path, sizeof(path), "%s/%s", usual[i], probe) < (int)sizeof(path) &&
				access(path, F_OK) == 0)))
			return strdup(usual[i]);
	f = setmntent("/proc/self/mounts", "re");
	while (f && !out && (ent = getmntent(f)))
		if (strcmp(ent->mnt_type, fstype) == 0 && (!option || hasmntopt(ent, option)))
			out = strdup(ent->mnt_dir);
	if (f)
		endmntent(f);
	return out;
}

char *cgroup_own_path(const char *controller)
{
	_cleanup_free_ char *text = NULL;
	char *line, *nl;

	if (read_file("/proc/self/cgroup", 1 << 16, &text, NULL) < 0)
		return NULL;
	for (line = text; line && *line; line = nl ? nl + 1 : NULL) {
		char *ctl, *path;
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		ctl = strchr(line, ':');
		path = ctl ? strchr(ctl + 1, ':') : NULL;
		if (!path)
			continue;
		*path++ = '\0';
		if (!controller) {
			if (ctl == line + 1 && line[0] == '0' && ctl[1] == '\0')
				return strdup(path);
			continue;
		}
		for (char *save = NULL, *tok = strtok_r(ctl + 1, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
			if (strcmp(tok, controller) == 0)
				return strdup(path);
	}
	return NULL;
}

char *cgroup_oci_dir(const char *mnt, const char *base, const char *cgroups_path)
{
	char rel[PATH_MAX] = "";
	size_t n = 0;
	char *out = NULL;
	const char *p = cgroups_path;

	/* each name, as a stack: ".." pops the last one, and nothing above the start */
	while (*p) {
		size_t len = strcspn(p, "/");
		if (len == 0 || (len == 1 && p[0] == '.')) {
			/* (nothing) */
		} else if (len == 2 && p[0] == '.' && p[1] == '.') {
			while (n > 0 && rel[n - 1] != '/')
				n--;
			if (n > 0)
				n--;
		} else {
			if (n + 1 + len + 1 > sizeof(rel)) {
				errno = ENAMETOOLONG;
				return NULL;
			}
			rel[n++] = '/';
			memcpy(rel + n, p, len);
			n += len;
		}
		rel[n] = '\0';
		p += len + (p[len] == '/');
	}
	if (cgroups_path[0] != '/' && base && strcmp(base, "/") != 0) {
		if (asprintf(&out, "%s%s%s", mnt, base, rel) < 0)
			return NULL;
	} else if (asprintf(&out, "%s%s", mnt, rel) < 0) {
		return NULL;
	}
	return out;
}

int cgroup_make_dirs(const char *path, size_t base_len, size_t *kept_len)
{
	_cleanup_free_ char *dir = strdup(path);
	size_t len = strlen(path);

	if (!dir)
		return -1;
	*kept_len = len;
	/* from the deepest that exists down: each name after it made in turn */
	for (size_t i = base_len + 1; i <= len; i++) {
		if (dir[i] != '/' && dir[i] != '\0')
			continue;
		dir[i] = '\0';
		if (mkdir(dir, 0755) == 0) {
			if (*kept_len == len)
				*kept_len = (size_t)(strrchr(dir, '/') - dir);
		} else if (errno != EEXIST) {
			int saved = errno;
			*strrchr(dir, '/') = '\0'; /* (not made: its parent is the last made) */
			if (*kept_len < len)
				cgroup_remove_dirs(dir, *kept_len);
			*kept_len = i; /* the one that could not be made */
			errno = saved;
			return -1;
		}
		dir[i] = i < len ? '/' : '\0';
	}
	return 0;
}

void cgroup_remove_dirs(const char *path, size_t kept_len)
{
	_cleanup_free_ char *dir = strdup(path);
	char *slash;

	while (dir && strlen(dir) > kept_len && rmdir(dir) == 0 && (slash = strrchr(dir, '/')))
		*slash = '\0';
}

/* The cgroup2 mount point: /sys/fs/cgroup (unified hosts) or /sys/fs/cgroup/unified
 * (hybrid hosts) when statfs(2) says it is cgroup2 there, else the first cgroup2
 * entry of /proc/self/mounts: reading the mount table costs more than the rest of
 * the cgroup set-up, so it is only the fallback. */
static char *cgroup2_mount(void)
{
	static const char *const usual[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };

	return cgroup_find_mount(usual, 2, CGROUP2_SUPER_MAGIC, NULL, "cgroup2", NULL);
}

/* This process's cgroup v2 path ("0::/PATH" of /proc/self/cgroup, cgroups(7)). */
static char *own_cgroup(void)
{
	return cgroup_own_path(NULL);
}

static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' ' || p[n] == '\n'))
			return true;
	return false;
}

/* dir/file into buf; -1 with ENAMETOOLONG when it does not fit. */
static int path_at(char *buf, size_t len, const char *dir, const char *file)
{
	int n = snprintf(buf, len, "%s/%s", dir, file);

	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* Value of "key N" in a flat keyed file (memory.events, cpu.stat), or 0. */
static uint64_t keyed(const char *text, const char *key)
{
	size_t n = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (strncmp(p, key, n) == 0 && p[n] == ' ')
			return strtoull(p + n + 1, NULL, 10);
	return 0;
}

static bool is_populated(const char *dir)
{
	_cleanup_free_ char *ev = read_file_in(dir, "cgroup.events");

	return !ev || keyed(ev, "populated") != 0;
}

/* Removes the runs of supervisors that are gone: nsrun-<pid>-<n> with no such pid. */
static void remove_stale(const char *parent)
{
	_cleanup_closedir_ DIR *d = opendir(parent);
	struct dirent *de;

	while (d && (de = readdir(d))) {
		char path[4096];
		long pid;
		if (strncmp(de->d_name, RUN_PREFIX, strlen(RUN_PREFIX)) != 0)
			continue;
		pid = strtol(de->d_name + strlen(RUN_PREFIX), NULL, 10);
		if (pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		if (path_at(path, sizeof(path), parent, de->d_name) < 0)
			continue;
		write_file_in(path, "cgroup.kill", "1");
		for (int i = 0; i < 100 && is_populated(path); i++)
			usleep(10000);
		rmdir(path);
	}
}

/* Enables the wanted controllers (space separated) in parent's subtree_control.
 * A cgroup with processes may not do that (the no-internal-process rule): if the
 * only process is this one, it moves into a leaf beside the runs first. */
static int enable_controllers(const char *parent, const char *wanted, char *why, size_t why_len)
{
	char buf[256] = "";
	char tok[32];
	const char *p = wanted;
	int n;

	while (sscanf(p, "%31s%n", tok, &n) == 1) {
		size_t o = strlen(buf);
		snprintf(buf + o, sizeof(buf) - o, "%s+%s", o ? " " : "", tok);
		p += n;
	}
	if (!buf[0] || write_file_in(parent, "cgroup.subtree_control", buf) == 0)
		return 0;
	if (errno == EBUSY) {
		_cleanup_free_ char *procs = read_file_in(parent, "cgroup.procs");
		char self[32], leaf[4096];
		snprintf(self, sizeof(self), "%d\n", (int)getpid());
		if (procs && strcmp(procs, self) == 0) {
			if (path_at(leaf, sizeof(leaf), parent, "nsrun-supervisor") == 0 && (mkdir(leaf, 0755) == 0 || errno == EEXIST) && write_file_in(leaf, "cgroup.procs", self) == 0 &&
			    write_file_in(parent, "cgroup.subtree_control", buf) == 0)
				return 0;
		}
		snprintf(why, why_len, "cgroup %s holds other processes, so no controller can be enabled for its "
			 "children (no-internal-process rule): start nsrun in a cgroup of its own, e.g. "
			 "systemd-run --user --scope -p Delegate=yes nsrun ...", parent);
		return -1;
	}
	snprintf(why, why_len, "enabling %s in %s/cgroup.subtree_control: %s", wanted, parent, strerror(errno));
	return -1;
}

/* The controllers the limits of cfg want, those parent offers, into buf. */
static void wanted_controllers(const struct nsrun_config *cfg, const char *offered, char *buf, size_t len,
			       char *why, size_t why_len)
{
	const struct { bool want; const char *name; } c[] = {
		{ cfg->limits.memory_bytes != 0, "memory" },
		{ cfg->limits.pids != 0, "pids" },
		{ cfg->limits.cpus_milli != 0, "cpu" },
	};

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		size_t o = strlen(buf);
		if (!c[i].want)
			continue;
		if (offered && has_word(offered, c[i].name))
			snprintf(buf + o, len - o, "%s%s", o ? " " : "", c[i].name);
		else if (!why[0])
			snprintf(why, why_len, "the %s controller is not delegated to this cgroup", c[i].name);
	}
}

/* The parent for the run, or NULL with why set. */
static char *choose_parent(const struct nsrun_config *cfg, const char *mnt, char *why, size_t why_len)
{
	_cleanup_free_ char *own = own_cgroup();
	char *parent = NULL;

	if (cfg->cgroup_parent) {
		if (asprintf(&parent, "%s/%s", mnt, cfg->cgroup_parent) < 0)
			return NULL;
		if (mkdir(parent, 0755) < 0 && errno != EEXIST) {
			snprintf(why, why_len, "--cgroup-parent %s: %s", parent, strerror(errno));
			free(parent);
			return NULL;
		}
		return parent;
	}
	if (!own) {
		snprintf(why, why_len, "this process is in no cgroup v2 (no 0:: line in /proc/self/cgroup)");
		return NULL;
	}
	if (asprintf(&parent, "%s%s", mnt, strcmp(own, "/") ? own : "") < 0)
		return NULL;
	if (access(parent, W_OK) == 0) {
		char sc[4096];
		if (path_at(sc, sizeof(sc), parent, "cgroup.subtree_control") == 0 && access(sc, W_OK) == 0)
			return parent;
	}
	free(parent);
	parent = NULL;
	if (geteuid() == 0 && asprintf(&parent, "%s/nsrun", mnt) >= 0) {
		if (mkdir(parent, 0755) == 0 || errno == EEXIST)
			return parent;
		free(parent);
		parent = NULL;
	}
	snprintf(why, why_len, "cgroup %s%s is not delegated to uid %u (not writable): see docs/limits.md "
		 "for systemd-run --user -p Delegate=yes", mnt, own, (unsigned)geteuid());
	return NULL;
}

/* How long each address of the systemd manager has to start the scope (a start job of
 * a scope only moves a process, but the manager may be busy; a bus that never answers
 * costs each run this long, so it is short) */
#define SCOPE_TIMEOUT_MS 3000

/* No cgroup is delegated: one from the caller's systemd manager, a scope nsrun
 * moves into (cgroup_systemd.h), then the parent of the run's cgroup as
 * choose_parent finds it there.  NULL with scope_note set to why: the fallback
 * is silent, why_not (which warnings show) stays what it was. */
static char *systemd_parent(const struct nsrun_config *cfg, const char *mnt, struct cgroup_run *cg)
{
	_cleanup_free_ char *own = own_cgroup();
	char *parent;

	if (!own)
		return NULL;
	if (cgroup_systemd_scope(mnt, own, cg->scope, sizeof(cg->scope), SCOPE_TIMEOUT_MS, cg->scope_note,
				 sizeof(cg->scope_note)) < 0)
		return NULL;
	parent = choose_parent(cfg, mnt, cg->scope_note, sizeof(cg->scope_note));
	if (!parent)
		cg->scope[0] = '\0';
	else
		cg->why_not[0] = '\0'; /* (what was not delegated no longer matters) */
	return parent;
}

static int write_limits(const struct nsrun_config *cfg, struct cgroup_run *cg, const char *enabled,
			struct nsrun_error *err)
{
	char v[64];

	if (has_word(enabled, "memory")) {
		snprintf(v, sizeof(v), "%llu", (unsigned long long)cfg->limits.memory_bytes);
		if (write_file_in(cg->path, "memory.max", v) < 0)
			return error_set(err, errno, "write %s/memory.max", cg->path);
		if (cfg->limits.memory_swap_bytes == UINT64_MAX)
			snprintf(v, sizeof(v), "max");
		else
			snprintf(v, sizeof(v), "%llu", (unsigned long long)(cfg->limits.memory_swap_bytes >
				 cfg->limits.memory_bytes ? cfg->limits.memory_swap_bytes - cfg->limits.memory_bytes : 0));
		/* absent when the kernel has no swap accounting: not an error */
		if (write_file_in(cg->path, "memory.swap.max", v) < 0 && errno != ENOENT)
			return error_set(err, errno, "write %s/memory.swap.max", cg->path);
		/* an OOM kills the whole container, not one process of it */
		if (write_file_in(cg->path, "memory.oom.group", "1") < 0 && errno != ENOENT)
			return error_set(err, errno, "write %s/memory.oom.group", cg->path);
		cg->memory = true;
	}
	if (has_word(enabled, "pids")) {
		snprintf(v, sizeof(v), "%llu", (unsigned long long)cfg->limits.pids);
		if (write_file_in(cg->path, "pids.max", v) < 0)
			return error_set(err, errno, "write %s/pids.max", cg->path);
		cg->pids = true;
	}
	if (has_word(enabled, "cpu")) {
		/* quota per 100 ms period: 1 CPU is 100000 us (cgroup-v2.rst, cpu.max) */
		snprintf(v, sizeof(v), "%llu 100000", (unsigned long long)(cfg->limits.cpus_milli * 100));
		if (write_file_in(cg->path, "cpu.max", v) < 0)
			return error_set(err, errno, "write %s/cpu.max", cg->path);
		cg->cpu = true;
	}
	return 0;
}

/* Enables in dir's subtree_control those of wanted (space separated) it lacks: a
 * delegated subtree's ancestors have them and are not the caller's to write. */
static int enable_missing(const char *dir, const char *wanted, char *why, size_t why_len)
{
	_cleanup_free_ char *on = read_file_in(dir, "cgroup.subtree_control");
	char missing[64] = "", tok[32];
	const char *p = wanted;
	int n;

	while (sscanf(p, "%31s%n", tok, &n) == 1) {
		size_t o = strlen(missing);
		if (!on || !has_word(on, tok))
			snprintf(missing + o, sizeof(missing) - o, "%s%s", o ? " " : "", tok);
		p += n;
	}
	return missing[0] ? enable_controllers(dir, missing, why, why_len) : 0;
}

/* cfg->cgroups_path as the run's cgroup (cgroup.h): made with its parents, the
 * controllers the limits want enabled on the way down from the hierarchy's root
 * (runc's fs2 manager does the same), the limits written.  Returns 0 with cg->path
 * set, 0 with path_why set when it cannot be made, or -1 with err. */
static int prepare_at_path(const struct nsrun_config *cfg, const char *mnt, struct cgroup_run *cg,
			   struct nsrun_error *err)
{
	_cleanup_free_ char *own = own_cgroup();
	_cleanup_free_ char *path = NULL, *root_offered = NULL, *offered = NULL;
	char wanted[64], why[256] = "";
	size_t kept;

	/* relative: below the parent of nsrun's own cgroup, as runc's fs2 (its own has
	 * processes, so no controller could be enabled below it) */
	if (own && strrchr(own, '/'))
		*(strrchr(own, '/') == own ? own + 1 : strrchr(own, '/')) = '\0';
	if (!(path = cgroup_oci_dir(mnt, own, cfg->cgroups_path)))
		return error_set(err, errno, "linux.cgroupsPath \"%s\"", cfg->cgroups_path);
	if (cgroup_make_dirs(path, strlen(mnt), &kept) < 0) {
		snprintf(cg->path_why, sizeof(cg->path_why), "mkdir %.*s: %s%s", (int)kept, path, strerror(errno),
			 errno == EACCES || errno == EPERM || errno == EROFS ? " (not delegated to this user)" : "");
		return 0;
	}
	if (kept == strlen(path) && is_populated(path))
		return error_set(err, 0, "linux.cgroupsPath \"%s\": the cgroup %s holds processes already (a "
				 "container's cgroup is its own: runc refuses it too)", cfg->cgroups_path, path);
	root_offered = read_file_in(mnt, "cgroup.controllers");
	wanted_controllers(cfg, root_offered, wanted, sizeof(wanted), why, sizeof(why));
	/* each level from the root down to the cgroup's parent */
	for (size_t i = strlen(mnt); wanted[0] && path[i]; i++) {
		char dir[PATH_MAX];
		if (path[i] != '/')
			continue;
		snprintf(dir, sizeof(dir), "%.*s", (int)i, path);
		if (enable_missing(dir, wanted, why, sizeof(why)) < 0)
			break;
	}
	offered = read_file_in(path, "cgroup.controllers");
	wanted_controllers(cfg, offered, wanted, sizeof(wanted), why, sizeof(why));
	snprintf(cg->why_not, sizeof(cg->why_not), "%s", why);
	cg->path = steal_ptr(&path);
	cg->kept_len = kept;
	if (write_limits(cfg, cg, wanted, err) < 0)
		return -1;
	cg->dir_fd = open(cg->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg->dir_fd < 0)
		return error_set(err, errno, "open %s", cg->path);
	return 0;
}

int cgroup_prepare(const struct nsrun_config *cfg, struct cgroup_run *cg, struct nsrun_error *err)
{
	_cleanup_free_ char *mnt = cgroup2_mount();
	_cleanup_free_ char *parent = NULL;
	_cleanup_free_ char *offered = NULL;
	char wanted[64];
	struct timespec ts;

	memset(cg, 0, sizeof(*cg));
	cg->dir_fd = -1;
	if (!mnt) {
		snprintf(cg->why_not, sizeof(cg->why_not), "no cgroup2 file system is mounted");
		if (cfg->cgroups_path)
			snprintf(cg->path_why, sizeof(cg->path_why), "%s", cg->why_not);
		return 0;
	}
	if (cfg->cgroups_path) {
		if (prepare_at_path(cfg, mnt, cg, err) < 0) {
			cgroup_destroy(cg);
			return -1;
		}
		if (cg->path)
			return 0;
	}
	parent = choose_parent(cfg, mnt, cg->why_not, sizeof(cg->why_not));
	/* (a limit wants a cgroup: without one, no manager is asked for a scope) */
	if (!parent && !cfg->cgroup_parent &&
	    (cfg->limits.memory_bytes || cfg->limits.pids || cfg->limits.cpus_milli))
		parent = systemd_parent(cfg, mnt, cg);
	if (!parent)
		return 0;
	remove_stale(parent);
	offered = read_file_in(parent, "cgroup.controllers");
	wanted_controllers(cfg, offered, wanted, sizeof(wanted), cg->why_not, sizeof(cg->why_not));
	if (wanted[0] && enable_controllers(parent, wanted, cg->why_not, sizeof(cg->why_not)) < 0)
		wanted[0] = '\0';
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (asprintf(&cg->path, "%s/" RUN_PREFIX "%d-%lld%09ld", parent, (int)getpid(), (long long)ts.tv_sec,
		     ts.tv_nsec) < 0) {
		cg->path = NULL;
		return error_set(err, ENOMEM, "cgroup path");
	}
	if (mkdir(cg->path, 0755) < 0) {
		snprintf(cg->why_not, sizeof(cg->why_not), "mkdir %s: %s", cg->path, strerror(errno));
		free(cg->path);
		cg->path = NULL;
		return 0;
	}
	if (write_limits(cfg, cg, wanted, err) < 0) {
		rmdir(cg->path);
		return -1;
	}
	cg->dir_fd = open(cg->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg->dir_fd < 0) {
		int saved = errno;
		rmdir(cg->path);
		return error_set(err, saved, "open %s", cg->path);
	}
	return 0;
}

int cgroup_dir_enter(const char *dir, pid_t pid, struct nsrun_error *err)
{
	char v[32];

	snprintf(v, sizeof(v), "%d", (int)pid);
	if (write_file_in(dir, "cgroup.procs", v) < 0)
		return error_set(err, errno, "move the container into %s", dir);
	return 0;
}

int cgroup_enter(const struct cgroup_run *cg, pid_t pid, struct nsrun_error *err)
{
	return cg->path ? cgroup_dir_enter(cg->path, pid, err) : 0;
}

void cgroup_kill(const struct cgroup_run *cg)
{
	if (!cg->path)
		return;
	if (write_file_in(cg->path, "cgroup.kill", "1") == 0)
		return;
	/* before 5.14: SIGKILL each member until none is left (they cannot fork out of it) */
	for (int round = 0; round < 100; round++) {
		_cleanup_free_ char *procs = read_file_in(cg->path, "cgroup.procs");
		if (!procs || !procs[0])
			return;
		for (char *p = procs; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p))
			kill((pid_t)atoi(p), SIGKILL);
	}
}

void cgroup_read_stats(const struct cgroup_run *cg, struct cgroup_stats *st)
{
	_cleanup_free_ char *ev = NULL;
	_cleanup_free_ char *cpu = NULL;
	_cleanup_free_ char *mp = NULL;
	_cleanup_free_ char *pp = NULL;

	memset(st, 0, sizeof(*st));
	if (!cg->path)
		return;
	ev = read_file_in(cg->path, "memory.events");
	if (ev) {
		st->oom_kill = keyed(ev, "oom_kill");
		st->oom_group_kill = keyed(ev, "oom_group_kill");
	}
	cpu = read_file_in(cg->path, "cpu.stat");
	if (cpu) {
		st->cpu_usage_us = keyed(cpu, "usage_usec");
		st->cpu_user_us = keyed(cpu, "user_usec");
		st->cpu_system_us = keyed(cpu, "system_usec");
	}
	mp = read_file_in(cg->path, "memory.peak");
	if (mp)
		st->memory_peak_bytes = strtoull(mp, NULL, 10);
	pp = read_file_in(cg->path, "pids.peak");
	if (pp)
		st->pids_peak = strtoull(pp, NULL, 10);
}

void cgroup_destroy(struct cgroup_run *cg)
{
	if (cg->dir_fd >= 0)
		close(cg->dir_fd);
	cg->dir_fd = -1;
	if (!cg->path)
		return;
	/* Up to 5 s for the group to empty (a loaded machine tears a killed tree down
	 * slowly): rmdir fails with EBUSY while a task is still in it (cgroup-v2.rst,
	 * "Processes"), so it is retried rather than given one try after the wait. */
	for (int i = 0; i < 500; i++) {
		if (rmdir(cg->path) == 0 || errno != EBUSY)
			break;
		if (i % 20 == 0)
			cgroup_kill(cg);
		usleep(10000);
	}
	/* a linux.cgroupsPath's parents nsrun made (the one that was there before stays) */
	if (cg->kept_len) {
		char *slash = strrchr(cg->path, '/');
		if (slash) {
			*slash = '\0';
			cgroup_remove_dirs(cg->path, cg->kept_len);
		}
	}
	free(cg->path);
	cg->path = NULL;
}
