/* oci_config_dev.c - config.json's linux.devices, linux.sysctl and
 * linux.rootfsPropagation (runtime-spec 1.2, config-linux.md "Devices",
 * "Sysctl", "Rootfs Mount Propagation") onto struct nsrun_config.
 *
 * Devices: the container is always in a user namespace, where mknod(2) of a
 * device is refused (user_namespaces(7)), so each node is the host's, bound
 * onto a file of the container's /dev (mount.c), as rootless runc and crun do:
 * its type and numbers must be the host node's (checked here with stat(2), and
 * again after the bind), and its mode and owner are the host's (a warning when
 * the document asks for others).
 * Sysctl: only keys of a namespace the container has of its own, runc's rule
 * (libcontainer/configs/validate/validator.go, sysctl): the IPC ones, net.*,
 * kernel.domainname; kernel.hostname is the "hostname" field's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <yajl/yajl_tree.h>

#include "cleanup.h"
#include "config.h"
#include "oci_config_internal.h"

/* nsrun's own nodes (mount.c): a device naming one of them is there already */
static const char *const own_nodes[] = { "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
					 "/dev/tty", NULL };

/* ... and its links (/dev/ptmx: the container's own devpts') */
static const char *const own_links[] = { "/dev/ptmx", "/dev/fd", "/dev/stdin", "/dev/stdout", "/dev/stderr", NULL };

