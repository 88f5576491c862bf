/* pool.c - see pool.h */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "cleanup.h"
#include "cli.h"
#include "config.h"
#include "image.h"
#include "image_user.h"
#include "landlock.h"
#include "pool.h"
#include "tier.h"
#include "pool_internal.h"
#include "result.h"
#include "seccomp.h"
#include "service.h"
#include "state.h"
#include "sys.h"
#include "ucounts.h"

/* The zygote's source, put into .rodata as seccomp_builtin.c does its profiles. */
__asm__(".section .rodata\n"
	".global nsrun_pool_zygote\n.type nsrun_pool_zygote, @object\n.balign 16\nnsrun_pool_zygote:\n"
	".incbin \"runtime/pool_zygote.py\"\nnsrun_pool_zygote_end:\n"
	".global nsrun_pool_zygote_size\n.balign 8\nnsrun_pool_zygote_size:\n"
	".dc.a nsrun_pool_zygote_end - nsrun_pool_zygote\n"
	".previous\n");
extern const char nsrun_pool_zygote[];
extern const uintptr_t nsrun_pool_zygote_size;

static const char pool_usage[] =
	"Usage: nsrun pool [-d [--name NAME]] [--size N] [--preload MODULE,...] [--socket PATH] [--queue N] [OPTIONS]\n"
	"                  --image NAME\n"
	"\n"
	"A warm pool: one container whose zygote (the image's python3, MODULEs imported)\n"
	"forks a fresh sandbox per request: its own user, mount, pid, net, ipc and uts\n"
	"namespaces, fresh /tmp, /dev/shm and /proc, no capability, the seccomp filter of a\n"
	"run, uid 65534.  Prints the socket's path once ready; ends on SIGTERM, SIGINT,\n"
	"SIGHUP or the end of a pipe on its stdin (docs/pool.md).\n"
	"\n"
	"  --size N                  requests run at once, and slots kept ready (default 2)\n"
	"  --preload MODULE,...      modules the zygote imports once\n"
	"  --socket PATH             the unix socket (mode 0600; default: in a new private directory)\n"
	"  --queue N                 requests that may wait for a slot; more are refused (default 64)\n"
	"  -d, --detach              a named service: return once ready, printing its name; nsrun ps,\n"
	"                            logs, stop and rm know it, nsrun run --pool NAME finds its socket\n"
	"  --name NAME               the service's name (-d; default: made up)\n"
	"  OPTIONS                   run options (nsrun --help): --timeout and --output-limit are a\n"
	"                            request's defaults and maxima; --memory, --pids-limit,\n"
	"                            --cpu-time and --tmpfs-size apply to each request; -e, -w,\n"
	"                            --hostname as a run\n"
	"\n"
	"Memory: --memory is each request's, not the pool's: --size requests at once may take\n"
	"--size x --memory together (default 512m each), and the pool's container is sized\n"
	"to hold that, not less: nsrun warns when it is more than the host's MemAvailable\n"
	"(proc(5)), and starts all the same.\n"
	"\n"
	"A request: 4-byte big-endian length, then {\"code\": ..., \"stdin\": ..., \"args\": [...],\n"
	"\"env\": [\"K=V\"], \"timeout\": SECONDS, \"output_limit\": BYTES, \"memory\": BYTES, \"pids_limit\": N}\n"
	"(each limit at most the pool's); the reply: the same frame holding the --json\n"
	"document with \"pool\" timings.  From a shell: nsrun run --pool SOCKET|NAME (run --pool --help).\n";

/* ---- small helpers ------------------------------------------------------ */


static int write_at(const char *dir, const char *name, const void *buf, size_t len, mode_t mode,
		    struct nsrun_error *err)
{
	char path[256];
	_cleanup_close_ int fd = -1;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0 || fchmod(fd, mode) < 0 || write_all(fd, buf, len) < 0)
		return error_set(err, errno, "pool: write %s", path);
	return 0;
}


