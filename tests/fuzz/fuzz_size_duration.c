/* fuzz_size_duration.c - fuzzes the number parsers of util.c: sizes (--memory,
 * --tmpfs-size, --output-limit ...), durations (--timeout, --stop-timeout, --cpus
 * ...) and plain integers (--pids-limit).  The first byte picks the parser, the
 * rest is the string.  A failure must leave a one-line message naming the option;
 * a success must round-trip where that is exact. */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nsrun_error err = { 0 };
	uint64_t v = 0, back = 0;
	char *s, buf[64];
	int rc;

	if (size < 1 || size > 4096)
		return 0;
	s = malloc(size);
	if (!s)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	switch (data[0] % 3) {
	case 0:
		rc = parse_size_bytes("--opt", s, &v, &err);
		if (rc == 0) { /* every size prints back as plain bytes and parses to itself */
			snprintf(buf, sizeof(buf), "%" PRIu64, v);
			if (parse_size_bytes("--opt", buf, &back, &err) < 0 || back != v)
				abort();
		}
		break;
	case 1:
		rc = parse_duration_us("--opt", s, &v, &err);
		if (rc == 0) { /* whole seconds round-trip; and 0 only from a zero */
			snprintf(buf, sizeof(buf), "%" PRIu64, v / 1000000);
			if (parse_duration_us("--opt", buf, &back, &err) < 0 || back != v / 1000000 * 1000000)
				abort();
			format_seconds(v, buf, sizeof(buf));
		}
		break;
	default:
		rc = parse_uint("--opt", s, 4194304, &v, &err);
		if (rc == 0 && v > 4194304)
			abort();
		break;
	}
	if (rc < 0 && (strncmp(err.msg, "--opt", 5) != 0 || strchr(err.msg, '\n')))
		abort();
	free(s);
	return 0;
}

#include "replay.h"
