/* cgroup_systemd.c - see cgroup_systemd.h */
#include <dbus/dbus.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "cgroup_systemd.h"
#include "cleanup.h"
#include "sys.h"

#define SD_NAME "org.freedesktop.systemd1"
#define SD_PATH "/org/freedesktop/systemd1"
#define SD_MANAGER "org.freedesktop.systemd1.Manager"

/* A unix socket address alone: "autolaunch:" would start dbus-launch, "unixexec:"
 * any program, "tcp:" goes to the network; nsrun starts nothing and stays local. */
static bool unix_only(const char *address)
{
	return address && strncmp(address, "unix:", 5) == 0 && !strchr(address, ';');
}

size_t cgroup_systemd_addresses(bool root, const char *session_bus, const char *system_bus,
				const char *runtime_dir, char **out, bool *is_bus, size_t max)
{
	size_t n = 0;

#define ADD(bus, ...) do { if (n < max && asprintf(&out[n], __VA_ARGS__) >= 0) is_bus[n++] = (bus); } while (0)
	if (root) {
		if (unix_only(system_bus))
			ADD(true, "%s", system_bus);
		else
			ADD(true, "unix:path=/run/dbus/system_bus_socket");
		ADD(false, "unix:path=/run/systemd/private");
		return n;
	}
	if (unix_only(session_bus))
		ADD(true, "%s", session_bus);
	else if (runtime_dir && runtime_dir[0] == '/')
		ADD(true, "unix:path=%s/bus", runtime_dir);
	if (runtime_dir && runtime_dir[0] == '/')
		ADD(false, "unix:path=%s/systemd/private", runtime_dir);
#undef ADD
	return n;
}

const char *cgroup_systemd_unit_name(char *buf, size_t len, int pid, unsigned random)
{
	snprintf(buf, len, "nsrun-%d-%08x.scope", pid, random);
	return buf;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Whether this process's cgroup v2 path (cgroups(7)) ends in "/unit". */
static bool in_unit(const char *unit)
{
	_cleanup_free_ char *text = NULL;
	size_t n = strlen(unit);
	char *save = NULL;

	if (read_file("/proc/self/cgroup", 1 << 16, &text, NULL) < 0)
		return false;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t l = strlen(line);
		if (strncmp(line, "0::", 3) == 0 && l > n && line[l - n - 1] == '/' && strcmp(line + l - n, unit) == 0)
			return true;
	}
	return false;
}

/* One (sv) of a{sv}: name and a variant of the basic type (type, value). */
static bool append_prop(DBusMessageIter *props, const char *name, int type, const void *value)
{
	DBusMessageIter st, var;
	const char sig[2] = { (char)type, '\0' };

	return dbus_message_iter_open_container(props, DBUS_TYPE_STRUCT, NULL, &st) &&
	       dbus_message_iter_append_basic(&st, DBUS_TYPE_STRING, &name) &&
	       dbus_message_iter_open_container(&st, DBUS_TYPE_VARIANT, sig, &var) &&
	       dbus_message_iter_append_basic(&var, type, value) &&
	       dbus_message_iter_close_container(&st, &var) &&
	       dbus_message_iter_close_container(props, &st);
}

/* PIDs=[0]: the sender's pid, as the manager sees it (systemd's dbus-scope.c). */
static bool append_pids(DBusMessageIter *props)
{
	DBusMessageIter st, var, arr;
	const char *name = "PIDs";
	dbus_uint32_t self = 0;

	return dbus_message_iter_open_container(props, DBUS_TYPE_STRUCT, NULL, &st) &&
	       dbus_message_iter_append_basic(&st, DBUS_TYPE_STRING, &name) &&
	       dbus_message_iter_open_container(&st, DBUS_TYPE_VARIANT, "au", &var) &&
	       dbus_message_iter_open_container(&var, DBUS_TYPE_ARRAY, "u", &arr) &&
	       dbus_message_iter_append_basic(&arr, DBUS_TYPE_UINT32, &self) &&
	       dbus_message_iter_close_container(&var, &arr) &&
	       dbus_message_iter_close_container(&st, &var) &&
	       dbus_message_iter_close_container(props, &st);
}

