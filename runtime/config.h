/* config.h - the one struct that carries a run's configuration.
 *
 * Built by main.c from the command line and by image.c from image.json, validated
 * once by config_validate(), then passed as `const struct nsrun_config *`.  Runtime
 * state lives in struct nsrun_run (run.h), never here.  Units are in field names.
 */
#ifndef NSRUN_CONFIG_H
#define NSRUN_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "util.h"

#define NSRUN_DEFAULT_TIMEOUT_US (30ULL * 1000000)
#define NSRUN_DEFAULT_MEMORY_BYTES (512ULL << 20)
#define NSRUN_DEFAULT_TMPFS_BYTES (64ULL << 20)
/* nr_inodes of a tmpfs of bytes (tmpfs(5)): one a page, at least 1024, so empty
 * files cannot fill the kernel's memory past the size (a tmpfs counts only data) */
/* --copy-archive: at most this many archives a run */
#define NSRUN_MAX_COPY_ARCHIVES 64
#define NSRUN_TMPFS_INODES(bytes) ((bytes) / 4096 > 1024 ? (unsigned long long)(bytes) / 4096 : 1024ULL)
#define NSRUN_DEFAULT_PIDS 128
#define NSRUN_DEFAULT_UID 65534
#define NSRUN_DEFAULT_HOSTNAME "nsrun"
#define NSRUN_WORKDIR "/work"
#define NSRUN_DEFAULT_STOP_TIMEOUT_US (2ULL * 1000000)
#define NSRUN_DEFAULT_MEMORY_SAMPLE_TIMEOUT_US (2ULL * 1000000)
#define NSRUN_DEFAULT_OUTPUT_LIMIT (1ULL << 20)
#define NSRUN_MAX_OUTPUT_LIMIT (1ULL << 30)     /* --output-limit: kept in memory */
#define NSRUN_MAX_MOUNTS 64             /* volumes and FILE */
#define NSRUN_MAX_PUBLISH 32            /* -p (result.h's ports[] has as many) */
#define NSRUN_MAX_TMPFS 16              /* --tmpfs */
#define NSRUN_MAX_ADD_HOSTS 64          /* --add-host */
#define NSRUN_HOST_NAME_MAX 253         /* a DNS name in text form (RFC 1035) */
#define NSRUN_DEFAULT_READY_TIMEOUT_US (60ULL * 1000000)
#define NSRUN_MAX_LABELS 16             /* --label (state.h keeps as many) */
#define NSRUN_LABEL_KEY_MAX 127
#define NSRUN_LABEL_VALUE_MAX 255
#define NSRUN_DEFAULT_PUBLISH_CONNECTIONS 256
#define NSRUN_MAX_PUBLISH_CONNECTIONS 4096     /* two fds each in the forwarder */
#define NSRUN_MAX_RLIMITS 16            /* OCI process.rlimits (RLIM_NLIMITS) */
#define NSRUN_MAX_ID_MAPS 5             /* lines of an OCI uid or gid map (the kernel takes 340) */
#define NSRUN_MAX_GROUPS 32             /* OCI process.user.additionalGids */

enum nsrun_network {
	NSRUN_NETWORK_NONE = 0,         /* a new net namespace holding only lo */
	NSRUN_NETWORK_PASTA,            /* lo and eth0, a tap of pasta(1): a way out as the caller (pasta.h) */
	NSRUN_NETWORK_CONTAINER,        /* container:NAME: the net namespace of the running service NAME
	                                 * (netjoin.h) */
	NSRUN_NETWORK_NAMED,            /* NAME: the net namespace of nsrun network NAME (network.h) */
	NSRUN_NETWORK_PATH,             /* OCI linux.namespaces[].path: the net namespace that file names
	                                 * (network_name: the path), a pod's (netjoin.h) */
};

/* The namespaces other than the network's that an OCI config may join by path
 * (linux.namespaces[].path, netjoin.h): the container has these of the pod's. */
enum nsrun_join_ns {
	NSRUN_JOIN_IPC = 0,             /* SysV IPC and POSIX message queues (ipc_namespaces(7)) */
	NSRUN_JOIN_UTS,                 /* hostname and domain name (uts_namespaces(7)) */
	NSRUN_JOIN_PID,                 /* processes (pid_namespaces(7)): the container's init is one
					 * of the pod's, not pid 1 */
	NSRUN_JOIN_USER,                /* the container's user namespace itself: no maps of nsrun's */
	NSRUN_JOIN__COUNT,
};

