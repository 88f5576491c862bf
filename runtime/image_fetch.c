/* image_fetch.c - `nsrun pull [OPTIONS] docker://REF NAME`: the pull's steps,
 * the store's side (lock, stale leftovers, landing) and its cleanup (see
 * image_fetch.h).
 *
 * Layout while pulling: STORE/.NAME.tmp.XXXXXX (0700, the puller's; as root
 * bwrap reaches work/ through fetch_reach_work's bind, else the directory is
 * 0710 with the group 65534 while the tools run) holds work/ (the sandbox's
 * /build: oci/ the verified layout, rootfs/ the unpacked tree, tmp/ the
 * tools' scratch) and the tools' log; at the end rootfs/ and image.json.  Only
 * the finished tree is opened (0755) and renamed into place.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "image_fetch.h"
#include "image.h"
#include "image_ref.h"
#include "sys.h"

#define OCI_TAG "nsrun"

static volatile sig_atomic_t stop_signal;

int fetch_stop_signal(void)
{
	return stop_signal;
}

static void on_signal(int sig)
{
	stop_signal = sig;
}

/* ---- messages ---- */

/* A tool's messages, cleaned: control characters (terminal escapes from names
 * in a layer or a registry's answer) become '?', at most 40 lines of 400
 * characters are shown. */
static void show_log(const char *path)
{
	_cleanup_fclose_ FILE *in = fopen(path, "re");
	char line[4096];

	for (int n = 0; in && n < 40 && fgets(line, sizeof(line), in); n++) {
		size_t len = strcspn(line, "\n");
		line[len > 400 ? 400 : len] = '\0';
		for (char *c = line; *c; c++)
			if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
				*c = '?';
		fprintf(stderr, "%s\n", line);
	}
}

/* ---- the steps ---- */

/* Makes f->work, the sandbox's /build, owned by whoever unpacks.  As root,
 * the sandbox (uid 65534) must reach work/ by path (bwrap's --bind-fd
 * re-resolves the fd's path): fetch_reach_work binds it where every user may
 * look it up, in a mount namespace of the pull's own, whatever the store's
 * parents' modes.  work_close ends that before finishing. */
