/* oci_config.c - see oci_config.h.  Field names and meanings: runtime-spec 1.2,
 * config.md ("process", "root", "mounts", "hooks") and config-linux.md. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "cleanup.h"
#include "config.h"
#include "oci_config.h"

#define CONFIG_MAX_BYTES (4U << 20)

struct walk {
	const char *bundle;
	struct nsrun_config *cfg;
	struct strv *warnings;
	struct nsrun_error *err;
};

static void __attribute__((format(printf, 2, 3))) warn(struct walk *w, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	strv_push(w->warnings, line); /* ENOMEM: the run goes on, the warning is lost */
}

static int __attribute__((format(printf, 2, 3))) bad(struct walk *w, const char *fmt, ...)
{
	char msg[sizeof(w->err->msg) - 16];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return error_set(w->err, 0, "config.json: %s", msg);
}

static bool is_true(yajl_val v)
{
	return v && YAJL_IS_TRUE(v);
}

/* The string at v, or NULL (absent or another type). */
static const char *str(yajl_val v)
{
	return v && YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : NULL;
}

/* *out = the integer at v (path names it in the error).  Returns 0 or -1. */
static int integer(struct walk *w, yajl_val v, const char *path, long long *out)
{
	if (!v || !YAJL_IS_INTEGER(v))
		return bad(w, "%s: expected an integer", path);
	*out = YAJL_GET_INTEGER(v);
	return 0;
}

static bool nonempty(yajl_val v)
{
	return v && ((YAJL_IS_ARRAY(v) && v->u.array.len) || (YAJL_IS_OBJECT(v) && v->u.object.len) ||
		     YAJL_IS_STRING(v) || YAJL_IS_NUMBER(v) || YAJL_IS_TRUE(v));
}

static int expect_object(struct walk *w, yajl_val v, const char *path)
{
	return v && YAJL_IS_OBJECT(v) ? 0 : bad(w, "%s: expected an object", path);
}

/* v must be an array of strings, pushed onto out.  Returns 0 or -1. */
static int strings(struct walk *w, yajl_val v, const char *path, struct strv *out)
{
	if (!v || !YAJL_IS_ARRAY(v))
		return bad(w, "%s: expected an array of strings", path);
	for (size_t i = 0; i < v->u.array.len; i++) {
		const char *s = str(v->u.array.values[i]);
		if (!s)
			return bad(w, "%s[%zu]: expected a string", path, i);
		if (out && strv_push(out, s) < 0)
			return error_set(w->err, ENOMEM, "config.json: %s", path);
	}
	return 0;
}

/* ---- process ---- */

static int parse_user(struct walk *w, yajl_val u)
{
	long long id = 0;

	if (expect_object(w, u, "process.user") < 0)
		return -1;
	for (size_t i = 0; i < u->u.object.len; i++) {
		const char *k = u->u.object.keys[i];
		yajl_val v = u->u.object.values[i];
		if (strcmp(k, "uid") == 0 || strcmp(k, "gid") == 0) {
			char path[32];
			snprintf(path, sizeof(path), "process.user.%s", k);
			if (integer(w, v, path, &id) < 0)
				return -1;
			/* 65534 and above: the overflow ids of a user namespace (config_set_user) */
			if (id < 0 || id > 65533 + 1)
				return bad(w, "%s: %lld: nsrun takes ids 0 to 65534", path, id);
			if (k[0] == 'u')
				w->cfg->process.uid = (uid_t)id;
			else
				w->cfg->process.gid = (gid_t)id;
		} else if (strcmp(k, "additionalGids") == 0) {
			if (v && YAJL_IS_ARRAY(v) && v->u.array.len)
				warn(w, "process.user.additionalGids: not set: the payload's user namespace maps one "
				     "group, its gid");
		} else if (strcmp(k, "umask") == 0) {
			if (integer(w, v, "process.user.umask", &id) < 0)
				return -1;
			if (id != 022)
				warn(w, "process.user.umask: %llo not applied: the payload starts with umask 022",
				     (unsigned long long)id);
		} else if (strcmp(k, "username") != 0) { /* username: Windows only */
			warn(w, "process.user.%s: unknown field, ignored", k);
		}
	}
	return 0;
}

static bool caps_asked(yajl_val caps)
{
	if (!caps || !YAJL_IS_OBJECT(caps))
		return false;
	for (size_t i = 0; i < caps->u.object.len; i++)
		if (nonempty(caps->u.object.values[i]))
			return true;
	return false;
}

