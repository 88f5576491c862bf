/* Unit tests of the pull's helpers (image_fetch.h): bounds in messages as
 * numfmt --to=iec writes them (the words nsrun-image's messages had), and the
 * tree walks: usage counted without following links, a tree with a directory
 * its owner cannot read or write removed whole. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image_fetch.h"
#include "tap.h"

static void iec(struct tap *t, uint64_t v, const char *want)
{
	char buf[32], desc[64];

	fetch_iec(v, buf, sizeof(buf));
	snprintf(desc, sizeof(desc), "%llu bytes as numfmt --to=iec", (unsigned long long)v);
	tap_str(t, desc, want, buf);
}

int main(void)
{
	struct tap t = { 0 };
	char dir[] = "/tmp/nsrun-unit-fetch.XXXXXX", path[128];
	uint64_t files, bytes;
	int fd;

	iec(&t, 1000, "1000");
	iec(&t, 1024, "1.0K");
	iec(&t, 1025, "1.1K");
	iec(&t, 1536, "1.5K");
	iec(&t, 10241, "11K");
	iec(&t, 8388608, "8.0M");
	iec(&t, 209715200, "200M");
	iec(&t, 8589934592ULL, "8.0G");
	iec(&t, 68719476736ULL, "64G");

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/a", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/a/f", dir);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	if (fd < 0 || ftruncate(fd, 1000) < 0)
		return 1;
	close(fd);
	snprintf(path, sizeof(path), "%s/link", dir);
	if (symlink("/usr", path) < 0)
		return 1;
	fetch_tree_usage(dir, &files, &bytes);
	tap_int(&t, "tree usage: 4 entries (the link not followed)", 4, (int)files);
	tap_ok(&t, bytes >= 1000 && bytes < 1000 + 3 * 65536, "  ... the file's 1000 bytes counted");
	snprintf(path, sizeof(path), "%s/a", dir);
	chmod(path, 0);
	tap_int(&t, "a tree with a directory of mode 0 is removed", 0, fetch_remove_tree(dir));
	tap_ok(&t, access(dir, F_OK) < 0, "  ... whole");
	tap_ok(&t, access("/usr/bin", F_OK) == 0, "  ... and not what a link in it names");
	return tap_done(&t);
}
