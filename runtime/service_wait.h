/* service_wait.h - when a service is ready (nsrun -d --wait-log, --wait-http,
 * --wait-healthy) and its health (--health-cmd and its kin, Docker's flags and
 * semantics: docs.docker.com/reference/dockerfile/#healthcheck).
 *
 * The health check runs in a process of its own, a child of the monitor that dies
 * with it (PR_SET_PDEATHSIG): every --health-interval it runs
 * `nsrun exec NAME -- /bin/sh -c CMD` (the service's payload user, namespaces and
 * filter, as nsrun exec) and writes the outcome to state.json's "health"; the
 * monitor writes state.json only before starting it and after stopping it, so the
 * two never write at once.  The waits run in the nsrun -d that started the
 * service, reading the log, state.json and the published port. */
#ifndef NSRUN_SERVICE_WAIT_H
#define NSRUN_SERVICE_WAIT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "state.h"

/* Forks the health checker of service name (state at dir_fd) when cfg has
 * --health-cmd.  Returns its pid, or -1 when there is none (no check, or fork(2)
 * failed: the health then stays "starting"). */
pid_t health_start(const struct nsrun_config *cfg, int dir_fd, const char *name);

/* Kills (SIGKILL) and reaps the checker pid (nothing for -1). */
void health_stop(pid_t pid);

/* True if cfg asks -d to wait for more than the start (and --wait-port). */
bool service_wants_wait(const struct nsrun_config *cfg);

/* Waits until every wait of cfg holds for the service at dir_fd (st: its ports as
 * bound), up to deadline_us (monotonic_us()).  Returns 1 ready; 0 timed out; -1
 * it cannot be (it ended, or became unhealthy); for 0 and -1, why says what fell short. */
int service_wait(const struct nsrun_config *cfg, int dir_fd, const struct service_state *st, uint64_t deadline_us,
		 char *why, size_t whylen);

#endif