static int parse_rlimits(struct walk *w, yajl_val v)
{
	if (!v || !YAJL_IS_ARRAY(v))
		return bad(w, "process.rlimits: expected an array");
	for (size_t i = 0; i < v->u.array.len; i++) {
		yajl_val r = v->u.array.values[i];
		const char *path[] = { "type", NULL };
		const char *type = str(yajl_tree_get(r, path, yajl_t_string));
		path[0] = "soft";
		yajl_val soft = yajl_tree_get(r, path, yajl_t_number);
		if (!type || !soft || !YAJL_IS_INTEGER(soft))
			return bad(w, "process.rlimits[%zu]: expected {\"type\": \"RLIMIT_...\", \"hard\": N, \"soft\": N}",
				   i);
		if (strcmp(type, "RLIMIT_CPU") == 0 && YAJL_GET_INTEGER(soft) > 0)
			/* seconds, at most a year's (no wrap into a tiny limit) */
			w->cfg->limits.cpu_time_us = (uint64_t)(YAJL_GET_INTEGER(soft) < 365LL * 24 * 3600 ?
								YAJL_GET_INTEGER(soft) : 365LL * 24 * 3600) * 1000000;
		else
			warn(w, "process.rlimits[%zu]: %s not applied: nsrun sets its own (RLIMIT_CORE 0, "
			     "RLIMIT_NOFILE)", i, type);
	}
	return 0;
}

static int parse_process(struct walk *w, yajl_val p)
{
	struct nsrun_process *proc = &w->cfg->process;
	bool have_args = false, have_cwd = false;

	if (expect_object(w, p, "process") < 0)
		return -1;
	for (size_t i = 0; i < p->u.object.len; i++) {
		const char *k = p->u.object.keys[i];
		yajl_val v = p->u.object.values[i];
		if (strcmp(k, "args") == 0) {
			if (strings(w, v, "process.args", &proc->args) < 0)
				return -1;
			if (!proc->args.n)
				return bad(w, "process.args: empty: name the program to run");
			have_args = true;
		} else if (strcmp(k, "env") == 0) {
			struct strv env = { 0 };
			if (strings(w, v, "process.env", &env) < 0) {
				strv_free(&env);
				return -1;
			}
			for (size_t j = 0; j < env.n; j++) {
				if (!is_env_assignment(env.v[j]) || strlen(env.v[j]) > ENV_ENTRY_MAX) {
					bad(w, "process.env[%zu]: \"%.64s\": expected KEY=VALUE", j, env.v[j]);
					strv_free(&env);
					return -1;
				}
				if (strv_setenv(&proc->env, env.v[j]) < 0) {
					strv_free(&env);
					return error_set(w->err, ENOMEM, "config.json: process.env");
				}
			}
			strv_free(&env);
		} else if (strcmp(k, "cwd") == 0) {
			const char *cwd = str(v);
			if (!cwd || cwd[0] != '/')
				return bad(w, "process.cwd: expected an absolute path");
			free(proc->cwd);
			if (!(proc->cwd = config_container_path("config.json: process.cwd", cwd, w->err)))
				return -1;
			have_cwd = true;
		} else if (strcmp(k, "user") == 0) {
			if (parse_user(w, v) < 0)
				return -1;
		} else if (strcmp(k, "terminal") == 0) {
			w->cfg->tty = is_true(v);
		} else if (strcmp(k, "consoleSize") == 0) {
			/* the pty takes the size of the console socket's peer when it resizes */
		} else if (strcmp(k, "noNewPrivileges") == 0) {
			/* nsrun sets no_new_privs on every payload: as asked, or more */
		} else if (strcmp(k, "capabilities") == 0) {
			if (caps_asked(v))
				warn(w, "process.capabilities: not granted: nsrun drops every capability of the payload");
		} else if (strcmp(k, "rlimits") == 0) {
			if (parse_rlimits(w, v) < 0)
				return -1;
		} else if (strcmp(k, "oomScoreAdj") == 0) {
			long long adj = 0;
			if (integer(w, v, "process.oomScoreAdj", &adj) < 0)
				return -1;
			if (adj < -1000 || adj > 1000)
				return bad(w, "process.oomScoreAdj: %lld: expected -1000 to 1000 (proc(5))", adj);
			w->cfg->oom_score_adj = (int)adj;
			w->cfg->oom_score_adj_set = true;
		} else if (strcmp(k, "apparmorProfile") == 0 || strcmp(k, "selinuxLabel") == 0 ||
			   strcmp(k, "scheduler") == 0 ||
			   strcmp(k, "ioPriority") == 0 || strcmp(k, "execCPUAffinity") == 0) {
			if (nonempty(v))
				warn(w, "process.%s: not applied (not supported)", k);
		} else {
			warn(w, "process.%s: unknown field, ignored", k);
		}
	}
	if (!have_args)
		return bad(w, "process.args: missing: name the program to run");
	if (!have_cwd)
		return bad(w, "process.cwd: missing (runtime-spec: REQUIRED)");
	return 0;
}

/* ---- root, mounts ---- */

/* A host path of the bundle: absolute as given, else relative to the bundle;
 * resolved once (realpath(3)), as a volume's is.  Returns it malloc'd or NULL with err. */
