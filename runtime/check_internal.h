/* check_internal.h - what the probes of `nsrun check` share: the list of result
 * lines and the ways a probe runs (a child, a user namespace), for check.c and
 * check_ns.c.  Not an interface for anything else. */
#ifndef NSRUN_CHECK_INTERNAL_H
#define NSRUN_CHECK_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

#define PROC "/proc"

struct check_item {
	char name[32];
	bool ok;
	bool needed;            /* a default run needs it: missing, check fails */
	char detail[640];       /* ok: what was found (may be ""); missing: the cause */
	char fix[320];          /* missing: the fix, or "" */
};

struct check_list {
	struct check_item items[40];
	size_t n;
};

/* Appends a line (the last one is reused once the list is full) and returns it,
 * with detail and fix empty. */
struct check_item *check_add(struct check_list *l, const char *name, bool needed, bool ok);

/* Appends a line from a probe's error e: ok when errnum is 0 and msg empty (then
 * ok_detail, which may be NULL, is its detail), else e's message and hint. */
void check_add_error(struct check_list *l, const char *name, bool needed, const struct nsrun_error *e,
		     const char *ok_detail);

/* Runs fn in a child (fork(2)) that writes len bytes of report to a pipe and
 * exits.  Returns 0 when the report came back whole, or -1 with err (the child
 * died: a filter may kill it with SIGSYS). */
int check_in_child(void (*fn)(int out_fd, void *report), void *report, size_t len, struct nsrun_error *err);

/* In a probe's child: a new user namespace mapping our ids to 0, as a run makes
 * one (user_namespaces(7)).  Returns 0 or -1 with e (diagnose.h's cause). */
int check_enter_userns(struct nsrun_error *e);

/* check_ns.c: the namespaces (user, its nesting depth, mount, pid, net, ipc, uts,
 * cgroup, time); returns whether a user namespace can be made, which the others
 * need. */
bool check_namespaces(struct check_list *l);

/* check_ns.c: the start of a container, step for step as run.c and container.c
 * do it (socketpair, clone, id maps, sync, hostname, lo). */
void check_start(struct check_list *l);

/* check_ns.c: a fresh /proc, the /dev nodes, pivot_root, in a probe's own mount
 * and pid namespace; or, without a user namespace, one line saying they were
 * not tried. */
void check_mounts(struct check_list *l);
void check_mounts_skipped(struct check_list *l);

#endif