/* The isolation tier of a run (--isolation; tier.h says what each one holds). */
enum nsrun_isolation {
	NSRUN_ISOLATION_AUTO = 0,       /* no --isolation: the highest tier that works here (tier_choose) */
	NSRUN_ISOLATION_FULL,           /* user, mount, pid, net, ipc, uts namespaces: pivot_root, /proc,
	                                 * /dev, tmpfs, volumes */
	NSRUN_ISOLATION_REDUCED,        /* no mount(2), no id map (a Landlock-restricted parent): an
	                                 * unmapped user namespace, pid/net/ipc/uts namespaces, chroot
	                                 * into the image, kept read-only by Landlock */
	NSRUN_ISOLATION_MINIMAL,        /* no user namespace at all: seccomp without network sockets,
	                                 * Landlock, rlimits; as root also chroot and uid 65534 */
};

/* The user namespace's id map (--userns; docs/userns.md). */
enum nsrun_userns {
	NSRUN_USERNS_ONE = 0,           /* one id: the payload's uid -> the caller's (root: 65534) */
	NSRUN_USERNS_SUBIDS,            /* 0 -> the caller, 1..N -> its subordinate ids (/etc/subuid,
	                                 * /etc/subgid) through newuidmap(1)/newgidmap(1); as root
	                                 * 0..N-1 -> root's subordinate range, written directly */
};

/* One line of an OCI linux.uidMappings or gidMappings (config-linux.md, "User
 * namespace mappings"; user_namespaces(7), "Defining user and group ID mappings"). */
struct nsrun_id_map {
	unsigned long container_id;     /* first id inside */
	unsigned long host_id;          /* first id outside, in nsrun's user namespace */
	unsigned long size;             /* how many */
};

/* What the payload is: FILE run by the interpreter, a program on stdin, or a command. */
enum nsrun_mode {
	NSRUN_MODE_COMMAND = 0,         /* nsrun ... -- CMD [ARG...] */
	NSRUN_MODE_FILE,                /* nsrun ... FILE [ARG...] */
	NSRUN_MODE_STDIN,               /* nsrun ... - [ARG...] */
};

/* A bind mount from the host (-v) or the FILE of FILE mode. */
struct nsrun_mount {
	char *source;                   /* host path, absolute */
	char *destination;              /* path inside the container, absolute, normalised */
	bool rw;                        /* writable; read-only otherwise */
	bool is_file_arg;               /* the FILE of FILE mode */
	bool pinned;                    /* -v: source is the object of dev and ino, resolved once */
	dev_t dev;
	ino_t ino;
	unsigned long propagation;      /* OCI mounts[].options' shared, slave, unbindable, ...:
					 * MS_* (| MS_REC), set in the container's own mount
					 * namespace after the bind (mount.h); 0: private */
	unsigned listed;                /* 1 + its index in an OCI config's mounts, mounted in that
					 * order (config.md "Mounts"); 0: nsrun's order, parents first */
};

/* -p [HOST_IP:]HOST_PORT:CONTAINER_PORT[/tcp]: a host port that reaches a container port. */
struct nsrun_publish {
	char host_ip[46];               /* numeric IPv4 or IPv6 address; default 127.0.0.1 */
	uint16_t host_port;             /* 0: the kernel picks a free one (reported once bound) */
	uint16_t container_port;
};

/* --tmpfs PATH[:size=BYTES,mode=OCTAL]: a writable tmpfs at PATH. */
struct nsrun_tmpfs {
	char *destination;              /* absolute, normalised */
	uint64_t size_bytes;            /* default: --tmpfs-size */
	unsigned mode;                  /* default 01777 */
	unsigned listed;                /* as nsrun_mount's */
	bool copy_up;                   /* tmpcopyup: starts with what is below it (mount_copyup.c) */
};

/* OCI linux.devices[]: a device node of the host, bound at path inside (config-linux.md "Devices"). */
struct nsrun_device {
	char *path;                     /* absolute, normalised, under /dev */
	char type;                      /* 'c', 'b' (bound from the host's node at path) or 'p' (a FIFO made) */
	unsigned major, minor;          /* c, b: as the host's node has them (checked before clone and after
					 * the bind) */
	unsigned file_mode;             /* p: the FIFO's permission bits */
};

