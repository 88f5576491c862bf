/* Unit tests of the pull's helpers (image_fetch.h): bounds in messages as
 * numfmt --to=iec writes them (the words nsrun-image's messages had), and the
 * tree walks: usage counted without following links, a tree with a directory
 * its owner cannot read or write removed whole; a killed sandbox leaves no
 * process writing into the tree being removed. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

/* The writer of killed_sandbox: as umoci unpacking a layer whose directories
 * are 0555, opens one up, makes a file in it and closes it again, forever. */
static _Noreturn void write_forever(const char *dir)
{
	char sub[128], file[160];

	for (unsigned long i = 0;; i++) {
		snprintf(sub, sizeof(sub), "%s/d%lu", dir, i % 16);
		if (mkdir(sub, 0755) < 0)
			chmod(sub, 0755);
		snprintf(file, sizeof(file), "%s/f%lu", sub, i);
		close(open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
		chmod(sub, 0555);
	}
}

/* The pull's sandbox killed mid-unpack: f->child (bwrap, in a pull) has a child
 * of its own (the sandbox's pid 1 and the tool) that goes on writing into the
 * tree once f->child is dead.  fetch_kill_sandbox ends it too (the pull is a
 * subreaper), so the tree's removal is final. */
static void killed_sandbox(struct tap *t)
{
	char dir[] = "/tmp/nsrun-unit-kill.XXXXXX";
	struct fetch f = { .child = 0, .work_fd = -1 };
	pid_t grand = 0;
	int p[2];

	if (!mkdtemp(dir) || pipe(p) < 0 || prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0 || (f.child = fork()) < 0) {
		tap_ok(t, false, "a sandbox of two processes is made");
		return;
	}
	if (f.child == 0) {
		if ((grand = fork()) == 0)
			write_forever(dir);
		if (write(p[1], &grand, sizeof(grand)) != sizeof(grand))
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &grand, sizeof(grand)) != sizeof(grand) || grand <= 0) {
		tap_ok(t, false, "a sandbox of two processes is made");
		return;
	}
	close(p[0]);
	usleep(100000);
	/* the control: f->child killed alone, its child goes on */
	kill(f.child, SIGKILL);
	while (waitpid(f.child, NULL, 0) < 0 && errno == EINTR)
		;
	f.child = 0;
	tap_ok(t, kill(grand, 0) == 0, "control: the sandbox's first process killed alone, its child lives on");
	fetch_kill_sandbox(&f);
	tap_ok(t, kill(grand, 0) < 0 && errno == ESRCH, "fetch_kill_sandbox: that orphan is killed and reaped too");
	tap_int(t, "  ... so the tree it wrote (0555 directories holding files) is removed", 0, fetch_remove_tree(dir));
	usleep(100000);
	tap_ok(t, access(dir, F_OK) < 0, "  ... and stays removed");
	prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
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
	killed_sandbox(&t);
	return tap_done(&t);
}
