/* rlimits.c - see rlimits.h */
#include <errno.h>
#include <sys/resource.h>

#include "rlimits.h"

static int set_limit(int resource, const char *name, rlim_t soft, rlim_t hard, struct nsrun_error *err)
{
	struct rlimit rl = { .rlim_cur = soft, .rlim_max = hard };

	if (setrlimit(resource, &rl) < 0)
		return error_set(err, errno, "setrlimit %s", name);
	return 0;
}

int limits_apply_rlimits(const struct nsrun_limits *limits, struct nsrun_error *err)
{
	if (set_limit(RLIMIT_CORE, "RLIMIT_CORE", 0, 0, err) < 0)
		return -1;
	if (limits->pids &&
	    set_limit(RLIMIT_NPROC, "RLIMIT_NPROC", limits->pids, limits->pids, err) < 0)
		return -1;
	if (limits->memory_bytes &&
	    set_limit(RLIMIT_DATA, "RLIMIT_DATA", limits->memory_bytes, limits->memory_bytes, err) < 0)
		return -1;
	if (limits->cpu_time_us) {
		rlim_t s = (limits->cpu_time_us + 999999) / 1000000;
		/* SIGXCPU at the soft limit, SIGKILL one second later (getrlimit(2)) */
		if (set_limit(RLIMIT_CPU, "RLIMIT_CPU", s, s + 1, err) < 0)
			return -1;
	}
	return 0;
}