static char *bundle_path(struct walk *w, const char *p, const char *path)
{
	char joined[PATH_MAX];
	char *r;

	if ((size_t)snprintf(joined, sizeof(joined), "%s%s%s", p[0] == '/' ? "" : w->bundle, p[0] == '/' ? "" : "/",
			     p) >= sizeof(joined)) {
		error_set(w->err, ENAMETOOLONG, "config.json: %s: \"%s\"", path, p);
		return NULL;
	}
	if (!(r = realpath(joined, NULL)))
		error_set(w->err, errno, "config.json: %s: \"%s\"", path, joined);
	return r;
}

static int parse_root(struct walk *w, yajl_val r)
{
	const char *path[] = { "path", NULL };
	const char *p;

	if (expect_object(w, r, "root") < 0)
		return -1;
	if (!(p = str(yajl_tree_get(r, path, yajl_t_string))))
		return bad(w, "root.path: missing or not a string");
	free(w->cfg->rootfs);
	if (!(w->cfg->rootfs = bundle_path(w, p, "root.path")))
		return -1;
	for (size_t i = 0; i < r->u.object.len; i++) {
		const char *k = r->u.object.keys[i];
		if (strcmp(k, "readonly") == 0) {
			if (!is_true(r->u.object.values[i]))
				warn(w, "root.readonly: false, but the root stays read-only (nsrun never lets the payload "
				     "write its image; a tmpfs or bind mount makes a path writable)");
		} else if (strcmp(k, "path") != 0) {
			warn(w, "root.%s: unknown field, ignored", k);
		}
	}
	return 0;
}

static bool has_option(struct strv *opts, const char *o)
{
	for (size_t i = 0; i < opts->n; i++)
		if (strcmp(opts->v[i], o) == 0)
			return true;
	return false;
}

/* Reads the options of mounts[i] of kind "bind" or "tmpfs": *ro is whether it is
 * read-only ("ro", "rro": runc's recursive read-only).  What nsrun applies anyway
 * (nosuid, nodev, private propagation) or what does not weaken it passes; an option
 * that asks for more than nsrun does is a warning for a bind (noexec: the mount stays
 * executable, as the payload's other writable places are) and an error for a tmpfs's
 * ro, which nsrun cannot give (mount(8), the OCI runtime spec's "mounts").  Unknown
 * options are warnings.  Returns 0 or -1 with err. */
static int mount_options(struct walk *w, size_t i, const char *kind, struct strv *opts, bool *ro)
{
	static const char *const pass[] = { "bind", "rbind", "rw", "rrw", "nosuid", "nodev", "private", "rprivate",
					    "slave", "rslave", "shared", "rshared", "unbindable", "runbindable",
					    "relatime", "norelatime", "noatime", "strictatime", "nodiratime",
					    "exec", "suid", "dev", "async", "nosymfollow", "tmpcopyup" };
	*ro = false;
	for (size_t j = 0; j < opts->n; j++) {
		const char *o = opts->v[j];
		bool known = false;
		if (strcmp(o, "ro") == 0 || strcmp(o, "rro") == 0) {
			if (strcmp(kind, "tmpfs") == 0)
				return bad(w, "mounts[%zu].options: \"%s\": a read-only tmpfs is not supported by nsrun", i, o);
			*ro = true;
			continue;
		}
		if (strncmp(o, "size=", 5) == 0 || strncmp(o, "mode=", 5) == 0)
			continue;
		for (size_t k = 0; k < sizeof(pass) / sizeof(pass[0]); k++)
			known = known || strcmp(o, pass[k]) == 0;
		if (strcmp(o, "noexec") == 0)
			warn(w, "mounts[%zu].options: noexec not applied: the %s stays executable", i, kind);
		else if (!known)
			warn(w, "mounts[%zu].options: \"%s\" not applied (unknown to nsrun)", i, o);
	}
	return 0;
}

/* A bind mount onto cfg->mounts.  Returns 0 or -1 with err. */
static int add_bind(struct walk *w, size_t i, const char *source, char *dest, struct strv *opts)
{
	char path[64];
	struct nsrun_mount *m;
	char *host;
	bool ro;

	snprintf(path, sizeof(path), "mounts[%zu].source", i);
	if (mount_options(w, i, "bind", opts, &ro) < 0) {
		free(dest);
		return -1;
	}
	if (!source) {
		free(dest);
		return bad(w, "%s: missing: a bind mount needs one", path);
	}
	if (!(host = bundle_path(w, source, path))) {
		free(dest);
		return -1;
	}
	if (!(m = realloc(w->cfg->mounts, (w->cfg->n_mounts + 1) * sizeof(*m)))) {
		free(host);
		free(dest);
		return error_set(w->err, ENOMEM, "config.json: mounts");
	}
	w->cfg->mounts = m;
	m[w->cfg->n_mounts++] = (struct nsrun_mount){ .source = host, .destination = dest, .rw = !ro };
	return 0;
}