/* --add-host NAME:IP: one more line of the container's /etc/hosts. */
struct nsrun_add_host {
	char name[NSRUN_HOST_NAME_MAX + 1];     /* letters, digits, '.', '-', '_' (checked: it is written to a file) */
	char ip[46];                    /* numeric IPv4 or IPv6 address (inet_pton(3)), no brackets */
};

/* OCI create: config.json's hooks that run in the container's namespaces
 * (oci_hooks.h): createContainer by pid 1 once the mounts are made, before
 * pivot_root; startContainer by the payload's process, confined, before its
 * execve.  The state each gets on stdin is state_head[0] (status "creating") or
 * state_head[1] ("created"), then the pid, then state_tail (runtime.md "State"). */
struct nsrun_oci_inside {
	char *hooks;                    /* the hooks object as JSON text; NULL: neither kind */
	bool create_container;          /* it has createContainer hooks (pid 1 needs the host's /tmp) */
	char *state_head[2];            /* the state up to the pid's value */
	char *state_tail;               /* the state after it */
};

struct nsrun_config {
	enum nsrun_mode mode;
	struct nsrun_process {
		struct strv args;       /* argv; for FILE/STDIN the interpreter is prepended by image.c */
		struct strv env;        /* "KEY=VALUE": defaults, image env, then -e, in that order */
		struct strv user_env;   /* -e values as given */
		char *cwd;              /* -w, else the image's workdir, else "/" */
		uid_t uid;              /* payload uid inside, default 65534 */
		gid_t gid;
		gid_t additional_gids[NSRUN_MAX_GROUPS];        /* OCI process.user.additionalGids: the
								 * payload's supplementary groups (setgroups(2))
								 * where the gid map has a range; else dropped */
		size_t n_additional_gids;
	} process;
	char *image;                    /* --image NAME, or NULL with --rootfs */
	char *image_dir;                /* resolved NAME directory in the store */
	char *image_user;               /* the image's User (image.json "user"), not applied: main says so */
	char *user_spec;                /* --user USER[:GROUP] naming a user or group: looked up in the
					 * image's /etc/passwd, /etc/group by cli_resolve (image_user.h);
					 * NULL: the ids were numbers (process.uid, gid) */
	char *entrypoint;               /* --entrypoint (Docker's): replaces the image's Entrypoint in
					 * COMMAND mode; "" clears it; NULL: not given (image.c) */
	char *rootfs;                   /* host path of the rootfs directory */
	char *file;                     /* FILE argument as given (FILE mode) */
	struct nsrun_mount *mounts;     /* -v in order, then the FILE mount */
	size_t n_mounts;
	struct nsrun_limits {
		uint64_t memory_bytes;  /* 0 = no limit */
		uint64_t memory_swap_bytes;     /* memory + swap (docker's --memory-swap); 0: no swap; UINT64_MAX: unlimited */
		uint64_t cpus_milli;    /* --cpus in thousandths of a CPU (cpu.max); 0 = no limit */
		uint64_t tmpfs_bytes;   /* size of /tmp */
		uint64_t pids;          /* 0 = no limit */
		uint64_t cpu_time_us;   /* 0 = no limit */
		uint64_t memory_sample_timeout_us;      /* --memory-sample-timeout: a sample of nsrun's
							 * measure of --memory (no cgroup) running longer
							 * ends the run (memwatch.h); 0 = no bound */
		uint64_t timeout_us;    /* wall clock from start of setup; 0 = none */
		uint64_t stop_timeout_us;       /* --stop-timeout: from a forwarded SIGINT, SIGTERM or
						 * SIGHUP to SIGKILL of the container; 0 = at once */
		struct nsrun_rlimit {
			int resource;           /* RLIMIT_* of getrlimit(2) */
			uint64_t soft, hard;    /* RLIM_INFINITY: none */
		} rlimits[NSRUN_MAX_RLIMITS];   /* OCI process.rlimits, set as given (rlimits.h) */
		size_t n_rlimits;
	} limits;
	struct nsrun_security {
		char *seccomp;          /* profile name, path, or "unconfined" */
		bool strict;            /* weaker isolation is an error, not a warning */
		bool landlock;          /* apply nsrun's Landlock ruleset where the kernel has it */
		bool landlock_no_tcp;   /* landlock=strict: also no TCP bind or connect (ABI 4), loopback too */
		bool allow_nested;      /* --allow-nested: the payload may make namespaces (nsrun in nsrun) */
		uint64_t cap_add;       /* --cap-add: bit N keeps capability N (Docker's default set at
					 * most, caps.h), in the innermost user namespace; 0: none */
	} security;
	enum nsrun_userns userns;       /* --userns */
	struct nsrun_id_map uid_mappings[NSRUN_MAX_ID_MAPS];    /* OCI linux.uidMappings, gidMappings that map */
	struct nsrun_id_map gid_mappings[NSRUN_MAX_ID_MAPS];    /* more than one id: with userns subids, */
	size_t n_uid_mappings, n_gid_mappings;  /* written as given instead of the caller's ranges (subid.h) */
	bool rootfs_writable;           /* --read-only=false: an overlay over the image with a tmpfs
					 * upper layer of --tmpfs-size; the default is read-only */
	bool rootfs_in_place;           /* with rootfs_writable, OCI root.readonly false: rootfs itself
					 * is bound read-write and written (as runc and crun), no tmpfs
					 * layer; as root through an idmapped mount (its owner is the
					 * container's root).  Never set for nsrun's own --image runs */
	struct nsrun_output {
		bool capture;           /* stdout and stderr through pipes, not passed through */
		uint64_t limit_bytes;   /* kept of each captured stream (--output-limit) */
		bool limit_kill;        /* past the limit: end the run (status output_limit) */
		char *json_path;        /* --json FILE, "-" for stdout (implies capture); NULL: none */
		char *stdin_path;       /* --stdin FILE; NULL: the caller's (/dev/null with --json) */
	} output;
	struct nsrun_publish *publish;  /* -p, in order */
	size_t n_publish;
	struct nsrun_tmpfs *tmpfs;      /* --tmpfs, in order */
	size_t n_tmpfs;
	struct nsrun_add_host *add_hosts;       /* --add-host, in order (etc_files.h writes them) */
	size_t n_add_hosts;
	struct nsrun_service {
		bool detach;            /* -d: nsrun goes on as the monitor, in its own session */
		char *name;             /* --name; NULL: one is made up for -d */
		uint16_t wait_port;     /* --wait-port: a published container port that must accept first; 0 = none */
		uint64_t ready_timeout_us;      /* --ready-timeout: how long -d waits for that */
		bool timeout_given;     /* --timeout was given (a -d service has none by default) */
		bool stop_with_parent;  /* --stop-with-parent: stopped when the process that ran nsrun -d ends */
		pid_t stop_with_pid;    /* --stop-with-pid: stopped when that process ends; 0 = none */
		struct strv labels;     /* --label KEY=VALUE (as docker's), in state.json; for ps and
					 * stop/rm --all --filter label=KEY[=VALUE] */
		char *wait_log;         /* --wait-log REGEX: -d returns once a line of the log matches (POSIX ERE) */
		uint16_t wait_http_port;        /* --wait-http PORT[/PATH]: ... once GET PATH on that published */
		char *wait_http_path;           /* container port answers 2xx or 3xx; 0 = none */
		bool wait_healthy;      /* --wait-healthy: ... once --health-cmd succeeded */
		struct nsrun_health {
			char *cmd;              /* --health-cmd: run by /bin/sh -c inside, as nsrun exec; NULL = none */
			uint64_t interval_us;   /* --health-interval (docker's default 30s) */
			uint64_t timeout_us;    /* --health-timeout: a longer check counts as failed (30s) */
			uint64_t start_period_us;       /* --health-start-period: failures then do not count (0) */
			uint64_t retries;       /* --health-retries: failures in a row that make it unhealthy (3) */
		} health;
		bool open_stdin;        /* -i: with -d, the service's stdin is held for attaching
					 * clients (service_stdin.h); without, nsrun's is passed */
		bool stdin_once;        /* --stdin-once: the first attached client's end is its EOF
					 * (Docker's StdinOnce) */
	} service;
	uint64_t publish_max_connections;       /* --publish-max-connections: simultaneous connections
						 * of each published port; more are reset (default 256) */
	bool tty;                       /* -t: the payload's stdio is a new pty of the container's own
					 * devpts; nsrun relays it to its own stdin/stdout */
	char *cgroup_parent;            /* --cgroup-parent, relative to the cgroup2 mount; NULL: choose */
	char *cgroups_path;             /* OCI linux.cgroupsPath, cleaned (no "..", "."): the run's
					 * cgroup itself; absolute: below each hierarchy's root,
					 * relative: below nsrun's own cgroup (runc's meaning:
					 * cgroup.h); NULL: nsrun names it */
	enum nsrun_network network;
	char *network_name;             /* container: the service's name; named: the network's; else NULL */
	char *ns_path[NSRUN_JOIN__COUNT];       /* OCI linux.namespaces[].path of ipc, uts, pid, user: joined
						 * as the network's path is (netjoin.h); NULL: a new one */
	enum nsrun_isolation isolation;
	char *isolation_why;            /* chosen below full by tier_choose: why full (and reduced) did
					 * not work; NULL when --isolation named the tier */
	bool isolation_auto;            /* no --isolation (and no --strict): full is tried first, and a
					 * set-up that fails before the payload starts falls back to the
					 * tier tier_choose finds (main.c); no probe on a run's start-up */
	bool isolation_retry;           /* this run is that fallback: what the failed full attempt
					 * warned of (seccomp, --cpus) is not said twice */
	char *hostname;
	char *exec_fifo;                /* OCI create (oci.h): the fifo pid 1 opens for writing, which
					 * blocks until `nsrun start` opens it, before the payload is
					 * forked; NULL: none */
	struct nsrun_oci_inside oci_inside;     /* OCI create: the hooks run in the container */
	int oom_score_adj;              /* OCI process.oomScoreAdj (-1000 to 1000), written by init to
					 * /proc/self/oom_score_adj before the payload starts (proc(5));
					 * only when oom_score_adj_set */
	bool oom_score_adj_set;
	struct strv masked_paths;       /* OCI linux.maskedPaths beyond nsrun's own list: /dev/null
					 * (a file) or an empty read-only tmpfs (a directory) over each,
					 * after every other mount; a path missing from the rootfs is skipped */
	struct strv readonly_paths;     /* OCI linux.readonlyPaths beyond nsrun's own: bound read-only */
	struct nsrun_device *devices;   /* OCI linux.devices: nodes of the host bound into /dev (mount.h) */
	size_t n_devices;
	struct strv sysctl;             /* OCI linux.sysctl: "key=value" (sysctl(8)'s dotted key), written
					 * by init in the container's namespaces (sysctl.h) */
	unsigned long rootfs_propagation;       /* OCI linux.rootfsPropagation: MS_SHARED, MS_SLAVE,
						 * MS_PRIVATE or MS_UNBINDABLE, with MS_REC for the
						 * r-forms, set on the container's "/" after pivot_root;
						 * 0: private (nsrun's default) */
	unsigned preserve_fds;          /* OCI create --preserve-fds and LISTEN_FDS: fds 3 to 3+N-1 of
					 * the caller reach the payload as they are; 0: none */
	char *console_socket;           /* OCI create --console-socket (with tty): the pty master goes
					 * to this AF_UNIX socket (SCM_RIGHTS), not relayed; NULL: none */
	struct strv copy_archive_tars;  /* --copy-archive TAR:DIR, in order: the tar archives (host
					 * paths, opened before clone) the payload's process extracts
					 * into copy_archive_dirs[i] (normalised, absolute) before its
					 * command, as docker cp into a created container (exec.h) */
	struct strv copy_archive_dirs;
	int archive_op;                 /* --archive-get|--archive-stat PATH (nsrun api's docker cp
					 * from a created container): the copy_archive_op
					 * (copy_archive.h) the payload's process does on archive_path,
					 * confined as its command would be, after --copy-archive,
					 * instead of the command; 0: none */
	char *archive_path;
	bool debug;
	bool debug_timing;              /* --debug-timing or NSRUN_DEBUG=timing: per-phase times */
};

