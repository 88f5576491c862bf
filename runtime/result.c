/* result.c - see result.h */
#include <errno.h>
#include <stdlib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <yajl/yajl_gen.h>

#include "config.h"
#include "result.h"
#include "tier.h"
#include "util.h"

#ifndef NSRUN_VERSION
#define NSRUN_VERSION "0.0.0-dev"
#endif

const char *result_status_name(enum nsrun_status status)
{
	switch (status) {
	case NSRUN_STATUS_EXITED: return "exited";
	case NSRUN_STATUS_SIGNALED: return "signaled";
	case NSRUN_STATUS_TIMED_OUT: return "timed_out";
	case NSRUN_STATUS_EXEC_FAILED: return "exec_failed";
	case NSRUN_STATUS_OUTPUT_LIMIT: return "output_limit";
	case NSRUN_STATUS_OOM_KILLED: return "oom_killed";
	case NSRUN_STATUS_ERROR: return "error";
	}
	return "unknown";
}

int result_exit_code(const struct nsrun_result *r)
{
	switch (r->status) {
	case NSRUN_STATUS_EXITED:
		return r->exit_code & 0xff;
	case NSRUN_STATUS_SIGNALED:
		return (128 + r->signal) & 0xff;
	case NSRUN_STATUS_TIMED_OUT:
		return 124;
	case NSRUN_STATUS_EXEC_FAILED:
		return r->error.errnum == ENOENT ? 127 : 126;
	case NSRUN_STATUS_OUTPUT_LIMIT:
	case NSRUN_STATUS_OOM_KILLED:
		return 128 + 9; /* the container was SIGKILLed for it */
	case NSRUN_STATUS_ERROR:
		return 125;
	}
	return 125;
}

const char *result_signal_name(int sig, char *buf, size_t len)
{
	const char *abbrev = sig < SIGRTMIN ? sigabbrev_np(sig) : NULL;

	if (abbrev)
		snprintf(buf, len, "SIG%s", abbrev);
	else if (sig == SIGRTMIN)
		snprintf(buf, len, "SIGRTMIN");
	else if (sig > SIGRTMIN && sig <= (SIGRTMIN + SIGRTMAX) / 2)
		snprintf(buf, len, "SIGRTMIN+%d", sig - SIGRTMIN);
	else if (sig > SIGRTMIN && sig < SIGRTMAX)
		snprintf(buf, len, "SIGRTMAX-%d", SIGRTMAX - sig);
	else if (sig == SIGRTMAX)
		snprintf(buf, len, "SIGRTMAX");
	else
		snprintf(buf, len, "SIG%d", sig);
	return buf;
}

size_t result_message(const struct nsrun_result *r, char *buf, size_t len)
{
	char secs[32], name[32], limit[32], peak[32];

	buf[0] = '\0';
	switch (r->status) {
	case NSRUN_STATUS_TIMED_OUT:
		format_seconds(r->timeout_us, secs, sizeof(secs));
		snprintf(buf, len, "timed out after %s", secs);
		break;
	case NSRUN_STATUS_OUTPUT_LIMIT:
		snprintf(buf, len, "killed: the output passed --output-limit");
		break;
	case NSRUN_STATUS_OOM_KILLED:
		format_bytes(r->memory_limit_bytes, limit, sizeof(limit));
		format_bytes(r->memory_peak_bytes, peak, sizeof(peak));
		snprintf(buf, len, "killed: out of memory (limit %s%s%s)", limit, r->memory_peak_bytes ? ", peak " : "",
			 r->memory_peak_bytes ? peak : "");
		break;
	case NSRUN_STATUS_EXEC_FAILED:
	case NSRUN_STATUS_ERROR:
		error_format(&r->error, buf, len);
		break;
	case NSRUN_STATUS_SIGNALED:
		if (r->stopped_after) {
			format_seconds(r->stop_timeout_us, secs, sizeof(secs));
			snprintf(buf, len, "killed: still running %s after %s (--stop-timeout)", secs,
				 result_signal_name(r->stopped_after, name, sizeof(name)));
		}
		break;
	case NSRUN_STATUS_EXITED:
		break;
	}
	return strlen(buf);
}

void result_report(const struct nsrun_result *r, FILE *out)
{
	char line[512];

	if (r->status == NSRUN_STATUS_ERROR || r->status == NSRUN_STATUS_EXEC_FAILED)
		error_print(&r->error, out);
	else if (result_message(r, line, sizeof(line)))
		fprintf(out, "nsrun: %s\n", line);
}

