/* cmd_exec.c - see cmd_exec.h. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_exec.h"
#include "config.h"
#include "exec_join.h"
#include "util.h"

const char exec_usage_text[] =
	"Usage: nsrun exec [OPTIONS] NAME [--] CMD [ARG...]\n"
	"Run CMD in the running service NAME, as its payload runs (namespaces, uid, no\n"
	"capabilities, no_new_privs, Landlock, seccomp, cgroup, rlimits); exit status as\n"
	"docker exec: CMD's, 128+N for signal N, 126 cannot execute, 127 not found, 125 nsrun's error.\n"
	"  -e, --env KEY[=VALUE]     set a variable over the service's (KEY alone: nsrun's value)\n"
	"  -w, --workdir DIR         working directory inside (default: the service's)\n"
	"  -u, --user USER[:GROUP]  ids inside: numbers, or names of the container's /etc/passwd\n"
	"                            and /etc/group (default: the service's payload's)\n"
	"  -i, --interactive         pass nsrun's stdin (default: /dev/null, as docker exec)\n"
	"  -t, --tty                 a terminal (pty) inside, relayed to nsrun's (-it for a shell)\n"
	"  --debug                   say what was found and joined\n"
	"  --archive-get PATH        no CMD: a tar of PATH on stdout, after a line with its stat\n"
	"  --archive-put DIR         no CMD: extract the tar on stdin (-i) into DIR, then a line\n"
	"  --archive-stat PATH       no CMD: the line alone (the three are docker cp's, for nsrun api:\n"
	"                            docs/docker-api.md)\n";

enum { OPT_DEBUG = 256, OPT_ARCHIVE_GET, OPT_ARCHIVE_PUT, OPT_ARCHIVE_STAT };

static const struct option exec_options[] = {
	{ "env", required_argument, NULL, 'e' },
	{ "workdir", required_argument, NULL, 'w' },
	{ "user", required_argument, NULL, 'u' },
	{ "interactive", no_argument, NULL, 'i' },
	{ "tty", no_argument, NULL, 't' },
	{ "debug", no_argument, NULL, OPT_DEBUG },
	{ "archive-get", required_argument, NULL, OPT_ARCHIVE_GET },
	{ "archive-put", required_argument, NULL, OPT_ARCHIVE_PUT },
	{ "archive-stat", required_argument, NULL, OPT_ARCHIVE_STAT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* -e KEY=VALUE, or KEY alone for nsrun's own value (unset: not passed), as docker. */
static int add_env(struct strv *env, const char *arg, struct nsrun_error *err)
{
	char *kv = NULL;
	int rc;

	if (strchr(arg, '=')) {
		if (!is_env_assignment(arg))
			return error_set(err, 0, "--env: \"%s\": expected KEY=VALUE with KEY a name", arg);
		return strv_push(env, arg) < 0 ? error_set(err, ENOMEM, "--env") : 0;
	}
	if (asprintf(&kv, "%s=%s", arg, getenv(arg) ? getenv(arg) : "") < 0)
		return error_set(err, ENOMEM, "--env");
	if (!is_env_assignment(kv))
		rc = error_set(err, 0, "--env: \"%s\": expected KEY=VALUE with KEY a name", arg);
	else
		rc = getenv(arg) && strv_push(env, kv) < 0 ? error_set(err, ENOMEM, "--env") : 0;
	free(kv);
	return rc;
}

static int parse(int argc, char **argv, struct nsrun_exec_config *x, struct strv *env, char **workdir,
		 struct nsrun_error *err)
{
	int c;

	err->stage = STAGE_CONFIG;
	opterr = 0;
	optind = 2;
	while ((c = getopt_long(argc, argv, "+:e:w:u:ith", exec_options, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (add_env(env, optarg, err) < 0)
				return -1;
			break;
		case 'w':
			free(*workdir);
			if (!(*workdir = config_container_path("--workdir", optarg, err)))
				return -1;
			break;
		case 'u': {
			struct nsrun_config tmp = { 0 };
			if (config_set_user_spec(&tmp, optarg, err) < 0)
				return -1;
			x->user_set = true;
			x->uid = tmp.process.uid;
			x->gid = tmp.process.gid;
			/* a name: looked up in the container once it is found (exec_join.c) */
			x->user_spec = tmp.user_spec ? optarg : NULL;
			free(tmp.user_spec);
			break;
		}
		case 'i':
			x->interactive = true;
			break;
		case 't':
			x->tty = true;
			break;
		case OPT_DEBUG:
			x->debug = true;
			break;
		case OPT_ARCHIVE_GET:
		case OPT_ARCHIVE_PUT:
		case OPT_ARCHIVE_STAT:
			if (optarg[0] != '/')
				return error_set(err, 0, "exec --archive-*: \"%s\": expected an absolute path",
					 optarg);
			x->archive = c == OPT_ARCHIVE_GET ? COPY_ARCHIVE_GET :
				     c == OPT_ARCHIVE_PUT ? COPY_ARCHIVE_PUT : COPY_ARCHIVE_STAT;
			x->archive_path = optarg;
			break;
		case 'h':
			return 1;
		case ':':
			return error_set(err, 0, "exec %s: needs a value (see nsrun exec --help)", argv[optind - 1]);
		default:
			return error_set(err, 0, "exec %s: unknown option (see nsrun exec --help)", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return error_set(err, 0, "exec: no service: nsrun exec NAME -- CMD [ARG...]");
	x->name = argv[optind++];
	if (optind < argc && strcmp(argv[optind], "--") == 0)
		optind++;
	if (x->archive != COPY_ARCHIVE_NONE) {
		static char *const none[] = { "(archive)", NULL };
		if (optind < argc)
			return error_set(err, 0, "exec %s: --archive-* takes no command", x->name);
		if (x->tty)
			return error_set(err, 0, "exec %s: --archive-* takes no -t", x->name);
		x->argv = none;
		return 0;
	}
	if (optind >= argc)
		return error_set(err, 0, "exec %s: no command: nsrun exec NAME -- CMD [ARG...]", x->name);
	x->argv = argv + optind;
	return 0;
}

int exec_main(int argc, char **argv)
{
	struct nsrun_exec_config x = { 0 };
	struct nsrun_error err = { 0 };
	struct strv env = { 0 };
	char *workdir = NULL;
	int rc = parse(argc, argv, &x, &env, &workdir, &err);

	if (rc == 1) {
		fputs(exec_usage_text, stdout);
		rc = 0;
	} else if (rc < 0) {
		error_print(&err, stderr);
		rc = 125;
	} else {
		x.env = env.v;
		x.workdir = workdir;
		rc = exec_in_service(&x, &err);
		if (rc < 0) {
			error_print(&err, stderr);
			rc = 125;
		}
	}
	strv_free(&env);
	free(workdir);
	return rc;
}
