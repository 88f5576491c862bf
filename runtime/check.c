/* check.c - see check.h; the namespace probes are in check_ns.c
 *
 * Every probe that changes something runs in a short-lived child: a new user
 * namespace (and, for the mount probes, a new mount and pid namespace) that exits
 * at once, so nothing is left on the host.  Children report over a pipe as fixed
 * structs; a struct nsrun_error is already a plain value (error.h). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <seccomp.h>    /* libseccomp's (runtime/ is an -iquote directory) */
#include <yajl/yajl_gen.h>

#include "cgroup.h"
#include "cgroup_v1.h"
#include "check.h"
#include "check_internal.h"
#include "ns.h"
#include "subid.h"
#include "diagnose.h"
#include "landlock.h"
#include "pasta.h"
#include "error.h"
#include "seccomp.h"
#include "sys.h"
#include "tier.h"

struct check_item *check_add(struct check_list *l, const char *name, bool needed, bool ok)
{
	struct check_item *it = &l->items[l->n < 39 ? l->n++ : 39];

	memset(it, 0, sizeof(*it));
	snprintf(it->name, sizeof(it->name), "%s", name);
	it->needed = needed;
	it->ok = ok;
	return it;
}

/* An item from a probe's error: ok when errnum is 0 and msg empty. */
void check_add_error(struct check_list *l, const char *name, bool needed, const struct nsrun_error *e,
		     const char *ok_detail)
{
	bool ok = e->errnum == 0 && !e->msg[0];
	struct check_item *it = check_add(l, name, needed, ok);
	const char *hint;

	if (ok) {
		snprintf(it->detail, sizeof(it->detail), "%s", ok_detail ? ok_detail : "");
		return;
	}
	error_format(e, it->detail, sizeof(it->detail));
	hint = error_hint(e);
	snprintf(it->fix, sizeof(it->fix), "%s", hint ? hint : "");
}

/* Runs fn in a child (fork) that writes len bytes of report to a pipe and exits.
 * Returns 0 when the report came back whole, or -1 with err (the child died: a
 * filter may kill it with SIGSYS). */
int check_in_child(void (*fn)(int out_fd, void *report), void *report, size_t len, struct nsrun_error *err)
{
	int fds[2];
	pid_t pid;
	int status = 0;
	ssize_t got;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return error_set(err, errno, "pipe for a probe");
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return error_set(err, errno, "fork a probe");
	}
	if (pid == 0) {
		close(fds[0]);
		fn(fds[1], report);
		_exit(0);
	}
	close(fds[1]);
	got = read(fds[0], report, len);
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (got == (ssize_t)len)
		return 0;
	if (WIFSIGNALED(status))
		return error_set(err, 0, "the probe was killed by signal %d (%s): an outer seccomp filter?",
				 WTERMSIG(status), strsignal(WTERMSIG(status)));
	return error_set(err, 0, "the probe exited (status %d) without a report", status);
}

/* In a child: a new user namespace mapping our ids to 0, as a run makes one. */
int check_enter_userns(struct nsrun_error *e)
{
	char map[64];
	uid_t uid = geteuid();
	gid_t gid = getegid();

	if (unshare(CLONE_NEWUSER) < 0)
		return diag_userns(errno, PROC, e);
	snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)gid);
	if (write_file("/proc/self/setgroups", "deny") < 0 && errno != ENOENT) {
		error_set_stage(e, STAGE_ID_MAPS, errno, "write /proc/self/setgroups");
		if (e->errnum == EACCES)
			e->hint = NS_MAPS_EACCES_HINT;
		return -1;
	}
	if (write_file("/proc/self/gid_map", map) < 0)
		return error_set_stage(e, STAGE_ID_MAPS, errno, "write /proc/self/gid_map");
	snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)uid);
	if (write_file("/proc/self/uid_map", map) < 0)
		return error_set_stage(e, STAGE_ID_MAPS, errno, "write /proc/self/uid_map");
	return 0;
}