/* A tmpfs at dest (not one of nsrun's own) onto cfg->tmpfs, size= and mode= from opts. */
static int add_tmpfs(struct walk *w, size_t i, char *dest, struct strv *opts)
{
	struct nsrun_tmpfs t = { .destination = dest, .size_bytes = w->cfg->limits.tmpfs_bytes, .mode = 01777 };
	struct nsrun_tmpfs *n;
	char path[64];

	bool ro;

	snprintf(path, sizeof(path), "config.json: mounts[%zu].options", i);
	if (mount_options(w, i, "tmpfs", opts, &ro) < 0)
		goto fail;
	for (size_t j = 0; j < opts->n; j++) {
		char *end = NULL;
		if (strncmp(opts->v[j], "size=", 5) == 0 && parse_size_bytes(path, opts->v[j] + 5, &t.size_bytes, w->err) < 0)
			goto fail;
		if (strncmp(opts->v[j], "mode=", 5) == 0) {
			unsigned long mode = strtoul(opts->v[j] + 5, &end, 8);
			if (!*(opts->v[j] + 5) || *end || mode > 07777) {
				bad(w, "mounts[%zu].options: \"%s\": expected mode=OCTAL", i, opts->v[j]);
				goto fail;
			}
			t.mode = (unsigned)mode;
		}
	}
	if (!(n = realloc(w->cfg->tmpfs, (w->cfg->n_tmpfs + 1) * sizeof(*n)))) {
		error_set(w->err, ENOMEM, "config.json: mounts");
		goto fail;
	}
	w->cfg->tmpfs = n;
	n[w->cfg->n_tmpfs++] = t;
	return 0;
fail:
	free(dest);
	return -1;
}

/* Where nsrun mounts its own file systems: a config's mount of that type there is
 * what nsrun does anyway. */
static bool nsrun_own(const char *type, const char *dest)
{
	return (strcmp(dest, "/proc") == 0 && strcmp(type, "proc") == 0) ||
	       (strcmp(dest, "/dev") == 0 && strcmp(type, "tmpfs") == 0) ||
	       (strcmp(dest, "/dev/pts") == 0 && strcmp(type, "devpts") == 0) ||
	       (strcmp(dest, "/dev/shm") == 0 && strcmp(type, "tmpfs") == 0);
}

static int parse_mount(struct walk *w, size_t i, yajl_val m)
{
	_cleanup_free_ char *dest = NULL;
	struct strv opts = { 0 };
	const char *p[] = { "destination", NULL };
	const char *d, *type, *source;
	char path[64];
	int rc = 0;

	snprintf(path, sizeof(path), "mounts[%zu]", i);
	if (expect_object(w, m, path) < 0)
		return -1;
	if (!(d = str(yajl_tree_get(m, p, yajl_t_string))) || d[0] != '/')
		return bad(w, "%s.destination: missing or not an absolute path", path);
	p[0] = "type";
	type = str(yajl_tree_get(m, p, yajl_t_string));
	p[0] = "source";
	source = str(yajl_tree_get(m, p, yajl_t_string));
	p[0] = "options";
	if (yajl_tree_get(m, p, yajl_t_any) && strings(w, yajl_tree_get(m, p, yajl_t_any), "mounts[].options", &opts) < 0)
		return bad(w, "%s.options: expected an array of strings", path);
	if (!(dest = config_container_path("config.json: mounts[].destination", d, w->err))) {
		strv_free(&opts);
		return -1;
	}
	if (!type)
		type = has_option(&opts, "bind") || has_option(&opts, "rbind") ? "bind" : "";
	if (strcmp(dest, "/sys") == 0 || strncmp(dest, "/sys/", 5) == 0) {
		/* whatever its type (runc spec --rootless binds the host's /sys) */
		warn(w, "%s: %s at %s: not mounted (nsrun gives the container no /sys)", path, type, dest);
	} else if (strcmp(dest, "/proc") == 0 ? strcmp(type, "proc") != 0 : strncmp(dest, "/proc/", 6) == 0) {
		rc = bad(w, "%s.destination: %s: nsrun mounts /proc itself, with its masks", path, dest);
	} else if ((strcmp(type, "bind") == 0 || has_option(&opts, "bind") || has_option(&opts, "rbind"))) {
		if (strcmp(dest, "/dev/shm") == 0)
			warn(w, "%s: /dev/shm is nsrun's own tmpfs, not a bind of \"%s\"", path, source ? source : "");
		else if (strcmp(dest, "/etc/hosts") == 0 || strcmp(dest, "/etc/hostname") == 0)
			warn(w, "%s: %s is the one nsrun writes (from hostname), not a bind of \"%s\"", path, dest,
			     source ? source : "");
		else if (strcmp(dest, "/") == 0)
			rc = bad(w, "%s.destination: cannot mount over /", path);
		else
			rc = add_bind(w, i, source, steal_ptr(&dest), &opts);
	} else if (nsrun_own(type, dest)) {
		/* nsrun's own, with its masks and limits (README, "The isolation a run gets") */
	} else if (strcmp(type, "tmpfs") == 0) {
		rc = add_tmpfs(w, i, steal_ptr(&dest), &opts);
	} else if (strcmp(type, "sysfs") == 0 || strcmp(type, "cgroup") == 0 || strcmp(type, "cgroup2") == 0 ||
		   strcmp(type, "mqueue") == 0) {
		warn(w, "%s: %s at %s: not mounted (nsrun gives the container no %s)", path, type, dest,
		     strcmp(type, "mqueue") == 0 ? "POSIX message queue file system" : "/sys");
	} else {
		rc = bad(w, "%s.type: \"%s\" at %s: not supported (bind, tmpfs, proc, devpts, sysfs, cgroup, mqueue)",
			 path, type, dest);
	}
	strv_free(&opts);
	return rc;
}

