/* api.h - `nsrun api`: the Docker Engine API (v1.41 paths and shapes) on a unix socket.
 *
 * Not a system daemon: the user starts it (or a socket unit does), it serves one
 * socket of the caller's own (mode 0600), and it exits after --idle-timeout when no
 * request is in flight and no service runs.  Containers are nsrun services
 * (service.h): `nsrun -d`, `ps`, `logs`, `stop`, `rm` and the API see the same
 * state.  HTTP is libmicrohttpd's (one thread a connection), JSON yajl's.
 * docs/docker-api.md says what is served and how it differs from Docker.
 */
#ifndef NSRUN_API_H
#define NSRUN_API_H

/* nsrun api [--socket PATH] [--idle-timeout SECONDS] [--volume-root DIR]...:
 * argv[1] is "api".  Returns the exit status (0 after the idle timeout or SIGTERM,
 * 125 when it cannot serve). */
int api_main(int argc, char **argv);

#endif