/* Fills cfg with the defaults. Returns 0 or -1 (ENOMEM). */
int config_init(struct nsrun_config *cfg, struct nsrun_error *err);

/* Parses "-e KEY[=VALUE]" and appends it to process.user_env; KEY alone takes
 * nsrun's own value (getenv(3)) and is left out when unset, as docker does.
 * Returns 0 or -1 with err (errnum 0 for a malformed KEY, ENOMEM). */
int config_add_env(struct nsrun_config *cfg, const char *arg, struct nsrun_error *err);

/* FILE mode: file (a path on the host) is mounted alone, read-only, at
 * /work/<basename> and becomes the payload's first argument; refused unless a
 * regular file the payload can read (realpath(3), stat(2), access(2)).  Returns 0
 * or -1 with err (errno of those calls, or 0). */
int config_set_file(struct nsrun_config *cfg, const char *file, struct nsrun_error *err);

/* Parses "-v HOST:CONTAINER[:ro|rw]" and appends it. Returns 0 or -1 with err. */
int config_add_volume(struct nsrun_config *cfg, const char *spec, struct nsrun_error *err);

/* Parses "--copy-archive TAR:DIR" (TAR up to the first ':'; DIR absolute, no
 * "..") and appends it.  Returns 0 or -1 with err (errnum 0, or ENOMEM). */
