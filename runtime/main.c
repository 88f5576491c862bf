/* main.c - the command line: options (Docker's names), subcommands, the one place
 * that prints an error, and the exit status from the result. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "api.h"
#include "caps.h"
#include "check.h"
#include "cleanup.h"
#include "cli.h"
#include "cmd_exec.h"
#include "config.h"
#include "copy_archive.h"
#include "foreground.h"
#include "hostfile.h"
#include "image.h"
#include "image_store.h"
#include "network.h"
#include "oci.h"
#include "oci_config.h"
#include "result.h"
#include "pool.h"
#include "run.h"
#include "seccomp.h"
#include "service.h"
#include "state.h"
#include "tier.h"
#include "timing.h"
#include "sys.h"

#ifndef NSRUN_VERSION
#define NSRUN_VERSION "0.0.0-dev"
#endif

enum {
	OPT_IMAGE = 256, OPT_ROOTFS, OPT_TIMEOUT, OPT_HOSTNAME, OPT_NETWORK, OPT_TMPFS_SIZE,
	OPT_PIDS_LIMIT, OPT_MEMORY, OPT_MEMORY_SAMPLE_TIMEOUT, OPT_CPU_TIME, OPT_SECURITY_OPT, OPT_STRICT, OPT_DEBUG, OPT_VERSION,
	OPT_JSON, OPT_CAPTURE, OPT_OUTPUT_LIMIT, OPT_OUTPUT_LIMIT_ACTION, OPT_STDIN, OPT_DEBUG_TIMING,
	OPT_CPUS, OPT_MEMORY_SWAP, OPT_CGROUP_PARENT, OPT_LIMITS, OPT_ISOLATION, OPT_ALLOW_NESTED,
	OPT_TMPFS, OPT_NAME, OPT_WAIT_PORT, OPT_READY_TIMEOUT,
	OPT_STOP_TIMEOUT, OPT_ADD_HOST, OPT_STOP_WITH_PARENT, OPT_STOP_WITH_PID,
	OPT_USERNS, OPT_CAP_ADD, OPT_READ_ONLY,
	OPT_LABEL, OPT_WAIT_LOG, OPT_WAIT_HTTP, OPT_WAIT_HEALTHY, OPT_HEALTH_CMD, OPT_HEALTH_INTERVAL,
	OPT_HEALTH_TIMEOUT, OPT_HEALTH_RETRIES, OPT_HEALTH_START_PERIOD, OPT_PUBLISH_MAX_CONNECTIONS,
	OPT_STDIN_ONCE, OPT_ENTRYPOINT, OPT_COPY_ARCHIVE, OPT_ARCHIVE_GET, OPT_ARCHIVE_STAT,
};

static const struct option options[] = {
	{ "image", required_argument, NULL, OPT_IMAGE },
	{ "rootfs", required_argument, NULL, OPT_ROOTFS },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "stop-timeout", required_argument, NULL, OPT_STOP_TIMEOUT },
	{ "env", required_argument, NULL, 'e' },
	{ "volume", required_argument, NULL, 'v' },
	{ "workdir", required_argument, NULL, 'w' },
	{ "hostname", required_argument, NULL, OPT_HOSTNAME },
	{ "add-host", required_argument, NULL, OPT_ADD_HOST },
	{ "user", required_argument, NULL, 'u' },
	{ "userns", required_argument, NULL, OPT_USERNS },
	{ "cap-add", required_argument, NULL, OPT_CAP_ADD },
	{ "read-only", optional_argument, NULL, OPT_READ_ONLY },
	{ "network", required_argument, NULL, OPT_NETWORK },
	{ "tmpfs-size", required_argument, NULL, OPT_TMPFS_SIZE },
	{ "pids-limit", required_argument, NULL, OPT_PIDS_LIMIT },
	{ "memory", required_argument, NULL, OPT_MEMORY },
	{ "cpu-time", required_argument, NULL, OPT_CPU_TIME },
	{ "memory-sample-timeout", required_argument, NULL, OPT_MEMORY_SAMPLE_TIMEOUT },
	{ "security-opt", required_argument, NULL, OPT_SECURITY_OPT },
	{ "strict", no_argument, NULL, OPT_STRICT },
	{ "isolation", required_argument, NULL, OPT_ISOLATION },
	{ "allow-nested", no_argument, NULL, OPT_ALLOW_NESTED },
	{ "debug", no_argument, NULL, OPT_DEBUG },
	{ "debug-timing", no_argument, NULL, OPT_DEBUG_TIMING },
	{ "cpus", required_argument, NULL, OPT_CPUS },
	{ "memory-swap", required_argument, NULL, OPT_MEMORY_SWAP },
	{ "cgroup-parent", required_argument, NULL, OPT_CGROUP_PARENT },
	{ "limits", required_argument, NULL, OPT_LIMITS },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "capture", no_argument, NULL, OPT_CAPTURE },
	{ "output-limit", required_argument, NULL, OPT_OUTPUT_LIMIT },
	{ "output-limit-action", required_argument, NULL, OPT_OUTPUT_LIMIT_ACTION },
	{ "stdin", required_argument, NULL, OPT_STDIN },
	{ "publish", required_argument, NULL, 'p' },
	{ "tmpfs", required_argument, NULL, OPT_TMPFS },
	{ "detach", no_argument, NULL, 'd' },
	{ "name", required_argument, NULL, OPT_NAME },
	{ "wait-port", required_argument, NULL, OPT_WAIT_PORT },
	{ "ready-timeout", required_argument, NULL, OPT_READY_TIMEOUT },
	{ "stop-with-parent", no_argument, NULL, OPT_STOP_WITH_PARENT },
	{ "stop-with-pid", required_argument, NULL, OPT_STOP_WITH_PID },
	{ "label", required_argument, NULL, OPT_LABEL },
	{ "wait-log", required_argument, NULL, OPT_WAIT_LOG },
	{ "wait-http", required_argument, NULL, OPT_WAIT_HTTP },
	{ "wait-healthy", no_argument, NULL, OPT_WAIT_HEALTHY },
	{ "health-cmd", required_argument, NULL, OPT_HEALTH_CMD },
	{ "health-interval", required_argument, NULL, OPT_HEALTH_INTERVAL },
	{ "health-timeout", required_argument, NULL, OPT_HEALTH_TIMEOUT },
	{ "health-retries", required_argument, NULL, OPT_HEALTH_RETRIES },
	{ "health-start-period", required_argument, NULL, OPT_HEALTH_START_PERIOD },
	{ "publish-max-connections", required_argument, NULL, OPT_PUBLISH_MAX_CONNECTIONS },
	{ "stdin-once", no_argument, NULL, OPT_STDIN_ONCE },
	{ "entrypoint", required_argument, NULL, OPT_ENTRYPOINT },
	{ "copy-archive", required_argument, NULL, OPT_COPY_ARCHIVE },
	{ "archive-get", required_argument, NULL, OPT_ARCHIVE_GET },
	{ "archive-stat", required_argument, NULL, OPT_ARCHIVE_STAT },
	{ "tty", no_argument, NULL, 't' },
	{ "interactive", no_argument, NULL, 'i' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

static const char usage_text[] =
	"Usage:\n"
	"  nsrun [OPTIONS] --image NAME FILE [ARG...]     run FILE with the image's interpreter\n"
	"  nsrun [OPTIONS] --image NAME - [ARG...]        read the program from standard input\n"
	"  nsrun [OPTIONS] --image NAME -- CMD [ARG...]   run a command inside the image\n"
	"  nsrun [OPTIONS] --image REFERENCE [-- CMD]      run an image pulled by nsrun pull (redis:7)\n"
	"  nsrun [OPTIONS] --rootfs DIR -- CMD [ARG...]   use a rootfs directory as the image\n"
	"  nsrun images                                   list installed images\n"
	"  nsrun seccomp check PROFILE                    show what a seccomp profile does\n"
	"  nsrun pull [-q] REFERENCE                      pull an image from a registry (redis:7, docs/images.md)\n"
	"  nsrun image ls|inspect|rm [IMAGE...]           the store's images, as docker image ls|inspect|rm\n"
	"  nsrun image check [--json] [--name NAME] DIR    what a run would refuse in an image directory\n"
	"  nsrun check [--json]                           what this host lets nsrun do, and fixes\n"
	"  nsrun -d [--name NAME] [OPTIONS] ... -- CMD    start a service; its monitor stays in the background\n"
	"  nsrun exec [OPTIONS] NAME -- CMD [ARG...]      run CMD in the running service NAME (exec --help)\n"
	"  nsrun ps [--json] [--filter label=K[=V]] | logs [-f] NAME\n"
	"  nsrun stop [-t SECONDS] NAME...|--all [--filter label=K[=V]]\n"
	"  nsrun rm [-f] NAME...|--all [--filter label=K[=V]]\n"
	"  nsrun pool [-d --name NAME] [--size N] [--preload MOD,...] [OPTIONS] --image NAME\n"
	"                                                 a warm pool: a sandbox per request by fork (pool --help)\n"
	"  nsrun run --pool SOCKET|NAME [OPTIONS] (FILE | - | -- python3 -c CODE) [ARG...]\n"
	"                                                 one request to a pool (run --pool --help)\n"
	"  nsrun api [--socket PATH] [--idle-timeout SECONDS] [--volume-root DIR]...\n"
	"                                                 serve the Docker Engine API (nsrun api --help)\n"
	"  nsrun [--root DIR] create|start|state|kill|delete|run|list|features|exec|ps|pause|resume|update ... ID\n"
	"                                                 the OCI runtime, runc's command line (create --help)\n"
	"\n"
	"Options:\n"
	"  --image NAME              image from $NSRUN_IMAGES (default ~/.local/share/nsrun/images): a name,\n"
	"                            or a reference as docker writes it (redis:7); with no command,\n"
	"                            the image's entrypoint and cmd run; -- CMD runs under the\n"
	"                            image's entrypoint, as docker run does\n"
	"  --entrypoint CMD          replace the image's entrypoint (\"\": none; -- CMD alone then)\n"
	"  --rootfs DIR              a root file system directory to use as the image\n"
	"  --timeout SECONDS         wall-clock limit, fractions allowed; 0 = none (default 30)\n"
	"  --stop-timeout SECONDS    after SIGINT, SIGTERM or SIGHUP to nsrun, SIGKILL (default 2)\n"
	"  -e, --env KEY[=VALUE]     set an environment variable (KEY alone: take nsrun's value)\n"
	"  -v, --volume HOST:CONTAINER[:ro|rw]  bind a host path, read-only unless rw\n"
	"  -w, --workdir DIR         working directory inside (FILE mode: /work)\n"
	"  --hostname NAME           hostname inside (default nsrun)\n"
	"  --add-host NAME:IP        one more line of the container's /etc/hosts (repeatable)\n"
	"  -u, --user USER[:GROUP]  payload ids inside: numbers, or names of the image's /etc/passwd\n"
	"                            and /etc/group (default 65534:65534)\n"
	"  --userns one|subids       one: one id inside, the payload's (default); subids: 0 is you,\n"
	"                            1..65535 your ids of /etc/subuid and /etc/subgid (newuidmap),\n"
	"                            for images that start as root and switch user (docs/userns.md)\n"
	"  --cap-add CAP[,CAP...]    keep CAP for a uid-0 payload (Docker's default set at most; ALL:\n"
	"                            that set), only over what its user namespace owns\n"
	"  --read-only=false         a writable root: an overlay over the image, its writes in a\n"
	"                            tmpfs of --tmpfs-size, gone after the run (default: read-only)\n"
	"  --network none|pasta      none: no network but loopback (default); pasta: also eth0, a way\n"
	"                            out as the caller through pasta(1), not to the host's loopback\n"
	"  --network container:NAME  the network (loopback) of the running service NAME, nothing else\n"
	"  --network NAME            the network of nsrun network create NAME: its members reach each\n"
	"                            other by name on 127.0.0.1, and nothing else\n"
	"  --tmpfs-size BYTES        size of /tmp, with k, m or g (default 64m)\n"
	"  --tmpfs PATH[:size=BYTES,mode=OCTAL,tmpcopyup]  a writable tmpfs at PATH (default size as /tmp,\n"
	"                            mode 1777); tmpcopyup: it starts with what the image has at PATH\n"
	"  --copy-archive TAR:DIR    extract the tar archive TAR into DIR inside before the command\n"
	"                            runs, as the payload, as docker cp does (repeatable, in order)\n"
	"  --archive-get PATH        the command not run: a tar of PATH on stdout instead, after\n"
	"                            --copy-archive, as nsrun exec's (nsrun api: docker cp from a\n"
	"                            created container); --archive-stat PATH: its stat line alone\n"
	"  -p, --publish [HOST_IP:]HOST_PORT:CONTAINER_PORT[/tcp]  host port (on 127.0.0.1 unless\n"
	"                            HOST_IP; 0: any free one) to a container port; no way out is opened\n"
	"  -d, --detach              run as a service: return once it started, leave its monitor running\n"
	"  --name NAME               the service's name (-d; default: made up)\n"
	"  --wait-port PORT          -d returns only once published container PORT accepts connections\n"
	"  --ready-timeout SECONDS   how long -d waits for that (default 60), then fails with its log\n"
	"  --stop-with-parent        -d: stop the service (as nsrun stop) when the process that ran\n"
	"                            nsrun -d ends, by any signal (a test run killed leaves nothing)\n"
	"  --stop-with-pid PID       -d: the same when process PID ends\n"
	"  --label KEY=VALUE         -d: a label of the service (ps, stop/rm --all --filter label=KEY=VALUE)\n"
	"  --wait-log REGEX          -d returns only once a line of the log matches REGEX (POSIX ERE)\n"
	"  --wait-http PORT[/PATH]   -d returns only once GET PATH on published container PORT answers\n"
	"                            2xx or 3xx\n"
	"  --wait-healthy            -d returns only once the health check passed (--health-cmd)\n"
	"  --health-cmd CMD          -d: run CMD (sh -c) inside, as nsrun exec, every --health-interval\n"
	"                            (default 30s), a failure past --health-timeout (30s); unhealthy after\n"
	"                            --health-retries (3) in a row, not counting --health-start-period (0)\n"
	"  --publish-max-connections N  simultaneous connections to each -p port (default 256, at most\n"
	"                            4096); more are reset at once and counted in the log\n"
	"  --pids-limit N            processes of the container (default 128; 0 = none)\n"
	"  --memory BYTES            memory of the whole container, all its processes together, with\n"
	"                            k, m or g (default 512m; 0 = none): a cgroup's limit, else\n"
	"                            nsrun measures their use and ends the run past it (docs/limits.md)\n"
	"  --memory-sample-timeout SECONDS  when nsrun measures --memory: one sample taking longer\n"
	"                            ends the run, the limit not kept meanwhile (default 2; 0 = never)\n"
	"  --cpu-time SECONDS        CPU time of each process (default: none)\n"
	"  --cpus N.N                CPUs the container may use (cgroup cpu.max; default: no limit)\n"
	"  --memory-swap BYTES       memory plus swap (default: as --memory, no swap; -1: unlimited)\n"
	"  --cgroup-parent PATH      (root) create the run's cgroup under PATH of the cgroup2 tree\n"
	"  --limits strict           a limit no cgroup can enforce is an error (as --strict)\n"
	"  --security-opt seccomp=PROFILE  default, strict, a path, or unconfined\n"
	"  --security-opt landlock=default|strict|unconfined  Landlock ruleset where the kernel has it:\n"
	"                            read-only but /tmp and rw volumes (default); strict: no TCP at\n"
	"                            all, loopback included; unconfined: none\n"
	"  --isolation full|reduced|minimal  the isolation tier (default: the highest that works\n"
	"                            here, with a warning when below full; --strict: full only).\n"
	"                            reduced (alias chroot): no mount (Landlock parents); minimal:\n"
	"                            no user namespace (Docker's default seccomp profile)\n"
	"  --allow-nested            the payload may create namespaces (to run nsrun inside nsrun)\n"
	"  --strict                  weaker isolation than asked for is an error\n"
	"  --json FILE               write the result as JSON to FILE (- for stdout); captures output\n"
	"  --capture                 capture stdout and stderr (bounded), print them after the run\n"
	"  --output-limit BYTES      bytes kept of each captured stream, and of a -d service's log\n"
	"                            (default 1m, at most 1g; 0 keeps none)\n"
	"  --output-limit-action truncate|kill  past the limit: keep draining (default) or end the run\n"
	"  --stdin FILE              the payload's standard input (default: nsrun's; empty with --json\n"
	"                            unless -i, or - reads the program from it)\n"
	"  -t, --tty                 a new terminal (pty) inside for the payload, relayed to nsrun's\n"
	"  -i, --interactive         docker's -i: stdin is always passed; with -d, the service's\n"
	"                            stdin is kept open for clients that attach (nsrun api)\n"
	"  --stdin-once              with -d -i: the first attached client's end is the EOF\n"
	"  --debug                   print the configuration and mount plan to stderr\n"
	"  --debug-timing            print the time of each phase to stderr (also NSRUN_DEBUG=timing)\n"
	"  -h, --help, --version\n"
	"\n"
	"Exit status: the payload's; 128+N if it died of signal N; 124 timeout;\n"
	"125 nsrun failed; 126 command cannot be executed; 127 command not found.\n";

static int fail(const struct nsrun_error *err)
{
	error_print(err, stderr);
	return 125;
}

/* Replaces the string in *slot by a copy of value: the old one is freed only once
 * the new one exists, so no error path leaves *slot dangling (a second option of
 * the same name, then an error, then config_free: a double free fuzz_cmdline found).
 * Returns 0 or -1 with err (ENOMEM). */
