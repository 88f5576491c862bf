/* run_collect.c - after a run: what it used and how it ended, from the init's
 * rusage, the cgroup (v2 statistics, OOM kills) and --memory's v1 group or
 * samples.  See run_internal.h. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run_internal.h"
#include "sys.h"

/* After the run: the init's rusage, which holds every process it reaped.  It is
 * exiting by now; past the grace it is killed. */
void run_collect(struct nsrun_run *run, struct nsrun_result *result)
{
	struct rusage ru;
	int status, flags = WNOHANG;
	pid_t r;

	if (run->child <= 0 || run->child_reaped)
		return;
	for (;;) {
		r = wait4(run->child, &status, flags, &ru);
		if (r == run->child || (r < 0 && errno != EINTR))
			break;
		if (r == 0 && (!run->kill_deadline_us || monotonic_us() >= run->kill_deadline_us)) {
			kill(run->child, SIGKILL);
			run->kill_deadline_us = 0;
			/* it dies now: wait for it, do not spin beside its exit on a shared CPU */
			flags = 0;
			continue;
		}
		usleep(1000);
	}
	if (r != run->child)
		return;
	run->child_reaped = true;
	result->cpu_user_us = (uint64_t)ru.ru_utime.tv_sec * 1000000 + (uint64_t)ru.ru_utime.tv_usec;
	result->cpu_system_us = (uint64_t)ru.ru_stime.tv_sec * 1000000 + (uint64_t)ru.ru_stime.tv_usec;
	result->max_rss_kib = (uint64_t)ru.ru_maxrss;
}

/* The cgroup's word on the run: an OOM kill (memory.events) explains a SIGKILL or
 * the init's sudden death (memory.oom.group kills it too, B27); its cpu.stat is
 * the whole container's CPU time. */
void run_collect_cgroup(const struct nsrun_config *cfg, struct nsrun_run *run, struct nsrun_result *result)
{
	struct cgroup_stats st;

	result->enforced.memory = run->memory_how;
	result->cgroup_manager = run->cg.path && run->cg.scope[0] ? "systemd" :
				 run->cg.path || run->cg1.path ? "cgroupfs" : NULL;
	result->enforced.pids_cgroup = run->cg.pids;
	result->enforced.cpu_cgroup = run->cg.cpu;
	result->enforced.ucounts = run->ucounts.settable;
	result->inotify_instances = ucounts_value(&run->ucounts, "max_inotify_instances");
	result->inotify_watches = ucounts_value(&run->ucounts, "max_inotify_watches");
	if (!run->cg.path)
		return;
	cgroup_kill(&run->cg);
	cgroup_read_stats(&run->cg, &st);
	result->memory_peak_bytes = st.memory_peak_bytes;
	result->pids_peak = st.pids_peak;
	if (st.cpu_usage_us) {
		result->cpu_user_us = st.cpu_user_us;
		result->cpu_system_us = st.cpu_system_us;
		result->cpu_whole_container = true;
	}
	if ((st.oom_kill || st.oom_group_kill) &&
	    ((result->status == NSRUN_STATUS_SIGNALED && result->signal == SIGKILL) ||
	     result->status == NSRUN_STATUS_ERROR)) {
		result->status = NSRUN_STATUS_OOM_KILLED;
		result->memory_limit_bytes = cfg->limits.memory_bytes;
	}
}

/* --memory without a v2 cgroup: the v1 group's peak and OOM kills (one killed
 * process is an out-of-memory end of the whole run, which the supervisor made
 * sure of), or the peak of the supervisor's samples. */
void run_collect_memory(const struct nsrun_config *cfg, struct nsrun_run *run, struct nsrun_result *result)
{
	/* the container is over (or killed): the measuring thread ends, its figures are final */
	memwatch_close(&run->mw);
	if (run->cg1.path) {
		result->memory_peak_bytes = cgroup_v1_peak_bytes(&run->cg1);
		if (cgroup_v1_oom_kills(&run->cg1) && result->status != NSRUN_STATUS_TIMED_OUT) {
			result->status = NSRUN_STATUS_OOM_KILLED;
			result->memory_limit_bytes = cfg->limits.memory_bytes;
		}
	} else if (run->mw.samples) {
		result->memory_peak_bytes = run->mw.peak_bytes;
	}
	if (cfg->debug && run->mw.samples)
		fprintf(stderr, "nsrun: debug: --memory: %llu samples (%llu of them by page tables), %llu us in all, "
			"peak %llu bytes\n", (unsigned long long)run->mw.samples,
			(unsigned long long)run->mw.precise_samples, (unsigned long long)run->mw.cost_us,
			(unsigned long long)run->mw.peak_bytes);
}
