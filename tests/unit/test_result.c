/* Unit tests of the one exit-status mapping (result.c) against the documented table. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "result.h"
#include "tap.h"

int main(void)
{
	struct tap t = { 0 };
	struct nsrun_result r;
	char buf[256];
	FILE *f;

	memset(&r, 0, sizeof(r));
	r.status = NSRUN_STATUS_EXITED;
	tap_int(&t, "exit 0 -> 0", 0, result_exit_code(&r));
	r.exit_code = 3;
	tap_int(&t, "exit 3 -> 3", 3, result_exit_code(&r));
	r.exit_code = 125;
	tap_int(&t, "a payload's own 125 stays 125", 125, result_exit_code(&r));
	r.status = NSRUN_STATUS_SIGNALED;
	r.signal = SIGKILL;
	tap_int(&t, "SIGKILL -> 137", 137, result_exit_code(&r));
	r.signal = SIGSEGV;
	tap_int(&t, "SIGSEGV -> 139", 139, result_exit_code(&r));
	r.status = NSRUN_STATUS_TIMED_OUT;
	tap_int(&t, "timeout -> 124", 124, result_exit_code(&r));
	r.status = NSRUN_STATUS_ERROR;
	tap_int(&t, "nsrun error -> 125", 125, result_exit_code(&r));
	r.status = NSRUN_STATUS_EXEC_FAILED;
	r.error.errnum = ENOENT;
	tap_int(&t, "command not found -> 127", 127, result_exit_code(&r));
	r.error.errnum = EACCES;
	tap_int(&t, "not executable -> 126", 126, result_exit_code(&r));
	r.error.errnum = ENOEXEC;
	tap_int(&t, "exec format error -> 126", 126, result_exit_code(&r));

	tap_str(&t, "status names: exited", "exited", result_status_name(NSRUN_STATUS_EXITED));
	tap_str(&t, "status names: timed_out", "timed_out", result_status_name(NSRUN_STATUS_TIMED_OUT));

	memset(&r, 0, sizeof(r));
	r.status = NSRUN_STATUS_TIMED_OUT;
	r.timeout_us = 2500000;
	f = fmemopen(buf, sizeof(buf), "w");
	result_report(&r, f);
	fclose(f);
	tap_str(&t, "timeout report line", "nsrun: timed out after 2.5s\n", buf);

	memset(&r, 0, sizeof(r));
	r.status = NSRUN_STATUS_EXITED;
	r.exit_code = 1;
	memset(buf, 0, sizeof(buf));
	f = fmemopen(buf, sizeof(buf), "w");
	result_report(&r, f);
	fclose(f);
	tap_str(&t, "a payload's failure prints nothing of nsrun's", "", buf);
	return tap_done(&t);
}
