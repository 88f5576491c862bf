/* diagnose.c - see diagnose.h */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mntent.h>

#include "cleanup.h"
#include "diagnose.h"
#include "landlock.h"
#include "sys.h"

/* Reads proc/REL into buf (size len, NUL-terminated); returns the length or -1. */
static ssize_t read_proc(const char *proc, const char *rel, char *buf, size_t len)
{
	char path[512];
	_cleanup_close_ int fd = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", proc, rel);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || (n = read(fd, buf, len - 1)) < 0) {
		buf[0] = '\0';
		return -1;
	}
	buf[n] = '\0';
	return n;
}

/* A small integer sysctl (proc/sys/...), or -1 when it is absent or unreadable. */
static long read_sysctl(const char *proc, const char *rel)
{
	char buf[32];
	char *end;
	long v;

	if (read_proc(proc, rel, buf, sizeof(buf)) <= 0)
		return -1;
	v = strtol(buf, &end, 10);
	return end == buf ? -1 : v;
}

/* The number after "\nNAME:" in status, or -1. */
static int status_field(const char *status, const char *name)
{
	char key[64];
	const char *line;

	snprintf(key, sizeof(key), "\n%s:", name);
	line = strstr(status, key);
	return line ? atoi(line + strlen(key)) : -1;
}

void diag_read_host(const char *proc, struct diag_host *h)
{
	char status[8192];
	char map[128];
	unsigned long inside, outside, count;

	memset(h, 0, sizeof(*h));
	h->max_user_namespaces = read_sysctl(proc, "sys/user/max_user_namespaces");
	h->unprivileged_userns_clone = read_sysctl(proc, "sys/kernel/unprivileged_userns_clone");
	h->apparmor_restrict = read_sysctl(proc, "sys/kernel/apparmor_restrict_unprivileged_userns");
	/* the AppArmor-specific file first (Linux 5.8): attr/current may be another LSM's */
	if (read_proc(proc, "self/attr/apparmor/current", h->apparmor_label, sizeof(h->apparmor_label)) < 0)
		h->apparmor_label[0] = '\0';
	h->apparmor_label[strcspn(h->apparmor_label, "\n")] = '\0';
	h->seccomp_mode = h->seccomp_filters = -1;
	if (read_proc(proc, "self/status", status, sizeof(status)) > 0) {
		h->seccomp_mode = status_field(status, "Seccomp");
		h->seccomp_filters = status_field(status, "Seccomp_filters");
	}
	/* the initial user namespace maps every id to itself: "0 0 4294967295" */
	if (read_proc(proc, "self/uid_map", map, sizeof(map)) > 0)
		h->nested_userns = sscanf(map, "%lu %lu %lu", &inside, &outside, &count) != 3 ||
				   inside != 0 || outside != 0 || count != 4294967295UL;
}

bool diag_apparmor_blocks(const struct diag_host *h)
{
	return h->apparmor_restrict == 1 && !strstr(h->apparmor_label, "nsrun");
}

const char diag_depth_hint[] = "run nsrun fewer user namespaces deep (`nsrun check` shows the levels "
			       "left), or raise user.max_user_namespaces";

static const char apparmor_hint_installed[] =
	"load nsrun's profile, as root: apparmor_parser -r " DIAG_APPARMOR_PROFILE
	" (it covers the installed nsrun's path only; or: sysctl -w kernel.apparmor_restrict_unprivileged_userns=0)";
static const char apparmor_hint_missing[] =
	"install nsrun with its AppArmor profile: sudo make install (in nsrun's source tree); "
	"or allow every program, as root: sysctl -w kernel.apparmor_restrict_unprivileged_userns=0";

static int diag_apparmor(int errnum, const char *what, const struct diag_host *h, struct nsrun_error *err)
{
	error_set(err, errnum, "%s: AppArmor restricts unprivileged user namespaces "
		  "(kernel.apparmor_restrict_unprivileged_userns is 1) and no profile allows them to nsrun "
		  "(label \"%s\")", what, h->apparmor_label[0] ? h->apparmor_label : "unconfined");
	err->hint = access(DIAG_APPARMOR_PROFILE, F_OK) == 0 ? apparmor_hint_installed : apparmor_hint_missing;
	return -1;
}

static const char outer_sandbox_hint[] =
	"run nsrun outside that sandbox, or let it allow nested user namespaces "
	"(bubblewrap: without --disable-userns; nsrun: --allow-nested; on the host, as root: "
	"sysctl -w user.max_user_namespaces=15000)";

