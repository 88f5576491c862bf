/* Unit tests of where an OCI linux.cgroupsPath puts the container's cgroup
 * (cgroup.h's cgroup_oci_dir: runc's meaning, cleaned so that it never leaves the
 * hierarchy nor, relative, its base) and of cgroup_make_dirs / cgroup_remove_dirs
 * (what is made is what is removed), on a temporary directory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "tap.h"

static void dir_is(struct tap *t, const char *name, const char *want, const char *mnt, const char *base, const char *p)
{
	char *got = cgroup_oci_dir(mnt, base, p);

	tap_str(t, name, want, got);
	free(got);
}

static int exists(const char *base, const char *rel)
{
	char p[512];
	struct stat st;

	snprintf(p, sizeof(p), "%s%s", base, rel);
	return stat(p, &st) == 0;
}

int main(void)
{
	struct tap t = { 0 };
	char tmp[] = "/tmp/nsrun-cgpath-unit.XXXXXX", path[512];
	size_t kept = 0;

	dir_is(&t, "absolute: below the mount", "/cg/a/b", "/cg", "/own", "/a/b");
	dir_is(&t, "relative: below the base", "/cg/own/a/b", "/cg", "/own", "a/b");
	dir_is(&t, "relative with the root as base", "/cg/a", "/cg", "/", "a");
	dir_is(&t, "relative without a base (none known)", "/cg/a", "/cg", NULL, "a");
	dir_is(&t, "empty names and . dropped", "/cg/a/b", "/cg", "/", "//a/./b/");
	dir_is(&t, ".. removes the name before it", "/cg/a/c", "/cg", "/", "/a/b/../c");
	dir_is(&t, ".. never above the root (absolute)", "/cg/etc", "/cg", "/", "/../../etc");
	dir_is(&t, ".. never above the base (relative)", "/cg/own/x", "/cg", "/own", "../../x");
	dir_is(&t, "only ..: the mount itself", "/cg", "/cg", "/", "/..");
	dir_is(&t, "a name starting with dots is a name", "/cg/..a/...", "/cg", "/", "/..a/...");

	tap_ok(&t, mkdtemp(tmp) != NULL, "a temporary directory");
	snprintf(path, sizeof(path), "%s/x/y/z", tmp);
	tap_int(&t, "make_dirs x/y/z", 0, cgroup_make_dirs(path, strlen(tmp), &kept));
	tap_int(&t, "... kept: the prefix that was there", (long long)strlen(tmp), (long long)kept);
	tap_ok(&t, exists(tmp, "/x/y/z"), "... made");
	cgroup_remove_dirs(path, kept);
	tap_ok(&t, !exists(tmp, "/x"), "remove_dirs: all it made gone, up to the kept prefix");
	tap_ok(&t, exists(tmp, ""), "... the kept prefix stays");
	snprintf(path, sizeof(path), "%s/x", tmp);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/x/y", tmp);
	cgroup_make_dirs(path, strlen(tmp), &kept);
	tap_int(&t, "with x there: kept is .../x", (long long)strlen(tmp) + 2, (long long)kept);
	cgroup_remove_dirs(path, kept);
	tap_ok(&t, exists(tmp, "/x") && !exists(tmp, "/x/y"), "... removing leaves x");
	snprintf(path, sizeof(path), "%s/x", tmp);
	cgroup_make_dirs(path, strlen(tmp), &kept);
	tap_int(&t, "all there: kept is all of it", (long long)strlen(path), (long long)kept);
	/* a name mkdir(2) refuses (ENAMETOOLONG) below two new ones: -1, the two removed */
	{
		char name[300];
		memset(name, 'n', sizeof(name) - 1);
		name[sizeof(name) - 1] = '\0';
		snprintf(path, sizeof(path), "%s/n1/n2/%s", tmp, name);
		tap_int(&t, "make_dirs that fails below new dirs: -1", -1, cgroup_make_dirs(path, strlen(tmp), &kept));
		tap_ok(&t, !exists(tmp, "/n1"), "... the dirs it made are gone");
		tap_int(&t, "... kept: the length of the one it could not make", (long long)strlen(path), (long long)kept);
	}
	snprintf(path, sizeof(path), "%s/x", tmp);
	tap_int(&t, "clean up: only x was left", 0, rmdir(path) + rmdir(tmp));
	return tap_done(&t);
}
