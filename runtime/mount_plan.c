/* mount_plan.c - see mount_plan.h.  Pure: no syscalls. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

#include "mount_plan.h"

/* Docker's masked and read-only /proc paths (moby oci/defaults.go lists the same set). */
static const char *const proc_mask_files[] = {
	"/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list",
	"/proc/timer_stats", "/proc/sched_debug", "/proc/interrupts",
};
static const char *const proc_mask_dirs[] = { "/proc/acpi", "/proc/asound", "/proc/scsi", "/proc/driver" };
static const char *const proc_readonly[] = {
	"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger",
};

/* written by nsrun for every container (etc_files.h), as Docker does */
static const char *const etc_files[] = { "/etc/hosts", "/etc/hostname" };

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

static struct mount_op *push(struct mount_plan *plan, size_t *cap, enum mount_op_kind kind,
			     const char *target, unsigned long flags)
{
	if (plan->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 32;
		struct mount_op *ops = realloc(plan->ops, ncap * sizeof(*ops));
		if (!ops)
			return NULL;
		plan->ops = ops;
		*cap = ncap;
	}
	struct mount_op *op = &plan->ops[plan->n++];
	*op = (struct mount_op){ .kind = kind, .target = target, .source_index = -1, .flags = flags,
				 .in_image = true };
	return op;
}

static size_t depth(const char *path)
{
	size_t d = 0;
	for (const char *p = path; *p; p++)
		d += *p == '/';
	return d;
}

/* The target of entry i of the volumes (i < n_mounts) and then the --tmpfs mounts. */
static const char *target_of(const struct nsrun_config *cfg, size_t i)
{
	return i < cfg->n_mounts ? cfg->mounts[i].destination : cfg->tmpfs[i - cfg->n_mounts].destination;
}

/* The order of entry i among the volumes and tmpfs mounts: an OCI config's in its
 * listed order (config.md "Mounts": "MUST mount entries in the listed order"), before
 * any other; the others parents first, so a nested target lies in its parent (a
 * caller's -v and --tmpfs come in any order). */
static bool mounts_before(const struct nsrun_config *cfg, size_t a, size_t b)
{
	unsigned la = a < cfg->n_mounts ? cfg->mounts[a].listed : cfg->tmpfs[a - cfg->n_mounts].listed;
	unsigned lb = b < cfg->n_mounts ? cfg->mounts[b].listed : cfg->tmpfs[b - cfg->n_mounts].listed;

	if (la && lb)
		return la < lb;
	if (la || lb)
		return la != 0;
	return depth(target_of(cfg, a)) < depth(target_of(cfg, b));
}

/* True if path is dir or below it. */
static bool is_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (strcmp(dir, "/") == 0)
		return true;
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* True if an op already mounts at target (so it exists once the plan ran). */
static bool has_target(const struct mount_plan *plan, const char *target)
{
	if (strcmp(target, "/") == 0)
		return true;
	for (size_t i = 0; i < plan->n; i++)
		if (strcmp(plan->ops[i].target, target) == 0)
			return true;
	return false;
}

/* Decides where op's mount point lives: in the last earlier tmpfs or volume that
 * holds it (a tmpfs of ours: it may be created; a volume: it must exist there, it
 * is the host's), else in the image (created in an overlay if the image lacks it). */
static void place(struct mount_plan *plan, struct mount_op *op, enum mount_create create)
{
	const struct mount_op *holder = NULL;

	for (size_t i = 0; i + 1 < plan->n; i++) {
		const struct mount_op *o = &plan->ops[i];
		if ((o->kind == MOP_TMPFS || o->kind == MOP_BIND) && is_under(op->target, o->target) &&
		    strcmp(op->target, o->target) != 0)
			holder = o;
	}
	op->in_image = holder == NULL;
	op->create = (!holder || holder->kind == MOP_TMPFS) ? create : CREATE_NONE;
}

