/* Unit tests of the strict option parsers (util.c), container paths (config.c)
 * and the command line (cli_parse of main.c, linked as build/obj/cli-only.o). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "config.h"
#include "image.h"
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

/* cli_parse on a NULL-terminated argv after "nsrun"; returns its result, the
 * message in msg and the parsed config in *cfg (to be freed). */
static int cli(struct nsrun_config *cfg, char *msg, size_t len, const char *const *args)
{
	char *argv[32] = { (char *)"nsrun" };
	struct nsrun_error err = { 0 };
	int argc = 1, rc;

	for (; args[argc - 1]; argc++)
		argv[argc] = (char *)args[argc - 1];
	config_init(cfg, &err);
	rc = cli_parse(cfg, argc, argv, &err);
	snprintf(msg, len, "%s", rc < 0 ? err.msg : "");
	return rc;
}

static void cli_tests(struct tap *t)
{
	struct nsrun_config cfg;
	char msg[256];

	tap_int(t, "cli: --help is CLI_HELP, nothing printed, no exit", CLI_HELP,
		cli(&cfg, msg, sizeof(msg), (const char *const[]){ "--help", NULL }));
	config_free(&cfg);
	tap_int(t, "cli: --version is CLI_VERSION", CLI_VERSION,
		cli(&cfg, msg, sizeof(msg), (const char *const[]){ "--version", NULL }));
	config_free(&cfg);
	/* fuzz_cmdline's double free: a second --cgroup-parent that is refused left the
	 * first one freed but still in cfg; every string option is checked the same way */
	{
		static const char *const twice[][5] = {
			{ "--cgroup-parent", "a", "--cgroup-parent", "", NULL },
			{ "--cgroup-parent", "a", "--cgroup-parent", "../x", NULL },
			{ "--image", "a", "--image", "b", NULL },
			{ "--hostname", "a", "--hostname", "b", NULL },
			{ "--json", "a", "--json", "b", NULL },
			{ "--stdin", "a", "--stdin", "b", NULL },
			{ "--name", "a", "--name", "b", NULL },
			{ "--security-opt", "seccomp=a", "--security-opt", "seccomp=b", NULL },
		};
		for (size_t i = 0; i < sizeof(twice) / sizeof(twice[0]); i++) {
			char desc[128];
			int rc = cli(&cfg, msg, sizeof(msg), twice[i]);
			snprintf(desc, sizeof(desc), "cli: %s twice (%s), then freed once: %s", twice[i][0],
				 twice[i][3][0] ? twice[i][3] : "empty", rc < 0 ? "refused" : "the last wins");
			tap_ok(t, rc < 0 ? msg[0] != '\0' : true, desc);
			config_free(&cfg);      /* a double free aborts here (glibc) or in ASan */
		}
		tap_str(t, "cli: --cgroup-parent refused the second time keeps the first",
			"a", (cli(&cfg, msg, sizeof(msg), (const char *const[]){ "--cgroup-parent", "a", "--cgroup-parent", "",
			NULL }), cfg.cgroup_parent ? cfg.cgroup_parent : "(null)"));
		config_free(&cfg);
		tap_str(t, "cli: --image given twice: the last wins", "b",
			(cli(&cfg, msg, sizeof(msg), (const char *const[]){ "--image", "a", "--image", "b", NULL }),
			 cfg.image ? cfg.image : "(null)"));
		config_free(&cfg);
	}
	/* a second parse starts afresh (getopt state reset): the same argv gives the same result */
	for (int round = 0; round < 2; round++) {
		int rc = cli(&cfg, msg, sizeof(msg), (const char *const[]){ "--image", "python", "--stop-timeout", "0.5",
									  "--timeout", "3", "--", "echo", "hi", NULL });
		tap_ok(t, rc == CLI_RUN && cfg.mode == NSRUN_MODE_COMMAND && cfg.process.args.n == 2 &&
			   cfg.limits.stop_timeout_us == 500000 && cfg.limits.timeout_us == 3000000,
		       round ? "cli: parsed again, same result" : "cli: command mode, --stop-timeout 0.5, --timeout 3");
		config_free(&cfg);
	}
	tap_int(t, "cli: default --stop-timeout is 2 s", 2000000,
		(cli(&cfg, msg, sizeof(msg), (const char *const[]){ "--", "true", NULL }), (long long)cfg.limits.stop_timeout_us));
	config_free(&cfg);
	tap_int(t, "cli: --network pasta", NSRUN_NETWORK_PASTA,
		(cli(&cfg, msg, sizeof(msg), (const char *const[]){ "--network", "pasta", "--", "true", NULL }),
		 (long long)cfg.network));
	config_free(&cfg);
	tap_int(t, "cli: --network none after pasta: the last wins", NSRUN_NETWORK_NONE,
		(cli(&cfg, msg, sizeof(msg), (const char *const[]){ "--network", "pasta", "--network", "none", "--", "true",
		 NULL }), (long long)cfg.network));
	config_free(&cfg);
	cli(&cfg, msg, sizeof(msg), (const char *const[]){ "--network", "bridge", "--", "true", NULL });
	tap_str(t, "cli: --network bridge is refused (no network of the host's)",
		"--network: \"bridge\": refused: nsrun gives a container no network of the host's", msg);
	config_free(&cfg);
	tap_ok(t, cli(&cfg, msg, sizeof(msg), (const char *const[]){ "--network", "container:db", "--", "true", NULL }) ==
		   CLI_RUN && cfg.network == NSRUN_NETWORK_CONTAINER && cfg.network_name &&
		   strcmp(cfg.network_name, "db") == 0, "cli: --network container:db");
	config_free(&cfg);
	tap_ok(t, cli(&cfg, msg, sizeof(msg), (const char *const[]){ "--network", "backend", "--network", "none", "--",
									"true", NULL }) == CLI_RUN &&
		   cfg.network == NSRUN_NETWORK_NONE, "cli: --network NAME, then none: the last wins");
	config_free(&cfg);
	tap_ok(t, cli(&cfg, msg, sizeof(msg), (const char *const[]){ "--network", "backend", "--", "true", NULL }) ==
		   CLI_RUN && cfg.network == NSRUN_NETWORK_NAMED && strcmp(cfg.network_name, "backend") == 0,
	       "cli: --network backend: a named network");
	config_free(&cfg);
	cli(&cfg, msg, sizeof(msg), (const char *const[]){ "--network", "container:", "--", "true", NULL });
	tap_str(t, "cli: --network container: without a name is refused",
		"--network: \"container:\": unknown, and not a service name ([a-zA-Z0-9][a-zA-Z0-9_.-]*, at most 64)", msg);
	config_free(&cfg);
	cli(&cfg, msg, sizeof(msg), (const char *const[]){ "--network", "../x", "--", "true", NULL });
	tap_str(t, "cli: --network ../x is refused",
		"--network: \"../x\": unknown, and not a network name ([a-zA-Z0-9][a-zA-Z0-9_.-]*, at most 64)", msg);
	config_free(&cfg);
	tap_int(t, "cli: --output-limit 1g, the most, is taken", 1LL << 30,
		(cli(&cfg, msg, sizeof(msg), (const char *const[]){ "--output-limit", "1g", "--", "true", NULL }),
		 (long long)cfg.output.limit_bytes));
	config_free(&cfg);
	cli(&cfg, msg, sizeof(msg), (const char *const[]){ "--output-limit", "1073741825", "--", "true", NULL });
	tap_str(t, "cli: --output-limit one byte past 1g is refused",
		"--output-limit: \"1073741825\": at most 1g (what is kept is held in memory; -v DIR:/out:rw keeps more "
		"in a file)", msg);
	config_free(&cfg);
	cli(&cfg, msg, sizeof(msg), (const char *const[]){ "--bogus", NULL });
	tap_str(t, "cli: unknown long option", "--bogus: unknown option (see nsrun --help)", msg);
	config_free(&cfg);
	cli(&cfg, msg, sizeof(msg), (const char *const[]){ "-z", NULL });
	tap_str(t, "cli: unknown short option", "-z: unknown option (see nsrun --help)", msg);
	config_free(&cfg);
	cli(&cfg, msg, sizeof(msg), (const char *const[]){ "--timeout", NULL });
	tap_str(t, "cli: option without its value", "--timeout: needs a value (see nsrun --help)", msg);
	config_free(&cfg);
	/* regression (fuzz_cmdline): user text in a message cannot start a new line or an escape */
	cli(&cfg, msg, sizeof(msg), (const char *const[]){ "-e", "A\nnsrun: forged\x1b[2J=1", "--", "x", NULL });
	tap_str(t, "cli: control characters of input are '?' in the message",
		"--env: \"A?nsrun: forged?[2J=1\": expected KEY=VALUE with KEY a name", msg);
	config_free(&cfg);
	cli(&cfg, msg, sizeof(msg), (const char *const[]){ "--hostname", "a\nb", "--", "x", NULL });
	tap_str(t, "cli: a hostname is letters, digits, '.' and '-'",
		"--hostname: \"a?b\": must be 1 to 64 letters, digits, '.' and '-' (RFC 1123)", msg);
	config_free(&cfg);
	cli(&cfg, msg, sizeof(msg), (const char *const[]){ "--rootfs", "/", NULL });
	tap_str(t, "cli: no command", "no command: give FILE, - or -- CMD [ARG...] (see nsrun --help)", msg);
	config_free(&cfg);
}

