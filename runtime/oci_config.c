/* oci_config.c - see oci_config.h.  Field names and meanings: runtime-spec 1.2,
 * config.md ("process", "root", "mounts", "hooks") and config-linux.md. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/resource.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "cleanup.h"
#include "config.h"
#include "oci_config.h"
#include "oci_config_internal.h"

#define CONFIG_MAX_BYTES (4U << 20)

/* ---- process ---- */

/* process.user.additionalGids: setgroups(2) in the payload (exec.c) where the
 * gid map has a range (linux, parsed before process: parse_top), each gid one of
 * it; with one gid mapped the kernel denies setgroups (user_namespaces(7),
 * /proc/PID/setgroups "deny"): then a warning, nothing is weakened by fewer groups. */
static int parse_additional_gids(struct walk *w, yajl_val v)
{
	struct nsrun_process *proc = &w->cfg->process;

	if (!v || !YAJL_IS_ARRAY(v))
		return bad(w, "process.user.additionalGids: expected an array of integers");
	if (v->u.array.len > NSRUN_MAX_GROUPS)
		return bad(w, "process.user.additionalGids: %zu groups: nsrun takes at most %d", v->u.array.len,
			   NSRUN_MAX_GROUPS);
	proc->n_additional_gids = 0;
	for (size_t i = 0; i < v->u.array.len; i++) {
		char path[64];
		long long g = 0;
		bool mapped = false;
		snprintf(path, sizeof(path), "process.user.additionalGids[%zu]", i);
		if (integer(w, v->u.array.values[i], path, &g) < 0)
			return -1;
		if (g < 0 || g > UINT32_MAX - 1)
			return bad(w, "%s: %lld: out of range", path, g);
		for (size_t j = 0; j < w->cfg->n_gid_mappings; j++) {
			const struct nsrun_id_map *m = &w->cfg->gid_mappings[j];
			mapped = mapped || ((unsigned long)g >= m->container_id && (unsigned long)g - m->container_id < m->size);
		}
		if (w->cfg->userns == NSRUN_USERNS_SUBIDS && !mapped)
			return bad(w, "%s: gid %lld is not mapped by linux.gidMappings: setgroups(2) cannot give it", path, g);
		proc->additional_gids[proc->n_additional_gids++] = (gid_t)g;
	}
	if (proc->n_additional_gids && w->cfg->userns != NSRUN_USERNS_SUBIDS) {
		warn(w, "process.user.additionalGids: not set: the user namespace maps one gid, where the kernel "
		     "denies setgroups(2); a linux.gidMappings range allows them");
		proc->n_additional_gids = 0;
	}
	return 0;
}

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
			if (parse_additional_gids(w, v) < 0)
				return -1;
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

/* process.capabilities: each set an array of names of capabilities(7) ("CAP_X",
 * cap_from_name(3)); a name that is none is an error (config.md "Linux Process":
 * "Any value which cannot be mapped to a relevant kernel interface MUST cause an
 * error"), though nsrun grants none of them.  Returns 0 or -1 with err. */
static int check_caps(struct walk *w, yajl_val caps)
{
	if (!caps || !YAJL_IS_OBJECT(caps))
		return bad(w, "process.capabilities: expected an object");
	for (size_t i = 0; i < caps->u.object.len; i++) {
		const char *set = caps->u.object.keys[i];
		yajl_val v = caps->u.object.values[i];
		if (!YAJL_IS_ARRAY(v))
			return bad(w, "process.capabilities.%s: expected an array of strings", set);
		for (size_t j = 0; j < v->u.array.len; j++) {
			const char *name = str(v->u.array.values[j]);
			cap_value_t cap;
			if (!name)
				return bad(w, "process.capabilities.%s[%zu]: expected a string", set, j);
			if (strncmp(name, "CAP_", 4) != 0 || cap_from_name(name, &cap) < 0)
				return bad(w, "process.capabilities.%s[%zu]: \"%s\": not a capability of capabilities(7)",
					   set, j, name);
		}
	}
	return 0;
}

/* An rlimits entry's soft or hard: a number from 0 (yajl reads one past
 * LLONG_MAX, as RLIM_INFINITY is written, as a double).  False when it is not. */