/* The zygote's settings (runtime/pool_zygote.py reads them). */
static int write_zygote_config(struct pool *p, const char *preload, struct nsrun_error *err)
{
	yajl_gen g = yajl_gen_alloc(NULL);
	const unsigned char *buf;
	size_t len;
	int rc;

	if (!g)
		return error_set(err, ENOMEM, "pool: zygote settings");
	yajl_gen_map_open(g);
	pool_gen_str(g, "size");
	yajl_gen_integer(g, p->size);
	pool_gen_str(g, "preload");
	yajl_gen_array_open(g);
	if (preload) {
		_cleanup_free_ char *copy = strdup(preload);
		char *save = NULL;
		for (char *m = copy ? strtok_r(copy, ",", &save) : NULL; m; m = strtok_r(NULL, ",", &save))
			pool_gen_str(g, m);
	}
	yajl_gen_array_close(g);
	pool_gen_str(g, "pids");
	yajl_gen_integer(g, (long long)p->cfg.limits.pids);
	pool_gen_str(g, "memory_bytes");
	yajl_gen_integer(g, (long long)p->cfg.limits.memory_bytes);
	pool_gen_str(g, "cpu_time_s");
	yajl_gen_integer(g, (long long)((p->cfg.limits.cpu_time_us + 999999) / 1000000));
	pool_gen_str(g, "tmpfs_bytes");
	yajl_gen_integer(g, (long long)p->cfg.limits.tmpfs_bytes);
	pool_gen_str(g, "hostname");
	pool_gen_str(g, p->cfg.hostname);
	pool_gen_str(g, "channel");
	pool_gen_str(g, POOL_CHANNEL);
	/* inotify instances and watches are counted up the chain of user namespaces:
	 * the container's limits (ucounts.h) bound every slot's together, so one
	 * request could take them all (a breaker's).  Each slot's own namespace gets
	 * a share, as many slots as the container may hold (2 x --size + 1). */
	pool_gen_str(g, "ucounts");
	yajl_gen_map_open(g);
	{
		struct ucounts_plan plan = { 0 };
		struct nsrun_error ignored = { 0 };
		static const char *const names[] = { "max_inotify_instances", "max_inotify_watches" };
		long slots = 2L * (long)p->size + 1;
		if (ucounts_plan(&plan, &ignored) == 0 && plan.settable)
			for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
				long v = ucounts_value(&plan, names[i]);
				if (v > 0) {
					pool_gen_str(g, names[i]);
					yajl_gen_integer(g, v / slots > 0 ? v / slots : 1);
				}
			}
	}
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	yajl_gen_get_buf(g, &buf, &len);
	rc = write_at(p->chan, "config.json", buf, len, 0644, err);
	yajl_gen_free(g);
	return rc;
}

/* The cold run's filter, compiled here as a run's parent does (seccomp.h), for the
 * zygote to load in each request after its capabilities are gone. */
static int write_seccomp(struct pool *p, struct nsrun_error *err)
{
	struct nsrun_seccomp *f = NULL;
	int rc;

	/* the cold run's, without System V IPC: a slot's IPC namespace keeps the
	 * kernel's own limits, which its unmapped root cannot lower (docs/pool.md) */
	if (seccomp_prepare(p->cfg.security.seccomp, seccomp_profiles_dir(),
			    (p->cfg.security.strict ? NSRUN_SECCOMP_STRICT : 0) | NSRUN_SECCOMP_POOL_REQUEST, NULL, NULL,
			    &f, err) < 0)
		return -1;
	if (!f)
		return write_at(p->chan, "seccomp.bpf", "", 0, 0644, err);
	rc = write_at(p->chan, "seccomp.bpf", seccomp_program(f)->filter,
		      (size_t)seccomp_program(f)->len * sizeof(struct sock_filter), 0644, err);
	seccomp_free(f);
	return rc;
}