/* JSON nesting: the cap counts brackets outside strings only; an image.json
 * nested 400,000 deep (which crashed yajl's recursive parser) is one message */
static void image_json_depth_tests(struct tap *t)
{
	const size_t deep = 400000;
	char ok[2 * JSON_MAX_DEPTH + 1], over[2 * JSON_MAX_DEPTH + 3];
	const char *quoted = "{\"env\": [\"A=[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"]}";
	char *text = malloc(deep + 32);
	struct nsrun_config cfg;
	struct nsrun_error err = { 0 };

	memset(ok, '[', JSON_MAX_DEPTH);
	memset(ok + JSON_MAX_DEPTH, ']', JSON_MAX_DEPTH);
	ok[2 * JSON_MAX_DEPTH] = '\0';
	tap_int(t, "json depth: JSON_MAX_DEPTH levels pass", (long long)strlen(ok),
		(long long)json_scan_depth(ok, strlen(ok), JSON_MAX_DEPTH));
	memset(over, '{', JSON_MAX_DEPTH + 1);
	memset(over + JSON_MAX_DEPTH + 1, '}', JSON_MAX_DEPTH + 1);
	over[2 * JSON_MAX_DEPTH + 2] = '\0';
	tap_int(t, "json depth: one more level stops at its bracket", JSON_MAX_DEPTH,
		(long long)json_scan_depth(over, strlen(over), JSON_MAX_DEPTH));
	tap_int(t, "json depth: brackets inside strings do not count", (long long)strlen(quoted),
		(long long)json_scan_depth(quoted, strlen(quoted), JSON_MAX_DEPTH));
	if (!text)
		return;
	memcpy(text, "{\"env\": ", 8);
	memset(text + 8, '[', deep);
	text[8 + deep] = '\0';
	config_init(&cfg, &err);
	cfg.mode = NSRUN_MODE_FILE;
	cfg.image = strdup("fuzz");
	tap_ok(t, image_merge_json(&cfg, "image.json", text, &err) < 0, "image.json nested 400,000 deep rejected");
	tap_str(t, "  with its message", "image.json \"image.json\": nested deeper than 32 levels at offset 39",
		err.msg);
	config_free(&cfg);
	free(text);
}

