/* protected.c - see protected.h */
#include "protected.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "seccomp_cache.h"

#define CHAIN_MAX 128

struct ident {
	dev_t dev;
	ino_t ino;
};

/* A path and the identities of it (when it exists) and of its ancestors. */
struct chain {
	const char *what;
	char path[PATH_MAX];
	bool exists;                    /* ids[0] is the path itself */
	size_t n;
	struct ident ids[CHAIN_MAX];
};

static bool same(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Fills c->ids from path's deepest existing prefix up to /. */
static void chain_build(struct chain *c, const char *what, const char *path)
{
	char buf[PATH_MAX];
	_cleanup_close_ int fd = -1;
	struct stat st, up;

	memset(c, 0, sizeof(*c));
	c->what = what;
	if (!path || path[0] != '/' || snprintf(c->path, sizeof(c->path), "%s", path) >= (int)sizeof(c->path))
		return;
	snprintf(buf, sizeof(buf), "%s", path);
	c->exists = true;
	while ((fd = open(buf, O_PATH | O_CLOEXEC)) < 0) {
		char *slash = strrchr(buf, '/');

		if ((errno != ENOENT && errno != ENOTDIR) || !slash)
			return;
		c->exists = false;
		slash[slash == buf] = '\0';  /* "/a" -> "/" */
	}
	if (fstat(fd, &st) < 0)
		return;
	c->ids[c->n++] = (struct ident){ st.st_dev, st.st_ino };
	if (!S_ISDIR(st.st_mode)) {
		/* a file: go on from its directory */
		char *slash = strrchr(buf, '/');

		slash[slash == buf] = '\0';
		close(fd);
		if ((fd = open(buf, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0 || fstat(fd, &st) < 0)
			return;
		c->ids[c->n++] = (struct ident){ st.st_dev, st.st_ino };
	}
	while (c->n < CHAIN_MAX) {
		int parent = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);

		if (parent < 0)
			return;
		if (fstat(parent, &up) < 0 || same(&up, &st)) {
			close(parent);
			return;
		}
		close(fd);
		fd = parent;
		st = up;
		c->ids[c->n++] = (struct ident){ st.st_dev, st.st_ino };
	}
}

static bool chain_has(const struct chain *c, struct ident id)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->ids[i].dev == id.dev && c->ids[i].ino == id.ino)
			return true;
	return false;
}

/* Whether the volume (its chain) reaches the protected path p. */
static bool reaches(const struct chain *vol, const struct chain *p)
{
	if (!vol->exists || vol->n == 0 || p->n == 0)
		return false;
	/* the volume is p or one of p's ancestors (then p, made later, is inside it) */
	if (chain_has(p, vol->ids[0]))
		return true;
	/* the volume lies inside p */
	return p->exists && chain_has(vol, p->ids[0]);
}

int protected_check_volumes(const struct nsrun_config *cfg, const char *profiles_dir,
                            struct nsrun_error *err)
{
	static struct chain prot[4], vol;  /* large: not on the stack; the supervisor is single-threaded */
	const char *spec = cfg->security.seccomp;
	char path[PATH_MAX];
	size_t n = 0;
	ssize_t len;
	bool any_rw = false;

	for (size_t i = 0; i < cfg->n_mounts; i++)
		any_rw = any_rw || cfg->mounts[i].rw;
	if (!any_rw)
		return 0;
	if (seccomp_cache_enabled() && seccomp_cache_dir_path(path, sizeof(path)) == 0)
		chain_build(&prot[n++], "nsrun's seccomp cache", path);
	chain_build(&prot[n++], "nsrun's seccomp profiles", profiles_dir);
	if (spec && strchr(spec, '/'))
		chain_build(&prot[n++], "the seccomp profile", spec);
	len = readlink("/proc/self/exe", path, sizeof(path) - 1);
	if (len > 0) {
		path[len] = '\0';
		chain_build(&prot[n++], "the nsrun binary", path);
	}
	for (size_t i = 0; i < cfg->n_mounts; i++) {
		const struct nsrun_mount *m = &cfg->mounts[i];

		if (!m->rw)
			continue;
		chain_build(&vol, "volume", m->source);
		for (size_t k = 0; k < n; k++)
			if (reaches(&vol, &prot[k])) {
				error_set_stage(err, STAGE_CONFIG, 0,
				                "volume \"%s\" (rw) reaches %s \"%s\": a payload could change "
				                "what later runs trust", m->source, prot[k].what, prot[k].path);
				err->hint = strcmp(prot[k].what, "nsrun's seccomp cache") == 0
				                    ? "mount it :ro, bind a directory that does not hold the cache, "
				                      "or keep the cache elsewhere (XDG_CACHE_HOME=DIR) or off "
				                      "(NSRUN_SECCOMP_CACHE=0)"
				                    : "mount it :ro, or bind a directory that does not hold it";
				return -1;
			}
	}
	return 0;
}
