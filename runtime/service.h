/* service.h - daemonless services: `nsrun -d`, `nsrun ps`, `logs`, `stop`, `rm`.
 *
 * No daemon: the nsrun that starts a service forks its monitor, which runs the
 * container exactly as a foreground run does (nsrun_run_service), in its own
 * session with its stdio on the service's log.  Each service has a directory
 * $XDG_RUNTIME_DIR/nsrun/NAME/ or ${XDG_STATE_HOME:-$HOME/.local/state}/nsrun-services/NAME/ (0700, owned by the caller,
 * never through a symlink) holding
 *   lock        flock(2)ed by the monitor and the container's init as long as
 *               either lives: a free lock means the service is gone, whatever
 *               pids were reused meanwhile;
 *   state.json  name, monitor pid, ports, log path, image, command, status
 *               (written to a temporary file and renamed over: readers see a
 *               whole document or the previous one);
 *   log         the payload's stdout and stderr and the monitor's messages;
 *   log.index   which stream each write to the log came from, and when
 *               (log_index.h; the API's logs read it).
 * The monitor dies with nothing left: init and the forwarder have
 * PR_SET_PDEATHSIG SIGKILL, and the kernel kills the pid namespace with init.
 */
#ifndef NSRUN_SERVICE_H
#define NSRUN_SERVICE_H

#include <stdbool.h>

#include "config.h"
#include "state.h"

struct timing;

/* nsrun -d: starts cfg (validated) as a service and returns once it is ready
 * (exec'd, or --wait-port accepting) with 0, printing its name and ports (or a
 * JSON document with --json), or with 125 after removing every trace of it and
 * printing its last log lines (127 or 126, as docker run -d, where it ended so
 * before it was ready: its command is not there or cannot be executed).  In the
 * monitor it returns the run's exit status
 * (the caller just frees and exits). */
int service_detach(struct nsrun_config *cfg, struct timing *timing);

/* nsrun ps|logs|stop|rm ...: argv[1] is the subcommand.  Returns the exit status. */
int service_main(int argc, char **argv);

/* Removes the directory under root_fd of a dead service named name (its lock
 * free, not an exited one kept until rm), so the name can be reused. */
void service_clean_if_stale(int root_fd, const char *name);

#endif