static int listen_unix(const char *path, int type, mode_t mode, struct nsrun_error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = -1;

	if (strlen(path) >= sizeof(sa.sun_path))
		return error_set(err, ENAMETOOLONG, "pool: socket \"%s\"", path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return error_set(err, errno, "pool: socket \"%s\"", path);
	if (chmod(path, mode) < 0 || listen(fd, 64) < 0) {
		int e = errno;
		unlink(path);
		return error_set(err, e, "pool: socket \"%s\"", path);
	}
	return steal_fd(&fd);
}

/* ---- the zygote's container --------------------------------------------- */

int pool_zygote_spawn(struct pool *p, struct nsrun_error *err)
{
	sigset_t none;

	p->zlisten = listen_unix(p->zsock, SOCK_SEQPACKET, 0666, err);
	if (p->zlisten < 0)
		return -1;
	p->child = fork();
	if (p->child < 0)
		return error_set(err, errno, "pool: fork");
	if (p->child == 0) {
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* the container's stdout is our stderr: our stdout says only the socket */
		if (null < 0 || dup2(null, 0) < 0 || dup2(2, 1) < 0)
			_exit(125);
		execv("/proc/self/exe", p->child_argv.v);
		dprintf(2, "nsrun: pool: exec /proc/self/exe: %s\n", strerror(errno));
		_exit(125);
	}
	p->zready = false;
	return 0;
}


void pool_zygote_ended(struct pool *p, int status, struct nsrun_error *err)
{
	bool was_ready = p->zready;

	if (p->zfd >= 0)
		close(p->zfd);
	if (p->zlisten >= 0)
		close(p->zlisten);
	p->zfd = p->zlisten = -1;
	p->zq_n = 0;                    /* what waited was for the zygote that ended */
	unlink(p->zsock);
	p->child = 0;
	p->zready = false;
	while (p->n_slots) {
		struct pool_slot *s = &p->slots[p->n_slots - 1];
		struct pool_req *q = s->req;
		pool_slot_remove(p, s);
		if (q) {
			if (!q->exited)         /* an ended one was counted out when it ended */
				p->running--;
			pool_req_fail(p, q, 0, "pool: the zygote ended while the request ran", "it is restarted; send the "
				 "request again");
		}
	}
	if (p->stopping)
		return;
	p->start_fails = was_ready ? 0 : p->start_fails + 1;
	if (p->start_fails >= POOL_START_TRIES) {
		error_set(err, 0, "pool: the zygote's container ended before it was ready, %u times (status %d; its "
			  "error is above)", p->start_fails, status);
		p->stopping = true;
		return;
	}
	p->restarts++;
	if (p->announced)
		fprintf(stderr, "nsrun: pool: the zygote ended (status %d): restarting it\n", status);
	if (pool_zygote_spawn(p, err) < 0)
		p->stopping = true;
}

/* ---- set-up --------------------------------------------------------------- */

static bool take_opt(char **argv, int argc, int *i, const char *name, const char **val)
{
	size_t n = strlen(name);

	if (strncmp(argv[*i], name, n) != 0)
		return false;
	if (argv[*i][n] == '=') {
		*val = argv[*i] + n + 1;
		return true;
	}
	if (argv[*i][n] != '\0')
		return false;
	*val = *i + 1 < argc ? argv[++*i] : NULL;
	return true;
}

/* Splits our options from the run options; the latter go to cli_parse and to the
 * container's nsrun.  Returns 0, 1 for --help, or -1 with err. */
static int parse_args(struct pool *p, int argc, char **argv, const char **preload, struct strv *run_args,
		      struct nsrun_error *err)
{
	const char *v;
	uint64_t n;

	p->size = 2;
	p->queue_max = 64;
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			return 1;
		if (take_opt(argv, argc, &i, "--size", &v)) {
			if (!v || parse_uint("--size", v, POOL_MAX_SIZE, &n, err) < 0 || !n)
				return v && err->msg[0] ? -1 : error_set(err, 0, "--size: 1 to %d", POOL_MAX_SIZE);
			p->size = (unsigned)n;
		} else if (take_opt(argv, argc, &i, "--queue", &v)) {
			if (!v || parse_uint("--queue", v, 100000, &n, err) < 0)
				return v ? -1 : error_set(err, 0, "--queue: needs a value");
			p->queue_max = (unsigned)n;
		} else if (take_opt(argv, argc, &i, "--preload", &v)) {
			if (!v || !*v || strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.,") !=
						 strlen(v))
				return error_set(err, 0, "--preload: module names separated by commas");
			*preload = v;
		} else if (take_opt(argv, argc, &i, "--socket", &v)) {
			if (!v || !*v)
				return error_set(err, 0, "--socket: needs a path");
			free(p->socket_path);
			p->socket_path = strdup(v);
		} else if (strcmp(argv[i], "-d") == 0 || strcmp(argv[i], "--detach") == 0) {
			p->detach = true;
		} else if (take_opt(argv, argc, &i, "--name", &v)) {
			if (!v || !service_name_valid(v))
				return error_set(err, 0, "--name: \"%s\": use [a-zA-Z0-9][a-zA-Z0-9_.-]*, at most %d characters",
						 v ? v : "", NAME_MAX_LEN);
			p->name = v;
		} else if (strcmp(argv[i], "--") == 0) {
			return error_set(err, 0, "pool: no command: the zygote is the image's python3 (see nsrun pool "
					 "--help)");
		} else if (strv_push(run_args, argv[i]) < 0) {
			return error_set(err, ENOMEM, "arguments");
		}
	}
	if (p->name && !p->detach)
		return error_set(err, 0, "pool: --name: only with -d (a pool in the foreground is its caller's child)");
	if (p->detach && p->socket_path)
		return error_set(err, 0, "pool: -d: --socket: a named pool's socket is in its service directory (nsrun "
				 "run --pool NAME finds it)");
	return 0;
}

