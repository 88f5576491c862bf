/* subid.c - see subid.h */
#include <errno.h>
#include <ctype.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "ns.h"
#include "subid.h"
#include "sys.h"

#define SUBID_MIN_COUNT 1000UL  /* fewer cannot hold a distribution's service users */

/* A decimal number of digits only at *p (strtoul(3) alone would take a sign and
 * leading spaces, so "-1" would be ULONG_MAX), ending at one of ends; moves *p
 * past it.  Returns 0, or -1 when there is none or it overflows. */
static int parse_id(const char **p, const char *ends, unsigned long *out)
{
	char *e;

	if (!isdigit((unsigned char)**p))
		return -1;
	errno = 0;
	*out = strtoul(*p, &e, 10);
	if (errno || !strchr(ends, *e))
		return -1;
	*p = e;
	return 0;
}

/* start:count at p, the rest of a subuid(5) line; 0, or -1 when it does not parse */
static int parse_range(const char *p, unsigned long *start, unsigned long *count)
{
	return parse_id(&p, ":", start) < 0 || *p++ != ':' || parse_id(&p, "\n", count) < 0 ? -1 : 0;
}

int subid_find(const char *text, const char *user, unsigned long id, struct subid_range *r)
{
	char idstr[32];
	const char *line = text;

	snprintf(idstr, sizeof(idstr), "%lu", id);
	while (line && *line) {
		const char *end = strchrnul(line, '\n');
		const char *c1 = memchr(line, ':', (size_t)(end - line));
		size_t nlen = c1 ? (size_t)(c1 - line) : 0;
		unsigned long start, count;

		if (c1 && ((user && strlen(user) == nlen && strncmp(line, user, nlen) == 0) ||
			   (strlen(idstr) == nlen && strncmp(line, idstr, nlen) == 0)) &&
		    parse_range(c1 + 1, &start, &count) == 0 && count > 0) {
			r->start = start;
			r->count = count;
			return 1;
		}
		line = *end ? end + 1 : NULL;
	}
	return 0;
}

char *subid_user_name(uid_t uid)
{
	FILE *f = fopen("/etc/passwd", "re");
	struct passwd *pw;
	char *name = NULL;

	if (!f)
		return NULL;
	while (!name && (pw = fgetpwent(f)))
		if (pw->pw_uid == uid)
			name = strdup(pw->pw_name);
	fclose(f);
	return name;
}

static bool holds(const struct subid_range *r, unsigned long id)
{
	return id >= r->start && id - r->start < r->count;
}

static int find_range(const char *file, const char *user, unsigned long id, struct subid_range *r,
		      struct nsrun_error *err)
{
	_cleanup_free_ char *text = NULL;

	if (read_file(file, 1 << 20, &text, NULL) < 0 && errno != ENOENT)
		return error_set_stage(err, STAGE_PREPARE, errno, "--userns subids: read %s", file);
	if (!text || !subid_find(text, user, id, r)) {
		error_set_stage(err, STAGE_PREPARE, 0, "--userns subids: %s has no subordinate ids for %s "
				"(uid %lu)", file, user ? user : "this user", id);
		err->hint = id == 0 ? "give root a range no user or group has, e.g.: usermod --add-subuids "
				      "200000-265535 --add-subgids 200000-265535 root" :
			    "ask root to give you a range no user or group has, e.g.: usermod --add-subuids "
			    "100000-165535 --add-subgids 100000-165535 $USER";
		return -1;
	}
	if (r->start > UINT32_MAX - 1 || r->count > UINT32_MAX - r->start)
		return error_set_stage(err, STAGE_PREPARE, EINVAL, "--userns subids: the range of %s in %s is past "
				       "the last id (4294967294)", user ? user : "this user", file);
	if (r->count < SUBID_MIN_COUNT)
		return error_set_stage(err, STAGE_PREPARE, EINVAL, "--userns subids: %s gives %s only %lu ids "
				       "(at least %lu are needed)", file, user ? user : "this user", r->count,
				       SUBID_MIN_COUNT);
	/* podman maps at most 65536; more is never needed and a smaller map is cheaper */
	if (r->count > 65536)
		r->count = 65536;
	/* never host root, never the caller (container root would be the caller twice,
	 * and a payload's other ids could act as the caller) */
	if (holds(r, 0) || holds(r, id)) {
		error_set_stage(err, STAGE_PREPARE, EINVAL, "--userns subids: the range %lu-%lu of %s in %s "
				"holds %s", r->start, r->start + r->count - 1, user ? user : "this user", file,
				holds(r, 0) ? "host root (id 0)" : "the user's own id");
		err->hint = "fix the entry: subordinate ids must be ids no user or group of the host has";
		return -1;
	}
	return 0;
}

