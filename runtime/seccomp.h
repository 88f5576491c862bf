/* seccomp.h - seccomp profile -> BPF program (parent) -> loaded filter (payload).
 *
 * The parent compiles the profile with libseccomp before clone, so a bad
 * profile fails before anything is created; the payload only hands the ready
 * program to seccomp(2) as its last step before execve (nsjail's prepare/apply
 * split).  Compiled programs are cached on disk (seccomp_cache.h).
 */
#ifndef NSRUN_SECCOMP_H
#define NSRUN_SECCOMP_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stdio.h>

#include "error.h"

/* Opaque: a compiled classic BPF program ready to load. */
struct nsrun_seccomp;

#define SECCOMP_SOURCE_MAX 256        /* where a profile came from, for messages */

/* What seccomp_prepare() did, for tests, --debug and `nsrun check`. */
struct nsrun_seccomp_stats {
	bool cache_hit;         /* the program was read from the cache */
	bool cache_written;     /* a new cache entry was written */
	unsigned n_insns;       /* BPF instructions in the program */
	unsigned n_warnings;    /* warning lines passed to warn() */
	unsigned n_skipped_safe;        /* unknown names skipped where the call stays denied */
	unsigned n_holes;       /* unknown names in deny rules of a default-allow profile */
	char source[SECCOMP_SOURCE_MAX]; /* the file read, or "built-in NAME (compiled into nsrun)" */
};

#define NSRUN_SECCOMP_STRICT 1u       /* unenforceable deny rules are errors */
#define NSRUN_SECCOMP_ALLOW_NESTED 2u /* --allow-nested: what an inner nsrun needs */
#define NSRUN_SECCOMP_POOL_REQUEST 4u /* a pool request: no System V IPC, no memfd */

/* Compiles a profile, in the parent, before clone.
 *   spec: "unconfined"; a profile NAME (letters, digits, '.', '_', '-'): the file
 *         NAME.json in profiles_dir when it is not NULL (NSRUN_SECCOMP_PROFILES),
 *         else in the installed directory ($(PREFIX)/share/nsrun/seccomp-profiles)
 *         if it is there, else the copy built into nsrun (seccomp_builtin.h); or a
 *         PATH (contains '/' or ends in ".json").
 *   flags: NSRUN_SECCOMP_STRICT: an unknown syscall name in a deny rule of a
 *         default-allow profile (a rule that cannot be enforced: the call stays
 *         allowed) is an error instead of a warning.  NSRUN_SECCOMP_ALLOW_NESTED:
 *         clone with CLONE_NEW* flags, unshare, mount, umount2, open_tree,
 *         move_mount, mount_setattr, pivot_root and sethostname are allowed,
 *         whatever the profile says (what nsrun inside the payload needs).
 *         NSRUN_SECCOMP_POOL_REQUEST: shmget, msgget, semget, memfd_create and
 *         memfd_secret fail with ENOSYS, whatever the profile says (a pool
 *         request, whose memory only nsrun's measure holds: docs/pool.md).
 *   warn, ctx: each warning, one line without the "nsrun: " prefix, is passed to
 *         warn(ctx, line) when warn is not NULL; also on a cache hit.
 * *out is NULL for "unconfined", else a program to free with seccomp_free().
 * Returns 0, or -1 with *err: STAGE_CONFIG for a bad spec or profile (errnum 0,
 * or from open(2)/read(2)), STAGE_PREPARE for libseccomp failures (errnum from
 * libseccomp's negative return). */
int seccomp_prepare(const char *spec, const char *profiles_dir, unsigned flags,
                    void (*warn)(void *ctx, const char *line), void *ctx,
                    struct nsrun_seccomp **out, struct nsrun_error *err);

/* Installs f in the calling thread, in the payload, after capabilities are
 * dropped and PR_SET_NO_NEW_PRIVS is set (prctl(2)): without NNP or
 * CAP_SYS_ADMIN the kernel refuses with EACCES.  Uses
 * seccomp(SECCOMP_SET_MODE_FILTER, 0, prog) (seccomp(2)); no allocation,
 * async-signal-safe apart from formatting *err.  f == NULL (unconfined) is a
 * no-op.  Returns 0, or -1 with *err (STAGE_EXEC, errnum EACCES, EINVAL,
 * ENOMEM, EFAULT from seccomp(2)). */
int seccomp_apply(const struct nsrun_seccomp *f, struct nsrun_error *err);

/* Frees f; NULL is a no-op. */
void seccomp_free(struct nsrun_seccomp *f);

/* The directory that overrides where profile NAMEs are found:
 * $NSRUN_SECCOMP_PROFILES, or NULL when it is unset or empty. */
const char *seccomp_profiles_dir(void);

/* The statistics of the seccomp_prepare() that made f (f not NULL). */
const struct nsrun_seccomp_stats *seccomp_stats(const struct nsrun_seccomp *f);

/* The program itself (f not NULL): len instructions at filter. */
const struct sock_fprog *seccomp_program(const struct nsrun_seccomp *f);

/* `nsrun seccomp check SPEC`: compiles the profile (never from the cache) and
 * prints to out what it does: default action, architectures, one line per rule,
 * rules that do not apply here and why, and every unknown syscall name with
 * whether skipping it is safe (the call stays denied) or an open hole (a deny
 * rule in a default-allow profile).  Returns 0 when the profile is usable (holes
 * are reported, not fatal), or -1 with *err as seccomp_prepare(). */
int seccomp_describe(const char *spec, const char *profiles_dir, FILE *out,
                     struct nsrun_error *err);

#endif
