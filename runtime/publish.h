/* publish.h - -p: host ports that reach the container's ports while the container
 * keeps --network none (a network namespace holding only lo).
 *
 * Three parts:
 *   the supervisor binds every HOST_IP:HOST_PORT before clone (a port in use, or
 *     port 0 resolved to a free one, is known before anything starts);
 *   the container's init hands out sockets made in the container's network
 *     namespace, one per request, over a SOCK_SEQPACKET socketpair (SCM_RIGHTS);
 *   the forwarder, a child of the supervisor that runs as the caller in the host's
 *     namespaces, accepts on the host ports, connects such a socket to
 *     127.0.0.1:CONTAINER_PORT (connect(2) acts in the namespace the socket was made
 *     in) and relays bytes both ways.
 * Nothing inside the container can open a socket outside it: it only ever gets
 * connections; the payload cannot reach the forwarder (another pid namespace) nor
 * the socketpair (init's, closed before the payload's exec).
 */
#ifndef NSRUN_PUBLISH_H
#define NSRUN_PUBLISH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "error.h"

struct publish_state {
	bool opened;
	size_t n;                       /* cfg->n_publish */
	int listen_fd[NSRUN_MAX_PUBLISH];       /* host-side listening sockets */
	uint16_t host_port[NSRUN_MAX_PUBLISH];  /* as bound (port 0 resolved) */
	int factory_fd;                 /* supervisor/forwarder end of the socket channel */
	int container_fd;               /* init's end */
	pid_t forwarder;                /* -1: not started */
};

/* An empty state (every fd -1): publish_close() on it does nothing. */
void publish_init(struct publish_state *ps);

/* Binds and listens on every -p host address of cfg (SO_REUSEADDR, close-on-exec),
 * and makes the socket channel.  Returns 0, or -1 with err (errno of bind(2):
 * EADDRINUSE names the port). */
int publish_open(const struct nsrun_config *cfg, struct publish_state *ps, struct nsrun_error *err);

/* In the container's child, before anything else: closes every fd of ps but
 * container_fd, which init serves with publish_serve(). */
void publish_child_close(struct publish_state *ps);

/* Supervisor, after clone: forks the forwarder, which keeps only the listening
 * sockets, factory_fd and ready_fd (it closes every other fd it inherited), and
 * dies with the supervisor (PR_SET_PDEATHSIG) or when init closes the channel.
 * With ready_fd >= 0 it probes 127.0.0.1:wait_port inside the container every
 * 50 ms and writes "R" to ready_fd at the first accepted connection.  Closes the
 * supervisor's container_fd.  Returns 0 or -1 with err (fork(2)). */
int publish_start_forwarder(const struct nsrun_config *cfg, struct publish_state *ps, int ready_fd,
			    struct nsrun_error *err);

/* Container init: answers one request read from fd with a new TCP socket of the
 * requested family in this network namespace (SCM_RIGHTS), or with an errno.
 * Returns 0, or -1 when the channel is closed (the forwarder is gone). */
int publish_serve(int fd);

/* True if ip (numeric) is a loopback address: 127.0.0.0/8 or ::1. */
bool publish_is_loopback(const char *ip);

/* True if some host port is still served by our own listening socket (under
 * --network pasta, pasta takes over the loopback ones: pasta.h). */
bool publish_has_listeners(const struct publish_state *ps);

/* "127.0.0.1:41234->6379/tcp, ..." for messages and nsrun ps. */
void publish_format(const struct nsrun_config *cfg, const struct publish_state *ps, char *buf, size_t len);

/* Kills (SIGKILL) and reaps the forwarder, closes every fd.  Idempotent. */
void publish_close(struct publish_state *ps);

#endif
