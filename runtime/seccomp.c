/* seccomp.c - seccomp profile -> libseccomp filter -> classic BPF program.
 *
 * Parent side: read the profile, look in the cache, else parse it
 * (seccomp_profile.c), build a libseccomp filter and export the BPF into a
 * memfd (libseccomp 2.5 has no in-memory export), keep the instructions.
 * Payload side: seccomp_apply() is one seccomp(2) call.
 *
 * Policy for syscall names libseccomp does not know (the profile is newer than
 * the library): skipping a rule whose call would be denied anyway is safe;
 * skipping a deny rule in a default-allow profile leaves the call open, so it
 * is a warning, an error under --strict, and listed by `nsrun seccomp check`.
 */
#include "seccomp.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <errno.h>
#include <linux/seccomp.h>
#include <seccomp.h>     /* libseccomp's; ours is "seccomp.h" */
#ifndef SCMP_VER_MAJOR
#error "<seccomp.h> found nsrun's runtime/seccomp.h: add runtime with -iquote, not -I"
#endif
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cleanup.h"
#include "seccomp_arg32.h"
#include "seccomp_builtin.h"
#include "seccomp_cache.h"
#include "seccomp_profile.h"

struct nsrun_seccomp {
	struct sock_fprog prog;
	struct nsrun_seccomp_stats stats;
};

struct host_info {
	struct utsname uts;
	struct seccomp_host h;
};

/* One compilation: inputs, the libseccomp context, what was skipped. */
struct build {
	const struct seccomp_profile *p;
	const struct seccomp_host *host;
	bool strict;
	bool allow_nested;              /* NSRUN_SECCOMP_ALLOW_NESTED */
	bool pool_request;              /* NSRUN_SECCOMP_POOL_REQUEST */
	FILE *describe;                 /* `seccomp check` output, or NULL */
	scmp_filter_ctx ctx;
	uint32_t default_act;
	char *warnings;                 /* lines joined by '\n' */
	size_t warnings_len;
	unsigned n_skipped_safe, n_holes;
};

static void cleanup_seccomp_ctx(scmp_filter_ctx *ctx)
{
	if (*ctx)
		seccomp_release(*ctx);
}

#define _cleanup_scmp_ __attribute__((cleanup(cleanup_seccomp_ctx)))

static void cleanup_profile(struct seccomp_profile **p)
{
	seccomp_profile_free(*p);
}

#define _cleanup_profile_ __attribute__((cleanup(cleanup_profile)))

static uint32_t scmp_action(enum seccomp_profile_action a, unsigned errno_ret)
{
	switch (a) {
	case SP_ACT_ALLOW:
		return SCMP_ACT_ALLOW;
	case SP_ACT_LOG:
		return SCMP_ACT_LOG;
	case SP_ACT_ERRNO:
		return SCMP_ACT_ERRNO(errno_ret);
	case SP_ACT_TRAP:
		return SCMP_ACT_TRAP;
	case SP_ACT_KILL_THREAD:
		return SCMP_ACT_KILL_THREAD;
	case SP_ACT_KILL_PROCESS:
	case SP_ACT__COUNT:
		break;
	}
	return SCMP_ACT_KILL_PROCESS;
}

#ifndef NSRUN_INSTALLED_PROFILES
#define NSRUN_INSTALLED_PROFILES "/usr/local/share/nsrun/seccomp-profiles"
#endif

/* SPEC -> its bytes (allocated) and where they came from (a file, or the
 * built-in copy: seccomp_builtin.h), for messages and --debug.  With builtin not
 * NULL, a built-in profile is not copied: *builtin points at it, *bytes is NULL. */
static int read_spec(const char *spec, const char *profiles_dir, char *source, size_t source_len,
                     char **bytes, const char **builtin, size_t *len, struct nsrun_error *err)
{
	if (builtin)
		*builtin = NULL;
	size_t n = strlen(spec);

	if (n == 0)
		return error_set_stage(err, STAGE_CONFIG, 0, "empty seccomp profile name");
	if (strchr(spec, '/') || (n > 5 && strcmp(spec + n - 5, ".json") == 0)) {
		snprintf(source, source_len, "%s", spec);
		return seccomp_profile_read_file(spec, bytes, len, err);
	}
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)spec[i]) && !strchr("._-", spec[i]))
			return error_set_stage(err, STAGE_CONFIG, 0, "invalid seccomp profile name \"%s\"", spec);
	if (spec[0] == '.' || spec[0] == '-')
		return error_set_stage(err, STAGE_CONFIG, 0, "invalid seccomp profile name \"%s\"", spec);
	return seccomp_builtin_load(spec, profiles_dir, NSRUN_INSTALLED_PROFILES, bytes, builtin, len, source,
	                            source_len, err);
}