int diag_userns(int errnum, const char *proc, struct nsrun_error *err)
{
	struct diag_host h;

	diag_read_host(proc, &h);
	err->stage = STAGE_CLONE;
	if (h.max_user_namespaces == 0) {
		error_set(err, errnum, "cannot create a user namespace: user.max_user_namespaces is 0");
		err->hint = "allow them, as root (or in the outer user namespace that set it to 0): "
			    "sysctl -w user.max_user_namespaces=15000";
	} else if (errnum == ENOSPC && h.nested_userns) {
		/* ucounts are checked in every ancestor namespace (kernel/ucount.c inc_ucount):
		 * an outer limit of 0 refuses us while ours still reads the default */
		error_set(err, errnum, "cannot create a user namespace: an outer user namespace allows no more "
			  "(its user.max_user_namespaces is 0, as bubblewrap --disable-userns sets it, or reached; "
			  "here it is %ld), or they are nested 32 deep", h.max_user_namespaces);
		err->hint = outer_sandbox_hint;
	} else if (errnum == ENOSPC || errnum == EUSERS) {
		error_set(err, errnum, "cannot create a user namespace: the limit user.max_user_namespaces (%ld) "
			  "is reached, or they are nested 32 deep", h.max_user_namespaces);
		err->hint = "raise it, as root: sysctl -w user.max_user_namespaces=15000";
	} else if (errnum == EPERM && h.unprivileged_userns_clone == 0) {
		error_set(err, errnum, "cannot create a user namespace: kernel.unprivileged_userns_clone is 0");
		err->hint = "allow them, as root: sysctl -w kernel.unprivileged_userns_clone=1";
	} else if ((errnum == EPERM || errnum == EACCES) && diag_apparmor_blocks(&h)) {
		diag_apparmor(errnum, "cannot create a user namespace", &h, err);
	} else if (h.seccomp_mode == 2) {
		error_set(err, errnum, "cannot create a user namespace: this process runs under %d seccomp "
			  "filter(s) (Seccomp: 2 in /proc/self/status) of an outer sandbox that deny it",
			  h.seccomp_filters > 0 ? h.seccomp_filters : 1);
		err->hint = "let the outer sandbox allow nested namespaces (nsrun: --allow-nested or "
			    "--security-opt seccomp=unconfined; Docker/Podman: --security-opt seccomp=unconfined)";
	} else {
		error_set(err, errnum, "cannot create a user namespace");
		err->hint = "run `nsrun check` for what this host allows";
	}
	return -1;
}

/* Appends s (and a separating ", ") to buf of size len, cutting it if it is full. */
static void append(char *buf, size_t len, const char *s)
{
	size_t n = strlen(buf);

	if (n + 1 < len)
		snprintf(buf + n, len - n, "%s%s", n ? ", " : "", s);
}

/* Lists in covered the mounts of mounts (the entries of a /proc/PID/mounts, read
 * with getmntent(3)) below target (a proc mount's path), other than binfmt_misc,
 * which the kernel's rule allows (it sits on an empty directory).  Returns how
 * many there are. */
static int covered_paths(const struct mntent *mounts, size_t n_mounts, const char *target, char *covered,
			 size_t len)
{
	size_t tlen = strlen(target);
	int n = 0;

	covered[0] = '\0';
	for (size_t i = 0; i < n_mounts; i++) {
		const char *t = mounts[i].mnt_dir;
		if (strncmp(t, target, tlen) != 0 || t[tlen] != '/' || !strcmp(mounts[i].mnt_type, "binfmt_misc"))
			continue;
		append(covered, len, t);
		n++;
	}
	return n;
}

static void free_mounts(struct mntent *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(m[i].mnt_dir);
		free(m[i].mnt_type);
		free(m[i].mnt_opts);
	}
	free(m);
}

bool diag_proc_visible(const char *proc, char *covered, size_t len)
{
	char path[512];
	struct mntent *mounts = NULL, *e;
	size_t n = 0;
	bool visible = false, first = true;
	FILE *f;

	/* /proc/PID/mounts through glibc's getmntent(3) and hasmntopt(3): the library
	 * reads the table, nsrun only walks it (and stays free of shared libraries) */
	snprintf(path, sizeof(path), "%s/self/mounts", proc);
	covered[0] = '\0';
	f = setmntent(path, "re");
	if (!f) {
		snprintf(covered, len, "(%s unreadable)", path);
		return false;
	}
	while ((e = getmntent(f))) {
		struct mntent *m = realloc(mounts, (n + 1) * sizeof(*m));
		if (!m)
			break;
		mounts = m;
		mounts[n] = (struct mntent){ .mnt_dir = strdup(e->mnt_dir), .mnt_type = strdup(e->mnt_type),
					     .mnt_opts = strdup(e->mnt_opts) };
		if (!mounts[n].mnt_dir || !mounts[n].mnt_type || !mounts[n].mnt_opts) {
			n++;
			break;
		}
		n++;
	}
	endmntent(f);
	for (size_t i = 0; i < n && !visible; i++) {
		char here[512];

		if (!mounts[i].mnt_dir || !mounts[i].mnt_type || !mounts[i].mnt_opts)
			break;
		/* a read-only proc cannot stand for the read-write proc a run mounts (its flag
		 * is locked) */
		if (strcmp(mounts[i].mnt_type, "proc") != 0 || hasmntopt(&mounts[i], "ro"))
			continue;
		visible = covered_paths(mounts, n, mounts[i].mnt_dir, here, sizeof(here)) == 0;
		if (first)
			snprintf(covered, len, "%s", here);
		first = false;
	}
	free_mounts(mounts, n);
	return visible;
}