int subid_taken(const char *text, const char *user, unsigned long id, const struct subid_range *r,
		char *who, size_t who_size)
{
	char idstr[32];

	snprintf(idstr, sizeof(idstr), "%lu", id);
	for (const char *line = text; line && *line;) {
		const char *end = strchrnul(line, '\n');
		const char *c1 = memchr(line, ':', (size_t)(end - line));
		size_t nlen = c1 ? (size_t)(c1 - line) : 0;
		unsigned long start, count;

		if (c1 && !((user && strlen(user) == nlen && strncmp(line, user, nlen) == 0) ||
			    (strlen(idstr) == nlen && strncmp(line, idstr, nlen) == 0)) &&
		    parse_range(c1 + 1, &start, &count) == 0 && count > 0 &&
		    start < r->start + r->count && r->start < start + count) {
			snprintf(who, who_size, "%.*s's range %lu-%lu", (int)nlen, line, start, start + count - 1);
			return 1;
		}
		line = *end ? end + 1 : NULL;
	}
	return 0;
}

/* As root (the maps are written directly, with no newuidmap to vet them): 0 when
 * no user of /etc/passwd (what "uid" names; group of /etc/group for "gid") and no
 * other entry of file holds an id of r; -1 with err naming which otherwise. */
static int check_free(const char *file, const char *what, const char *user, unsigned long id,
		      const struct subid_range *r, struct nsrun_error *err)
{
	_cleanup_free_ char *text = NULL;
	char who[128] = "";
	bool gid = strcmp(what, "gid") == 0;
	FILE *f = fopen(gid ? "/etc/group" : "/etc/passwd", "re");

	if (f) {
		struct passwd *pw;
		struct group *gr;
		while (!who[0] && (gid ? (void *)(gr = fgetgrent(f)) : (void *)(pw = fgetpwent(f))))
			if (holds(r, gid ? gr->gr_gid : pw->pw_uid))
				snprintf(who, sizeof(who), "%s %s (%s %u of %s)", gid ? "group" : "user",
					 gid ? gr->gr_name : pw->pw_name, what,
					 gid ? (unsigned)gr->gr_gid : (unsigned)pw->pw_uid, gid ? "/etc/group" : "/etc/passwd");
		fclose(f);
	}
	if (!who[0] && read_file(file, 1 << 20, &text, NULL) == 0)
		subid_taken(text, user, id, r, who, sizeof(who));
	if (!who[0])
		return 0;
	error_set_stage(err, STAGE_PREPARE, 0, "--userns subids: the range %lu-%lu of %s in %s holds %s",
			r->start, r->start + r->count - 1, user ? user : "root", file, who);
	err->hint = "give root a range no user, group or other entry has, e.g.: usermod --add-subuids "
		    "200000-265535 --add-subgids 200000-265535 root";
	return -1;
}

/* Whether every id of r is an id of our own user namespace, as the first field
 * of map_path (/proc/self/uid_map or gid_map: user_namespaces(7)) says.  In a
 * user namespace that maps fewer ids (nsrun nested in one that maps the caller
 * alone) no helper can give the range.  True when the map cannot be read. */
static bool range_mapped(const char *map_path, const struct subid_range *r)
{
	_cleanup_free_ char *map = NULL;
	size_t len = 0;
	unsigned long cur = r->start, end = r->start + r->count;
	bool moved = true;

	if (read_file(map_path, 16384, &map, &len) < 0)
		return true;
	/* the extents in any order: advance cur through those that hold it */
	while (cur < end && moved) {
		moved = false;
		for (const char *line = map; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
			unsigned long inside, outside, count;
			if (sscanf(line, "%lu %lu %lu", &inside, &outside, &count) == 3 && inside <= cur &&
			    cur - inside < count) {
				cur = inside + count;
				moved = true;
			}
		}
	}
	return cur >= end;
}