static int work_init(struct fetch *f, struct nsrun_error *err)
{
	static const char *const subs[] = { "", "/tmp", "/home", "/run", NULL };
	char path[PATH_MAX];

	for (const char *const *s = subs; *s; s++) {
		snprintf(path, sizeof(path), "%s%s", f->work, *s);
		if (mkdir(path, **s ? 0755 : 0700) < 0)
			return error_set(err, errno, "pull \"%s\": create %s", f->o->name, path);
	}
	snprintf(path, sizeof(path), "%s/run", f->work);
	if (chmod(path, 0700) < 0 || chmod(f->work, 0700) < 0)
		return error_set(err, errno, "pull \"%s\": chmod %s", f->o->name, path);
	if (geteuid() == 0 && fetch_chown_tree(f->work, FETCH_UNPACK_UID, FETCH_UNPACK_UID) < 0)
		return error_set(err, errno, "pull \"%s\": give %s to uid %d", f->o->name, f->work, FETCH_UNPACK_UID);
	if ((f->work_fd = open(f->work, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return error_set(err, errno, "pull \"%s\": open %s", f->o->name, f->work);
	if (geteuid() != 0)
		return 0;
	if (fetch_reach_work(f, err) < 0)
		return -1;
	/* no mount namespace of our own: the sandbox reaches work/ through f->tmp
	 * (0710, group 65534; no other user can), which works when 65534 can
	 * look up the store */
	if (!f->reach && (chown(f->tmp, (uid_t)-1, FETCH_UNPACK_UID) < 0 || chmod(f->tmp, 0710) < 0))
		return error_set(err, errno, "pull \"%s\": give %s to uid %d", f->o->name, f->tmp, FETCH_UNPACK_UID);
	return 0;
}

/* After the last sandbox: f->tmp is the puller's alone again, and so is
 * everything in work/ (as root: chowned without following links). */
static int work_close(struct fetch *f, struct nsrun_error *err)
{
	if (f->work_fd >= 0)
		close(f->work_fd);
	f->work_fd = -1;
	fetch_unreach_work(f);
	if (geteuid() == 0 && (chmod(f->tmp, 0700) < 0 || chown(f->tmp, (uid_t)-1, 0) < 0 ||
			       fetch_chown_tree(f->work, 0, 0) < 0))
		return error_set(err, errno, "pull \"%s\": take %s back", f->o->name, f->work);
	return 0;
}

/* Opens f->tmp/file for a tool's output, truncated. */
static int open_out(const struct fetch *f, const char *file)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", f->tmp, file);
	return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
}

/* A step's failure with status rc (fetch_run_confined's: 128+N for signal N):
 * the bound that stopped it, else message after the tool's cleaned messages,
 * with what killed the tool if a signal did.  Returns -1 with err. */
static int step_failed(struct fetch *f, const char *message, int rc, struct nsrun_error *err)
{
	char log[PATH_MAX], why[160];

	if (f->reason[0]) {
		error_set(err, 0, "pull \"%s\": %s", f->o->name, f->reason);
		if (f->hint[0])
			err->hint = f->hint;
		return -1;
	}
	if (!stop_signal) {
		snprintf(log, sizeof(log), "%s/tool.log", f->tmp);
		show_log(log);
	}
	if (rc == 128 + SIGSYS) {
		/* an outer seccomp filter: Go's runtime (skopeo, umoci) starts processes by
		 * clone3(2), which such filters kill (sys_clone3_usable) */
		error_set(err, 0, "pull \"%s\": %s: an outer seccomp filter %s", f->o->name, message,
			  sys_clone3_usable(why, sizeof(why)) ? "killed it (SIGSYS) at a system call it makes" : why);
		err->hint = "pull where no outer filter kills it (outside the agent's sandbox) and copy the "
			    "image directory in; nsrun check names what the filter refuses";
		return -1;
	}
	if (rc > 128 && rc < 128 + NSIG)
		return error_set(err, 0, "pull \"%s\": %s: killed by SIG%s", f->o->name, message,
				 sigabbrev_np(rc - 128) ? sigabbrev_np(rc - 128) : "?");
	return error_set(err, 0, "pull \"%s\": %s", f->o->name, message);
}

/* Runs argv confined with its stdout to f->tmp/out (NULL: /dev/null) and its
 * stderr to f->tmp/tool.log.  Returns its status, or -1 with err. */
static int run_step(struct fetch *f, bool net, const char *out, const char *const *argv, struct nsrun_error *err)
{
	_cleanup_close_ int o = out ? open_out(f, out) : open("/dev/null", O_WRONLY | O_CLOEXEC);
	_cleanup_close_ int log = open_out(f, "tool.log");

	if (o < 0 || log < 0)
		return error_set(err, errno, "pull \"%s\": open the output of %s", f->o->name, argv[0]);
	return fetch_run_confined(f, net, -1, o, log, argv, err);
}

/* The runtime's own checks on the image directory f->tmp (nsrun image check,
 * the code a run uses).  quiet: the status alone; else a refusal becomes err
 * with nsrun's message (control characters cleaned) and hint.  Returns 0, or
 * -1 (with err unless quiet). */
static int check_image(struct fetch *f, const char *self, bool quiet, struct nsrun_error *err)
{
	const char *argv[] = { self, "image", "check", "--name", f->o->name, f->tmp, NULL };
	_cleanup_free_ char *text = NULL;
	char msg[200] = "";
	int p[2], null = open("/dev/null", O_WRONLY | O_CLOEXEC), ws = 0;
	pid_t pid;

	if (null < 0 || pipe2(p, O_CLOEXEC) < 0) {
		if (null >= 0)
			close(null);
		return error_set(err, errno, "pull \"%s\": nsrun image check", f->o->name);
	}
	if (spawn_child(&pid, self, false, (char *const *)argv, NULL, (int[3]){ -1, null, p[1] }) < 0) {
		int e = errno;
		close(null), close(p[0]), close(p[1]);
		return error_set(err, e, "pull \"%s\": run nsrun image check", f->o->name);
	}
	close(null), close(p[1]);
	read_fd(p[0], 64 << 10, &text, NULL);
	close(p[0]);
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(ws) && WEXITSTATUS(ws) == 0)
		return 0;
	if (quiet)
		return -1;
	f->hint[0] = '\0';
	for (char *l = text, *nl; l && *l; l = nl) {
		if ((nl = strchr(l, '\n')))
			*nl++ = '\0';
		for (char *c = l; *c; c++)
			if ((unsigned char)*c < 0x20 || (unsigned char)*c == 0x7f)
				*c = '?';
		if (strncmp(l, "nsrun: hint: ", 13) == 0)
			snprintf(f->hint, sizeof(f->hint), "%s", l + 13);
		else if (strncmp(l, "nsrun: ", 7) == 0 && !msg[0])
			snprintf(msg, sizeof(msg), "%s", l + 7);
	}
	error_set(err, 0, "pull \"%s\": nsrun would refuse the image: %s", f->o->name,
		  msg[0] ? msg : "nsrun image check failed");
	if (f->hint[0])
		err->hint = f->hint;
	return -1;
}

/* The interpreters guessed without --interpreter, in this order. */
static const char *const guess_interpreters[] = { "python3", "node", "ruby", "sh", NULL };

/* image.json, checked by the runtime itself: what a run would refuse fails
 * the pull in nsrun's words.  Without --interpreter: the first of
 * guess_interpreters a run finds, preferring the one the image's
 * entrypoint/cmd starts. */
static int write_checked_json(struct fetch *f, const char *self, yajl_val cfg, const char *digest,
			      const char *manifest, struct nsrun_error *err)
{
	const char *path[] = { "config", "Entrypoint", NULL }, *path2[] = { "config", "Cmd", NULL };
	yajl_val ep = yajl_tree_get(cfg, path, yajl_t_array), cmd = yajl_tree_get(cfg, path2, yajl_t_array);
	yajl_val first = ep && ep->u.array.len ? ep->u.array.values[0] : cmd && cmd->u.array.len ? cmd->u.array.values[0] : NULL;
	const char *fs = YAJL_IS_STRING(first) ? YAJL_GET_STRING(first) : "";
	const char *base = strrchr(fs, '/') ? strrchr(fs, '/') + 1 : fs;
	struct strv none = { 0 };

	if (f->o->interp.n)
		return fetch_write_image_json(f->o, f->tmp, cfg, &f->o->interp, digest, manifest, err) < 0 ||
				       check_image(f, self, false, err) < 0
			       ? -1
			       : 0;
	if (fetch_write_image_json(f->o, f->tmp, cfg, &none, digest, manifest, err) < 0 ||
	    check_image(f, self, false, err) < 0)
		return -1;
	for (int pass = 0; pass < 2; pass++)
		for (const char *const *c = guess_interpreters; *c; c++) {
			struct strv one = { .v = (char *[]){ (char *)*c, NULL }, .n = 1 };
			if (pass == 0 && strncmp(base, *c, strlen(*c)) != 0)
				continue;
			if (fetch_write_image_json(f->o, f->tmp, cfg, &one, digest, manifest, err) < 0)
				return -1;
			if (check_image(f, self, true, err) == 0)
				return 0;
		}
	error_warn(stderr, "no interpreter (python3 node ruby sh) on the image's PATH: FILE mode needs "
		   "--interpreter; -- CMD works");
	return fetch_write_image_json(f->o, f->tmp, cfg, &none, digest, manifest, err);
}

/* For docker://REPO:TAG, docker://REPO (no tag, no digest) into out. */
static void docker_repo(const char *ref, char *out, size_t len)
{
	const char *body = ref + strlen("docker://");
	size_t n = strcspn(body, "@");
	const char *last = body, *colon;

	for (const char *s = body; s < body + n; s++)
		if (*s == '/')
			last = s + 1;
	colon = memchr(last, ':', (size_t)(body + n - last));
	if (colon)
		n = (size_t)(colon - body);
	snprintf(out, len, "docker://%.*s", (int)n, body);
}

/* The pull, from the temporary directory made to the image landed. */
static int pull(struct fetch *f, const char *store, const char *self, struct nsrun_error *err)
{
	_cleanup_free_ char *regconf = fetch_registries_conf();
	char timeout[32], tls[32], digest[80], mdigest[80], src[IMAGE_REF_MAX + 128], path[PATH_MAX], layout[PATH_MAX],
	     manifest[PATH_MAX];
	char rootfs[PATH_MAX], dest[PATH_MAX];
	const char *rc_opt = regconf ? "--registries-conf" : NULL, *rc_val = regconf ? "/run/registries.conf" : NULL;
	yajl_val cfg;
	uint64_t start = monotonic_us();
	int rc;

	if (work_init(f, err) < 0)
		return -1;
	snprintf(timeout, sizeof(timeout), "%llus", (unsigned long long)f->o->net_timeout_s);
	/* the digest of the registry's top-level manifest (an image or an index
	 * of platforms), then a copy of exactly that manifest */
	fetch_info(f, "resolving %s", f->o->ref);
	snprintf(tls, sizeof(tls), "--tls-verify=%s", f->o->tls ? f->o->tls : "true");
	{
		const char *argv[12], **a = argv;
		*a++ = "skopeo";
		if (rc_opt)
			*a++ = rc_opt, *a++ = rc_val;
		*a++ = "--command-timeout", *a++ = timeout, *a++ = "inspect", *a++ = "--raw";
		if (f->o->tls)
			*a++ = tls;
		*a++ = f->o->ref, *a = NULL;
		if ((rc = run_step(f, true, "manifest", argv, err)) < 0)
			return -1;
	}
	snprintf(src, sizeof(src), "cannot read the manifest of %s (skopeo inspect failed)", f->o->ref);
	if (rc != 0)
		return step_failed(f, src, rc, err);
	snprintf(path, sizeof(path), "%s/manifest", f->tmp);
	if (fetch_file_digest(path, digest) < 0)
		return error_set(err, errno, "pull \"%s\": read the manifest", f->o->name);
	fetch_event(f, "digest", digest);
	if (strchr(f->o->ref, '@')) {
		snprintf(src, sizeof(src), "%s", f->o->ref);
	} else {
		char repo[IMAGE_REF_MAX + 32];
		docker_repo(f->o->ref, repo, sizeof(repo));
		snprintf(src, sizeof(src), "%s@%s", repo, digest);
	}

	fetch_info(f, "fetching %s", src);
	snprintf(layout, sizeof(layout), "%s/oci", f->work);
	snprintf(path, sizeof(path), "%s/copy.out", f->tmp);
	snprintf(tls, sizeof(tls), "--src-tls-verify=%s", f->o->tls ? f->o->tls : "true");
	if (f->progress_fd >= 0) {
		/* with progress, skopeo's own lines (not --quiet) say which layer it fetches */
		f->p_out = path;
		f->p_layout = layout;
		snprintf(manifest, sizeof(manifest), "%s/manifest", f->tmp);
		f->p_manifest = manifest;
	}
	{
		const char *argv[12], **a = argv;
		*a++ = "skopeo";
		if (rc_opt)
			*a++ = rc_opt, *a++ = rc_val;
		*a++ = "copy";
		if (!f->p_out)
			*a++ = "--quiet";
		if (f->o->tls)
			*a++ = tls;
		*a++ = "--", *a++ = src, *a++ = "oci:/build/oci:" OCI_TAG, *a = NULL;
		rc = run_step(f, true, f->p_out ? "copy.out" : NULL, argv, err);
	}
	if (rc >= 0 && f->p_out)
		fetch_progress_blobs(f);
	f->p_out = NULL;
	f->p_manifest = NULL;
	unlink(path);
	if (rc < 0)
		return -1;
	if (rc != 0) {
		char msg[IMAGE_REF_MAX + 160];
		snprintf(msg, sizeof(msg), "skopeo copy %s failed", src);
		return step_failed(f, msg, rc, err);
	}

	fetch_info(f, "unpacking the layers with umoci");
	fetch_event(f, "unpack", NULL);
	rc = run_step(f, false, NULL,
		      (const char *const[]){ "umoci", "--log=error", "raw", "unpack", "--rootless", "--image",
					     "/build/oci:" OCI_TAG, "/build/rootfs", NULL },
		      err);
	if (rc < 0)
		return -1;
	if (rc != 0)
		return step_failed(f, "umoci could not unpack the image", rc, err);
	fetch_event(f, "unpacked", NULL);

	if (!(cfg = fetch_read_config(f, mdigest, sizeof(mdigest), err)))
		return -1;
	snprintf(rootfs, sizeof(rootfs), "%s/rootfs", f->work);
	fetch_info(f, "finishing %s", rootfs);
	if (work_close(f, err) < 0 || (rc = fetch_finish_tree(f, rootfs, err)) < 0) {
		yajl_tree_free(cfg);
		return -1;
	}
	if (rc > 0) {
		yajl_tree_free(cfg);
		return error_set(err, 0, "pull \"%s\": %s", f->o->name, f->reason);
	}
	snprintf(path, sizeof(path), "%s/rootfs", f->tmp);
	if (rename(rootfs, path) < 0 || fetch_remove_tree(f->work) < 0) {
		yajl_tree_free(cfg);
		return error_set(err, errno, "pull \"%s\": cannot move the rootfs into place", f->o->name);
	}
	snprintf(path, sizeof(path), "%s/manifest", f->tmp);
	unlink(path);
	snprintf(path, sizeof(path), "%s/tool.log", f->tmp);
	unlink(path);
	rc = write_checked_json(f, self, cfg, digest, mdigest, err);
	yajl_tree_free(cfg);
	if (rc < 0)
		return -1;
	if (chmod(f->tmp, 0755) < 0)
		return error_set(err, errno, "pull \"%s\": chmod %s", f->o->name, f->tmp);
	if (fetch_land(f, store, err) < 0)
		return -1;
	snprintf(dest, sizeof(dest), "%s/%s", store, f->o->name);
	fetch_info(f, "pulled image \"%s\" from %s (%s) in %s, %llu s", f->o->name, f->o->ref, digest, dest,
	     (unsigned long long)((monotonic_us() - start) / 1000000));
	return 0;
}

/* ---- nsrun pull [OPTIONS] SOURCE NAME ---- */

#define DEFAULT_MAX_SIZE (8ULL << 30)
#define DEFAULT_MAX_FILES 500000
#define DEFAULT_TIMEOUT 1800
#define DEFAULT_NET_TIMEOUT 60

static const char fetch_usage[] =
	"nsrun pull [--tls-verify=false] [--interpreter CMD[,ARG...]] [--env KEY=VALUE]... [--max-size SIZE] "
	"[--max-files N] [--timeout SECONDS] [--network-timeout SECONDS] [--store DIR] [--force] [--quiet] "
	"docker://REF NAME";

static int __attribute__((format(printf, 1, 2))) usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("nsrun: pull: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nnsrun: hint: %s\n", fetch_usage);
	return 2;
}

