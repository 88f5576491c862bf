/* check.h - `nsrun check`: what this host lets nsrun do, one line per feature.
 * A first version: user and other namespaces, cgroup v2 and its controllers,
 * seccomp. Later: /proc, pivot_root, /dev, Landlock (issue 7). */
#ifndef NSRUN_CHECK_H
#define NSRUN_CHECK_H

#include <stdio.h>

/* Probes the host, leaving nothing behind (a child in new namespaces that exits at
 * once, a cgroup made and removed), and prints "FEATURE: ok ..." or
 * "FEATURE: missing: CAUSE; FIX" lines to out.  Returns 0 when a default run
 * would work, 1 otherwise. */
int check_main(FILE *out);

#endif