/* StartTransientUnit(s name, s mode, a(sv) properties, a(sa(sv)) aux), or NULL. */
static DBusMessage *start_message(const char *unit)
{
	DBusMessage *m = dbus_message_new_method_call(SD_NAME, SD_PATH, SD_MANAGER, "StartTransientUnit");
	DBusMessageIter it, props, aux;
	const char *mode = "fail";
	const char *desc = "nsrun container supervisor";
	const char *collect = "inactive-or-failed";
	dbus_bool_t yes = TRUE;

	if (!m)
		return NULL;
	dbus_message_set_auto_start(m, FALSE);
	dbus_message_iter_init_append(m, &it);
	if (dbus_message_iter_append_basic(&it, DBUS_TYPE_STRING, &unit) &&
	    dbus_message_iter_append_basic(&it, DBUS_TYPE_STRING, &mode) &&
	    dbus_message_iter_open_container(&it, DBUS_TYPE_ARRAY, "(sv)", &props) &&
	    append_prop(&props, "Description", DBUS_TYPE_STRING, &desc) &&
	    append_prop(&props, "Delegate", DBUS_TYPE_BOOLEAN, &yes) &&
	    append_prop(&props, "CollectMode", DBUS_TYPE_STRING, &collect) &&
	    append_pids(&props) &&
	    dbus_message_iter_close_container(&it, &props) &&
	    dbus_message_iter_open_container(&it, DBUS_TYPE_ARRAY, "(sa(sv))", &aux) &&
	    dbus_message_iter_close_container(&it, &aux))
		return m;
	dbus_message_unref(m);
	return NULL;
}

static int ms_left(long long deadline)
{
	long long left = deadline - now_ms();

	return left > 0 ? (int)left : 1;
}

/* A method call with at most two string arguments, waiting until deadline (libdbus's
 * own calls on a bus wait 25 s: a bus that never answers must not hold a run that
 * long).  Returns the reply, or NULL with e set. */
static DBusMessage *call(DBusConnection *c, const char *dest, const char *path, const char *iface, const char *method,
			 const char *arg, const char *arg2, long long deadline, DBusError *e)
{
	DBusMessage *m = dbus_message_new_method_call(dest, path, iface, method);
	DBusMessage *r = NULL;

	if (!m) {
		dbus_set_error_const(e, DBUS_ERROR_NO_MEMORY, "out of memory");
		return NULL;
	}
	/* no bus activation: a bus without systemd on it answers at once */
	dbus_message_set_auto_start(m, FALSE);
	if ((!arg || dbus_message_append_args(m, DBUS_TYPE_STRING, &arg, DBUS_TYPE_INVALID)) &&
	    (!arg2 || dbus_message_append_args(m, DBUS_TYPE_STRING, &arg2, DBUS_TYPE_INVALID)))
		r = dbus_connection_send_with_reply_and_block(c, m, ms_left(deadline), e);
	else
		dbus_set_error_const(e, DBUS_ERROR_NO_MEMORY, "out of memory");
	dbus_message_unref(m);
	return r;
}

/* On a bus: a name (Hello), a match for JobRemoved, and Subscribe, without which
 * the manager sends its signals to no one there (on its private socket it sends
 * them to every peer).  Returns whether all three were answered. */
static bool subscribe(DBusConnection *c, long long deadline, DBusError *e)
{
	static const char rule[] = "type='signal',sender='" SD_NAME "',interface='" SD_MANAGER "',"
				   "member='JobRemoved',path='" SD_PATH "'";
	DBusMessage *r = call(c, DBUS_SERVICE_DBUS, DBUS_PATH_DBUS, DBUS_INTERFACE_DBUS, "Hello", NULL, NULL, deadline, e);
	const char *name = NULL;
	bool ok;

	ok = r && dbus_message_get_args(r, e, DBUS_TYPE_STRING, &name, DBUS_TYPE_INVALID) &&
	     dbus_bus_set_unique_name(c, name);
	if (r)
		dbus_message_unref(r);
	if (!ok)
		return false;
	r = call(c, DBUS_SERVICE_DBUS, DBUS_PATH_DBUS, DBUS_INTERFACE_DBUS, "AddMatch", rule, NULL, deadline, e);
	if (!r)
		return false;
	dbus_message_unref(r);
	r = call(c, SD_NAME, SD_PATH, SD_MANAGER, "Subscribe", NULL, NULL, deadline, e);
	if (!r)
		return false;
	dbus_message_unref(r);
	return true;
}