int config_add_copy_archive(struct nsrun_config *cfg, const char *spec, struct nsrun_error *err);

/* Parses "--user UID[:GID]". Returns 0 or -1 with err. */
int config_set_user(struct nsrun_config *cfg, const char *spec, struct nsrun_error *err);

/* Parses the command line's "--user USER[:GROUP]": numbers as config_set_user;
 * a name (either part) is kept in cfg->user_spec for cli_resolve to look up in
 * the image (image_user.h).  Returns 0 or -1 with err. */
int config_set_user_spec(struct nsrun_config *cfg, const char *spec, struct nsrun_error *err);

/* Parses "--tmpfs PATH[:size=BYTES,mode=OCTAL]" and appends it (the options are split
 * by getsubopt(3); size takes k, m, g).  Returns 0 or -1 with err. */
int config_add_tmpfs(struct nsrun_config *cfg, const char *spec, struct nsrun_error *err);

/* Parses "-p [HOST_IP:]HOST_PORT:CONTAINER_PORT[/tcp]" (an IPv6 HOST_IP in brackets)
 * and appends it.  Returns 0 or -1 with err. */
int config_add_publish(struct nsrun_config *cfg, const char *spec, struct nsrun_error *err);

/* Parses "--add-host NAME:IP" (also NAME=IP; an IPv6 IP plain or in brackets, as
 * docker takes it) and appends it.  "host-gateway" is refused: nsrun gives the
 * container no address of the host.  Returns 0 or -1 with err. */
