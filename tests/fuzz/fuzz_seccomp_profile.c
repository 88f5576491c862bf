/* fuzz_seccomp_profile.c - fuzzes the seccomp profile parser.
 *
 * With libFuzzer: clang -fsanitize=fuzzer,address,undefined -DNSRUN_LIBFUZZER ...
 * Without it, main() replays every file named on the command line (the corpus
 * in tests/fuzz/corpus/seccomp/), so `make check` runs it with gcc too.
 * Each input is parsed; a parsed profile is also walked through
 * seccomp_profile_rule_applies() and the name tables.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seccomp_profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct seccomp_host host = { .machine = "x86_64", .kernel = { 6, 1, 0 } };
	struct seccomp_profile *p = NULL;
	struct nsrun_error err = { 0 };
	size_t sum = 0;

	if (seccomp_profile_parse_buffer("fuzz", (const char *)data, size, &p, &err) < 0) {
		/* Every failure must leave a one-line message naming the profile. */
		if (strncmp(err.msg, "seccomp profile \"fuzz\"", 22) != 0 || strchr(err.msg, '\n'))
			abort();
		return 0;
	}
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct seccomp_profile_rule *r = &p->rules[i];

		sum += seccomp_profile_rule_applies(r, &host, NULL);
		sum += strlen(seccomp_profile_action_name(r->action));
		for (size_t k = 0; k < r->n_args; k++) {
			if (r->args[k].index > SECCOMP_PROFILE_MAX_ARG)
				abort();
			sum += strlen(seccomp_profile_op_name(r->args[k].op));
		}
		for (size_t k = 0; k < r->n_names; k++)
			sum += strlen(r->names[k]);
	}
	seccomp_profile_free(p);
	return sum == (size_t)-1;
}

#include "replay.h"
