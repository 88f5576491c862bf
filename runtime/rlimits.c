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

/* The OCI config's limit of resource, or NULL. */
static const struct nsrun_rlimit *asked(const struct nsrun_limits *limits, int resource)
{
	for (size_t i = 0; i < limits->n_rlimits; i++)
		if (limits->rlimits[i].resource == resource)
			return &limits->rlimits[i];
	return NULL;
}

/* nsrun's own limit n (0: none) with the OCI config's for resource: the lower of each. */
static int set_own(const struct nsrun_limits *limits, int resource, const char *name, rlim_t n,
		   struct nsrun_error *err)
{
	const struct nsrun_rlimit *a = asked(limits, resource);
	rlim_t soft = n ? n : RLIM_INFINITY, hard = soft;

	if (!n && !a)
		return 0;
	if (a && a->soft < soft)
		soft = a->soft;
	if (a && a->hard < hard)
		hard = a->hard;
	/* under a lower hard limit of the caller's (prlimit --nproc=100, an outer
	 * sandbox's), that one: stricter than asked, never an EPERM that fails the run */
	struct rlimit cur;
	if (getrlimit(resource, &cur) == 0 && cur.rlim_max != RLIM_INFINITY && cur.rlim_max < hard)
		hard = cur.rlim_max;
	if (soft > hard)
		soft = hard;
	return set_limit(resource, name, soft, hard, err);
}

int limits_apply_rlimits(const struct nsrun_limits *limits, struct nsrun_error *err)
{
	if (set_limit(RLIMIT_CORE, "RLIMIT_CORE", 0, 0, err) < 0)
		return -1;
	if (set_own(limits, RLIMIT_NPROC, "RLIMIT_NPROC", limits->pids, err) < 0 ||
	    set_own(limits, RLIMIT_DATA, "RLIMIT_DATA", limits->memory_bytes, err) < 0)
		return -1;
	/* the others the OCI config asks for, as given (oci_config.c refused those
	 * above our hard limits and left out CORE, NOFILE, NPROC and DATA) */
	for (size_t i = 0; i < limits->n_rlimits; i++) {
		const struct nsrun_rlimit *a = &limits->rlimits[i];
		if (a->resource != RLIMIT_NPROC && a->resource != RLIMIT_DATA &&
		    set_limit(a->resource, "process.rlimits", a->soft, a->hard, err) < 0)
			return -1;
	}
	if (limits->cpu_time_us && !asked(limits, RLIMIT_CPU)) {
		rlim_t s = (limits->cpu_time_us + 999999) / 1000000;
		/* SIGXCPU at the soft limit, SIGKILL one second later (getrlimit(2)) */
		if (set_limit(RLIMIT_CPU, "RLIMIT_CPU", s, s + 1, err) < 0)
			return -1;
	}
	return 0;
}