/* Waits for JobRemoved of job until deadline; its result ("done" on success) into
 * result.  Signals that came while the call was waiting for its reply are queued
 * in the connection, so none is missed.  Returns whether it came. */
static bool wait_job(DBusConnection *c, const char *job, long long deadline, char *result, size_t len)
{
	for (;;) {
		DBusMessage *m;
		long long left;

		while ((m = dbus_connection_pop_message(c))) {
			dbus_uint32_t id;
			const char *path = NULL, *unit = NULL, *res = NULL;
			bool ours = dbus_message_is_signal(m, SD_MANAGER, "JobRemoved") &&
				    dbus_message_get_args(m, NULL, DBUS_TYPE_UINT32, &id, DBUS_TYPE_OBJECT_PATH, &path,
							  DBUS_TYPE_STRING, &unit, DBUS_TYPE_STRING, &res,
							  DBUS_TYPE_INVALID) &&
				    strcmp(path, job) == 0;
			if (ours)
				snprintf(result, len, "%s", res);
			dbus_message_unref(m);
			if (ours)
				return true;
		}
		left = deadline - now_ms();
		if (left <= 0 || !dbus_connection_read_write(c, (int)left))
			return false;
	}
}

size_t cgroup_systemd_common_ancestor(const char *a, const char *b)
{
	size_t n = 0;

	for (size_t i = 0; a[i] && a[i] == b[i]; i++)
		if (a[i + 1] == '/' || (a[i + 1] == '\0' && (b[i + 1] == '/' || b[i + 1] == '\0')))
			n = i + 1;
	return n == 1 && a[0] == '/' ? 0 : n;
}

/* The manager's own cgroup (its ControlGroup property: the root of its units, e.g.
 * /user.slice/user-1000.slice/user@1000.service) into buf; false with e set. */
static bool manager_cgroup(DBusConnection *c, long long deadline, DBusError *e, char *buf, size_t len)
{
	DBusMessage *r = call(c, SD_NAME, SD_PATH, DBUS_INTERFACE_PROPERTIES, "Get", SD_MANAGER, "ControlGroup",
			      deadline, e);
	DBusMessageIter it, var;
	const char *v = NULL;

	if (!r)
		return false;
	if (dbus_message_iter_init(r, &it) && dbus_message_iter_get_arg_type(&it) == DBUS_TYPE_VARIANT) {
		dbus_message_iter_recurse(&it, &var);
		if (dbus_message_iter_get_arg_type(&var) == DBUS_TYPE_STRING)
			dbus_message_iter_get_basic(&var, &v);
	}
	if (v)
		snprintf(buf, len, "%s", v);
	else
		dbus_set_error_const(e, DBUS_ERROR_INVALID_ARGS, "ControlGroup is not a string");
	dbus_message_unref(r);
	return v != NULL;
}

/* Whether a move from the cgroup own to one below manager (paths in the hierarchy
 * mounted at mnt) would leave a limit behind: memory.max, memory.high, pids.max or
 * cpu.max other than "max" on a cgroup of own's path below their common ancestor
 * (cgroup-v2.rst: limits hold for the whole subtree, so the move would escape them).
 * The first such one goes into why. */
static bool leaves_a_limit(const char *mnt, const char *own, const char *manager, char *why, size_t len)
{
	static const char *const files[] = { "memory.max", "memory.high", "pids.max", "cpu.max" };
	size_t keep = cgroup_systemd_common_ancestor(own, manager);
	char path[4096];
	size_t n = strlen(own);

	while (n > keep) {
		for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
			_cleanup_free_ char *v = NULL;
			if (snprintf(path, sizeof(path), "%s%.*s/%s", mnt, (int)n, own, files[i]) >= (int)sizeof(path) ||
			    read_file(path, 256, &v, NULL) < 0 || strncmp(v, "max", 3) == 0)
				continue;
			v[strcspn(v, "\n")] = '\0';
			snprintf(why, len, "%s of %.*s is %.24s, which a scope of the systemd manager would leave",
				 files[i], (int)(n > 64 ? 64 : n), own, v);
			return true;
		}
		while (n > 0 && own[n - 1] != '/')
			n--;
		if (n > 0)
			n--; /* the '/' */
	}
	return false;
}

