/* seccomp_profile.c - Docker/OCI seccomp profile JSON -> struct seccomp_profile.
 *
 * yajl's tree API builds the document; typed accessors below walk it and name
 * the JSON path of anything wrong.  Unknown keys ("comment" of a rule, "errno",
 * "flags", "listenerPath") are ignored as Docker ignores them.
 */
#include "seccomp_profile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "cleanup.h"
#include "util.h"

#define JPATH_MAX 96

/* Parse context: the profile's name for messages and where errors go. */
struct pctx {
	const char *name;
	struct nsrun_error *err;
};

static const char *const action_names[SP_ACT__COUNT] = {
	[SP_ACT_ALLOW] = "SCMP_ACT_ALLOW",
	[SP_ACT_LOG] = "SCMP_ACT_LOG",
	[SP_ACT_ERRNO] = "SCMP_ACT_ERRNO",
	[SP_ACT_TRAP] = "SCMP_ACT_TRAP",
	[SP_ACT_KILL_THREAD] = "SCMP_ACT_KILL_THREAD",
	[SP_ACT_KILL_PROCESS] = "SCMP_ACT_KILL_PROCESS",
};

static const char *const op_names[] = {
	[SP_OP_NE] = "SCMP_CMP_NE",
	[SP_OP_LT] = "SCMP_CMP_LT",
	[SP_OP_LE] = "SCMP_CMP_LE",
	[SP_OP_EQ] = "SCMP_CMP_EQ",
	[SP_OP_GE] = "SCMP_CMP_GE",
	[SP_OP_GT] = "SCMP_CMP_GT",
	[SP_OP_MASKED_EQ] = "SCMP_CMP_MASKED_EQ",
};

/* Architecture names: uname machine, Go GOARCH, libseccomp token. */
static const struct {
	const char *machine, *goarch, *token;
} arch_table[] = {
	{ "x86_64", "amd64", "SCMP_ARCH_X86_64" },
	{ "i686", "386", "SCMP_ARCH_X86" },
	{ "aarch64", "arm64", "SCMP_ARCH_AARCH64" },
	{ "armv7l", "arm", "SCMP_ARCH_ARM" },
	{ "ppc64le", "ppc64le", "SCMP_ARCH_PPC64LE" },
	{ "ppc64", "ppc64", "SCMP_ARCH_PPC64" },
	{ "s390x", "s390x", "SCMP_ARCH_S390X" },
	{ "riscv64", "riscv64", "SCMP_ARCH_RISCV64" },
	{ "mips64", "mips64", "SCMP_ARCH_MIPS64" },
};

