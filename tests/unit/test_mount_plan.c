/* Unit tests of the mount plan (mount_plan.c): order, flags and where mount points may be made. */
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

#include "config.h"
#include "mount_plan.h"
#include "tap.h"

static const struct mount_op *find(const struct mount_plan *p, enum mount_op_kind kind, const char *target)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->ops[i].kind == kind && strcmp(p->ops[i].target, target) == 0)
			return &p->ops[i];
	return NULL;
}

static long idx(const struct mount_plan *p, const struct mount_op *op)
{
	return op ? (long)(op - p->ops) : -1;
}

int main(void)
{
	struct tap t = { 0 };
	struct nsrun_config cfg;
	struct nsrun_error err = { 0 };
	struct mount_plan plan;
	const struct mount_op *root, *proc, *tmp, *work, *file, *vol, *nested, *ro, *wd;
	char buf[4096];

	config_init(&cfg, &err);
	cfg.mode = NSRUN_MODE_FILE;
	cfg.process.cwd = strdup("/work");
	config_add_volume(&cfg, "/tmp:/data/in/deep", &err);
	config_add_volume(&cfg, "/var/tmp:/data:rw", &err);
	cfg.mounts = realloc(cfg.mounts, (cfg.n_mounts + 1) * sizeof(*cfg.mounts));
	cfg.mounts[cfg.n_mounts++] = (struct nsrun_mount){ .source = strdup("/etc/hostname"),
							   .destination = strdup("/work/code.py"),
							   .is_file_arg = true };
	tap_ok(&t, mount_plan_build(&cfg, &plan, &err) == 0, "plan builds");
	root = find(&plan, MOP_ROOTFS, "/");
	proc = find(&plan, MOP_PROC, "/proc");
	tmp = find(&plan, MOP_TMPFS, "/tmp");
	work = find(&plan, MOP_TMPFS, "/work");
	file = find(&plan, MOP_BIND, "/work/code.py");
	vol = find(&plan, MOP_BIND, "/data");
	nested = find(&plan, MOP_BIND, "/data/in/deep");
	ro = find(&plan, MOP_REMOUNT_RO, "/work");
	wd = find(&plan, MOP_WORKDIR, "/work");
	tap_int(&t, "the rootfs comes first", 0, idx(&plan, root));
	tap_ok(&t, root && (root->flags & (MS_RDONLY | MS_NOSUID | MS_NODEV)) == (MS_RDONLY | MS_NOSUID | MS_NODEV),
	       "the rootfs is read-only, nosuid, nodev");
	tap_ok(&t, proc && idx(&plan, proc) > 0 && (proc->flags & MS_NOEXEC), "/proc after it, noexec");
	tap_ok(&t, find(&plan, MOP_MASK_FILE, "/proc/kcore") != NULL, "/proc/kcore is masked");
	tap_ok(&t, find(&plan, MOP_READONLY, "/proc/sys") != NULL, "/proc/sys is read-only");
	tap_ok(&t, find(&plan, MOP_READONLY, "/proc/sysrq-trigger") != NULL, "/proc/sysrq-trigger is read-only");
	tap_ok(&t, find(&plan, MOP_DEV, "/dev") != NULL, "a /dev of ours");
	tap_ok(&t, tmp && strstr(tmp->data, "size=67108864") && (tmp->flags & MS_NOSUID) && (tmp->flags & MS_NODEV),
	       "/tmp is a 64 MiB tmpfs, nosuid nodev");
	tap_ok(&t, work && file && idx(&plan, work) < idx(&plan, file), "FILE mode: tmpfs /work before the file");
	tap_ok(&t, file && (file->flags & MS_RDONLY) && file->create == CREATE_FILE && !file->in_image,
	       "the FILE is read-only, made as a file in our tmpfs");
	tap_ok(&t, vol && nested && idx(&plan, vol) < idx(&plan, nested), "volumes are mounted parents first");
	tap_ok(&t, vol && !(vol->flags & MS_RDONLY) && vol->in_image && vol->create == CREATE_DIR,
	       "a rw volume is writable; its mount point may be made in the image's overlay");
	tap_ok(&t, nested && (nested->flags & MS_RDONLY) && nested->create == CREATE_NONE && !nested->in_image,
	       "a volume inside another is read-only by default and never made in the host's directory");
	tap_ok(&t, ro && file && idx(&plan, ro) > idx(&plan, file), "/work becomes read-only after its mount points");
	tap_ok(&t, wd == NULL, "the workdir /work is the tmpfs mount point: nothing more to make");
	tap_ok(&t, mount_plan_format(&plan, &cfg, buf, sizeof(buf)) > 0 && strstr(buf, "bind /data /var/tmp rw"),
	       "the plan prints");
	mount_plan_free(&plan);

	free(cfg.process.cwd);
	cfg.process.cwd = strdup("/data/out");
	tap_ok(&t, mount_plan_build(&cfg, &plan, &err) == 0, "plan with a workdir in a volume builds");
	wd = find(&plan, MOP_WORKDIR, "/data/out");
	tap_ok(&t, wd && wd->create == CREATE_NONE && !wd->in_image,
	       "a workdir inside a volume must exist there: never made in the host's directory");
	mount_plan_free(&plan);
	free(cfg.process.cwd);
	cfg.process.cwd = strdup("/srv/app");
	tap_ok(&t, mount_plan_build(&cfg, &plan, &err) == 0, "plan with a workdir in the image builds");
	wd = find(&plan, MOP_WORKDIR, "/srv/app");
	tap_ok(&t, wd && wd->create == CREATE_DIR && wd->in_image, "a workdir in the image may be made (overlay)");
	mount_plan_free(&plan);

	tap_ok(&t, config_add_volume(&cfg, "relative-no-colon", &err) < 0, "a volume without : is rejected");
	tap_ok(&t, config_add_volume(&cfg, "/tmp:/x:rx", &err) < 0 && strstr(err.msg, "unknown mode"),
	       "a volume with an unknown mode is rejected");
	tap_ok(&t, config_add_volume(&cfg, "/tmp:/", &err) < 0, "a volume over / is rejected");
	tap_ok(&t, config_add_volume(&cfg, "/tmp:x", &err) < 0, "a relative container path is rejected");
	config_free(&cfg);
	return tap_done(&t);
}
