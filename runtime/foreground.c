/* foreground.c - a run in the foreground, as main.c makes it: the retry in a
 * lower isolation tier when full fails before the payload started, and where the
 * result goes (the --json document, --capture's output).  See foreground.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "foreground.h"
#include "run.h"
#include "tier.h"

/* Before the run: where the --json document goes ("-": stdout, *to_stdout set);
 * checked and resolved now (hostfile.h).  Returns 0 or -1 with err. */
int foreground_json_prepare(const struct nsrun_config *cfg, struct host_out *h, bool *to_stdout, struct nsrun_error *err)
{
	*to_stdout = cfg->output.json_path && strcmp(cfg->output.json_path, "-") == 0;
	if (!cfg->output.json_path || *to_stdout)
		return 0;
	return host_out_prepare(cfg->output.json_path, "--json", cfg, false, h, err);
}

/* Writes the document of r where foreground_json_prepare said.  Returns 0 or -1 with err. */
int foreground_json_write(const struct nsrun_result *r, const struct nsrun_config *cfg, struct host_out *h,
					  bool to_stdout, struct nsrun_error *err)
{
	FILE *f;

	if (to_stdout) {
		if (result_write_json(r, cfg, stdout) < 0 || fflush(stdout) != 0)
			return error_set(err, errno, "write the --json result");
		return 0;
	}
	if (!(f = host_out_begin(h, err)))
		return -1;
	if (result_write_json(r, cfg, f) < 0) {
		int e = errno;
		fclose(f);
		return error_set(err, e, "write the --json result");
	}
	return host_out_commit(h, f, err);
}

/* A harness asked for JSON: it gets a document for nsrun's own failure too
 * (status "error"), as long as --json was parsed before the failure. */
void foreground_json_error(const struct nsrun_config *cfg, const struct nsrun_error *err)
{
	struct nsrun_result r;
	struct nsrun_error ignored = { 0 };
	struct host_out h = { .dir_fd = -1, .fd = -1 };
	bool to_stdout = false;

	if (!cfg->output.json_path || foreground_json_prepare(cfg, &h, &to_stdout, &ignored) < 0) {
		host_out_free(&h);
		return;
	}
	memset(&r, 0, sizeof(r));
	r.status = NSRUN_STATUS_ERROR;
	r.error = *err;
	foreground_json_write(&r, cfg, &h, to_stdout, &ignored);
	host_out_free(&h);
}

/* --capture without --json: the kept output after the run, then a note per stream
 * that was cut.  Returns 0, or -1 (errno) when stdout could not take it. */
int foreground_print_captured(const struct nsrun_result *r)
{
	int rc = 0;

	if (r->out.len && fwrite(r->out.data, 1, r->out.len, stdout) != r->out.len)
		rc = -1;
	if (fflush(stdout) != 0)
		rc = -1;
	if (r->err_out.len)
		fwrite(r->err_out.data, 1, r->err_out.len, stderr);
	if (r->out.truncated)
		fprintf(stderr, "nsrun: stdout truncated: %llu bytes written, %zu kept (--output-limit)\n",
			(unsigned long long)r->out.total_bytes, r->out.len);
	if (r->err_out.truncated)
		fprintf(stderr, "nsrun: stderr truncated: %llu bytes written, %zu kept (--output-limit)\n",
			(unsigned long long)r->err_out.total_bytes, r->err_out.len);
	return rc;
}

/* Runs cfg.  Without --isolation (cfg->isolation_auto) full is tried at once, with
 * no probe before it; when its set-up fails before the payload started (nothing of
 * it ran, none of stdin was read: result->before_payload), tier_choose's probes
 * say whether full works here at all: if not, the run is made again in the highest
 * tier that does, its warning and --json naming the cause, and an option that tier
 * cannot give refused with that cause as the hint (config_validate); if full
 * works (the failure is this run's own) or nothing does, full's error stands.  The
 * probes cost only that failure's path.  Fills *result as nsrun_run does. */
void foreground_run(struct nsrun_config *cfg, struct nsrun_result *result, struct timing *timing)
{
	struct nsrun_error err = { 0 };

	nsrun_run(cfg, result, timing);
	if (!cfg->isolation_auto || result->status != NSRUN_STATUS_ERROR || !result->before_payload)
		return;
	if (cfg->debug) {
		char line[512];
		error_format(&result->error, line, sizeof(line));
		fprintf(stderr, "nsrun: debug: full isolation failed before the payload started (%s): probing the "
			"tiers\n", line);
	}
	cfg->isolation = NSRUN_ISOLATION_AUTO;
	if (tier_choose(cfg, &err) < 0 || cfg->isolation == NSRUN_ISOLATION_FULL) {
		cfg->isolation = NSRUN_ISOLATION_FULL;
		return;
	}
	result_free(result);
	if (config_validate(cfg, &err) < 0) {
		memset(result, 0, sizeof(*result));
		result->status = NSRUN_STATUS_ERROR;
		result->error = err;
		return;
	}
	cfg->isolation_retry = true;
	nsrun_run(cfg, result, timing);
}