static bool rlimit_value(yajl_val v, uint64_t *out)
{
	if (v && YAJL_IS_INTEGER(v) && YAJL_GET_INTEGER(v) >= 0) {
		*out = (uint64_t)YAJL_GET_INTEGER(v);
		return true;
	}
	if (v && YAJL_IS_DOUBLE(v) && YAJL_GET_DOUBLE(v) >= 9.2e18) {
		*out = RLIM_INFINITY;
		return true;
	}
	return false;
}

/* process.rlimits (config.md "POSIX process"): each set as given (rlimits.h),
 * refused when above the hard limit nsrun runs with (the payload, in its own
 * user namespace, could not raise it: setrlimit(2), EPERM); RLIMIT_CORE and
 * RLIMIT_NOFILE stay nsrun's own (a warning). */
static int parse_rlimits(struct walk *w, yajl_val v)
{
	static const struct { const char *name; int resource; } known[] = {
		{ "RLIMIT_AS", RLIMIT_AS }, { "RLIMIT_CPU", RLIMIT_CPU }, { "RLIMIT_DATA", RLIMIT_DATA },
		{ "RLIMIT_FSIZE", RLIMIT_FSIZE }, { "RLIMIT_LOCKS", RLIMIT_LOCKS },
		{ "RLIMIT_MEMLOCK", RLIMIT_MEMLOCK }, { "RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE },
		{ "RLIMIT_NICE", RLIMIT_NICE }, { "RLIMIT_NPROC", RLIMIT_NPROC }, { "RLIMIT_RSS", RLIMIT_RSS },
		{ "RLIMIT_RTPRIO", RLIMIT_RTPRIO }, { "RLIMIT_RTTIME", RLIMIT_RTTIME },
		{ "RLIMIT_SIGPENDING", RLIMIT_SIGPENDING }, { "RLIMIT_STACK", RLIMIT_STACK },
	};
	struct nsrun_limits *l = &w->cfg->limits;

	if (!v || !YAJL_IS_ARRAY(v))
		return bad(w, "process.rlimits: expected an array");
	l->n_rlimits = 0;
	for (size_t i = 0; i < v->u.array.len; i++) {
		yajl_val r = v->u.array.values[i];
		const char *path[] = { "type", NULL };
		const char *type = str(yajl_tree_get(r, path, yajl_t_string));
		uint64_t soft, hard;
		struct rlimit now;
		size_t k;
		path[0] = "soft";
		bool ok = rlimit_value(yajl_tree_get(r, path, yajl_t_number), &soft);
		path[0] = "hard";
		ok = ok && rlimit_value(yajl_tree_get(r, path, yajl_t_number), &hard);
		if (!type || !ok || soft > hard)
			return bad(w, "process.rlimits[%zu]: expected {\"type\": \"RLIMIT_...\", \"hard\": N, \"soft\": N}, "
				   "soft at most hard", i);
		if (strcmp(type, "RLIMIT_CORE") == 0 || strcmp(type, "RLIMIT_NOFILE") == 0) {
			warn(w, "process.rlimits[%zu]: %s not applied: nsrun sets its own (RLIMIT_CORE 0, "
			     "RLIMIT_NOFILE)", i, type);
			continue;
		}
		for (k = 0; k < sizeof(known) / sizeof(known[0]) && strcmp(type, known[k].name) != 0; k++)
			;
		if (k == sizeof(known) / sizeof(known[0]))
			return bad(w, "process.rlimits[%zu].type: \"%s\": not a limit of getrlimit(2)", i, type);
		if (getrlimit(known[k].resource, &now) == 0 && now.rlim_max != RLIM_INFINITY && hard > now.rlim_max)
			return bad(w, "process.rlimits[%zu]: %s hard %llu is above the hard limit nsrun runs with (%llu), "
				   "which the payload cannot raise", i, type, (unsigned long long)hard,
				   (unsigned long long)now.rlim_max);
		if (l->n_rlimits == NSRUN_MAX_RLIMITS)
			return bad(w, "process.rlimits: more than %d entries", NSRUN_MAX_RLIMITS);
		for (size_t j = 0; j < l->n_rlimits; j++)
			if (l->rlimits[j].resource == known[k].resource)
				return bad(w, "process.rlimits[%zu]: %s given twice", i, type);
		l->rlimits[l->n_rlimits++] = (struct nsrun_rlimit){ known[k].resource, soft, hard };
		if (known[k].resource == RLIMIT_CPU && soft > 0 && soft != RLIM_INFINITY)
			/* seconds, at most a year's (no wrap into a tiny limit): for the report */
			l->cpu_time_us = (soft < 365ULL * 24 * 3600 ? soft : 365ULL * 24 * 3600) * 1000000;
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
			if (check_caps(w, v) < 0)
				return -1;
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
	w->cfg->rootfs_writable = true; /* readonly: "defaults to false" (config.md "Root") */
	w->cfg->rootfs_in_place = true;
	for (size_t i = 0; i < r->u.object.len; i++) {
		const char *k = r->u.object.keys[i];
		if (strcmp(k, "readonly") == 0) {
			/* false: root.path itself is the writable root, as runc and
			 * crun make it (the caller chose the path and its writability:
			 * podman's is its own overlay, whose writes it expects to see);
			 * true: bound read-only */
			w->cfg->rootfs_writable = !is_true(r->u.object.values[i]);
			w->cfg->rootfs_in_place = w->cfg->rootfs_writable;
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
 * (nosuid, nodev), a bind's propagation (set in the container's own mount namespace:
 * mount.h) or what does not weaken it passes; an option
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
	m[w->cfg->n_mounts++] = (struct nsrun_mount){ .source = host, .destination = dest, .rw = !ro, .listed = (unsigned)i + 1 };
	/* the last propagation option, as the kernel leaves it after runc applies each */
	for (size_t j = 0; j < opts->n; j++)
		if (oci_propagation_flags(opts->v[j]))
			m[w->cfg->n_mounts - 1].propagation = oci_propagation_flags(opts->v[j]);
	return 0;
}

/* A tmpfs at dest (not one of nsrun's own) onto cfg->tmpfs, size= and mode= from opts. */
static int add_tmpfs(struct walk *w, size_t i, char *dest, struct strv *opts)
{
	struct nsrun_tmpfs t = { .destination = dest, .size_bytes = w->cfg->limits.tmpfs_bytes, .mode = 01777,
				  .listed = (unsigned)i + 1 };
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
		if (strcmp(opts->v[j], "tmpcopyup") == 0)
			t.copy_up = true; /* crun's and runc's: what the image has there is copied in */
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
		/* nsrun's own, with its masks and limits (docs/isolation.md) */
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
			rc = oci_parse_linux(w, v);
		} else if (strcmp(k, "hooks") == 0) {
			/* checked and run by the OCI verbs (oci_hooks.h), through oci_config_object */
			if (expect_object(w, v, "hooks") < 0)
				return -1;
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
	/* a joined uts namespace keeps its maker's name (container.c): runc refuses
	 * a hostname there, but engines pass the pod's own; said, not set */
	if (rc == 0 && cfg->ns_path[NSRUN_JOIN_UTS]) {
		const char *p[] = { "hostname", NULL };
		if (nonempty(yajl_tree_get(t, p, yajl_t_any)))
			warn(&w, "hostname: not set: the uts namespace is joined (linux.namespaces' uts path), whose "
			     "hostname stays its maker's");
	}
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
	static const char *const path[] = { "linux", "seccomp", NULL };

	return oci_config_object(buf, len, path, out, err);
}

int oci_config_object(const char *buf, size_t len, const char *const path[], char **out, struct nsrun_error *err)
{
	_cleanup_free_ char *text = strndup(buf, len);
	const unsigned char *gbuf;
	size_t glen;
	yajl_val t, s;
	yajl_gen g;

	*out = NULL;
	if (!text)
		return error_set(err, ENOMEM, "config.json: %s", path[0]);
	/* oci_config_parse has checked the document: depth, NUL, syntax */
	if (!(t = yajl_tree_parse(text, NULL, 0)))
		return error_set(err, 0, "config.json: not a JSON object");
	if (!(s = yajl_tree_get(t, (const char **)path, yajl_t_object))) {
		yajl_tree_free(t);
		return 0;
	}
	if (!(g = yajl_gen_alloc(NULL))) {
		yajl_tree_free(t);
		return error_set(err, ENOMEM, "config.json: %s", path[0]);
	}
	gen_value(g, s);
	yajl_gen_get_buf(g, &gbuf, &glen);
	*out = strndup((const char *)gbuf, glen);
	yajl_gen_free(g);
	yajl_tree_free(t);
	return *out ? 0 : error_set(err, ENOMEM, "config.json: %s", path[0]);
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
