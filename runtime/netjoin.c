/* netjoin.c - see netjoin.h. */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "exec_spec.h"
#include "exec_target.h"
#include "netjoin.h"
#include "network.h"
#include "ns.h"
#include "state.h"
#include "sys.h"

void net_join_init(struct net_join *j)
{
	j->userns_fd = j->netns_fd = j->lock_fd = j->outer_userns_fd = -1;
	j->outer_is_ours = false;
	j->outer_kinds = 0;
	for (int i = 0; i < NSRUN_JOIN__COUNT; i++)
		j->ns_fd[i] = -1;
	j->all_ids = false;
	j->join_owner = false;
	j->cfg = NULL;
	j->owner_is_ours = false;
	j->map_uid = 0;
	j->map_gid = 0;
}

void net_join_close(struct net_join *j)
{
	cleanup_closep(&j->userns_fd);
	cleanup_closep(&j->netns_fd);
	cleanup_closep(&j->lock_fd);
	cleanup_closep(&j->outer_userns_fd);
	for (int i = 0; i < NSRUN_JOIN__COUNT; i++)
		cleanup_closep(&j->ns_fd[i]);
}

bool net_join_active(const struct net_join *j)
{
	for (int i = 0; i < NSRUN_JOIN__COUNT; i++)
		if (j->ns_fd[i] >= 0)
			return true;
	return j->netns_fd >= 0;
}

int net_join_clone_flags(const struct net_join *j)
{
	return (j->netns_fd >= 0 ? CLONE_NEWNET : 0) | (j->ns_fd[NSRUN_JOIN_IPC] >= 0 ? CLONE_NEWIPC : 0) |
	       (j->ns_fd[NSRUN_JOIN_UTS] >= 0 ? CLONE_NEWUTS : 0) | (j->ns_fd[NSRUN_JOIN_PID] >= 0 ? CLONE_NEWPID : 0) |
	       (j->join_owner ? CLONE_NEWUSER : 0);
}

/* True if the service in dir_fd was started with --userns subids, as its
 * exec spec (exec_spec.h) says; false if it has none (an older nsrun). */
static bool service_is_multi_id(int dir_fd)
{
	struct nsrun_config cfg;
	struct nsrun_error ignored = { 0 };
	_cleanup_free_ char *profiles_dir = NULL;
	bool multi = false;

	if (config_init(&cfg, &ignored) < 0)
		return false;
	if (exec_spec_read(dir_fd, &cfg, &profiles_dir, &ignored) == 0)
		multi = cfg.userns == NSRUN_USERNS_SUBIDS;
	config_free(&cfg);
	return multi;
}

/* container:NAME: the container's user namespace and the network namespace of
 * the running service NAME, found as nsrun exec finds them.  Returns 0 or -1
 * with err. */
static int open_service(const char *name, struct net_join *j, struct nsrun_error *err)
{
	_cleanup_close_ int root_fd = -1, dir_fd = -1;
	struct exec_target t;
	struct service_state st;
	char root[PATH_MAX];
	int rc = -1;

	if ((root_fd = state_open_root(root, sizeof(root), err)) < 0)
		return -1;
	dir_fd = openat(root_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir_fd < 0) {
		error_set(err, 0, "no such service (see nsrun ps)");
		err->hint = "start it first: nsrun -d --name NAME ...";
		return -1;
	}
	if (!state_is_alive(dir_fd) || state_read(dir_fd, &st) < 0 || strcmp(st.status, "running") != 0 ||
	    st.pid <= 1) {
		error_set(err, 0, "the service is not running (see nsrun ps)");
		err->hint = "nsrun logs NAME says how it ended";
		return -1;
	}
	/* pasta's way out is the caller's, given only to the run that asked for it;
	 * "" is a service whose mode is not recorded: not known to have none */
	if (strcmp(st.network, "none") != 0 && strcmp(st.network, "container") != 0 &&
	    strcmp(st.network, "named") != 0) {
		error_set(err, 0, "the service's network is %s: its way out is not shared",
			  st.network[0] ? st.network : "not recorded");
		err->hint = "join a service started with --network none or a named network "
			    "(nsrun network create), or run this one with --network pasta itself";
		return -1;
	}
	exec_target_init(&t);
	/* a service of --userns subids (the API's default) has its payload in the
	 * container's user namespace, as nsrun exec reads it from the service's spec */
	t.multi_id = service_is_multi_id(dir_fd);
	if (j->all_ids && !t.multi_id) {
		/* its user namespace maps one id: there is no range for ours (checked
		 * again where the maps are written, write_identity_map) */
		error_set(err, 0, "--userns subids: the service is not of --userns subids, its user namespace has no "
			  "range to share");
		err->hint = "start the service with --userns subids, or run this one without it";
		return -1;
	}
	if (exec_target_open(&t, dir_fd, (pid_t)st.pid, err) == 0) {
		/* the owner of its net namespace: the container's, or (a service that
		 * joined another's network) the one it joined, whose child we become too */
		j->userns_fd = fcntl(t.userns_net >= 0 ? t.userns_net : t.userns_outer, F_DUPFD_CLOEXEC, 3);
		j->netns_fd = fcntl(t.ns[NS_NET], F_DUPFD_CLOEXEC, 3);
		rc = j->userns_fd < 0 || j->netns_fd < 0 ? error_set(err, errno, "keep its namespaces") : 0;
	}
	exec_target_close(&t);
	return rc;
}