/* ---- clone3 ---- */

/* A line only where an outer filter would end or fail glibc's threads and
 * posix_spawn (sys_clone3_usable): a run works there, in ways that differ. */
static void check_clone3(struct check_list *l)
{
	struct check_item *it;
	char why[160];

	if (sys_clone3_usable(why, sizeof(why)))
		return;
	it = check_add(l, "clone3", false, false);
	snprintf(it->detail, sizeof(it->detail), "an outer seccomp filter %s, with which glibc makes "
		 "threads and posix_spawn children (it falls back to clone(2) only on ENOSYS)", why);
	snprintf(it->fix, sizeof(it->fix), "none needed for a run: nsrun forks its children and samples --memory "
		 "in its own loop (--memory-sample-timeout and --timeout hold). A payload's own threads meet "
		 "the same filter; nsrun pull and nsrun api cannot run. Or the outer sandbox answers clone3 with "
		 "ENOSYS, as Docker's default profile does");
}

/* ---- cgroup v2 ---- */

/* The cgroup a run would get, with every limit asked for; made and removed. */
static void check_cgroup(struct check_list *l)
{
	struct nsrun_config cfg;
	struct nsrun_error err = { 0 };
	struct cgroup_run cg;
	struct cgroup_v1 cg1 = { 0 };
	struct check_item *it;
	/* root on a hybrid host has a cgroup v1 memory group; nobody else does */
	const char *v1 = geteuid() == 0 ? " (or a cgroup v1 group, as root on a hybrid host)" : "";
	bool mem_v1;

	if (config_init(&cfg, &err) < 0) {
		check_add_error(l, "cgroup v2", false, &err, NULL);
		return;
	}
	cfg.limits.cpus_milli = 1000;
	if (cgroup_prepare(&cfg, &cg, &err) < 0) {
		check_add_error(l, "cgroup v2", false, &err, NULL);
	} else if (!cg.path) {
		it = check_add(l, "cgroup v2", false, false);
		snprintf(it->detail, sizeof(it->detail), "%s", cg.why_not);
		snprintf(it->fix, sizeof(it->fix), "none needed: --memory is measured by nsrun%s, --pids-limit "
			 "falls back to RLIMIT_NPROC; --cpus is not enforced (a delegated cgroup v2 subtree enforces "
			 "them: see docs/limits.md); --strict, which wants every limit in a cgroup, refuses runs here", v1);
	} else {

		it = check_add(l, "cgroup v2", false, true);
		snprintf(it->detail, sizeof(it->detail), "runs go under %.*s%s",
			 (int)(strrchr(cg.path, '/') - cg.path), cg.path,
			 cg.scope[0] ? " (a scope nsrun asks the systemd manager for)" : "");
		/* where v2 has no memory controller, a run as root makes a v1 group: so
		 * does check (made and removed), and says so as --json does */
		mem_v1 = !cg.memory && cgroup_v1_prepare(&cfg, &cg1, &err) == 0 && cg1.path;
		cgroup_v1_destroy(&cg1);
		memset(&err, 0, sizeof(err));
		it = check_add(l, "cgroup memory", false, cg.memory || mem_v1);
		if (mem_v1) {
			snprintf(it->detail, sizeof(it->detail), "a cgroup v1 memory group holds --memory: as root on "
				 "this hybrid host, where the v2 tree has no memory controller (--json: cgroup-v1)");
		} else if (!cg.memory) {
			snprintf(it->detail, sizeof(it->detail), "the memory controller is not delegated to nsrun's "
				 "cgroups here");
			snprintf(it->fix, sizeof(it->fix), "none needed: nsrun measures --memory on real use%s "
				 "(--strict, which wants every limit in a cgroup, refuses a run here)", v1);
		}
		it = check_add(l, "cgroup pids", false, cg.pids);
		if (!cg.pids) {
			snprintf(it->detail, sizeof(it->detail), "the pids controller is not delegated to nsrun's "
				 "cgroups here");
			snprintf(it->fix, sizeof(it->fix), "none needed: --pids-limit falls back to RLIMIT_NPROC "
				 "(--strict, which wants every limit in a cgroup, refuses a run here)");
		}
		it = check_add(l, "cgroup cpu", false, cg.cpu);
		if (!cg.cpu) {
			snprintf(it->detail, sizeof(it->detail), "the cpu controller is not delegated to nsrun's "
				 "cgroups here");
			snprintf(it->fix, sizeof(it->fix), "delegate the cpu controller to enforce --cpus");
		}
	}
	cgroup_destroy(&cg);
	config_free(&cfg);
}

