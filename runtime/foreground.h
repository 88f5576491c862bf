/* foreground.h - a run in the foreground (nsrun without -d), for main.c: the run
 * itself in the best isolation tier, and its result as --json and --capture want it. */
#ifndef NSRUN_FOREGROUND_H
#define NSRUN_FOREGROUND_H

#include <stdbool.h>

#include "config.h"
#include "hostfile.h"
#include "result.h"
#include "timing.h"

/* Runs cfg (resolved, validated) as nsrun_run does and fills *result.  Without
 * --isolation (cfg->isolation_auto) full is tried at once; when its set-up fails
 * before the payload started, tier_choose's probes say whether a lower tier is
 * to be tried instead (tier.h); cfg->isolation may then change. */
void foreground_run(struct nsrun_config *cfg, struct nsrun_result *result, struct timing *timing);

/* Before the run: where the --json document goes ("-": stdout, *to_stdout set),
 * checked and opened now (host_out_prepare, hostfile.h).  Returns 0 or -1 with err. */
int foreground_json_prepare(const struct nsrun_config *cfg, struct host_out *h, bool *to_stdout,
			    struct nsrun_error *err);

/* Writes the --json document of r where foreground_json_prepare said.  Returns 0
 * or -1 with err (errno of the write). */
int foreground_json_write(const struct nsrun_result *r, const struct nsrun_config *cfg, struct host_out *h,
			  bool to_stdout, struct nsrun_error *err);

/* nsrun's own failure err as a --json document (status "error"), when --json was
 * parsed before it; nothing otherwise, and nothing more said if that fails. */
void foreground_json_error(const struct nsrun_config *cfg, const struct nsrun_error *err);

/* --capture without --json: the kept output to stdout and stderr, then a note per
 * stream that was cut.  Returns 0, or -1 (errno) when stdout could not take it. */
int foreground_print_captured(const struct nsrun_result *r);

#endif