/* The scope through one address; 0, or -1 with why. */
static int scope_via(const char *address, bool is_bus, const char *mnt, const char *own, const char *unit,
		     int timeout_ms, char *why, size_t why_len)
{
	char mgr[1024];
	DBusError e;
	DBusConnection *c;
	DBusMessage *m = NULL, *reply = NULL;
	const char *job = NULL;
	char result[32] = "";
	long long deadline = now_ms() + timeout_ms;
	int rc = -1;

	dbus_error_init(&e);
	/* libdbus would set SIGPIPE to SIG_IGN for the whole process, which the
	 * supervisor's relay saves and restores as its own: left alone (libdbus writes
	 * with MSG_NOSIGNAL, so it needs no such thing) */
	dbus_connection_set_change_sigpipe(FALSE);
	c = dbus_connection_open_private(address, &e);
	if (!c) {
		snprintf(why, why_len, "%s: %s", address, e.message ? e.message : "cannot connect");
		dbus_error_free(&e);
		return -1;
	}
	dbus_connection_set_exit_on_disconnect(c, FALSE);
	/* the first call would wait for the authentication without a bound (libdbus
	 * flushes its queue before it waits for the reply): a peer that never answers
	 * would hold the run forever, so the exchange is driven here, until deadline */
	while (!dbus_connection_get_is_authenticated(c)) {
		if (now_ms() >= deadline || !dbus_connection_read_write(c, ms_left(deadline))) {
			snprintf(why, why_len, "%s: %s", address, dbus_connection_get_is_connected(c) ?
				 "no answer to the authentication" : "the peer closed the connection");
			goto out;
		}
	}
	if (is_bus && !subscribe(c, deadline, &e)) {
		snprintf(why, why_len, "%s: %s", address, e.message ? e.message : "no systemd on this bus");
		goto out;
	}
	/* a limit on nsrun's own cgroup, or on one above it that the scope would not be
	 * in, holds the caller (systemd-run --scope -p MemoryMax=...): stay in it */
	if (!manager_cgroup(c, deadline, &e, mgr, sizeof(mgr))) {
		snprintf(why, why_len, "%s: the manager's ControlGroup: %s", address, e.message ? e.message : "no reply");
		goto out;
	}
	if (leaves_a_limit(mnt, own, mgr, why, why_len))
		goto out;
	m = start_message(unit);
	if (!m) {
		snprintf(why, why_len, "StartTransientUnit: out of memory");
		goto out;
	}
	reply = dbus_connection_send_with_reply_and_block(c, m, ms_left(deadline), &e);
	if (!reply || !dbus_message_get_args(reply, &e, DBUS_TYPE_OBJECT_PATH, &job, DBUS_TYPE_INVALID)) {
		snprintf(why, why_len, "%s: StartTransientUnit %s: %s", address, unit,
			 e.message ? e.message : "no reply");
		goto out;
	}
	if (!wait_job(c, job, deadline, result, sizeof(result))) {
		/* too slow to say: what counts is where this process is now */
		if (!in_unit(unit))
			snprintf(why, why_len, "%s: the start job of %s did not end within %d ms", address, unit,
				 timeout_ms);
		rc = in_unit(unit) ? 0 : -1;
		goto out;
	}
	if (strcmp(result, "done") != 0) {
		snprintf(why, why_len, "%s: the start job of %s ended with \"%s\"", address, unit, result);
		goto out;
	}
	if (!in_unit(unit)) {
		snprintf(why, why_len, "%s: %s started, but this process is not in its cgroup", address, unit);
		goto out;
	}
	rc = 0;
out:
	dbus_error_free(&e);
	if (reply)
		dbus_message_unref(reply);
	if (m)
		dbus_message_unref(m);
	dbus_connection_close(c);
	dbus_connection_unref(c);
	return rc;
}