static int host_info_get(struct host_info *hi, struct nsrun_error *err)
{
	if (uname(&hi->uts) < 0)
		return error_set_stage(err, STAGE_PREPARE, errno, "uname");
	hi->h.machine = hi->uts.machine;
	if (seccomp_profile_parse_kernel(hi->uts.release, &hi->h.kernel) < 0)
		memset(&hi->h.kernel, 0, sizeof(hi->h.kernel));  /* no minKernel rule applies */
	return 0;
}

static void key_add(struct sha256_ctx *s, const void *data, size_t len)
{
	sha256_update(s, len, data);
}

/* Everything the compiled program depends on: the profile's bytes, the flags,
 * libseccomp, the machine and kernel, and the build of nsrun itself (its GNU
 * build ID), so a change to the compiler logic never reuses an older program.
 * A built-in profile (bytes NULL) is named by source instead of hashed: its bytes
 * are part of the build, so the build ID already covers them.  Returns false (no
 * caching) when the build has no ID. */
static bool cache_key(const char *bytes, size_t len, const char *source, const struct host_info *hi,
                      unsigned flags, uint8_t key[SHA256_DIGEST_SIZE])
{
	const struct scmp_version *v = seccomp_version();
	uint32_t format = SECCOMP_CACHE_FORMAT, api = (uint32_t)seccomp_api_get();
	uint64_t len64 = len;
	uint8_t strict8 = (flags & NSRUN_SECCOMP_STRICT) != 0;
	uint8_t nested8 = (flags & NSRUN_SECCOMP_ALLOW_NESTED) != 0;
	uint8_t pool8 = (flags & NSRUN_SECCOMP_POOL_REQUEST) != 0;
	const uint8_t *id;
	size_t id_len;
	char lib[48];
	struct sha256_ctx s;

	if (!seccomp_cache_build_id(&id, &id_len))
		return false;
	snprintf(lib, sizeof(lib), "libseccomp %u.%u.%u", v->major, v->minor, v->micro);
	sha256_init(&s);
	key_add(&s, "nsrun seccomp", sizeof("nsrun seccomp"));
	key_add(&s, &format, sizeof(format));
	key_add(&s, id, id_len);
	key_add(&s, &strict8, sizeof(strict8));
	key_add(&s, &nested8, sizeof(nested8));
	key_add(&s, &pool8, sizeof(pool8));
	key_add(&s, lib, strlen(lib) + 1);
	key_add(&s, &api, sizeof(api));
	key_add(&s, hi->uts.machine, strlen(hi->uts.machine) + 1);
	/* minKernel rules make the program depend on the running kernel. */
	key_add(&s, hi->uts.release, strlen(hi->uts.release) + 1);
	key_add(&s, &len64, sizeof(len64));
	if (bytes)
		key_add(&s, bytes, len);
	else
		key_add(&s, source, strlen(source) + 1);
	sha256_digest(&s, SHA256_DIGEST_SIZE, key);
	return true;
}

static int add_warning(struct build *b, const char *line, struct nsrun_error *err)
{
	size_t n = strlen(line);
	char *w = realloc(b->warnings, b->warnings_len + n + 2);

	if (!w)
		return error_set_stage(err, STAGE_PREPARE, ENOMEM, "seccomp warnings");
	b->warnings = w;
	if (b->warnings_len > 0)
		w[b->warnings_len++] = '\n';
	memcpy(w + b->warnings_len, line, n + 1);
	b->warnings_len += n;
	return 0;
}