/* Is p dir or beneath it? */
static bool beneath(const char *p, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(p, dir, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

static yajl_val member(yajl_val obj, const char *key)
{
	const char *p[] = { key, NULL };
	return obj ? yajl_tree_get(obj, p, yajl_t_any) : NULL;
}

/* Does linux.resources.devices (rules) let the container at device type/major/minor?
 * As runc evaluates it: the last rule that matches decides; no rule matches: denied;
 * no list at all: allowed (nothing asked). */
static bool cgroup_allows(yajl_val rules, char type, long long major, long long minor)
{
	bool allowed = !rules || !YAJL_IS_ARRAY(rules);

	for (size_t i = 0; rules && YAJL_IS_ARRAY(rules) && i < rules->u.array.len; i++) {
		yajl_val r = rules->u.array.values[i], t = member(r, "type"), ma = member(r, "major"),
			 mi = member(r, "minor");
		const char *ts = str(t);
		if (ts && strcmp(ts, "a") != 0 && ts[0] != (type == 'p' ? 'p' : type))
			continue;
		if ((ma && YAJL_IS_INTEGER(ma) && YAJL_GET_INTEGER(ma) >= 0 && YAJL_GET_INTEGER(ma) != major) ||
		    (mi && YAJL_IS_INTEGER(mi) && YAJL_GET_INTEGER(mi) >= 0 && YAJL_GET_INTEGER(mi) != minor))
			continue;
		allowed = is_true(member(r, "allow"));
	}
	return allowed;
}

/* linux.devices[i] d into *out (path malloc'd), or skipped (*out->path NULL): a
 * node nsrun makes itself.  Returns 0 or -1 with w->err. */
static int parse_device(struct walk *w, yajl_val d, size_t i, yajl_val rules, struct nsrun_device *out)
{
	const char *path = str(member(d, "path")), *type = str(member(d, "type"));
	yajl_val mode = member(d, "fileMode"), uid = member(d, "uid"), gid = member(d, "gid");
	long long major = -1, minor = -1;
	char where[64];
	struct stat st;

	if (!path)
		return bad(w, "linux.devices[%zu].path: missing or not a string", i);
	if (!type || strlen(type) != 1 || !strchr("cubp", type[0]))
		return bad(w, "linux.devices[%zu].type: expected \"c\", \"u\", \"b\" or \"p\"", i);
	snprintf(where, sizeof(where), "linux.devices[%zu].major", i);
	if (type[0] != 'p' && integer(w, member(d, "major"), where, &major) < 0)
		return -1;
	snprintf(where, sizeof(where), "linux.devices[%zu].minor", i);
	if (type[0] != 'p' && integer(w, member(d, "minor"), where, &minor) < 0)
		return -1;
	if ((mode && !YAJL_IS_INTEGER(mode)) || (uid && !YAJL_IS_INTEGER(uid)) || (gid && !YAJL_IS_INTEGER(gid)))
		return bad(w, "linux.devices[%zu]: fileMode, uid and gid: expected integers", i);
	snprintf(where, sizeof(where), "config.json: linux.devices[%zu].path", i);
	_cleanup_free_ char *p = config_container_path(where, path, w->err);
	if (!p)
		return -1;
	if (!beneath(p, "/dev") || strcmp(p, "/dev") == 0 || beneath(p, "/dev/pts") || beneath(p, "/dev/shm") ||
	    beneath(p, "/dev/.nsrun"))
		return bad(w, "linux.devices[%zu].path: \"%s\": nsrun makes nodes only in its /dev (the root is "
			   "read-only; /dev/pts and /dev/shm are their own file systems)", i, path);
	/* beneath one (/dev/fd/9/x): the host's is a link into /proc/self/fd, the
	 * container's too, each resolving into whatever a process holds open: the node
	 * checked would be one of nsrun's fds, and its mount point made in a directory
	 * outside the container's /dev */
	for (size_t k = 0; own_links[k]; k++)
		if (beneath(p, own_links[k]))
			return bad(w, "linux.devices[%zu].path: \"%s\": %s is a link nsrun makes in every "
				   "container's /dev", i, path, own_links[k]);
	out->type = type[0] == 'u' ? 'c' : type[0];
	if (out->type == 'p') {
		out->file_mode = mode ? (unsigned)YAJL_GET_INTEGER(mode) & 0777 : 0666;
		if (uid || gid)
			warn(w, "linux.devices[%zu]: %s: uid and gid not applied: the FIFO belongs to the container's "
			     "root", i, p);
		out->path = p;
		p = NULL;
		return 0;
	}
	if (major < 0 || minor < 0 || major > 0xfff || minor > 0xfffff)
		return bad(w, "linux.devices[%zu]: %s: major %lld, minor %lld: out of range", i, p, major, minor);
	/* the host's node is what the container gets: it must be this very device */
	if (stat(p, &st) < 0)
		return error_set(w->err, errno, "config.json: linux.devices[%zu]: %s: the host has no such node (nsrun "
				 "binds the host's: a user namespace cannot make device nodes)", i, p);
	if ((out->type == 'c' && !S_ISCHR(st.st_mode)) || (out->type == 'b' && !S_ISBLK(st.st_mode)) ||
	    major(st.st_rdev) != (unsigned)major || minor(st.st_rdev) != (unsigned)minor)
		return bad(w, "linux.devices[%zu]: %s: asked for %s %lld:%lld, the host's node is %s %u:%u (nsrun "
			   "binds the host's: a user namespace cannot make device nodes)", i, p,
			   out->type == 'c' ? "char" : "block", major, minor,
			   S_ISCHR(st.st_mode) ? "char" : S_ISBLK(st.st_mode) ? "block" : "not a device", major(st.st_rdev),
			   minor(st.st_rdev));
	for (size_t k = 0; own_nodes[k]; k++)
		if (strcmp(own_nodes[k], p) == 0)
			return 0; /* there already, bound from the same host node */
	if (mode && ((unsigned)YAJL_GET_INTEGER(mode) & 07777) != (st.st_mode & 07777))
		warn(w, "linux.devices[%zu]: %s: fileMode %04o not applied: the node is the host's, bound, with its "
		     "mode %04o", i, p, (unsigned)YAJL_GET_INTEGER(mode) & 07777, st.st_mode & 07777);
	if ((uid && YAJL_GET_INTEGER(uid) != (long long)st.st_uid) ||
	    (gid && YAJL_GET_INTEGER(gid) != (long long)st.st_gid))
		warn(w, "linux.devices[%zu]: %s: uid and gid not applied: the node is the host's, bound, owned by "
		     "host uid %u gid %u (seen in the container through its id map)", i, p, st.st_uid, st.st_gid);
	if (!cgroup_allows(rules, out->type, major, minor))
		warn(w, "linux.devices[%zu]: %s: linux.resources.devices does not allow it, and nsrun loads no cgroup "
		     "device program: the container can open it as far as the node's mode lets it", i, p);
	out->major = (unsigned)major;
	out->minor = (unsigned)minor;
	out->path = p;
	p = NULL;
	return 0;
}

int oci_parse_devices(struct walk *w, yajl_val v, yajl_val lx)
{
	struct nsrun_config *cfg = w->cfg;
	yajl_val rules = member(member(lx, "resources"), "devices");

	if (!v || !YAJL_IS_ARRAY(v))
		return bad(w, "linux.devices: expected an array");
	if (v->u.array.len > NSRUN_MAX_MOUNTS)
		return bad(w, "linux.devices: %zu devices: at most %d", v->u.array.len, NSRUN_MAX_MOUNTS);
	cfg->devices = calloc(v->u.array.len + 1, sizeof(*cfg->devices));
	if (!cfg->devices)
		return error_set(w->err, ENOMEM, "config.json: linux.devices");
	for (size_t i = 0; i < v->u.array.len; i++) {
		struct nsrun_device d = { 0 };
		if (parse_device(w, v->u.array.values[i], i, rules, &d) < 0)
			return -1;
		if (!d.path)
			continue;
		for (size_t k = 0; k < cfg->n_devices; k++)
			if (strcmp(cfg->devices[k].path, d.path) == 0) {
				free(d.path);
				return bad(w, "linux.devices[%zu].path: \"%s\": given twice", i, cfg->devices[k].path);
			}
		cfg->devices[cfg->n_devices++] = d;
	}
	return 0;
}

/* The namespace a sysctl key belongs to ("ipc", "network", "uts"), or NULL: none
 * of the container's (runc's list). */
static const char *sysctl_namespace(const char *key)
{
	static const char *const ipc[] = { "kernel.msgmax", "kernel.msgmnb", "kernel.msgmni", "kernel.sem",
					   "kernel.shmall", "kernel.shmmax", "kernel.shmmni",
					   "kernel.shm_rmid_forced", NULL };

	for (size_t i = 0; ipc[i]; i++)
		if (strcmp(ipc[i], key) == 0)
			return "ipc";
	if (strncmp(key, "fs.mqueue.", 10) == 0)
		return "ipc";
	if (strncmp(key, "net.", 4) == 0)
		return "network";
	if (strcmp(key, "kernel.domainname") == 0)
		return "uts";
	return NULL;
}

/* The linux.namespaces entry of type (its yajl object), or NULL: the config asks
 * for the caller's. */
static yajl_val namespace_entry(yajl_val lx, const char *type)
{
	yajl_val nss = member(lx, "namespaces");

	for (size_t i = 0; nss && YAJL_IS_ARRAY(nss) && i < nss->u.array.len; i++) {
		const char *t = str(member(nss->u.array.values[i], "type"));
		if (t && strcmp(t, type) == 0)
			return nss->u.array.values[i];
	}
	return NULL;
}

/* Is the namespace at path (a linux.namespaces[].path) ours, the caller's? */
static bool is_callers_namespace(const char *path, const char *type)
{
	char self[64];
	struct stat a, b;

	snprintf(self, sizeof(self), "/proc/self/ns/%s", strcmp(type, "network") == 0 ? "net" : type);
	return stat(path, &a) == 0 && stat(self, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int oci_parse_sysctl(struct walk *w, yajl_val v, yajl_val lx)
{
	if (expect_object(w, v, "linux.sysctl") < 0)
		return -1;
	for (size_t i = 0; i < v->u.object.len; i++) {
		const char *key = v->u.object.keys[i], *value = str(v->u.object.values[i]), *ns;
		_cleanup_free_ char *kv = NULL;
		yajl_val entry;
		if (!value)
			return bad(w, "linux.sysctl.%s: expected a string", key);
		/* sysctl(8)'s form: '.' between the names, '/' for a '.' inside one; no
		 * name may then be empty, "." or "..", nor the value have a newline */
		if (!key[0] || key[0] == '.' || key[strlen(key) - 1] == '.' || strstr(key, "..") || strstr(key, "./") ||
		    strstr(key, "/.") || key[0] == '/' || strchr(value, '\n') || strchr(key, '='))
			return bad(w, "linux.sysctl: \"%s\": not a sysctl name", key);
		if (strcmp(key, "kernel.hostname") == 0)
			return bad(w, "linux.sysctl: kernel.hostname: not allowed: the \"hostname\" field sets it (as runc)");
		if (!(ns = sysctl_namespace(key)))
			return bad(w, "linux.sysctl: %s: not in a namespace of the container's own (only the IPC ones, "
				   "fs.mqueue.*, net.* and kernel.domainname are; as runc)", key);
		entry = namespace_entry(lx, ns);
		if (!entry)
			return bad(w, "linux.sysctl: %s: linux.namespaces has no %s entry (the host's): not allowed",
				   key, ns);
		if (str(member(entry, "path")) && is_callers_namespace(str(member(entry, "path")), ns))
			return bad(w, "linux.sysctl: %s: the %s namespace joined is the caller's: not allowed", key,
				   ns);
		if (asprintf(&kv, "%s=%s", key, value) < 0 || strv_push(&w->cfg->sysctl, kv) < 0)
			return error_set(w->err, ENOMEM, "config.json: linux.sysctl");
	}
	return 0;
}

unsigned long oci_propagation_flags(const char *name)
{
	static const struct { const char *name; unsigned long flags; } modes[] = {
		{ "shared", MS_SHARED }, { "rshared", MS_SHARED | MS_REC },
		{ "slave", MS_SLAVE }, { "rslave", MS_SLAVE | MS_REC },
		{ "private", MS_PRIVATE }, { "rprivate", MS_PRIVATE | MS_REC },
		{ "unbindable", MS_UNBINDABLE }, { "runbindable", MS_UNBINDABLE | MS_REC },
	};

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (strcmp(modes[i].name, name) == 0)
			return modes[i].flags;
	return 0;
}

int oci_parse_propagation(struct walk *w, yajl_val v)
{
	const char *s = str(v);

	if (!s)
		return bad(w, "linux.rootfsPropagation: expected a string");
	if (!s[0])
		return 0;
	if (oci_propagation_flags(s)) {
		w->cfg->rootfs_propagation = oci_propagation_flags(s);
		return 0;
	}
	return bad(w, "linux.rootfsPropagation: \"%s\": expected shared, slave, private or unbindable, or "
		   "their r-forms (rshared, ...)", s);
}
