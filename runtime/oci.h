/* oci.h - nsrun as an OCI runtime: runc's command line over a bundle
 * (runtime-spec 1.2, runtime.md "Operations" and its "Command Line Interface"),
 * so podman (--runtime), containerd (BinaryName) and CRI-O (runtime_path) can run
 * their containers with nsrun's isolation.  docs/oci-runtime.md says what is mapped.
 *
 *   nsrun [GLOBAL] create --bundle DIR [--pid-file F] [--console-socket S] ID
 *   nsrun [GLOBAL] start ID | state ID | kill [--all] ID [SIGNAL] | delete [--force] ID
 *   nsrun [GLOBAL] run [--bundle DIR] [--pid-file F] [--detach] ID | list [--format json] | features
 *   GLOBAL: --root DIR, --log FILE, --log-format text|json, --systemd-cgroup, --rootless V, --debug
 *
 * A container is a service (service.h, state.h) under --root: its directory ID/
 * holds lock, state.json (with "bundle") and, until start, exec.fifo.  create
 * forks the monitor, which runs the container as `nsrun -d` would, with the
 * caller's stdio; the container's init waits on exec.fifo (as runc's does) before
 * it forks the payload; start opens the fifo, which lets it go on.  The pid file
 * and state's pid name the monitor: its exit status is the payload's (docker's
 * codes), a signal to it is forwarded to the payload, SIGKILL ends the container.
 * State: created (exec.fifo is there), running, stopped (the lock is free).
 */
#ifndef NSRUN_OCI_H
#define NSRUN_OCI_H

#include <stdbool.h>

/* True if argv is the OCI form: a global option of runc's first, or one of the
 * verbs create, start, state, kill, delete, run, list, features. */
bool oci_is_command(int argc, char **argv);

/* Runs the OCI command of argv.  Returns the exit status (0, 1 on failure as
 * runc's; run: the payload's). */
int oci_main(int argc, char **argv);

#endif
