/* Unit tests of what lets a copied nsrun start inside other sandboxes: the
 * built-in seccomp profiles and the order a profile NAME is looked up in
 * (seccomp_builtin.c), the pid number read from a pidfd's fdinfo and a status's
 * NSpid line (ns.c), and the fields of a /proc/PID/stat file (sys.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ns.h"
#include "seccomp_builtin.h"
#include "sys.h"
#include "tap.h"

/* The source tree's copy, read as the test runs from the tree's root (make check-unit). */
static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)n + 1)) && fread(buf, 1, (size_t)n, f) == (size_t)n) {
		*len = (size_t)n;
		buf[n] = '\0';
	} else {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static void builtin_profiles(struct tap *t)
{
	const char *names[] = { "default", "strict" };

	for (size_t i = 0; i < 2; i++) {
		char path[64], desc[128];
		const char *bytes;
		size_t len = 0, flen = 0;
		char *file;

		snprintf(path, sizeof(path), "seccomp-profiles/%s.json", names[i]);
		file = read_all(path, &flen);
		snprintf(desc, sizeof(desc), "built-in %s is byte for byte %s", names[i], path);
		tap_ok(t, seccomp_builtin_find(names[i], &bytes, &len) == 0 && file && len == flen &&
		       memcmp(bytes, file, len) == 0, desc);
		free(file);
	}
	{
		const char *bytes;
		size_t len;
		tap_ok(t, seccomp_builtin_find("podman", &bytes, &len) < 0, "no built-in profile of another name");
	}
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		perror(path);
		exit(2);
	}
}

static void lookup_order(struct tap *t)
{
	char dir[] = "/tmp/nsrun-test-nest.XXXXXX", installed[128], over[128], path[200];
	char source[256];
	struct nsrun_error err = { 0 };
	char *bytes = NULL;
	size_t len = 0;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		exit(2);
	}
	snprintf(installed, sizeof(installed), "%s/installed", dir);
	snprintf(over, sizeof(over), "%s/override", dir);
	mkdir(installed, 0755);
	mkdir(over, 0755);

	tap_ok(t, seccomp_builtin_load("default", NULL, installed, &bytes, NULL, &len, source, sizeof(source), &err) == 0 &&
	       strstr(bytes, "\"defaultAction\"") != NULL, "nothing installed, no override: the built-in copy");
	tap_str(t, "... and it says so", "built-in default (compiled into nsrun)", source);
	free(bytes);
	{
		const char *builtin = NULL, *want;
		size_t want_len = 0;

		bytes = (char *)"untouched";
		tap_ok(t, seccomp_builtin_load("default", NULL, installed, &bytes, &builtin, &len, source,
					       sizeof(source), &err) == 0 && !bytes && builtin &&
		       seccomp_builtin_find("default", &want, &want_len) == 0 && builtin == want && len == want_len,
		       "asked for no copy: the built-in bytes themselves, none malloc'd");
	}

	snprintf(path, sizeof(path), "%s/default.json", installed);
	write_text(path, "{\"installed\": 1}");
	tap_ok(t, seccomp_builtin_load("default", "", installed, &bytes, NULL, &len, source, sizeof(source), &err) == 0 &&
	       strcmp(bytes, "{\"installed\": 1}") == 0, "an installed default.json overrides the built-in one");
	tap_str(t, "... and names its file", path, source);
	free(bytes);
	{
		const char *builtin = (const char *)"untouched";

		tap_ok(t, seccomp_builtin_load("default", "", installed, &bytes, &builtin, &len, source,
					       sizeof(source), &err) == 0 && !builtin && bytes &&
		       strcmp(bytes, "{\"installed\": 1}") == 0,
		       "asked for no copy, an installed file: its bytes, and no built-in pointer");
		free(bytes);
	}
	tap_ok(t, seccomp_builtin_load("strict", NULL, installed, &bytes, NULL, &len, source, sizeof(source), &err) == 0 &&
	       strncmp(source, "built-in strict", 15) == 0, "a profile the installed directory lacks: built in");
	free(bytes);

	snprintf(path, sizeof(path), "%s/default.json", over);
	write_text(path, "{\"override\": 1}");
	tap_ok(t, seccomp_builtin_load("default", over, installed, &bytes, NULL, &len, source, sizeof(source), &err) == 0 &&
	       strcmp(bytes, "{\"override\": 1}") == 0, "NSRUN_SECCOMP_PROFILES overrides both");
	free(bytes);
	bytes = NULL;
	tap_ok(t, seccomp_builtin_load("strict", over, installed, &bytes, NULL, &len, source, sizeof(source), &err) < 0 &&
	       err.errnum == ENOENT && strstr(err.msg, "NSRUN_SECCOMP_PROFILES") && !bytes,
	       "a profile NSRUN_SECCOMP_PROFILES lacks is an error naming it, not a quiet fallback");
	tap_ok(t, seccomp_builtin_load("nosuch", NULL, installed, &bytes, NULL, &len, source, sizeof(source), &err) < 0 &&
	       err.errnum == ENOENT && strstr(err.msg, "default, strict"), "an unknown name lists the built-in ones");

	unlink(path);
	snprintf(path, sizeof(path), "%s/default.json", installed);
	unlink(path);
	rmdir(over);
	rmdir(installed);
	rmdir(dir);
}

