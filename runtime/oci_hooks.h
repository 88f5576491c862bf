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
 *   poststart                by start, once the payload exec'd; a failure is a
 *                            warning, and the next hooks still run;
 *   poststop                 by delete (and run, at its end), once the container
 *                            is gone; a failure is a warning, and the next hooks
 *                            still run.
 * createContainer and startContainer run in the container's namespaces, where
 * nsrun runs nothing but the payload and exec'd processes: refused at create. */
#ifndef NSRUN_OCI_HOOKS_H
#define NSRUN_OCI_HOOKS_H

#include "error.h"

#define HOOKS_FILE "hooks.json"         /* in ROOT/ID/: the config's hooks, kept by create */
#define ANNOTATIONS_FILE "annotations.json" /* in ROOT/ID/: the config's annotations, for the state */

/* Reads BUNDLE/config.json's hooks object into *json (malloc'd; NULL: none) and
 * checks it: each hook's path absolute, args and env arrays of strings, timeout
 * whole seconds from 1 to INT_MAX / 1000 (it is poll(2)'s int of ms);
 * createContainer and startContainer refused.  Returns 0 or
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

/* As oci_hooks_run, but every hook of kind runs even after one failed, and
 * warn(ctx, err) is called for each that failed: poststart and poststop (runtime.md
 * "Lifecycle": "log a warning, but the remaining hooks and lifecycle continue as
 * if the hook had succeeded").  Returns how many failed. */
int oci_hooks_run_each(const char *json, const char *kind, const char *state,
		       void (*warn)(void *ctx, const struct nsrun_error *err), void *ctx);

#endif