int subid_maps_for_caller(struct subid_maps *m, struct nsrun_error *err)
{
	_cleanup_free_ char *name = NULL;

	memset(m, 0, sizeof(*m));
	m->uid = geteuid();
	m->gid = getegid();
	m->direct = m->uid == 0;
	name = subid_user_name(m->uid);
	if (find_range("/etc/subuid", name, m->uid, &m->uids, err) < 0 ||
	    find_range("/etc/subgid", name, m->uid, &m->gids, err) < 0)
		return -1;
	if (!range_mapped("/proc/self/uid_map", &m->uids) || !range_mapped("/proc/self/gid_map", &m->gids)) {
		error_set_stage(err, STAGE_PREPARE, 0, "--userns subids: the subordinate ids of %s (%lu-%lu) are not "
				"ids of the user namespace nsrun runs in (nested in one that maps fewer)",
				name ? name : "this user", m->uids.start, m->uids.start + m->uids.count - 1);
		err->hint = "run without --userns subids (one id inside), or from a user namespace that maps the range";
		return -1;
	}
	if (m->gid != 0 && holds(&m->gids, m->gid))
		return error_set_stage(err, STAGE_PREPARE, EINVAL, "--userns subids: the subordinate gids of %s "
				       "hold its own gid %u", name ? name : "this user", (unsigned)m->gid);
	if (m->direct && (check_free("/etc/subuid", "uid", name, m->uid, &m->uids, err) < 0 ||
			  check_free("/etc/subgid", "gid", name, m->uid, &m->gids, err) < 0))
		return -1;
	return 0;
}

/* Checks lines (n of them, linux.WHAT of the config) against the caller's own id
 * and range r of file.  Returns 0 or -1 with err. */
static int check_lines(const struct subid_maps *m, const char *what, const char *file, unsigned long own,
		       const struct nsrun_id_map *lines, size_t n, const struct subid_range *r, struct nsrun_error *err)
{
	for (size_t i = 0; i < n; i++) {
		const struct nsrun_id_map *l = &lines[i];
		unsigned long last = l->host_id + l->size - 1;
		/* root of podman's rootless user namespace maps its 0, the user's id */
		if (m->direct && l->host_id == 0 && ns_is_host_root()) {
			error_set_stage(err, STAGE_PREPARE, 0, "config.json: linux.%s[%zu]: host ids %lu-%lu hold host "
					"root (id 0): nsrun never maps it into a container", what, i, l->host_id, last);
			err->hint = "map a range of root's subordinate ids (/etc/subuid, /etc/subgid) instead";
			return -1;
		}
		if (m->direct || (l->size == 1 && l->host_id == own) ||
		    (l->host_id >= r->start && last < r->start + r->count && last >= l->host_id))
			continue;
		error_set_stage(err, STAGE_PREPARE, 0, "config.json: linux.%s[%zu]: host ids %lu-%lu are neither "
				"the caller's id %lu nor in its subordinate range %lu-%lu (%s): map ids of that range, "
				"or ask root for more (usermod --add-sub%cids)", what, i, l->host_id, last, own, r->start,
				r->start + r->count - 1, file, what[0]);
		err->hint = "map only ids of that range (podman: --userns=keep-id or auto picks them), or ask root "
			    "for more: usermod --add-subuids FIRST-LAST --add-subgids FIRST-LAST $USER";
		return -1;
	}
	return 0;
}

int subid_maps_from_config(struct subid_maps *m, const struct nsrun_config *cfg, struct nsrun_error *err)
{
	memset(m, 0, sizeof(*m));
	m->uid = geteuid();
	m->gid = getegid();
	m->direct = m->uid == 0;
	/* the caller's ranges, as --userns subids finds them (root needs none) */
	if (!m->direct && subid_maps_for_caller(m, err) < 0)
		return -1;
	m->uid_lines = cfg->uid_mappings;
	m->n_uid_lines = cfg->n_uid_mappings;
	m->gid_lines = cfg->gid_mappings;
	m->n_gid_lines = cfg->n_gid_mappings;
	if (check_lines(m, "uidMappings", "/etc/subuid", m->uid, m->uid_lines, m->n_uid_lines, &m->uids, err) < 0 ||
	    check_lines(m, "gidMappings", "/etc/subgid", m->gid, m->gid_lines, m->n_gid_lines, &m->gids, err) < 0)
		return -1;
	return 0;
}