int mount_plan_build(const struct nsrun_config *cfg, struct mount_plan *plan, struct nsrun_error *err)
{
	size_t cap = 0;
	size_t *order = NULL;
	struct mount_op *op;
	const unsigned long fsflags = MS_NOSUID | MS_NODEV;

	memset(plan, 0, sizeof(*plan));
	if (!push(plan, &cap, MOP_ROOTFS, "/", MS_RDONLY | fsflags))
		goto oom;
	if (!(op = push(plan, &cap, MOP_PROC, "/proc", fsflags | MS_NOEXEC)))
		goto oom;
	op->create = CREATE_DIR;
	for (size_t i = 0; i < N_ELEMS(proc_mask_files); i++)
		if (!(op = push(plan, &cap, MOP_MASK_FILE, proc_mask_files[i], MS_BIND)))
			goto oom;
		else
			op->in_image = false;
	for (size_t i = 0; i < N_ELEMS(proc_mask_dirs); i++)
		if (!(op = push(plan, &cap, MOP_MASK_DIR, proc_mask_dirs[i], MS_RDONLY | fsflags | MS_NOEXEC)))
			goto oom;
		else
			op->in_image = false;
	for (size_t i = 0; i < N_ELEMS(proc_readonly); i++)
		if (!(op = push(plan, &cap, MOP_READONLY, proc_readonly[i], MS_BIND | MS_RDONLY)))
			goto oom;
		else
			op->in_image = false;
	if (!(op = push(plan, &cap, MOP_DEV, "/dev", MS_NOSUID | MS_NOEXEC)))
		goto oom;
	op->create = CREATE_DIR;
	snprintf(op->data, sizeof(op->data), "mode=0755,size=65536");
	if (!(op = push(plan, &cap, MOP_TMPFS, "/tmp", fsflags)))
		goto oom;
	op->create = CREATE_DIR;
	snprintf(op->data, sizeof(op->data), "mode=1777,size=%llu,nr_inodes=%llu",
		 (unsigned long long)cfg->limits.tmpfs_bytes, NSRUN_TMPFS_INODES(cfg->limits.tmpfs_bytes));
	if (cfg->mode == NSRUN_MODE_FILE) {
		if (!(op = push(plan, &cap, MOP_TMPFS, NSRUN_WORKDIR, fsflags)))
			goto oom;
		op->create = CREATE_DIR;
		snprintf(op->data, sizeof(op->data), "mode=0755,size=65536");
	}
	/* volumes, FILE and --tmpfs in mounts_before's order (a stable insertion sort);
	 * order[k] < n_mounts is a volume, the rest are tmpfs */
	size_t n_all = cfg->n_mounts + cfg->n_tmpfs;
	order = calloc(n_all ? n_all : 1, sizeof(*order));
	if (!order)
		goto oom;
	for (size_t i = 0; i < n_all; i++) {
		size_t j = i;
		while (j > 0 && mounts_before(cfg, i, order[j - 1])) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = i;
	}
	for (size_t k = 0; k < n_all; k++) {
		if (order[k] >= cfg->n_mounts) {
			const struct nsrun_tmpfs *t = &cfg->tmpfs[order[k] - cfg->n_mounts];
			if (!(op = push(plan, &cap, MOP_TMPFS, t->destination, fsflags)))
				goto oom;
			snprintf(op->data, sizeof(op->data), "mode=%04o,size=%llu,nr_inodes=%llu", t->mode,
				 (unsigned long long)t->size_bytes, NSRUN_TMPFS_INODES(t->size_bytes));
			op->copy_up = t->copy_up;
			place(plan, op, CREATE_DIR);
			continue;
		}
		const struct nsrun_mount *m = &cfg->mounts[order[k]];
		unsigned long flags = MS_BIND | fsflags | (m->rw ? 0 : MS_RDONLY);
		if (!(op = push(plan, &cap, MOP_BIND, m->destination, flags)))
			goto oom;
		op->source_index = (int)order[k];
		place(plan, op, m->is_file_arg ? CREATE_FILE : CREATE_DIR);
	}
	free(order);
	order = NULL;
	for (size_t i = 0; i < N_ELEMS(etc_files); i++) {
		bool given = false;
		/* a volume at the file or above it is the caller's own /etc: docker leaves it too */
		for (size_t j = 0; j < cfg->n_mounts; j++)
			given |= is_under(etc_files[i], cfg->mounts[j].destination);
		if (given)
			continue;
		if (!(op = push(plan, &cap, MOP_ETC_FILE, etc_files[i], MS_BIND | MS_RDONLY | fsflags | MS_NOEXEC)))
			goto oom;
		place(plan, op, CREATE_FILE);
	}
	if (cfg->process.cwd && !has_target(plan, cfg->process.cwd)) {
		if (!(op = push(plan, &cap, MOP_WORKDIR, cfg->process.cwd, 0)))
			goto oom;
		place(plan, op, CREATE_DIR);
	}
	if (cfg->mode == NSRUN_MODE_FILE) {
		if (!(op = push(plan, &cap, MOP_REMOUNT_RO, NSRUN_WORKDIR, MS_RDONLY)))
			goto oom;
		op->in_image = false;
	}
	/* an OCI config's own masks and read-only paths, last: over the volumes too, as
	 * runtime-spec's config-linux.md (masked paths, readonly paths) asks; in_image
	 * false: a missing path is skipped when mounting, not made */
	for (size_t i = 0; i < cfg->masked_paths.n; i++)
		if (!(op = push(plan, &cap, MOP_MASK_FILE, cfg->masked_paths.v[i], MS_BIND)))
			goto oom;
		else
			op->in_image = false;
	for (size_t i = 0; i < cfg->readonly_paths.n; i++)
		if (!(op = push(plan, &cap, MOP_READONLY, cfg->readonly_paths.v[i], MS_BIND | MS_RDONLY)))
			goto oom;
		else
			op->in_image = false;
	/* /tmp, /dev, /proc: in the image unless a volume put them elsewhere (rejected by config) */
	return 0;
oom:
	free(order);
	mount_plan_free(plan);
	return error_set(err, ENOMEM, "build the mount plan");
}