/* The length of the valid UTF-8 sequence at s (at most n bytes), or 0 when the
 * bytes there are not one (RFC 3629: no overlongs, surrogates or > U+10FFFF). */
static size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

/* A copy of s with every byte that is not part of valid UTF-8 replaced by U+FFFD.
 * *valid tells whether there was none. Returns NULL on ENOMEM. */
static char *utf8_sanitize(const char *s, size_t len, size_t *out_len, bool *valid)
{
	const unsigned char *u = (const unsigned char *)s;
	char *out = malloc(len * 3 + 1);
	size_t o = 0;

	*valid = true;
	if (!out)
		return NULL;
	for (size_t i = 0; i < len;) {
		size_t n = utf8_seq_len(u + i, len - i);
		if (n == 0) {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
			*valid = false;
		} else {
			memcpy(out + o, s + i, n);
			o += n;
			i += n;
		}
	}
	out[o] = '\0';
	*out_len = o;
	return out;
}

static char *base64(const char *s, size_t len)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *u = (const unsigned char *)s;
	char *out = malloc((len + 2) / 3 * 4 + 1);
	size_t o = 0;

	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)u[i] << 16 | (i + 1 < len ? (uint32_t)u[i + 1] << 8 : 0) |
			     (i + 2 < len ? u[i + 2] : 0);
		out[o++] = tab[(v >> 18) & 63];
		out[o++] = tab[(v >> 12) & 63];
		out[o++] = i + 1 < len ? tab[(v >> 6) & 63] : '=';
		out[o++] = i + 2 < len ? tab[v & 63] : '=';
	}
	out[o] = '\0';
	return out;
}

_Static_assert(sizeof(((struct nsrun_result *)0)->ports) / sizeof(struct result_port) == NSRUN_MAX_PUBLISH,
	       "a result holds every -p");

#define GEN_STR(g, s) yajl_gen_string(g, (const unsigned char *)(s), strlen(s))

struct json_out {
	FILE *f;
	bool failed;
};

static int gen_stream(yajl_gen g, const char *name, const struct result_stream *st)
{
	char key[32];
	size_t clean_len = 0;
	bool valid = true;
	char *clean = NULL;

	GEN_STR(g, name);
	if (!st->captured) {
		yajl_gen_null(g);
	} else {
		clean = utf8_sanitize(st->data ? st->data : "", st->len, &clean_len, &valid);
		if (!clean)
			return -1;
		yajl_gen_string(g, (const unsigned char *)clean, clean_len);
		free(clean);
	}
	snprintf(key, sizeof(key), "%s_truncated", name);
	GEN_STR(g, key);
	yajl_gen_bool(g, st->truncated);
	snprintf(key, sizeof(key), "%s_bytes", name);
	GEN_STR(g, key);
	yajl_gen_integer(g, (long long)st->total_bytes);
	if (st->captured && !valid) {
		char *b64 = base64(st->data, st->len);
		if (!b64)
			return -1;
		snprintf(key, sizeof(key), "%s_base64", name);
		GEN_STR(g, key);
		GEN_STR(g, b64);
		free(b64);
	}
	return 0;
}

/* A limit: its value (null when not set) and how it is enforced ("none" then). */
static void gen_limit(yajl_gen g, const char *name, bool set, uint64_t value, const char *how)
{
	GEN_STR(g, name);
	yajl_gen_map_open(g);
	GEN_STR(g, "value");
	if (set)
		yajl_gen_integer(g, (long long)value);
	else
		yajl_gen_null(g);
	GEN_STR(g, "enforced");
	GEN_STR(g, set ? how : "none");
	yajl_gen_map_close(g);
}

/* The run's network as Docker's inspect names it (HostConfig.NetworkMode): none,
 * pasta, the name of an nsrun network (--network NAME), container:NAME (a
 * service's), or path (an OCI config's namespace path). */
static void gen_network(yajl_gen g, const struct nsrun_config *cfg)
{
	char buf[128]; /* "container:" and a service name (at most 64, service_name_valid) */

	switch (cfg->network) {
	case NSRUN_NETWORK_PASTA:
		GEN_STR(g, "pasta");
		return;
	case NSRUN_NETWORK_NAMED:
		GEN_STR(g, cfg->network_name ? cfg->network_name : "");
		return;
	case NSRUN_NETWORK_CONTAINER:
		snprintf(buf, sizeof(buf), "container:%s", cfg->network_name ? cfg->network_name : "");
		GEN_STR(g, buf);
		return;
	case NSRUN_NETWORK_PATH:
		GEN_STR(g, "path");
		return;
	case NSRUN_NETWORK_NONE:
		break;
	}
	GEN_STR(g, "none");
}

