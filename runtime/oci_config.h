/* oci_config.h - an OCI bundle's config.json (runtime-spec 1.2, config.md and
 * config-linux.md) onto struct nsrun_config.
 *
 * What nsrun does as the spec asks is mapped; what it does differently (it always
 * makes every namespace, keeps the root read-only, drops every capability, uses
 * its own /proc masks and /dev) or leaves out is a warning naming the JSON path,
 * never silent; what it cannot honour without giving less than asked (joining a
 * mount or cgroup namespace by path, a malformed value) is an error naming
 * the JSON path.  A network namespace's path (cfg->network NSRUN_NETWORK_PATH) and
 * id map ranges (cfg->uid_mappings, userns subids) are checked where the run opens
 * or writes them (netjoin.h, subid.h).  Pure: reads files, no other syscall. */
#ifndef NSRUN_OCI_CONFIG_H
#define NSRUN_OCI_CONFIG_H

#include <stddef.h>

#include "config.h"
#include "error.h"
#include "util.h"

#define OCI_VERSION "1.2.0"

/* Parses the document buf (len bytes; a path relative to the bundle is resolved
 * against bundle_dir, absolute) into cfg (after config_init), appending one line
 * per difference from what it asks to *warnings.  Sets the OCI defaults: no
 * timeout, isolation full.  Returns 0 or -1 with err ("config.json: process.args:
 * ..."; errnum 0 for a bad document). */
int oci_config_parse(const char *bundle_dir, const char *buf, size_t len, struct nsrun_config *cfg,
		     struct strv *warnings, struct nsrun_error *err);

/* The linux.seccomp object of the document (checked by oci_config_parse) as JSON
 * text in *out (malloc'd), for nsrun's profile code (seccomp_profile.h: the OCI
 * form is a subset of the profiles it reads), or NULL when there is none.
 * Returns 0 or -1 with err. */
int oci_config_seccomp(const char *buf, size_t len, char **out, struct nsrun_error *err);

/* The object at path (NULL-terminated keys) of the document (checked by
 * oci_config_parse) as JSON text in *out (malloc'd), or NULL when there is none:
 * how the verbs get "hooks" (oci_hooks.h).  Returns 0 or -1 with err. */
int oci_config_object(const char *buf, size_t len, const char *const path[], char **out, struct nsrun_error *err);

/* Reads BUNDLE/config.json and parses it as oci_config_parse, its seccomp object
 * into *seccomp_json as oci_config_seccomp.  Returns 0 or -1 with err. */
int oci_config_load(const char *bundle_dir, struct nsrun_config *cfg, struct strv *warnings, char **seccomp_json,
		    struct nsrun_error *err);

#endif
