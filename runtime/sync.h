/* sync.h - the supervisor <-> container protocol over an AF_UNIX stream socketpair.
 *
 * Fixed-size messages (struct sync_msg) with write(2) and read(2): a stream
 * socket because an outer sandbox's filter may allow no other type, and plain
 * write/read because filters deny send/recv calls (Codex's linux-sandbox denies
 * sendto); only -t passes an fd, with sendmsg/recvmsg.  Both sides mark each exchange with the same comment
 * (`sync: ID_MAPS_WRITTEN`) so a reader can pair them.  Order of a run:
 *   parent -> pid 1   ID_MAPS_WRITTEN      uid_map/gid_map are written
 *                                         (--userns subids: newuidmap and newgidmap
 *                                         have exited, and as root the image tree is
 *                                         idmapped; subid.h)
 *   pid 1 -> parent   CREATED              (OCI create only) set up; pid 1 now waits until
 *                                          `nsrun start` opens the exec fifo
 *   pid 1 -> parent   EXEC_OK(pid)         the payload exec'd (value: its pid inside)
 *                  or EXEC_FAILED(errno)   execve failed (126/127)
 *                  or ERROR(nsrun_error)   set-up failed (125)
 *   pid 1 -> parent   PAYLOAD_EXITED(status)  wait status of the payload, after pid 1
 *                                          killed and reaped every other process
 *   parent -> pid 1   KILL_ALL             (timeout, output limit) kill and reap every
 *                                          process, then exit; SIGKILL follows if it lingers
 * EOF where a message is expected is an error (the peer died).
 */
#ifndef NSRUN_SYNC_H
#define NSRUN_SYNC_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

enum sync_type {
	SYNC_ID_MAPS_WRITTEN = 1,
	SYNC_EXEC_OK,
	SYNC_EXEC_FAILED,
	SYNC_PAYLOAD_EXITED,
	SYNC_ERROR,
	SYNC_KILL_ALL,
	SYNC_PTY,               /* pid 1 -> parent, before EXEC_OK: the pty master (SCM_RIGHTS) */
	SYNC_CREATED,           /* pid 1 -> parent (OCI create, cfg->exec_fifo): set up, waiting on the
				 * exec fifo before the payload is forked */
};

/* The value of ID_MAPS_WRITTEN when the reduced tier runs without id maps (the
 * outer sandbox refused them): pid 1 and the payload stay nobody. */
#define SYNC_UNMAPPED 1
/* Its value when an OCI root to be written in place (cfg->rootfs_in_place) could
 * not be idmapped as root (its file system cannot: overlayfs, podman's): pid 1
 * lays the tmpfs layer of --read-only=false over it instead. */
#define SYNC_ROOT_LAYERED 2

struct sync_msg {
	uint32_t type;          /* enum sync_type */
	int32_t errnum;
	int32_t stage;          /* enum nsrun_stage, for SYNC_ERROR */
	int32_t pad;
	int64_t value;
	char text[256];
	/* SYNC_ERROR: err->hint, a pointer to a static string of the program: valid in
	 * both processes, which are copies of one image (clone(2) without exec) */
	const char *hint;
};

/* Name of a message type for errors ("ID_MAPS_WRITTEN"). */
const char *sync_type_name(uint32_t type);

/* Sends a message of type with value. Returns 0 or -1 with err (errno of write(2)). */
int sync_send(int fd, enum sync_type type, int64_t value, struct nsrun_error *err);

/* Sends *e as a message of type (SYNC_ERROR or SYNC_EXEC_FAILED).
 * Returns 0 or -1 (errno of write(2)). */
int sync_send_error(int fd, enum sync_type type, const struct nsrun_error *e);

/* Copies the error carried by msg into *err. Returns -1. */
int sync_msg_error(const struct sync_msg *msg, struct nsrun_error *err);

/* Receives one message into *msg: with read(2), or with with_fd (the sender may
 * attach an fd: -t) recvmsg(2).  Returns 1, 0 on EOF, -1 with err. */
int sync_recv(int fd, bool with_fd, struct sync_msg *msg, struct nsrun_error *err);

/* The hint when an outer filter denies the sync channel's socketpair. */
extern const char sync_socketpair_denied_hint[];

/* The hint when an outer filter denies sendmsg/recvmsg, which only -t needs. */
extern const char sync_fd_denied_hint[];

/* Sends a message of type with passfd attached (SCM_RIGHTS, unix(7)).  Returns 0 or
 * -1 with err.  The receiver's sync_recv puts the new fd (close-on-exec) in
 * msg->value, or -1 when none came; fds attached to other types are closed. */
int sync_send_fd(int fd, enum sync_type type, int passfd, struct nsrun_error *err);

/* Receives the message `type`; a SYNC_ERROR message becomes *err (the peer's
 * stage, errno and text), EOF or another type is an error.  Returns 0 or -1. */
int sync_expect(int fd, enum sync_type type, struct sync_msg *msg, struct nsrun_error *err);

#endif