/* The host's MemAvailable (proc(5), /proc/meminfo) in bytes; 0 if unknown. */
static uint64_t mem_available(void)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/meminfo", "re");
	char line[128];
	unsigned long long kb;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			return kb < UINT64_MAX >> 10 ? (uint64_t)kb << 10 : UINT64_MAX;
	return 0;
}

/* The run options as a run takes them, and resolved as main.c's resolve() does
 * for what a request needs of them (environment, workdir). */
static int parse_run_options(struct pool *p, struct strv *run_args, struct nsrun_error *err)
{
	struct strv a = { 0 };
	int rc;

	if (strv_push(&a, "nsrun") < 0)
		return error_set(err, ENOMEM, "arguments");
	for (size_t i = 0; i < run_args->n; i++)
		if (strv_push(&a, run_args->v[i]) < 0)
			goto nomem;
	if (strv_push(&a, "--") < 0 || strv_push(&a, "python3") < 0)
		goto nomem;
	rc = cli_parse(&p->cfg, (int)a.n, a.v, err);
	strv_free(&a);
	if (rc != CLI_RUN)
		return rc < 0 ? -1 : error_set(err, 0, "pool: --help and --version go first (nsrun pool --help)");
	if (!p->cfg.image)
		return error_set(err, 0, "pool: no image: use --image NAME (installed images: nsrun images)");
	if (p->cfg.service.detach || p->cfg.output.json_path || p->cfg.tty || p->cfg.n_publish)
		return error_set(err, 0, "pool: -d, --json, -t and -p are a run's, not a pool's");
	/* what a request writes must not reach the next: a writable place of the
	 * container's own would be every request's (/tmp and /dev/shm are each one's) */
	if (p->cfg.n_tmpfs)
		return error_set(err, 0, "pool: --tmpfs: every request would share that tmpfs (each has its own /tmp "
				 "and /dev/shm)");
	for (size_t i = 0; i < p->cfg.n_mounts; i++)
		if (p->cfg.mounts[i].rw)
			return error_set(err, 0, "pool: -v %s:%s:rw: every request would share that volume (give it "
					 ":ro, or use a run)", p->cfg.mounts[i].source, p->cfg.mounts[i].destination);
	if (p->cfg.isolation != NSRUN_ISOLATION_AUTO && p->cfg.isolation != NSRUN_ISOLATION_FULL)
		return error_set(err, 0, "pool: a pool needs --isolation full (its slots are namespaces of their own)");
	/* where only a lower tier works, say so once, before anything is made (it
	 * retried its container and printed a dozen lines of the run's own, some of
	 * options the caller never gave: breaker, session 20) */
	struct nsrun_error why = { 0 };
	if (tier_probe(NSRUN_ISOLATION_FULL, &why) < 0) {
		char cause[sizeof(why.msg) + 64];
		error_format(&why, cause, sizeof(cause));
		error_set(err, 0, "pool: a pool needs the full isolation tier, which this place does not allow (%s)",
			  cause);
		err->hint = "its slots are namespaces of their own; `nsrun check` names the tier a run gets here: "
			    "use runs, or start the pool outside this sandbox";
		return -1;
	}
	if (config_env_defaults(&p->cfg, err) < 0 || image_resolve(&p->cfg, err) < 0 ||
	    image_user_apply(&p->cfg, err) < 0)
		return -1;
	for (size_t i = 0; i < p->cfg.process.user_env.n; i++)
		if (strv_setenv(&p->cfg.process.env, p->cfg.process.user_env.v[i]) < 0)
			return error_set(err, ENOMEM, "environment");
	if (!p->cfg.process.cwd && !(p->cfg.process.cwd = strdup("/")))
		return error_set(err, ENOMEM, "workdir");
	/* never silent: a cold run would have Landlock here, a request has not (yet) */
	if (p->cfg.security.landlock && landlock_abi() > 0) {
		if (p->cfg.security.strict)
			return error_set(err, 0, "pool: --strict: a request runs without Landlock (the file system "
					 "stays read-only by its mounts; docs/pool.md)");
		error_warn(stderr, "pool: a request runs without Landlock, which a run would have here "
			"(the file system stays read-only by its mounts; docs/pool.md)");
	}
	/* nothing caps the sum of the requests' memory: said, not silent */
	uint64_t avail = mem_available(), m = p->cfg.limits.memory_bytes;
	if (avail && m && (m > UINT64_MAX / p->size || m * p->size > avail))
		error_warn(stderr, "pool: --size %u x --memory %llu MiB is more than the host's "
			"MemAvailable (%llu MiB): requests at once may run it out of memory (docs/pool.md)",
			p->size, (unsigned long long)(m >> 20), (unsigned long long)(avail >> 20));
	return 0;
nomem:
	strv_free(&a);
	return error_set(err, ENOMEM, "arguments");
}