/* Libseccomp does not know name: decide whether skipping it is safe. */
static int skip_unknown(struct build *b, size_t ri, const char *name, struct nsrun_error *err)
{
	const struct seccomp_profile_rule *r = &b->p->rules[ri];
	bool hole = !seccomp_profile_action_permits(r->action) &&
	            seccomp_profile_action_permits(b->p->default_action);
	char line[200];

	if (!hole) {
		b->n_skipped_safe++;
		if (b->describe)
			fprintf(b->describe, "      unknown \"%s\": safe skip (the default action %s applies)\n",
			        name, seccomp_profile_action_name(b->p->default_action));
		return 0;
	}
	b->n_holes++;
	snprintf(line, sizeof(line),
	         "syscalls[%zu]: unknown syscall \"%s\" skipped: this %s rule cannot be enforced, "
	         "the call stays allowed", ri, name, seccomp_profile_action_name(r->action));
	if (b->strict)
		return error_set_stage(err, STAGE_CONFIG, 0, "seccomp profile \"%s\": %s (strict)",
		                       b->p->name, line);
	if (b->describe)
		fprintf(b->describe, "      unknown \"%s\": OPEN HOLE (deny rule in a default-allow profile: "
		        "the call stays allowed)\n", name);
	return add_warning(b, line, err);
}

static bool has_repeated_index(const struct seccomp_profile_rule *r)
{
	unsigned seen = 0;

	for (size_t i = 0; i < r->n_args; i++) {
		if (seen & (1u << r->args[i].index))
			return true;
		seen |= 1u << r->args[i].index;
	}
	return false;
}

static struct scmp_arg_cmp arg_cmp(const struct seccomp_profile_arg *a)
{
	struct scmp_arg_cmp c = {
		.arg = a->index,
		.op = (enum scmp_compare)a->op,  /* same numbering, see seccomp_profile.h */
		.datum_a = a->value,
		.datum_b = a->value_two,
	};
	return c;
}

/* The conditions one argument comparison of rule ri becomes for call name: the
 * comparison itself, or, where the kernel reads the argument as 32 bits, masked
 * compares of the low 32 bits (seccomp_arg32.h; 0 terms: it never matches). */
static int arg_terms(struct build *b, size_t ri, const char *name, const struct seccomp_profile_arg *a,
                     struct scmp_arg_cmp out[SECCOMP_ARG32_MAX_TERMS], size_t *n, struct nsrun_error *err)
{
	struct seccomp_profile_arg t[SECCOMP_ARG32_MAX_TERMS];
	bool wide = false;
	char line[200];

	if (!seccomp_arg_is_32bit(name, a->index)) {
		out[0] = arg_cmp(a);
		*n = 1;
		return 0;
	}
	*n = seccomp_arg32_terms(a, t, &wide);
	for (size_t i = 0; i < *n; i++)
		out[i] = arg_cmp(&t[i]);
	if (!wide)
		return 0;
	snprintf(line, sizeof(line), "syscalls[%zu]: \"%s\" argument %u is 32 bits to the kernel, "
	         "the value %#llx is wider: compared on the low 32 bits", ri, name, a->index,
	         (unsigned long long)(a->op == SP_OP_MASKED_EQ ? a->value_two : a->value));
	return add_warning(b, line, err);
}

/* Most libseccomp rules one profile rule may become (32-bit arguments). */
#define MAX_EXPANDED_RULES 1024

/* Conditions on distinct arguments are ANDed in one rule; when an argument is
 * repeated each condition becomes its own rule (ORed), as runc and crun do.  A
 * comparison on a 32-bit argument is an OR of terms: one rule per combination. */
static int add_rule(struct build *b, size_t ri, uint32_t act, int nr, const char *name,
                    struct nsrun_error *err)
{
	const struct seccomp_profile_rule *r = &b->p->rules[ri];
	struct scmp_arg_cmp terms[SECCOMP_PROFILE_MAX_ARG + 1][SECCOMP_ARG32_MAX_TERMS];
	struct scmp_arg_cmp c[SECCOMP_PROFILE_MAX_ARG + 1];
	size_t n_terms[SECCOMP_PROFILE_MAX_ARG + 1], total = 1;
	int rc = 0;

