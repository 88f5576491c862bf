/* check.c - see check.h */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <seccomp.h>    /* libseccomp's (runtime/ is an -iquote directory) */

#include "cgroup.h"
#include "check.h"
#include "config.h"
#include "error.h"
#include "ns.h"

/* A child in every namespace a run uses, which exits at once. */
static bool check_namespaces(FILE *out)
{
	struct nsrun_error err = { 0 };
	bool in_cgroup = false;
	int status;
	pid_t pid = ns_clone(ns_clone_flags(), -1, &in_cgroup, &err);

	if (pid == 0)
		_exit(0);
	if (pid < 0) {
		char line[512];
		const char *hint = error_hint(&err);
		error_format(&err, line, sizeof(line));
		fprintf(out, "namespaces: missing: %s%s%s\n", line, hint ? "; fix: " : "", hint ? hint : "");
		return false;
	}
	waitpid(pid, &status, 0);
	fprintf(out, "namespaces: ok (user, mount, pid, net, ipc, uts%s)\n",
		ns_clone_flags() & CLONE_NEWCGROUP ? ", cgroup" : "");
	return true;
}

/* The cgroup a run would get, with every limit asked for; made and removed. */
static void check_cgroup(FILE *out)
{
	struct nsrun_config cfg;
	struct nsrun_error err = { 0 };
	struct cgroup_run cg;

	if (config_init(&cfg, &err) < 0)
		return;
	cfg.limits.cpus_milli = 1000;
	if (cgroup_prepare(&cfg, &cg, &err) < 0) {
		char line[512];
		error_format(&err, line, sizeof(line));
		fprintf(out, "cgroup v2: missing: %s\n", line);
	} else if (!cg.path) {
		fprintf(out, "cgroup v2: missing: %s; limits fall back to rlimits (memory, pids), --cpus is "
			"not enforced\n", cg.why_not);
	} else {
		fprintf(out, "cgroup v2: ok, runs go under %.*s\n", (int)(strrchr(cg.path, '/') - cg.path), cg.path);
		fprintf(out, "cgroup memory: %s\n", cg.memory ? "ok" : "missing: --memory falls back to RLIMIT_DATA");
		fprintf(out, "cgroup pids: %s\n", cg.pids ? "ok" : "missing: --pids-limit falls back to RLIMIT_NPROC");
		fprintf(out, "cgroup cpu: %s\n", cg.cpu ? "ok" : "missing: --cpus is not enforced");
		if (!(cg.memory && cg.pids && cg.cpu))
			fprintf(out, "cgroup controllers: %s\n", cg.why_not);
	}
	cgroup_destroy(&cg);
	config_free(&cfg);
}

int check_main(FILE *out)
{
	const struct scmp_version *v = seccomp_version();
	bool ok = check_namespaces(out);

	check_cgroup(out);
	if (v)
		fprintf(out, "seccomp: ok (libseccomp %u.%u.%u, API level %u)\n", v->major, v->minor, v->micro,
			seccomp_api_get());
	return ok ? 0 : 1;
}
