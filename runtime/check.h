/* check.h - `nsrun check`: what this host lets nsrun do, one line per feature:
 * the user namespace (and why not, from diagnose.h) and its nesting depth, the
 * mount, pid, net, ipc, uts, cgroup and time namespaces, a fresh /proc, the /dev
 * nodes, pivot_root, cgroup v2 and its delegated controllers, seccomp, Landlock's
 * ABI, newuidmap and subordinate ids; and the start of a container done as a run
 * does it (clone, id maps, sync channel, hostname, lo) and the run's seccomp
 * profile compiled and loaded. */
#ifndef NSRUN_CHECK_H
#define NSRUN_CHECK_H

#include <stdio.h>

/* `nsrun check [--json]` (argv[0] is "check").  Probes the host, leaving nothing
 * behind (children in new namespaces that exit at once, a cgroup made and
 * removed), and prints "FEATURE: ok (DETAIL)" or "FEATURE: missing: CAUSE; fix: FIX"
 * lines to out, the last one "isolation: ..." (tier.h), or with --json one document
 * {"ok", "isolation", "checks": [{"name", "status", "needed", "detail" | "cause",
 * "fix"}]}.  Returns the exit status: CHECK_FULL (0) when a default run would
 * work in full isolation (every needed feature is there: the probes do what a
 * run does), CHECK_LOWER (1) when only a lower tier would (reduced or minimal,
 * named), CHECK_NONE (2) when no run would, 125 for a usage error or a failed
 * write. */
int check_main(int argc, char **argv, FILE *out);

enum check_status {
	CHECK_FULL = 0,         /* a default run works, with every property */
	CHECK_LOWER = 1,        /* only a lower isolation tier works (named in the output) */
	CHECK_NONE = 2,         /* no run works here */
};

#endif