static bool has_cntrl(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
			return true;
	return false;
}

/* "512m", "8G", "1048576" in bytes (IEC, as numfmt --from=iec); 0 for invalid. */
static uint64_t size_bytes(const char *s)
{
	static const char units[] = "kmgt";
	char *end;
	unsigned long long v;
	const char *u;

	if (!*s || strspn(s, "0123456789") == 0)
		return 0;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || (*end && (end[1] || !(u = strchr(units, end[0] | 0x20)))))
		return 0;
	for (int i = *end ? (int)(u - units) + 1 : 0; i > 0; i--) {
		if (v > UINT64_MAX / 1024)
			return 0;
		v *= 1024;
	}
	return v;
}

static bool positive(const char *s, uint64_t *out)
{
	size_t n = strspn(s, "0123456789");

	if (!*s || s[n] || n > 10 || s[0] == '0')
		return false;
	*out = strtoull(s, NULL, 10);
	return true;
}

static bool valid_name(const char *name)
{
	struct image_ref ref;
	size_t n = strlen(name);

	if (strchr(name, '+'))
		return n <= IMAGE_STORE_NAME_MAX && image_store_name_ref(name, &ref) == 0;
	return n > 0 && n <= 128 && name[0] != '.' && name[0] != '_' && name[0] != '-' &&
	       strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

/* Parses argv into o.  Returns 0, or the usage error's exit status. */
static int parse(int argc, char **argv, struct fetch_opts *o)
{
	enum { O_STORE = 256, O_TLS, O_INTERP, O_ENV, O_MAX_SIZE, O_MAX_FILES, O_TIMEOUT, O_NET_TIMEOUT, O_FORCE };
	static const struct option opts[] = { { "store", required_argument, NULL, O_STORE },
					      { "tls-verify", required_argument, NULL, O_TLS },
					      { "interpreter", required_argument, NULL, O_INTERP },
					      { "env", required_argument, NULL, O_ENV },
					      { "max-size", required_argument, NULL, O_MAX_SIZE },
					      { "max-files", required_argument, NULL, O_MAX_FILES },
					      { "timeout", required_argument, NULL, O_TIMEOUT },
					      { "network-timeout", required_argument, NULL, O_NET_TIMEOUT },
					      { "force", no_argument, NULL, O_FORCE },
					      { "quiet", no_argument, NULL, 'q' },
					      { NULL, 0, NULL, 0 } };
	int c;

	o->max_bytes = DEFAULT_MAX_SIZE;
	o->max_files = DEFAULT_MAX_FILES;
	o->timeout_s = DEFAULT_TIMEOUT;
	o->net_timeout_s = DEFAULT_NET_TIMEOUT;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":q", opts, NULL)) != -1) {
		const char *a = optarg;
		switch (c) {
		case O_STORE:
			o->store = a;
			break;
		case O_TLS:
			if (strcmp(a, "true") != 0 && strcmp(a, "false") != 0)
				return usage("invalid --tls-verify \"%s\": must be true or false%s", a, "");
			o->tls = a;
			break;
		case O_INTERP: {
			_cleanup_free_ char *copy = strdup(a);
			if (!copy || has_cntrl(a) || !*a)
				return usage("invalid interpreter \"%s\"%s", a, ": must not be empty nor hold control characters");
			strv_free(&o->interp);
			for (char *p = copy, *comma;; p = comma + 1) {
				if ((comma = strchr(p, ',')))
					*comma = '\0';
				if (!*p)
					return usage("invalid interpreter \"%s\": empty element%s", a, "");
				if (strv_push(&o->interp, p) < 0)
					return 1;
				if (!comma)
					break;
			}
			break;
		}
		case O_ENV: {
			size_t k = strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_0123456789");
			if (has_cntrl(a) || k == 0 || a[k] != '=' || (a[0] >= '0' && a[0] <= '9'))
				return usage("invalid environment entry \"%s\": must be KEY=VALUE%s", a, "");
			if (strv_push(&o->env_add, a) < 0)
				return 1;
			break;
		}
		case O_MAX_SIZE:
			if (!(o->max_bytes = size_bytes(a)))
				return usage("invalid --max-size \"%s\": expected a size such as 512m or 8g%s", a, "");
			break;
		case O_MAX_FILES:
		case O_TIMEOUT:
		case O_NET_TIMEOUT:
			if (!positive(a, c == O_MAX_FILES ? &o->max_files : c == O_TIMEOUT ? &o->timeout_s : &o->net_timeout_s))
				return usage("invalid %s \"%s\": expected a positive whole number", argv[optind - 1], a);
			break;
		case O_FORCE:
			o->force = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case ':':
			return usage("option %s: requires an argument%s", argv[optind - 1], "");
		default:
			return usage("unknown option \"%s\"%s", argv[optind - 1], "");
		}
	}
	if (argc - optind < 1)
		return usage("missing REF and NAME%s%s", "", "");
	if (argc - optind < 2)
		return usage("missing image NAME after \"%s\"%s", argv[optind], "");
	if (argc - optind > 2)
		return usage("unexpected argument \"%s\": expected REF NAME%s", argv[optind + 2], "");
	o->ref = argv[optind];
	o->name = argv[optind + 1];
	if (!valid_name(o->name) || has_cntrl(o->name))
		return usage("invalid image name \"%s\"%s", o->name,
			     ": must match ^[A-Za-z0-9][A-Za-z0-9._-]*$ (at most 128 characters) or be a reference's store name");
	if (has_cntrl(o->ref) || strncmp(o->ref, "docker://", 9) != 0 || !o->ref[9])
		return usage("unsupported reference \"%s\": expected docker://[HOST[:PORT]/]REPO[:TAG|@DIGEST]%s", o->ref,
			     " (local sources: nsrun-image import)");
	return 0;
}

