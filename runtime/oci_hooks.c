/* oci_hooks.c - see oci_hooks.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "cleanup.h"
#include "exec.h"
#include "oci_config.h"
#include "oci_hooks.h"
#include "sys.h"
#include "util.h"

#define CONFIG_READ_MAX (4 * 1024 * 1024) /* as oci_config.c's limit on config.json */
#define HOOKS_MAX 64                      /* hooks of one kind */
#define HOOK_ARGS_MAX 256                 /* args or env entries of one hook */
#define HOOK_TIMEOUT_MAX (INT_MAX / 1000)  /* seconds: run_one's poll(2) takes an int of ms */

static const char *const run_kinds[] = { "prestart", "createRuntime", "createContainer", "startContainer",
					 "poststart", "poststop" };

/* True if v is an array of at most HOOK_ARGS_MAX strings. */
static bool string_array(yajl_val v)
{
	if (!YAJL_IS_ARRAY(v) || v->u.array.len > HOOK_ARGS_MAX)
		return false;
	for (size_t i = 0; i < v->u.array.len; i++)
		if (!YAJL_IS_STRING(v->u.array.values[i]))
			return false;
	return true;
}

/* Checks the hooks object t.  Returns 0 or -1 with err naming the JSON path. */
static int check(yajl_val t, struct nsrun_error *err)
{
	for (size_t i = 0; i < t->u.object.len; i++) {
		const char *kind = t->u.object.keys[i];
		yajl_val list = t->u.object.values[i];
		bool known = false;

		for (size_t k = 0; k < sizeof(run_kinds) / sizeof(run_kinds[0]); k++)
			known = known || strcmp(kind, run_kinds[k]) == 0;
		if (!known && !(YAJL_IS_ARRAY(list) && !list->u.array.len))
			return error_set(err, 0, "config.json: hooks.%s: not a hook of runtime-spec 1.2", kind);
		if (!YAJL_IS_ARRAY(list) || list->u.array.len > HOOKS_MAX)
			return error_set(err, 0, "config.json: hooks.%s: expected an array of at most %d hooks", kind,
					 HOOKS_MAX);
		for (size_t j = 0; j < list->u.array.len; j++) {
			yajl_val h = list->u.array.values[j], v;
			if (!YAJL_IS_OBJECT(h))
				return error_set(err, 0, "config.json: hooks.%s[%zu]: expected an object", kind, j);
			v = yajl_tree_get(h, (const char *[]){ "path", NULL }, yajl_t_any);
			if (!YAJL_IS_STRING(v) || v->u.string[0] != '/')
				return error_set(err, 0, "config.json: hooks.%s[%zu].path: expected an absolute path", kind,
						 j);
			v = yajl_tree_get(h, (const char *[]){ "args", NULL }, yajl_t_any);
			if (v && !string_array(v))
				return error_set(err, 0, "config.json: hooks.%s[%zu].args: expected an array of strings",
						 kind, j);
			v = yajl_tree_get(h, (const char *[]){ "env", NULL }, yajl_t_any);
			if (v && !string_array(v))
				return error_set(err, 0, "config.json: hooks.%s[%zu].env: expected an array of strings",
						 kind, j);
			v = yajl_tree_get(h, (const char *[]){ "timeout", NULL }, yajl_t_any);
			if (v && (!YAJL_IS_INTEGER(v) || YAJL_GET_INTEGER(v) <= 0 ||
				  YAJL_GET_INTEGER(v) > HOOK_TIMEOUT_MAX))
				/* (a number past int64's is a double to yajl: refused here too) */
				return error_set(err, 0, "config.json: hooks.%s[%zu].timeout: %.40s: expected whole "
						 "seconds, 1 to %d", kind, j,
						 YAJL_IS_NUMBER(v) ? YAJL_GET_NUMBER(v) : "not a number",
						 HOOK_TIMEOUT_MAX);
		}
	}
	return 0;
}

/* BUNDLE/config.json's top-level member key as JSON text in *json (malloc'd; NULL:
 * none) and parsed in *t (NULL when none).  Returns 0 or -1 with err. */
