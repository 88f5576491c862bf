/* oci_hooks.h - config.json's hooks (runtime-spec 1.2, config.md "POSIX-platform
 * Hooks", runtime.md "Lifecycle"): each a program of the runtime's namespace,
 * given path, args, env and timeout (seconds), the container's state (the state
 * verb's JSON) on its stdin.
 *
 * When nsrun runs them (the lifecycle steps of runtime.md):
 *   prestart, createRuntime  by create, once the container is made and waits on
 *                            its exec fifo (its mounts are made and its root
 *                            pivoted by then: a hook sees the state's pid and
 *                            its namespaces); one that fails fails the create,
 *                            and the container is removed;
 *   createContainer          by the container's pid 1 (in all its namespaces, as
 *                            the root of its user namespace), once its mounts are
 *                            made and before pivot_root: the path is the runtime
 *                            namespace's (config.md "createContainer Hooks"); this
 *                            is before prestart and createRuntime, not after as
 *                            the spec orders them; one that fails fails the create;
 *   startContainer           by start, in the payload's process, confined as the
 *                            payload is (ids, capabilities, no_new_privs,
 *                            seccomp), before its execve: the path is the
 *                            container's; one that fails fails the start and the
 *                            container stops, its payload never run;
 *   poststart                by start, once the payload exec'd; a failure is a
 *                            warning, and the next hooks still run;
 *   poststop                 by delete (and run, at its end), once the container
 *                            is gone; a failure is a warning, and the next hooks
 *                            still run. */
#ifndef NSRUN_OCI_HOOKS_H
#define NSRUN_OCI_HOOKS_H

#include <sys/types.h>

#include "config.h"
#include "error.h"

#define HOOKS_FILE "hooks.json"         /* in ROOT/ID/: the config's hooks, kept by create */
#define ANNOTATIONS_FILE "annotations.json" /* in ROOT/ID/: the config's annotations, for the state */

/* Reads BUNDLE/config.json's hooks object into *json (malloc'd; NULL: none) and
 * checks it: each hook's path absolute, args and env arrays of strings, timeout
 * whole seconds from 1 to INT_MAX / 1000 (it is poll(2)'s int of ms).  Returns 0 or
 * -1 with err naming the JSON path (errnum 0). */
int oci_hooks_load(const char *bundle, char **json, struct nsrun_error *err);

/* Reads BUNDLE/config.json's annotations into *json (malloc'd; NULL: none) and
 * checks it is an object of strings (config.md "Annotations"): the state's
 * annotations (runtime.md "State"), which the hooks get too.  Returns 0 or -1 with
 * err naming the JSON path (errnum 0). */
int oci_annotations_load(const char *bundle, char **json, struct nsrun_error *err);

/* Runs the hooks named kind ("createRuntime", ...) of json (checked by
 * oci_hooks_load; NULL: none), in order, each with state (the state JSON) on its
 * stdin, its stdout and stderr our stderr, its timeout enforced with SIGKILL;
 * json is checked again first (it is the state directory's hooks.json).
 * Returns 0, or -1 with err at the first that fails ("hooks.KIND[N] PATH: exit
 * status N", "...: timed out after N s", or the errno of fork(2), execve(2)). */
int oci_hooks_run(const char *json, const char *kind, const char *state, struct nsrun_error *err);

/* Returns how many hooks of kind json (a hooks object as JSON text, or NULL) has:
 * 0 where it has none, or is NULL or not JSON. */
size_t oci_hooks_count(const char *json, const char *kind);

/* As oci_hooks_run, but every hook of kind runs even after one failed, and
 * warn(ctx, err) is called for each that failed: poststart and poststop (runtime.md
 * "Lifecycle": "log a warning, but the remaining hooks and lifecycle continue as
 * if the hook had succeeded").  Returns how many failed. */
int oci_hooks_run_each(const char *json, const char *kind, const char *state,
		       void (*warn)(void *ctx, const struct nsrun_error *err), void *ctx);

/* Runs the hooks of kind "createContainer" or "startContainer" of in (config.h;
 * in->hooks NULL: none) from inside the container, as oci_hooks_run does, each
 * given the state with status "creating" or "created" and pid (the container's
 * init, as the container's pid namespace numbers it: runc gives its getpid()).
 * Returns 0, or -1 with err as oci_hooks_run (ENOMEM for the state). */
int oci_hooks_run_inside(const struct nsrun_oci_inside *in, const char *kind, pid_t pid, struct nsrun_error *err);

#endif