static bool same_ns(int a, int b)
{
	struct stat sa, sb;

	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Whether this process has CAP_SYS_ADMIN over the user namespace fd, a
 * descendant of self (user_namespaces(7), "Capabilities": the owner's uid in
 * its parent, or the capability in an ancestor): 1, 0, or -1 (not below ours). */
static int rights_over(int fd, int self)
{
	_cleanup_close_ int n = fcntl(fd, F_DUPFD_CLOEXEC, 3);

	if (same_ns(fd, self))
		return geteuid() == 0;
	while (n >= 0) {
		_cleanup_close_ int p = ioctl(n, NS_GET_PARENT);
		uid_t owner;
		if (p < 0)
			return -1; /* EPERM: its parent is outside ours */
		if (same_ns(p, self)) {
			if (geteuid() == 0)
				return 1;
			return ioctl(n, NS_GET_OWNER_UID, &owner) == 0 && owner == geteuid();
		}
		cleanup_closep(&n);
		n = steal_fd(&p);
	}
	return -1;
}

/* The kinds of namespace an OCI config joins by path: setns(2)'s nstype, its
 * name in config.json and /proc/PID/ns, what an error calls it. */
static const struct {
	int type;
	const char *oci, *proc, *what, *shares;
} join_kinds[] = {
	{ CLONE_NEWNET, "network", "net", "a network namespace", "network" },
	{ CLONE_NEWIPC, "ipc", "ipc", "an ipc namespace", "System V IPC and POSIX message queues" },
	{ CLONE_NEWUTS, "uts", "uts", "a uts namespace", "hostname" },
	{ CLONE_NEWPID, "pid", "pid", "a pid namespace", "processes" },
	{ CLONE_NEWUSER, "user", "user", "a user namespace", "user namespace" },
};
#define N_JOIN_KINDS (sizeof(join_kinds) / sizeof(join_kinds[0]))
#define KIND_PID 3
#define KIND_USER 4

/* True if user namespace a is a strict ancestor of b (ioctl_ns(2) NS_GET_PARENT
 * up from b, as far as we may see). */
static bool is_above(int a, int b)
{
	_cleanup_close_ int n = fcntl(b, F_DUPFD_CLOEXEC, 3);

	while (n >= 0) {
		_cleanup_close_ int p = ioctl(n, NS_GET_PARENT);
		if (p < 0)
			return false;
		if (same_ns(p, a))
			return true;
		cleanup_closep(&n);
		n = steal_fd(&p);
	}
	return false;
}

/* One OCI path: opens it into *fd, checks it names a namespace of kind k
 * (ioctl_ns(2) NS_GET_NSTYPE) and opens its owning user namespace into *owner.
 * Returns 0 or -1 with err. */
static int open_one(const char *path, size_t k, int *fd, int *owner, struct nsrun_error *err)
{
	_cleanup_close_ int at = open(path, O_PATH | O_CLOEXEC);
	char again[32];
	struct statfs sfs;
	int type;

	/* O_PATH, then the file system: a plain open(2) of a FIFO the config names
	 * waited for a writer for ever, and one of a device acted on it */
	if (at < 0)
		return error_set(err, errno, "open");
	if (fstatfs(at, &sfs) < 0)
		return error_set(err, errno, "its file system (fstatfs)");
	if (sfs.f_type != NSFS_MAGIC)
		return error_set(err, 0, "not a namespace file (expected /proc/PID/ns/%s%s)", join_kinds[k].proc,
				 k == 0 ? " or /run/netns/NAME" : "");
	/* the same file again, readable: setns(2) and ioctl_ns(2) refuse an O_PATH fd */
	snprintf(again, sizeof(again), "/proc/self/fd/%d", at);
	*fd = open(again, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return error_set(err, errno, "open");
	type = ioctl(*fd, NS_GET_NSTYPE);
	if (type < 0 && (errno == ENOTTY || errno == EINVAL))
		return error_set(err, 0, "not a namespace file (expected /proc/PID/ns/%s%s)", join_kinds[k].proc,
				 k == 0 ? " or /run/netns/NAME" : "");
	if (type < 0)
		return error_set(err, errno, "its type (NS_GET_NSTYPE)");
	if (type != join_kinds[k].type)
		return error_set(err, 0, "not %s (a namespace of another type)", join_kinds[k].what);
	/* a user namespace owns what it is the owner of: itself, for what follows */
	*owner = type == CLONE_NEWUSER ? fcntl(*fd, F_DUPFD_CLOEXEC, 3) : ioctl(*fd, NS_GET_USERNS);
	if (*owner < 0 && errno == EPERM)
		return error_set(err, 0, "owned by a user namespace outside nsrun's: nsrun has no rights in it");
	if (*owner < 0)
		return error_set(err, errno, "its owning user namespace (NS_GET_USERNS)");
	return 0;
}

/* The OCI paths of cfg (network, ipc, uts): each the namespace of its type, all
 * of one owner, over which we have the rights setns(2) needs.  Returns 0 or -1
 * with err, prefixed with the entry at fault. */
static int open_paths(const struct nsrun_config *cfg, struct net_join *j, struct nsrun_error *err)
{
	const char *paths[] = { cfg->network == NSRUN_NETWORK_PATH ? cfg->network_name : NULL,
				cfg->ns_path[NSRUN_JOIN_IPC], cfg->ns_path[NSRUN_JOIN_UTS],
				cfg->ns_path[NSRUN_JOIN_PID], cfg->ns_path[NSRUN_JOIN_USER] };
	int *fds[] = { &j->netns_fd, &j->ns_fd[NSRUN_JOIN_IPC], &j->ns_fd[NSRUN_JOIN_UTS], &j->ns_fd[NSRUN_JOIN_PID],
		       &j->ns_fd[NSRUN_JOIN_USER] };
	_cleanup_close_ int self = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
	size_t first = N_JOIN_KINDS, at = N_JOIN_KINDS; /* the first path given; the one at fault */
	int rights;

	if (self < 0)
		return error_set(err, errno, "open /proc/self/ns/user");
	for (size_t k = 0; k < N_JOIN_KINDS; k++) {
		_cleanup_close_ int owner = -1;
		if (!paths[k])
			continue;
		at = k;
		if (open_one(paths[k], k, fds[k], &owner, err) < 0)
			goto fail;
		if (first == N_JOIN_KINDS) {
			first = k;
			j->userns_fd = steal_fd(&owner);
		} else if (same_ns(owner, j->userns_fd)) {
			continue;
		} else if (j->outer_userns_fd >= 0 && same_ns(owner, j->outer_userns_fd)) {
			j->outer_kinds |= 1u << k;
		} else if (j->outer_userns_fd < 0 && is_above(owner, j->userns_fd)) {
			/* a Kubernetes pod as root: the network namespace the CNI made (the
			 * host's user namespace), ipc and uts of a pause container nsrun made */
			j->outer_userns_fd = steal_fd(&owner);
			j->outer_kinds = 1u << k;
		} else if (j->outer_userns_fd < 0 && is_above(j->userns_fd, owner)) {
			j->outer_userns_fd = j->userns_fd;
			j->userns_fd = steal_fd(&owner);
			for (size_t o = 0; o < k; o++)
				if (paths[o])
					j->outer_kinds |= 1u << o;
		} else {
			/* the container's user namespace is made as a child of the innermost */
			error_set(err, 0, "owned by a user namespace neither above nor below the %s path's: nsrun "
				  "joins namespaces of at most two owners, one above the other", join_kinds[first].oci);
			goto fail;
		}
	}
	if (first == N_JOIN_KINDS)
		return 0;
	/* a pid or a user path: the container's user namespace is the owner itself
	 * (a child's root could not mount the pod's /proc: proc(5), CAP_SYS_ADMIN
	 * over the pid namespace's owner), which must be the innermost */
	j->join_owner = paths[KIND_PID] || paths[KIND_USER];
	if (paths[KIND_USER] && !same_ns(j->ns_fd[NSRUN_JOIN_USER], j->userns_fd)) {
		at = KIND_USER;
		error_set(err, 0, "above the owner of the other paths' namespaces: the container's user namespace "
			  "must be the one that owns them");
		goto fail;
	}
	if (paths[KIND_PID] && (j->outer_kinds & (1u << KIND_PID))) {
		at = KIND_PID;
		error_set(err, 0, "owned by a user namespace above the other paths' owner: the container's root, "
			  "of that one, could not mount its /proc (proc(5))");
		goto fail;
	}
	at = first;
	if (j->outer_userns_fd >= 0) {
		/* rights over the outer one; the inner is below it, where they hold too */
		if ((rights = rights_over(j->outer_userns_fd, self)) <= 0) {
			error_set(err, 0, "owned by a user namespace in which uid %u has no CAP_SYS_ADMIN, which setns(2) "
				  "needs", (unsigned)geteuid());
			goto fail;
		}
		j->outer_is_ours = same_ns(j->outer_userns_fd, self);
	}
	/* id ranges: the container's user namespace is a child of the owner, so the
	 * helper writes them as the owner's ids of those host ids (write_child_maps),
	 * which only an owner that is a child of ours can tell (its map's second
	 * field, user_namespaces(7)); the caller's rights over the host ids are
	 * checked as without a join (subid.h) */
	if (cfg->userns == NSRUN_USERNS_SUBIDS && cfg->n_uid_mappings) {
		_cleanup_close_ int parent = ioctl(j->userns_fd, NS_GET_PARENT);
		if (j->join_owner) {
			error_set(err, 0, "with linux.uidMappings ranges: the container's user namespace is the pid "
				  "namespace's owner, whose maps are its maker's");
			goto fail;
		}
		if (!same_ns(j->userns_fd, self) && (parent < 0 || !same_ns(parent, self))) {
			error_set(err, 0, "with linux.uidMappings ranges: owned by a user namespace that is not a child "
				  "of nsrun's, whose ids nsrun cannot tell");
			goto fail;
		}
		j->cfg = cfg;
	}
	if ((rights = rights_over(j->userns_fd, self)) <= 0) {
		error_set(err, 0, "owned by a user namespace in which uid %u has no CAP_SYS_ADMIN, which setns(2) needs",
			  (unsigned)geteuid());
		err->hint = "pass namespaces of a user namespace you made (unshare -Urn ... /proc/PID/ns/net), "
			    "or run as root";
		goto fail;
	}
	j->owner_is_ours = same_ns(j->userns_fd, self);
	if (j->owner_is_ours && j->join_owner) {
		at = paths[KIND_USER] ? KIND_USER : KIND_PID;
		error_set(err, 0, "owned by nsrun's own user namespace: the container's root would be nsrun's "
			  "(host root as root)");
		err->hint = "pass namespaces of a user namespace below yours (unshare -Urpf ..., a pod's infra "
			    "container)";
		goto fail;
	}
	if (j->owner_is_ours && ns_host_ids(&j->map_uid, &j->map_gid, err) < 0)
		return -1;
	if (j->owner_is_ours && j->all_ids) {
		error_set(err, 0, "a range of ids maps into a namespace of nsrun's own user namespace only "
			  "through --userns subids' ranges: not supported with a joined path");
		goto fail;
	}
	for (size_t k = 0; k < N_JOIN_KINDS; k++) {
		char own_path[32];
		_cleanup_close_ int own = -1;
		if (!paths[k])
			continue;
		snprintf(own_path, sizeof(own_path), "/proc/self/ns/%s", join_kinds[k].proc);
		own = open(own_path, O_RDONLY | O_CLOEXEC);
		if (own < 0 || !same_ns(own, *fds[k]))
			continue;
		if (cfg->security.strict) {
			error_set(err, 0, "nsrun's own %s namespace: the container would share the host's %s "
				  "(--strict refuses it)", join_kinds[k].oci, join_kinds[k].shares);
			at = k;
			goto fail;
		}
		error_warn(stderr, "%s namespace %s is nsrun's own: the container shares the host's %s "
			"(--strict refuses it)", join_kinds[k].oci, paths[k], join_kinds[k].shares);
	}
	return 0;
fail:
	error_prefix(err, "linux.namespaces: %s path %s", join_kinds[at].oci, paths[at]);
	return -1;
}

int net_join_open(const struct nsrun_config *cfg, struct net_join *j, struct nsrun_error *err)
{
	j->all_ids = cfg->userns == NSRUN_USERNS_SUBIDS && !cfg->n_uid_mappings;
	bool paths = cfg->network == NSRUN_NETWORK_PATH;

	for (int i = 0; i < NSRUN_JOIN__COUNT; i++)
		paths = paths || cfg->ns_path[i];
	if (paths) {
		if ((cfg->network == NSRUN_NETWORK_CONTAINER || cfg->network == NSRUN_NETWORK_NAMED)) {
			error_set(err, 0, "an ipc, uts, pid or user path with --network %s%s: not supported (the container's "
				  "user namespace is a child of one owner)", cfg->network == NSRUN_NETWORK_CONTAINER ?
				  "container:" : "", cfg->network_name);
			return -1;
		}
		if (open_paths(cfg, j, err) < 0) {
			net_join_close(j);
			return -1;
		}
		return 0;
	}
	if (cfg->network == NSRUN_NETWORK_CONTAINER) {
		if (open_service(cfg->network_name, j, err) < 0) {
			error_prefix(err, "--network container:%s", cfg->network_name);
			return -1;
		}
		return 0;
	}
	if (cfg->network == NSRUN_NETWORK_NAMED) {
		if (network_open(cfg->network_name, &j->userns_fd, &j->netns_fd, &j->lock_fd, err) < 0 ||
		    (cfg->isolation == NSRUN_ISOLATION_FULL && network_write_member(cfg, err) < 0)) {
			error_prefix(err, "--network %s", cfg->network_name);
			return -1;
		}
	}
	return 0;
}

/* The payload (or, not started yet, the init) of the OCI container under
 * root_fd whose monitor is pid, or 0 when pid is none of theirs. */
static pid_t init_of_monitor(int root_fd, pid_t pid)
{
	_cleanup_close_ int scan = fcntl(root_fd, F_DUPFD_CLOEXEC, 3);
	DIR *d = scan >= 0 ? fdopendir(scan) : NULL;
	struct dirent *e;
	pid_t init = 0;

	if (!d)
		return 0;
	scan = -1; /* the DIR has it */
	rewinddir(d); /* a dup shares root_fd's offset, which a scan before moved */
	while (!init && (e = readdir(d))) {
		_cleanup_close_ int dir_fd = -1;
		struct service_state st;
		struct exec_target t;
		struct nsrun_error ignored = { 0 };
		if (e->d_name[0] == '.')
			continue;
		dir_fd = openat(root_fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dir_fd < 0 || state_read(dir_fd, &st) < 0 || st.pid != pid)
			continue;
		exec_target_init(&t);
		/* the payload's, where there is one (a started container): the same
		 * network, ipc and uts namespaces, and, unlike the init, dumpable, so
		 * its /proc/PID/ns is open to the caller (proc(5), ptrace access mode) */
		if (exec_target_find(&t, dir_fd, pid, &ignored) == 0)
			init = t.payload > 0 ? t.payload : t.init;
		exec_target_close(&t);
	}
	closedir(d);
	return init;
}

/* path, if it is /proc/PID/ns/TYPE of a monitor's PID, made the init's. */
static int resolve_one(int root_fd, char **path, struct nsrun_error *err)
{
	char type[16], rest;
	int pid;
	pid_t init;

	if (!*path || sscanf(*path, "/proc/%d/ns/%15[a-z]%c", &pid, type, &rest) != 2 || pid <= 0)
		return 0;
	if ((init = init_of_monitor(root_fd, (pid_t)pid)) <= 0)
		return 0;
	free(*path);
	if (asprintf(path, "/proc/%d/ns/%s", (int)init, type) < 0) {
		*path = NULL;
		return error_set(err, ENOMEM, "linux.namespaces");
	}
	return 0;
}

int net_join_resolve_monitors(int root_fd, struct nsrun_config *cfg, struct nsrun_error *err)
{
	if (cfg->network == NSRUN_NETWORK_PATH && resolve_one(root_fd, &cfg->network_name, err) < 0)
		return -1;
	for (int i = 0; i < NSRUN_JOIN__COUNT; i++)
		if (resolve_one(root_fd, &cfg->ns_path[i], err) < 0)
			return -1;
	return 0;
}

/* What the helper sends back: the container's pid, or its error. */
struct helper_msg {
	pid_t pid;
	struct nsrun_error err;
};

/* Writes name ("uid_map" or "gid_map") of the child n (a number in our /proc)
 * as each id of our own user namespace's map as itself: "ID ID COUNT" a line
 * for every line of /proc/self/NAME (user_namespaces(7): we are in the child's
 * parent user namespace, whose ids the second field names).  Returns 0 or -1
 * with err (errnum 0: the owner maps one id only, it has no range to give). */
static int write_identity_map(long n, const char *name, struct nsrun_error *err)
{
	_cleanup_free_ char *own = NULL;
	char path[64], map[512];
	size_t len = 0, used = 0, ids = 0;

	snprintf(path, sizeof(path), "/proc/self/%s", name);
	if (read_file(path, 4096, &own, &len) < 0)
		return error_set(err, errno, "read %s", path);
	for (char *line = own, *next; line && *line; line = next) {
		unsigned long inside, outside, count;
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (sscanf(line, "%lu %lu %lu", &inside, &outside, &count) != 3)
			continue;
		ids += count;
		int w = snprintf(map + used, sizeof(map) - used, "%lu %lu %lu\n", inside, inside, count);
		if (w < 0 || (size_t)w >= sizeof(map) - used)
			return error_set(err, E2BIG, "the %s of the user namespace that owns the network namespace", name);
		used += (size_t)w;
	}
	if (ids <= 1) {
		error_set(err, 0, "--userns subids: the user namespace that owns the network namespace maps one id (its "
			  "service or network is not of --userns subids): no range to map");
		err->hint = "run this one without --userns subids";
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/%ld/%s", n, name);
	if (write_file(path, map) < 0)
		return error_set(err, errno, "write %s", path);
	return 0;
}

/* name ("uid_map" or "gid_map") of the child n written from the config's
 * lines (host ids of nsrun's user namespace), each host id made the owner's:
 * through our own map (we are the owner's root; its second field is of its
 * parent, nsrun's: user_namespaces(7)), or as they are when the owner is ours.
 * Returns 0 or -1 with err (errnum 0: a range the owner does not map). */
static int write_config_map(const struct net_join *j, long n, const char *name, struct nsrun_error *err)
{
	bool gid = name[0] == 'g';
	const struct nsrun_id_map *lines = gid ? j->cfg->gid_mappings : j->cfg->uid_mappings;
	size_t n_lines = gid ? j->cfg->n_gid_mappings : j->cfg->n_uid_mappings;
	_cleanup_free_ char *own = NULL;
	char path[64], map[512];
	size_t len = 0, used = 0;

	snprintf(path, sizeof(path), "/proc/self/%s", name);
	if (!j->owner_is_ours && read_file(path, 4096, &own, &len) < 0)
		return error_set(err, errno, "read %s", path);
	for (size_t i = 0; i < n_lines; i++) {
		unsigned long host = lines[i].host_id, at = host;
		bool found = j->owner_is_ours;
		for (char *line = own; !found && line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
			unsigned long inside, outside, count;
			if (sscanf(line, "%lu %lu %lu", &inside, &outside, &count) == 3 && host >= outside &&
			    host - outside + lines[i].size <= count) {
				at = inside + (host - outside);
				found = true;
			}
		}
		if (!found)
			return error_set(err, 0, "linux.%s[%zu]: host ids %lu-%lu are not mapped in the user namespace "
					 "that owns the joined namespaces (its maker's map: /proc/PID/%s)",
					 gid ? "gidMappings" : "uidMappings", i, host, host + lines[i].size - 1, name);
		int w = snprintf(map + used, sizeof(map) - used, "%lu %lu %lu\n", lines[i].container_id, at,
				 lines[i].size);
		if (w < 0 || (size_t)w >= sizeof(map) - used)
			return error_set(err, E2BIG, "linux.%s", gid ? "gidMappings" : "uidMappings");
		used += (size_t)w;
	}
	snprintf(path, sizeof(path), "/proc/%ld/%s", n, name);
	if (write_file(path, map) < 0)
		return error_set(err, errno, "write %s", path);
	return 0;
}

/* The id maps of the container pid, as j asks.  Returns 0 or -1 with err. */
static int write_child_maps(const struct net_join *j, pid_t pid, struct nsrun_error *err)
{
	long n;

	if (j->cfg) {
		if ((n = ns_proc_pid(pid)) < 0)
			return error_set(err, errno, "the container's number in our /proc");
		return write_config_map(j, n, "gid_map", err) < 0 ? -1 : write_config_map(j, n, "uid_map", err);
	}
	if (!j->all_ids)
		return ns_write_id_maps(pid, j->map_uid, j->map_gid, err);
	n = ns_proc_pid(pid);
	if (n < 0)
		return error_set(err, errno, "the container's number in our /proc");
	return write_identity_map(n, "gid_map", err) < 0 ? -1 : write_identity_map(n, "uid_map", err);
}

/* setns(2) into the namespaces of j whose kind (1 << 0 network, 1 << 1 ipc,
 * 1 << 2 uts, 1 << 3 pid) is in kinds.  Returns 0 or -1 with err. */
static int join_kinds_of(const struct net_join *j, unsigned kinds, struct nsrun_error *err)
{
	if ((kinds & 1u) && j->netns_fd >= 0 && setns(j->netns_fd, CLONE_NEWNET) < 0)
		return error_set(err, errno, "join the network namespace");
	if ((kinds & 2u) && j->ns_fd[NSRUN_JOIN_IPC] >= 0 && setns(j->ns_fd[NSRUN_JOIN_IPC], CLONE_NEWIPC) < 0)
		return error_set(err, errno, "join the ipc namespace");
	if ((kinds & 4u) && j->ns_fd[NSRUN_JOIN_UTS] >= 0 && setns(j->ns_fd[NSRUN_JOIN_UTS], CLONE_NEWUTS) < 0)
		return error_set(err, errno, "join the uts namespace");
	/* for our children only (pid_namespaces(7)): the container, cloned next */
	if ((kinds & (1u << KIND_PID)) && j->ns_fd[NSRUN_JOIN_PID] >= 0 && setns(j->ns_fd[NSRUN_JOIN_PID], CLONE_NEWPID) < 0)
		return error_set(err, errno, "join the pid namespace");
	return 0;
}

/* The helper (a child of nsrun): into the owner's user namespace as its root,
 * into the network namespace, then the container with CLONE_PARENT.  Returns 0
 * in the container; never returns in the helper. */
static pid_t helper_main(const struct net_join *j, int flags, int go_fd, int report_fd)
{
	struct helper_msg m = { .pid = -1, .err = { .stage = STAGE_CLONE } };
	long pid;
	char c;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0) {
		error_set(&m.err, errno, "set the parent-death signal");
		goto fail;
	}
	/* "G": we are in the run's cgroups (the container clones from here) */
	if (read(go_fd, &c, 1) != 1)
		_exit(125);
	close(go_fd);
	/* an outer owner first (root's CNI network, below it a pause container's
	 * ipc and uts): its namespaces joined while we are there */
	if (j->outer_userns_fd >= 0) {
		if (!j->outer_is_ours && (setns(j->outer_userns_fd, CLONE_NEWUSER) < 0 || setresgid(0, 0, 0) < 0 ||
					  setresuid(0, 0, 0) < 0)) {
			error_set(&m.err, errno, "join (as its root) the outer user namespace that owns joined namespaces");
			goto fail;
		}
		if (join_kinds_of(j, j->outer_kinds, &m.err) < 0)
			goto fail;
	}
	/* the owner: joining it gives every capability in it (user_namespaces(7));
	 * one that is ours already (root's ip netns add) is not joined again */
	if (!j->owner_is_ours && setns(j->userns_fd, CLONE_NEWUSER) < 0) {
		error_set(&m.err, errno, "join the user namespace that owns the network namespace");
		goto fail;
	}
	/* its root: the caller's id (root's 65534), so the user namespace made below
	 * has an owner mapped in it (user_namespaces(7): the creator's ids) */
	if (!j->owner_is_ours && (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)) {
		error_set(&m.err, errno, "become root of the user namespace that owns the network namespace");
		goto fail;
	}
	/* an owner whose root is host root (root's unshare -r): the container's
	 * root, its own or a child's mapped onto it, would be host uid 0 */
	if (!j->owner_is_ours && ns_is_host_root()) {
		error_set(&m.err, EPERM, "the user namespace that owns the joined namespaces maps its root to host root: "
			  "the container's root would be host root");
		m.err.hint = "make the pod's namespaces in a user namespace whose root is not host root (unshare "
			     "--map-users, an unprivileged user's)";
		goto fail;
	}
	/* the network, an OCI pod's ipc and uts of this owner: the container inherits them */
	if (join_kinds_of(j, ~j->outer_kinds, &m.err) < 0)
		goto fail;
	/* a credential change made us non-dumpable, which would give the container's
	 * /proc files to host root, whose id is not mapped here: the maps below could
	 * not be written (proc(5), /proc/PID ownership).  Dumpable only across the
	 * clone: the container inherits it, and clears it as soon as its maps are
	 * written (container.c) */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0) {
		error_set(&m.err, errno, "set dumpable");
		goto fail;
	}
	/* our parent's child (CLONE_PARENT), its exit signal ours: SIGCHLD */
	pid = syscall(SYS_clone, (unsigned long)flags | CLONE_PARENT, NULL, NULL, NULL, 0);
	if (pid == 0) {
		close(report_fd);
		return 0;
	}
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
		error_set(&m.err, errno, "set non-dumpable");
		if (pid > 0)
			kill((pid_t)pid, SIGKILL);
		goto fail;
	}
	if (pid < 0) {
		error_set(&m.err, errno, "clone the container in the joined network namespace");
		goto fail;
	}
	m.pid = (pid_t)pid;
	/* "0 0 1": the owner's root, the caller's id (or, --userns subids, each id of
	 * the owner as itself); written from this, the parent user namespace
	 * (user_namespaces(7): "Defining user and group ID mappings") */
	if (!j->join_owner && write_child_maps(j, m.pid, &m.err) < 0) {
		kill(m.pid, SIGKILL);
		m.pid = -1;
	}
fail:
	if (write_all(report_fd, &m, sizeof(m)) < 0)
		_exit(125);
	_exit(m.pid > 0 ? 0 : 125);
}

