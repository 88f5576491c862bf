/* image_pull.c - see image_pull.h */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "image_fetch.h"
#include "image_pull.h"
#include "image_store.h"
#include "sys.h"
#include "util.h"

extern char **environ;

/* layers followed by name; a bigger image's others still get their own lines */
#define PULL_LAYERS_MAX 1024

/* ---- the pull, a child of ours ---- */

/* The pull's environment (`nsrun pull ... docker://REF NAME`, image_fetch.h):
 * ours for what it reads (the store, skopeo's registries.conf and auth, a
 * reproducible date, PATH to find its tools), nothing else; the progress
 * request added. */
static int tool_env(struct strv *env)
{
	static const char *const keep[] = { "PATH=",
					    "HOME=",
					    "LANG=",
					    "TMPDIR=",
					    "XDG_DATA_HOME=",
					    "XDG_CONFIG_HOME=",
					    "XDG_RUNTIME_DIR=",
					    "NSRUN_IMAGES=",
					    "CONTAINERS_REGISTRIES_CONF=",
					    "REGISTRY_AUTH_FILE=",
					    "SOURCE_DATE_EPOCH=" };
	bool path = false;

	for (char **e = environ; e && *e; e++)
		for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
			if (strncmp(*e, keep[i], strlen(keep[i])) == 0) {
				path |= i == 0;
				if (strv_push(env, *e) < 0)
					return -1;
			}
	if ((!path && strv_push(env, "PATH=/usr/local/bin:/usr/bin:/bin") < 0) ||
	    strv_push(env, "NSRUN_IMAGE_PROGRESS=1") < 0)
		return -1;
	return 0;
}

/* ---- steps ---- */

static int push_step(struct image_pull *p, const char *status, const char *id)
{
	if (p->q_len == p->q_cap) {
		size_t cap = p->q_cap ? p->q_cap * 2 : 16;
		struct image_pull_step *q = realloc(p->q, cap * sizeof(*q));
		if (!q)
			return -1;
		p->q = q;
		p->q_cap = cap;
	}
	snprintf(p->q[p->q_len].status, sizeof(p->q[0].status), "%s", status);
	snprintf(p->q[p->q_len].id, sizeof(p->q[0].id), "%s", id ? id : "");
	p->q[p->q_len].detail = false;
	p->q_len++;
	return 0;
}

/* "Downloading" with the layer's bytes so far: current, of total. */
static int push_bytes(struct image_pull *p, const char *id, unsigned long long current, unsigned long long total)
{
	if (push_step(p, "Downloading", id) < 0)
		return -1;
	p->q[p->q_len - 1].detail = true;
	p->q[p->q_len - 1].current = current;
	p->q[p->q_len - 1].total = total;
	return 0;
}

