/* Unit tests of image_find_interpreter (image.c): the interpreter is looked up
 * inside the image's tree as the container will see it, links resolved inside
 * it, never on the host.  Builds small trees in a temporary directory. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "image.h"
#include "tap.h"

static char root[PATH_MAX];

static void mk(const char *rel, int mode)
{
	char p[PATH_MAX + 64];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, mode);
	if (fd >= 0)
		close(fd);
	chmod(p, (mode_t)mode);
}

static void mkd(const char *rel)
{
	char p[PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	mkdir(p, 0755);
}

static void ln(const char *target, const char *rel)
{
	char p[PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	if (symlink(target, p) < 0)
		perror(p);
}

/* Looks cmd up with PATH path (NULL: the defaults); returns 0 or -1, found/err filled. */
static int find(const char *cmd, const char *path, int volume, char *found, struct nsrun_error *err)
{
	struct nsrun_config cfg;
	char kv[256];
	int rc;

	config_init(&cfg, err);
	config_env_defaults(&cfg, err);
	if (path) {
		snprintf(kv, sizeof(kv), "PATH=%s", path);
		strv_setenv(&cfg.process.env, kv);
	}
	cfg.image = strdup("t");
	cfg.rootfs = strdup(root);
	cfg.process.cwd = strdup("/");
	strv_push(&cfg.process.args, cmd);
	if (volume) {
		cfg.mounts = calloc(1, sizeof(*cfg.mounts));
		cfg.mounts[0].source = strdup("/");
		cfg.mounts[0].destination = strdup("/opt/vol");
		cfg.n_mounts = 1;
	}
	found[0] = '\0';
	rc = image_find_interpreter(&cfg, found, PATH_MAX, err);
	config_free(&cfg);
	return rc;
}

static void found_as(struct tap *t, const char *desc, const char *cmd, const char *path, const char *want)
{
	struct nsrun_error err = { 0 };
	char found[PATH_MAX];

	tap_ok(t, find(cmd, path, 0, found, &err) == 0, desc);
	tap_str(t, "  found as", want, found);
}

static void refused(struct tap *t, const char *desc, const char *cmd, const char *path, const char *msg)
{
	struct nsrun_error err = { 0 };
	char found[PATH_MAX];

	tap_ok(t, find(cmd, path, 0, found, &err) < 0, desc);
	tap_str(t, "  with its message", msg, err.msg);
}

int main(void)
{
	struct tap t = { 0 };
	struct nsrun_error err = { 0 };
	char found[PATH_MAX];
	const char *tmp = getenv("TMPDIR");

	snprintf(root, sizeof(root), "%s/nsrun-test-image.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(root)) {
		printf("1..0 # SKIP mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	mkd("usr");
	mkd("usr/bin");
	mkd("bin");
	mkd("etc");
	mk("usr/bin/python3", 0755);
	mk("usr/bin/data", 0644);
	ln("python3", "usr/bin/py-rel");            /* inside: relative */
	ln("/usr/bin/python3", "bin/py-abs");       /* inside: absolute, resolved in the tree */
	ln("../../../../../../../../../usr/bin/python3", "bin/py-up"); /* ".." stops at the tree's root */
	/* links whose target exists on the host but not in the image */
	ln("/bin/sh", "bin/host-sh");
	ln("../../../../../../../../../bin/sh", "bin/host-sh-up");
	ln("loop-b", "bin/loop-a");
	ln("loop-a", "bin/loop-b");

	found_as(&t, "a program on the default PATH is found", "python3", NULL, "/usr/bin/python3");
	found_as(&t, "an absolute interpreter path", "/usr/bin/python3", NULL, "/usr/bin/python3");
	found_as(&t, "a relative link inside the image", "py-rel", NULL, "/usr/bin/py-rel");
	found_as(&t, "an absolute link, resolved inside the image", "/bin/py-abs", NULL, "/bin/py-abs");
	found_as(&t, "a link climbing past the root stays inside", "py-up", "/bin", "/bin/py-up");
	refused(&t, "control: a link to the host's /bin/sh (the image has none) is not the host's",
		"/bin/host-sh", NULL,
		"image \"t\": interpreter \"/bin/host-sh\" is not an executable file inside the image (No such file or directory)");
	refused(&t, "a link climbing out to the host's /bin/sh is not followed out", "host-sh-up", "/bin",
		"image \"t\": interpreter \"host-sh-up\" is not an executable file on the image's PATH (1 directories looked in, inside the image)");
	refused(&t, "a non-executable file is not an interpreter", "data", NULL,
		"image \"t\": interpreter \"data\" is not an executable file on the image's PATH (6 directories looked in, inside the image)");
	refused(&t, "a directory is not an interpreter", "/usr/bin", NULL,
		"image \"t\": interpreter \"/usr/bin\" is not an executable file inside the image (Permission denied)");
	refused(&t, "a symlink loop ends", "/bin/loop-a", NULL,
		"image \"t\": interpreter \"/bin/loop-a\" is not an executable file inside the image (Too many levels of symbolic links)");
	tap_ok(&t, find("host-sh", "/bin", 0, found, &err) < 0 && err.hint && strstr(err.hint, "inside the image"),
	       "the refusal's hint says links stay inside the image");
	/* 3000 PATH entries: at most EXEC_CANDIDATES_MAX are looked in, as exec does */
	{
		size_t n = 3000 * 6 + 16;
		char *p = malloc(n), *o = p;
		for (int i = 0; p && i < 3000; i++)
			o += sprintf(o, "%s/x%d", i ? ":" : "", i % 100);
		if (p) {
			refused(&t, "a PATH of 3000 entries: the first 32 are looked in", "python3", p,
				"image \"t\": interpreter \"python3\" is not an executable file on the image's PATH (32 directories looked in, inside the image)");
			free(p);
		}
	}
	tap_ok(&t, find("/opt/vol/bin/python3", NULL, 1, found, &err) == 0 && strcmp(found, "/opt/vol/bin/python3") == 0,
	       "a path under a volume is the volume's: not judged");
	tap_ok(&t, find("/tmp/python3", NULL, 0, found, &err) == 0, "a path under nsrun's own /tmp: not judged");
	if (tap_remove_tree(root) < 0)
		return 2;
	return tap_done(&t);
}
