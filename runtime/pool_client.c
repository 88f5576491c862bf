/* pool_client.c - `nsrun run --pool SOCKET|NAME ...`: one request to a running
 * pool (pool.h, docs/pool.md), its output and exit status passed through as a
 * cold run's. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <nettle/base64.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "cleanup.h"
#include "error.h"
#include "pool.h"
#include "pool_internal.h"
#include "state.h"
#include "sys.h"
#include "util.h"

#define POOL_MAX_ANSWER (UINT32_MAX - 1)

static const char client_usage[] =
	"Usage: nsrun run --pool SOCKET|NAME [OPTIONS] (FILE | - | -- python3 -c CODE) [ARG...]\n"
	"\n"
	"Runs Python source as one request of a running pool (nsrun pool; NAME: a pool\n"
	"started with nsrun pool -d --name NAME), its output and exit status as a run's.\n"
	"FILE: the host file's source; -: the source on standard input.\n"
	"\n"
	"  --timeout SECONDS         the request's wall-clock limit, at most (and by default) the pool's\n"
	"  --memory BYTES            memory of each of its processes (RLIMIT_DATA), at most the pool's\n"
	"  --pids-limit N            its processes (RLIMIT_NPROC in its user namespace), at most the pool's\n"
	"  --output-limit BYTES      bytes kept of each of stdout and stderr, at most the pool's\n"
	"  -e, --env KEY[=VALUE]     an environment variable (KEY alone: take nsrun's value)\n"
	"  --stdin FILE              the request's standard input (default: empty)\n"
	"  -i, --interactive         the request's standard input is nsrun's, read to its end first\n"
	"  --json FILE               write the result document to FILE (- for stdout), with \"pool\" timings\n"
	"  --capture                 print the request's output at its end (default: as it is written)\n"
	"\n"
	"Any other run option is the pool's (nsrun pool --help): it is refused here by name.\n";

enum { C_POOL = 256, C_TIMEOUT, C_MEMORY, C_PIDS, C_OUTPUT_LIMIT, C_STDIN, C_JSON, C_CAPTURE };

static const struct option client_opts[] = {
	{ "pool", required_argument, NULL, C_POOL },
	{ "timeout", required_argument, NULL, C_TIMEOUT },
	{ "memory", required_argument, NULL, C_MEMORY },
	{ "pids-limit", required_argument, NULL, C_PIDS },
	{ "output-limit", required_argument, NULL, C_OUTPUT_LIMIT },
	{ "env", required_argument, NULL, 'e' },
	{ "stdin", required_argument, NULL, C_STDIN },
	{ "interactive", no_argument, NULL, 'i' },
	{ "json", required_argument, NULL, C_JSON },
	{ "capture", no_argument, NULL, C_CAPTURE },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct pool_request {
	const char *pool;
	const char *json_path;
	const char *stdin_path;
	bool timeout_set, memory_set, pids_set, output_limit_set, interactive, capture;
	uint64_t timeout_us, memory, pids, output_limit;
	struct strv env;
	struct strv args;
	char *code;
	size_t code_len;
	char *in;
	size_t in_len;
};

/* The text of a string node found by yajl_tree_get(..., yajl_t_string), "" for none. */
static const char *str(yajl_val v)
{
	return v && YAJL_IS_STRING(v) && v->u.string ? v->u.string : "";
}

/* fd to its end into *buf (NUL-terminated), below POOL_MAX_FRAME bytes as a
 * frame must be.  Returns 0 or -1 (errno). */
static int read_to_end(int fd, char **buf, size_t *len)
{
	return read_fd(fd, POOL_MAX_FRAME - 1, buf, len);
}

static int read_path(const char *path, char **buf, size_t *len, const char *what, struct nsrun_error *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || read_to_end(fd, buf, len) < 0)
		return error_set(err, errno, "%s \"%s\"", what, path);
	return 0;
}