/* ---- linux ---- */

static const char *const own_namespaces[] = { "pid", "network", "ipc", "uts", "mount", "user", "cgroup", NULL };

static int parse_namespaces(struct walk *w, yajl_val v)
{
	bool seen[8] = { false };

	if (!v || !YAJL_IS_ARRAY(v))
		return bad(w, "linux.namespaces: expected an array");
	for (size_t i = 0; i < v->u.array.len; i++) {
		const char *p[] = { "type", NULL };
		yajl_val ns = v->u.array.values[i];
		const char *type = str(yajl_tree_get(ns, p, yajl_t_string));
		size_t j;
		p[0] = "path";
		if (!type)
			return bad(w, "linux.namespaces[%zu].type: missing or not a string", i);
		if (nonempty(yajl_tree_get(ns, p, yajl_t_any)))
			return bad(w, "linux.namespaces[%zu].path: joining an existing %s namespace is not supported yet "
				   "(nsrun makes every namespace of the container)", i, type);
		for (j = 0; own_namespaces[j] && strcmp(own_namespaces[j], type) != 0; j++)
			;
		if (own_namespaces[j])
			seen[j] = true;
		else if (strcmp(type, "time") == 0)
			warn(w, "linux.namespaces[%zu]: time: not made (the container shares the host's clocks)", i);
		else
			return bad(w, "linux.namespaces[%zu].type: \"%s\": unknown", i, type);
	}
	for (size_t j = 0; own_namespaces[j]; j++)
		if (!seen[j])
			warn(w, "linux.namespaces: no %s entry, which asks for the caller's; nsrun makes a new one all the "
			     "same", own_namespaces[j]);
	return 0;
}

static int parse_id_mappings(struct walk *w, yajl_val v, const char *what)
{
	if (!v || !YAJL_IS_ARRAY(v))
		return bad(w, "linux.%s: expected an array", what);
	for (size_t i = 0; i < v->u.array.len; i++) {
		const char *p[] = { "size", NULL };
		yajl_val size = yajl_tree_get(v->u.array.values[i], p, yajl_t_number);
		if (!size || !YAJL_IS_INTEGER(size))
			return bad(w, "linux.%s[%zu].size: missing or not an integer", what, i);
		if (YAJL_GET_INTEGER(size) != 1 || v->u.array.len > 1)
			return bad(w, "linux.%s[%zu]: %s: nsrun maps one id (the caller's) into the container; ranges "
				   "(newuidmap/newgidmap) are not supported yet", what, i,
				   v->u.array.len > 1 ? "more than one mapping" : "a range of ids");
	}
	return 0;
}

