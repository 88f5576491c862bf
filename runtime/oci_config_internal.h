/* oci_config_internal.h - what oci_config.c (process, root, mounts, the document)
 * and oci_config_linux.c (the "linux" object) share: the walk over one document
 * and its helpers.  Not an interface: oci_config.h is. */
#ifndef NSRUN_OCI_CONFIG_INTERNAL_H
#define NSRUN_OCI_CONFIG_INTERNAL_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <yajl/yajl_tree.h>

#include "config.h"
#include "error.h"
#include "util.h"

struct walk {
	const char *bundle;
	struct nsrun_config *cfg;
	struct strv *warnings;
	struct nsrun_error *err;
};

static inline void __attribute__((format(printf, 2, 3))) warn(struct walk *w, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	strv_push(w->warnings, line); /* ENOMEM: the run goes on, the warning is lost */
}

static inline int __attribute__((format(printf, 2, 3))) bad(struct walk *w, const char *fmt, ...)
{
	char msg[sizeof(w->err->msg) - 16];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return error_set(w->err, 0, "config.json: %s", msg);
}

static inline bool is_true(yajl_val v)
{
	return v && YAJL_IS_TRUE(v);
}

/* The string at v, or NULL (absent or another type). */
static inline const char *str(yajl_val v)
{
	return v && YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : NULL;
}

/* *out = the integer at v (path names it in the error).  Returns 0 or -1. */
static inline int integer(struct walk *w, yajl_val v, const char *path, long long *out)
{
	if (!v || !YAJL_IS_INTEGER(v))
		return bad(w, "%s: expected an integer", path);
	*out = YAJL_GET_INTEGER(v);
	return 0;
}

static inline bool nonempty(yajl_val v)
{
	return v && ((YAJL_IS_ARRAY(v) && v->u.array.len) || (YAJL_IS_OBJECT(v) && v->u.object.len) ||
		     YAJL_IS_STRING(v) || YAJL_IS_NUMBER(v) || YAJL_IS_TRUE(v));
}

static inline int expect_object(struct walk *w, yajl_val v, const char *path)
{
	return v && YAJL_IS_OBJECT(v) ? 0 : bad(w, "%s: expected an object", path);
}

/* v must be an array of strings, pushed onto out.  Returns 0 or -1. */
static inline int strings(struct walk *w, yajl_val v, const char *path, struct strv *out)
{
	if (!v || !YAJL_IS_ARRAY(v))
		return bad(w, "%s: expected an array of strings", path);
	for (size_t i = 0; i < v->u.array.len; i++) {
		const char *s = str(v->u.array.values[i]);
		if (!s)
			return bad(w, "%s[%zu]: expected a string", path, i);
		if (out && strv_push(out, s) < 0)
			return error_set(w->err, ENOMEM, "config.json: %s", path);
	}
	return 0;
}

/* The "linux" object x (config-linux.md) onto w->cfg.  Returns 0 or -1 with w->err. */
int oci_parse_linux(struct walk *w, yajl_val x);

/* oci_config_dev.c: linux.devices v (its resources.devices read from lx, the
 * "linux" object), linux.sysctl v (linux.namespaces read from lx), and
 * linux.rootfsPropagation v, onto w->cfg.  Each returns 0 or -1 with w->err. */
int oci_parse_devices(struct walk *w, yajl_val v, yajl_val lx);
int oci_parse_sysctl(struct walk *w, yajl_val v, yajl_val lx);
int oci_parse_propagation(struct walk *w, yajl_val v);
/* The MS_* flags of a propagation name: shared, slave, private, unbindable and
 * their r-forms (| MS_REC), mount_namespaces(7); 0 for any other name. */
unsigned long oci_propagation_flags(const char *name);

#endif