int config_add_host(struct nsrun_config *cfg, const char *spec, struct nsrun_error *err);

/* Parses "--label KEY[=VALUE]" (docker's: KEY alone has an empty value; a KEY given
 * again replaces).  Returns 0 or -1 with err. */
int config_add_label(struct nsrun_config *cfg, const char *spec, struct nsrun_error *err);

/* Sets --wait-log REGEX once it compiles as a POSIX extended regular expression
 * (regcomp(3)).  Returns 0 or -1 with err. */
int config_set_wait_log(struct nsrun_config *cfg, const char *regex, struct nsrun_error *err);

/* Parses "--wait-http CONTAINER_PORT[/PATH]" (PATH default "/").  Returns 0 or -1 with err. */
int config_set_wait_http(struct nsrun_config *cfg, const char *spec, struct nsrun_error *err);

/* The cross-field checks of -p, --tmpfs, -d, --name and --wait-port (config_service.c);
 * called by config_validate.  Returns 0 or -1 with err. */
int config_validate_service(const struct nsrun_config *cfg, struct nsrun_error *err);

/* The cross-field checks of --network container:NAME and --network NAME (no -p;
 * no --add-host on a named network); called by config_validate_service.
 * Returns 0 or -1 with err. */
int config_validate_network(const struct nsrun_config *cfg, struct nsrun_error *err);

/* Cross-field checks after the image is merged. Returns 0 or -1 with err. */
int config_validate(const struct nsrun_config *cfg, struct nsrun_error *err);

/* Sets the environment every run starts from (PATH, HOME=/tmp, LANG=C.UTF-8),
 * before the image's and -e's entries.  Returns 0 or -1 with err (ENOMEM). */
int config_env_defaults(struct nsrun_config *cfg, struct nsrun_error *err);

/* Normalises an absolute container path ("/a//b/./c/" -> "/a/b/c"); rejects "..".
 * Returns a malloc'd string, or NULL with err. */
char *config_container_path(const char *what, const char *path, struct nsrun_error *err);

void config_free(struct nsrun_config *cfg);

#endif