static int add_env(struct pool_request *rq, const char *arg, struct nsrun_error *err)
{
	_cleanup_free_ char *kv = NULL;
	const char *val = NULL;

	if (!strchr(arg, '=')) {
		val = getenv(arg);
		if (asprintf(&kv, "%s=%s", arg, val ? val : "") < 0)
			return error_set(err, ENOMEM, "--env");
	} else if (!(kv = strdup(arg))) {
		return error_set(err, ENOMEM, "--env");
	}
	if (!is_env_assignment(kv))
		return error_set(err, 0, "--env: \"%s\": expected KEY=VALUE with KEY a name", arg);
	if (!strchr(arg, '=') && !val)
		return 0; /* as docker: an unset variable is not passed */
	return strv_push(&rq->env, kv) < 0 ? error_set(err, ENOMEM, "--env") : 0;
}

/* The options, then FILE | - | -- python3 -c CODE, and the request's argv. */
static int parse(struct pool_request *rq, int argc, char **argv, struct nsrun_error *err)
{
	int c;
	bool dashdash;

	opterr = 0;
	optind = 2;
	while ((c = getopt_long(argc, argv, "+:e:hi", client_opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			return 1;
		case C_POOL:
			if (strcmp(optarg, "--help") == 0 || strcmp(optarg, "-h") == 0)
				return 1;       /* nsrun run --pool --help */
			rq->pool = optarg;
			break;
		case C_TIMEOUT:
			rq->timeout_set = true;
			if (parse_duration_us("--timeout", optarg, &rq->timeout_us, err) < 0)
				return -1;
			break;
		case C_MEMORY:
			rq->memory_set = true;
			if (parse_size_bytes("--memory", optarg, &rq->memory, err) < 0)
				return -1;
			break;
		case C_PIDS:
			rq->pids_set = true;
			if (parse_uint("--pids-limit", optarg, 4194304, &rq->pids, err) < 0)
				return -1;
			break;
		case C_OUTPUT_LIMIT:
			rq->output_limit_set = true;
			if (parse_size_bytes("--output-limit", optarg, &rq->output_limit, err) < 0)
				return -1;
			if (rq->output_limit > NSRUN_MAX_OUTPUT_LIMIT)
				return error_set(err, 0, "--output-limit: at most 1g");
			break;
		case 'e':
			if (add_env(rq, optarg, err) < 0)
				return -1;
			break;
		case C_STDIN:
			rq->stdin_path = optarg;
			break;
		case 'i':
			rq->interactive = true;
			break;
		case C_JSON:
			rq->json_path = optarg;
			break;
		case C_CAPTURE:
			rq->capture = true;
			break;
		case ':':
			return error_set(err, 0, "%s: needs a value", argv[optind - 1]);
		default: {
			/* a run option the pool holds for all its requests, or none at all */
			const char *name = argv[optind - 1];
			char shown[64];
			if (optopt && optopt != '?')
				snprintf(shown, sizeof(shown), "-%c", optopt);
			else
				snprintf(shown, sizeof(shown), "%.*s", (int)strcspn(name, "="), name);
			error_set(err, 0, "run --pool: %s: not an option of a request (--timeout, --memory, --pids-limit, "
				  "--output-limit, -e, --stdin, -i, --json)", shown);
			err->hint = "a pool's other settings are its own: give them to nsrun pool when it starts";
			return -1;
		}
		}
	}
	if (!rq->pool || !*rq->pool)
		return error_set(err, 0, "run --pool: needs a socket path or a pool's name");
	dashdash = optind > 2 && strcmp(argv[optind - 1], "--") == 0;
	if (optind >= argc)
		return error_set(err, 0, "run --pool: no program: give FILE, - or -- python3 -c CODE");
	if (dashdash) {
		const char *cmd = argv[optind], *base = strrchr(cmd, '/');
		base = base ? base + 1 : cmd;
		if (strncmp(base, "python", 6) != 0 || optind + 1 >= argc ||
		    (strcmp(argv[optind + 1], "-c") != 0 && strcmp(argv[optind + 1], "-") != 0) ||
		    (strcmp(argv[optind + 1], "-c") == 0 && optind + 2 >= argc)) {
			error_set(err, 0, "run --pool: -- %s: a pool runs Python source in its zygote's python3, "
				  "not a command", cmd);
			err->hint = "give -- python3 -c CODE [ARG...], FILE or - (the source on standard input)";
			return -1;
		}
		optind++;
		if (strcmp(argv[optind], "-c") == 0) {
			if (!(rq->code = strdup(argv[optind + 1])))
				return error_set(err, ENOMEM, "arguments");
			rq->code_len = strlen(rq->code);
			optind += 2;
		}
	}
	if (!rq->code) {
		if (strcmp(argv[optind], "-") == 0) {
			if (read_to_end(0, &rq->code, &rq->code_len) < 0)
				return error_set(err, errno, "run --pool: read the program from standard input");
			if (rq->interactive && !rq->stdin_path)
				return error_set(err, 0, "run --pool: -i with -: standard input is the program (give --stdin FILE)");
		} else if (read_path(argv[optind], &rq->code, &rq->code_len, "run --pool: read", err) < 0) {
			return -1;
		}
		optind++;
	}
	if (memchr(rq->code, '\0', rq->code_len))
		return error_set(err, 0, "run --pool: the program holds a NUL byte");
	for (; optind < argc; optind++)
		if (strv_push(&rq->args, argv[optind]) < 0)
			return error_set(err, ENOMEM, "arguments");
	return 0;
}

/* The request's stdin: --stdin FILE, or with -i nsrun's read to its end (the
 * request is one frame), else none, as docker run without -i: a harness's open
 * pipe on nsrun's stdin never holds a request back. */
static int read_stdin(struct pool_request *rq, struct nsrun_error *err)
{
	if (rq->stdin_path)
		return read_path(rq->stdin_path, &rq->in, &rq->in_len, "--stdin", err);
	if (!rq->interactive)
		return 0;
	if (read_to_end(0, &rq->in, &rq->in_len) < 0)
		return error_set(err, errno, "run --pool: read standard input");
	return 0;
}

/* The socket of a pool: a path (with a '/'), or NAME's of nsrun pool -d. */
static int socket_of(const char *pool, char *path, size_t len, struct nsrun_error *err)
{
	char root[PATH_MAX];
	_cleanup_close_ int fd = -1, dir = -1;

	if (strchr(pool, '/')) {
		snprintf(path, len, "%s", pool);
		return 0;
	}
	if (!service_name_valid(pool))
		return error_set(err, 0, "run --pool: \"%s\": neither a socket path (give ./%s) nor a pool's name", pool,
				 pool);
	if ((fd = state_open_root(root, sizeof(root), err)) < 0)
		return -1;
	dir = openat(fd, pool, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0 || faccessat(dir, POOL_SOCKET_FILE, F_OK, AT_SYMLINK_NOFOLLOW) < 0) {
		error_set(err, errno, "run --pool: no pool named \"%s\"", pool);
		err->hint = "nsrun ps lists the services; start one with nsrun pool -d --name NAME --image IMAGE";
		return -1;
	}
	if ((size_t)snprintf(path, len, "%s/%s/%s", root, pool, POOL_SOCKET_FILE) >= len)
		return error_set(err, ENAMETOOLONG, "run --pool: the socket of \"%s\"", pool);
	return 0;
}

static int gen_request(const struct pool_request *rq, char **out, size_t *out_len)
{
	yajl_gen g = yajl_gen_alloc(NULL);
	const unsigned char *buf;
	size_t len;

	if (!g)
		return -1;
	yajl_gen_map_open(g);
	pool_gen_str(g, "code");
	yajl_gen_string(g, (const unsigned char *)rq->code, rq->code_len);
	if (rq->in) {
		pool_gen_str(g, "stdin");
		yajl_gen_string(g, (const unsigned char *)rq->in, rq->in_len);
	}
	pool_gen_str(g, "args");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < rq->args.n; i++)
		pool_gen_str(g, rq->args.v[i]);
	yajl_gen_array_close(g);
	pool_gen_str(g, "env");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < rq->env.n; i++)
		pool_gen_str(g, rq->env.v[i]);
	yajl_gen_array_close(g);
	if (rq->timeout_set) {
		pool_gen_str(g, "timeout");
		yajl_gen_double(g, (double)rq->timeout_us / 1e6);
	}
	if (rq->output_limit_set) {
		pool_gen_str(g, "output_limit");
		yajl_gen_integer(g, (long long)rq->output_limit);
	}
	if (rq->memory_set) {
		pool_gen_str(g, "memory");
		yajl_gen_integer(g, (long long)rq->memory);
	}
	if (rq->pids_set) {
		pool_gen_str(g, "pids_limit");
		yajl_gen_integer(g, (long long)rq->pids);
	}
	if (!rq->capture && !rq->json_path) {
		pool_gen_str(g, "stream");
		yajl_gen_bool(g, 1);
	}
	yajl_gen_map_close(g);
	if (yajl_gen_get_buf(g, &buf, &len) != yajl_gen_status_ok || !(*out = malloc(len + 1))) {
		yajl_gen_free(g);
		return -1;
	}
	memcpy(*out, buf, len);
	*out_len = len;
	yajl_gen_free(g);
	return 0;
}

