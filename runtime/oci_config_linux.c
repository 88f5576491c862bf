/* oci_config_linux.c - config.json's "linux" object (runtime-spec 1.2,
 * config-linux.md): namespaces, id mappings, resources, masked and read-only
 * paths, seccomp; see oci_config.h for what is mapped, warned of or refused. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "cleanup.h"
#include "config.h"
#include "oci_config.h"
#include "oci_config_internal.h"

static const char *const own_namespaces[] = { "pid", "network", "ipc", "uts", "mount", "user", "cgroup", NULL };

/* Why a namespace of this type is not joined by path. */
static const char *join_refused_why(const char *type)
{
	if (strcmp(type, "mount") == 0)
		return "nsrun builds the container's root in its own";
	if (strcmp(type, "cgroup") == 0)
		return "nsrun roots its own at the container's cgroup";
	return "nsrun makes a new one";
}

static int parse_namespaces(struct walk *w, yajl_val v)
{
	bool seen[8] = { false };

	if (!v || !YAJL_IS_ARRAY(v))
		return bad(w, "linux.namespaces: expected an array");
	for (size_t i = 0; i < v->u.array.len; i++) {
		const char *p[] = { "type", NULL };
		yajl_val ns = v->u.array.values[i];
		const char *type = str(yajl_tree_get(ns, p, yajl_t_string));
		yajl_val path;
		size_t j;
		p[0] = "path";
		if (!type)
			return bad(w, "linux.namespaces[%zu].type: missing or not a string", i);
		path = yajl_tree_get(ns, p, yajl_t_any);
		if (nonempty(path) && (!str(path) || str(path)[0] != '/'))
			return bad(w, "linux.namespaces[%zu].path: expected an absolute path", i);
		if (nonempty(path) && strcmp(type, "network") == 0) {
			/* a pod's network: joined (netjoin.h), checked before anything is made */
			free(w->cfg->network_name);
			if (!(w->cfg->network_name = strdup(str(path))))
				return error_set(w->err, ENOMEM, "config.json: linux.namespaces");
			w->cfg->network = NSRUN_NETWORK_PATH;
		} else if (nonempty(path) && (strcmp(type, "ipc") == 0 || strcmp(type, "uts") == 0 ||
					      strcmp(type, "pid") == 0 || strcmp(type, "user") == 0)) {
			/* a pod's ipc, uts, pid and user namespaces: joined with its
			 * network, by the same helper (netjoin.h) */
			char **to = &w->cfg->ns_path[type[0] == 'i' ? NSRUN_JOIN_IPC : type[0] == 'u' && type[1] == 't' ?
						     NSRUN_JOIN_UTS : type[0] == 'p' ? NSRUN_JOIN_PID : NSRUN_JOIN_USER];
			free(*to);
			if (!(*to = strdup(str(path))))
				return error_set(w->err, ENOMEM, "config.json: linux.namespaces");
		} else if (nonempty(path)) {
			return bad(w, "linux.namespaces[%zu].path: joining an existing %s namespace is not supported "
				   "(nsrun joins network, ipc, uts, pid and user only: %s)", i, type,
				   join_refused_why(type));
		}
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

/* linux.uidMappings or gidMappings (what): each line read into cfg; one line of
 * one id is what nsrun does anyway (the caller, written as ns.h does), more is a
 * range, written as given (subid.h) and the run then of userns subids. */
static int parse_id_mappings(struct walk *w, yajl_val v, const char *what)
{
	bool gid = what[0] == 'g';
	struct nsrun_id_map *lines = gid ? w->cfg->gid_mappings : w->cfg->uid_mappings;
	size_t *n = gid ? &w->cfg->n_gid_mappings : &w->cfg->n_uid_mappings;
	unsigned long ids = 0;

	if (!v || !YAJL_IS_ARRAY(v))
		return bad(w, "linux.%s: expected an array", what);
	if (v->u.array.len > NSRUN_MAX_ID_MAPS)
		return bad(w, "linux.%s: %zu mappings: nsrun takes at most %d", what, v->u.array.len, NSRUN_MAX_ID_MAPS);
	for (size_t i = 0; i < v->u.array.len; i++) {
		static const char *const keys[] = { "containerID", "hostID", "size" };
		long long f[3];
		for (int k = 0; k < 3; k++) {
			const char *p[] = { keys[k], NULL };
			yajl_val x = yajl_tree_get(v->u.array.values[i], p, yajl_t_number);
			if (!x || !YAJL_IS_INTEGER(x))
				return bad(w, "linux.%s[%zu].%s: missing or not an integer", what, i, keys[k]);
			f[k] = YAJL_GET_INTEGER(x);
			if (f[k] < (k == 2 ? 1 : 0) || f[k] > UINT32_MAX - 1)
				return bad(w, "linux.%s[%zu].%s: %lld: out of range", what, i, keys[k], f[k]);
		}
		if (f[0] + f[2] > UINT32_MAX || f[1] + f[2] > UINT32_MAX)
			return bad(w, "linux.%s[%zu]: past the last id (4294967294)", what, i);
		lines[i] = (struct nsrun_id_map){ (unsigned long)f[0], (unsigned long)f[1], (unsigned long)f[2] };
		ids += (unsigned long)f[2];
	}
	*n = v->u.array.len;
	if (ids > 1)
		w->cfg->userns = NSRUN_USERNS_SUBIDS;
	return 0;
}

/* After the whole "linux" object: a range in one map needs the other too, and
 * whether the run maps ranges at all. */
static int check_id_mappings(struct walk *w)
{
	struct nsrun_config *c = w->cfg;

	/* a joined user namespace's maps are its maker's: nsrun writes none there */
	if (c->ns_path[NSRUN_JOIN_USER] && (c->n_uid_mappings || c->n_gid_mappings))
		return bad(w, "linux.%s: given with linux.namespaces' user path: the joined user namespace's maps "
			   "are its maker's (config-linux.md \"User namespace mappings\"); leave them out",
			   c->n_uid_mappings ? "uidMappings" : "gidMappings");
	if (c->userns != NSRUN_USERNS_SUBIDS)
		return 0;
	if (!c->n_uid_mappings || !c->n_gid_mappings)
		return bad(w, "linux.%s: missing, while linux.%s maps a range: give both", c->n_uid_mappings ?
			   "gidMappings" : "uidMappings", c->n_uid_mappings ? "uidMappings" : "gidMappings");
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
					warn(w, "linux.resources.devices[%zu]: not applied (nsrun loads no cgroup device "
					     "program): the container's /dev holds only null, zero, full, random, urandom, "
					     "tty, pts and linux.devices' nodes", j);
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

/* linux.cgroupsPath: the container's cgroup (cgroup.h's cgroup_oci_dir says where);
 * "" as absent (nsrun names it). */
static int parse_cgroups_path(struct walk *w, yajl_val v)
{
	const char *s = str(v);

	if (v && !YAJL_IS_NULL(v) && !s)
		return bad(w, "linux.cgroupsPath: expected a string");
	if (!s || !s[0])
		return 0;
	if (strlen(s) >= 1024)
		return bad(w, "linux.cgroupsPath: longer than 1023 bytes");
	free(w->cfg->cgroups_path);
	if (!(w->cfg->cgroups_path = strdup(s)))
		return error_set(w->err, ENOMEM, "config.json: linux.cgroupsPath");
	return 0;
}

int oci_parse_linux(struct walk *w, yajl_val x)
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
		else if (strcmp(k, "devices") == 0)
			rc = oci_parse_devices(w, v, x);
		else if (strcmp(k, "sysctl") == 0)
			rc = oci_parse_sysctl(w, v, x);
		else if (strcmp(k, "rootfsPropagation") == 0)
			rc = oci_parse_propagation(w, v);
		else if (strcmp(k, "cgroupsPath") == 0)
			rc = parse_cgroups_path(w, v);
		else if (strcmp(k, "mountLabel") == 0 || strcmp(k, "intelRdt") == 0 ||
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
	return check_id_mappings(w);
}
