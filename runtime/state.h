/* state.h - the state of services on disk (see service.h for the layout):
 * $XDG_RUNTIME_DIR/nsrun/NAME/{state.json,log,lock}, or without XDG_RUNTIME_DIR
 * ${XDG_STATE_HOME:-$HOME/.local/state}/nsrun-services/NAME/...: never a name in
 * /tmp, which another user could make first. */
#ifndef NSRUN_STATE_H
#define NSRUN_STATE_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <yajl/yajl_gen.h>

#include "config.h"
#include "error.h"

#define NAME_MAX_LEN 64
#define STATE_FILE "state.json"
#define LOG_FILE "log"
#define LOCK_FILE "lock"

/* What state.json holds. */
struct service_state {
	char name[NAME_MAX_LEN + 1];
	long long pid;                  /* the monitor */
	char status[16];                /* "running", "exited", or "created" (made by nsrun api's
					 * create, not started: its config.json says how to) */
	long long exit_code;            /* exited: nsrun's exit status for the run */
	size_t n_ports;
	struct nsrun_publish ports[NSRUN_MAX_PUBLISH];  /* host_port as bound */
	char log[PATH_MAX];
	char image[256];
	char command[512];
	long long created;              /* seconds since the epoch */
	size_t n_labels;                /* --label */
	struct service_label {
		char key[NSRUN_LABEL_KEY_MAX + 1];
		char value[NSRUN_LABEL_VALUE_MAX + 1];
	} labels[NSRUN_MAX_LABELS];
	struct service_health {         /* --health-cmd (docker's State.Health) */
		char status[16];        /* "" (none), "starting", "healthy", "unhealthy" */
		long long failing_streak;       /* failed checks in a row */
		long long exit_code;    /* of the last check; -1: none yet or timed out */
		char output[256];       /* the last check's output, its start */
		long long checked;      /* when the last check ended, seconds since the epoch */
	} health;
	char bundle[PATH_MAX];          /* an OCI container's bundle (oci.h), else "" */
	bool tty;                       /* -t: its stdio is a pty (its log holds the terminal's bytes) */
	bool open_stdin;                /* -d -i: clients attach to its stdin (service_stdin.h) */
	char network[16];               /* its --network mode: "none", "pasta", "container" or
					 * "named" ("" if not recorded: an older nsrun's) */
	char joined[32];                /* an OCI container's namespaces joined by path besides the
					 * network's, comma-separated in this order: "ipc", "uts",
					 * "pid", "user" ("" none; exec joins them as it did,
					 * exec_target.h; delete kills only its own processes of a
					 * joined pid namespace) */
};

/* True if st has the label "KEY" (any value) or "KEY=VALUE", as want says. */
bool state_has_label(const struct service_state *st, const char *want);

/* True if st's "joined" names kind ("ipc", "uts", "pid" or "user"): an OCI
 * container that joined that namespace by path. */
bool state_joined(const struct service_state *st, const char *kind);

/* True if st stays until rm without a live lock: "exited" or "created" (a
 * "running" one whose lock is free lost its monitor, and with it the container). */
bool state_is_kept(const struct service_state *st);

/* True if name is a valid service name: docker's [a-zA-Z0-9][a-zA-Z0-9_.-]*, at most 64. */
bool service_name_valid(const char *name);

/* Opens $XDG_RUNTIME_DIR/nsrun, else ${XDG_STATE_HOME:-$HOME/.local/state}/nsrun-services
 * (HOME must be the caller's and not writable by others), making what is missing
 * 0700, refusing a symlink, another owner or access for group or others at the
 * last level.  Its path goes to path.  Returns the fd, or -1 with err (errnum 0 when
 * no private place exists: the message says to set XDG_RUNTIME_DIR). */
int state_open_root(char *path, size_t len, struct nsrun_error *err);

/* Opens dir under parent_fd (made 0700 if missing; shown names it in messages),
 * refusing a symlink, another owner or access for group or others.  Returns the
 * fd, or -1 with err. */
int state_open_private_dir(int parent_fd, const char *dir, const char *shown, struct nsrun_error *err);

/* Makes NAME's directory under root_fd: built under a temporary name (lock taken,
 * log created), then renamed without replacing (renameat2 RENAME_NOREPLACE), so a
 * duplicate fails and readers never see it half made.  Returns its fd, with the
 * locked *lock_fd and the *log_fd, or -1 with err (errnum 0: the name is in use). */
int state_create_dir(int root_fd, const char *name, int *lock_fd, int *log_fd, struct nsrun_error *err);

/* As state_create_dir, with one more file in it before it is seen: held, created
 * and locked (flock(2) LOCK_EX) as *held_fd, so that a reader never finds the
 * directory without it, nor it unlocked while its maker lives (an OCI create's
 * "creating"). */
int state_create_dir_held(int root_fd, const char *name, const char *held, int *held_fd, int *lock_fd, int *log_fd,
			  struct nsrun_error *err);

/* True while some process (the monitor, the container's init) holds the lock of dir_fd. */
bool state_is_alive(int dir_fd);

/* Writes st to state.json of dir_fd: a temporary file, fsync, rename(2).  Returns 0 or -1 (errno). */
int state_write(int dir_fd, const struct service_state *st);

/* Reads state.json of dir_fd into st.  Returns 0, or -1 (errno: ENOENT none yet, EINVAL not JSON). */
int state_read(int dir_fd, struct service_state *st);

/* st as a JSON map into g, with "state_dir": dir unless NULL. */
void state_gen(yajl_gen g, const struct service_state *st, const char *dir);

/* Removes NAME's directory under root_fd and its files.  Returns 0 or -1 (errno). */
int state_remove_dir(int root_fd, const char *name);

/* Removes the directory dir_fd, found as NAME under root_fd and seen not alive:
 * its files through dir_fd under its lock (so never those of a service started
 * under NAME since, nor of one that lives: EBUSY), then NAME if it is still that
 * directory.  One that another removed meanwhile is not an error.  Returns 0 or
 * -1 (errno). */
int state_remove_dead(int root_fd, const char *name, int dir_fd);

/* Prints the last max_lines lines of the log of dir_fd to out, after a header line. */
void state_print_log_tail(int dir_fd, FILE *out, int max_lines);

#endif