/* json_scan_nul: only the escape itself, inside a string, counts */
static void image_json_nul_tests(struct tap *t)
{
	static const struct {
		const char *text;
		size_t want; /* SIZE_MAX: none (the text's length) */
	} cases[] = {
		{ "{\"a\": \"x\\u0000\"}", 8 },
		{ "{\"a\": \"x\\\\u0000\"}", SIZE_MAX },  /* an escaped backslash, then "u0000" */
		{ "{\"a\": \"\\u00001\"}", 7 },
		{ "{\"a\": \"\\u0001\"}", SIZE_MAX },
		{ "{\"a\": \"\\\"\\u0000\"}", 9 },       /* after an escaped quote: still in the string */
		{ "{\"a\": \"\\u000", SIZE_MAX },             /* cut short */
	};
	char desc[128];
	struct nsrun_config cfg;
	struct nsrun_error err = { 0 };
	char *big = malloc(ENV_ENTRY_MAX + 64);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = strlen(cases[i].text);
		snprintf(desc, sizeof(desc), "json_scan_nul(%s)", cases[i].text);
		tap_int(t, desc, (long long)(cases[i].want == SIZE_MAX ? len : cases[i].want),
			(long long)json_scan_nul(cases[i].text, len));
	}
	if (!big)
		return;
	/* an env entry execve takes (131071 bytes), and one byte more */
	for (int over = 0; over <= 1; over++) {
		size_t n = (size_t)ENV_ENTRY_MAX + (size_t)over;
		memcpy(big, "{\"env\": [\"A=", 12);
		memset(big + 12, 'x', n - 2);
		strcpy(big + 12 + n - 2, "\"]}");
		config_init(&cfg, &err);
		cfg.mode = NSRUN_MODE_COMMAND;
		strv_push(&cfg.process.args, "true");
		snprintf(desc, sizeof(desc), "an env entry of %zu bytes %s", n, over ? "rejected" : "accepted");
		tap_int(t, desc, over ? -1 : 0, image_merge_json(&cfg, "image.json", big, &err));
		if (over)
			tap_str(t, "  with its message",
				"image.json \"image.json\": env[0] is longer than 131071 bytes, which execve(2) refuses", err.msg);
		config_free(&cfg);
	}
	free(big);
}

