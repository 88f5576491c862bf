/* cgroup.h - cgroup v2 limits for a run (Documentation/admin-guide/cgroup-v2.rst).
 *
 * The supervisor finds a cgroup it may use, in this order, each found by probing
 * files: --cgroup-parent (root), else its own cgroup (root, or a subtree delegated
 * to the caller: writable by it, as systemd's Delegate=yes makes it), else, as
 * root, a "nsrun" cgroup at the root of the hierarchy, else a scope with
 * Delegate=yes that the caller's systemd manager makes for nsrun and moves it into
 * (cgroup_systemd.h), used as a delegated cgroup.  It creates one cgroup per
 * run there (nsrun-<pid>-<n>), enables the controllers the limits need, writes the
 * limits, and the container is cloned into it (CLONE_INTO_CGROUP).  Where nothing
 * is delegated, the run has no cgroup and the limits fall back to rlimits; why is
 * recorded and reported.  At the end: cgroup.kill, wait for "populated 0", read the
 * counters, rmdir.  A run whose supervisor died leaves its cgroup behind: the next
 * run in the same parent removes those whose owner is gone.
 */
#ifndef NSRUN_CGROUP_H
#define NSRUN_CGROUP_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "error.h"

struct cgroup_run {
	char *path;             /* the run's cgroup, absolute host path; NULL: none */
	int dir_fd;             /* O_RDONLY|O_DIRECTORY fd of it for clone3, or -1 */
	bool memory;            /* memory.max written (the memory controller is ours) */
	bool pids;              /* pids.max written */
	bool cpu;               /* cpu.max written */
	char scope[64];         /* the systemd scope nsrun is in, when the cgroup came from one; "" */
	char why_not[256];      /* why there is no cgroup, or why a controller is missing */
	char scope_note[256];   /* for --debug: the address the scope came through, or why no
				 * systemd manager gave one; "" when none was asked */
	size_t kept_len;        /* path is cfg->cgroups_path's: the length of its prefix that
				 * existed before (the rest is removed at the end); 0: nsrun's own */
	char path_why[256];     /* why cfg->cgroups_path is not the run's cgroup; "" when it is
				 * (or none was asked) */
};

struct cgroup_stats {
	uint64_t oom_kill;      /* memory.events: processes the OOM killer killed */
	uint64_t oom_group_kill;
	uint64_t memory_peak_bytes;     /* memory.peak, 0 when the kernel has none */
	uint64_t pids_peak;             /* pids.peak */
	uint64_t cpu_usage_us;          /* cpu.stat usage_usec */
	uint64_t cpu_user_us;
	uint64_t cpu_system_us;
};

/* Where an OCI linux.cgroupsPath puts the run's cgroup in the hierarchy mounted at
 * mnt (config-linux.md "Cgroups Path"): an absolute path below the hierarchy's
 * root, a relative one below base (runc's meaning: on cgroup v2 the parent of the
 * runtime's own cgroup, on v1 the runtime's own cgroup of that hierarchy).  The
 * path is cleaned as runc's utils.CleanPath: empty and "." names dropped, ".."
 * never above the root (so never outside mnt, nor above base).  Returns the
 * absolute host path, malloc'd, or NULL (ENOMEM, or ENAMETOOLONG). */
char *cgroup_oci_dir(const char *mnt, const char *base, const char *cgroups_path);

/* Makes path and each missing directory above it below its first base_len
 * characters (mkdir(2), 0755); *kept_len is the length of the prefix that existed
 * (strlen(path): all of it).  Returns 0, or -1 with errno and *kept_len the length
 * of the directory that could not be made, having removed what it made. */
int cgroup_make_dirs(const char *path, size_t base_len, size_t *kept_len);

/* Removes path's directories (rmdir(2)) from the last up to its first kept_len
 * characters: those cgroup_make_dirs made. */
void cgroup_remove_dirs(const char *path, size_t kept_len);

/* Finds the cgroup2 mount (statfs of the usual places, else /proc/self/mounts), chooses a
 * parent, removes stale runs there, creates the run's cgroup and writes the limits
 * of cfg.  With cfg->cgroups_path the run's cgroup is that one (cgroup_oci_dir),
 * made with its parents and the controllers enabled down to it, unless it cannot be
 * made (path_why says why; then as without it); one that exists already with
 * processes in it is an error (as runc's).  No usable cgroup is not an error:
 * cg->path stays NULL and why_not says why.  Returns 0, or -1 with err when a cgroup was usable but writing it failed. */
int cgroup_prepare(const struct nsrun_config *cfg, struct cgroup_run *cg, struct nsrun_error *err);

/* Moves pid (and its later children) into the cgroup directory dir, v2's or a v1
 * hierarchy's, by writing cgroup.procs (cgroup-v2.rst "Organizing Processes";
 * cgroup-v1/cgroups.rst 2.2).  Returns 0 or -1 with err (errno of the write). */
int cgroup_dir_enter(const char *dir, pid_t pid, struct nsrun_error *err);

/* Moves pid into the run's cgroup (cgroup.procs), for kernels without clone3.
 * Returns 0 or -1 with err. */
int cgroup_enter(const struct cgroup_run *cg, pid_t pid, struct nsrun_error *err);

/* Kills every process of the run's cgroup: cgroup.kill (Linux 5.14), else a
 * SIGKILL to each pid of cgroup.procs until it is empty. */
void cgroup_kill(const struct cgroup_run *cg);

/* Reads the counters of the run's cgroup into *st (zero when absent). */
void cgroup_read_stats(const struct cgroup_run *cg, struct cgroup_stats *st);

/* A cgroup file system's mount point, malloc'd: the first of usual[0..n) where
 * statfs(2) gives magic (and probe, a file name, exists there when not NULL),
 * else the first /proc/self/mounts entry of fstype with option (getmntent(3),
 * hasmntopt(3); NULL: any).  NULL when there is none. */
char *cgroup_find_mount(const char *const *usual, size_t n, unsigned long magic, const char *probe,
			const char *fstype, const char *option);

/* This process's cgroup path, malloc'd, from /proc/self/cgroup (cgroups(7)): v2's
 * ("0::/PATH") with controller NULL, else the v1 hierarchy's that lists
 * controller.  NULL when there is none. */
char *cgroup_own_path(const char *controller);

/* Waits (at most 2 s) until the cgroup is unpopulated, removes it, closes the fd. */
void cgroup_destroy(struct cgroup_run *cg);

#endif
