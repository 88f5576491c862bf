/* rlimits.h - resource limits with setrlimit(2) (getrlimit(2) for semantics).
 *
 * Applied in the payload after it became its uid: RLIMIT_NPROC (counted per user
 * namespace since Linux 5.14, so a per-container pids limit), RLIMIT_DATA for
 * memory (not RLIMIT_AS, which kills runtimes that reserve address space, such as
 * Node.js), RLIMIT_CPU, RLIMIT_CORE 0.  cgroup v2 limits come in front of these.
 * An OCI config's process.rlimits (config.md "POSIX process") are set as given,
 * except where nsrun has its own: the lower of the two for NPROC and DATA, nsrun's
 * for CORE and NOFILE (oci_config.c warns), the config's for CPU.
 */
#ifndef NSRUN_RLIMITS_H
#define NSRUN_RLIMITS_H

#include "config.h"
#include "error.h"

/* Applies the limits of cfg to the calling process. Returns 0 or -1 with err. */
int limits_apply_rlimits(const struct nsrun_limits *limits, struct nsrun_error *err);

#endif