static int config_member(const char *bundle, const char *key, char **json, yajl_val *t, struct nsrun_error *err)
{
	const char *const path[] = { key, NULL };
	char file[PATH_MAX];
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;

	*json = NULL;
	*t = NULL;
	if ((size_t)snprintf(file, sizeof(file), "%s/config.json", bundle) >= sizeof(file))
		return error_set(err, ENAMETOOLONG, "--bundle \"%s\"", bundle);
	if (read_file(file, CONFIG_READ_MAX, &buf, &len) < 0)
		return error_set(err, errno, "read %s", file);
	if (oci_config_object(buf, len, path, json, err) < 0)
		return -1;
	if (*json && !(*t = yajl_tree_parse(*json, NULL, 0))) {
		free(*json);
		*json = NULL;
		return error_set(err, 0, "config.json: %s: not an object", key);
	}
	return 0;
}

int oci_annotations_load(const char *bundle, char **json, struct nsrun_error *err)
{
	yajl_val t;
	int rc = 0;

	if (config_member(bundle, "annotations", json, &t, err) < 0)
		return -1;
	if (!t)
		return 0;
	if (!YAJL_IS_OBJECT(t))
		rc = error_set(err, 0, "config.json: annotations: expected an object of strings");
	for (size_t i = 0; rc == 0 && i < t->u.object.len; i++)
		if (!YAJL_IS_STRING(t->u.object.values[i]))
			rc = error_set(err, 0, "config.json: annotations.%s: expected a string", t->u.object.keys[i]);
	yajl_tree_free(t);
	if (rc < 0) {
		free(*json);
		*json = NULL;
	}
	return rc;
}

int oci_hooks_load(const char *bundle, char **json, struct nsrun_error *err)
{
	yajl_val t;
	int rc;

	if (config_member(bundle, "hooks", json, &t, err) < 0)
		return -1;
	if (!t)
		return 0;
	rc = check(t, err);
	yajl_tree_free(t);
	if (rc < 0) {
		free(*json);
		*json = NULL;
	}
	return rc;
}

/* argv or env of hook h (the strings of its array key; with none, dflt alone)
 * into a NULL-terminated array of pointers into h, malloc'd. */
static const char **vector(yajl_val h, const char *key, const char *dflt)
{
	yajl_val v = yajl_tree_get(h, (const char *[]){ key, NULL }, yajl_t_array);
	size_t n = v ? v->u.array.len : 0;
	const char **out = calloc(n + 2, sizeof(*out));

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++)
		out[i] = v->u.array.values[i]->u.string;
	if (!n && dflt)
		out[0] = dflt;
	return out;
}

/* Runs hook h (hooks.KIND[i]).  Returns 0 or -1 with err. */
static int run_one(yajl_val h, const char *kind, size_t i, const char *state, struct nsrun_error *err)
{
	const char *path = yajl_tree_get(h, (const char *[]){ "path", NULL }, yajl_t_string)->u.string;
	yajl_val tv = yajl_tree_get(h, (const char *[]){ "timeout", NULL }, yajl_t_number);
	int timeout_ms = tv ? (int)YAJL_GET_INTEGER(tv) * 1000 : -1;
	_cleanup_free_ const char **argv = vector(h, "args", path), **envp = vector(h, "env", NULL);
	_cleanup_close_ int pidfd = -1;
	struct sigaction ign = { .sa_handler = SIG_IGN }, saved;
	int in[2], status = 0, r;
	pid_t pid;

	if (!argv || !envp)
		return error_set(err, ENOMEM, "hooks.%s[%zu]", kind, i);
	if (access(path, X_OK) < 0)
		return error_set(err, errno, "hooks.%s[%zu]: %s", kind, i, path);
	if (pipe2(in, O_CLOEXEC) < 0)
		return error_set(err, errno, "hooks.%s[%zu]: pipe", kind, i);
	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) < 0) {
		close(in[0]);
		close(in[1]);
		return error_set(err, errno, "hooks.%s[%zu]: fork", kind, i);
	}
	if (pid == 0) {
		/* the state on stdin, stdout to our stderr (ours may be the container's);
		 * a process group of its own, so that a timeout ends what it started too
		 * (not the terminal's foreground group: SIGTTOU ignored, so that its
		 * writes to a terminal of stty tostop go on instead of stopping it) */
		exec_reset_signals();
		setpgid(0, 0);
		signal(SIGTTOU, SIG_IGN);
		if (dup2(in[0], 0) < 0 || dup2(2, 1) < 0)
			_exit(127);
		int none = -1;
		close_fds_except(&none, 1);
		execve(path, (char *const *)argv, (char *const *)envp);
		_exit(127);
	}
	setpgid(pid, pid); /* as the child does: whichever runs first */
	close(in[0]);
	/* a hook that does not read its stdin may be gone: EPIPE, not our death */
	sigaction(SIGPIPE, &ign, &saved);
	if (write_all(in[1], state, strlen(state)) < 0) {
		/* it did not want it */
	}
	sigaction(SIGPIPE, &saved, NULL);
	close(in[1]);
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd >= 0 && timeout_ms > 0) {
		struct pollfd p = { .fd = pidfd, .events = POLLIN };
		uint64_t end = monotonic_us() + (uint64_t)timeout_ms * 1000;
		while ((r = poll(&p, 1, timeout_ms)) < 0 && errno == EINTR) {
			uint64_t now = monotonic_us();
			timeout_ms = now >= end ? 0 : (int)((end - now) / 1000);
		}
		if (r == 0) {
			/* its group: a hook's children (a shell's sleep) outlived it */
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			return error_set(err, 0, "hooks.%s[%zu] %s: timed out after %lld s (killed)", kind, i, path,
					 (long long)YAJL_GET_INTEGER(tv));
		}
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(status))
		return error_set(err, 0, "hooks.%s[%zu] %s: killed by signal %d", kind, i, path, WTERMSIG(status));
	if (WEXITSTATUS(status))
		return error_set(err, 0, "hooks.%s[%zu] %s: exit status %d", kind, i, path, WEXITSTATUS(status));
	return 0;
}