	for (size_t i = 0; i < r->n_args; i++) {
		if (arg_terms(b, ri, name, &r->args[i], terms[i], &n_terms[i], err) < 0)
			return -1;
		total *= n_terms[i];
		if (total > MAX_EXPANDED_RULES)
			return error_set_stage(err, STAGE_CONFIG, 0,
			                       "seccomp profile \"%s\": syscalls[%zu]: the comparisons on 32-bit "
			                       "arguments of \"%s\" make more than %d rules", b->p->name, ri, name,
			                       MAX_EXPANDED_RULES);
	}
	if (!has_repeated_index(r)) {
		for (size_t combo = 0; combo < total && rc == 0; combo++) {
			size_t rest = combo;

			for (size_t i = 0; i < r->n_args; i++) {
				c[i] = terms[i][rest % n_terms[i]];
				rest /= n_terms[i];
			}
			rc = seccomp_rule_add_array(b->ctx, act, nr, (unsigned)r->n_args, c);
		}
	} else {
		for (size_t i = 0; i < r->n_args && rc == 0; i++)
			for (size_t t = 0; t < n_terms[i] && rc == 0; t++)
				rc = seccomp_rule_add_array(b->ctx, act, nr, 1, &terms[i][t]);
	}
	if (rc < 0)
		return error_set_stage(err, STAGE_PREPARE, -rc,
		                       "seccomp profile \"%s\": syscalls[%zu]: add rule for \"%s\"",
		                       b->p->name, ri, name);
	return 0;
}

static void describe_names(FILE *out, const struct seccomp_profile_rule *r)
{
	size_t width = 0, i;

	fprintf(out, "%zu name%s:", r->n_names, r->n_names == 1 ? "" : "s");
	for (i = 0; i < r->n_names && width < 60; i++) {
		fprintf(out, " %s", r->names[i]);
		width += strlen(r->names[i]) + 1;
	}
	if (i < r->n_names)
		fprintf(out, " ... (+%zu)", r->n_names - i);
}

static void describe_rule(const struct build *b, size_t ri, const char *skipped)
{
	const struct seccomp_profile_rule *r = &b->p->rules[ri];

	if (!b->describe)
		return;
	fprintf(b->describe, "  syscalls[%zu]: %s", ri, seccomp_profile_action_name(r->action));
	if (r->action == SP_ACT_ERRNO)
		fprintf(b->describe, "(%u %s)", r->errno_ret, strerrorname_np((int)r->errno_ret) ?: "?");
	for (size_t i = 0; i < r->n_args; i++) {
		const struct seccomp_profile_arg *a = &r->args[i];

		if (a->op == SP_OP_MASKED_EQ)
			fprintf(b->describe, "%s arg%u & %#llx == %#llx", i ? " and" : " if", a->index,
			        (unsigned long long)a->value, (unsigned long long)a->value_two);
		else
			fprintf(b->describe, "%s arg%u %s %#llx", i ? (has_repeated_index(r) ? " or" : " and") : " if",
			        a->index, seccomp_profile_op_name(a->op) + 9, (unsigned long long)a->value);
		for (size_t k = 0; k < r->n_names; k++)
			if (seccomp_arg_is_32bit(r->names[k], a->index)) {
				fprintf(b->describe, " (on its low 32 bits, as the kernel reads it)");
				break;
			}
	}
	fprintf(b->describe, ": ");
	describe_names(b->describe, r);
	if (skipped)
		fprintf(b->describe, "\n      not applied: %s", skipped);
	fputc('\n', b->describe);
}

/* What an nsrun inside the payload needs beyond the default profile, and nothing
 * more (--allow-nested): its namespaces (clone with CLONE_NEW* flags, unshare for
 * its payload's user namespace), the mounts of its root (mount, umount2,
 * open_tree, move_mount, mount_setattr, pivot_root) and its hostname.  clone3
 * keeps the profile's ENOSYS: nsrun falls back to clone, whose flags are seen.
 * Each takes effect only in a user namespace the payload makes itself: it holds
 * no capability in the container's. */
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char *const nested_syscalls[] = {
	"clone", "unshare", "mount", "umount2", "open_tree", "move_mount", "mount_setattr", "pivot_root",
	"sethostname",
};

/* What a pool request cannot make, as its memory is nsrun's measure of its slot
 * (memwatch.h), never a cgroup's:
 * - System V IPC objects outlive the processes that made them, in their IPC
 *   namespace: where nothing can set that namespace's limits (kernel.shmall,
 *   msgmni: a pool's slot, whose root is unmapped; ipc_namespaces(7)), no
 *   process's memory counts them;
 * - a memfd sent over a unix socket (SCM_RIGHTS) and closed is in no process's
 *   fd table while it waits in the socket's queue, so no measure finds it
 *   (memfd_create(2), unix(7)); memfd_secret(2) likewise. */
