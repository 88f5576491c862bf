/* tier.h - isolation tiers below full, and choosing the highest that works here.
 *
 *   full     every property of docs/isolation.md.
 *   reduced  where no mount and no id map is possible (a Landlock domain): an
 *            unmapped user namespace (the payload is already nobody inside), pid,
 *            net, ipc and uts namespaces, chroot into the image, Landlock
 *            read-only over it, caps dropped, no_new_privs, seccomp, limits.  Not
 *            as root (an unmapped namespace would keep host uid 0).
 *   minimal  where no user namespace can be made at all (Docker's default seccomp
 *            profile, user.max_user_namespaces=0, AppArmor's restriction):
 *            seccomp that also refuses every socket (socketpair stays), Landlock,
 *            rlimits, no_new_privs; as root also chroot into the image and uid
 *            65534.  Unprivileged, the payload sees the outer file system
 *            read-only (it needs Landlock), not the image.
 * Each probe replays in a short-lived child what a run of that tier does first
 * (clone, id maps, mounts, hostname, lo; or Landlock and a seccomp filter), so the
 * choice is made by trying; nothing is left behind.
 */
#ifndef NSRUN_TIER_H
#define NSRUN_TIER_H

#include <stdbool.h>
#include <stdio.h>

#include "config.h"
#include "error.h"

/* "full", "reduced", "minimal" ("auto" for NSRUN_ISOLATION_AUTO); never NULL. */
const char *tier_name(enum nsrun_isolation t);

/* Parses --isolation: full (or its old name default), reduced (or its old name
 * chroot), minimal.  Returns 0, or -1 with err (STAGE_CONFIG). */
int tier_parse(const char *s, enum nsrun_isolation *t, struct nsrun_error *err);

/* Makes the calls nsrun's own process makes in every run and cannot do without
 * (flock, openat2, getdents64, readlinkat, pidfd_open) in a child: an outer
 * seccomp filter that kills one (SECCOMP_RET_KILL_PROCESS) kills nsrun itself,
 * exit 159 with no message.  Returns 0 when the child lived, or -1 with *why
 * naming the call it was killed at.  Refusals (EPERM) are not its business: each
 * is met where the run makes it. */
int tier_supervisor_probe(struct nsrun_error *why);

/* Tries tier t (not AUTO) in a child.  Returns 0 when it works here, or -1 with
 * *why (the cause, with diagnose.h's hint where there is one). */
int tier_probe(enum nsrun_isolation t, struct nsrun_error *why);

/* The highest tier that works here: full, reduced, minimal, in that order.
 * why_not (may be NULL) gets "full: CAUSE; reduced: CAUSE" for the tiers that
 * did not work, len bytes at most.  Returns the tier, or NSRUN_ISOLATION_AUTO
 * when none works (*none then holds the last cause). */
enum nsrun_isolation tier_select(char *why_not, size_t len, struct nsrun_error *none);

/* With no --isolation, cfg->isolation becomes tier_select's choice and
 * cfg->isolation_why its reason; full when none works (the run then fails with
 * full's exact cause).  A service (-d) calls it before it starts; a run in the
 * foreground only once full's set-up has failed (foreground.c foreground_run), so the
 * probes cost no start-up where full works.  Returns 0, or -1 with err (ENOMEM). */
int tier_choose(struct nsrun_config *cfg, struct nsrun_error *err);

/* Whether we are root whose uid 0 is also uid 0 of the parent user namespace
 * (host root, as far as one level shows), read from /proc/self/uid_map.  The
 * reduced tier is refused to it: its unmapped namespace would keep that uid. */
bool tier_host_root(void);

/* Below full, prints the one warning line of a run to out: "nsrun: warning:
 * isolation TIER (WHY NOT FULL): WHAT IT LACKS (--strict refuses it)". */
void tier_warn(const struct nsrun_config *cfg, FILE *out);

/* What a run of tier t lacks against full, one clause (static text), "" for full. */
const char *tier_lacks(enum nsrun_isolation t, bool root);

/* The minimal tier's stand-in for a network namespace, in the payload after
 * no_new_privs and before its seccomp profile: socket(2) of any family but
 * AF_UNIX fails with EAFNOSUPPORT, of AF_UNIX with EPERM (socketpair(2) stays),
 * io_uring with EPERM, another ABI is killed
 * (seccomp(2), libseccomp).  Returns 0, or -1 with err. */
int tier_load_no_net_filter(struct nsrun_error *err);

/* The minimal tier has no pid namespace: kills every descendant of this process
 * (its children, found by their PPid in /proc/PID/stat, until wait(2) says none
 * is left: a subreaper, PR_SET_CHILD_SUBREAPER, also gets the orphans) and
 * reaps them.  Never fails. */
void tier_kill_descendants(void);

#endif