/* ---- seccomp, Landlock, newuidmap ---- */

static void probe_seccomp(int out_fd, void *p)
{
	struct nsrun_error *e = p;
	scmp_filter_ctx ctx = NULL;
	int rc;

	memset(e, 0, sizeof(*e));
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		error_set(e, errno, "set no_new_privs");
	} else if (!(ctx = seccomp_init(SCMP_ACT_ALLOW))) {
		error_set(e, ENOMEM, "seccomp_init");
	} else if ((rc = seccomp_load(ctx)) < 0) {
		error_set(e, -rc, "load a seccomp filter");
		e->hint = "the kernel needs CONFIG_SECCOMP_FILTER, and an outer sandbox must allow seccomp(2)";
	}
	if (ctx)
		seccomp_release(ctx);
	write_all(out_fd, e, sizeof(*e));
}

static void check_seccomp(struct check_list *l)
{
	const struct scmp_version *v = seccomp_version();
	struct nsrun_error e = { 0 }, err = { 0 };
	struct diag_host h;
	char detail[200], own[100];

	diag_read_host(PROC, &h);
	if (h.seccomp_mode == 2)
		snprintf(own, sizeof(own), "this process already runs under %d filter(s) of an outer sandbox",
			 h.seccomp_filters > 0 ? h.seccomp_filters : 1);
	else
		snprintf(own, sizeof(own), "no filter on this process");
	snprintf(detail, sizeof(detail), "libseccomp %u.%u.%u, API level %u; %s", v ? v->major : 0,
		 v ? v->minor : 0, v ? v->micro : 0, seccomp_api_get(), own);
	if (check_in_child(probe_seccomp, &e, sizeof(e), &err) < 0)
		e = err;
	check_add_error(l, "seccomp", true, &e, detail);
}

/* The run's profile, compiled as a run compiles it and loaded in a child with
 * no_new_privs, as the payload loads it. */
struct profile_report {
	struct nsrun_error e;
};

static void probe_profile(int out_fd, void *p)
{
	struct profile_report *r = p;
	struct nsrun_seccomp *f = NULL;

	memset(r, 0, sizeof(*r));
	if (seccomp_prepare("default", seccomp_profiles_dir(), 0, NULL, NULL, &f, &r->e) == 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			error_set(&r->e, errno, "set no_new_privs");
		else if (seccomp_apply(f, &r->e) < 0)
			r->e.hint = "the kernel needs CONFIG_SECCOMP_FILTER, and an outer sandbox must allow seccomp(2)";
	}
	/* from here on only write and exit_group: both allowed by the profile */
	write_all(out_fd, r, sizeof(*r));
	seccomp_free(f);
}