static const char *const pool_request_refused[] = { "shmget", "msgget", "semget", "memfd_create", "memfd_secret" };

/* True if name is one of the n of names. */
static bool in_list(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}

/* Adds act (its profile spelling act_name) for each of the n calls of names
 * without condition, those libseccomp does not know skipped; nothing when act is
 * the default.  label says why, for --describe and errors. */
static int build_outright(struct build *b, const char *const *names, size_t n, uint32_t act, const char *act_name,
                          const char *label, struct nsrun_error *err)
{
	if (b->default_act == act)
		return 0;
	if (b->describe)
		fprintf(b->describe, "  %s: %s:", label, act_name);
	for (size_t i = 0; i < n; i++) {
		int nr = seccomp_syscall_resolve_name(names[i]);
		int rc;

		if (nr == __NR_SCMP_ERROR)
			continue;
		rc = seccomp_rule_add(b->ctx, act, nr, 0);
		if (rc < 0)
			return error_set_stage(err, STAGE_PREPARE, -rc, "seccomp: %s %s for %s",
			                       act == SCMP_ACT_ALLOW ? "allow" : "refuse", names[i], label);
		if (b->describe)
			fprintf(b->describe, " %s", names[i]);
	}
	if (b->describe)
		fputc('\n', b->describe);
	return 0;
}

/* --allow-nested: the calls of nested_syscalls allowed; a pool request
 * (NSRUN_SECCOMP_POOL_REQUEST): those of pool_request_refused fail with ENOSYS, as
 * where the kernel lacks them (CONFIG_SYSVIPC). */
static int build_overrides(struct build *b, struct nsrun_error *err)
{
	if (b->allow_nested && build_outright(b, nested_syscalls, ARRAY_SIZE(nested_syscalls), SCMP_ACT_ALLOW,
	                                      "SCMP_ACT_ALLOW", "--allow-nested", err) < 0)
		return -1;
	if (b->pool_request && build_outright(b, pool_request_refused, ARRAY_SIZE(pool_request_refused),
	                                     SCMP_ACT_ERRNO(ENOSYS), "SCMP_ACT_ERRNO(ENOSYS)", "a pool request", err) < 0)
		return -1;
	return 0;
}

static int build_rules(struct build *b, struct nsrun_error *err)
{
	for (size_t ri = 0; ri < b->p->n_rules; ri++) {
		const struct seccomp_profile_rule *r = &b->p->rules[ri];
		uint32_t act = scmp_action(r->action, r->errno_ret);
		const char *why = NULL;

		if (!seccomp_profile_rule_applies(r, b->host, &why)) {
			describe_rule(b, ri, why);
			continue;
		}
		if (act == b->default_act) {
			/* libseccomp refuses such rules (EACCES); they change nothing. */
			describe_rule(b, ri, "same as the default action");
			continue;
		}
		describe_rule(b, ri, NULL);
		for (size_t ni = 0; ni < r->n_names; ni++) {
			int nr = seccomp_syscall_resolve_name(r->names[ni]);

			if (nr == __NR_SCMP_ERROR) {
				if (skip_unknown(b, ri, r->names[ni], err) < 0)
					return -1;
				continue;
			}
			/* --allow-nested: build_overrides allows it outright */
			if (b->allow_nested && act != SCMP_ACT_ALLOW &&
			    in_list(nested_syscalls, ARRAY_SIZE(nested_syscalls), r->names[ni]))
				continue;
			/* a pool request: build_overrides refuses it outright */
			if (b->pool_request && in_list(pool_request_refused, ARRAY_SIZE(pool_request_refused), r->names[ni]))
				continue;
			if (add_rule(b, ri, act, nr, r->names[ni], err) < 0)
				return -1;
		}
	}
	return 0;
}