/* The OCI lines of a map as "inside outside count" words from argv[2] on
 * (newuidmap(1)), or (text != NULL) as the text of a map file.  words holds
 * 3 * NSRUN_MAX_ID_MAPS numbers. */
static void lines_to_words(const struct nsrun_id_map *l, size_t n, char words[][24], char **argv, char *text,
			   size_t text_size)
{
	size_t used = 0;

	for (size_t i = 0; i < n; i++) {
		snprintf(words[3 * i], 24, "%lu", l[i].container_id);
		snprintf(words[3 * i + 1], 24, "%lu", l[i].host_id);
		snprintf(words[3 * i + 2], 24, "%lu", l[i].size);
		for (int k = 0; k < 3 && argv; k++)
			argv[2 + 3 * i + (size_t)k] = words[3 * i + (size_t)k];
		if (text)
			used += (size_t)snprintf(text + used, text_size - used, "%lu %lu %lu\n", l[i].container_id,
						 l[i].host_id, l[i].size);
	}
	if (argv)
		argv[2 + 3 * n] = NULL;
}

static int run_helper(char *const argv[], struct nsrun_error *err);

/* m's OCI lines of the child n (in our /proc): written directly as root, else by
 * newgidmap and newuidmap.  Returns 0 or -1 with err. */
static int write_config_lines(long n, const struct subid_maps *m, struct nsrun_error *err)
{
	char words[3 * NSRUN_MAX_ID_MAPS][24], pidstr[24], text[NSRUN_MAX_ID_MAPS * 72], path[64];
	char *argv[3 + 3 * NSRUN_MAX_ID_MAPS];

	snprintf(pidstr, sizeof(pidstr), "%ld", n);
	for (int g = 1; g >= 0; g--) {
		const struct nsrun_id_map *l = g ? m->gid_lines : m->uid_lines;
		size_t count = g ? m->n_gid_lines : m->n_uid_lines;
		argv[0] = g ? "newgidmap" : "newuidmap";
		argv[1] = pidstr;
		text[0] = '\0';
		lines_to_words(l, count, words, argv, text, sizeof(text));
		if (m->direct) {
			snprintf(path, sizeof(path), "/proc/%ld/%s", n, g ? "gid_map" : "uid_map");
			if (write_file(path, text) < 0)
				return error_set_stage(err, STAGE_ID_MAPS, errno, "write %s", path);
		} else if (run_helper(argv, err) < 0) {
			return -1;
		}
	}
	return 0;
}

/* Where the setuid helper argv0 (newuidmap, newgidmap) may come from: a root-owned
 * file in a system directory, never through PATH, which a payload with a writable
 * volume on it (~/bin, ~/.local/bin) could have planted a program of its own in.
 * Fills path (size bytes); returns 0, or -1 with errno ENOENT. */
static int helper_path(const char *argv0, char *path, size_t size)
{
	static const char *const dirs[] = { "/usr/bin", "/usr/sbin", "/bin", "/sbin" };
	struct stat st;

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, size, "%s/%s", dirs[i], argv0);
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0 && !(st.st_mode & (S_IWGRP | S_IWOTH)))
			return 0;
	}
	errno = ENOENT;
	return -1;
}

/* Runs argv (a helper from a system directory: helper_path), its stderr into err
 * on failure.  Returns 0 or -1 with err. */
