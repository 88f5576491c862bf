/* network.h - named networks: `nsrun network create|ls|rm NAME` and what
 * --network NAME joins (netjoin.h).
 *
 * A network is one network namespace with only lo, owned by a user namespace of
 * its own, both held by a small holder process (a child of `network create`, in
 * its own session, doing nothing but wait) whose user namespace maps the caller's
 * id only (root's: 65534).  Every run on the network joins that namespace, as a
 * pod's containers share one: they reach each other on 127.0.0.1 (distinct
 * ports), and nothing else: no interface but lo, no route out, not the host's
 * loopback.  They share one /etc/hosts (the network's, bound read-only), which
 * names every member that ever joined (its service name and hostname) on
 * 127.0.0.1, so they find each other by name.
 *
 * State: STATE_ROOT/.networks/NAME/ (state.h's root, 0700): "holder" (its pid),
 * "hosts", and "lock": each run on the network holds it shared (flock(2)) for as
 * long as it lasts, so `network rm` (which takes it exclusive) refuses a network
 * in use; the holder holds "holder" exclusive, which identifies it.  rm kills the
 * holder and removes the directory: nothing is left.
 */
#ifndef NSRUN_NETWORK_H
#define NSRUN_NETWORK_H

#include <stddef.h>

#include "config.h"
#include "error.h"

#define NETWORKS_DIR ".networks"

/* `nsrun network create|ls|rm NAME...` (argv[1] is "network").  Returns the exit
 * status: 0, or 125 with the error printed. */
int network_main(int argc, char **argv);

/* For --network NAME: opens NAME's directory, takes its lock shared (*lock_fd),
 * checks the holder holds "holder", and opens its user and network namespaces.
 * Returns 0, or -1 with err (errnum 0: no such network, being removed, holder
 * gone). */
int network_open(const char *name, int *userns_fd, int *netns_fd, int *lock_fd, struct nsrun_error *err);

/* For --network NAME, before the run is validated: binds the network's hosts
 * file read-only at /etc/hosts (a volume).  Returns 0, or -1 with err. */
int network_add_member(struct nsrun_config *cfg, struct nsrun_error *err);

/* For --network NAME, once network_open succeeded: adds cfg's service name (or
 * its hostname) to the network's hosts file, once (flock(2) on it), refusing
 * past its size cap (1 MiB).  Returns 0, or -1 with err (errnum 0: full). */
int network_write_member(const struct nsrun_config *cfg, struct nsrun_error *err);

#endif