static int add_arch(struct build *b, const char *token, struct nsrun_error *err)
{
	char lower[32];
	size_t i;
	uint32_t arch;
	int rc;

	/* "SCMP_ARCH_X86_64" -> "x86_64", libseccomp's own spelling. */
	snprintf(lower, sizeof(lower), "%s", token + strlen("SCMP_ARCH_"));
	for (i = 0; lower[i]; i++)
		lower[i] = (char)tolower((unsigned char)lower[i]);
	arch = seccomp_arch_resolve_name(lower);
	if (arch == 0)
		return error_set_stage(err, STAGE_CONFIG, 0,
		                       "seccomp profile \"%s\": architecture %s is not known to libseccomp",
		                       b->p->name, token);
	rc = seccomp_arch_add(b->ctx, arch);
	if (rc < 0 && rc != -EEXIST)
		return error_set_stage(err, STAGE_PREPARE, -rc, "seccomp profile \"%s\": add architecture %s",
		                       b->p->name, token);
	if (b->describe && rc == 0)
		fprintf(b->describe, " %s", token);
	return 0;
}

/* "architectures" plus the archMap entry of the native architecture (Docker's
 * rule); the native one is always in (seccomp_init). */
static int build_arches(struct build *b, struct nsrun_error *err)
{
	const char *native = seccomp_profile_native_arch(b->host->machine);

	if (b->describe)
		fprintf(b->describe, "architectures: %s (native)", native ? native : b->host->machine);
	for (size_t i = 0; i < b->p->n_arches; i++)
		if (add_arch(b, b->p->arches[i], err) < 0)
			return -1;
	for (size_t i = 0; i < b->p->n_archmap && native; i++) {
		const struct seccomp_profile_archmap *m = &b->p->archmap[i];

		if (strcmp(m->arch, native) != 0)
			continue;
		if (add_arch(b, m->arch, err) < 0)
			return -1;
		for (size_t k = 0; k < m->n_sub_arches; k++)
			if (add_arch(b, m->sub_arches[k], err) < 0)
				return -1;
	}
	if (b->describe)
		fprintf(b->describe, "\n  any other ABI (e.g. i386 int 0x80 on x86-64): SCMP_ACT_KILL_PROCESS\n");
	return 0;
}