static int set_str(char **slot, const char *value, const char *what, struct nsrun_error *err)
{
	char *v = strdup(value);

	if (!v)
		return error_set(err, ENOMEM, "%s", what);
	free(*slot);
	*slot = v;
	return 0;
}

static int set_security_opt(struct nsrun_config *cfg, const char *arg, struct nsrun_error *err)
{
	if (strncmp(arg, "seccomp=", 8) == 0 && arg[8]) {
		return set_str(&cfg->security.seccomp, arg + 8, "--security-opt", err);
	}
	if (strcmp(arg, "no-new-privileges") == 0 || strcmp(arg, "no-new-privileges:true") == 0)
		return 0; /* always on */
	if (strncmp(arg, "landlock=", 9) == 0) {
		const char *v = arg + 9;
		if (strcmp(v, "default") && strcmp(v, "strict") && strcmp(v, "unconfined"))
			return error_set(err, 0, "--security-opt: \"%s\": landlock= takes default, strict or unconfined",
					 arg);
		cfg->security.landlock = strcmp(v, "unconfined") != 0;
		cfg->security.landlock_no_tcp = strcmp(v, "strict") == 0;
		return 0;
	}
	return error_set(err, 0, "--security-opt: \"%s\": unknown (seccomp=PROFILE or landlock=default|strict|unconfined)",
			 arg);
}

