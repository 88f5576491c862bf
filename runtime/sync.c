/* sync.c - see sync.h */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sync.h"
#include "sys.h"

const char sync_socketpair_denied_hint[] = "an outer sandbox's seccomp filter denies it (agent sandboxes "
	"allow AF_UNIX stream socketpairs: Claude Code's, Codex's): no fix inside this sandbox; run nsrun outside it";
const char sync_fd_denied_hint[] = "an outer sandbox's seccomp filter denies sendmsg/recvmsg, through which "
				   "--tty passes the terminal: run without -t there (no fix inside this sandbox)";

const char *sync_type_name(uint32_t type)
{
	switch (type) {
	case SYNC_ID_MAPS_WRITTEN: return "ID_MAPS_WRITTEN";
	case SYNC_EXEC_OK: return "EXEC_OK";
	case SYNC_EXEC_FAILED: return "EXEC_FAILED";
	case SYNC_PAYLOAD_EXITED: return "PAYLOAD_EXITED";
	case SYNC_ERROR: return "ERROR";
	case SYNC_KILL_ALL: return "KILL_ALL";
	case SYNC_PTY: return "PTY";
	case SYNC_CREATED: return "CREATED";
	}
	return "unknown";
}

/* write(2), not send(2): outer sandboxes' seccomp filters deny sendto (Codex's
 * linux-sandbox network filter), never write.  write has no MSG_NOSIGNAL: SIGPIPE is
 * blocked around it, and one it raised (the peer is gone: EPIPE) is taken back
 * with sigtimedwait(2) before the old mask returns, so it never kills nsrun. */
static int send_msg(int fd, const struct sync_msg *msg)
{
	const char *p = (const char *)msg;
	size_t left = sizeof(*msg);
	sigset_t pipe_set, old;
	int rc = 0, saved;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigprocmask(SIG_BLOCK, &pipe_set, &old);
	while (left > 0) {
		ssize_t n = write(fd, p, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -1;
			break;
		}
		p += n;
		left -= (size_t)n;
	}
	saved = errno;
	if (rc < 0 && errno == EPIPE && !sigismember(&old, SIGPIPE)) {
		const struct timespec now = { 0, 0 };
		sigtimedwait(&pipe_set, NULL, &now);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	return rc;
}

int sync_send(int fd, enum sync_type type, int64_t value, struct nsrun_error *err)
{
	struct sync_msg msg = { .type = type, .value = value };

	if (send_msg(fd, &msg) < 0)
		return error_set(err, errno, "send %s to the %s", sync_type_name(type),
				 type == SYNC_ID_MAPS_WRITTEN ? "container" : "supervisor");
	return 0;
}

int sync_send_error(int fd, enum sync_type type, const struct nsrun_error *e)
{
	struct sync_msg msg = { .type = type, .errnum = e->errnum, .stage = e->stage, .hint = e->hint };

	snprintf(msg.text, sizeof(msg.text), "%s", e->msg);
	return send_msg(fd, &msg);
}

int sync_send_fd(int fd, enum sync_type type, int passfd, struct nsrun_error *err)
{
	struct sync_msg msg = { .type = type };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = &msg, .iov_len = sizeof(msg) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	ssize_t n;

	memset(&u, 0, sizeof(u));
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &passfd, sizeof(int));
	do
		n = sendmsg(fd, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		error_set(err, errno, "send %s to the supervisor", sync_type_name(type));
		if (errno == EPERM || errno == EACCES)
			err->hint = sync_fd_denied_hint;
		return -1;
	}
	return 0;
}

/* One whole message with read(2), which no outer filter denies (recvfrom and
 * recvmsg some do).  Returns bytes read: sizeof(*msg), 0 at EOF, less when the
 * peer closed mid-message; -1 with errno. */
static ssize_t read_msg(int fd, struct sync_msg *msg)
{
	return read_full(fd, msg, sizeof(*msg));
}

/* recvmsg(2) with room for one SCM_RIGHTS fd (-1 in *got when none came). */
static ssize_t recv_msg_fd(int fd, struct sync_msg *msg, int *got)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = msg, .iov_len = sizeof(*msg) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	ssize_t n;

	*got = -1;
	/* a stream socket: MSG_WAITALL takes the whole message (or EOF, or a signal) */
	do
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | MSG_WAITALL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(got, CMSG_DATA(c), sizeof(int));
	return n;
}

int sync_recv(int fd, bool with_fd, struct sync_msg *msg, struct nsrun_error *err)
{
	int got = -1;
	ssize_t n;

	memset(msg, 0, sizeof(*msg));
	n = with_fd ? recv_msg_fd(fd, msg, &got) : read_msg(fd, msg);
	if (n < 0) {
		error_set(err, errno, "receive from the sync socket");
		if (with_fd && (errno == EPERM || errno == EACCES))
			err->hint = sync_fd_denied_hint;
		return -1;
	}
	if (n == 0) {
		if (got >= 0)
			close(got);
		return 0;
	}
	if ((size_t)n != sizeof(*msg)) {
		if (got >= 0)
			close(got);
		return error_set(err, EPROTO, "short message on the sync socket (%zd bytes)", n);
	}
	msg->text[sizeof(msg->text) - 1] = '\0';
	if (msg->type == SYNC_PTY)
		msg->value = got;
	else if (got >= 0)
		close(got);
	return 1;
}

int sync_expect(int fd, enum sync_type type, struct sync_msg *msg, struct nsrun_error *err)
{
	int r = sync_recv(fd, false, msg, err);

	if (r < 0)
		return -1;
	if (r == 0)
		return error_set(err, EPIPE, "waiting for %s: the other side exited", sync_type_name(type));
	if (msg->type == SYNC_ERROR)
		return sync_msg_error(msg, err);
	if (msg->type != type)
		return error_set(err, EPROTO, "expected %s, got %s", sync_type_name(type),
				 sync_type_name(msg->type));
	return 0;
}

int sync_msg_error(const struct sync_msg *msg, struct nsrun_error *err)
{
	err->errnum = msg->errnum;
	err->stage = msg->stage;
	err->hint = error_hint_from_peer(msg->hint);
	snprintf(err->msg, sizeof(err->msg), "%s", msg->text);
	error_one_line(err->msg);
	return -1;
}