static int build_filter(struct build *b, struct nsrun_error *err)
{
	int rc;

	b->default_act = scmp_action(b->p->default_action, b->p->default_errno_ret);
	b->ctx = seccomp_init(b->default_act);
	if (!b->ctx)
		return error_set_stage(err, STAGE_PREPARE, ENOMEM, "seccomp_init");
	/* The payload sets PR_SET_NO_NEW_PRIVS itself and loads the program with
	 * seccomp(2), so libseccomp's own NNP handling is off. */
	if ((rc = seccomp_attr_set(b->ctx, SCMP_FLTATR_CTL_NNP, 0)) < 0)
		return error_set_stage(err, STAGE_PREPARE, -rc, "set seccomp filter attributes");
	/* Calls through an ABI not in the filter (i386 int 0x80, x32) kill the
	 * process.  libseccomp offers KILL_PROCESS only when it has probed the
	 * kernel (API level 3, Linux 4.14); where probing fails (valgrind) the
	 * thread is killed instead: the call is refused either way. */
	rc = seccomp_attr_set(b->ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (rc < 0)
		rc = seccomp_attr_set(b->ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_THREAD);
	if (rc < 0)
		return error_set_stage(err, STAGE_PREPARE, -rc, "set the seccomp bad-architecture action");
	/* A binary tree of syscall numbers: long allowlists cost O(log n) per call. */
	seccomp_attr_set(b->ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (build_arches(b, err) < 0)
		return -1;
	if (b->describe)
		fprintf(b->describe, "rules:\n");
	if (build_rules(b, err) < 0)
		return -1;
	return build_overrides(b, err);
}

static int export_bpf(scmp_filter_ctx ctx, struct sock_filter **insns, uint32_t *n,
                      struct nsrun_error *err)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ struct sock_filter *buf = NULL;
	struct stat st;
	size_t got = 0;
	int rc;

	fd = memfd_create("nsrun-seccomp", MFD_CLOEXEC);
	if (fd < 0)
		return error_set_stage(err, STAGE_PREPARE, errno, "memfd_create for the seccomp program");
	if ((rc = seccomp_export_bpf(ctx, fd)) < 0)
		return error_set_stage(err, STAGE_PREPARE, -rc, "export the seccomp program");
	if (fstat(fd, &st) < 0)
		return error_set_stage(err, STAGE_PREPARE, errno, "stat the seccomp program");
	if (st.st_size <= 0 || st.st_size % (off_t)sizeof(struct sock_filter) != 0)
		return error_set_stage(err, STAGE_PREPARE, EINVAL, "exported seccomp program has %lld bytes",
		                       (long long)st.st_size);
	if (st.st_size / (off_t)sizeof(struct sock_filter) > BPF_MAXINSNS)
		return error_set_stage(err, STAGE_PREPARE, E2BIG,
		                       "seccomp program has %lld instructions, the kernel takes at most %d",
		                       (long long)(st.st_size / (off_t)sizeof(struct sock_filter)), BPF_MAXINSNS);
	buf = malloc((size_t)st.st_size);
	if (!buf)
		return error_set_stage(err, STAGE_PREPARE, ENOMEM, "seccomp program");
	while (got < (size_t)st.st_size) {
		ssize_t r = pread(fd, (char *)buf + got, (size_t)st.st_size - got, (off_t)got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return error_set_stage(err, STAGE_PREPARE, r < 0 ? errno : EIO, "read the seccomp program");
		got += (size_t)r;
	}
	*n = (uint32_t)(got / sizeof(struct sock_filter));
	*insns = steal_ptr(&buf);
	return 0;
}

/* Parses and compiles bytes into *e (program, warnings, counts). */
static int compile(const char *name, const char *bytes, size_t len, const struct host_info *hi,
                   unsigned flags, struct seccomp_cache_entry *e, struct nsrun_error *err)
{
	_cleanup_profile_ struct seccomp_profile *p = NULL;
	_cleanup_scmp_ scmp_filter_ctx ctx = NULL;
	struct build b = { .host = &hi->h, .strict = (flags & NSRUN_SECCOMP_STRICT) != 0,
	                   .allow_nested = (flags & NSRUN_SECCOMP_ALLOW_NESTED) != 0,
	                   .pool_request = (flags & NSRUN_SECCOMP_POOL_REQUEST) != 0 };
	int rc;

	if (seccomp_profile_parse_buffer(name, bytes, len, &p, err) < 0)
		return -1;
	b.p = p;
	rc = build_filter(&b, err);
	ctx = b.ctx;
	if (rc == 0)
		rc = export_bpf(ctx, &e->insns, &e->n_insns, err);
	if (rc < 0) {
		free(b.warnings);
		return -1;
	}
	e->warnings = b.warnings;
	e->n_skipped_safe = b.n_skipped_safe;
	e->n_holes = b.n_holes;
	return 0;
}

/* Passes each stored warning line to warn with the profile's name in front. */
static unsigned emit_warnings(const char *name, const char *warnings,
                              void (*warn)(void *ctx, const char *line), void *ctx)
{
	unsigned count = 0;
	char line[512];

	while (warnings && *warnings) {
		size_t n = strcspn(warnings, "\n");

		snprintf(line, sizeof(line), "seccomp profile \"%s\": %.*s", name, (int)n, warnings);
		if (warn)
			warn(ctx, line);
		count++;
		warnings += n;
		if (*warnings == '\n')
			warnings++;
	}
	return count;
}

int seccomp_prepare(const char *spec, const char *profiles_dir, unsigned flags,
                    void (*warn)(void *ctx, const char *line), void *ctx,
                    struct nsrun_seccomp **out, struct nsrun_error *err)
{
	_cleanup_free_ char *bytes = NULL;
	_cleanup_free_ struct nsrun_seccomp *f = NULL;
	const char *builtin = NULL;
	char path[SECCOMP_SOURCE_MAX];
	struct seccomp_cache_entry e = { 0 };
	uint8_t key[SHA256_DIGEST_SIZE];
	struct host_info hi;
	bool use_cache = seccomp_cache_enabled();
	size_t len;

	*out = NULL;
	if (strcmp(spec, "unconfined") == 0)
		return 0;
	if (read_spec(spec, profiles_dir, path, sizeof(path), &bytes, &builtin, &len, err) < 0 ||
	    host_info_get(&hi, err) < 0)
		return -1;
	f = calloc(1, sizeof(*f));
	if (!f)
		return error_set_stage(err, STAGE_PREPARE, ENOMEM, "seccomp program");
	use_cache = use_cache && cache_key(bytes, len, path, &hi, flags, key);
	if (use_cache)
		f->stats.cache_hit = seccomp_cache_load(key, &e);
	if (!f->stats.cache_hit) {
		if (builtin) {  /* the parser wants a NUL-terminated copy */
			if (!(bytes = strndup(builtin, len)))
				return error_set_stage(err, STAGE_PREPARE, ENOMEM, "seccomp profile \"%s\"", spec);
		}
		if (compile(path, bytes, len, &hi, flags, &e, err) < 0)
			return -1;
		if (use_cache)
			f->stats.cache_written = seccomp_cache_store(key, &e);
	}
	snprintf(f->stats.source, sizeof(f->stats.source), "%s", path);
	f->stats.n_insns = e.n_insns;
	f->stats.n_skipped_safe = e.n_skipped_safe;
	f->stats.n_holes = e.n_holes;
	f->stats.n_warnings = emit_warnings(path, e.warnings, warn, ctx);
	f->prog.len = (unsigned short)e.n_insns;
	f->prog.filter = steal_ptr(&e.insns);
	seccomp_cache_entry_clear(&e);
	*out = steal_ptr(&f);
	return 0;
}

int seccomp_apply(const struct nsrun_seccomp *f, struct nsrun_error *err)
{
	if (!f)
		return 0;
	/* prctl(PR_SET_SECCOMP) where seccomp(2) is missing (before 3.17, or valgrind) */
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &f->prog) < 0 &&
	    (errno != ENOSYS || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &f->prog, 0, 0) < 0))
		return error_set_stage(err, STAGE_CONTAINER, errno, "load the seccomp filter");
	return 0;
}