int oci_hooks_run(const char *json, const char *kind, const char *state, struct nsrun_error *err)
{
	yajl_val t, list;
	int rc = 0;

	if (!json)
		return 0;
	if (!(t = yajl_tree_parse(json, NULL, 0)))
		return error_set(err, 0, "hooks: not an object");
	/* json is ROOT/ID/hooks.json, written by create: checked again, as run_one
	 * trusts its timeout to fit an int of ms */
	if (!YAJL_IS_OBJECT(t) || check(t, err) < 0) {
		if (!YAJL_IS_OBJECT(t))
			error_set(err, 0, "hooks: not an object");
		yajl_tree_free(t);
		return -1;
	}
	list = yajl_tree_get(t, (const char *[]){ kind, NULL }, yajl_t_array);
	for (size_t i = 0; list && i < list->u.array.len && rc == 0; i++)
		rc = run_one(list->u.array.values[i], kind, i, state, err);
	yajl_tree_free(t);
	return rc;
}

size_t oci_hooks_count(const char *json, const char *kind)
{
	yajl_val t, list;
	size_t n = 0;

	if (!json || !(t = yajl_tree_parse(json, NULL, 0)))
		return 0;
	if ((list = yajl_tree_get(t, (const char *[]){ kind, NULL }, yajl_t_array)))
		n = list->u.array.len;
	yajl_tree_free(t);
	return n;
}

int oci_hooks_run_each(const char *json, const char *kind, const char *state,
		       void (*warn)(void *ctx, const struct nsrun_error *err), void *ctx)
{
	yajl_val t, list;
	int failed = 0;

	if (!json)
		return 0;
	if (!(t = yajl_tree_parse(json, NULL, 0))) {
		struct nsrun_error err = { 0 };
		error_set(&err, 0, "hooks: not an object");
		warn(ctx, &err);
		return 1;
	}
	list = yajl_tree_get(t, (const char *[]){ kind, NULL }, yajl_t_array);
	for (size_t i = 0; list && i < list->u.array.len; i++) {
		struct nsrun_error err = { 0 };
		if (run_one(list->u.array.values[i], kind, i, state, &err) < 0) {
			warn(ctx, &err);
			failed++;
		}
	}
	yajl_tree_free(t);
	return failed;
}

int oci_hooks_run_inside(const struct nsrun_oci_inside *in, const char *kind, pid_t pid, struct nsrun_error *err)
{
	int which = strcmp(kind, "startContainer") == 0;
	_cleanup_free_ char *state = NULL;

	if (!in->hooks)
		return 0;
	if (!in->state_head[which] || !in->state_tail)
		return error_set(err, EINVAL, "hooks.%s: no state to give them", kind);
	if (asprintf(&state, "%s%lld%s", in->state_head[which], (long long)pid, in->state_tail) < 0) {
		state = NULL;
		return error_set(err, ENOMEM, "hooks.%s: the state", kind);
	}
	return oci_hooks_run(in->hooks, kind, state, err);
}
