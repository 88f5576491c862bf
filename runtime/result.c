/* result.c - see result.h */
#include <errno.h>
#include <string.h>

#include "result.h"
#include "util.h"

const char *result_status_name(enum nsrun_status status)
{
	switch (status) {
	case NSRUN_STATUS_EXITED: return "exited";
	case NSRUN_STATUS_SIGNALED: return "signaled";
	case NSRUN_STATUS_TIMED_OUT: return "timed_out";
	case NSRUN_STATUS_EXEC_FAILED: return "exec_failed";
	case NSRUN_STATUS_ERROR: return "error";
	}
	return "unknown";
}

int result_exit_code(const struct nsrun_result *r)
{
	switch (r->status) {
	case NSRUN_STATUS_EXITED:
		return r->exit_code & 0xff;
	case NSRUN_STATUS_SIGNALED:
		return (128 + r->signal) & 0xff;
	case NSRUN_STATUS_TIMED_OUT:
		return 124;
	case NSRUN_STATUS_EXEC_FAILED:
		return r->error.errnum == ENOENT ? 127 : 126;
	case NSRUN_STATUS_ERROR:
		return 125;
	}
	return 125;
}

void result_report(const struct nsrun_result *r, FILE *out)
{
	char line[512];
	const char *hint;

	switch (r->status) {
	case NSRUN_STATUS_TIMED_OUT:
		format_seconds(r->timeout_us, line, sizeof(line));
		fprintf(out, "nsrun: timed out after %s\n", line);
		return;
	case NSRUN_STATUS_EXEC_FAILED:
	case NSRUN_STATUS_ERROR:
		error_format(&r->error, line, sizeof(line));
		fprintf(out, "nsrun: %s\n", line);
		hint = error_hint(&r->error);
		if (hint)
			fprintf(out, "nsrun: hint: %s\n", hint);
		return;
	case NSRUN_STATUS_EXITED:
	case NSRUN_STATUS_SIGNALED:
		return;
	}
}
