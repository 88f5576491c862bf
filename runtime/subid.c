/* subid.c - see subid.h */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "ns.h"
#include "subid.h"
#include "sys.h"

#define SUBID_MIN_COUNT 1000UL  /* fewer cannot hold a distribution's service users */

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
		char tail;

		if (c1 && ((user && strlen(user) == nlen && strncmp(line, user, nlen) == 0) ||
			   (strlen(idstr) == nlen && strncmp(line, idstr, nlen) == 0)) &&
		    sscanf(c1 + 1, "%lu:%lu%c", &start, &count, &tail) >= 2 && count > 0) {
			r->start = start;
			r->count = count;
			return 1;
		}
		line = *end ? end + 1 : NULL;
	}
	return 0;
}

/* The name of uid from /etc/passwd, read with fgetpwent(3) (no NSS in a static
 * binary); NULL when it has none there (the uid's number still names it). */
static char *user_name(uid_t uid)
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

int subid_maps_for_caller(struct subid_maps *m, struct nsrun_error *err)
{
	_cleanup_free_ char *name = NULL;

	memset(m, 0, sizeof(*m));
	m->uid = geteuid();
	m->gid = getegid();
	m->direct = m->uid == 0;
	name = user_name(m->uid);
	if (find_range("/etc/subuid", name, m->uid, &m->uids, err) < 0 ||
	    find_range("/etc/subgid", name, m->uid, &m->gids, err) < 0)
		return -1;
	if (m->gid != 0 && holds(&m->gids, m->gid))
		return error_set_stage(err, STAGE_PREPARE, EINVAL, "--userns subids: the subordinate gids of %s "
				       "hold its own gid %u", name ? name : "this user", (unsigned)m->gid);
	return 0;
}

/* Runs argv (a helper found through PATH), its stderr into err on failure.
 * Returns 0 or -1 with err. */
static int run_helper(char *const argv[], struct nsrun_error *err)
{
	char out[200] = "";
	int pipefd[2], status;
	ssize_t n, len = 0;
	pid_t pid;

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
		execvp(argv[0], argv);
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
	err->hint = "is it setuid root (ls -l $(command -v newuidmap)), and does /etc/subuid give you the range?";
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
	if (pipe2(sv, O_CLOEXEC) < 0)
		return error_set(err, errno, "pipe");
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return error_set(err, errno, "fork");
	}
	if (pid == 0) {
		/* a throwaway namespace: made, mapped by the parent, then we go */
		close(sv[1]);
		if (unshare(CLONE_NEWUSER) < 0)
			_exit(2);
		if (read(sv[0], &c, 1) != 1)
			_exit(3);
		_exit(0);
	}
	close(sv[0]);
	/* the child's unshare must be done before the maps are written: wait for
	 * /proc/PID/ns/user to differ from ours */
	for (int i = 0; i < 2000; i++) {
		char p[64], a[64] = "", b[64] = "";
		snprintf(p, sizeof(p), "/proc/%d/ns/user", (int)pid);
		if (readlink(p, a, sizeof(a) - 1) < 0 || readlink("/proc/self/ns/user", b, sizeof(b) - 1) < 0 ||
		    strcmp(a, b) != 0)
			break;
		usleep(1000);
	}
	rc = subid_write_maps(pid, &m, err);
	if (write(sv[1], &c, 1) < 0 && rc == 0)
		rc = error_set(err, errno, "write to the check's child");
	close(sv[1]);
	waitpid(pid, &status, 0);
	return rc;
}