static int parse_resources(struct walk *w, yajl_val r)
{
	struct nsrun_limits *l = &w->cfg->limits;
	long long n = 0;

	if (expect_object(w, r, "linux.resources") < 0)
		return -1;
	for (size_t i = 0; i < r->u.object.len; i++) {
		const char *k = r->u.object.keys[i];
		yajl_val v = r->u.object.values[i];
		if (strcmp(k, "memory") == 0 && v && YAJL_IS_OBJECT(v)) {
			for (size_t j = 0; j < v->u.object.len; j++) {
				const char *mk = v->u.object.keys[j];
				char path[64];
				snprintf(path, sizeof(path), "linux.resources.memory.%s", mk);
				if (strcmp(mk, "limit") == 0 || strcmp(mk, "swap") == 0) {
					if (integer(w, v->u.object.values[j], path, &n) < 0)
						return -1;
					if (mk[0] == 'l')
						l->memory_bytes = n > 0 ? (uint64_t)n : 0;
					else
						l->memory_swap_bytes = n > 0 ? (uint64_t)n : UINT64_MAX;
				} else if (nonempty(v->u.object.values[j])) {
					warn(w, "%s: not applied (not supported)", path);
				}
			}
		} else if (strcmp(k, "pids") == 0 && v && YAJL_IS_OBJECT(v)) {
			const char *p[] = { "limit", NULL };
			if (integer(w, yajl_tree_get(v, p, yajl_t_any), "linux.resources.pids.limit", &n) < 0)
				return -1;
			l->pids = n > 0 ? (uint64_t)n : 0;
		} else if (strcmp(k, "cpu") == 0 && v && YAJL_IS_OBJECT(v)) {
			long long quota = 0, period = 100000;
			for (size_t j = 0; j < v->u.object.len; j++) {
				const char *ck = v->u.object.keys[j];
				char path[64];
				snprintf(path, sizeof(path), "linux.resources.cpu.%s", ck);
				if (strcmp(ck, "quota") == 0 || strcmp(ck, "period") == 0) {
					if (integer(w, v->u.object.values[j], path, ck[0] == 'q' ? &quota : &period) < 0)
						return -1;
				} else if (nonempty(v->u.object.values[j])) {
					warn(w, "%s: not applied (not supported)", path);
				}
			}
			if (period <= 0)
				return bad(w, "linux.resources.cpu.period: %lld: expected a positive number", period);
			/* (quota / period in thousandths, without overflow: the quota may be any int64) */
			l->cpus_milli = quota > 0 ? (uint64_t)((long double)quota * 1000 / period) : 0;
			if (quota > 0 && !l->cpus_milli)
				l->cpus_milli = 1;
		} else if (strcmp(k, "devices") == 0 && v && YAJL_IS_ARRAY(v)) {
			for (size_t j = 0; j < v->u.array.len; j++) {
				const char *p[] = { "allow", NULL };
				if (is_true(yajl_tree_get(v->u.array.values[j], p, yajl_t_any)))
					warn(w, "linux.resources.devices[%zu]: not applied: the container's /dev holds "
					     "only null, zero, full, random, urandom, tty and pts", j);
			}
		} else if (nonempty(v)) {
			warn(w, "linux.resources.%s: not applied (not supported)", k);
		}
	}
	return 0;
}

/* The paths nsrun masks or makes read-only in every container (mount_plan.c), as
 * Docker's defaults: a config asking for these gets them. */
static bool masked_by_nsrun(const char *p)
{
	static const char *const paths[] = {
		"/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list",
		"/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware", "/sys/devices/virtual/powercap",
		"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger", "/sys/fs/selinux",
		"/sys/dev/block", NULL,
	};

	if (strncmp(p, "/sys/", 5) == 0)
		return true; /* no /sys at all */
	for (size_t i = 0; paths[i]; i++)
		if (strcmp(paths[i], p) == 0)
			return true;
	return false;
}

static int parse_paths(struct walk *w, yajl_val v, const char *what)
{
	struct strv paths = { 0 };
	char path[64];

	snprintf(path, sizeof(path), "linux.%s", what);
	if (strings(w, v, path, &paths) < 0) {
		strv_free(&paths);
		return -1;
	}
	/* nsrun's own list, and all of /sys (there is none), are there already; the rest
	 * joins the mount plan (mount_plan.c) */
	for (size_t i = 0; i < paths.n; i++) {
		char where[80];
		_cleanup_free_ char *p = NULL;
		if (masked_by_nsrun(paths.v[i]))
			continue;
		snprintf(where, sizeof(where), "config.json: linux.%s[%zu]", what, i);
		if (!(p = config_container_path(where, paths.v[i], w->err))) {
			strv_free(&paths);
			return -1;
		}
		if (strcmp(p, "/") == 0) {
			strv_free(&paths);
			return bad(w, "linux.%s[%zu]: \"/\": not a path nsrun can %s (the root is read-only "
				   "already)", what, i, what[0] == 'm' ? "mask" : "bind read-only");
		}
		if (strv_push(what[0] == 'm' ? &w->cfg->masked_paths : &w->cfg->readonly_paths, p) < 0) {
			strv_free(&paths);
			return error_set(w->err, ENOMEM, "config.json: linux.%s", what);
		}
	}
	strv_free(&paths);
	return 0;
}