/* The container's command line: the run options, then what a pool needs. */
static int child_args(struct pool *p, struct strv *run_args, struct nsrun_error *err)
{
	char vol[192], pids[32], mem[32];
	uint64_t k = 2ULL * p->size + 1;
	/* --memory-sample-timeout 0: a slot whose sample stalls is its own measure's to
	 * end (pool_serve.c); the container's, a backstop over every slot, ended the
	 * zygote and every other request with it */
	const char *tail[] = { "--timeout", "0", "--isolation", "full", "--allow-nested", "--pids-limit", pids,
			       "--memory", mem, "--memory-sample-timeout", "0", "-v", vol, "--", "python3", "-I",
			       POOL_CHANNEL "/zygote.py", POOL_CHANNEL };

	/* the container holds the zygote and 2 x --size slots, each under its own limits */
	snprintf(pids, sizeof(pids), "%llu", p->cfg.limits.pids ? (unsigned long long)(p->cfg.limits.pids * k + 16) : 0ULL);
	/* memory likewise: each slot's limit and its two tmpfs (/tmp, /dev/shm), and the
	 * zygote's own, so that one request reaching its limit does not reach the
	 * container's (whose OOM kill would end the zygote and every other request) */
	uint64_t m = p->cfg.limits.memory_bytes, t = p->cfg.limits.tmpfs_bytes, total = 0;
	if (m && (m + 2 * t) < UINT64_MAX / 4 / k)
		total = k * (m + 2 * t) + (64ULL << 20);
	snprintf(mem, sizeof(mem), "%llu", (unsigned long long)total);
	snprintf(vol, sizeof(vol), "%s:%s:ro", p->chan, POOL_CHANNEL);
	if (strv_push(&p->child_argv, "nsrun") < 0)
		return error_set(err, ENOMEM, "arguments");
	for (size_t i = 0; i < run_args->n; i++)
		if (strv_push(&p->child_argv, run_args->v[i]) < 0)
			return error_set(err, ENOMEM, "arguments");
	for (size_t i = 0; i < sizeof(tail) / sizeof(tail[0]); i++)
		if (strv_push(&p->child_argv, tail[i]) < 0)
			return error_set(err, ENOMEM, "arguments");
	return 0;
}