/* --network container:NAME (a running service's network namespace) or --network
 * NAME (one made by nsrun network create): both names as docker's rule for
 * names.  Returns 0 or -1 with err. */
static int parse_network_join(struct nsrun_config *cfg, const char *arg, struct nsrun_error *err)
{
	bool container = strncmp(arg, "container:", 10) == 0;
	const char *name = container ? arg + 10 : arg;

	if (strcmp(arg, "host") == 0 || strcmp(arg, "bridge") == 0 || strcmp(arg, "default") == 0) {
		error_set(err, 0, "--network: \"%s\": refused: nsrun gives a container no network of the host's", arg);
		err->hint = "none (loopback only), pasta (a way out as the caller), container:NAME (a service's "
			    "network) or a network of nsrun network create";
		return -1;
	}
	if (!service_name_valid(name)) {
		error_set(err, 0, "--network: \"%s\": unknown, and not a %s name ([a-zA-Z0-9][a-zA-Z0-9_.-]*, at most "
			  "64)", arg, container ? "service" : "network");
		err->hint = "none (loopback only), pasta (a way out as the caller), container:NAME (a service's "
			    "network) or a network of nsrun network create";
		return -1;
	}
	cfg->network = container ? NSRUN_NETWORK_CONTAINER : NSRUN_NETWORK_NAMED;
	return set_str(&cfg->network_name, name, "--network", err);
}

