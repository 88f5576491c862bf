/* pasta.h - --network pasta: an opt-in way out for the container through pasta(1)
 * (Debian's passt package), a user-mode network stack that runs as the caller.
 *
 * pasta joins the container's user and network namespaces, makes a tap interface
 * there (eth0, with the host's addresses and routes copied: --config-net) and
 * turns the container's traffic into ordinary sockets of the caller on the host,
 * so the container reaches what the caller reaches, no more.  nsrun keeps it from
 * the host's own services: no mapping of the gateway address to the host's
 * loopback (--no-map-gw) and no automatic forwarding of ports either way (-t, -u,
 * -T, -U none), so a port bound on the host's 127.0.0.1 stays out of reach.
 * Published ports (-p) on a loopback HOST_IP are pasta's -t ADDR/HOST_PORT:CONTAINER_PORT
 * in this mode; those on other addresses stay with nsrun's forwarder (publish.h).
 *
 * pasta daemonizes once the interface is configured and does not exit when the
 * namespace's processes die, so nsrun runs it under a guard: a child of the
 * supervisor that is a child subreaper (PR_SET_CHILD_SUBREAPER, prctl(2)), so the
 * daemon becomes the guard's child, and that kills it (SIGKILL) when the socket
 * from the supervisor reaches EOF: at the end of the run, or when the supervisor
 * dies however it dies.
 */
#ifndef NSRUN_PASTA_H
#define NSRUN_PASTA_H

#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "error.h"
#include "publish.h"

struct pasta_state {
	pid_t guard;                    /* -1: not started */
	int ctl_fd;                     /* our end of the guard's socket; its EOF stops pasta */
};

/* An empty state: pasta_stop() on it does nothing. */
void pasta_init(struct pasta_state *ps);

/* Starts pasta for the container whose init is child (its user namespace has its
 * id maps already), forwarding the loopback host ports of pub (bound by
 * publish_open(), whose sockets are closed here so that pasta can bind the same
 * ports; the others keep theirs for the forwarder), and
 * returns once the container's interface is configured.  deadline_us is
 * CLOCK_MONOTONIC microseconds (0: 10 s from now).  Returns 0, or -1 with err:
 * ENOENT (no pasta: install passt), ETIMEDOUT, or pasta's own message (EPERM
 * when /dev/net/tun is not open to the caller, with a hint). */
int pasta_start(const struct nsrun_config *cfg, struct publish_state *pub, pid_t child, uint64_t deadline_us,
		struct pasta_state *ps, struct nsrun_error *err);

/* Stops pasta (SIGKILL from its guard) and reaps the guard.  Idempotent. */
void pasta_stop(struct pasta_state *ps);

/* Why --network pasta cannot work here, or NULL if it may: pasta is not installed,
 * or /dev/net/tun cannot be opened read-write by the caller.  Writes into buf. */
const char *pasta_unavailable(char *buf, size_t len);

/* The host's resolv.conf(5) to bind read-only over the container's
 * /etc/resolv.conf: /etc/resolv.conf, or systemd-resolved's list of upstream
 * servers when the former names only a loopback resolver (which the container
 * cannot reach: --no-map-gw).  NULL if the host has none. */
const char *pasta_resolv_conf(void);

#endif