void seccomp_free(struct nsrun_seccomp *f)
{
	if (!f)
		return;
	free(f->prog.filter);
	free(f);
}

const struct nsrun_seccomp_stats *seccomp_stats(const struct nsrun_seccomp *f)
{
	return &f->stats;
}

const struct sock_fprog *seccomp_program(const struct nsrun_seccomp *f)
{
	return &f->prog;
}

static void describe_header(FILE *out, const char *path, const struct seccomp_profile *p)
{
	const struct scmp_version *v = seccomp_version();

	fprintf(out, "profile: %s\n", path);
	if (p->comment)
		fprintf(out, "comment: %s\n", p->comment);
	fprintf(out, "default action: %s", seccomp_profile_action_name(p->default_action));
	if (p->default_action == SP_ACT_ERRNO)
		fprintf(out, " (%u %s)", p->default_errno_ret,
		        strerrorname_np((int)p->default_errno_ret) ?: "?");
	fprintf(out, "\nlibseccomp: %u.%u.%u\n", v->major, v->minor, v->micro);
}

int seccomp_describe(const char *spec, const char *profiles_dir, FILE *out, struct nsrun_error *err)
{
	_cleanup_free_ char *bytes = NULL;
	_cleanup_free_ struct sock_filter *insns = NULL;
	char path[SECCOMP_SOURCE_MAX];
	_cleanup_profile_ struct seccomp_profile *p = NULL;
	_cleanup_scmp_ scmp_filter_ctx ctx = NULL;
	struct build b = { .describe = out };
	struct host_info hi;
	uint32_t n = 0;
	size_t len;
	int rc;

	if (strcmp(spec, "unconfined") == 0) {
		fprintf(out, "profile: unconfined (no seccomp filter: every system call is allowed)\n");
		return 0;
	}
	if (read_spec(spec, profiles_dir, path, sizeof(path), &bytes, NULL, &len, err) < 0 ||
	    host_info_get(&hi, err) < 0 ||
	    seccomp_profile_parse_buffer(path, bytes, len, &p, err) < 0)
		return -1;
	describe_header(out, path, p);
	b.p = p;
	b.host = &hi.h;
	rc = build_filter(&b, err);
	ctx = b.ctx;
	free(b.warnings);
	if (rc < 0 || export_bpf(ctx, &insns, &n, err) < 0)
		return -1;
	fprintf(out, "unknown syscall names: %u safely skipped, %u open hole%s\n", b.n_skipped_safe,
	        b.n_holes, b.n_holes == 1 ? "" : "s");
	fprintf(out, "program: %u BPF instructions\n", n);
	fprintf(out, "usable: yes%s\n", b.n_holes ? " (with warnings; an error under --strict)" : "");
	return 0;
}

const char *seccomp_profiles_dir(void)
{
	const char *env = getenv("NSRUN_SECCOMP_PROFILES");

	return env && *env ? env : NULL;
}