static int parse_option(struct nsrun_config *cfg, int c, const char *arg, struct nsrun_error *err)
{
	switch (c) {
	case OPT_IMAGE:
		return set_str(&cfg->image, arg, "--image", err);
	case OPT_ENTRYPOINT:
		return set_str(&cfg->entrypoint, arg, "--entrypoint", err);
	case OPT_ROOTFS:
		free(cfg->rootfs);
		if (!(cfg->rootfs = realpath(arg, NULL)))      /* NULL on failure: nothing dangles */
			return error_set(err, errno, "--rootfs \"%s\"", arg);
		return 0;
	case OPT_TIMEOUT:
		cfg->service.timeout_given = true;
		return parse_duration_us("--timeout", arg, &cfg->limits.timeout_us, err);
	case 'p':
		return config_add_publish(cfg, arg, err);
	case OPT_TMPFS:
		return config_add_tmpfs(cfg, arg, err);
	case 'd':
		cfg->service.detach = true;
		return 0;
	case OPT_NAME:
		return set_str(&cfg->service.name, arg, "--name", err);
	case OPT_WAIT_PORT: {
		uint64_t port = 0;
		if (parse_uint("--wait-port", arg, 65535, &port, err) < 0)
			return -1;
		if (!port)
			return error_set(err, 0, "--wait-port: \"%s\": expected 1 to 65535", arg);
		cfg->service.wait_port = (uint16_t)port;
		return 0;
	}
	case OPT_READY_TIMEOUT:
		if (parse_duration_us("--ready-timeout", arg, &cfg->service.ready_timeout_us, err) < 0)
			return -1;
		return cfg->service.ready_timeout_us ? 0 : error_set(err, 0, "--ready-timeout: must be more than 0");
	case OPT_STOP_TIMEOUT:
		return parse_duration_us("--stop-timeout", arg, &cfg->limits.stop_timeout_us, err);
	case OPT_STOP_WITH_PARENT:
		cfg->service.stop_with_parent = true;
		return 0;
	case OPT_STOP_WITH_PID: {
		uint64_t pid = 0;
		if (parse_uint("--stop-with-pid", arg, 4194304, &pid, err) < 0)
			return -1;
		if (pid < 1)
			return error_set(err, 0, "--stop-with-pid: \"%s\": expected a process id", arg);
		cfg->service.stop_with_pid = (pid_t)pid;
		return 0;
	}
	case OPT_LABEL:
		return config_add_label(cfg, arg, err);
	case OPT_WAIT_LOG:
		return config_set_wait_log(cfg, arg, err);
	case OPT_WAIT_HTTP:
		return config_set_wait_http(cfg, arg, err);
	case OPT_WAIT_HEALTHY:
		cfg->service.wait_healthy = true;
		return 0;
	case OPT_HEALTH_CMD:
		if (!arg[0])
			return error_set(err, 0, "--health-cmd: empty");
		return set_str(&cfg->service.health.cmd, arg, "--health-cmd", err);
	case OPT_HEALTH_INTERVAL:
		return parse_duration_us("--health-interval", arg, &cfg->service.health.interval_us, err);
	case OPT_HEALTH_TIMEOUT:
		return parse_duration_us("--health-timeout", arg, &cfg->service.health.timeout_us, err);
	case OPT_HEALTH_START_PERIOD:
		return parse_duration_us("--health-start-period", arg, &cfg->service.health.start_period_us, err);
	case OPT_HEALTH_RETRIES:
		return parse_uint("--health-retries", arg, 1000000, &cfg->service.health.retries, err);
	case OPT_PUBLISH_MAX_CONNECTIONS:
		if (parse_uint("--publish-max-connections", arg, NSRUN_MAX_PUBLISH_CONNECTIONS,
			       &cfg->publish_max_connections, err) < 0)
			return -1;
		return cfg->publish_max_connections ? 0 : error_set(err, 0, "--publish-max-connections: must be 1 or more");
	case OPT_CPU_TIME:
		return parse_duration_us("--cpu-time", arg, &cfg->limits.cpu_time_us, err);
	case OPT_MEMORY:
		return parse_size_bytes("--memory", arg, &cfg->limits.memory_bytes, err);
	case OPT_MEMORY_SAMPLE_TIMEOUT:
		return parse_duration_us("--memory-sample-timeout", arg, &cfg->limits.memory_sample_timeout_us, err);
	case OPT_TMPFS_SIZE:
		return parse_size_bytes("--tmpfs-size", arg, &cfg->limits.tmpfs_bytes, err);
	case OPT_PIDS_LIMIT:
		return parse_uint("--pids-limit", arg, 4194304, &cfg->limits.pids, err);
	case 'e':
		return config_add_env(cfg, arg, err);
	case 'v':
		return config_add_volume(cfg, arg, err);
	case 'w':
		free(cfg->process.cwd);
		return (cfg->process.cwd = config_container_path("--workdir", arg, err)) ? 0 : -1;
	case 'u':
		return config_set_user_spec(cfg, arg, err);
	case OPT_USERNS:
		if (strcmp(arg, "one") == 0)
			cfg->userns = NSRUN_USERNS_ONE;
		else if (strcmp(arg, "subids") == 0)
			cfg->userns = NSRUN_USERNS_SUBIDS;
		else
			return error_set(err, 0, "--userns: \"%s\": unknown (one: the payload's id only; subids: "
					 "also your subordinate ids)", arg);
		return 0;
	case OPT_CAP_ADD:
		return caps_parse_add(arg, &cfg->security.cap_add, err);
	case OPT_READ_ONLY:
		if (!arg || strcmp(arg, "true") == 0)
			cfg->rootfs_writable = false;
		else if (strcmp(arg, "false") == 0)
			cfg->rootfs_writable = true;
		else
			return error_set(err, 0, "--read-only: \"%s\": expected true or false", arg);
		return 0;
	case OPT_HOSTNAME:
		if (!arg[0] || strlen(arg) > 64 || strspn(arg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
							       "0123456789.-") != strlen(arg) ||
		    arg[0] == '-' || arg[0] == '.')
			return error_set(err, 0, "--hostname: \"%s\": must be 1 to 64 letters, digits, '.' and '-' "
					 "(RFC 1123)", arg);
		return set_str(&cfg->hostname, arg, "--hostname", err);
	case OPT_ADD_HOST:
		return config_add_host(cfg, arg, err);
	case OPT_NETWORK:
		if (strcmp(arg, "none") == 0)
			cfg->network = NSRUN_NETWORK_NONE;
		else if (strcmp(arg, "pasta") == 0)
			cfg->network = NSRUN_NETWORK_PASTA;
		else
			return parse_network_join(cfg, arg, err);
		return 0;
	case OPT_SECURITY_OPT:
		return set_security_opt(cfg, arg, err);
	case OPT_STRICT:
		cfg->security.strict = true;
		return 0;
	case OPT_ISOLATION:
		return tier_parse(arg, &cfg->isolation, err);
	case OPT_ALLOW_NESTED:
		cfg->security.allow_nested = true;
		return 0;
	case 't':
		cfg->tty = true;
		return 0;
	case 'i': /* docker's -i: nsrun always passes its stdin (unless --stdin), with --json too;
		   a -d service holds one for attaching clients */
		cfg->service.open_stdin = true;
		return 0;
	case OPT_STDIN_ONCE:
		cfg->service.stdin_once = true;
		return 0;
	case OPT_COPY_ARCHIVE:
		return config_add_copy_archive(cfg, arg, err);
	case OPT_ARCHIVE_GET:
	case OPT_ARCHIVE_STAT:
		if (arg[0] != '/')
			return error_set(err, 0, "--archive-%s: \"%s\": expected an absolute path inside",
					 c == OPT_ARCHIVE_GET ? "get" : "stat", arg);
		cfg->archive_op = c == OPT_ARCHIVE_GET ? COPY_ARCHIVE_GET : COPY_ARCHIVE_STAT;
		return set_str(&cfg->archive_path, arg, "--archive-get", err);
	case OPT_DEBUG:
		cfg->debug = true;
		return 0;
	case OPT_DEBUG_TIMING:
		cfg->debug_timing = true;
		return 0;
	case OPT_CPUS: {
		uint64_t us = 0;
		/* a decimal number, parsed as a duration's seconds are (to 1e-6); no unit:
		 * "1s" was taken for 1 CPU, "500ms" for half of one */
		if (!*arg || arg[strspn(arg, "0123456789.")] || parse_duration_us("--cpus", arg, &us, err) < 0)
			return error_set(err, 0, "--cpus: \"%s\": not a number of CPUs (e.g. 0.5 or 2)", arg);
		if (us > 4096ULL * 1000000)
			return error_set(err, 0, "--cpus: \"%s\": too large", arg);
		cfg->limits.cpus_milli = us / 1000;
		if (us && !cfg->limits.cpus_milli)
			return error_set(err, 0, "--cpus: \"%s\": at least 0.001", arg);
		return 0;
	}
	case OPT_MEMORY_SWAP:
		if (strcmp(arg, "-1") == 0) {
			cfg->limits.memory_swap_bytes = UINT64_MAX;
			return 0;
		}
		return parse_size_bytes("--memory-swap", arg, &cfg->limits.memory_swap_bytes, err);
	case OPT_CGROUP_PARENT:
		if (strstr(arg, "..") || !arg[0])
			return error_set(err, 0, "--cgroup-parent: \"%s\": a path inside the cgroup2 tree", arg);
		return set_str(&cfg->cgroup_parent, arg, "--cgroup-parent", err);
	case OPT_LIMITS:
		if (strcmp(arg, "strict") != 0)
			return error_set(err, 0, "--limits: \"%s\": the only value is strict", arg);
		cfg->security.strict = true;
		return 0;
	case OPT_JSON:
		cfg->output.capture = true;
		return set_str(&cfg->output.json_path, arg, "--json", err);
	case OPT_CAPTURE:
		cfg->output.capture = true;
		return 0;
	case OPT_OUTPUT_LIMIT:
		if (parse_size_bytes("--output-limit", arg, &cfg->output.limit_bytes, err) < 0)
			return -1;
		/* what is kept is held in nsrun's memory (and again in a --json document) */
		if (cfg->output.limit_bytes > NSRUN_MAX_OUTPUT_LIMIT)
			return error_set(err, 0, "--output-limit: \"%s\": at most 1g (what is kept is held in memory; "
					 "-v DIR:/out:rw keeps more in a file)", arg);
		return 0;
	case OPT_OUTPUT_LIMIT_ACTION:
		if (strcmp(arg, "kill") != 0 && strcmp(arg, "truncate") != 0)
			return error_set(err, 0, "--output-limit-action: \"%s\": use truncate or kill", arg);
		cfg->output.limit_kill = strcmp(arg, "kill") == 0;
		return 0;
	case OPT_STDIN:
		return set_str(&cfg->output.stdin_path, arg, "--stdin", err);
	default:
		return error_set(err, 0, "unknown option (see nsrun --help)");
	}
}

