/* Unit test of open_in_root (sys.c) on a busy host.  openat2(2) with
 * RESOLVE_IN_ROOT fails with EAGAIN when a rename or a mount anywhere on the
 * host races a ".." of the walk, in the path or in a relative symlink of an
 * image ("/etc/passwd" -> "../usr/share/base-passwd/passwd"): a Docker API
 * create then failed with "unable to find user svc: read /etc/passwd of the
 * image: Resource temporarily unavailable" while another suite ran beside it.
 * A thread here renames a file back and forth, the race built on purpose.
 * Control: the bare openat2 of the same path does fail with EAGAIN then.
 * Probe: open_in_root never does. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sys.h"
#include "tap.h"

static atomic_bool stop;
static char dir[64];

static void *renamer(void *arg)
{
	char a[96], b[96];

	(void)arg;
	snprintf(a, sizeof(a), "%s/x", dir);
	snprintf(b, sizeof(b), "%s/y", dir);
	while (!atomic_load(&stop)) {
		(void)rename(a, b);
		(void)rename(b, a);
	}
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(void)
{
	struct tap t = { 0 };
	struct open_how how = { .flags = O_RDONLY | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	char path[128];
	const char *rel = "etc/passwd";
	long tries = 0, raced = 0, failed = 0, opened = 0;
	int root_fd, fd;
	pthread_t th;
	double end;

	snprintf(dir, sizeof(dir), "/tmp/test-open-in-root.XXXXXX");
	if (!mkdtemp(dir))
		return perror("mkdtemp"), 1;
	/* DIR/root/etc/passwd -> ../usr/passwd, a relative link as images have them */
	static const char *const dirs[] = { "root", "root/etc", "root/usr" };
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, dirs[i]);
		if (mkdir(path, 0755) < 0)
			return perror(path), 1;
	}
	snprintf(path, sizeof(path), "%s/root/usr/passwd", dir);
	close(open(path, O_WRONLY | O_CREAT, 0644));
	snprintf(path, sizeof(path), "%s/root/etc/passwd", dir);
	if (symlink("../usr/passwd", path) < 0)
		return perror(path), 1;
	snprintf(path, sizeof(path), "%s/x", dir);
	close(open(path, O_WRONLY | O_CREAT, 0644));
	snprintf(path, sizeof(path), "%s/root", dir);
	root_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0 || pthread_create(&th, NULL, renamer, NULL) != 0)
		return perror("set-up"), 1;

	/* control: until the bare call has lost the race 10 times, 20 s at most (a few
	 * thousand tries here; the renamer needs a core of its own, or a preemption) */
	for (end = now() + 20; raced < 10 && now() < end; tries++) {
		fd = (int)syscall(SYS_openat2, root_fd, rel, &how, sizeof(how));
		if (fd >= 0)
			close(fd);
		else if (errno == EAGAIN)
			raced++;
	}
	tap_ok(&t, raced >= 10, "control: openat2 RESOLVE_IN_ROOT of a \"..\" link fails with EAGAIN beside a renamer");
	/* probe: as many tries again, and at least 100000 */
	if (tries < 100000)
		tries = 100000;
	for (long i = 0; i < tries; i++) {
		fd = open_in_root(root_fd, "/etc/passwd", O_RDONLY);
		if (fd < 0)
			failed++;
		else
			opened++, close(fd);
	}
	atomic_store(&stop, true);
	pthread_join(th, NULL);
	printf("# %ld bare tries for %ld EAGAIN; open_in_root: %ld opened, %ld failed\n", tries, raced, opened,
	       failed);
	tap_int(&t, "open_in_root beside the same renamer: every open succeeds", 0, failed);
	close(root_fd);
	nftw(dir, tap_remove_one, 8, FTW_DEPTH | FTW_PHYS);
	return tap_done(&t);
}