static int run_helper(char *const argv[], struct nsrun_error *err)
{
	static char *const no_env[] = { NULL };
	char out[200] = "", path[64];
	int pipefd[2], status;
	ssize_t n, len = 0;
	pid_t pid;

	if (helper_path(argv[0], path, sizeof(path)) < 0) {
		error_set_stage(err, STAGE_ID_MAPS, ENOENT, "--userns subids: %s not found", argv[0]);
		err->hint = "install it (root-owned, in /usr/bin): apt-get install uidmap (Debian, Ubuntu), "
			    "dnf install shadow-utils";
		return -1;
	}
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return error_set_stage(err, STAGE_ID_MAPS, errno, "pipe for %s", argv[0]);
	pid = fork();
	if (pid < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		return error_set_stage(err, STAGE_ID_MAPS, errno, "fork %s", argv[0]);
	}
	if (pid == 0) {
		sigset_t none;
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (null < 0 || dup2(null, 0) < 0 || dup2(pipefd[1], 1) < 0 || dup2(pipefd[1], 2) < 0)
			_exit(126);
		execve(path, argv, no_env);
		dprintf(2, "%s", strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	close(pipefd[1]);
	while (len < (ssize_t)sizeof(out) - 1 &&
	       ((n = read(pipefd[0], out + len, sizeof(out) - 1 - (size_t)len)) > 0 || (n < 0 && errno == EINTR)))
		if (n > 0)
			len += n;
	close(pipefd[0]);
	out[len] = '\0';
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return error_set_stage(err, STAGE_ID_MAPS, errno, "wait for %s", argv[0]);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	out[strcspn(out, "\n")] = '\0';
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
		error_set_stage(err, STAGE_ID_MAPS, ENOENT, "--userns subids: %s not found", argv[0]);
		err->hint = "install it: apt-get install uidmap (Debian, Ubuntu), dnf install shadow-utils";
		return -1;
	}
	error_set_stage(err, STAGE_ID_MAPS, EPERM, "--userns subids: %s failed: %s", argv[0],
			out[0] ? out : "no message");
	err->hint = "is it setuid root (ls -l /usr/bin/newuidmap), and does /etc/subuid give you the range?";
	return -1;
}

static int write_direct(long n, const char *name, const struct subid_range *r, struct nsrun_error *err)
{
	char path[64], map[64];

	snprintf(path, sizeof(path), "/proc/%ld/%s", n, name);
	snprintf(map, sizeof(map), "0 %lu %lu\n", r->start, r->count);
	if (write_file(path, map) < 0)
		return error_set_stage(err, STAGE_ID_MAPS, errno, "write %s", path);
	return 0;
}

int subid_write_maps(pid_t pid, const struct subid_maps *m, struct nsrun_error *err)
{
	char pidstr[24], id[24], start[24], count[24], gid[24], gstart[24], gcount[24];
	long n = ns_proc_pid(pid);

	if (n < 0)
		return error_set_stage(err, STAGE_ID_MAPS, errno, "write the id maps of the container (pid %d): "
				       "it has no number in the /proc mounted here", (int)pid);
	if (m->n_uid_lines || m->n_gid_lines)
		return write_config_lines(n, m, err);
	if (m->direct)
		return write_direct(n, "gid_map", &m->gids, err) < 0 ? -1 :
		       write_direct(n, "uid_map", &m->uids, err);
	snprintf(pidstr, sizeof(pidstr), "%ld", n);
	snprintf(id, sizeof(id), "%u", (unsigned)m->uid);
	snprintf(start, sizeof(start), "%lu", m->uids.start);
	snprintf(count, sizeof(count), "%lu", m->uids.count - 1);
	snprintf(gid, sizeof(gid), "%u", (unsigned)m->gid);
	snprintf(gstart, sizeof(gstart), "%lu", m->gids.start);
	snprintf(gcount, sizeof(gcount), "%lu", m->gids.count - 1);
	/* container 0 -> the caller, 1..count-1 -> the range (newuidmap(1) takes
	 * "inside outside count" triples) */
	char *gargv[] = { "newgidmap", pidstr, "0", gid, "1", "1", gstart, gcount, NULL };
	char *uargv[] = { "newuidmap", pidstr, "0", id, "1", "1", start, count, NULL };
	if (run_helper(gargv, err) < 0)
		return -1;
	return run_helper(uargv, err);
}

int subid_check(struct nsrun_error *err)
{
	struct subid_maps m;
	int sv[2], status, rc;
	char c = 0;
	pid_t pid;

	if (subid_maps_for_caller(&m, err) < 0)
		return -1;
	/* sv: the child says its namespace is made (or exits, EOF) */
	if (pipe2(sv, O_CLOEXEC) < 0)
		return error_set(err, errno, "pipe");
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return error_set(err, errno, "fork");
	}
	if (pid == 0) {
		/* a throwaway namespace: made, mapped by the parent, then killed */
		close(sv[0]);
		if (unshare(CLONE_NEWUSER) < 0)
			_exit(2);
		c = 'u';
		if (write(sv[1], &c, 1) != 1)
			_exit(3);
		for (;;)
			pause();
	}
	close(sv[1]);
	ssize_t n;
	while ((n = read(sv[0], &c, 1)) < 0 && errno == EINTR)
		;
	close(sv[0]);
	if (n == 1)
		rc = subid_write_maps(pid, &m, err);
	else
		rc = error_set(err, EPERM, "make a user namespace to map");
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return rc;
}
