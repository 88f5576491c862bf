/* Unit tests of config.json's hooks as create checks them (oci_hooks.h): a
 * timeout is whole seconds that fit run_one's int of milliseconds; one past the
 * bound, or past what yajl holds as an integer, is refused naming its JSON path
 * (a bound of 2147483 s: INT_MAX / 1000).  And oci_hooks_run checks hooks.json
 * again (the state file create wrote) before it trusts a timeout. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "oci_hooks.h"
#include "tap.h"

static char dir[PATH_MAX];

/* oci_hooks_load of a bundle whose config.json has hooks.prestart [{path
 * /bin/true, timeout TIMEOUT}]; err its error.  Returns its return. */
static int load(const char *timeout, struct nsrun_error *err)
{
	char file[PATH_MAX + 16], *json = NULL;
	FILE *f;
	int rc;

	snprintf(file, sizeof(file), "%s/config.json", dir);
	if (!(f = fopen(file, "w")))
		return -2;
	fprintf(f, "{\"ociVersion\": \"1.2.0\", \"hooks\": {\"prestart\": [{\"path\": \"/bin/true\", \"timeout\": %s}]}}",
		timeout);
	fclose(f);
	memset(err, 0, sizeof(*err));
	rc = oci_hooks_load(dir, &json, err);
	free(json);
	return rc;
}

static const struct {
	const char *timeout, *want; /* want: the error; NULL: taken */
} cases[] = {
	{ "1", NULL },
	{ "2147483", NULL },
	{ "2147484", "config.json: hooks.prestart[0].timeout: 2147484: expected whole seconds, 1 to 2147483" },
	{ "4294968", "config.json: hooks.prestart[0].timeout: 4294968: expected whole seconds, 1 to 2147483" },
	{ "9223372036854775807",
	  "config.json: hooks.prestart[0].timeout: 9223372036854775807: expected whole seconds, 1 to 2147483" },
	{ "1e30", "config.json: hooks.prestart[0].timeout: 1e30: expected whole seconds, 1 to 2147483" },
	{ "99999999999999999999999", "config.json: hooks.prestart[0].timeout: 99999999999999999999999: expected "
				     "whole seconds, 1 to 2147483" },
	{ "0", "config.json: hooks.prestart[0].timeout: 0: expected whole seconds, 1 to 2147483" },
	{ "-5", "config.json: hooks.prestart[0].timeout: -5: expected whole seconds, 1 to 2147483" },
	{ "1.5", "config.json: hooks.prestart[0].timeout: 1.5: expected whole seconds, 1 to 2147483" },
	{ "\"10\"", "config.json: hooks.prestart[0].timeout: not a number: expected whole seconds, 1 to 2147483" },
};

int main(void)
{
	struct tap t = { 0 };
	struct nsrun_error err;
	const char *tmp = getenv("TMPDIR");
	char desc[256], file[PATH_MAX + 16];

	snprintf(dir, sizeof(dir), "%s/nsrun-test-hooks.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		printf("1..0 # SKIP mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = load(cases[i].timeout, &err);

		snprintf(desc, sizeof(desc), "timeout %s: %s", cases[i].timeout, cases[i].want ? "refused" : "taken");
		tap_int(&t, desc, cases[i].want ? -1 : 0, rc);
		if (cases[i].want)
			tap_str(&t, "  ... naming the field and the bound", cases[i].want, err.msg);
	}

	/* a hooks.json changed after create: its timeout is not trusted */
	memset(&err, 0, sizeof(err));
	tap_int(&t, "oci_hooks_run of hooks.json with a timeout past the bound: refused", -1,
		oci_hooks_run("{\"prestart\": [{\"path\": \"/bin/true\", \"timeout\": 4294968}]}", "prestart", "{}", &err));
	tap_str(&t, "  ... naming it", "config.json: hooks.prestart[0].timeout: 4294968: expected whole seconds, 1 to 2147483",
		err.msg);
	memset(&err, 0, sizeof(err));
	tap_int(&t, "  ... control: with a timeout within it, the hook runs", 0,
		oci_hooks_run("{\"prestart\": [{\"path\": \"/bin/true\", \"timeout\": 60}]}", "prestart", "{}", &err));

	snprintf(file, sizeof(file), "%s/config.json", dir);
	unlink(file);
	rmdir(dir);
	return tap_done(&t);
}