static int pool_setup(struct pool *p, const char *preload, struct strv *run_args, struct nsrun_error *err)
{
	const char *tmp = getenv("TMPDIR");
	sigset_t mask;

	snprintf(p->dir, sizeof(p->dir), "%s/nsrun-pool-XXXXXX", tmp && *tmp && strlen(tmp) < 40 ? tmp : "/tmp");
	if (!mkdtemp(p->dir)) {
		p->dir[0] = '\0';
		return error_set(err, errno, "pool: make a private directory");
	}
	snprintf(p->chan, sizeof(p->chan), "%s/chan", p->dir);
	snprintf(p->zsock, sizeof(p->zsock), "%s/zygote.sock", p->chan);
	/* the payload reads it through the bind mount: "other" may search, not list */
	if (mkdir(p->chan, 0711) < 0 || chmod(p->chan, 0711) < 0)
		return error_set(err, errno, "pool: make %s", p->chan);
	if (child_args(p, run_args, err) < 0)
		return -1;
	/* each request's memory measured in its slot, as a cold run's without a cgroup */
	p->measure = memwatch_can_measure();
	/* whether the measuring threads can be made, known before any request runs
	 * (memwatch_init says why) */
	if (p->measure)
		(void)sys_clone3_usable(NULL, 0);
	p->slot_tmp = (struct mount_op){ .kind = MOP_TMPFS, .target = "/tmp", .source_index = -1 };
	p->slot_plan = (struct mount_plan){ .ops = &p->slot_tmp, .n = 1 };
	if (write_at(p->chan, "zygote.py", nsrun_pool_zygote, (size_t)nsrun_pool_zygote_size, 0644, err) < 0 ||
	    write_zygote_config(p, preload, err) < 0 || write_seccomp(p, err) < 0)
		return -1;
	if (!p->socket_path) {
		if (asprintf(&p->socket_path, "%s/pool.sock", p->dir) < 0) {
			p->socket_path = NULL;
			return error_set(err, ENOMEM, "pool: socket path");
		}
	}
	p->listen_fd = listen_unix(p->socket_path, SOCK_STREAM, 0600, err);
	if (p->listen_fd < 0)
		return -1;
	p->socket_ours = true;
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGPIPE);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0 || (p->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
		return error_set(err, errno, "pool: signalfd");
	{
		struct stat st;
		p->watch_stdin = fstat(0, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
	}
	return pool_zygote_spawn(p, err);
}

static void pool_teardown(struct pool *p)
{
	if (p->child > 0) {
		int status;
		kill(p->child, SIGTERM); /* its nsrun ends the container and takes all down */
		waitpid(p->child, &status, 0);
	}
	for (int i = 0; i < POOL_MAX_CLIENTS; i++)
		if (p->clients[i].fd >= 0)
			pool_client_close(p, i);
	while (p->qhead) {
		struct pool_req *q = p->qhead;
		p->qhead = q->next;
		q->client = -1;
		q->slot = NULL;
		result_free(&q->r);
		free(q->ctl);
		free(q->in);
		free(q);
	}
	while (p->n_slots) {
		struct pool_slot *s = &p->slots[p->n_slots - 1];
		struct pool_req *q = s->req;
		pool_slot_remove(p, s);
		if (q) {
			q->client = -1;
			q->slot = NULL;
			result_free(&q->r);
			free(q->ctl);
			free(q->in);
			free(q);
		}
	}
	free(p->slots);
	free(p->zq);
	{
		int *fds[] = { &p->zfd, &p->zlisten, &p->listen_fd, &p->sigfd };
		for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
			if (*fds[i] >= 0)
				close(*fds[i]);
	}
	if (p->socket_ours)
		unlink(p->socket_path);
	if (p->dir[0]) {
		const char *names[] = { "zygote.sock", "zygote.py", "config.json", "seccomp.bpf" };
		char path[256];
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			snprintf(path, sizeof(path), "%s/%s", p->chan, names[i]);
			unlink(path);
		}
		rmdir(p->chan);
		rmdir(p->dir);
	}
	free(p->socket_path);
	strv_free(&p->child_argv);
	config_free(&p->cfg);
}

/* -d: makes the service directory (state.h: lock, log, state.json, and the socket
 * there), forks the pool, and in the caller waits until it is ready.  Returns 0 in
 * the pool (which goes on, detached, its stdio on the log), or 1 in the caller with
 * *code its exit status (0, its name printed; 125, the log's tail and the error
 * printed, nothing left), or -1 with err before anything started. */
