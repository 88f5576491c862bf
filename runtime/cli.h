/* cli.h - the command line parser of main.c, callable on any argv, and the
 * resolution of what it parsed into a run's configuration (cli_resolve.c).
 *
 * main.c compiled with -DNSRUN_CLI_ONLY holds only the parser (no main): the
 * fuzzer (tests/fuzz/fuzz_cmdline.c) and the unit test link that object.
 */
#ifndef NSRUN_CLI_H
#define NSRUN_CLI_H

#include "config.h"

enum { CLI_RUN = 0, CLI_HELP = 1, CLI_VERSION = 2 };

/* Parses argv (argc entries, argv[0] the program name) into cfg (config_init'd):
 * options with getopt_long(3) (its global state is reset first, so it may be called
 * again), then the mode (FILE, -, -- CMD) and the payload's arguments.  No exit, no
 * output.  Reads the file system only to resolve --rootfs and FILE (realpath(3),
 * stat(2)) and the environment for -e KEY.  Returns CLI_RUN, CLI_HELP (-h/--help),
 * CLI_VERSION (--version), or -1 with err (STAGE_CONFIG). */
int cli_parse(struct nsrun_config *cfg, int argc, char **argv, struct nsrun_error *err);

/* After cli_parse and tier_choose (cli_resolve.c): completes cfg for a run, in
 * order: the environment's defaults, the image's (image_resolve), then -e; the
 * workdir (FILE mode: /work); --network pasta's /etc/resolv.conf and a named
 * network's /etc/hosts; FILE mode's interpreter looked for in the image.  Reads
 * image.json and the image's tree; a named network's member is registered
 * (network_add_member).  Prints a note to stderr when the image names a user that
 * is not applied.  Returns 0 or -1 with err (errnum 0 for a refusal). */
int cli_resolve(struct nsrun_config *cfg, struct nsrun_error *err);

/* --debug: cfg (resolved), its mount plan, its ids to stderr. */
void cli_debug_dump(const struct nsrun_config *cfg);

#endif