const char *mount_op_kind_name(enum mount_op_kind kind)
{
	switch (kind) {
	case MOP_ROOTFS: return "rootfs";
	case MOP_PROC: return "proc";
	case MOP_MASK_FILE: return "mask-file";
	case MOP_MASK_DIR: return "mask-dir";
	case MOP_READONLY: return "readonly";
	case MOP_DEV: return "dev";
	case MOP_TMPFS: return "tmpfs";
	case MOP_BIND: return "bind";
	case MOP_WORKDIR: return "workdir";
	case MOP_REMOUNT_RO: return "remount-ro";
	case MOP_ETC_FILE: return "etc-file";
	}
	return "unknown";
}

size_t mount_plan_format(const struct mount_plan *plan, const struct nsrun_config *cfg, char *buf, size_t len)
{
	size_t o = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < plan->n; i++) {
		const struct mount_op *op = &plan->ops[i];
		const char *src = "-";
		int n;
		if (op->kind == MOP_BIND)
			src = cfg->mounts[op->source_index].source;
		n = snprintf(o < len ? buf + o : NULL, o < len ? len - o : 0, "%s %s %s%s%s%s%s\n",
			     mount_op_kind_name(op->kind), op->target, src,
			     op->flags & MS_RDONLY ? " ro" : " rw",
			     op->data[0] ? " " : "", op->data,
			     op->create == CREATE_DIR ? " mkdir" : op->create == CREATE_FILE ? " mkfile" : "");
		if (n > 0)
			o += (size_t)n;
	}
	return o;
}

void mount_plan_free(struct mount_plan *plan)
{
	free(plan->ops);
	plan->ops = NULL;
	plan->n = 0;
}