static int pool_detach(struct pool *p, int argc, char **argv, int *code, struct nsrun_error *err)
{
	_cleanup_close_ int root_fd = -1, dir_fd = -1, lock_fd = -1, log_fd = -1;
	char root[PATH_MAX], name[NAME_MAX_LEN + 1], c;
	int ready[2], status = 0, null;
	struct service_state st = { 0 };
	pid_t pid;
	ssize_t n;

	if (p->name) {
		snprintf(name, sizeof(name), "%s", p->name);
	} else {
		unsigned rnd = 0;
		if (getrandom(&rnd, sizeof(rnd), 0) < 0)
			rnd = (unsigned)getpid() ^ (unsigned)time(NULL);
		snprintf(name, sizeof(name), "pool-%08x", rnd);
	}
	if ((root_fd = state_open_root(root, sizeof(root), err)) < 0)
		return -1;
	service_clean_if_stale(root_fd, name);
	if ((dir_fd = state_create_dir(root_fd, name, &lock_fd, &log_fd, err)) < 0)
		return -1;
	if (asprintf(&p->socket_path, "%s/%s/%s", root, name, POOL_SOCKET_FILE) < 0) {
		p->socket_path = NULL;
		state_remove_dir(root_fd, name);
		return error_set(err, ENOMEM, "pool: socket path");
	}
	snprintf(st.name, sizeof(st.name), "%s", name);
	snprintf(st.status, sizeof(st.status), "running");
	if ((size_t)snprintf(st.log, sizeof(st.log), "%s/%s/%s", root, name, LOG_FILE) >= sizeof(st.log))
		st.log[0] = '\0';
	snprintf(st.image, sizeof(st.image), "%s", p->cfg.image);
	shell_quote_join((const char *const *)argv, (size_t)argc, st.command, sizeof(st.command));
	snprintf(st.network, sizeof(st.network), "none");
	st.created = (long long)time(NULL);
	if (pipe2(ready, O_CLOEXEC) < 0) {
		state_remove_dir(root_fd, name);
		return error_set(err, errno, "pool: pipe");
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		error_set(err, errno, "pool: fork");
		close(ready[0]);
		close(ready[1]);
		state_remove_dir(root_fd, name);
		return -1;
	}
	if (pid == 0) {
		close(ready[0]);
		setsid();
		null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (null < 0 || dup2(null, 0) < 0 || dup2(log_fd, 1) < 0 || dup2(log_fd, 2) < 0)
			_exit(125);
		close(null);
		st.pid = getpid();
		if (state_write(dir_fd, &st) < 0)
			_exit(125);
		p->ready_fd = ready[1];
		p->state_fd = steal_fd(&dir_fd);
		lock_fd = -1;                   /* held (O_CLOEXEC) as long as the pool lives */
		return 0;
	}
	close(ready[1]);
	close(lock_fd);
	lock_fd = -1;
	while ((n = read(ready[0], &c, 1)) < 0 && errno == EINTR)
		;
	close(ready[0]);
	if (n == 1) {
		printf("%s\n", name);
		*code = fflush(stdout) == 0 ? 0 : 125;
		return 1;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	state_print_log_tail(dir_fd, stderr, 20);
	state_remove_dir(root_fd, name);
	error_set(err, 0, "pool \"%s\" ended before it was ready (status %d)", name,
		  WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	error_print(err, stderr);
	*code = 125;
	return 1;
}

/* -d: the pool's end in its state (nsrun ps shows it exited until nsrun rm). */
static void pool_record_end(struct pool *p, int code)
{
	struct service_state st;

	if (p->state_fd < 0)
		return;
	if (state_read(p->state_fd, &st) == 0) {
		snprintf(st.status, sizeof(st.status), "exited");
		st.exit_code = code;
		state_write(p->state_fd, &st);
	}
	close(p->state_fd);
	p->state_fd = -1;
}

int pool_main(int argc, char **argv)
{
	struct pool p = { .zlisten = -1, .zfd = -1, .listen_fd = -1, .sigfd = -1, .state_fd = -1, .ready_fd = -1 };
	struct nsrun_error err = { 0 };
	struct strv run_args = { 0 };
	const char *preload = NULL;
	int rc;

	for (int i = 0; i < POOL_MAX_CLIENTS; i++)
		p.clients[i].fd = -1;
	if (config_init(&p.cfg, &err) < 0) {
		error_print(&err, stderr);
		return 125;
	}
	err.stage = STAGE_CONFIG;
	rc = parse_args(&p, argc, argv, &preload, &run_args, &err);
	if (rc == 1) {
		fputs(pool_usage, stdout);
		strv_free(&run_args);
		config_free(&p.cfg);
		return 0;
	}
	if (rc == 0 && parse_run_options(&p, &run_args, &err) == 0 && p.detach) {
		int code = 0;
		rc = pool_detach(&p, argc, argv, &code, &err);
		if (rc == 1) {          /* the caller: the pool runs on, or failed and is gone */
			strv_free(&run_args);
			free(p.socket_path);
			config_free(&p.cfg);
			return code;
		}
	} else if (rc == 0 && err.msg[0]) {
		rc = -1;
	}
	if (rc < 0 || pool_setup(&p, preload, &run_args, &err) < 0 || pool_loop(&p, &err) < 0) {
		strv_free(&run_args);
		error_print(&err, stderr);
		pool_teardown(&p);
		pool_record_end(&p, 125);
		return 125;
	}
	strv_free(&run_args);
	pool_teardown(&p);
	pool_record_end(&p, 0);
	return 0;
}