static void fdinfo_pid(struct tap *t)
{
	tap_int(t, "Pid of a pidfd's fdinfo", 4242,
		ns_fdinfo_pid("pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t1057\nPid:\t4242\nNSpid:\t4242\t3\n"));
	tap_int(t, "the NSpid line alone is not Pid", -1, ns_fdinfo_pid("pos:\t0\nNSpid:\t77\t3\n"));
	tap_int(t, "NSpid before Pid", 12, ns_fdinfo_pid("NSpid:\t99\nPid:\t12\n"));
	tap_int(t, "0: no number in that /proc's pid namespace", -1, ns_fdinfo_pid("pos:\t0\nPid:\t0\nNSpid:\t0\n"));
	tap_int(t, "-1: the process is gone", -1, ns_fdinfo_pid("Pid:\t-1\n"));
	tap_int(t, "no Pid line (a kernel before 5.3)", -1, ns_fdinfo_pid("pos:\t0\nflags:\t02\n"));
}

/* ns_status_nspid: the numbers of a status text's NSpid line, outermost first */
static void status_nspid(struct tap *t)
{
	static const char status[] = "Name:\tsh\nPid:\t900\nPPid:\t899\nNSpid:\t900\t12\t2\nNSpgid:\t900\t12\t2\n";
	int levels = -1;

	tap_int(t, "NSpid: the outermost number", 900, ns_status_nspid(status, 0, &levels));
	tap_int(t, "NSpid: three levels", 3, levels);
	tap_int(t, "NSpid: k < 0 is the innermost", 2, ns_status_nspid(status, -1, NULL));
	tap_int(t, "NSpid: no number k", -1, ns_status_nspid(status, 3, NULL));
	tap_int(t, "NSpid: no line (a kernel before 4.1)", -1, ns_status_nspid("Pid:\t5\n", -1, &levels));
	tap_int(t, "NSpid: no line, no levels", 0, levels);
}

/* proc_stat_fields on a stat file whose comm holds ") (" and spaces, as a payload
 * may name itself (prctl PR_SET_NAME) */
static void stat_fields(struct tap *t)
{
	char dir[] = "/tmp/nsrun-test-stat.XXXXXX", path[64];
	unsigned long long v[2] = { 0, 0 };
	FILE *f;

	if (!mkdtemp(dir)) {
		tap_ok(t, false, "mkdtemp for proc_stat_fields");
		return;
	}
	snprintf(path, sizeof(path), "%s/stat", dir);
	if (!(f = fopen(path, "w"))) {
		tap_ok(t, false, "write a stat file for proc_stat_fields");
		rmdir(dir);
		return;
	}
	fputs("4242 (a) (b c) S 17 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10 "
	      "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 5000 6000 7000 8000 8100 8200 8300 0\n", f);
	fclose(f);
	tap_int(t, "stat: ppid (field 4) after a comm with \") (\"", 0, proc_stat_fields(AT_FDCWD, dir, 4, 1, v));
	tap_ok(t, v[0] == 17, "stat: ppid is 17");
	tap_int(t, "stat: starttime (field 22)", 0, proc_stat_fields(AT_FDCWD, dir, 22, 1, v));
	tap_ok(t, v[0] == 987654, "stat: starttime is 987654");
	tap_int(t, "stat: arg_start, arg_end (48, 49)", 0, proc_stat_fields(AT_FDCWD, dir, 48, 2, v));
	tap_ok(t, v[0] == 8100 && v[1] == 8200, "stat: 8100 and 8200");
	tap_int(t, "stat: a field past the end", -1, proc_stat_fields(AT_FDCWD, dir, 60, 1, v));
	tap_int(t, "stat: ... is EINVAL", EINVAL, errno);
	unlink(path);
	tap_int(t, "stat: no such process", -1, proc_stat_fields(AT_FDCWD, dir, 4, 1, v));
	tap_int(t, "stat: ... is ENOENT", ENOENT, errno);
	rmdir(dir);
}

/* proc_children: the real /proc's, of this thread (a child made here), and a
 * file of the same form with more pids than asked for */
static void children(struct tap *t)
{
	char dir[] = "/tmp/nsrun-test-children.XXXXXX", path[96];
	pid_t kids[4] = { 0 }, kid = fork();
	ssize_t n;
	FILE *f;

	if (kid == 0) {
		pause();
		_exit(0);
	}
	n = proc_children(AT_FDCWD, "/proc/thread-self", kids, 4);
	tap_ok(t, kid > 0 && n == 1 && kids[0] == kid, "children: our one child, from /proc/thread-self");
	if (kid > 0) {
		kill(kid, SIGKILL);
		waitpid(kid, NULL, 0);
	}
	if (!mkdtemp(dir)) {
		tap_ok(t, false, "mkdtemp for proc_children");
		return;
	}
	snprintf(path, sizeof(path), "%s/children", dir);
	if ((f = fopen(path, "w"))) {
		fputs("12 345 6789 10 ", f);
		fclose(f);
	}
	n = proc_children(AT_FDCWD, dir, kids, 3);
	tap_ok(t, n == 3 && kids[0] == 12 && kids[1] == 345 && kids[2] == 6789, "children: at most max, in order");
	unlink(path);
	tap_int(t, "children: no such task", -1, (int)proc_children(AT_FDCWD, dir, kids, 3));
	tap_int(t, "children: ... is ENOENT", ENOENT, errno);
	rmdir(dir);
}

int main(void)
{
	struct tap t = { 0 };

	builtin_profiles(&t);
	lookup_order(&t);
	fdinfo_pid(&t);
	status_nspid(&t);
	stat_fields(&t);
	children(&t);
	return tap_done(&t);
}
