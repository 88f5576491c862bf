/* exec.h - the payload side (pid 2): from a forked copy of the container's init
 * to execve(2) of the user's command, dropping everything on the way. */
#ifndef NSRUN_EXEC_H
#define NSRUN_EXEC_H

#include <stdbool.h>

#include "config.h"
#include "error.h"

#include <limits.h>
#include <stddef.h>

struct nsrun_seccomp;

/* PATH entries the payload's exec tries (and the image check looks in). */
#define EXEC_CANDIDATES_MAX 32

/* The paths execve is tried on for the command cmd, as execvp(3) does: cmd itself
 * when it holds a '/', else "DIR/cmd" for each entry DIR of path_env (an empty
 * entry is "."; no PATH: /usr/local/bin:/usr/bin:/bin), at most max of them, into
 * out.  Pure.  Returns how many. */
size_t exec_candidates(const char *cmd, const char *path_env, char out[][PATH_MAX], size_t max);
struct timing;

/* OCI create (pid 1, after pivot_root, before the container waits on its exec
 * fifo): the payload's command is in the container, as exec_command will look for
 * it (exec_candidates; a relative one from cfg->process.cwd; links resolved inside
 * the root), so a missing one fails create as runc's and crun's do (podman reads
 * "no such file or directory" there as 127).  Only ENOENT is decided here: any
 * other answer is left to the payload's execve.  Returns 0, or -1 with err
 * (stage exec, ENOENT or a path's ENOTDIR: exec_command's own message). */
int exec_check_command(const struct nsrun_config *cfg, struct nsrun_error *err);

/* Never returns.  In order: default signal dispositions and mask, setsid (no
 * controlling terminal: TIOCSTI cannot reach the caller's terminal), stdio[i] (if
 * >= 0) on fd i (capture pipes, --stdin), its own user
 * namespace mapping cfg uid/gid to the container's 0 (not when unmapped: the
 * reduced tier's namespace without id maps, where we are nobody already), in the
 * reduced tier a chroot(2) into cfg->rootfs (minimal: tier.h), the rlimits (those no cgroup took), the bounding set
 * dropped,
 * uid/gid, rlimits, cwd, every fd but 0-2 marked close-on-exec, the capability sets
 * emptied and no_new_privs, the Landlock ruleset of ABI landlock_abi (0: none;
 * landlock.h), the seccomp filter (last: only execve runs under it),
 * execve with a PATH search.  Before the command, --copy-archive's archives
 * (copy_fds[i], cfg->copy_archive_tars.n of them; NULL: none) are extracted by a
 * child confined as the command (exec_confine), in order.  On failure writes the struct nsrun_error to report_fd
 * and exits 127 (ENOENT) or 126 (other exec errors) or 125 (set-up).
 * shared_mm: we run in pid 1's memory (clone(2) CLONE_VM | CLONE_VFORK, container.c),
 * so it is made dumpable only while our id maps are written, not until execve. */
void exec_payload(const struct nsrun_config *cfg, const struct nsrun_limits *rlimits,
		  const struct nsrun_seccomp *seccomp, int landlock_abi, bool unmapped, bool shared_mm,
		  const int stdio[3], const int *copy_fds, struct timing *timing, int report_fd)
	__attribute__((noreturn));

/* Never returns: the end of exec_payload, shared with `nsrun exec` (exec_join.h),
 * for a process that already is cfg's uid/gid in its final namespaces: chdir to
 * cfg's cwd, every fd but 0-2 close-on-exec, the capability sets emptied and
 * no_new_privs, Landlock of ABI landlock_abi (0: none), the minimal tier's socket
 * filter, seccomp (NULL: none), execve of cfg's args with a PATH search in cfg's
 * env.  On failure writes the struct nsrun_error to report_fd and exits 127
 * (ENOENT), 126 (other exec errors) or 125 (set-up). */
void exec_command(const struct nsrun_config *cfg, const struct nsrun_seccomp *seccomp, int landlock_abi,
		  struct timing *timing, int report_fd) __attribute__((noreturn));

/* The report of exec_payload's or exec_command's child on its report_fd, read
 * to its end (EOF: the pipe is close-on-exec, or the child ended).  The child
 * writes one byte once confined, just before its execve (or, for an archive
 * operation, its work), and a struct nsrun_error on a failure: so a child killed
 * before it got there (SIGSYS of an outer seccomp filter that kills a call nsrun
 * makes, capset or unshare) is told apart from one that exec'd.  Returns 1: it
 * exec'd; 0: *err says why it failed (its hint as the child set it); -1: it ended
 * before its execve without a word (its status says how). */
int exec_report_read(int fd, struct nsrun_error *err);

/* The child's byte of exec_report_read: it is confined and about to execve (or,
 * for an archive operation, to do its work instead). */
void exec_report_confined(int report_fd);

/* For a child that ended without a word before its execve (exec_report_read -1)
 * with wait status: err says so, naming the signal, with a hint where it is
 * SIGSYS (an outer seccomp filter).  Returns -1. */
int exec_report_died(int status, struct nsrun_error *err);

/* Returns only when confined: exec_command without the execve, for a command that
 * nsrun runs in-process after it (copy_archive.h): chdir to cfg's cwd, every fd but
 * 0-2 close-on-exec, no capabilities, no_new_privs, Landlock, seccomp.  On failure
 * writes the struct nsrun_error to report_fd and exits 125. */
void exec_confine(const struct nsrun_config *cfg, const struct nsrun_seccomp *seccomp, int landlock_abi,
		  struct timing *timing, int report_fd);

/* Every signal's disposition back to the default and an empty signal mask. */
void exec_reset_signals(void);

#endif
