/* Unit tests of the one exit-status mapping (result.c) against the documented table. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "result.h"
#include "tap.h"

int main(void)
{
	struct tap t = { 0 };
	struct nsrun_result r;
	struct nsrun_config cfg;
	char buf[2048];
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
	format_seconds(1, buf, sizeof(buf));
	tap_str(&t, "  ... a microsecond: no exponent", "0.000001s", buf);
	format_seconds(61250000, buf, sizeof(buf));
	tap_str(&t, "  ... 61.25s", "61.25s", buf);

	memset(&r, 0, sizeof(r));
	r.status = NSRUN_STATUS_EXITED;
	r.exit_code = 1;
	memset(buf, 0, sizeof(buf));
	f = fmemopen(buf, sizeof(buf), "w");
	result_report(&r, f);
	fclose(f);
	tap_str(&t, "a payload's failure prints nothing of nsrun's", "", buf);

	memset(&r, 0, sizeof(r));
	r.status = NSRUN_STATUS_OOM_KILLED;
	r.memory_limit_bytes = 64 << 20;
	r.memory_peak_bytes = (64 << 20) + 5;
	result_message(&r, buf, sizeof(buf));
	tap_str(&t, "out of memory: the limit and the peak", "killed: out of memory (limit 64 MiB, peak 64 MiB)", buf);
	r.memory_limit_bytes = 1;
	r.memory_peak_bytes = 0;
	result_message(&r, buf, sizeof(buf));
	tap_str(&t, "  ... --memory 1: 1 bytes, never 0 MiB", "killed: out of memory (limit 1 bytes)", buf);
	r.memory_limit_bytes = 512 << 10;
	result_message(&r, buf, sizeof(buf));
	tap_str(&t, "  ... --memory 512k: 512 KiB", "killed: out of memory (limit 512 KiB)", buf);

	/* issue 17, kind 7: every signal has a name, real-time ones as `kill -l` says */
	tap_str(&t, "signal name: SIGTERM", "SIGTERM", result_signal_name(SIGTERM, buf, sizeof(buf)));
	tap_str(&t, "signal name: SIGRTMIN", "SIGRTMIN", result_signal_name(SIGRTMIN, buf, sizeof(buf)));
	tap_str(&t, "signal name: SIGRTMIN+1", "SIGRTMIN+1", result_signal_name(SIGRTMIN + 1, buf, sizeof(buf)));
	tap_str(&t, "signal name: SIGRTMAX-1", "SIGRTMAX-1", result_signal_name(SIGRTMAX - 1, buf, sizeof(buf)));
	tap_str(&t, "signal name: SIGRTMAX", "SIGRTMAX", result_signal_name(SIGRTMAX, buf, sizeof(buf)));
	tap_str(&t, "signal name: 32, reserved by glibc", "SIG32", result_signal_name(32, buf, sizeof(buf)));
	for (int sig = 1; sig <= SIGRTMAX; sig++) {
		result_signal_name(sig, buf, sizeof(buf));
		if (strncmp(buf, "SIG", 3) != 0 || strspn(buf + 3, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-") !=
		                                       strlen(buf + 3) || !buf[3]) {
			tap_str(&t, "every signal 1..SIGRTMAX has a name of the schema's form", "SIG...", buf);
			break;
		}
		if (sig == SIGRTMAX)
			tap_str(&t, "every signal 1..SIGRTMAX has a name of the schema's form", "SIGRTMAX", buf);
	}
	memset(&r, 0, sizeof(r));
	r.status = NSRUN_STATUS_SIGNALED;
	r.signal = SIGRTMIN + 3;
	memset(buf, 0, sizeof(buf));
	f = fmemopen(buf, sizeof(buf), "w");
	memset(&cfg, 0, sizeof(cfg));
	result_write_json(&r, &cfg, f);
	fclose(f);
	tap_int(&t, "--json of a payload killed by SIGRTMIN+3: \"signal\": \"SIGRTMIN+3\"", 1,
	        strstr(buf, "\"signal\":\"SIGRTMIN+3\"") != NULL);
	/* a limit under a millisecond (a pool request's "timeout": 0.0005) is not said as 0 */
	memset(&r, 0, sizeof(r));
	r.status = NSRUN_STATUS_TIMED_OUT;
	memset(buf, 0, sizeof(buf));
	f = fmemopen(buf, sizeof(buf), "w");
	memset(&cfg, 0, sizeof(cfg));
	cfg.limits.timeout_us = 500;
	result_write_json(&r, &cfg, f);
	fclose(f);
	tap_int(&t, "--json of a 500 us timeout: \"timeout_ms\" 1, rounded up", 1,
	        strstr(buf, "\"timeout_ms\":{\"value\":1,") != NULL);
	return tap_done(&t);
}
