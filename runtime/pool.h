/* pool.h - `nsrun pool`: a warm pool of sandboxes made by fork (docs/pool.md).
 *
 * The pool is nsrun itself, a child of the harness (no daemon).  It starts one
 * container by the ordinary run path (nsrun re-executed with --allow-nested), whose
 * payload is a zygote (runtime/pool_zygote.py, built in): a python3 with the
 * preloaded modules imported.  The zygote keeps --size slots ready ahead of demand,
 * each a fork in its own user, mount, pid, net, ipc and uts namespaces with a fresh
 * /tmp, /dev/shm and /proc, every capability dropped, the cold run's seccomp
 * filter loaded and uid 65534, waiting for code.  nsrun serves a unix socket
 * (mode 0600): a request is one frame (4-byte big-endian length, then a JSON
 * object: code, stdin, args, env, timeout, output_limit, stream); the reply one
 * frame holding the --json result document with a "pool" object, after the
 * output's frames when "stream" is true.  A slot runs one
 * request and is gone with all it started; a dead zygote is restarted; past
 * --queue waiting requests the answer is an error.
 */
#ifndef NSRUN_POOL_H
#define NSRUN_POOL_H

#include <stdbool.h>

/* `nsrun pool [--size N] [--preload MOD,...] [--socket PATH] [--queue N] [run
 * options] --image NAME`: argv as main's (argv[1] "pool").  Runs until SIGTERM,
 * SIGINT, SIGHUP or the end of a pipe on its stdin.  Prints the socket's path on
 * stdout once the first slots are ready.  Returns the exit status: 0 when
 * stopped, 125 when the pool could not start (its error printed once). */
int pool_main(int argc, char **argv);

/* True if argv is `nsrun run ... --pool ...` (a request to a pool, not the OCI
 * runtime's run: runc's has no --pool). */
bool pool_client_wanted(int argc, char **argv);

/* `nsrun run --pool SOCKET|NAME [OPTIONS] (FILE | - | -- python3 -c CODE) [ARG...]`
 * (runtime/pool_client.c): one request to a running pool.  Returns the exit status
 * as a run's (docker run's): the payload's, 128+N, 124 timeout, 125 nsrun's error. */
int pool_client_main(int argc, char **argv);

#endif