int cli_parse(struct nsrun_config *cfg, int argc, char **argv, struct nsrun_error *err)
{
	int c;
	bool dashdash;

	err->stage = STAGE_CONFIG;
	opterr = 0;
	optind = 0; /* glibc: 0 starts a new scan with its state reset (getopt(3)) */
	while ((c = getopt_long(argc, argv, "+:e:v:w:u:p:dhti", options, NULL)) != -1) {
		if (c == 'h')
			return CLI_HELP;
		if (c == OPT_VERSION)
			return CLI_VERSION;
		if (c == ':')
			return error_set(err, 0, "%s: needs a value (see nsrun --help)", argv[optind - 1]);
		if (c == '?') {
			if (optopt && optopt < 256)
				return error_set(err, 0, "-%c: unknown option (see nsrun --help)", optopt);
			return error_set(err, 0, "%s: unknown option (see nsrun --help)", argv[optind - 1]);
		}
		if (parse_option(cfg, c, optarg, err) < 0)
			return -1;
	}
	dashdash = optind > 1 && strcmp(argv[optind - 1], "--") == 0;
	if (optind >= argc && !cfg->image)
		return error_set(err, 0, "no command: give FILE, - or -- CMD [ARG...] (see nsrun --help)");
	if (optind >= argc) {
		/* --image REF alone: the image's entrypoint and cmd (image.c), as docker run IMAGE */
		cfg->mode = NSRUN_MODE_COMMAND;
	} else if (dashdash) {
		cfg->mode = NSRUN_MODE_COMMAND;
	} else if (strcmp(argv[optind], "-") == 0) {
		cfg->mode = NSRUN_MODE_STDIN;
		if (strv_push(&cfg->process.args, "-") < 0)
			return error_set(err, ENOMEM, "arguments");
		optind++;
	} else {
		cfg->mode = NSRUN_MODE_FILE;
		if (config_set_file(cfg, argv[optind], err) < 0)
			return -1;
		optind++;
	}
	for (; optind < argc; optind++)
		if (strv_push(&cfg->process.args, argv[optind]) < 0)
			return error_set(err, ENOMEM, "arguments");
	return 0;
}

