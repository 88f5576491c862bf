/* cgroup_v1.h - the memory limit through the cgroup v1 memory controller, where a
 * host mounts it and nsrun may write it (as root on a hybrid v1/v2 host, where the
 * v2 tree has no memory controller): Documentation/admin-guide/cgroup-v1/memory.rst.
 *
 * The run's group is made below nsrun's own memory cgroup (/proc/self/cgroup's
 * "memory" line; --cgroup-parent instead, if given; an OCI linux.cgroupsPath's
 * is that group itself, cgroup.h's cgroup_oci_dir), so it stays inside whatever
 * limits the caller is under; memory.limit_in_bytes and, where swap is accounted,
 * memory.memsw.limit_in_bytes are written; the container's init is moved in before
 * it runs anything.  v1 has no memory.oom.group: the kernel's OOM killer ends one
 * process, and the supervisor (memwatch.c) ends the whole container when
 * memory.oom_control's oom_kill counter moves.  Page cache, tmpfs, memfd and shared
 * memory are charged to the group, as in v2.
 */
#ifndef NSRUN_CGROUP_V1_H
#define NSRUN_CGROUP_V1_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "error.h"

struct cgroup_v1 {
	char *path;             /* the run's memory cgroup, absolute host path; NULL: none */
	char why_not[256];      /* why there is none */
	size_t kept_len;        /* path is cfg->cgroups_path's (cgroup_oci_dir: relative to nsrun's
				 * own memory group): the length of its prefix that was there
				 * before; 0: nsrun's own name */
};

/* Makes the run's group in the v1 memory hierarchy and writes the limits of cfg
 * (cfg->limits.memory_bytes, memory_swap_bytes).  No usable hierarchy (none
 * mounted, not writable by the caller) is not an error: cg->path stays NULL and
 * why_not says why.  Returns 0, or -1 with err when the group was made but its
 * limits could not be written (it is removed). */
int cgroup_v1_prepare(const struct nsrun_config *cfg, struct cgroup_v1 *cg, struct nsrun_error *err);

/* Moves pid (and its later children) into the group (cgroup.procs). Returns 0 or
 * -1 with err. */
int cgroup_v1_enter(const struct cgroup_v1 *cg, pid_t pid, struct nsrun_error *err);

/* memory.oom_control's oom_kill (Linux 4.13): processes the OOM killer ended in the
 * group; 0 when unknown. */
uint64_t cgroup_v1_oom_kills(const struct cgroup_v1 *cg);

/* memory.max_usage_in_bytes, 0 when unknown. */
uint64_t cgroup_v1_peak_bytes(const struct cgroup_v1 *cg);

/* Kills what is left in the group, waits (at most 2 s) until it is empty, removes
 * it. */
void cgroup_v1_destroy(struct cgroup_v1 *cg);

#endif