static int parse_linux(struct walk *w, yajl_val x)
{
	if (expect_object(w, x, "linux") < 0)
		return -1;
	for (size_t i = 0; i < x->u.object.len; i++) {
		const char *k = x->u.object.keys[i];
		yajl_val v = x->u.object.values[i];
		int rc = 0;
		if (strcmp(k, "namespaces") == 0)
			rc = parse_namespaces(w, v);
		else if (strcmp(k, "uidMappings") == 0 || strcmp(k, "gidMappings") == 0)
			rc = parse_id_mappings(w, v, k);
		else if (strcmp(k, "resources") == 0)
			rc = parse_resources(w, v);
		else if (strcmp(k, "maskedPaths") == 0 || strcmp(k, "readonlyPaths") == 0)
			rc = parse_paths(w, v, k);
		else if (strcmp(k, "seccomp") == 0) {
			rc = expect_object(w, v, "linux.seccomp"); /* oci_config_seccomp: nsrun's profile code */
			const char *dp[] = { "defaultAction", NULL };
			const char *da = rc == 0 ? str(yajl_tree_get(v, dp, yajl_t_string)) : NULL;
			/* it replaces nsrun's default profile: say so where it denies less by default */
			if (da && (strcmp(da, "SCMP_ACT_ALLOW") == 0 || strcmp(da, "SCMP_ACT_LOG") == 0 ||
				   strcmp(da, "SCMP_ACT_NOTIFY") == 0))
				warn(w, "linux.seccomp: defaultAction %s: every call the profile does not name is "
				     "allowed (nsrun's default profile, which this one replaces, denies them)", da);
		}
		else if (strcmp(k, "cgroupsPath") == 0)
			; /* nsrun makes the container's cgroup where it may (README, "Limits") */
		else if (strcmp(k, "rootfsPropagation") == 0 || strcmp(k, "mountLabel") == 0 ||
			 strcmp(k, "sysctl") == 0 || strcmp(k, "devices") == 0 || strcmp(k, "intelRdt") == 0 ||
			 strcmp(k, "personality") == 0 || strcmp(k, "timeOffsets") == 0 ||
			 strcmp(k, "memoryPolicy") == 0 || strcmp(k, "netDevices") == 0) {
			if (nonempty(v))
				warn(w, "linux.%s: not applied (not supported)", k);
		} else {
			warn(w, "linux.%s: unknown field, ignored", k);
		}
		if (rc < 0)
			return -1;
	}
	return 0;
}

static int parse_top(struct walk *w, yajl_val t)
{
	const char *p[] = { "ociVersion", NULL };
	const char *version = str(yajl_tree_get(t, p, yajl_t_string));
	yajl_val process = NULL, root = NULL;

	if (!version)
		return bad(w, "ociVersion: missing or not a string");
	if (strncmp(version, "1.", 2) != 0)
		return bad(w, "ociVersion: \"%s\": nsrun implements runtime-spec 1.x (up to %s)", version, OCI_VERSION);
	for (size_t i = 0; i < t->u.object.len; i++) {
		const char *k = t->u.object.keys[i];
		yajl_val v = t->u.object.values[i];
		int rc = 0;
		if (strcmp(k, "ociVersion") == 0 || strcmp(k, "annotations") == 0)
			continue;
		if (strcmp(k, "process") == 0) {
			process = v;
		} else if (strcmp(k, "root") == 0) {
			root = v;
		} else if (strcmp(k, "hostname") == 0) {
			if (!str(v))
				return bad(w, "hostname: expected a string");
			free(w->cfg->hostname);
			if (!(w->cfg->hostname = strdup(str(v))))
				return error_set(w->err, ENOMEM, "config.json: hostname");
		} else if (strcmp(k, "mounts") == 0) {
			if (!v || !YAJL_IS_ARRAY(v))
				return bad(w, "mounts: expected an array");
			for (size_t j = 0; j < v->u.array.len && rc == 0; j++)
				rc = parse_mount(w, j, v->u.array.values[j]);
		} else if (strcmp(k, "linux") == 0) {
			rc = parse_linux(w, v);
		} else if (strcmp(k, "hooks") == 0) {
			if (expect_object(w, v, "hooks") < 0)
				return -1;
			for (size_t j = 0; j < v->u.object.len; j++)
				if (nonempty(v->u.object.values[j]))
					warn(w, "hooks.%s: not run (hooks are not supported yet)", v->u.object.keys[j]);
		} else if (strcmp(k, "domainname") == 0) {
			if (nonempty(v))
				warn(w, "domainname: not set (not supported)");
		} else {
			warn(w, "%s: unknown field, ignored", k);
		}
		if (rc < 0)
			return -1;
	}
	if (!root)
		return bad(w, "root: missing: nsrun needs a root file system");
	if (parse_root(w, root) < 0)
		return -1;
	if (!process)
		return bad(w, "process: missing: nothing to run");
	return parse_process(w, process);
}

int oci_config_parse(const char *bundle_dir, const char *buf, size_t len, struct nsrun_config *cfg,
		     struct strv *warnings, struct nsrun_error *err)
{
	struct walk w = { .bundle = bundle_dir, .cfg = cfg, .warnings = warnings, .err = err };
	_cleanup_free_ char *text = NULL;
	char ebuf[256];
	yajl_val t;
	int rc;