static const char *json_status(const struct nsrun_result *r)
{
	/* a command that could not be executed is the payload's failure, not nsrun's */
	return r->status == NSRUN_STATUS_EXEC_FAILED ? "exited" : result_status_name(r->status);
}

/* yajl's print callback: the document goes to the FILE as it is generated */
static void json_print(void *ctx, const char *s, size_t len)
{
	struct json_out *o = ctx;

	if (!o->failed && len && fwrite(s, 1, len, o->f) != len)
		o->failed = true;
}

int result_write_json(const struct nsrun_result *r, const struct nsrun_config *cfg, FILE *out)
{
	yajl_gen g = yajl_gen_alloc(NULL);
	struct json_out o = { .f = out };
	char line[512];
	int rc = 0;

	if (!g) {
		errno = ENOMEM;
		return -1;
	}
	yajl_gen_config(g, yajl_gen_beautify, 0);
	/* straight to the file, not into one buffer: yajl writes a control byte of the
	 * output as "\u00XX", so a buffered document of 2 x 64 MiB of control bytes
	 * took about 1 GB (issue 17); now nsrun holds the kept output and one clean copy */
	yajl_gen_config(g, yajl_gen_print_callback, json_print, &o);
	yajl_gen_map_open(g);
	GEN_STR(g, "schema");
	yajl_gen_integer(g, NSRUN_JSON_SCHEMA);
	GEN_STR(g, "nsrun_version");
	GEN_STR(g, NSRUN_VERSION);
	GEN_STR(g, "status");
	GEN_STR(g, json_status(r));
	GEN_STR(g, "exit_code");
	yajl_gen_integer(g, result_exit_code(r));
	GEN_STR(g, "signal");
	if (r->status == NSRUN_STATUS_OOM_KILLED) {
		GEN_STR(g, "SIGKILL");
	} else if (r->status == NSRUN_STATUS_SIGNALED) {
		GEN_STR(g, result_signal_name(r->signal, line, sizeof(line)));
	} else {
		yajl_gen_null(g);
	}
	GEN_STR(g, "timed_out");
	yajl_gen_bool(g, r->status == NSRUN_STATUS_TIMED_OUT);
	GEN_STR(g, "oom_killed");
	yajl_gen_bool(g, r->status == NSRUN_STATUS_OOM_KILLED);
	GEN_STR(g, "error"); /* the very line nsrun prints on stderr, without "nsrun: " */
	if (result_message(r, line, sizeof(line)))
		GEN_STR(g, line);
	else
		yajl_gen_null(g);
	GEN_STR(g, "wall_time_ms");
	yajl_gen_integer(g, (long long)(r->wall_time_us / 1000));
	GEN_STR(g, "cpu_user_ms");
	yajl_gen_integer(g, (long long)(r->cpu_user_us / 1000));
	GEN_STR(g, "cpu_system_ms");
	yajl_gen_integer(g, (long long)(r->cpu_system_us / 1000));
	GEN_STR(g, "cpu_time_scope");
	GEN_STR(g, r->cpu_whole_container ? "container" : "waited");
	GEN_STR(g, "max_rss_kib");
	yajl_gen_integer(g, (long long)r->max_rss_kib);
	GEN_STR(g, "memory_peak_bytes");
	if (r->memory_peak_bytes)
		yajl_gen_integer(g, (long long)r->memory_peak_bytes);
	else
		yajl_gen_null(g);
	GEN_STR(g, "pids_peak");
	if (r->pids_peak)
		yajl_gen_integer(g, (long long)r->pids_peak);
	else
		yajl_gen_null(g);
	if (gen_stream(g, "stdout", &r->out) < 0 || gen_stream(g, "stderr", &r->err_out) < 0) {
		yajl_gen_free(g);
		errno = ENOMEM;
		return -1;
	}
	GEN_STR(g, "image");
	if (cfg->image)
		GEN_STR(g, cfg->image);
	else
		yajl_gen_null(g);
	GEN_STR(g, "network");
	gen_network(g, cfg);
	/* the tier the run got; absent when nsrun failed before choosing one */
	if (cfg->isolation != NSRUN_ISOLATION_AUTO) {
		GEN_STR(g, "isolation");
		GEN_STR(g, tier_name(cfg->isolation));
	}
	if (r->n_ports) {
		GEN_STR(g, "ports");
		yajl_gen_array_open(g);
		for (size_t i = 0; i < r->n_ports; i++) {
			yajl_gen_map_open(g);
			GEN_STR(g, "host_ip");
			GEN_STR(g, r->ports[i].host_ip);
			GEN_STR(g, "host_port");
			yajl_gen_integer(g, r->ports[i].host_port);
			GEN_STR(g, "container_port");
			yajl_gen_integer(g, r->ports[i].container_port);
			GEN_STR(g, "protocol");
			GEN_STR(g, "tcp");
			yajl_gen_map_close(g);
		}
		yajl_gen_array_close(g);
	}
	/* who made the run's cgroup (null: none); limits.*.enforced says what it enforced */
	GEN_STR(g, "cgroup_manager");
	if (r->cgroup_manager)
		GEN_STR(g, r->cgroup_manager);
	else
		yajl_gen_null(g);
	GEN_STR(g, "limits");
	yajl_gen_map_open(g);
	gen_limit(g, "memory_bytes", cfg->limits.memory_bytes, cfg->limits.memory_bytes,
		  /* a run that failed before its limits were set up: what a run gets where no cgroup is had */
		  r->enforced.memory ? r->enforced.memory : "supervisor");
	gen_limit(g, "pids", cfg->limits.pids, cfg->limits.pids, r->enforced.pids_cgroup ? "cgroup" : "rlimit");
	GEN_STR(g, "cpus");
	yajl_gen_map_open(g);
	GEN_STR(g, "value");
	if (cfg->limits.cpus_milli)
		yajl_gen_double(g, (double)cfg->limits.cpus_milli / 1000.0);
	else
		yajl_gen_null(g);
	GEN_STR(g, "enforced");
	GEN_STR(g, r->enforced.cpu_cgroup ? "cgroup" : "none");
	yajl_gen_map_close(g);
	gen_limit(g, "cpu_time_ms", cfg->limits.cpu_time_us, cfg->limits.cpu_time_us / 1000, "rlimit");
	/* per-user kernel counters: the container's user namespace's own limits */
	gen_limit(g, "inotify_instances", r->inotify_instances > 0, (uint64_t)r->inotify_instances,
		  r->enforced.ucounts ? "userns" : "none");
	gen_limit(g, "inotify_watches", r->inotify_watches > 0, (uint64_t)r->inotify_watches,
		  r->enforced.ucounts ? "userns" : "none");
	/* System V shm and message queues (ucounts.h): --memory each, in the container's IPC namespace */
	gen_limit(g, "ipc_bytes", cfg->limits.memory_bytes && r->enforced.ucounts, cfg->limits.memory_bytes, "ipcns");
	/* rounded up: a pool request's timeout under 1 ms is not said as 0 */
	gen_limit(g, "timeout_ms", cfg->limits.timeout_us, (cfg->limits.timeout_us + 999) / 1000, "supervisor");
	gen_limit(g, "tmpfs_bytes", true, cfg->limits.tmpfs_bytes, "tmpfs");
	/* 0 keeps nothing (the streams are still drained): a limit, not "none" */
	gen_limit(g, "output_bytes", cfg->output.capture, cfg->output.limit_bytes, "supervisor");
	yajl_gen_map_close(g);
	if (r->pool.used) {
		/* a request of `nsrun pool` (pool.h): where its time went */
		GEN_STR(g, "pool");
		yajl_gen_map_open(g);
		GEN_STR(g, "slot");
		yajl_gen_integer(g, (long long)r->pool.slot);
		GEN_STR(g, "queued_us");
		yajl_gen_integer(g, (long long)r->pool.queued_us);
		GEN_STR(g, "run_us");
		yajl_gen_integer(g, (long long)r->pool.run_us);
		GEN_STR(g, "zygote_restarts");
		yajl_gen_integer(g, (long long)r->pool.zygote_restarts);
		if (r->status == NSRUN_STATUS_ERROR && error_hint(&r->error)) {
			/* nsrun run --pool prints it as a run prints its hint */
			GEN_STR(g, "hint");
			GEN_STR(g, error_hint(&r->error));
		}
		yajl_gen_map_close(g);
	}
	yajl_gen_map_close(g);
	if (o.failed || fputc('\n', out) == EOF)
		rc = -1;
	yajl_gen_free(g);
	return rc;
}

void result_free(struct nsrun_result *r)
{
	free(r->out.data);
	free(r->err_out.data);
	r->out.data = r->err_out.data = NULL;
}