/* Reads exactly len bytes from fd into buf, watching sigfd: the first SIGINT or
 * SIGTERM shuts our side of the connection (the pool then kills the request's
 * sandbox and answers) and is kept in *sig; a second one returns at once.
 * Returns 1, 0 at the end of the connection before len, -1 with errno. */
static int read_frame_part(int fd, int sigfd, void *buf, size_t len, int *sig)
{
	size_t have = 0;

	while (have < len) {
		struct pollfd pf[2] = { { .fd = fd, .events = POLLIN }, { .fd = sigfd, .events = POLLIN } };
		ssize_t r;
		if (poll(pf, sigfd >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (sigfd >= 0 && (pf[1].revents & POLLIN)) {
			struct signalfd_siginfo si;
			if (read(sigfd, &si, sizeof(si)) == sizeof(si)) {
				if (*sig)
					return errno = EINTR, -1;
				*sig = (int)si.ssi_signo;
				shutdown(fd, SHUT_WR);
			}
		}
		if (!(pf[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		r = read(fd, (char *)buf + have, len - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -1 : 0;
		have += (size_t)r;
	}
	return 1;
}

/* Sends the frame and reads the answer's (NUL-terminated); a streaming request's
 * output frames before it go to fds 1 and 2 as they come, their bytes counted in
 * kept[2].  *sig: the signal that cancelled the request (0: none).  Returns 0 or
 * -1 with err. */
static int exchange(const char *path, const char *doc, size_t len, char **answer, size_t *answer_len,
		    uint64_t kept[2], int *sig, struct nsrun_error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = -1, sigfd = -1;
	unsigned char hdr[4] = { (unsigned char)(len >> 24), (unsigned char)(len >> 16), (unsigned char)(len >> 8),
				 (unsigned char)len };
	uint32_t n;
	char *buf;
	sigset_t mask;
	int r;

	if (len > POOL_MAX_FRAME)
		return error_set(err, EFBIG, "run --pool: the request (program and stdin): more than %u MiB",
				 POOL_MAX_FRAME >> 20);
	if (strlen(path) >= sizeof(sa.sun_path))
		return error_set(err, ENAMETOOLONG, "run --pool: connect to \"%s\"", path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		error_set(err, errno, "run --pool: connect to \"%s\"", path);
		err->hint = "is the pool running? start one with nsrun pool --image IMAGE --socket PATH (or -d --name NAME)";
		return -1;
	}
	if (write_all(fd, hdr, 4) < 0 || write_all(fd, doc, len) < 0)
		return error_set(err, errno, "run --pool: send the request to \"%s\"", path);
	/* from here SIGINT and SIGTERM end the request, not us: as a cold run's */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) == 0)
		sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	for (;;) {
		if ((r = read_frame_part(fd, sigfd, hdr, 4, sig)) <= 0) {
			if (r < 0 && errno == EINTR)
				return error_set(err, 0, "run --pool: a second signal: not waiting for the pool's answer");
			error_set(err, r < 0 ? errno : 0, "run --pool: the pool at \"%s\" closed the connection "
				  "without an answer", path);
			err->hint = "the pool ended, or is stopping: its stderr (or nsrun logs NAME) says why";
			return -1;
		}
		n = (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 | (uint32_t)hdr[2] << 8 | hdr[3];
		if (n > POOL_MAX_ANSWER || !(buf = malloc((size_t)n + 1)))
			return error_set(err, ENOMEM, "run --pool: an answer of %u bytes", n);
		if ((r = read_frame_part(fd, sigfd, buf, n, sig)) <= 0) {
			free(buf);
			if (r < 0 && errno == EINTR)
				return error_set(err, 0, "run --pool: a second signal: not waiting for the pool's answer");
			return error_set(err, r < 0 ? errno : 0, "run --pool: the answer from \"%s\" ended early", path);
		}
		if (n > 0 && (buf[0] == POOL_FRAME_STDOUT || buf[0] == POOL_FRAME_STDERR)) {
			int k = buf[0] == POOL_FRAME_STDOUT ? 0 : 1;
			/* a reader of ours that went away loses the rest, as a cold run's payload would */
			write_all(k + 1, buf + 1, n - 1);
			kept[k] += n - 1;
			free(buf);
			continue;
		}
		buf[n] = '\0';
		*answer = buf;
		*answer_len = n;
		return 0;
	}
}

/* One captured stream of the answer to fd: its _base64 when not UTF-8, else the text. */
static int put_stream(yajl_val doc, const char *name, int fd)
{
	char key[32];
	const char *path[] = { key, NULL };
	yajl_val v;

	snprintf(key, sizeof(key), "%s_base64", name);
	if ((v = yajl_tree_get(doc, path, yajl_t_string))) {
		const char *b64 = str(v);
		size_t in_len = strlen(b64), out_len = BASE64_DECODE_LENGTH(in_len);
		_cleanup_free_ uint8_t *out = malloc(out_len + 1);
		struct base64_decode_ctx ctx;
		base64_decode_init(&ctx);
		if (!out || !base64_decode_update(&ctx, &out_len, out, in_len, b64) || !base64_decode_final(&ctx))
			return -1;
		return write_all(fd, out, out_len);
	}
	snprintf(key, sizeof(key), "%s", name);
	if ((v = yajl_tree_get(doc, path, yajl_t_string)))
		return write_all(fd, str(v), strlen(str(v)));
	return 0;
}

/* The answer as a run prints its result: output, truncation notes, the error line
 * and its hint.  Returns the exit status (docker run's). */
static int print_answer(const char *answer, const char *json_path, const uint64_t streamed[2],
			struct nsrun_error *err)
{
	char ebuf[256];
	const char *code_path[] = { "exit_code", NULL }, *err_path[] = { "error", NULL },
		   *hint_path[] = { "pool", "hint", NULL }, *status_path[] = { "status", NULL };
	_cleanup_yajl_ yajl_val doc =
		json_scan_depth(answer, strlen(answer), JSON_MAX_DEPTH) < strlen(answer) ? NULL :
		yajl_tree_parse(answer, ebuf, sizeof(ebuf));
	yajl_val code, e, hint, status;

	if (!doc || !(code = yajl_tree_get(doc, code_path, yajl_t_number)))
		return error_set(err, 0, "run --pool: the pool's answer is not a result document"), -1;
	if (!json_path) {
		if (put_stream(doc, "stdout", 1) < 0 || put_stream(doc, "stderr", 2) < 0)
			return error_set(err, errno, "run --pool: write the request's output"), -1;
		for (int i = 0; i < 2; i++) {
			const char *s = i ? "stderr" : "stdout";
			char k1[32], k2[32];
			const char *p1[] = { k1, NULL }, *p2[] = { k2, NULL }, *p3[] = { s, NULL };
			yajl_val tr, total, kept;
			snprintf(k1, sizeof(k1), "%s_truncated", s);
			snprintf(k2, sizeof(k2), "%s_bytes", s);
			tr = yajl_tree_get(doc, p1, yajl_t_true);
			total = yajl_tree_get(doc, p2, yajl_t_number);
			kept = yajl_tree_get(doc, p3, yajl_t_string);
			if (tr && total)
				fprintf(stderr, "nsrun: %s truncated: %lld bytes written, %llu kept (--output-limit)\n", s,
					YAJL_GET_INTEGER(total),
					(unsigned long long)(strlen(str(kept)) + streamed[i]));
		}
	}
	if ((e = yajl_tree_get(doc, err_path, yajl_t_string))) {
		fprintf(stderr, "nsrun: %s\n", str(e));
		status = yajl_tree_get(doc, status_path, yajl_t_string);
		hint = yajl_tree_get(doc, hint_path, yajl_t_string);
		if (hint && status && strcmp(str(status), "error") == 0)
			fprintf(stderr, "nsrun: hint: %s\n", str(hint));
	}
	return (int)(YAJL_GET_INTEGER(code) & 0xff);
}

static int write_json(const char *path, const char *answer, size_t len, struct nsrun_error *err)
{
	_cleanup_close_ int fd = -1;

	if (strcmp(path, "-") == 0)
		return write_all(1, answer, len) < 0 || write_all(1, "\n", 1) < 0 ?
			       error_set(err, errno, "--json: write to stdout") : 0;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0 || write_all(fd, answer, len) < 0 || write_all(fd, "\n", 1) < 0)
		return error_set(err, errno, "--json: write \"%s\"", path);
	return 0;
}

bool pool_client_wanted(int argc, char **argv)
{
	if (argc < 3 || strcmp(argv[1], "run") != 0)
		return false;
	for (int i = 2; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--pool") == 0 || strncmp(argv[i], "--pool=", 7) == 0)
			return true;
	return false;
}

int pool_client_main(int argc, char **argv)
{
	struct pool_request rq = { 0 };
	struct nsrun_error err = { .stage = STAGE_CONFIG };
	char path[PATH_MAX + 2 * NAME_MAX_LEN];
	_cleanup_free_ char *doc = NULL, *answer = NULL;
	size_t doc_len = 0, answer_len = 0;
	uint64_t streamed[2] = { 0, 0 };
	int rc = parse(&rq, argc, argv, &err), code = 125, sig = 0;

	if (rc == 1) {
		fputs(client_usage, stdout);
		code = 0;
		goto out;
	}
	if (rc < 0 || socket_of(rq.pool, path, sizeof(path), &err) < 0 || read_stdin(&rq, &err) < 0)
		goto fail;
	if (gen_request(&rq, &doc, &doc_len) < 0) {
		error_set(&err, ENOMEM, "run --pool: the request");
		goto fail;
	}
	if (exchange(path, doc, doc_len, &answer, &answer_len, streamed, &sig, &err) < 0)
		goto fail;
	if (rq.json_path && write_json(rq.json_path, answer, answer_len, &err) < 0)
		goto fail;
	/* cancelled by a signal: the request's sandbox is gone; exit as a cold run then does */
	code = sig ? 128 + sig : print_answer(answer, rq.json_path, streamed, &err);
	if (code < 0)
		goto fail;
	goto out;
fail:
	error_print(&err, stderr);
	code = sig ? 128 + sig : 125;
out:
	strv_free(&rq.env);
	strv_free(&rq.args);
	free(rq.code);
	free(rq.in);
	return code;
}
