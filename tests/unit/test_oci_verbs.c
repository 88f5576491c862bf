/* Unit tests of how nsrun tells runc's command line from its own (oci.h,
 * oci_is_command): runc's ps has a container ID, runc's exec an option only it
 * has; nsrun's own ps and exec keep theirs (docs/oci-runtime.md). */
#include <stdbool.h>

#include "oci.h"
#include "tap.h"

static bool oci(const char *const *argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	return oci_is_command(argc, (char **)argv);
}

int main(void)
{
	struct tap t = { 0 };

	tap_ok(&t, oci((const char *[]){ "nsrun", "ps", "c1", NULL }), "ps ID: runc's");
	tap_ok(&t, oci((const char *[]){ "nsrun", "ps", "--format", "json", "c1", NULL }), "ps --format json ID: runc's");
	tap_ok(&t, !oci((const char *[]){ "nsrun", "ps", NULL }), "ps: nsrun's own");
	tap_ok(&t, !oci((const char *[]){ "nsrun", "ps", "--json", NULL }), "ps --json: nsrun's own");
	tap_ok(&t, !oci((const char *[]){ "nsrun", "ps", "--filter", "label=a", NULL }), "ps --filter X: nsrun's own");
	tap_ok(&t, oci((const char *[]){ "nsrun", "exec", "--pid-file", "p", "--process", "f", "--detach", "c1", NULL }),
	       "exec --pid-file --process --detach ID (conmon's): runc's");
	tap_ok(&t, oci((const char *[]){ "nsrun", "exec", "-d", "c1", "true", NULL }), "exec -d ID CMD: runc's");
	tap_ok(&t, oci((const char *[]){ "nsrun", "exec", "--console-socket=/s", "-t", "c1", "sh", NULL }),
	       "exec --console-socket=S: runc's");
	tap_ok(&t, !oci((const char *[]){ "nsrun", "exec", "-it", "web", "sh", NULL }), "exec -it NAME CMD: nsrun's own");
	tap_ok(&t, oci((const char *[]){ "nsrun", "exec", "--env", "A=1", "--pid-file", "p", "c1", "true", NULL }),
	       "exec --env K=V --pid-file F ID CMD: runc's (a value is skipped)");
	tap_ok(&t, !oci((const char *[]){ "nsrun", "exec", "-e", "A=1", "web", "tool", "--detach", NULL }),
	       "exec -e K=V NAME CMD --detach: nsrun's own (the command's argument)");
	tap_ok(&t, !oci((const char *[]){ "nsrun", "exec", "web", "--", "--pid-file", NULL }),
	       "exec NAME -- CMD with runc's option as an argument: nsrun's own");
	tap_ok(&t, oci((const char *[]){ "nsrun", "--root", "/r", "exec", "c1", "true", NULL }),
	       "--root DIR exec ID CMD: runc's");
	tap_ok(&t, oci((const char *[]){ "nsrun", "pause", "c1", NULL }), "pause: runc's");
	tap_ok(&t, oci((const char *[]){ "nsrun", "update", "--memory", "1g", "c1", NULL }), "update: runc's");
	return tap_done(&t);
}