/* image.json of the wrong types (fuzz_image_json's corpus) */
static void image_json_tests(struct tap *t)
{
	static const struct {
		const char *json, *msg;
	} bad[] = {
		{ "{\"interpreter\": \"python3\"}", "image.json: \"interpreter\" must be an array of strings" },
		{ "{\"env\": [1]}", "image.json: env[0] must be a string" },
		{ "{\"env\": [\"=x\"]}", "image.json \"image.json\": env[0] is not KEY=VALUE" },
		{ "{\"workdir\": 5}", "image.json \"image.json\": \"workdir\" must be a string" },
		{ "[]", "image.json \"image.json\": must be a JSON object" },
		{ "{\"interpreter\": []}", "image \"fuzz\" has no interpreter: use -- CMD" },
		{ "{\"interpreter\": [\"python3\", \"\"]}", "image.json \"image.json\": interpreter[1] is an empty string" },
		/* yajl would hand "A=1" on: the NUL is refused before it parses */
		{ "{\"env\": [\"OK=1\", \"A=1\\u0000B=2\"]}",
		  "image.json \"image.json\": a string holds a NUL character (\\u0000) at offset 21: no argument, path "
		  "or environment entry can" },
		{ "{\"workdir\": \"/a/../etc\"}", "image workdir: \"/a/../etc\": \"..\" is not allowed" },
		{ "{\"workdir\": \"relative\"}",
		  "image workdir: \"relative\": must be an absolute path inside the container" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct nsrun_config cfg;
		struct nsrun_error err = { 0 };
		char desc[128];

		config_init(&cfg, &err);
		cfg.mode = NSRUN_MODE_FILE;
		cfg.image = strdup("fuzz");
		snprintf(desc, sizeof(desc), "image.json %s rejected", bad[i].json);
		tap_ok(t, image_merge_json(&cfg, "image.json", bad[i].json, &err) < 0, desc);
		tap_str(t, "  with its message", bad[i].msg, err.msg);
		config_free(&cfg);
	}
	image_json_depth_tests(t);
	image_json_nul_tests(t);
}

/* docker run's rule for the command (image.c command_argv): Entrypoint, then the
 * given command, else Cmd; --entrypoint replaces the Entrypoint and drops Cmd */
static void image_command_tests(struct tap *t)
{
	static const struct {
		const char *json, *entrypoint, *args[3], *want, *desc;
	} cases[] = {
		{ "{\"entrypoint\":[\"ep\",\"-x\"],\"cmd\":[\"c\"]}", NULL, { NULL }, "ep -x c", "no command: Entrypoint, Cmd" },
		{ "{\"entrypoint\":[\"ep\"],\"cmd\":[\"c\"]}", NULL, { "a", "b" }, "ep a b", "-- CMD under the Entrypoint" },
		{ "{\"cmd\":[\"c\"]}", NULL, { "a" }, "a", "no Entrypoint (nsrun-image's): -- CMD as it is" },
		{ "{\"entrypoint\":[\"ep\"],\"cmd\":[\"c\"]}", "", { "a" }, "a", "--entrypoint '': -- CMD alone" },
		{ "{\"entrypoint\":[\"ep\"],\"cmd\":[\"c\"]}", "e", { NULL }, "e", "--entrypoint e, no command: not Cmd" },
		{ "{\"entrypoint\":[\"ep\"],\"cmd\":[\"c\"]}", "e", { "a" }, "e a", "--entrypoint e -- a" },
		{ "{\"entrypoint\":[\"ep\"],\"cmd\":[\"c\"]}", "", { NULL }, NULL, "--entrypoint '' and no command: refused" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct nsrun_config cfg;
		struct nsrun_error err = { 0 };
		char got[128] = "";
		int rc;

		config_init(&cfg, &err);
		cfg.mode = NSRUN_MODE_COMMAND;
		cfg.image = strdup("img");
		cfg.entrypoint = cases[i].entrypoint ? strdup(cases[i].entrypoint) : NULL;
		for (size_t j = 0; cases[i].args[j]; j++)
			strv_push(&cfg.process.args, cases[i].args[j]);
		rc = image_merge_json(&cfg, "image.json", cases[i].json, &err);
		if (rc == 0)
			shell_quote_join((const char **)cfg.process.args.v, cfg.process.args.n, got, sizeof(got));
		tap_str(t, cases[i].desc, cases[i].want ? cases[i].want : "refused", rc == 0 ? got : "refused");
		config_free(&cfg);
	}
}

/* shell_quote_join: what nsrun ps shows of a service's command */
static bool same_strv(const struct strv *a, const struct strv *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i], b->v[i]) != 0)
			return false;
	return true;
}

