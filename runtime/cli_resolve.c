/* cli_resolve.c - a parsed command line made a run's whole configuration: the
 * environment's defaults, the image (image.json, its interpreter), the network's
 * files (/etc/resolv.conf, /etc/hosts), the workdir; and --debug's dump of it.
 * See cli.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "caps.h"
#include "cli.h"
#include "image.h"
#include "image_user.h"
#include "mount_plan.h"
#include "network.h"
#include "pasta.h"

/* --network pasta: names resolve as on the host (as docker copies the host's
 * resolv.conf), unless a volume already gives /etc/resolv.conf. */
static int add_resolv_conf(struct nsrun_config *cfg, struct nsrun_error *err)
{
	const char *src = pasta_resolv_conf();
	char spec[PATH_MAX + 32];

	for (size_t i = 0; i < cfg->n_mounts; i++)
		if (strcmp(cfg->mounts[i].destination, "/etc/resolv.conf") == 0)
			return 0;
	if (!src)
		return 0;
	snprintf(spec, sizeof(spec), "%s:/etc/resolv.conf:ro", src);
	return config_add_volume(cfg, spec, err);
}

int cli_resolve(struct nsrun_config *cfg, struct nsrun_error *err)
{
	/* defaults, then the image's, then -e: later ones win */
	if (config_env_defaults(cfg, err) < 0)
		return -1;
	if (cfg->image && cfg->rootfs)
		return error_set(err, 0, "--image and --rootfs: give one of them");
	/* FILE mode works in /work unless -w says otherwise; it wins over the image's workdir */
	if (!cfg->process.cwd && cfg->mode == NSRUN_MODE_FILE &&
	    !(cfg->process.cwd = strdup(NSRUN_WORKDIR)))
		return error_set(err, ENOMEM, "workdir");
	if (cfg->image) {
		if (image_resolve(cfg, err) < 0)
			return -1;
		/* the image's User is not switched to: the payload's uid stays nsrun's
		 * unless --user names one (said when none was given) */
		if (cfg->image_user && strcmp(cfg->image_user, "65534") != 0 && strcmp(cfg->image_user, "nobody") != 0 &&
		    strncmp(cfg->image_user, "65534:", 6) != 0 && !cfg->user_spec &&
		    cfg->process.uid == NSRUN_DEFAULT_UID && cfg->process.gid == NSRUN_DEFAULT_UID) {
			char user[256];
			/* the image's own string: one line, no escape sequence for the caller's terminal */
			snprintf(user, sizeof(user), "%s", cfg->image_user);
			fprintf(stderr, "nsrun: note: image \"%s\" names user \"%s\": not applied, the payload runs as "
				"uid %u (docs/images.md)\n", cfg->image, error_one_line(user), (unsigned)cfg->process.uid);
		}
	} else if (!cfg->rootfs) {
		return error_set(err, 0, "no image: use --image NAME or --rootfs DIR (installed images: nsrun images)");
	} else if (cfg->entrypoint) {
		return error_set(err, 0, "--entrypoint replaces an image's entrypoint: use it with --image (with "
				 "--rootfs, give the whole command after --)");
	} else if (cfg->mode != NSRUN_MODE_COMMAND) {
		return error_set(err, 0, "FILE and - need an image with an interpreter: use --image, or -- CMD with --rootfs");
	}
	/* --user NAME: the image's own /etc/passwd and /etc/group, before anything is made */
	if (image_user_apply(cfg, err) < 0)
		return -1;
	for (size_t i = 0; i < cfg->process.user_env.n; i++)
		if (strv_setenv(&cfg->process.env, cfg->process.user_env.v[i]) < 0)
			return error_set(err, ENOMEM, "environment");
	if (cfg->network == NSRUN_NETWORK_PASTA && cfg->isolation == NSRUN_ISOLATION_FULL &&
	    add_resolv_conf(cfg, err) < 0)
		return -1;
	/* the network's /etc/hosts, which names its members */
	if (cfg->network == NSRUN_NETWORK_NAMED && cfg->isolation == NSRUN_ISOLATION_FULL &&
	    network_add_member(cfg, err) < 0)
		return -1;
	if (!cfg->process.cwd)
		cfg->process.cwd = strdup(cfg->mode == NSRUN_MODE_FILE ? NSRUN_WORKDIR : "/");
	if (!cfg->process.cwd)
		return error_set(err, ENOMEM, "workdir");
	/* the image's interpreter, where the image is the payload's root (not in the
	 * minimal tier unprivileged: the host's tree): refused here, before anything
	 * is made, with the words of `nsrun image check` */
	if (cfg->image && cfg->mode != NSRUN_MODE_COMMAND &&
	    (cfg->isolation != NSRUN_ISOLATION_MINIMAL || geteuid() == 0)) {
		char found[PATH_MAX];
		return image_find_interpreter(cfg, found, sizeof(found), err);
	}
	return 0;
}

void cli_debug_dump(const struct nsrun_config *cfg)
{
	struct mount_plan plan;
	struct nsrun_error err;
	char buf[8192];

	fprintf(stderr, "nsrun: debug: rootfs %s\nnsrun: debug: cwd %s\n", cfg->rootfs, cfg->process.cwd);
	for (size_t i = 0; i < cfg->process.args.n; i++)
		fprintf(stderr, "nsrun: debug: argv[%zu] %s\n", i, cfg->process.args.v[i]);
	for (size_t i = 0; i < cfg->process.env.n; i++)
		fprintf(stderr, "nsrun: debug: env %s\n", cfg->process.env.v[i]);
	{
		char caps[256];
		caps_format(cfg->security.cap_add, caps, sizeof(caps));
		fprintf(stderr, "nsrun: debug: user %u:%u, userns %s, cap-add %s, root %s\n", (unsigned)cfg->process.uid,
			(unsigned)cfg->process.gid, cfg->userns == NSRUN_USERNS_SUBIDS ? "subids" : "one",
			caps[0] ? caps : "none", cfg->rootfs_writable ? "writable (tmpfs upper layer)" : "read-only");
	}
	if (mount_plan_build(cfg, &plan, &err) == 0) {
		mount_plan_format(&plan, cfg, buf, sizeof(buf));
		fprintf(stderr, "%s", buf);
		mount_plan_free(&plan);
	}
}