int cgroup_systemd_scope(const char *mnt, const char *own, char *unit, size_t unit_len, int timeout_ms, char *why,
			 size_t why_len)
{
	char *addr[3] = { NULL, NULL, NULL };
	bool is_bus[3];
	size_t n = cgroup_systemd_addresses(geteuid() == 0, getenv("DBUS_SESSION_BUS_ADDRESS"),
					    getenv("DBUS_SYSTEM_BUS_ADDRESS"), getenv("XDG_RUNTIME_DIR"),
					    addr, is_bus, 3);
	unsigned rnd = 0;
	int rc = -1;

	if (n == 0)
		snprintf(why, why_len, "no D-Bus address (neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set)");
	if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
		rnd = (unsigned)now_ms() ^ (unsigned)getpid();
	cgroup_systemd_unit_name(unit, unit_len, (int)getpid(), rnd);
	for (size_t i = 0; i < n && rc < 0; i++) {
		char one[192];
		rc = scope_via(addr[i], is_bus[i], mnt, own, unit, timeout_ms, one, sizeof(one));
		if (rc < 0) {
			size_t o = i ? strlen(why) : 0;
			snprintf(why + o, why_len - o, "%s%s", i ? "; " : "", one);
		} else if (i) {
			/* and what the addresses before said */
			char before[192];
			snprintf(before, sizeof(before), "%s", why);
			snprintf(why, why_len, "via %s (not %s)", addr[i], before);
		} else {
			snprintf(why, why_len, "via %s", addr[i]);
		}
	}
	for (size_t i = 0; i < n; i++)
		free(addr[i]);
	/* libdbus's own caches: freed, so that leak checkers see nothing (it starts over
	 * if it is used again) */
	dbus_shutdown();
	if (rc < 0)
		unit[0] = '\0';
	return rc;
}

/* NAME.slice, NAME's parts joined by single dashes (systemd.slice(5)), or "-.slice" */
static bool slice_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (strcmp(s, "-.slice") == 0)
		return true;
	return n > 6 && strcmp(s + n - 6, ".slice") == 0 && !strchr(s, '/') && s[0] != '-' && s[n - 7] != '-' &&
	       !strstr(s, "--");
}

int cgroup_systemd_path(const char *spec, bool root, char *out, size_t len, char *why, size_t why_len)
{
	const char *c1 = strchr(spec, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	char slice[256], prefix[256], name[256], unit[600];
	size_t o = 0;
	int n;

	if (!c2 || strchr(c2 + 1, ':') || (size_t)(c1 - spec) >= sizeof(slice) || (size_t)(c2 - c1 - 1) >= sizeof(prefix) ||
	    strlen(c2 + 1) >= sizeof(name) || !c2[1]) {
		snprintf(why, why_len, "expected cgroupsPath of the form \"slice:prefix:name\" for systemd cgroups, "
			 "got \"%s\"", spec);
		return -1;
	}
	snprintf(slice, sizeof(slice), "%.*s", (int)(c1 - spec), spec);
	snprintf(prefix, sizeof(prefix), "%.*s", (int)(c2 - c1 - 1), c1 + 1);
	snprintf(name, sizeof(name), "%s", c2 + 1);
	if (!slice[0])
		snprintf(slice, sizeof(slice), "%s", root ? "system.slice" : "user.slice");
	if (strchr(prefix, '/') || strchr(name, '/') || !slice_name_ok(slice)) {
		snprintf(why, why_len, "\"%s\": not a slice name (NAME.slice, its parents joined by \"-\": "
			 "systemd.slice(5))", slice);
		return -1;
	}
	out[0] = '\0';
	/* "a-b-c.slice": /a.slice/a-b.slice/a-b-c.slice */
	if (strcmp(slice, "-.slice") != 0) {
		size_t base = strlen(slice) - 6;
		for (size_t i = 0; i <= base; i++) {
			if (i < base && slice[i] != '-')
				continue;
			n = snprintf(out + o, len - o, "/%.*s.slice", (int)i, slice);
			if (n < 0 || (size_t)n >= len - o)
				goto long_;
			o += (size_t)n;
		}
	}
	if (strlen(name) > 6 && strcmp(name + strlen(name) - 6, ".slice") == 0)
		snprintf(unit, sizeof(unit), "%s", name);
	else
		snprintf(unit, sizeof(unit), "%s%s%s.scope", prefix, prefix[0] ? "-" : "", name);
	n = snprintf(out + o, len - o, "/%s", unit);
	if (n >= 0 && (size_t)n < len - o)
		return 0;
long_:
	snprintf(why, why_len, "\"%s\": too long", spec);
	return -1;
}