/* strv_setenv_many is n strv_setenv in one sort (a pool request's env: 60,000
 * entries took 12 s one at a time, a breaker's) */
static void setenv_many_cases(struct tap *t)
{
	struct strv a = { 0 }, b = { 0 }, want = { 0 };
	static const char *const kvs[] = { "B=3", "C=4", "A=5", "C=6", "AB=7", "A=" };
	char buf[64];
	unsigned seed = 7;
	bool ok = true;

	strv_push(&a, "A=1");
	strv_push(&a, "B=2");
	strv_push(&want, "A=");
	strv_push(&want, "B=3");
	strv_push(&want, "C=6");
	strv_push(&want, "AB=7");
	tap_ok(t, strv_setenv_many(&a, kvs, 6) == 0 && same_strv(&a, &want),
	       "setenv_many: a key keeps its first place and takes its last value; AB is not A");
	strv_free(&a);
	strv_free(&want);
	/* the same as one strv_setenv each, over 3000 entries of 40 keys */
	{
		static char text[3000][16];
		const char *many[3000];
		strv_push(&a, "K7=base");
		strv_push(&b, "K7=base");
		for (size_t i = 0; i < 3000; i++) {
			seed = seed * 1103515245u + 12345u;
			snprintf(text[i], sizeof(text[i]), "K%u=%zu", (seed >> 16) % 40, i);
			many[i] = text[i];
			ok = ok && strv_setenv(&b, text[i]) == 0;
		}
		tap_ok(t, ok && strv_setenv_many(&a, many, 3000) == 0 && same_strv(&a, &b) && a.n == 40,
		       "setenv_many: 3000 entries as 3000 strv_setenv");
		strv_free(&a);
		strv_free(&b);
	}
	/* 200,000 distinct keys: all there */
	{
		const char **many = calloc(200000, sizeof(*many));
		char *pool = calloc(200000, 16);
		for (size_t i = 0; many && pool && i < 200000; i++) {
			snprintf(pool + 16 * i, 16, "V%zu=x", i);
			many[i] = pool + 16 * i;
		}
		snprintf(buf, sizeof(buf), "V199999=x");
		tap_ok(t, many && pool && strv_setenv_many(&a, many, 200000) == 0 && a.n == 200000 &&
		       strcmp(a.v[199999], buf) == 0, "setenv_many: 200,000 keys");
		strv_free(&a);
		free(many);
		free(pool);
	}
	tap_ok(t, strv_setenv_many(&a, NULL, 0) == 0 && a.n == 0, "setenv_many: none into none");
}

static void quote_cases(struct tap *t)
{
	const char *a[] = { "redis-server", "", "a b", "it's", "--port=6379", "$HOME" };
	const char *two[] = { "abc", "defgh" };
	char buf[512], small[9];

	tap_str(t, "shell words: plain, empty, space, quote, option, $", "redis-server '' 'a b' 'it'\\''s' --port=6379 '$HOME'",
		shell_quote_join(a, 6, buf, sizeof(buf)));
	tap_str(t, "shell words: none", "", shell_quote_join(a, 0, buf, sizeof(buf)));
	tap_str(t, "shell words: a word that does not fit whole ends in ...", "abc ...", shell_quote_join(two, 2, small, sizeof(small)));
	tap_str(t, "shell words: exactly full", "abc defgh", shell_quote_join(two, 2, buf, 10));
}

int main(void)
{
	struct tap t = { 0 };
	struct nsrun_error err = { 0 };
	uint64_t v = 0;
	char buf[32];

	quote_cases(&t);
	setenv_many_cases(&t);
	image_command_tests(&t);
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
	cli_tests(&t);
	image_json_tests(&t);
	return tap_done(&t);
}