#ifndef NSRUN_CLI_ONLY /* the fuzzer and the unit test take only the parser above */

static int cmd_images(void)
{
	struct nsrun_error err = { 0 };

	if (image_list(stdout, &err) < 0)
		return fail(&err);
	return 0;
}

static int cmd_seccomp(int argc, char **argv)
{
	struct nsrun_error err = { 0 };

	if (argc != 4 || strcmp(argv[2], "check") != 0) {
		fprintf(stderr, "nsrun: usage: nsrun seccomp check PROFILE\n");
		return 125;
	}
	if (seccomp_describe(argv[3], seccomp_profiles_dir(), stdout, &err) < 0)
		return fail(&err);
	return 0;
}

/* A caller may start us with fd 0, 1 or 2 closed: the first fd we open would take
 * its number and reach the payload as its stdin or stdout.  Fill them with /dev/null. */
static void ensure_std_fds(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
			int n = open("/dev/null", O_RDWR | O_NOCTTY);
			if (n >= 0 && n != fd) /* cannot happen: the lowest free number is fd */
				close(n);
		}
	}
}

/* A caller may start us with SIGCHLD ignored (an ignored disposition survives
 * execve(2)): the kernel then reaps our children itself, waitpid(2) fails with
 * ECHILD and no exit is ever seen, so a run that ended at once waited for its
 * --timeout and said 124 (sigaction(2), "POSIX.1-2001 ... SIG_IGN").  Ours is the
 * default, as every process that waits for its children needs. */