/* Tokens accepted in "architectures" and archMap (libseccomp 2.5 names). */
static const char *const known_arch_tokens[] = {
	"SCMP_ARCH_X86", "SCMP_ARCH_X86_64", "SCMP_ARCH_X32", "SCMP_ARCH_ARM",
	"SCMP_ARCH_AARCH64", "SCMP_ARCH_MIPS", "SCMP_ARCH_MIPS64", "SCMP_ARCH_MIPS64N32",
	"SCMP_ARCH_MIPSEL", "SCMP_ARCH_MIPSEL64", "SCMP_ARCH_MIPSEL64N32", "SCMP_ARCH_PPC",
	"SCMP_ARCH_PPC64", "SCMP_ARCH_PPC64LE", "SCMP_ARCH_S390", "SCMP_ARCH_S390X",
	"SCMP_ARCH_PARISC", "SCMP_ARCH_PARISC64", "SCMP_ARCH_RISCV64",
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

const char *seccomp_profile_action_name(enum seccomp_profile_action a)
{
	if ((unsigned)a < SP_ACT__COUNT)
		return action_names[a];
	return "SCMP_ACT_?";
}

const char *seccomp_profile_op_name(enum seccomp_profile_op op)
{
	if (op >= SP_OP_NE && op <= SP_OP_MASKED_EQ)
		return op_names[op];
	return "SCMP_CMP_?";
}

bool seccomp_profile_action_permits(enum seccomp_profile_action a)
{
	return a == SP_ACT_ALLOW || a == SP_ACT_LOG;
}

__attribute__((format(printf, 3, 4)))
static int perr(const struct pctx *c, const char *path, const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (path && *path)
		return error_set_stage(c->err, STAGE_CONFIG, 0, "seccomp profile \"%s\": %s: %s",
		                       c->name, path, msg);
	return error_set_stage(c->err, STAGE_CONFIG, 0, "seccomp profile \"%s\": %s", c->name, msg);
}

/* JSON paths: "<base>.<key>" and "<base>[<i>]", cut with "..." when long. */
static void jp_key(char jp[JPATH_MAX], const char *base, const char *key)
{
	if (snprintf(jp, JPATH_MAX, "%s.%s", base, key) >= JPATH_MAX)
		memcpy(jp + JPATH_MAX - 4, "...", 4);
}

static void jp_index(char jp[JPATH_MAX], const char *base, size_t i)
{
	if (snprintf(jp, JPATH_MAX, "%s[%zu]", base, i) >= JPATH_MAX)
		memcpy(jp + JPATH_MAX - 4, "...", 4);
}

static yajl_val obj_get(yajl_val obj, const char *key)
{
	for (size_t i = 0; i < obj->u.object.len; i++)
		if (strcmp(obj->u.object.keys[i], key) == 0)
			return obj->u.object.values[i];
	return NULL;
}

static void free_strv(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static int get_string(const struct pctx *c, yajl_val v, const char *path, char **out)
{
	if (!YAJL_IS_STRING(v))
		return perr(c, path, "expected a string");
	*out = strdup(v->u.string);
	if (!*out)
		return error_set_stage(c->err, STAGE_CONFIG, ENOMEM, "seccomp profile \"%s\"", c->name);
	return 0;
}

/* An array of strings; absent or null is an empty list. */
static int get_strv(const struct pctx *c, yajl_val v, const char *path, char ***out, size_t *n)
{
	char jp[JPATH_MAX];

	*out = NULL;
	*n = 0;
	if (!v || YAJL_IS_NULL(v))
		return 0;
	if (!YAJL_IS_ARRAY(v))
		return perr(c, path, "expected an array of strings");
	if (v->u.array.len == 0)
		return 0;
	*out = calloc(v->u.array.len, sizeof(char *));
	if (!*out)
		return error_set_stage(c->err, STAGE_CONFIG, ENOMEM, "seccomp profile \"%s\"", c->name);
	for (size_t i = 0; i < v->u.array.len; i++) {
		jp_index(jp, path, i);
		if (get_string(c, v->u.array.values[i], jp, &(*out)[i]) < 0) {
			free_strv(*out, i);
			*out = NULL;
			*n = 0;
			return -1;
		}
		*n = i + 1;
	}
	return 0;
}

/* A non-negative JSON integer up to UINT64_MAX (yajl's own integer stops at
 * LLONG_MAX, so the number's text is parsed here). */
static int get_u64(const struct pctx *c, yajl_val v, const char *path, uint64_t max, uint64_t *out)
{
	const char *s;
	char *end;
	unsigned long long x;

	if (!YAJL_IS_NUMBER(v))
		return perr(c, path, "expected a number");
	s = v->u.number.r;
	if (!s || *s < '0' || *s > '9')
		return perr(c, path, "expected a non-negative integer");
	errno = 0;
	x = strtoull(s, &end, 10);
	if (*end != '\0')
		return perr(c, path, "expected a non-negative integer");
	if (errno == ERANGE || x > max)
		return perr(c, path, "%s is out of range (at most %llu)", s, (unsigned long long)max);
	*out = x;
	return 0;
}

static int parse_action(const struct pctx *c, yajl_val v, const char *path,
                        enum seccomp_profile_action *out)
{
	if (!YAJL_IS_STRING(v))
		return perr(c, path, "expected a string");
	if (strcmp(v->u.string, "SCMP_ACT_KILL") == 0) {
		*out = SP_ACT_KILL_THREAD;
		return 0;
	}
	for (unsigned i = 0; i < SP_ACT__COUNT; i++) {
		if (strcmp(v->u.string, action_names[i]) == 0) {
			*out = (enum seccomp_profile_action)i;
			return 0;
		}
	}
	return perr(c, path, "unknown action \"%s\"", v->u.string);
}

/* errnoRet (or defaultErrnoRet) next to an action; EPERM when absent. */
static int parse_errno_ret(const struct pctx *c, yajl_val v, const char *path,
                           enum seccomp_profile_action action, unsigned *out)
{
	uint64_t x;

	*out = EPERM;
	if (!v || YAJL_IS_NULL(v))
		return 0;
	if (action != SP_ACT_ERRNO)
		return perr(c, path, "only valid with SCMP_ACT_ERRNO");
	if (get_u64(c, v, path, SECCOMP_PROFILE_MAX_ERRNO, &x) < 0)
		return -1;
	*out = (unsigned)x;
	return 0;
}

int seccomp_profile_parse_kernel(const char *s, struct seccomp_kernel_version *v)
{
	unsigned long part[3] = { 0, 0, 0 };
	char *end;

	for (int i = 0; i < 3; i++) {
		if (*s < '0' || *s > '9')
			return i >= 2 ? 0 : -1;
		errno = 0;
		part[i] = strtoul(s, &end, 10);
		if (errno == ERANGE || part[i] > 0xffffu)
			return -1;
		v->major = (unsigned)part[0];
		v->minor = (unsigned)part[1];
		v->patch = (unsigned)part[2];
		if (*end != '.')
			return i >= 1 ? 0 : -1;
		s = end + 1;
	}
	return 0;
}

static int kernel_cmp(const struct seccomp_kernel_version *a, const struct seccomp_kernel_version *b)
{
	if (a->major != b->major)
		return a->major < b->major ? -1 : 1;
	if (a->minor != b->minor)
		return a->minor < b->minor ? -1 : 1;
	if (a->patch != b->patch)
		return a->patch < b->patch ? -1 : 1;
	return 0;
}

static void filter_clear(struct seccomp_profile_filter *f)
{
	free_strv(f->arches, f->n_arches);
	free_strv(f->caps, f->n_caps);
	memset(f, 0, sizeof(*f));
}

static int parse_filter(const struct pctx *c, yajl_val v, const char *path,
                        struct seccomp_profile_filter *f)
{
	char jp[JPATH_MAX];
	yajl_val mk;

	if (!v || YAJL_IS_NULL(v))
		return 0;
	if (!YAJL_IS_OBJECT(v))
		return perr(c, path, "expected an object");
	jp_key(jp, path, "arches");
	if (get_strv(c, obj_get(v, "arches"), jp, &f->arches, &f->n_arches) < 0)
		return -1;
	jp_key(jp, path, "caps");
	if (get_strv(c, obj_get(v, "caps"), jp, &f->caps, &f->n_caps) < 0)
		return -1;
	mk = obj_get(v, "minKernel");
	if (mk && !YAJL_IS_NULL(mk)) {
		jp_key(jp, path, "minKernel");
		if (!YAJL_IS_STRING(mk))
			return perr(c, jp, "expected a string");
		if (seccomp_profile_parse_kernel(mk->u.string, &f->min_kernel) < 0)
			return perr(c, jp, "invalid kernel version \"%s\" (want \"<major>.<minor>\")",
			            mk->u.string);
		f->has_min_kernel = true;
	}
	return 0;
}

static int parse_op(const struct pctx *c, yajl_val v, const char *path, enum seccomp_profile_op *op)
{
	if (!YAJL_IS_STRING(v))
		return perr(c, path, "expected a string");
	for (int i = SP_OP_NE; i <= SP_OP_MASKED_EQ; i++) {
		if (strcmp(v->u.string, op_names[i]) == 0) {
			*op = (enum seccomp_profile_op)i;
			return 0;
		}
	}
	return perr(c, path, "unknown operator \"%s\"", v->u.string);
}

static int parse_arg(const struct pctx *c, yajl_val v, const char *path, struct seccomp_profile_arg *a)
{
	char jp[JPATH_MAX];
	yajl_val x;
	uint64_t idx;

	if (!YAJL_IS_OBJECT(v))
		return perr(c, path, "expected an object");
	jp_key(jp, path, "index");
	if (!(x = obj_get(v, "index")))
		return perr(c, jp, "missing");
	if (get_u64(c, x, jp, SECCOMP_PROFILE_MAX_ARG, &idx) < 0)
		return -1;
	a->index = (unsigned)idx;
	jp_key(jp, path, "value");
	if (!(x = obj_get(v, "value")))
		return perr(c, jp, "missing");
	if (get_u64(c, x, jp, UINT64_MAX, &a->value) < 0)
		return -1;
	jp_key(jp, path, "valueTwo");
	x = obj_get(v, "valueTwo");
	a->value_two = 0;
	if (x && !YAJL_IS_NULL(x) && get_u64(c, x, jp, UINT64_MAX, &a->value_two) < 0)
		return -1;
	jp_key(jp, path, "op");
	if (!(x = obj_get(v, "op")))
		return perr(c, jp, "missing");
	return parse_op(c, x, jp, &a->op);
}

static int parse_args(const struct pctx *c, yajl_val v, const char *path, struct seccomp_profile_rule *r)
{
	char jp[JPATH_MAX];

	if (!v || YAJL_IS_NULL(v))
		return 0;
	if (!YAJL_IS_ARRAY(v))
		return perr(c, path, "expected an array");
	if (v->u.array.len == 0)
		return 0;
	r->args = calloc(v->u.array.len, sizeof(*r->args));
	if (!r->args)
		return error_set_stage(c->err, STAGE_CONFIG, ENOMEM, "seccomp profile \"%s\"", c->name);
	for (size_t i = 0; i < v->u.array.len; i++) {
		jp_index(jp, path, i);
		if (parse_arg(c, v->u.array.values[i], jp, &r->args[i]) < 0)
			return -1;
		r->n_args = i + 1;
	}
	return 0;
}

/* "name" (one string) or "names" (array), not both, not neither. */
static int parse_rule_names(const struct pctx *c, yajl_val v, const char *path,
                            struct seccomp_profile_rule *r)
{
	char jp[JPATH_MAX];
	yajl_val one = obj_get(v, "name"), many = obj_get(v, "names");

	if (one && YAJL_IS_NULL(one))
		one = NULL;
	if (one && many && !YAJL_IS_NULL(many))
		return perr(c, path, "use either \"name\" or \"names\", not both");
	if (one) {
		jp_key(jp, path, "name");
		r->names = calloc(1, sizeof(char *));
		if (!r->names)
			return error_set_stage(c->err, STAGE_CONFIG, ENOMEM, "seccomp profile \"%s\"", c->name);
		if (get_string(c, one, jp, &r->names[0]) < 0)
			return -1;
		r->n_names = 1;
	} else {
		jp_key(jp, path, "names");
		if (get_strv(c, many, jp, &r->names, &r->n_names) < 0)
			return -1;
	}
	if (r->n_names == 0)
		return perr(c, path, "no syscall names (\"names\" is empty or missing)");
	for (size_t i = 0; i < r->n_names; i++)
		if (r->names[i][0] == '\0')
			return perr(c, path, "names[%zu]: empty syscall name", i);
	return 0;
}

static int parse_rule(const struct pctx *c, yajl_val v, const char *path, struct seccomp_profile_rule *r)
{
	char jp[JPATH_MAX];
	yajl_val x;

	if (!YAJL_IS_OBJECT(v))
		return perr(c, path, "expected an object");
	if (parse_rule_names(c, v, path, r) < 0)
		return -1;
	jp_key(jp, path, "action");
	if (!(x = obj_get(v, "action")))
		return perr(c, jp, "missing");
	if (parse_action(c, x, jp, &r->action) < 0)
		return -1;
	jp_key(jp, path, "errnoRet");
	if (parse_errno_ret(c, obj_get(v, "errnoRet"), jp, r->action, &r->errno_ret) < 0)
		return -1;
	jp_key(jp, path, "args");
	if (parse_args(c, obj_get(v, "args"), jp, r) < 0)
		return -1;
	jp_key(jp, path, "includes");
	if (parse_filter(c, obj_get(v, "includes"), jp, &r->includes) < 0)
		return -1;
	jp_key(jp, path, "excludes");
	return parse_filter(c, obj_get(v, "excludes"), jp, &r->excludes);
}

static int check_arch_tokens(const struct pctx *c, char **v, size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++) {
		bool known = false;

		for (size_t k = 0; k < ARRAY_SIZE(known_arch_tokens); k++)
			known = known || strcmp(v[i], known_arch_tokens[k]) == 0;
		if (!known)
			return perr(c, path, "[%zu]: unknown architecture \"%s\"", i, v[i]);
	}
	return 0;
}

static int parse_archmap(const struct pctx *c, yajl_val v, struct seccomp_profile *p)
{
	char jp[JPATH_MAX];

	if (!v || YAJL_IS_NULL(v))
		return 0;
	if (!YAJL_IS_ARRAY(v))
		return perr(c, "archMap", "expected an array");
	if (v->u.array.len == 0)
		return 0;
	p->archmap = calloc(v->u.array.len, sizeof(*p->archmap));
	if (!p->archmap)
		return error_set_stage(c->err, STAGE_CONFIG, ENOMEM, "seccomp profile \"%s\"", c->name);
	for (size_t i = 0; i < v->u.array.len; i++) {
		struct seccomp_profile_archmap *m = &p->archmap[i];
		yajl_val e = v->u.array.values[i], a;

		p->n_archmap = i + 1;
		snprintf(jp, sizeof(jp), "archMap[%zu]", i);
		if (!YAJL_IS_OBJECT(e))
			return perr(c, jp, "expected an object");
		snprintf(jp, sizeof(jp), "archMap[%zu].architecture", i);
		if (!(a = obj_get(e, "architecture")))
			return perr(c, jp, "missing");
		if (get_string(c, a, jp, &m->arch) < 0 || check_arch_tokens(c, &m->arch, 1, jp) < 0)
			return -1;
		snprintf(jp, sizeof(jp), "archMap[%zu].subArchitectures", i);
		if (get_strv(c, obj_get(e, "subArchitectures"), jp, &m->sub_arches, &m->n_sub_arches) < 0 ||
		    check_arch_tokens(c, m->sub_arches, m->n_sub_arches, jp) < 0)
			return -1;
	}
	return 0;
}

static int parse_rules(const struct pctx *c, yajl_val v, struct seccomp_profile *p)
{
	char jp[JPATH_MAX];

	if (!v || YAJL_IS_NULL(v))
		return 0;
	if (!YAJL_IS_ARRAY(v))
		return perr(c, "syscalls", "expected an array");
	if (v->u.array.len == 0)
		return 0;
	p->rules = calloc(v->u.array.len, sizeof(*p->rules));
	if (!p->rules)
		return error_set_stage(c->err, STAGE_CONFIG, ENOMEM, "seccomp profile \"%s\"", c->name);
	for (size_t i = 0; i < v->u.array.len; i++) {
		p->n_rules = i + 1;
		snprintf(jp, sizeof(jp), "syscalls[%zu]", i);
		if (parse_rule(c, v->u.array.values[i], jp, &p->rules[i]) < 0)
			return -1;
	}
	return 0;
}

static int parse_top(const struct pctx *c, yajl_val root, struct seccomp_profile *p)
{
	yajl_val x;

	if (!YAJL_IS_OBJECT(root))
		return perr(c, NULL, "expected a JSON object at the top level");
	x = obj_get(root, "comment");
	if (x && !YAJL_IS_NULL(x) && get_string(c, x, "comment", &p->comment) < 0)
		return -1;
	if (!(x = obj_get(root, "defaultAction")))
		return perr(c, "defaultAction", "missing");
	if (parse_action(c, x, "defaultAction", &p->default_action) < 0)
		return -1;
	if (parse_errno_ret(c, obj_get(root, "defaultErrnoRet"), "defaultErrnoRet",
	                    p->default_action, &p->default_errno_ret) < 0)
		return -1;
	if (get_strv(c, obj_get(root, "architectures"), "architectures", &p->arches, &p->n_arches) < 0 ||
	    check_arch_tokens(c, p->arches, p->n_arches, "architectures") < 0)
		return -1;
	if (parse_archmap(c, obj_get(root, "archMap"), p) < 0)
		return -1;
	return parse_rules(c, obj_get(root, "syscalls"), p);
}

/* yajl's message is several lines (message, the text near the error, a caret);
 * keep "<message> near '<text>'" on one line. */
static void yajl_error_line(const char *ebuf, char *out, size_t outlen)
{
	const char *nl = strchr(ebuf, '\n');
	const char *near = nl ? nl + 1 : NULL;
	size_t mlen = nl ? (size_t)(nl - ebuf) : strlen(ebuf), nlen = 0;

	if (near) {
		while (*near == ' ')
			near++;
		nlen = strcspn(near, "\n");
	}
	if (nlen > 0)
		snprintf(out, outlen, "%.*s near '%.*s'", (int)mlen, ebuf, (int)nlen, near);
	else
		snprintf(out, outlen, "%.*s", (int)mlen, ebuf);
	if (mlen == 0 && nlen == 0)
		snprintf(out, outlen, "malformed JSON");
}

int seccomp_profile_parse_buffer(const char *name, const char *buf, size_t len,
                                 struct seccomp_profile **out, struct nsrun_error *err)
{
	struct pctx c = { .name = name, .err = err };
	_cleanup_free_ char *text = NULL;
	struct seccomp_profile *p;
	char ebuf[256] = "", line[160];
	yajl_val root;
	size_t off;
	int r;

	if (len > SECCOMP_PROFILE_MAX_BYTES)
		return perr(&c, NULL, "larger than %u bytes", SECCOMP_PROFILE_MAX_BYTES);
	if (memchr(buf, '\0', len))
		return perr(&c, NULL, "invalid JSON: NUL byte at offset %zu",
		            (size_t)((const char *)memchr(buf, '\0', len) - buf));
	if ((off = json_scan_depth(buf, len, SECCOMP_PROFILE_MAX_DEPTH)) < len)
		return perr(&c, NULL, "invalid JSON: nested deeper than %d levels at offset %zu",
		            SECCOMP_PROFILE_MAX_DEPTH, off);
	text = strndup(buf, len);
	p = calloc(1, sizeof(*p));
	if (!text || !p || !(p->name = strdup(name))) {
		seccomp_profile_free(p);
		return error_set_stage(err, STAGE_CONFIG, ENOMEM, "seccomp profile \"%s\"", name);
	}
	root = yajl_tree_parse(text, ebuf, sizeof(ebuf));
	if (!root) {
		seccomp_profile_free(p);
		yajl_error_line(ebuf, line, sizeof(line));
		return perr(&c, NULL, "invalid JSON: %s", line);
	}
	r = parse_top(&c, root, p);
	yajl_tree_free(root);
	if (r < 0) {
		seccomp_profile_free(p);
		return -1;
	}
	*out = p;
	return 0;
}

int seccomp_profile_read_file(const char *path, char **buf, size_t *len, struct nsrun_error *err)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *data = NULL;
	struct stat st;
	size_t got = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return error_set_stage(err, STAGE_CONFIG, errno, "open seccomp profile \"%s\"", path);
	if (fstat(fd, &st) < 0)
		return error_set_stage(err, STAGE_CONFIG, errno, "stat seccomp profile \"%s\"", path);
	if (!S_ISREG(st.st_mode))
		return error_set_stage(err, STAGE_CONFIG, EINVAL,
		                       "seccomp profile \"%s\" is not a regular file", path);
	if (st.st_size > (off_t)SECCOMP_PROFILE_MAX_BYTES)
		return error_set_stage(err, STAGE_CONFIG, EFBIG, "seccomp profile \"%s\"", path);
	data = malloc((size_t)st.st_size + 1);
	if (!data)
		return error_set_stage(err, STAGE_CONFIG, ENOMEM, "seccomp profile \"%s\"", path);
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, data + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return error_set_stage(err, STAGE_CONFIG, errno, "read seccomp profile \"%s\"", path);
		if (n == 0)
			break;  /* shrank while we read: parse what is there */
		got += (size_t)n;
	}
	data[got] = '\0';
	*len = got;
	*buf = steal_ptr(&data);
	return 0;
}

