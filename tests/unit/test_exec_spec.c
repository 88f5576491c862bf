/* Unit tests of the exec spec (exec_spec.c): what nsrun -d keeps for nsrun exec
 * comes back as it went in, and a spec that is not one is refused, never half read. */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "exec_spec.h"
#include "tap.h"

static void round_trip(struct tap *t)
{
	struct nsrun_config in, out;
	struct nsrun_error err = { 0 };
	char *text = NULL, *dir = NULL;

	config_init(&in, &err);
	in.isolation = NSRUN_ISOLATION_FULL;
	in.process.uid = 1000;
	in.process.gid = 1001;
	in.process.cwd = strdup("/srv");
	strv_setenv(&in.process.env, "PATH=/bin");
	strv_setenv(&in.process.env, "X=a \"quoted\" value\n");
	free(in.security.seccomp);
	in.security.seccomp = strdup("strict");
	in.security.landlock_no_tcp = true;
	in.security.allow_nested = true;
	config_add_volume(&in, "/tmp:/data:rw", &err);
	config_add_volume(&in, "/tmp:/ro", &err);
	config_add_tmpfs(&in, "/cache", &err);
	config_add_publish(&in, "0:6379", &err);
	tap_ok(t, exec_spec_format(&in, "/etc/profiles", &text, &err) == 0, "a configuration formats");
	config_init(&out, &err);
	tap_ok(t, text && exec_spec_parse(text, strlen(text), &out, &dir, &err) == 0, "  ... and parses back");
	tap_int(t, "  ... isolation", NSRUN_ISOLATION_FULL, out.isolation);
	tap_int(t, "  ... uid", 1000, out.process.uid);
	tap_int(t, "  ... gid", 1001, out.process.gid);
	tap_str(t, "  ... cwd", "/srv", out.process.cwd);
	tap_int(t, "  ... env entries", 2, (long long)out.process.env.n);
	tap_str(t, "  ... env with quotes and a newline", "a \"quoted\" value\n", strv_getenv(&out.process.env, "X"));
	tap_str(t, "  ... seccomp", "strict", out.security.seccomp);
	tap_str(t, "  ... profile directory", "/etc/profiles", dir);
	tap_ok(t, out.security.landlock && out.security.landlock_no_tcp && out.security.allow_nested &&
		  !out.security.strict, "  ... security switches");
	tap_int(t, "  ... only the rw volume", 1, (long long)out.n_mounts);
	tap_str(t, "  ... its destination", "/data", out.n_mounts ? out.mounts[0].destination : NULL);
	tap_str(t, "  ... the tmpfs", "/cache", out.n_tmpfs ? out.tmpfs[0].destination : NULL);
	tap_int(t, "  ... the published container port", 6379, out.n_publish ? out.publish[0].container_port : 0);
	free(text);
	free(dir);
	config_free(&in);
	config_free(&out);
}

static void refused(struct tap *t)
{
	static const char *const bad[] = {
		"", "[]", "{}", "{\"version\": 2, \"uid\": 1, \"gid\": 1, \"cwd\": \"/\", \"seccomp\": \"default\"}",
		"{\"version\": 1, \"uid\": -1, \"gid\": 1, \"cwd\": \"/\", \"seccomp\": \"default\"}",
		"{\"version\": 1, \"uid\": 1, \"gid\": 1, \"cwd\": \"rel\", \"seccomp\": \"default\"}",
		"{\"version\": 1, \"uid\": 1, \"gid\": 1, \"cwd\": \"/\"}",
		"{\"version\": 1, \"uid\": 1, \"gid\": 1, \"cwd\": \"/\", \"seccomp\": \"default\", \"env\": [\"=x\"]}",
		"{\"version\": 1, \"uid\": 1, \"gid\": 1, \"cwd\": \"/\", \"seccomp\": \"default\", \"env\": [1]}",
		"{\"version\": 1, \"uid\": 1, \"gid\": 1, \"cwd\": \"/\", \"seccomp\": \"default\", \"tmpfs\": [\"x\"]}",
		"{\"version\": 1, \"uid\": 1, \"gid\": 1, \"cwd\": \"/\", \"seccomp\": \"default\", \"published_ports\": [0]}",
		"{\"version\": 1, \"uid\": 1, \"gid\": 1, \"cwd\": \"/\", \"seccomp\": \"default\", \"isolation\": \"x\"}",
		"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct nsrun_config cfg;
		struct nsrun_error err = { 0 };
		char desc[96], *dir = NULL;
		config_init(&cfg, &err);
		snprintf(desc, sizeof(desc), "bad spec %zu is refused", i);
		tap_ok(t, exec_spec_parse(bad[i], strlen(bad[i]), &cfg, &dir, &err) < 0 && err.msg[0] && !dir, desc);
		config_free(&cfg);
	}
}

int main(void)
{
	struct tap t = { 0 };

	round_trip(&t);
	refused(&t);
	return tap_done(&t);
}
