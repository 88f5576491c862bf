/* ucounts.c - see ucounts.h */
#include "ucounts.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "cleanup.h"

#define USER_SYSCTL "/proc/sys/user"

static int read_long(int dfd, const char *name, long *out)
{
	_cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
	char buf[32];
	ssize_t n;
	char *end;

	if (fd < 0 || (n = read(fd, buf, sizeof(buf) - 1)) <= 0)
		return -1;
	buf[n] = '\0';
	errno = 0;
	*out = strtol(buf, &end, 10);
	return errno || end == buf || *out < 0 ? -1 : 0;
}

int ucounts_plan(struct ucounts_plan *p, struct nsrun_error *err)
{
	_cleanup_closedir_ DIR *d = NULL;
	struct statvfs sv;
	struct dirent *e;

	memset(p, 0, sizeof(*p));
	d = opendir(USER_SYSCTL);
	/* a /proc without sys/ (mounted subset=pid), or none that shows it: no limit is
	 * known to halve, and none is set, as where /proc/sys is read-only (--json says
	 * "none" for them); a run needed no more of it (breaker, session 19) */
	if (!d && (errno == ENOENT || errno == EACCES || errno == EPERM || errno == ENOTDIR))
		return 0;
	if (!d)
		return error_set_stage(err, STAGE_PREPARE, errno, "open " USER_SYSCTL);
	p->settable = statvfs(USER_SYSCTL, &sv) == 0 && !(sv.f_flag & ST_RDONLY);
	while ((e = readdir(d)) && p->n < UCOUNTS_MAX) {
		struct ucount_limit *l = &p->limits[p->n];
		long v;

		if (strncmp(e->d_name, "max_", 4) != 0 || strlen(e->d_name) >= sizeof(l->name) ||
		    read_long(dirfd(d), e->d_name, &v) < 0)
			continue;
		memcpy(l->name, e->d_name, strlen(e->d_name) + 1); /* fits: checked above */
		l->value = v / 2 > 0 ? v / 2 : (v > 0 ? 1 : 0);
		p->n++;
	}
	return 0;
}

long ucounts_value(const struct ucounts_plan *p, const char *name)
{
	for (unsigned i = 0; i < p->n; i++)
		if (strcmp(p->limits[i].name, name) == 0)
			return p->limits[i].value;
	return -1;
}

/* Writes value to the sysctl file path.  Returns 0 or -1 with err. */
static int write_sysctl(const char *path, unsigned long long value, struct nsrun_error *err)
{
	char text[24];
	int fd, len = snprintf(text, sizeof(text), "%llu\n", value);

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return error_set_stage(err, STAGE_CONTAINER, errno, "open %s", path);
	if (write(fd, text, (size_t)len) != len) {
		int e = errno;

		close(fd);
		return error_set_stage(err, STAGE_CONTAINER, e, "write %s", path);
	}
	close(fd);
	return 0;
}

/* System V shared memory and message queues of our IPC namespace: at most
 * bytes in all of each (proc(5), /proc/sys/kernel/shmall in pages, shmmax;
 * msgmni queues of msgmnb bytes).  Returns 0 or -1 with err. */
static int ipc_limits_apply(uint64_t bytes, struct nsrun_error *err)
{
	long page = sysconf(_SC_PAGESIZE), mnb = 0;
	_cleanup_close_ int dfd = open("/proc/sys/kernel", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	uint64_t pages = bytes / (uint64_t)(page > 0 ? page : 4096);

	if (dfd < 0)
		return error_set_stage(err, STAGE_CONTAINER, errno, "open /proc/sys/kernel");
	if (read_long(dfd, "msgmnb", &mnb) < 0 || mnb <= 0)
		return error_set_stage(err, STAGE_CONTAINER, errno, "read /proc/sys/kernel/msgmnb");
	if (write_sysctl("/proc/sys/kernel/shmmax", bytes, err) < 0 ||
	    write_sysctl("/proc/sys/kernel/shmall", pages ? pages : 1, err) < 0)
		return -1;
	return write_sysctl("/proc/sys/kernel/msgmni",
			    bytes / (uint64_t)mnb > 0 ? (bytes / (uint64_t)mnb < 32000 ? bytes / (uint64_t)mnb : 32000) : 1,
			    err);
}

int ucounts_apply(const struct ucounts_plan *p, struct nsrun_error *err)
{
	char path[64];

	if (!p->settable)
		return 0;
	for (unsigned i = 0; i < p->n; i++) {
		snprintf(path, sizeof(path), USER_SYSCTL "/%s", p->limits[i].name);
		/* planned as half the caller's, never below 0 */
		if (write_sysctl(path, (unsigned long long)p->limits[i].value, err) < 0)
			return -1;
	}
	return p->ipc_bytes ? ipc_limits_apply(p->ipc_bytes, err) : 0;
}