static void check_profile(struct check_list *l)
{
	struct profile_report r;
	struct nsrun_error err = { 0 };
	struct nsrun_seccomp *f = NULL;
	char detail[SECCOMP_SOURCE_MAX + 64];

	/* compiled here for the source and the size; loaded in the child */
	if (seccomp_prepare("default", seccomp_profiles_dir(), 0, NULL, NULL, &f, &err) < 0) {
		if (!err.hint)
			err.hint = seccomp_profiles_dir() ? "point NSRUN_SECCOMP_PROFILES at a directory with default.json, "
				   "or unset it to use the profile built into nsrun" :
				   "mend or remove the profile file named (without it nsrun uses its built-in copy)";
		check_add_error(l, "seccomp profile", true, &err, NULL);
		return;
	}
	snprintf(detail, sizeof(detail), "%s, %u BPF instructions, loads here", seccomp_stats(f)->source,
		 seccomp_stats(f)->n_insns);
	seccomp_free(f);
	if (check_in_child(probe_profile, &r, sizeof(r), &err) < 0)
		r.e = err;
	check_add_error(l, "seccomp profile", true, &r.e, detail);
}

static void check_landlock(struct check_list *l)
{
	long abi = landlock_abi();      /* 0: errno says why */
	struct check_item *it = check_add(l, "landlock", false, abi > 0);

	if (abi > 0) {
		snprintf(it->detail, sizeof(it->detail), "ABI %ld", abi);
	} else if (errno == EOPNOTSUPP) {
		snprintf(it->detail, sizeof(it->detail), "the kernel has Landlock but it is not enabled");
		snprintf(it->fix, sizeof(it->fix), "add landlock to the lsm= boot parameter (cat /sys/kernel/security/lsm)");
	} else {
		snprintf(it->detail, sizeof(it->detail),
			 "landlock_create_ruleset, landlock_add_rule or landlock_restrict_self: %s%s", strerror(errno),
			 errno == ENOSYS ? " (a kernel without Landlock, or an outer filter denies it)" : "");
		snprintf(it->fix, sizeof(it->fix), "none needed: runs go without this extra layer; "
			 "a kernel 5.13+ with CONFIG_SECURITY_LANDLOCK adds it");
	}
}

/* --network pasta (optional): pasta installed, /dev/net/tun open to the caller. */
static void check_pasta(struct check_list *l)
{
	char why[160];
	const char *no = pasta_unavailable(why, sizeof(why));
	struct check_item *it = check_add(l, "pasta", false, !no);

	if (!no) {
		snprintf(it->detail, sizeof(it->detail), "--network pasta can make eth0 through /dev/net/tun");
		return;
	}
	snprintf(it->detail, sizeof(it->detail), "%s", no);
	snprintf(it->fix, sizeof(it->fix), "%s", strstr(no, "passt") ?
		 "apt-get install passt, for --network pasta; runs with --network none need nothing" :
		 access("/dev/net/tun", F_OK) != 0 ?
		 "as root: modprobe tun, or mkdir -p /dev/net && mknod -m 0666 /dev/net/tun c 10 200, for "
		 "--network pasta; runs with --network none need nothing" :
		 "chmod 0666 /dev/net/tun as root (what Debian's udev does), for --network pasta; "
		 "runs with --network none need nothing");
}

/* The real test: newuidmap and newgidmap (or, as root, a direct write) map a
 * throwaway user namespace with the caller's subordinate ranges, as a run with
 * --userns subids does (subid.h).  Not needed for a default run. */
static void check_newuidmap(struct check_list *l)
{
	struct nsrun_error e = { 0 };
	struct subid_maps m;
	struct check_item *it;
	bool ok = subid_check(&e) == 0;

	it = check_add(l, "newuidmap", false, ok);
	if (ok && subid_maps_for_caller(&m, &e) == 0) {
		snprintf(it->detail, sizeof(it->detail), "--userns subids maps a user namespace: subordinate uids "
			 "%lu+%lu, gids %lu+%lu%s", m.uids.start, m.uids.count, m.gids.start, m.gids.count,
			 m.direct ? ", written directly as root" : " through newuidmap and newgidmap");
		return;
	}
	it->ok = false;
	snprintf(it->detail, sizeof(it->detail), "%s", e.msg[0] ? e.msg : "--userns subids cannot map a user namespace");
	snprintf(it->fix, sizeof(it->fix), "none needed but for --userns subids%s%s", e.hint ? ": " : "",
		 e.hint ? e.hint : "");
}