/* "sha256:" and 64 lower-case hex digits */
static bool is_digest(const char *s)
{
	if (!s || strncmp(s, "sha256:", 7) != 0 || strlen(s) != 71)
		return false;
	for (s += 7; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

/* One event line of the pull (image_fetch.h's).  Lines
 * this nsrun does not know are skipped: a newer tool may say more. */
static int on_event(struct image_pull *p, char *line)
{
	char *arg = strchr(line, ' '), *more = NULL, id[13];

	if (arg)
		*arg++ = '\0';
	/* "bytes DIGEST CURRENT TOTAL" */
	if (arg && strcmp(line, "bytes") == 0 && (more = strchr(arg, ' ')))
		*more++ = '\0';
	if (arg && is_digest(arg))
		snprintf(id, sizeof(id), "%.12s", arg + 7);
	else if (arg)
		return 0;
	if (strcmp(line, "digest") == 0 && arg) {
		snprintf(p->digest, sizeof(p->digest), "%s", arg);
	} else if (strcmp(line, "blob") == 0 && arg) {
		if (!p->layers && !(p->layers = calloc(PULL_LAYERS_MAX, sizeof(*p->layers))))
			return -1;
		if (p->n_layers < PULL_LAYERS_MAX)
			memcpy(p->layers[p->n_layers++], id, sizeof(id));
		if (push_step(p, "Pulling fs layer", id) < 0 || push_step(p, "Downloading", id) < 0)
			return -1;
	} else if (strcmp(line, "bytes") == 0 && arg && more) {
		char *end;
		unsigned long long current = strtoull(more, &end, 10), total;
		if (*end != ' ')
			return 0;
		total = strtoull(end + 1, &end, 10);
		if (*end || (total && current > total))
			return 0;
		if (push_bytes(p, id, current, total) < 0)
			return -1;
	} else if (strcmp(line, "fetched") == 0 && arg) {
		if (push_step(p, "Download complete", id) < 0)
			return -1;
	} else if (!arg && (strcmp(line, "unpack") == 0 || strcmp(line, "unpacked") == 0)) {
		/* umoci unpacks the layers in one go: each is said for all */
		for (size_t i = 0; i < p->n_layers; i++)
			if (push_step(p, line[6] ? "Pull complete" : "Extracting", p->layers[i]) < 0)
				return -1;
	}
	return 0;
}

static int read_events(struct image_pull *p, struct nsrun_error *err)
{
	char buf[4096];
	ssize_t n = read(p->events_fd, buf, sizeof(buf));

	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : error_set(err, errno, "pull: read the progress of the pull");
	if (n == 0) {
		close(p->events_fd);
		p->events_fd = -1;
		return 0;
	}
	for (ssize_t i = 0; i < n; i++) {
		if (buf[i] != '\n') {
			if (p->line_len + 1 < sizeof(p->line))
				p->line[p->line_len++] = buf[i];
			else
				p->line_long = true;
			continue;
		}
		p->line[p->line_len] = '\0';
		if (!p->line_long && on_event(p, p->line) < 0)
			return error_set(err, ENOMEM, "pull");
		p->line_len = 0;
		p->line_long = false;
	}
	return 0;
}

/* The tool's stderr, its last bytes kept. */
static int read_out(struct image_pull *p, struct nsrun_error *err)
{
	size_t room = sizeof(p->tail) - 1 - p->tail_len;
	ssize_t n;

	if (room == 0) {
		memmove(p->tail, p->tail + sizeof(p->tail) / 2, p->tail_len - sizeof(p->tail) / 2);
		p->tail_len -= sizeof(p->tail) / 2;
		room = sizeof(p->tail) - 1 - p->tail_len;
	}
	n = read(p->out_fd, p->tail + p->tail_len, room);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : error_set(err, errno, "pull: read the output of the pull");
	if (n == 0) {
		close(p->out_fd);
		p->out_fd = -1;
	}
	p->tail_len += (size_t)n;
	p->tail[p->tail_len] = '\0';
	return 0;
}

/* The tool's last error line ("nsrun-image: ..." or "nsrun: ..."), without its
 * prefix; else its last line. */
static void last_error(struct image_pull *p)
{
	char tail[sizeof(p->tail)];
	const char *found = NULL, *last = tail;

	memcpy(tail, p->tail, p->tail_len + 1);
	for (char *line = tail, *nl; line && *line; line = nl) {
		if ((nl = strchr(line, '\n')))
			*nl++ = '\0';
		last = line;
		if (strstr(line, "hint:"))
			continue;
		if (strncmp(line, "nsrun-image: ", 13) == 0 && strstr(line, "failed"))
			found = line + 13;
		else if (strncmp(line, "nsrun: ", 7) == 0)
			found = line + 7;
	}
	snprintf(p->why, sizeof(p->why), "%.1000s", found ? found : last);
}

/* The tool has ended: its status, and on success the last two steps. */
static int pull_end(struct image_pull *p, struct nsrun_error *err)
{
	char shown[IMAGE_REF_MAX], status[IMAGE_REF_MAX + 48];
	int ws;

	p->finished = true;
	while (waitpid(p->pid, &ws, 0) < 0)
		if (errno != EINTR)
			return error_set(err, errno, "pull: wait for the pull");
	p->pid = 0;
	if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
		last_error(p);
		if (WIFEXITED(ws))
			return error_set(err, 0, "pull failed: the pull exited with status %d", WEXITSTATUS(ws));
		return error_set(err, 0, "pull failed: the pull was killed by signal %d", WTERMSIG(ws));
	}
	image_ref_familiar(&p->ref, shown, sizeof(shown));
	snprintf(status, sizeof(status), "Digest: %s", p->digest);
	if (p->digest[0] && push_step(p, status, NULL) < 0)
		return error_set(err, ENOMEM, "pull");
	snprintf(status, sizeof(status), "Status: Downloaded newer image for %s", shown);
	if (push_step(p, status, NULL) < 0)
		return error_set(err, ENOMEM, "pull");
	return 0;
}

int image_pull_start(struct image_pull *p, const char *self, const struct image_ref *ref, bool capture,
		     struct nsrun_error *err)
{
	char name[IMAGE_STORE_NAME_MAX + 1], norm[IMAGE_REF_MAX + 16], src[IMAGE_REF_MAX + 32];
	char status[IMAGE_REF_MAX + 48];
	const char *argv[] = { self, "pull", "--force", "--quiet", src, name, NULL };
	struct strv env = { 0 };
	int ev[2] = { -1, -1 }, out[2] = { -1, -1 }, rc;

	memset(p, 0, sizeof(*p));
	p->events_fd = p->out_fd = p->client_fd = -1;
	p->ref = *ref;
	/* --force: a pull replaces the older pull of the same reference, as docker's;
	 * --quiet: these steps are the tool's lines */
	if (image_ref_store_name(ref, name, sizeof(name), err) < 0)
		return -1;
	if (!image_ref_string(ref, norm, sizeof(norm)))
		return error_set(err, ENAMETOOLONG, "pull");
	snprintf(src, sizeof(src), "docker://%s", norm);
	snprintf(status, sizeof(status), "Pulling from %s", ref->path);
	if (push_step(p, status, ref->tag[0] ? ref->tag : ref->digest) < 0 || tool_env(&env) < 0) {
		strv_free(&env);
		image_pull_close(p);
		return error_set(err, ENOMEM, "pull");
	}
	if (pipe2(ev, O_CLOEXEC) < 0 || (capture && pipe2(out, O_CLOEXEC) < 0)) {
		rc = errno;
		strv_free(&env);
		for (int i = 0; i < 2; i++)
			if (ev[i] >= 0)
				close(ev[i]);
		image_pull_close(p);
		return error_set(err, rc, "pull: pipe");
	}
	/* nsrun api blocks its ending signals and ignores SIGPIPE: not the tool's (sys.h) */
	rc = spawn_child(&p->pid, self, false, (char *const *)argv, env.v, (int[3]){ -1, ev[1], out[1] }) < 0 ? errno : 0;
	strv_free(&env);
	close(ev[1]);
	if (out[1] >= 0)
		close(out[1]);
	p->events_fd = ev[0];
	p->out_fd = out[0];
	if (rc != 0) {
		p->pid = 0;
		error_set(err, rc, "pull %s: run %s", norm, self);
		image_pull_close(p);
		return -1;
	}
	return 0;
}

int image_pull_next(struct image_pull *p, struct image_pull_step *step, struct nsrun_error *err)
{
	for (;;) {
		if (p->q_head < p->q_len) {
			*step = p->q[p->q_head++];
			if (p->q_head == p->q_len)
				p->q_head = p->q_len = 0;
			return 1;
		}
		if (p->finished)
			return 0;
		if (p->events_fd < 0 && p->out_fd < 0) {
			if (pull_end(p, err) < 0)
				return -1;
			continue;
		}
		struct pollfd pfd[3] = { { .fd = p->events_fd, .events = POLLIN },
					 { .fd = p->out_fd, .events = POLLIN },
					 { .fd = p->client_fd, .events = 0 } }; /* POLLHUP: both ways shut */
		if (poll(pfd, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			return error_set(err, errno, "pull: poll");
		}
		if (pfd[2].revents & (POLLHUP | POLLERR | POLLNVAL))
			return error_set(err, ECONNRESET, "pull: the client went away");
		if (pfd[0].revents && read_events(p, err) < 0)
			return -1;
		if (pfd[1].revents && read_out(p, err) < 0)
			return -1;
	}
}

void image_pull_close(struct image_pull *p)
{
	if (p->pid > 0) {
		kill(p->pid, SIGTERM);
		while (waitpid(p->pid, NULL, 0) < 0 && errno == EINTR)
			;
		p->pid = 0;
	}
	if (p->events_fd >= 0)
		close(p->events_fd);
	if (p->out_fd >= 0)
		close(p->out_fd);
	p->events_fd = p->out_fd = -1;
	free(p->q);
	free(p->layers);
	p->q = NULL;
	p->layers = NULL;
	p->q_head = p->q_len = p->q_cap = p->n_layers = 0;
}

/* ---- nsrun pull ---- */

static void usage_error(struct nsrun_error *err, const char *hint)
{
	err->hint = hint;
	error_print(err, stderr);
}

int image_pull_main(int argc, char **argv)
{
	static const struct option opts[] = { { "quiet", no_argument, NULL, 'q' }, { "help", no_argument, NULL, 'h' },
					       { NULL, 0, NULL, 0 } };
	struct nsrun_error err = { 0 };
	struct image_pull pull;
	struct image_pull_step step;
	struct image_ref ref;
	char self[PATH_MAX], norm[IMAGE_REF_MAX + 16];
	bool quiet = false;
	ssize_t n;
	int c, rc;

	/* the pull itself: nsrun-image pull's options, SOURCE and NAME (image_fetch.h) */
	for (int i = 1, pos = 0; i < argc; i++)
		if ((argv[i][0] != '-' && ++pos == 2) ||
		    (strncmp(argv[i], "--", 2) == 0 && argv[i][2] && strcmp(argv[i], "--quiet") != 0 &&
		     strcmp(argv[i], "--help") != 0))
			return image_fetch_main(argc, argv);
	optind = 1;
	while ((c = getopt_long(argc, argv, "+qh", opts, NULL)) != -1) {
		if (c == 'h') {
			printf("Usage: nsrun pull [-q] REFERENCE\n"
			       "Pulls an image from a registry into the store (docs/images.md):\n"
			       "REFERENCE as docker writes it (redis:7, library/postgres:16, 127.0.0.1:5000/team/tool@sha256:...).\n"
			       "Registry mirrors and insecure registries: containers-registries.conf(5).\n"
			       "  -q, --quiet   no progress\n"
			       "\n"
			       "Usage: nsrun pull [OPTIONS] docker://REF NAME\n"
			       "The same pull into the store entry NAME, with nsrun-image pull's options\n"
			       "(--tls-verify, --interpreter, --env, --max-size, --max-files, --timeout,\n"
			       "--network-timeout, --store, --force, --quiet; docs/images.md).\n");
			return 0;
		}
		if (c == 'q') {
			quiet = true;
			continue;
		}
		error_set(&err, 0, "pull: %s: unknown option", argv[optind - 1]);
		usage_error(&err, "nsrun pull [-q] REFERENCE");
		return 125;
	}
	if (optind != argc - 1) {
		error_set(&err, 0, optind >= argc ? "pull: no image reference" : "pull: more than one image reference");
		usage_error(&err, "nsrun pull [-q] REFERENCE, e.g. nsrun pull redis:7");
		return 125;
	}
	if (image_ref_parse(argv[optind], &ref, &err) < 0) {
		error_print(&err, stderr);
		return 125;
	}
	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) < 0) {
		error_set(&err, errno, "readlink /proc/self/exe");
		error_print(&err, stderr);
		return 125;
	}
	self[n] = '\0';
	fflush(stdout);
	if (image_pull_start(&pull, self, &ref, false, &err) < 0) {
		error_print(&err, stderr);
		return 125;
	}
	/* a line per step on stderr, as docker pull's (ID: STATUS); a layer's bytes
	 * so far only on a terminal, where they are watched */
	bool tty = isatty(STDERR_FILENO);
	while ((rc = image_pull_next(&pull, &step, &err)) > 0) {
		if (quiet || (step.detail && !tty))
			continue;
		if (step.detail)
			fprintf(stderr, "%s: %s %llu/%llu bytes\n", step.id, step.status, step.current, step.total);
		else
			fprintf(stderr, "%s%s%s\n", step.id, step.id[0] ? ": " : "", step.status);
	}
	image_pull_close(&pull);
	if (rc < 0) {
		error_print(&err, stderr);
		return 125;
	}
	/* docker pull's last line: the reference pulled */
	printf("%s\n", image_ref_string(&ref, norm, sizeof(norm)) ? norm : argv[optind]);
	return 0;
}
