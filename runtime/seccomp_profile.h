/* seccomp_profile.h - Docker/OCI seccomp profile JSON -> plain struct.
 *
 * Pure: no libseccomp, no syscalls beyond reading the profile file.  The
 * struct mirrors the JSON; turning it into a filter is seccomp.c's job.
 * Format reference: moby profiles/seccomp (types.go) and the OCI runtime spec
 * "linux.seccomp" section.  Every error names the profile and a JSON path:
 *   seccomp profile "/x/p.json": syscalls[12].args[0].op: unknown operator "SCMP_CMP_FOO"
 */
#ifndef NSRUN_SECCOMP_PROFILE_H
#define NSRUN_SECCOMP_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define SECCOMP_PROFILE_MAX_BYTES (4u << 20)  /* larger files are rejected */
#define SECCOMP_PROFILE_MAX_DEPTH 32          /* JSON nesting limit (checked before yajl) */
#define SECCOMP_PROFILE_MAX_ARG 5             /* syscall arguments are numbered 0..5 */
#define SECCOMP_PROFILE_MAX_ERRNO 4095        /* largest errno a filter can return */

enum seccomp_profile_action {
	SP_ACT_ALLOW = 0,       /* SCMP_ACT_ALLOW */
	SP_ACT_LOG,             /* SCMP_ACT_LOG: allow and log */
	SP_ACT_ERRNO,           /* SCMP_ACT_ERRNO: fail with errno_ret */
	SP_ACT_TRAP,            /* SCMP_ACT_TRAP: SIGSYS */
	SP_ACT_KILL_THREAD,     /* SCMP_ACT_KILL_THREAD, and its old name SCMP_ACT_KILL */
	SP_ACT_KILL_PROCESS,    /* SCMP_ACT_KILL_PROCESS */
	SP_ACT__COUNT
};

/* Comparison of one argument, numbered as libseccomp's enum scmp_compare. */
enum seccomp_profile_op {
	SP_OP_NE = 1,           /* arg != value */
	SP_OP_LT,               /* arg <  value */
	SP_OP_LE,               /* arg <= value */
	SP_OP_EQ,               /* arg == value */
	SP_OP_GE,               /* arg >= value */
	SP_OP_GT,               /* arg >  value */
	SP_OP_MASKED_EQ,        /* (arg & value) == value_two */
};

struct seccomp_profile_arg {
	unsigned index;         /* 0..5 */
	uint64_t value;
	uint64_t value_two;     /* only used by SP_OP_MASKED_EQ */
	enum seccomp_profile_op op;
};

struct seccomp_kernel_version {
	unsigned major, minor, patch;
};

/* "includes" or "excludes" of a rule. Empty lists mean "no condition". */
struct seccomp_profile_filter {
	char **arches;          /* Go or libseccomp arch names ("amd64", "x32") */
	size_t n_arches;
	char **caps;            /* capability names ("CAP_SYS_ADMIN") */
	size_t n_caps;
	bool has_min_kernel;
	struct seccomp_kernel_version min_kernel;
};

struct seccomp_profile_rule {
	char **names;           /* from "names", or the one "name" */
	size_t n_names;
	enum seccomp_profile_action action;
	unsigned errno_ret;     /* for SP_ACT_ERRNO; EPERM when the profile gives none */
	struct seccomp_profile_arg *args;
	size_t n_args;
	struct seccomp_profile_filter includes, excludes;
};

struct seccomp_profile_archmap {
	char *arch;             /* "SCMP_ARCH_X86_64" */
	char **sub_arches;
	size_t n_sub_arches;
};

struct seccomp_profile {
	char *name;             /* what errors call the profile (path or name) */
	char *comment;          /* top-level "comment", or NULL */
	enum seccomp_profile_action default_action;
	unsigned default_errno_ret;     /* for SP_ACT_ERRNO; EPERM when absent */
	char **arches;          /* "architectures": libseccomp tokens "SCMP_ARCH_*" */
	size_t n_arches;
	struct seccomp_profile_archmap *archmap;
	size_t n_archmap;
	struct seccomp_profile_rule *rules;
	size_t n_rules;
};

/* What a rule's includes/excludes are tested against. */
struct seccomp_host {
	const char *machine;    /* uname(2) machine, e.g. "x86_64" */
	struct seccomp_kernel_version kernel;   /* from uname(2) release */
};

/* Parses len bytes of JSON at buf (need not be NUL-terminated; an embedded NUL
 * is an error) into a new profile in *out.  name is used in messages and kept.
 * Returns 0, or -1 with *err (errnum 0, STAGE_CONFIG) and *out untouched. */
int seccomp_profile_parse_buffer(const char *name, const char *buf, size_t len,
                                 struct seccomp_profile **out, struct nsrun_error *err);

/* Reads the whole regular file at path (at most SECCOMP_PROFILE_MAX_BYTES) into a
 * new NUL-terminated buffer *buf of *len bytes (the caller frees it).  Returns 0,
 * or -1 with *err (errnum from open(2)/read(2), or EFBIG / EINVAL for a file too
 * large or not regular; stage STAGE_CONFIG). */
int seccomp_profile_read_file(const char *path, char **buf, size_t *len,
                              struct nsrun_error *err);

/* Frees p and everything it owns; NULL is a no-op. */
void seccomp_profile_free(struct seccomp_profile *p);

/* Decides whether rule r is part of the filter on host h.  nsrun drops every
 * capability in the payload, so a rule that includes.caps never applies and one
 * that excludes.caps always does.  Returns true or false; when false and why is
 * not NULL, *why is a static phrase for messages ("needs capabilities"). */
bool seccomp_profile_rule_applies(const struct seccomp_profile_rule *r,
                                  const struct seccomp_host *h, const char **why);

/* Whether arch name (Go "amd64" or libseccomp "SCMP_ARCH_X86_64" / "x86_64")
 * names the machine (uname -m) m. */
bool seccomp_profile_arch_is_native(const char *name, const char *m);

/* The libseccomp token "SCMP_ARCH_*" for machine m (uname -m), or NULL. */
const char *seccomp_profile_native_arch(const char *m);

/* Parses a kernel release "6.1" / "6.1.12-foo" into *v.  Returns 0, or -1 when
 * s does not start with "<major>.<minor>". */
int seccomp_profile_parse_kernel(const char *s, struct seccomp_kernel_version *v);

/* "SCMP_ACT_ALLOW"... for an action; never NULL. */
const char *seccomp_profile_action_name(enum seccomp_profile_action a);

/* "SCMP_CMP_EQ"... for an operator; never NULL. */
const char *seccomp_profile_op_name(enum seccomp_profile_op op);

/* Whether action a lets the call run (ALLOW, LOG). */
bool seccomp_profile_action_permits(enum seccomp_profile_action a);

#endif