/* ---- output ---- */

static void print_text(const struct check_list *l, FILE *out)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct check_item *it = &l->items[i];

		if (it->ok)
			fprintf(out, it->detail[0] ? "%s: ok (%s)\n" : "%s: ok\n", it->name, it->detail);
		else
			fprintf(out, "%s: missing: %s%s%s\n", it->name, it->detail, it->fix[0] ? "; fix: " : "", it->fix);
	}
}

#define GEN_STR(g, s) yajl_gen_string(g, (const unsigned char *)(s), strlen(s))

static int print_json(const struct check_list *l, bool ok, enum nsrun_isolation tier, FILE *out)
{
	yajl_gen g = yajl_gen_alloc(NULL);
	const unsigned char *buf;
	size_t len;
	int rc = -1;

	if (!g)
		return -1;
	yajl_gen_map_open(g);
	GEN_STR(g, "ok");
	yajl_gen_bool(g, ok);
	GEN_STR(g, "isolation");
	if (tier == NSRUN_ISOLATION_AUTO)
		yajl_gen_null(g);
	else
		GEN_STR(g, tier_name(tier));
	GEN_STR(g, "checks");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < l->n; i++) {
		const struct check_item *it = &l->items[i];

		yajl_gen_map_open(g);
		GEN_STR(g, "name");
		GEN_STR(g, it->name);
		GEN_STR(g, "status");
		GEN_STR(g, it->ok ? "ok" : "missing");
		GEN_STR(g, "needed");
		yajl_gen_bool(g, it->needed);
		GEN_STR(g, it->ok ? "detail" : "cause");
		GEN_STR(g, it->detail);
		if (!it->ok) {
			GEN_STR(g, "fix");
			GEN_STR(g, it->fix);
		}
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	if (yajl_gen_get_buf(g, &buf, &len) == yajl_gen_status_ok && fwrite(buf, 1, len, out) == len &&
	    fputc('\n', out) != EOF)
		rc = 0;
	yajl_gen_free(g);
	return rc;
}

/* The one verdict, from the lines: CHECK_FULL when every feature a default run
 * needs is there, else CHECK_NONE.  (check_tier then looks for a lower tier.) */
static int check_verdict(const struct check_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->items[i].needed && !l->items[i].ok)
			return CHECK_NONE;
	return CHECK_FULL;
}

/* ---- the verdict: which isolation tier a default run gets (tier.h) ---- */

/* Full when every needed feature is there; else the highest lower tier whose
 * probe works; NSRUN_ISOLATION_AUTO when none does.  Adds the verdict as the item
 * "isolation" (not needed: the exit status carries it). */
static enum nsrun_isolation check_tier(struct check_list *l, bool full_ok)
{
	struct nsrun_error why_full, why_reduced, why_minimal;
	/* half of a detail each: error_format gives a cause with its errno */
	char reduced[280], minimal[280];
	struct check_item *it;