/* Cleans up after a failed or stopped pull: the tool killed, every partial
 * thing removed. */
static void cleanup(struct fetch *f)
{
	/* first every process of the sandbox gone: a tool still writing (umoci
	 * killed mid-unpack) would refill the directories being removed */
	fetch_kill_sandbox(f);
	if (f->work_fd >= 0)
		close(f->work_fd);
	f->work_fd = -1;
	fetch_unreach_work(f);
	if (f->tmp && fetch_remove_tree(f->tmp) < 0)
		fprintf(stderr, "nsrun: cannot remove %s (permission denied?)\n", f->tmp);
}

int image_fetch_main(int argc, char **argv)
{
	struct fetch_opts o = { 0 };
	struct fetch f = { .o = &o, .work_fd = -1, .progress_fd = -1 };
	struct nsrun_error err = { 0 };
	struct sigaction sa = { .sa_handler = on_signal };
	_cleanup_free_ char *store = NULL, *self = NULL;
	_cleanup_close_ int lock = -1, tmp_lock = -1;
	char buf[PATH_MAX], msg[1024];
	struct stat st;
	ssize_t n;
	int rc = parse(argc, argv, &o);

	if (rc)
		goto out;
	rc = 1;
	/* the events on stdout, which nothing else of a pull writes to (it is moved to stderr) */
	if (getenv("NSRUN_IMAGE_PROGRESS") && strcmp(getenv("NSRUN_IMAGE_PROGRESS"), "1") == 0) {
		f.progress_fd = fcntl(1, F_DUPFD_CLOEXEC, 3);
		dup2(2, 1);
	}
	unsetenv("NSRUN_IMAGE_PROGRESS");
	/* a subreaper: what a killed sandbox leaves (bwrap's pid 1 and the tool in
	 * its pid namespace, once bwrap itself is gone) comes back to us, so
	 * fetch_kill_sandbox can end it before the tree is removed (where a
	 * seccomp filter refuses it, only bwrap is killed, as before) */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	sigemptyset(&sa.sa_mask);
	for (int s = 0; s < 4; s++)
		sigaction((int[]){ SIGHUP, SIGINT, SIGTERM, SIGPIPE }[s], &sa, NULL);
	f.deadline_us = monotonic_us() + o.timeout_s * 1000000;
	if ((n = readlink("/proc/self/exe", buf, sizeof(buf) - 1)) < 0 || !(self = strndup(buf, (size_t)n))) {
		error_set(&err, errno, "pull: readlink /proc/self/exe");
		goto fail;
	}
	if (o.store && setenv("NSRUN_IMAGES", o.store, 1) < 0) {
		error_set(&err, errno, "pull");
		goto fail;
	}
	if (!(store = image_store_dir(&err)))
		goto fail;
	snprintf(buf, sizeof(buf), "%s/%s", store, o.name);
	if (!o.force && lstat(buf, &st) == 0) {
		error_set(&err, 0, "image \"%s\" already exists in %s (use --force to replace it)", o.name, store);
		goto fail;
	}
	/* the store, made as mkdir -p makes it (0755) */
	for (char *s = store + 1;; s++) {
		if (*s == '/' || !*s) {
			char c = *s;
			*s = '\0';
			if (mkdir(store, 0755) < 0 && errno != EEXIST) {
				error_set(&err, errno, "pull \"%s\": cannot create the store %s", o.name, store);
				goto fail;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	if (!realpath(store, buf)) {
		error_set(&err, errno, "pull \"%s\": cannot enter the store %s", o.name, store);
		goto fail;
	}
	free(store);
	if (!(store = strdup(buf)) || (lock = fetch_lock_name(&f, store, &err)) < 0)
		goto fail;
	snprintf(buf, sizeof(buf), "%s/%s", store, o.name);
	if (!o.force && lstat(buf, &st) == 0) {
		error_set(&err, 0, "image \"%s\" already exists in %s (use --force to replace it)", o.name, store);
		goto fail;
	}
	fetch_remove_stale(&f, store);
	/* 0700 (mkdtemp's mode) until finished: nobody else reaches the tree
	 * while the image's own modes and files are live in it */
	if (asprintf(&f.tmp, "%s/.%s.tmp.XXXXXX", store, o.name) < 0 || !mkdtemp(f.tmp)) {
		free(f.tmp);
		f.tmp = NULL;
		error_set(&err, errno, "pull \"%s\": cannot create a temporary directory in %s", o.name, store);
		goto fail;
	}
	/* a pull in progress: its temporary directory is locked (remove_stale) */
	if ((tmp_lock = open(f.tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 || flock(tmp_lock, LOCK_EX | LOCK_NB) < 0) {
		error_set(&err, errno, "pull \"%s\": cannot lock %s", o.name, f.tmp);
		goto fail;
	}
	if (asprintf(&f.work, "%s/work", f.tmp) < 0) {
		error_set(&err, ENOMEM, "pull");
		goto fail;
	}
	if (pull(&f, store, self, &err) == 0) {
		rc = 0;
		goto out;
	}
fail:
	cleanup(&f);
	if (stop_signal) {
		rc = 128 + stop_signal;
	} else {
		error_format(&err, msg, sizeof(msg));
		fprintf(stderr, "nsrun: %s\n", msg);
		if (err.hint)
			fprintf(stderr, "nsrun: hint: %s\n", err.hint);
	}
out:
	if (f.progress_fd >= 0)
		close(f.progress_fd);
	free(f.tmp);
	free(f.work);
	free(f.p_blobs);
	free(f.p_state);
	free(f.p_total);
	free(f.p_current);
	strv_free(&o.interp);
	strv_free(&o.env_add);
	return rc;
}
