/* cgroup_v1.c - see cgroup_v1.h */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "cgroup_v1.h"
#include "cleanup.h"
#include "sys.h"

#define RUN_PREFIX "nsrun-"
#define USUAL_MOUNT "/sys/fs/cgroup/memory"

/* The v1 memory hierarchy's mount point: /sys/fs/cgroup/memory when statfs(2) says
 * it is a cgroup v1 file system with memory files, else the first "cgroup" entry
 * of /proc/self/mounts with the memory option. */
static char *memory_mount(void)
{
	static const char *const usual[] = { USUAL_MOUNT };

	return cgroup_find_mount(usual, 1, CGROUP_SUPER_MAGIC, "memory.limit_in_bytes", "cgroup", "memory");
}

/* This process's memory cgroup: the path of the "N:...memory...:/PATH" line of
 * /proc/self/cgroup (cgroups(7)). */
static char *own_memory_cgroup(void)
{
	return cgroup_own_path("memory");
}

/* SIGKILLs every task of dir until none is left (a v1 group has no cgroup.kill),
 * at most ~2 s; true when it is empty. */
static bool empty_group(const char *dir)
{
	for (int round = 0; round < 200; round++) {
		_cleanup_free_ char *procs = read_file_in(dir, "cgroup.procs");
		if (!procs || !procs[0])
			return true;
		for (char *p = procs; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p))
			kill((pid_t)atoi(p), SIGKILL);
		usleep(10000);
	}
	return false;
}

/* Removes the groups of supervisors that are gone: nsrun-<pid>-<n> with no such pid. */
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
		if (snprintf(path, sizeof(path), "%s/%s", parent, de->d_name) >= (int)sizeof(path))
			continue;
		if (empty_group(path))
			rmdir(path);
	}
}

/* The parent group, or NULL with why set. */
static char *choose_parent(const struct nsrun_config *cfg, const char *mnt, char *why, size_t why_len)
{
	_cleanup_free_ char *own = NULL;
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
	own = own_memory_cgroup();
	if (!own) {
		snprintf(why, why_len, "this process is in no cgroup v1 memory group (/proc/self/cgroup)");
		return NULL;
	}
	if (asprintf(&parent, "%s%s", mnt, strcmp(own, "/") ? own : "") < 0)
		return NULL;
	if (access(parent, W_OK) == 0)
		return parent;
	snprintf(why, why_len, "the cgroup v1 memory group %s is not writable by uid %u", parent, (unsigned)geteuid());
	free(parent);
	return NULL;
}

static int write_limits(const struct nsrun_config *cfg, struct cgroup_v1 *cg, struct nsrun_error *err);

/* cfg->cgroups_path as the run's group, below the hierarchy's root or nsrun's own
 * memory group (runc's fs manager).  One that cannot be made: none, why_not says
 * why; one with processes in it already: an error. */
static int prepare_at_path(const struct nsrun_config *cfg, const char *mnt, struct cgroup_v1 *cg,
			   struct nsrun_error *err)
{
	_cleanup_free_ char *own = own_memory_cgroup();
	char *path = cgroup_oci_dir(mnt, own, cfg->cgroups_path);
	size_t kept;

	if (!path)
		return error_set(err, errno, "linux.cgroupsPath \"%s\"", cfg->cgroups_path);
	if (cgroup_make_dirs(path, strlen(mnt), &kept) < 0) {
		snprintf(cg->why_not, sizeof(cg->why_not), "linux.cgroupsPath: mkdir %.*s: %s", (int)kept, path,
			 strerror(errno));
		free(path);
		return 0;
	}
	if (kept == strlen(path)) {
		_cleanup_free_ char *procs = read_file_in(path, "cgroup.procs");
		if (!procs || procs[0]) {
			error_set(err, 0, "linux.cgroupsPath \"%s\": the cgroup v1 memory group %s holds processes "
				  "already (a container's cgroup is its own: runc refuses it too)", cfg->cgroups_path, path);
			free(path);
			return -1;
		}
	}
	cg->path = path;
	cg->kept_len = kept;
	return write_limits(cfg, cg, err);
}