	/* every line above ok: the probe a run makes of full still decides (its calls
	 * are the run's: an outer filter may refuse one no line above makes, and
	 * check said full while every run failed: breaker, session 19) */
	if (full_ok && tier_probe(NSRUN_ISOLATION_FULL, &why_full) < 0) {
		full_ok = false;
		check_add_error(l, "container set-up", true, &why_full, NULL);
	}
	if (full_ok) {
		it = check_add(l, "isolation", false, true);
		snprintf(it->detail, sizeof(it->detail), "full: a default run gets every property");
		return NSRUN_ISOLATION_FULL;
	}
	it = check_add(l, "isolation", false, false);
	snprintf(it->fix, sizeof(it->fix), "those of the missing lines above for full isolation; "
		 "a lower tier is refused by --strict");
	/* every tier loads the run's seccomp profile */
	for (size_t i = 0; i + 1 < l->n; i++) {
		if (!l->items[i].ok && l->items[i].needed && strncmp(l->items[i].name, "seccomp", 7) == 0) {
			snprintf(it->detail, sizeof(it->detail), "no run works here: every tier needs the %s line "
				 "above", l->items[i].name);
			return NSRUN_ISOLATION_AUTO;
		}
	}
	if (tier_probe(NSRUN_ISOLATION_REDUCED, &why_reduced) == 0) {
		snprintf(it->detail, sizeof(it->detail), "not full; a run takes the reduced tier (no mount "
			 "namespace: no /proc, /dev, tmpfs or volumes; docs/isolation.md, \"Isolation tiers\")");
		return NSRUN_ISOLATION_REDUCED;
	}
	if (tier_probe(NSRUN_ISOLATION_MINIMAL, &why_minimal) == 0) {
		snprintf(it->detail, sizeof(it->detail), "not full; a run takes the minimal tier (no namespace "
			 "at all; docs/isolation.md, \"Isolation tiers\")");
		return NSRUN_ISOLATION_MINIMAL;
	}
	error_format(&why_reduced, reduced, sizeof(reduced));
	error_format(&why_minimal, minimal, sizeof(minimal));
	snprintf(it->detail, sizeof(it->detail), "no run works here: not full, nor reduced (%s), nor minimal (%s)",
		 reduced, minimal);
	return NSRUN_ISOLATION_AUTO;
}

int check_main(int argc, char **argv, FILE *out)
{
	static const struct option opts[] = { { "json", no_argument, NULL, 'j' }, { NULL, 0, NULL, 0 } };
	struct check_list l = { .n = 0 };
	struct nsrun_error killed = { 0 };
	bool json = false, ok;
	enum nsrun_isolation tier;
	int c, status;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		if (c != 'j') {
			fprintf(stderr, "nsrun: usage: nsrun check [--json]\n");
			return 125;
		}
		json = true;
	}
	if (optind < argc) {
		fprintf(stderr, "nsrun: check: unexpected argument \"%s\" (usage: nsrun check [--json])\n", argv[optind]);
		return 125;
	}
	fflush(out);    /* the probes fork: nothing buffered may be written twice */
	/* first, what would kill nsrun itself, and check with it, in the probes below:
	 * clone(2), with which every probe is forked, then the supervisor's calls */
	if (sys_clone_killed(&killed) < 0 || tier_supervisor_probe(&killed) < 0) {
		struct check_item *it;
		check_add_error(&l, "nsrun's own calls", true, &killed, NULL);
		it = check_add(&l, "isolation", false, false);
		snprintf(it->detail, sizeof(it->detail), "no run works here: an outer filter kills nsrun itself "
			 "(the line above; the other probes were not made)");
		snprintf(it->fix, sizeof(it->fix), "let the outer sandbox allow that call");
		tier = NSRUN_ISOLATION_AUTO;
		status = CHECK_NONE;
		ok = false;
		goto print;
	}
	check_clone3(&l);
	if (check_namespaces(&l)) {
		check_start(&l);
		check_mounts(&l);
	} else {
		check_mounts_skipped(&l);
	}
	check_cgroup(&l);
	check_seccomp(&l);
	check_profile(&l);
	check_landlock(&l);
	check_pasta(&l);
	check_newuidmap(&l);
	status = check_verdict(&l);
	ok = status == CHECK_FULL;
	/* the tier a default run would get: the verdict's line (tier.h) */
	tier = check_tier(&l, ok);
	ok = tier == NSRUN_ISOLATION_FULL;
	if (!ok)
		status = tier == NSRUN_ISOLATION_AUTO ? CHECK_NONE : CHECK_LOWER;
print:
	if (json) {
		if (print_json(&l, ok, tier, out) < 0 || fflush(out) != 0) {
			fprintf(stderr, "nsrun: write the check document: %s\n", strerror(errno));
			return 125;
		}
	} else {
		print_text(&l, out);
	}
	return status;
}