pid_t net_join_clone(const struct net_join *j, int flags, net_join_enter_fn enter, void *arg,
		     struct nsrun_error *err)
{
	struct helper_msg m = { .pid = -1 };
	int pfd[2], gfd[2], status;
	pid_t helper;
	ssize_t n;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return error_set_stage(err, STAGE_CLONE, errno, "pipe for the network namespace's helper");
	if (pipe2(gfd, O_CLOEXEC) < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return error_set_stage(err, STAGE_CLONE, errno, "pipe for the network namespace's helper");
	}
	helper = fork();
	if (helper < 0) {
		close(pfd[0]);
		close(pfd[1]);
		close(gfd[0]);
		close(gfd[1]);
		return error_set_stage(err, STAGE_CLONE, errno, "fork the network namespace's helper");
	}
	if (helper == 0) {
		close(pfd[0]);
		close(gfd[1]);
		return helper_main(j, flags & ~net_join_clone_flags(j), gfd[0], pfd[1]);
	}
	close(pfd[1]);
	close(gfd[0]);
	if (enter && enter(helper, arg, err) < 0)
		status = -1;
	else if (write_all(gfd[1], "G", 1) < 0)
		status = error_set_stage(err, STAGE_CLONE, errno, "start the network namespace's helper");
	else
		status = 0;
	if (status < 0) {
		close(gfd[1]);
		close(pfd[0]);
		kill(helper, SIGKILL);
		while (waitpid(helper, &status, 0) < 0 && errno == EINTR)
			;
		return -1;
	}
	close(gfd[1]);
	do
		n = read(pfd[0], &m, sizeof(m));
	while (n < 0 && errno == EINTR);
	close(pfd[0]);
	while (waitpid(helper, &status, 0) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(m)) {
		if (m.pid > 0)
			kill(m.pid, SIGKILL);
		return error_set_stage(err, STAGE_CLONE, n < 0 ? errno : 0, "the network namespace's helper ended "
				       "without a word");
	}
	if (m.pid <= 0) {
		*err = m.err;
		err->msg[sizeof(err->msg) - 1] = '\0';
		return -1;
	}
	return m.pid;
}