void seccomp_profile_free(struct seccomp_profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_rules; i++) {
		struct seccomp_profile_rule *r = &p->rules[i];

		free_strv(r->names, r->n_names);
		free(r->args);
		filter_clear(&r->includes);
		filter_clear(&r->excludes);
	}
	free(p->rules);
	for (size_t i = 0; i < p->n_archmap; i++) {
		free(p->archmap[i].arch);
		free_strv(p->archmap[i].sub_arches, p->archmap[i].n_sub_arches);
	}
	free(p->archmap);
	free_strv(p->arches, p->n_arches);
	free(p->comment);
	free(p->name);
	free(p);
}

const char *seccomp_profile_native_arch(const char *m)
{
	for (size_t i = 0; i < ARRAY_SIZE(arch_table); i++)
		if (strcmp(m, arch_table[i].machine) == 0)
			return arch_table[i].token;
	return NULL;
}

bool seccomp_profile_arch_is_native(const char *name, const char *m)
{
	if (strcmp(name, m) == 0)
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(arch_table); i++) {
		if (strcmp(m, arch_table[i].machine) != 0)
			continue;
		if (strcmp(name, arch_table[i].goarch) == 0 || strcmp(name, arch_table[i].token) == 0)
			return true;
	}
	return false;
}

static bool arch_listed(char **v, size_t n, const char *m)
{
	for (size_t i = 0; i < n; i++)
		if (seccomp_profile_arch_is_native(v[i], m))
			return true;
	return false;
}

bool seccomp_profile_rule_applies(const struct seccomp_profile_rule *r,
                                  const struct seccomp_host *h, const char **why)
{
	const char *reason = NULL;

	if (r->includes.n_caps > 0)
		reason = "needs capabilities, and nsrun drops them all";
	else if (r->includes.n_arches > 0 && !arch_listed(r->includes.arches, r->includes.n_arches, h->machine))
		reason = "for other architectures";
	else if (r->includes.has_min_kernel && kernel_cmp(&h->kernel, &r->includes.min_kernel) < 0)
		reason = "needs a newer kernel";
	else if (r->excludes.n_arches > 0 && arch_listed(r->excludes.arches, r->excludes.n_arches, h->machine))
		reason = "excluded on this architecture";
	else if (r->excludes.has_min_kernel && kernel_cmp(&h->kernel, &r->excludes.min_kernel) >= 0)
		reason = "excluded on this kernel";
	/* excludes.caps: nsrun holds no capability, so nothing is excluded. */
	if (reason && why)
		*why = reason;
	return reason == NULL;
}