	if (json_scan_depth(buf, len, JSON_MAX_DEPTH) < len)
		return error_set(err, 0, "config.json: nested deeper than %d levels", JSON_MAX_DEPTH);
	if (json_scan_nul(buf, len) < len)
		return error_set(err, 0, "config.json: a string holds \\u0000");
	if (!(text = strndup(buf, len)))
		return error_set(err, ENOMEM, "config.json");
	ebuf[0] = '\0';
	if (!(t = yajl_tree_parse(text, ebuf, sizeof(ebuf))) || !YAJL_IS_OBJECT(t)) {
		char *nl = strchr(ebuf, '\n');
		if (nl)
			*nl = '\0';
		yajl_tree_free(t);
		return error_set(err, 0, "config.json: not a JSON object%s%s", ebuf[0] ? ": " : "", ebuf);
	}
	/* what OCI asks for when the config does not say: no wall-clock limit, and
	 * the caller (podman stop, kubelet) decides when SIGTERM becomes SIGKILL */
	cfg->limits.timeout_us = 0;
	cfg->limits.stop_timeout_us = 365ULL * 24 * 3600 * 1000000;
	cfg->isolation = NSRUN_ISOLATION_FULL;
	cfg->mode = NSRUN_MODE_COMMAND;
	cfg->process.uid = 0;
	cfg->process.gid = 0;
	rc = parse_top(&w, t);
	yajl_tree_free(t);
	return rc;
}

/* v as JSON text into g (numbers as written). */
static void gen_value(yajl_gen g, yajl_val v)
{
	if (!v || YAJL_IS_NULL(v)) {
		yajl_gen_null(g);
	} else if (YAJL_IS_STRING(v)) {
		yajl_gen_string(g, (const unsigned char *)v->u.string, strlen(v->u.string));
	} else if (YAJL_IS_NUMBER(v)) {
		yajl_gen_number(g, v->u.number.r, strlen(v->u.number.r));
	} else if (YAJL_IS_TRUE(v) || YAJL_IS_FALSE(v)) {
		yajl_gen_bool(g, YAJL_IS_TRUE(v));
	} else if (YAJL_IS_OBJECT(v)) {
		yajl_gen_map_open(g);
		for (size_t i = 0; i < v->u.object.len; i++) {
			yajl_gen_string(g, (const unsigned char *)v->u.object.keys[i], strlen(v->u.object.keys[i]));
			gen_value(g, v->u.object.values[i]);
		}
		yajl_gen_map_close(g);
	} else if (YAJL_IS_ARRAY(v)) {
		yajl_gen_array_open(g);
		for (size_t i = 0; i < v->u.array.len; i++)
			gen_value(g, v->u.array.values[i]);
		yajl_gen_array_close(g);
	}
}

int oci_config_seccomp(const char *buf, size_t len, char **out, struct nsrun_error *err)
{
	const char *path[] = { "linux", "seccomp", NULL };
	_cleanup_free_ char *text = strndup(buf, len);
	const unsigned char *gbuf;
	size_t glen;
	yajl_val t, s;
	yajl_gen g;

	*out = NULL;
	if (!text)
		return error_set(err, ENOMEM, "config.json: linux.seccomp");
	/* oci_config_parse has checked the document: depth, NUL, syntax */
	if (!(t = yajl_tree_parse(text, NULL, 0)))
		return error_set(err, 0, "config.json: not a JSON object");
	if (!(s = yajl_tree_get(t, path, yajl_t_object))) {
		yajl_tree_free(t);
		return 0;
	}
	if (!(g = yajl_gen_alloc(NULL))) {
		yajl_tree_free(t);
		return error_set(err, ENOMEM, "config.json: linux.seccomp");
	}
	gen_value(g, s);
	yajl_gen_get_buf(g, &gbuf, &glen);
	*out = strndup((const char *)gbuf, glen);
	yajl_gen_free(g);
	yajl_tree_free(t);
	return *out ? 0 : error_set(err, ENOMEM, "config.json: linux.seccomp");
}

int oci_config_load(const char *bundle_dir, struct nsrun_config *cfg, struct strv *warnings, char **seccomp_json,
		    struct nsrun_error *err)
{
	char path[PATH_MAX];
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	ssize_t n;

	if ((size_t)snprintf(path, sizeof(path), "%s/config.json", bundle_dir) >= sizeof(path))
		return error_set(err, ENAMETOOLONG, "--bundle \"%s\"", bundle_dir);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return error_set(err, errno, "open %s", path);
	if (!(buf = malloc(CONFIG_MAX_BYTES + 1)))
		return error_set(err, ENOMEM, "read %s", path);
	while ((n = read(fd, buf + len, CONFIG_MAX_BYTES + 1 - len)) > 0 && (len += (size_t)n) <= CONFIG_MAX_BYTES)
		;
	if (n < 0)
		return error_set(err, errno, "read %s", path);
	if (len > CONFIG_MAX_BYTES)
		return error_set(err, EFBIG, "read %s: larger than %u bytes", path, CONFIG_MAX_BYTES);
	if (oci_config_parse(bundle_dir, buf, len, cfg, warnings, err) < 0)
		return -1;
	return oci_config_seccomp(buf, len, seccomp_json, err);
}
