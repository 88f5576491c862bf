/* exec_spec.h - what `nsrun exec` needs to know of a service's payload, kept
 * beside its state: NAME/exec.json (service.h has the directory).
 *
 * Written once by `nsrun -d` before the monitor starts, from the validated
 * configuration, and read by `nsrun exec`, so an exec'd process gets the very
 * settings of the payload that are not kernel state it could join or copy: its
 * uid/gid, working directory and environment, the seccomp profile (and the
 * profile directory it was looked up in), Landlock's switches and the paths and
 * ports its ruleset opens.  Namespaces, the cgroup and the rlimits are read from
 * the running payload itself (exec_join.h).  Plain data, yajl both ways.
 */
#ifndef NSRUN_EXEC_SPEC_H
#define NSRUN_EXEC_SPEC_H

#include "config.h"
#include "error.h"

#define EXEC_SPEC_FILE "exec.json"

/* Writes cfg's exec spec to dir_fd/exec.json (0600, a temporary file renamed
 * over, no symlink followed); profiles_dir is the seccomp profile directory
 * in force (seccomp_profiles_dir(), NULL: none).  Returns 0, or -1 with err
 * (errno of open(2), write(2), rename(2); ENOMEM). */
int exec_spec_write(int dir_fd, const struct nsrun_config *cfg, const char *profiles_dir, struct nsrun_error *err);

/* The JSON text of cfg's exec spec, malloc'd and NUL-terminated into *out.
 * Returns 0 or -1 with err (ENOMEM). */
int exec_spec_format(const struct nsrun_config *cfg, const char *profiles_dir, char **out, struct nsrun_error *err);

/* Parses an exec spec into cfg (config_init'ed by the caller; the fields the
 * spec has are replaced: process uid, gid, cwd, env; security; isolation;
 * rw mounts (destinations only), tmpfs destinations, published container
 * ports); *profiles_dir gets a malloc'd copy of the profile directory, or NULL.
 * Returns 0, or -1 with err (errnum 0: not a spec of this version). */
int exec_spec_parse(const char *text, size_t len, struct nsrun_config *cfg, char **profiles_dir,
		    struct nsrun_error *err);

/* Reads dir_fd/exec.json as exec_spec_parse does.  Returns 0, or -1 with err
 * (ENOENT: the service was started by an nsrun without exec). */
int exec_spec_read(int dir_fd, struct nsrun_config *cfg, char **profiles_dir, struct nsrun_error *err);

#endif