static void ensure_sigchld(void)
{
	const struct sigaction dfl = { .sa_handler = SIG_DFL };

	(void)sigaction(SIGCHLD, &dfl, NULL);
}

/* nsrun's own files at once: its poll of the payload's pipes and the relay (13),
 * the sync channel, signalfd, state and /proc fds; NSRUN_FILES_WANTED leaves room */
#define NSRUN_FILES_NEEDED 16
#define NSRUN_FILES_WANTED 64

/* A soft RLIMIT_NOFILE below what nsrun needs (prlimit --nofile=12 around it) made
 * poll(2) fail with EINVAL, or signalfd with EMFILE, naming neither: a soft limit
 * below NSRUN_FILES_WANTED is raised towards the hard one (any process may,
 * getrlimit(2)), and a hard limit below NSRUN_FILES_NEEDED is refused by name.
 * Returns 0, or -1 with err. */
static int ensure_nofile(struct nsrun_error *err)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= NSRUN_FILES_WANTED)
		return 0;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < NSRUN_FILES_NEEDED) {
		error_set(err, 0, "RLIMIT_NOFILE: the hard limit %llu is below the %d open files nsrun needs at least",
			  (unsigned long long)rl.rlim_max, NSRUN_FILES_NEEDED);
		err->hint = "raise it where nsrun is started (ulimit -Hn, prlimit --nofile, the outer sandbox's limit)";
		return -1;
	}
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > NSRUN_FILES_WANTED ? NSRUN_FILES_WANTED : rl.rlim_max;
	(void)setrlimit(RLIMIT_NOFILE, &rl);
	return 0;
}