int diag_proc_mount(int errnum, const char *proc, struct nsrun_error *err)
{
	struct diag_host h;
	char covered[200];

	diag_read_host(proc, &h);
	err->stage = STAGE_MOUNT;
	if (errnum == EPERM && diag_apparmor_blocks(&h))
		return diag_apparmor(errnum, "mount a fresh /proc", &h, err);
	if (errnum == EPERM && !diag_proc_visible(proc, covered, sizeof(covered))) {
		error_set(err, errnum, "mount a fresh /proc: the outer /proc has paths mounted over (%s), as "
			  "container engines mask them, and the kernel then refuses a new proc in a user namespace",
			  covered[0] ? covered : "no proc mount found");
		err->hint = "run the outer container with an unmasked /proc (Docker/Podman: --security-opt "
			    "systempaths=unconfined; Kubernetes: securityContext.procMount: Unmasked; nsrun in "
			    "nsrun: --allow-nested)";
		return -1;
	}
	return error_set(err, errnum, "mount a fresh /proc");
}

int diag_mount_refused(struct nsrun_error *err, const char *proc)
{
	bool landlock = landlock_abi() > 0;
	struct diag_host h;

	diag_read_host(proc, &h);
	if (h.seccomp_mode == 2)
		error_set(err, EPERM, "cannot mount in the container's own mount namespace: an outer sandbox refuses "
			  "mount(2) through its seccomp filter (Seccomp: 2 in /proc/self/status)%s",
			  landlock ? " or a Landlock ruleset" : "");
	else if (landlock)
		error_set(err, EPERM, "cannot mount in the container's own mount namespace: this process is most "
			  "likely confined by an outer Landlock ruleset (as agent sandboxes apply), which refuses "
			  "every mount(2)");
	else
		error_set(err, EPERM, "cannot mount in the container's own mount namespace: an outer sandbox (a "
			  "security module) refuses mount(2)");
	/* the reduced tier keeps the image read-only by Landlock: without it, no
	 * tier below full has a read-only image as an unprivileged caller (the
	 * hint named --isolation reduced, which then failed: breaker, session 20) */
	err->hint = landlock ? "without --isolation nsrun takes the reduced tier here, which needs no mount (no "
			       "/proc, /dev, tmpfs or volumes; the image read-only by Landlock): --isolation "
			       "reduced, or start nsrun outside that sandbox"
			     : "no fix inside this sandbox: the lower tiers need Landlock, which this kernel or "
			       "the sandbox's filter does not give; start nsrun outside that sandbox";
	return -1;
}

void diag_refine(struct nsrun_error *err, const char *proc)
{
	struct diag_host h;
	char what[sizeof(err->msg)];

	if (err->errnum == ENOSPC && strstr(err->msg, "payload's user namespace")) {
		err->hint = diag_depth_hint;
		return;
	}
	if (err->errnum != EPERM || (err->stage != STAGE_MOUNT && err->stage != STAGE_CONTAINER &&
				     err->stage != STAGE_ID_MAPS))
		return;
	diag_read_host(proc, &h);
	/* Ubuntu 24.04 lets the namespace be made, without capabilities in it: what fails
	 * is the next step (the id maps, a mount) */
	if (diag_apparmor_blocks(&h)) {
		snprintf(what, sizeof(what), "%s", err->msg);
		diag_apparmor(err->errnum, what, &h, err);
	} else if (err->stage == STAGE_MOUNT && strstr(err->msg, "proc") && !diag_proc_visible(proc, what, sizeof(what))) {
		/* the proc step's message names the file system ("mount proc on ...") */
		diag_proc_mount(err->errnum, proc, err);
	} else if (err->hint) {
		/* the failing step explained itself (mount.c: a Landlock domain, the initramfs) */
		return;
	} else if (h.seccomp_mode == 2 && err->stage != STAGE_ID_MAPS) {
		/* with every capability in its own namespaces, only an LSM or a filter says EPERM */
		bool lo = strncmp(err->msg, "no socket to bring lo up", 24) == 0;
		snprintf(what, sizeof(what), "%s", err->msg);
		error_set(err, err->errnum, "%s: denied by the %d seccomp filter(s) this process runs under "
			  "(an outer sandbox's)", what, h.seccomp_filters > 0 ? h.seccomp_filters : 1);
		/* nsrun tried every socket lo can be brought up through (ns.c): a filter that
		 * leaves none (not even an AF_UNIX socketpair) is an agent sandbox's, not an engine's */
		err->hint = lo ? "no fix inside this sandbox: its seccomp filter leaves no socket of any family "
				 "(an agent sandbox's network filter must allow at least socketpair(AF_UNIX, "
				 "SOCK_STREAM), which Claude Code's and Codex's do); or run nsrun outside it"
			       : "let the outer sandbox allow it: container engines' default seccomp profiles allow "
				 "some calls only with CAP_SYS_ADMIN (Podman's sethostname; Docker's mount and unshare "
				 "too): --cap-add SYS_ADMIN (in rootless Podman a capability of its user namespace "
				 "only) or --security-opt seccomp=unconfined; an agent sandbox's filter: its own "
				 "settings, or run nsrun outside it";
	}
}
