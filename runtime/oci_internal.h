/* oci_internal.h - what oci.c and oci_verbs.c share (not an interface: oci.h is). */
#ifndef NSRUN_OCI_INTERNAL_H
#define NSRUN_OCI_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"

struct service_state;

#define FIFO_FILE "exec.fifo"           /* in ROOT/ID/ until start: the container is created */
#define PAUSED_FILE "paused"            /* in ROOT/ID/ while its cgroup is frozen (pause) */
#define CREATING_FILE "creating"        /* in ROOT/ID/ until create returns (its hooks run) */
#define GONE_WAIT_US (10ULL * 1000000)  /* delete: how long a killed container may take to go */

struct oci_globals {
	const char *root;       /* --root, or NULL: the default */
	const char *log;        /* --log FILE, or NULL: stderr only */
	bool log_json;          /* --log-format json */
	bool systemd_cgroup;    /* --systemd-cgroup: linux.cgroupsPath is "slice:prefix:name" */
};

/* The one error of a command: stderr (with its hint) and --log.  Return 1. */
int oci_fail(const struct oci_globals *g, const struct nsrun_error *err);
int oci_failf(const struct oci_globals *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One warning: to --log when there is one, else stderr. */
void oci_warn(const struct oci_globals *g, const char *msg);
/* Writes pid to path (a temporary name renamed over it).  Returns 0 or -1 with err. */
int oci_write_pid_file(const char *path, pid_t pid, struct nsrun_error *err);

/* Opens (making it) the state directory, its path into path.  Returns an fd or -1 with err. */
int oci_open_root(const struct oci_globals *g, char *path, size_t len, struct nsrun_error *err);
/* The directory of container id under root_fd, or -1 with err naming it. */
int oci_open_container(int root_fd, const char *id, struct nsrun_error *err);
/* Opens root and the ID argv[optind] into *root_fd, *dir_fd.  Returns 0 or -1 with err. */
int oci_open_id(const struct oci_globals *g, int argc, char **argv, int *root_fd, int *dir_fd, struct nsrun_error *err);
/* created (exec.fifo is there, also while creating); creating (its create has not
 * returned: prestart and createRuntime hooks may still run); paused (frozen by
 * pause); and "creating", "created", "running", "paused" or "stopped". */
bool oci_is_created(int dir_fd);
bool oci_is_creating(int dir_fd);
/* "creating" left by a create that is gone (killed during its hooks): nothing
 * holds the file's flock(2), which that create took */
bool oci_create_ended(int dir_fd);
bool oci_is_paused(int dir_fd);
const char *oci_status_of(int dir_fd);
/* state_read(3) of dir_fd, waiting up to GONE_WAIT_US while a live create has not
 * written it yet (its monitor writes it once forked).  Returns 0, or -1 with errno. */
int oci_state_read(int dir_fd, struct service_state *st);
/* Waits up to GONE_WAIT_US for the lock of dir_fd to be free.  Returns true if it is. */
bool oci_wait_gone(int dir_fd);

/* The state verb's JSON of dir_fd now, malloc'd, or NULL. */
char *oci_state_text(int dir_fd);
/* The state of dir_fd's container st with status, for a hook inside (config.h's
 * struct nsrun_oci_inside): *head up to the pid's value, *tail after it, both
 * malloc'd.  Returns 0 or -1 with errno. */
int oci_state_split(int dir_fd, const struct service_state *st, const char *status, char **head, char **tail);
/* The hooks create kept (oci_hooks.h), malloc'd, or NULL: none. */
char *oci_hooks_of(int dir_fd);
/* Runs hooks' kind with state on stdin (either NULL: nothing); a failure is a warning. */
void oci_hooks_warn(const struct oci_globals *g, const char *hooks, const char *kind, const char *state);

/* oci_create.c: create (run: then start, wait and delete unless --detach) and
 * start; argv[0] is the verb.  Return the exit status. */
int oci_cmd_create(const struct oci_globals *g, int argc, char **argv, bool run);
int oci_cmd_start(const struct oci_globals *g, int argc, char **argv);
/* Removes the state of container id (dir_fd, under root_fd), which has ended, then
 * runs its poststop hooks with the state it had (a failure a warning): delete's
 * and run's end.  Returns 0, or -1 with errno (nothing removed, no hook run). */
int oci_remove(const struct oci_globals *g, int root_fd, int dir_fd, const char *id);
/* The verbs of oci_verbs.c: argv[0] is the verb.  Return the exit status. */
int oci_cmd_state(const struct oci_globals *g, int argc, char **argv);
int oci_cmd_kill(const struct oci_globals *g, int argc, char **argv);
int oci_cmd_delete(const struct oci_globals *g, int argc, char **argv);
int oci_cmd_list(const struct oci_globals *g, int argc, char **argv);
int oci_cmd_features(void);
/* oci_exec.c: exec, ps, pause (pause false: resume), update. */
int oci_cmd_exec(const struct oci_globals *g, int argc, char **argv);
int oci_cmd_ps(const struct oci_globals *g, int argc, char **argv);
int oci_cmd_pause(const struct oci_globals *g, int argc, char **argv, bool pause);
int oci_cmd_update(const struct oci_globals *g, int argc, char **argv);
/* True if nsrun exec's argv (argv[1] "exec") is the OCI form: an option only runc's has. */
bool oci_exec_is_oci(int argc, char **argv);

#endif