int main(int argc, char **argv)
{
	struct nsrun_config cfg;
	struct host_out json = { .dir_fd = -1, .fd = -1 };
	bool json_stdout = false;
	struct nsrun_result result;
	struct nsrun_error err = { 0 };
	struct timing *timing = timing_new();
	const char *debug_env = getenv("NSRUN_DEBUG");
	bool show_timing;
	int code;

	timing_start(timing);
	ensure_std_fds();
	ensure_sigchld();
	/* an outer filter that kills clone(2) would end us at our first fork with no
	 * word (159); check says it in its own lines */
	if (argc > 1 && strcmp(argv[1], "check") != 0 && strcmp(argv[1], "--help") != 0 &&
	    strcmp(argv[1], "--version") != 0) {
		if (sys_clone_killed(&err) < 0) {
			size_t n = strlen(err.msg);
			snprintf(err.msg + n, sizeof(err.msg) - n, ": nothing can run here");
			error_prefix(&err, "start");
			error_print(&err, stderr);
			timing_free(timing);
			return 125;
		}
	}
	if (ensure_nofile(&err) < 0) {
		error_print(&err, stderr);
		timing_free(timing);
		return 125;
	}

	/* (runc's ps ID is the OCI runtime's, below) */
	if (argc > 1 && !oci_is_command(argc, argv) &&
	    (strcmp(argv[1], "ps") == 0 || strcmp(argv[1], "logs") == 0 || strcmp(argv[1], "stop") == 0 ||
	     strcmp(argv[1], "rm") == 0)) {
		timing_free(timing);
		return service_main(argc, argv);
	}
	if (argc > 1 && strcmp(argv[1], "network") == 0) {
		timing_free(timing);
		return network_main(argc, argv);
	}
	/* nsrun run --pool: a request to a pool, before the OCI runtime's run */
	if (pool_client_wanted(argc, argv)) {
		timing_free(timing);
		return pool_client_main(argc, argv);
	}
	/* the OCI runtime's command line (runc's): a verb of its own or a global option of runc's first */
	if (oci_is_command(argc, argv)) {
		timing_free(timing);
		return oci_main(argc, argv);
	}
	if (argc > 1 && strcmp(argv[1], "exec") == 0) {
		timing_free(timing);
		return exec_main(argc, argv);
	}
	if (argc > 1 && strcmp(argv[1], "image") == 0) {
		timing_free(timing);
		return image_cmd_main(argc - 1, argv + 1);
	}
	if (argc > 1 && strcmp(argv[1], "pull") == 0) {
		timing_free(timing);
		return image_pull_main(argc - 1, argv + 1);
	}
	if (argc > 1 && strcmp(argv[1], "pool") == 0) {
		timing_free(timing);
		return pool_main(argc, argv);
	}
	if (argc > 1 && strcmp(argv[1], "api") == 0) {
		timing_free(timing);
		return api_main(argc, argv);
	}
	if (argc > 1 && (strcmp(argv[1], "images") == 0 || strcmp(argv[1], "seccomp") == 0 ||
			 strcmp(argv[1], "check") == 0)) {
		timing_free(timing);
		if (strcmp(argv[1], "check") == 0)
			return check_main(argc - 1, argv + 1, stdout);
		return strcmp(argv[1], "images") == 0 ? cmd_images() : cmd_seccomp(argc, argv);
	}
	if (config_init(&cfg, &err) < 0) {
		timing_free(timing);
		return fail(&err);
	}
	code = cli_parse(&cfg, argc, argv, &err);
	if (code == CLI_HELP || code == CLI_VERSION) {
		if (code == CLI_HELP)
			fputs(usage_text, stdout);
		else
			/* runc's three lines, which podman info and containerd show */
			printf("nsrun version %s\ncommit: %s\nspec: %s\n", NSRUN_VERSION, NSRUN_VERSION, OCI_VERSION);
		config_free(&cfg);
		timing_free(timing);
		return 0;
	}
	/* --strict refuses anything below full: no need to look for a lower tier.  A
	 * run in the foreground tries full at once (foreground_run); a service (-d) is
	 * set up by its monitor, which the caller's warning comes before: it chooses
	 * by tier_choose's probes first */
	if (code >= 0 && cfg.isolation == NSRUN_ISOLATION_AUTO && cfg.security.strict)
		cfg.isolation = NSRUN_ISOLATION_FULL;
	if (code >= 0 && cfg.isolation == NSRUN_ISOLATION_AUTO && !cfg.service.detach) {
		cfg.isolation = NSRUN_ISOLATION_FULL;
		cfg.isolation_auto = true;
	}
	if (code < 0 || tier_choose(&cfg, &err) < 0 || cli_resolve(&cfg, &err) < 0 || config_validate(&cfg, &err) < 0) {
		code = fail(&err);
		foreground_json_error(&cfg, &err);
		config_free(&cfg);
		timing_free(timing);
		return code;
	}
	if (debug_env && strstr(debug_env, "timing"))
		cfg.debug_timing = true;
	timing_mark(timing, TP_CONFIG);
	if (cfg.debug)
		cli_debug_dump(&cfg);
	if (cfg.service.detach) {
		/* a service runs until stopped, its output goes to its log, not to us */
		if (!cfg.service.timeout_given)
			cfg.limits.timeout_us = 0;
		cfg.output.capture = false;
		/* the monitor's own warning goes to the service's log: the caller sees it here */
		tier_warn(&cfg, stderr);
		code = service_detach(&cfg, timing);
		timing_free(timing);
		config_free(&cfg);
		return code;
	}
	/* what is not captured is never past --output-limit: the kill asked for
	 * would never come (never silent) */
	if (cfg.output.limit_kill && !cfg.output.capture) {
		error_set_stage(&err, STAGE_CONFIG, 0, "--output-limit-action kill: only captured output has a "
				"limit (--capture or --json); this run streams its output");
		err.hint = "add --capture (output printed after the run) or --json";
		code = fail(&err);
		config_free(&cfg);
		timing_free(timing);
		return code;
	}
	/* rejected before anything starts: a --json file we cannot write */
	if (foreground_json_prepare(&cfg, &json, &json_stdout, &err) < 0) {
		host_out_free(&json);
		config_free(&cfg);
		timing_free(timing);
		return fail(&err);
	}
	fflush(stdout);
	foreground_run(&cfg, &result, timing);
	show_timing = cfg.debug_timing;
	result_report(&result, stderr);
	code = result_exit_code(&result);
	if (cfg.output.json_path) {
		/* after the container is gone: nothing of it can touch the document now */
		if (foreground_json_write(&result, &cfg, &json, json_stdout, &err) < 0)
			code = fail(&err);
		host_out_free(&json);
	} else if (cfg.output.capture && foreground_print_captured(&result) < 0) {
		fprintf(stderr, "nsrun: write the captured output: %s\n", strerror(errno));
		code = 125;
	}
	result_free(&result);
	config_free(&cfg);
	/* last: the phases cover the report and the frees too */
	timing_mark(timing, TP_END);
	if (show_timing)
		timing_print(timing, stderr);
	timing_free(timing);
	return code;
}
#endif /* NSRUN_CLI_ONLY */
