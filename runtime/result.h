/* result.h - the outcome of a run, and the one mapping to an exit status.
 *
 * Exit status (as `docker run`):
 *   the payload's own status          status EXITED
 *   128 + N                           killed by signal N (SIGNALED)
 *   124                               the --timeout passed (TIMED_OUT)
 *   125                               nsrun itself failed (ERROR)
 *   126                               the command cannot be executed (EXEC_FAILED, not ENOENT)
 *   127                               the command was not found (EXEC_FAILED, ENOENT)
 */
#ifndef NSRUN_RESULT_H
#define NSRUN_RESULT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"

enum nsrun_status {
	NSRUN_STATUS_EXITED = 0,
	NSRUN_STATUS_SIGNALED,
	NSRUN_STATUS_TIMED_OUT,
	NSRUN_STATUS_EXEC_FAILED,
	NSRUN_STATUS_ERROR,
};

struct nsrun_result {
	enum nsrun_status status;
	int exit_code;          /* EXITED: the payload's status */
	int signal;             /* SIGNALED: the signal number */
	uint64_t timeout_us;    /* TIMED_OUT: the limit that passed */
	uint64_t wall_time_us;  /* from the start of set-up to the end of the run */
	struct nsrun_error error;       /* ERROR and EXEC_FAILED */
};

/* Name of a status ("exited", "signaled", "timed_out", "exec_failed", "error"). */
const char *result_status_name(enum nsrun_status status);

/* The exit status of nsrun for r, per the table above (0..255). */
int result_exit_code(const struct nsrun_result *r);

/* Prints what the user must be told on stderr (nothing for a normal exit):
 * "nsrun: timed out after 2s", "nsrun: <error>: <strerror>" and its hint. */
void result_report(const struct nsrun_result *r, FILE *out);

#endif
