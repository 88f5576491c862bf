/* landlock.h - a Landlock ruleset on the payload, as defence in depth.
 *
 * Mounts already make the root read-only; Landlock (Documentation/userspace-api/
 * landlock.rst, landlock(7)) repeats it in the LSM layer, so a hole in the mount
 * set-up (a missed read-only flag, a writable mount an outer sandbox left) is not
 * a way to write: everything is read-only except /tmp, /dev/shm, --tmpfs mounts and
 * the rw volumes (--read-only=false: all of / but device nodes and their ioctls,
 * see landlock_apply), device nodes stay writable; where the ABI has it (6, Linux 6.12) the payload
 * cannot signal, or connect to abstract sockets of, processes outside it.
 * --security-opt landlock=strict also refuses every TCP bind and connect (ABI 4,
 * Linux 6.7) but binds to the published (-p) container ports: not the default, because Landlock cannot tell loopback from other
 * addresses and programs and test suites need loopback TCP (the default seccomp
 * profile keeps it for them).  In --isolation=chroot it is what keeps the image
 * read-only.
 */
#ifndef NSRUN_LANDLOCK_H
#define NSRUN_LANDLOCK_H

#include <stdbool.h>

#include "config.h"
#include "error.h"

/* The Landlock ABI version of the running kernel (landlock_create_ruleset(2)
 * with LANDLOCK_CREATE_RULESET_VERSION): 1 or more, or 0 when the kernel has no
 * Landlock or it is disabled at boot (then errno is landlock_create_ruleset's:
 * ENOSYS, EOPNOTSUPP), or an outer seccomp filter refuses landlock_add_rule or
 * landlock_restrict_self (errno ENOSYS or EPERM).  No side effects. */
int landlock_abi(void);

/* In the payload, after PR_SET_NO_NEW_PRIVS (the kernel requires it or
 * CAP_SYS_ADMIN) and before the seccomp filter: builds and enforces the ruleset
 * for cfg, handling every access right of ABI abi (abi from landlock_abi(), read
 * by the supervisor before clone).  Paths are those inside the container (after
 * pivot_root or chroot); a rule path that does not exist is skipped.  abi 0 is a
 * no-op.  Returns 0, or -1 with err (errno of landlock_create_ruleset(2),
 * landlock_add_rule(2), landlock_restrict_self(2)). */
int landlock_apply(const struct nsrun_config *cfg, int abi, struct nsrun_error *err);

/* A domain that only scopes signals (ABI 6, LANDLOCK_SCOPE_SIGNAL): from then on
 * this process and its descendants can signal only processes of this domain or
 * of domains nested in it, so kill(-1, ...) reaches just the descendants.  Needs
 * no_new_privs.  Returns 0, or -1 with err (ENOSYS below ABI 6).  landlock(7). */
int landlock_scope_signals(int abi, struct nsrun_error *err);

#endif
