/* fuzz_cmdline.c - fuzzes nsrun's command line (cli_parse of runtime/main.c, built
 * with -DNSRUN_CLI_ONLY).  The input is argv after "nsrun", one argument per
 * NUL-separated piece (at most 64).  A failure must leave a one-line message;
 * a success must give a payload argv (command mode: at least the command), or
 * an image whose Entrypoint and Cmd will. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "config.h"

#define MAX_ARGS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nsrun_config cfg;
	struct nsrun_error err = { 0 };
	char *argv[MAX_ARGS + 2];
	char *buf;
	int argc = 1, rc;

	if (size > 65536)
		return 0;
	buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[0] = (char *)"nsrun";
	for (size_t i = 0; i < size && argc <= MAX_ARGS; argc++) {
		argv[argc] = buf + i;
		i += strlen(buf + i) + 1;
	}
	argv[argc] = NULL;
	if (config_init(&cfg, &err) == 0) {
		rc = cli_parse(&cfg, argc, argv, &err);
		if (rc < 0 && (!err.msg[0] || strchr(err.msg, '\n')))
			abort();
		/* no command: only with --image, whose Entrypoint and Cmd give it later */
		if (rc == CLI_RUN && cfg.process.args.n == 0 && !cfg.image)
			abort();
		config_free(&cfg);
	}
	free(buf);
	return 0;
}

#include "replay.h"
