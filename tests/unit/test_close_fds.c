/* Unit tests of close_fds_except and close_fds_range (sys.c) where close_range(2)
 * fails, as on a kernel before 5.9 (ENOSYS) or under a filter that denies it: a
 * seccomp filter in a forked child makes it fail, and the fallback must still
 * close (or mark close-on-exec) every fd but those kept.  The control: the same
 * filter really denies close_range, so the fallback is what ran. */
#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sys.h"
#include "tap.h"

/* fds 10, 11, 12 and 200 open on /dev/null (their flags: no FD_CLOEXEC) */
static int open_fds(void)
{
	static const int want[] = { 10, 11, 12, 200 };
	int fd = open("/dev/null", O_RDONLY);

	if (fd < 0)
		return -1;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (dup2(fd, want[i]) < 0)
			return -1;
	close(fd);
	return 0;
}

static int deny_close_range(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int rc;

	if (!ctx)
		return -1;
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(close_range), 0);
	if (rc == 0)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	return rc;
}

static bool is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

/* Runs case c in a child under the filter; its exit status: a bit per failed check */
static int run_case(int c)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		int bad = 0;
		if (open_fds() < 0 || deny_close_range() < 0)
			_exit(0x80);
		if (!(syscall(SYS_close_range, 10, 10, 0) < 0 && errno == ENOSYS) || !is_open(10))
			bad |= 1; /* the control: close_range is denied and closed nothing */
		if (c == 0) {
			int keep[] = { 11, -1 };
			close_fds_except(keep, 2);
			if (is_open(10) || is_open(12) || is_open(200))
				bad |= 2;
			if (!is_open(11) || !is_open(0) || !is_open(1) || !is_open(2))
				bad |= 4;
		} else {
			close_fds_range(11, ~0U, CLOSE_RANGE_CLOEXEC);
			if (fcntl(10, F_GETFD) != 0)
				bad |= 2; /* below the range: untouched */
			if (fcntl(11, F_GETFD) != FD_CLOEXEC || fcntl(200, F_GETFD) != FD_CLOEXEC)
				bad |= 4;
		}
		_exit(bad);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return 0xff;
	return WEXITSTATUS(status);
}

int main(void)
{
	struct tap t = { 0 };
	int r;

	r = run_case(0);
	tap_ok(&t, !(r & 0x80), "the child set up its fds and the filter");
	tap_ok(&t, !(r & 1), "control: the filter denies close_range(2) with ENOSYS");
	tap_ok(&t, !(r & 2), "close_fds_except without close_range: every other fd above 2 is closed");
	tap_ok(&t, !(r & 4), "close_fds_except without close_range: the kept fd and stdio stay open");
	r = run_case(1);
	tap_ok(&t, !(r & 0x80) && !(r & 1), "the CLOEXEC case's child under the same filter");
	tap_ok(&t, !(r & 2), "close_fds_range CLOEXEC without close_range: an fd below the range untouched");
	tap_ok(&t, !(r & 4), "close_fds_range CLOEXEC without close_range: the range marked close-on-exec, left open");
	return tap_done(&t);
}
