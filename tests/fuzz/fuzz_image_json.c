/* fuzz_image_json.c - fuzzes image.json (runtime/image.c image_merge_json): an
 * image's metadata is outside input (pulled or imported images).  The first byte
 * picks the mode (command, FILE, stdin), the rest is the document.  A failure must
 * leave a one-line message; a success in FILE/stdin mode must have put a non-empty
 * interpreter before the payload's arguments, and any workdir must be absolute. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nsrun_config cfg;
	struct nsrun_error err = { 0 };
	char *text;
	size_t args_before;

	if (size < 1 || size > (1 << 20))
		return 0;
	if (config_init(&cfg, &err) < 0)
		return 0;
	cfg.mode = (enum nsrun_mode)(data[0] % 3);
	cfg.image = strdup("fuzz");
	if (cfg.mode != NSRUN_MODE_COMMAND)
		strv_push(&cfg.process.args, "/work/prog");
	args_before = cfg.process.args.n;
	text = malloc(size);
	if (!text || !cfg.image) {
		free(text);
		config_free(&cfg);
		return 0;
	}
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	if (image_merge_json(&cfg, "image.json", text, &err) < 0) {
		if (!err.msg[0] || strchr(err.msg, '\n'))
			abort();
	} else {
		if (cfg.mode != NSRUN_MODE_COMMAND &&
		    (cfg.process.args.n <= args_before ||
		     strcmp(cfg.process.args.v[cfg.process.args.n - 1], "/work/prog") != 0))
			abort();
		if (cfg.process.cwd && cfg.process.cwd[0] != '/')
			abort();
		for (size_t i = 0; i < cfg.process.env.n; i++)
			if (!strchr(cfg.process.env.v[i], '='))
				abort();
	}
	free(text);
	config_free(&cfg);
	return 0;
}

#include "replay.h"