int cgroup_v1_prepare(const struct nsrun_config *cfg, struct cgroup_v1 *cg, struct nsrun_error *err)
{
	_cleanup_free_ char *mnt = memory_mount();
	_cleanup_free_ char *parent = NULL;
	struct timespec ts;

	memset(cg, 0, sizeof(*cg));
	if (!mnt) {
		snprintf(cg->why_not, sizeof(cg->why_not), "no cgroup v1 memory hierarchy is mounted");
		return 0;
	}
	if (cfg->cgroups_path)
		return prepare_at_path(cfg, mnt, cg, err);
	parent = choose_parent(cfg, mnt, cg->why_not, sizeof(cg->why_not));
	if (!parent)
		return 0;
	remove_stale(parent);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (asprintf(&cg->path, "%s/" RUN_PREFIX "%d-%lld%09ld", parent, (int)getpid(), (long long)ts.tv_sec,
		     ts.tv_nsec) < 0) {
		cg->path = NULL;
		return error_set(err, ENOMEM, "cgroup v1 path");
	}
	if (mkdir(cg->path, 0755) < 0) {
		snprintf(cg->why_not, sizeof(cg->why_not), "mkdir %s: %s", cg->path, strerror(errno));
		free(cg->path);
		cg->path = NULL;
		return 0;
	}
	return write_limits(cfg, cg, err);
}

/* memory.limit_in_bytes and memsw of cfg into the group; on failure it is removed. */
static int write_limits(const struct nsrun_config *cfg, struct cgroup_v1 *cg, struct nsrun_error *err)
{
	char v[64];

	snprintf(v, sizeof(v), "%llu", (unsigned long long)cfg->limits.memory_bytes);
	if (write_file_in(cg->path, "memory.limit_in_bytes", v) < 0) {
		int saved = errno;
		cgroup_v1_destroy(cg);
		return error_set(err, saved, "write memory.limit_in_bytes of the cgroup v1 memory group");
	}
	/* memory plus swap; the file exists only where swap is accounted (memory.rst 2.4) */
	if (cfg->limits.memory_swap_bytes == UINT64_MAX)
		snprintf(v, sizeof(v), "-1");
	else
		snprintf(v, sizeof(v), "%llu", (unsigned long long)(cfg->limits.memory_swap_bytes > cfg->limits.memory_bytes ?
								   cfg->limits.memory_swap_bytes : cfg->limits.memory_bytes));
	if (write_file_in(cg->path, "memory.memsw.limit_in_bytes", v) < 0 && errno != ENOENT) {
		int saved = errno;
		cgroup_v1_destroy(cg);
		return error_set(err, saved, "write memory.memsw.limit_in_bytes of the cgroup v1 memory group");
	}
	return 0;
}

int cgroup_v1_enter(const struct cgroup_v1 *cg, pid_t pid, struct nsrun_error *err)
{
	return cg->path ? cgroup_dir_enter(cg->path, pid, err) : 0;
}

uint64_t cgroup_v1_oom_kills(const struct cgroup_v1 *cg)
{
	_cleanup_free_ char *text = cg->path ? read_file_in(cg->path, "memory.oom_control") : NULL;
	const char *p = text ? strstr(text, "oom_kill ") : NULL;

	return p ? strtoull(p + strlen("oom_kill "), NULL, 10) : 0;
}

uint64_t cgroup_v1_peak_bytes(const struct cgroup_v1 *cg)
{
	_cleanup_free_ char *text = cg->path ? read_file_in(cg->path, "memory.max_usage_in_bytes") : NULL;

	return text ? strtoull(text, NULL, 10) : 0;
}

void cgroup_v1_destroy(struct cgroup_v1 *cg)
{
	if (!cg->path)
		return;
	empty_group(cg->path);
	rmdir(cg->path);
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
