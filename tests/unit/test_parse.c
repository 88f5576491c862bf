/* Unit tests of the strict option parsers (util.c) and container paths (config.c). */
#include <stdint.h>
#include <stdlib.h>

#include "config.h"
#include "tap.h"
#include "util.h"

static void size_ok(struct tap *t, const char *in, uint64_t want)
{
	struct nsrun_error err = { 0 };
	uint64_t got = 0;
	char desc[128];

	snprintf(desc, sizeof(desc), "size \"%s\" = %llu", in, (unsigned long long)want);
	tap_ok(t, parse_size_bytes("--memory", in, &got, &err) == 0 && got == want, desc);
}

static void size_bad(struct tap *t, const char *in, const char *msg)
{
	struct nsrun_error err = { 0 };
	uint64_t got = 0;
	char desc[128];

	snprintf(desc, sizeof(desc), "size \"%s\" rejected", in);
	tap_ok(t, parse_size_bytes("--memory", in, &got, &err) < 0, desc);
	tap_str(t, "  with its message", msg, err.msg);
}

static void dur_ok(struct tap *t, const char *in, uint64_t want)
{
	struct nsrun_error err = { 0 };
	uint64_t got = 0;
	char desc[128];

	snprintf(desc, sizeof(desc), "duration \"%s\" = %llu us", in, (unsigned long long)want);
	tap_ok(t, parse_duration_us("--timeout", in, &got, &err) == 0 && got == want, desc);
}

static void dur_bad(struct tap *t, const char *in)
{
	struct nsrun_error err = { 0 };
	uint64_t got = 0;
	char desc[128];

	snprintf(desc, sizeof(desc), "duration \"%s\" rejected", in);
	tap_ok(t, parse_duration_us("--timeout", in, &got, &err) < 0 && err.errnum == 0, desc);
}

static void path_is(struct tap *t, const char *in, const char *want)
{
	struct nsrun_error err = { 0 };
	char *got = config_container_path("-w", in, &err);
	char desc[128];

	snprintf(desc, sizeof(desc), "container path \"%s\" -> %s", in, want ? want : "error");
	if (want)
		tap_str(t, desc, want, got);
	else
		tap_ok(t, got == NULL && err.msg[0], desc);
	free(got);
}

int main(void)
{
	struct tap t = { 0 };
	struct nsrun_error err = { 0 };
	uint64_t v = 0;
	char buf[32];

	size_ok(&t, "4096", 4096);
	size_ok(&t, "64m", 64ULL << 20);
	size_ok(&t, "64M", 64ULL << 20);
	size_ok(&t, "1g", 1ULL << 30);
	size_ok(&t, "10k", 10240);
	size_ok(&t, "2MiB", 2ULL << 20);
	size_ok(&t, "0", 0);
	size_bad(&t, "12x", "--memory: \"12x\": unknown suffix (use k, m or g)");
	size_bad(&t, "", "--memory: \"\": not a size (use a number with k, m or g)");
	size_bad(&t, "-1", "--memory: \"-1\": not a size (use a number with k, m or g)");
	size_bad(&t, "99999999999999999999", "--memory: \"99999999999999999999\": too large");
	size_bad(&t, "17179869184g", "--memory: \"17179869184g\": too large");
	size_bad(&t, "1mm", "--memory: \"1mm\": unknown suffix (use k, m or g)");

	dur_ok(&t, "30", 30000000);
	dur_ok(&t, "1.5", 1500000);
	dur_ok(&t, "0.25", 250000);
	dur_ok(&t, ".5", 500000);
	dur_ok(&t, "2s", 2000000);
	dur_ok(&t, "0", 0);
	dur_ok(&t, "0.0000001", 1); /* positive: never "none" */
	dur_ok(&t, "0.000", 0);
	dur_bad(&t, "");
	dur_bad(&t, "-1");
	dur_bad(&t, "abc");
	dur_bad(&t, "1e3");
	dur_bad(&t, "nan");
	dur_bad(&t, "1.2.3");
	dur_bad(&t, ".");
	dur_bad(&t, "99999999999999999999");

	tap_ok(&t, parse_uint("--pids-limit", "128", 1000, &v, &err) == 0 && v == 128, "uint 128");
	tap_ok(&t, parse_uint("--pids-limit", "1001", 1000, &v, &err) < 0, "uint over the maximum rejected");
	tap_ok(&t, parse_uint("--pids-limit", "12a", 1000, &v, &err) < 0, "uint with junk rejected");
	tap_ok(&t, parse_uint("--pids-limit", " 1", 1000, &v, &err) < 0, "uint with a space rejected");

	format_seconds(2000000, buf, sizeof(buf));
	tap_str(&t, "2 s formats as 2s", "2s", buf);
	format_seconds(1500000, buf, sizeof(buf));
	tap_str(&t, "1.5 s formats as 1.5s", "1.5s", buf);

	path_is(&t, "/work", "/work");
	path_is(&t, "//a///b/./c/", "/a/b/c");
	path_is(&t, "/", "/");
	path_is(&t, "/a/../b", NULL);
	path_is(&t, "relative", NULL);
	path_is(&t, "", NULL);

	tap_ok(&t, is_env_assignment("A=1"), "env A=1");
	tap_ok(&t, is_env_assignment("_X9="), "env _X9= (empty value)");
	tap_ok(&t, !is_env_assignment("=1"), "env =1 rejected");
	tap_ok(&t, !is_env_assignment("1A=1"), "env 1A=1 rejected");
	tap_ok(&t, !is_env_assignment("A-B=1"), "env A-B=1 rejected");
	tap_ok(&t, !is_env_assignment("NOEQUALS"), "env without = rejected");
	return tap_done(&t);
}
