/* exec_join.h - `nsrun exec NAME -- CMD`: a command in a running service, as its
 * payload is (docker exec).
 *
 * Three processes, as nsenter(1) and runc's exec do it:
 *   nsrun exec (the caller's)  finds the service's payload through the monitor
 *                              (state.h) with pidfds, so no reused pid is taken
 *                              for it; opens its namespaces and checks they are
 *                              the container's; reads its rlimits and cgroups;
 *                              compiles the seccomp profile of the service's
 *                              exec spec (exec_spec.h); then relays stdio and
 *                              signals to the command and returns its status;
 *   the joiner (a child)       takes the payload's rlimits and cgroups, then
 *                              setns(2): the container's user namespace first
 *                              (it gives the rights over the others), then mount,
 *                              pid, net, ipc, uts, cgroup, then the payload's own
 *                              user namespace (user_namespaces(7): a capability
 *                              in the container's covers its child), and the
 *                              payload's uid/gid; clone(CLONE_PARENT) puts the
 *                              command into the container's pid namespace as a
 *                              child of nsrun exec, and the joiner exits;
 *   the command                its own session, the relay's pipes on fds 0-2,
 *                              then exec_command (exec.h): no capabilities,
 *                              no_new_privs, the payload's Landlock rules and
 *                              seccomp filter, execve.
 * The command dies with the service: when the container's init exits the kernel
 * kills its pid namespace (pid_namespaces(7)).  Only a service of isolation full
 * can be joined.
 */
#ifndef NSRUN_EXEC_JOIN_H
#define NSRUN_EXEC_JOIN_H

#include <stdbool.h>
#include <sys/types.h>

#include "copy_archive.h"
#include "error.h"

/* What to run, and where. */
struct nsrun_exec_config {
	const char *name;               /* the service (nsrun -d --name) */
	char *const *argv;              /* the command, NULL-terminated; argv[0] found in PATH */
	char *const *env;               /* KEY=VALUE over the service's environment, NULL-terminated;
					 * NULL: none */
	const char *workdir;            /* absolute, inside; NULL: the service's */
	bool user_set;                  /* -u: uid/gid below, else the service's */
	uid_t uid;
	gid_t gid;
	const char *user_spec;          /* -u with a name (USER[:GROUP], image_user.h): looked up in
					 * the container's /etc/passwd and /etc/group into uid/gid
					 * once it is found; NULL: uid/gid as given */
	bool interactive;               /* -i: the caller's stdin is relayed; else /dev/null */
	bool tty;                       /* -t: a pty of the container's devpts for stdio, relayed to
					 * ours (raw while it runs, as a run's -t: docs/terminals.md) */
	bool debug;                     /* --debug: what was found, on stderr */
	/* the OCI runtime's exec (oci.h): a container under --root, not a service */
	bool oci;                       /* the fields below apply; stdio is ours as it is (no relay) */
	int oci_dir_fd;                 /* its state directory (ROOT/ID) */
	bool env_replace;               /* env is the whole environment (process.json), not over the payload's */
	bool detach;                    /* --detach: return once it exec'd, leaving it running (no
					 * parent-death signal); its pid in *pid_out */
	const char *console_socket;     /* with tty: the pty's master goes there (runc's protocol), not relayed */
	unsigned preserve_fds;          /* --preserve-fds N: our fds 3 to 3+N-1 reach the command as they are
					 * (each must be open before nsrun exec opens anything) */
	/* called once the command exec'd, before it is waited for, with its pid (ours):
	 * the OCI --pid-file; -1 (err set) kills it and exec_in_service fails; NULL: none */
	int (*started)(pid_t pid, void *ctx, struct nsrun_error *err);
	void *started_ctx;
	enum copy_archive_op archive;   /* --archive-*: instead of argv, nsrun itself does docker
					 * cp's half on archive_path, confined as the command
					 * would be (copy_archive.h) */
	const char *archive_path;
};

/* Runs x->argv in the running service x->name (see above) with this process's
 * fds 0, 1 and 2 relayed (relay.h: another front door, such as the Docker API's
 * exec, forks and puts its streams there first) and SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and
 * SIGUSR2 forwarded to it.  Returns its exit status as docker exec gives it: its
 * own, 128+N for signal N, 126 when it cannot be executed, 127 when not found
 * (the message is printed); or -1 with err when nsrun failed (exit 125): no such
 * service, not running, not of isolation full, a namespace that is not the
 * container's (errnum 0), or the errno of setns(2), clone(2), open(2).
 * x->oci: the container of x->oci_dir_fd, stdio passed as it is (a pty sent to
 * x->console_socket with x->tty); x->detach returns 0 once the command exec'd. */
int exec_in_service(const struct nsrun_exec_config *x, struct nsrun_error *err);

#endif
