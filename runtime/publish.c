/* publish.c - see publish.h.
 *
 * Why a forwarder of our own for -p under --network none, and not pasta (Debian's
 * passt, which forwards the loopback ports under --network pasta, pasta.c; ports
 * on other addresses stay with this forwarder there too, as Debian 12's pasta does
 * not complete connections that reach the namespace through its tap): pasta always
 * creates a tap interface in the target namespace and turns the container's
 * traffic through it into connections of the caller, so the container would hold
 * a second interface and a way out, which --network none must not give (pasta's
 * --no-tcp/--no-udp would also stop the forwarded ports).  To make that interface
 * it also opens /dev/net/tun from the container's user namespace, which fails
 * rootless wherever /dev/net/tun is not mode 0666.  A published port under
 * --network none only needs loopback connections spliced into the namespace,
 * which a socket made there by init gives us without any interface, device or
 * privilege.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "publish.h"
#include "sys.h"

#define RELAY_BUF 16384
#define PROBE_INTERVAL_MS 50

void publish_init(struct publish_state *ps)
{
	memset(ps, 0, sizeof(*ps));
	for (size_t i = 0; i < NSRUN_MAX_PUBLISH; i++)
		ps->listen_fd[i] = -1;
	ps->factory_fd = ps->container_fd = -1;
	ps->forwarder = -1;
}

static int close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
	return 0;
}

/* Fills ss for host_ip:port. Returns the length, or 0 if host_ip is not numeric. */
static socklen_t make_addr(const char *ip, uint16_t port, struct sockaddr_storage *ss)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, ip, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(port);
		return sizeof(*in4);
	}
	if (inet_pton(AF_INET6, ip, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		return sizeof(*in6);
	}
	return 0;
}

int publish_open(const struct nsrun_config *cfg, struct publish_state *ps, struct nsrun_error *err)
{
	int sv[2];

	ps->n = cfg->n_publish;
	ps->opened = true;
	for (size_t i = 0; i < cfg->n_publish; i++) {
		const struct nsrun_publish *p = &cfg->publish[i];
		struct sockaddr_storage ss;
		socklen_t len = make_addr(p->host_ip, p->host_port, &ss);
		int one = 1;

		ps->listen_fd[i] = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (ps->listen_fd[i] < 0)
			return error_set(err, errno, "-p %s:%u: socket", p->host_ip, p->host_port);
		setsockopt(ps->listen_fd[i], SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (ss.ss_family == AF_INET6)
			setsockopt(ps->listen_fd[i], IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		if (bind(ps->listen_fd[i], (struct sockaddr *)&ss, len) < 0)
			return error_set(err, errno, "-p: bind %s:%u", p->host_ip, p->host_port);
		if (listen(ps->listen_fd[i], 128) < 0)
			return error_set(err, errno, "-p: listen on %s:%u", p->host_ip, p->host_port);
		len = sizeof(ss);
		if (getsockname(ps->listen_fd[i], (struct sockaddr *)&ss, &len) < 0)
			return error_set(err, errno, "-p: getsockname");
		ps->host_port[i] = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port :
								    ((struct sockaddr_in6 *)&ss)->sin6_port);
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return error_set(err, errno, "-p: socketpair");
	ps->factory_fd = sv[0];
	ps->container_fd = sv[1];
	return 0;
}

void publish_child_close(struct publish_state *ps)
{
	for (size_t i = 0; i < ps->n; i++)
		close_fd(&ps->listen_fd[i]);
	close_fd(&ps->factory_fd);
}

bool publish_is_loopback(const char *ip)
{
	struct in_addr a4;
	struct in6_addr a6;

	if (inet_pton(AF_INET, ip, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	return inet_pton(AF_INET6, ip, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

bool publish_has_listeners(const struct publish_state *ps)
{
	for (size_t i = 0; i < ps->n; i++)
		if (ps->listen_fd[i] >= 0)
			return true;
	return false;
}

void publish_format(const struct nsrun_config *cfg, const struct publish_state *ps, char *buf, size_t len)
{
	size_t o = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < cfg->n_publish && o < len; i++) {
		const struct nsrun_publish *p = &cfg->publish[i];
		bool v6 = strchr(p->host_ip, ':') != NULL;
		int n = snprintf(buf + o, len - o, "%s%s%s%s:%u->%u/tcp", i ? ", " : "", v6 ? "[" : "", p->host_ip,
				 v6 ? "]" : "", (unsigned)(ps->opened ? ps->host_port[i] : p->host_port),
				 (unsigned)p->container_port);
		if (n < 0)
			break;
		o += (size_t)n;
	}
}

/* ---- init's side: a socket factory ---- */

int publish_serve(int fd)
{
	unsigned char req = 0, reply = 0;
	int sock = -1;
	ssize_t n;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = &reply, .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	do
		n = recv(fd, &req, 1, 0);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return -1;
	sock = socket(req == 6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (sock < 0) {
		reply = (unsigned char)(errno < 256 ? errno : EIO);
	} else {
		struct cmsghdr *c;
		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &sock, sizeof(int));
	}
	n = sendmsg(fd, &mh, MSG_NOSIGNAL);
	if (sock >= 0)
		close(sock);
	return n < 0 && errno != EINTR && errno != EAGAIN ? -1 : 0;
}

/* ---- the forwarder ---- */

/* Asks init for a socket in the container's network namespace (1 s at most).
 * Returns the fd, or -1 with errno. */
static int factory_get(int fd)
{
	unsigned char req = 4, reply = 0;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = &reply, .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t n;
	int sock = -1;

	if (send(fd, &req, 1, MSG_NOSIGNAL) != 1)
		return -1;
	if (poll(&pfd, 1, 1000) != 1) {
		errno = ETIMEDOUT;
		return -1;
	}
	do
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n <= 0) {
		errno = n == 0 ? EPIPE : errno;
		return -1;
	}
	c = CMSG_FIRSTHDR(&mh);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(&sock, CMSG_DATA(c), sizeof(int));
	if (sock < 0)
		errno = reply ? reply : EPROTO;
	return sock;
}

/* A socket in the container connecting (non-blocking) to 127.0.0.1:port.
 * Returns the fd, or -1 with errno (EPIPE: the container is gone). */
static int connect_inside(int factory, uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int s = factory_get(factory);

	if (s < 0)
		return -1;
	if (connect(s, (struct sockaddr *)&sin, sizeof(sin)) < 0 && errno != EINPROGRESS) {
		int e = errno;
		close(s);
		errno = e;
		return -1;
	}
	return s;
}

struct relay {
	int fd[2];                      /* 0: the host's client, 1: the container's server */
	bool connecting;                /* fd[1] has not connected yet */
	char buf[2][RELAY_BUF];         /* buf[d]: read from fd[d], to be written to fd[!d] */
	size_t len[2], off[2];
	bool eof[2];                    /* fd[d] said EOF; fd[!d] was shut down for writing once drained */
};

static void relay_free(struct relay **r)
{
	close((*r)->fd[0]);
	close((*r)->fd[1]);
	free(*r);
	*r = NULL;
}

/* Moves what it can in direction d. Returns -1 when the connection is broken. */
static int relay_step(struct relay *r, int d, short rev_src, short rev_dst)
{
	int src = r->fd[d], dst = r->fd[!d];

	if (!r->eof[d] && r->len[d] == 0 && (rev_src & (POLLIN | POLLHUP | POLLERR))) {
		ssize_t n = recv(src, r->buf[d], RELAY_BUF, 0);
		if (n > 0) {
			r->len[d] = (size_t)n;
			r->off[d] = 0;
			rev_dst |= POLLOUT; /* try at once: usually it all fits */
		} else if (n == 0) {
			r->eof[d] = true;
		} else if (errno != EAGAIN && errno != EINTR) {
			return -1;
		}
	}
	if (r->len[d] && (rev_dst & POLLOUT)) {
		ssize_t n = send(dst, r->buf[d] + r->off[d], r->len[d], MSG_NOSIGNAL);
		if (n > 0) {
			r->off[d] += (size_t)n;
			r->len[d] -= (size_t)n;
		} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
			return -1;
		}
	}
	if (r->eof[d] && r->len[d] == 0)
		shutdown(dst, SHUT_WR);
	return 0;
}

static short relay_events(const struct relay *r, int side)
{
	short ev = 0;

	if (r->connecting)
		return side == 1 ? POLLOUT : 0;
	if (!r->eof[side] && r->len[side] == 0)
		ev |= POLLIN;
	if (r->len[!side])
		ev |= POLLOUT;
	return ev;
}

/* One readiness probe: a connection to 127.0.0.1:port inside that is accepted.
 * Returns 1 ready, 0 not yet, -1 when the container is gone. */
static int probe(int factory, uint16_t port)
{
	int s = connect_inside(factory, port);
	struct pollfd pfd;
	int e = 0;
	socklen_t el = sizeof(e);

	if (s < 0)
		return errno == EPIPE || errno == ECONNRESET ? -1 : 0;
	pfd = (struct pollfd){ .fd = s, .events = POLLOUT };
	if (poll(&pfd, 1, 1000) == 1 && getsockopt(s, SOL_SOCKET, SO_ERROR, &e, &el) == 0 && e == 0) {
		close(s);
		return 1;
	}
	close(s);
	return 0;
}

/* One connection past the limit: reset at once (SO_LINGER 0: the client reads
 * ECONNRESET, not a quiet end of file, socket(7)), and said in the log (stderr, the
 * service's log under -d) for the first and then every 100th. */
static void refuse(int cl, const struct nsrun_publish *p, size_t max_conns, uint64_t refused)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	setsockopt(cl, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(cl);
	if (refused == 1 || refused % 100 == 0)
		fprintf(stderr, "nsrun: -p %u: connection refused: %zu open already (--publish-max-connections); "
			"%llu refused so far\n", (unsigned)p->container_port, max_conns, (unsigned long long)refused);
}

static void __attribute__((noreturn)) forwarder_main(const struct nsrun_config *cfg, struct publish_state *ps,
						      int ready_fd)
{
	/* --publish-max-connections at once; one more is reset (refused) at once and counted */
	const size_t max_conns = cfg->publish_max_connections;
	struct relay **conns = calloc(max_conns, sizeof(*conns));
	struct pollfd *pfd = calloc(NSRUN_MAX_PUBLISH + 1 + 2 * max_conns, sizeof(*pfd));
	uint16_t cport[NSRUN_MAX_PUBLISH];
	int keep[NSRUN_MAX_PUBLISH + 2];
	size_t nk = 0;
	uint64_t next_probe = 0, refused = 0;

	for (size_t i = 0; i < ps->n; i++) {
		keep[nk++] = ps->listen_fd[i];
		cport[i] = cfg->publish[i].container_port;
	}
	keep[nk++] = ps->factory_fd;
	keep[nk++] = ready_fd;
	close_fds_except(keep, nk);
	signal(SIGPIPE, SIG_IGN);
	if (!conns || !pfd)
		_exit(1);
	{
		/* two fds a connection: the soft limit up to the hard one if need be (getrlimit(2)) */
		struct rlimit rl;
		rlim_t need = 2 * max_conns + 64;
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < need) {
			rl.rlim_cur = rl.rlim_max < need ? rl.rlim_max : need;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	for (;;) {
		size_t np = 0;
		int timeout = -1;

		for (size_t i = 0; i < ps->n; i++)
			pfd[np++] = (struct pollfd){ .fd = ps->listen_fd[i], .events = POLLIN };
		pfd[np++] = (struct pollfd){ .fd = ps->factory_fd, .events = 0 }; /* POLLHUP: init is gone */
		for (size_t c = 0; c < max_conns; c++) {
			pfd[np++] = (struct pollfd){ .fd = conns[c] ? conns[c]->fd[0] : -1,
						     .events = conns[c] ? relay_events(conns[c], 0) : 0 };
			pfd[np++] = (struct pollfd){ .fd = conns[c] ? conns[c]->fd[1] : -1,
						     .events = conns[c] ? relay_events(conns[c], 1) : 0 };
		}
		if (ready_fd >= 0) {
			uint64_t now = (monotonic_us() / 1000);
			timeout = now >= next_probe ? 0 : (int)(next_probe - now);
		}
		if (poll(pfd, np, timeout) < 0 && errno != EINTR)
			_exit(1);
		if (pfd[ps->n].revents & (POLLHUP | POLLERR))
			_exit(0); /* the container is gone */
		if (ready_fd >= 0 && (monotonic_us() / 1000) >= next_probe) {
			int r = probe(ps->factory_fd, cfg->service.wait_port);
			if (r < 0)
				_exit(0);
			if (r > 0) {
				if (write(ready_fd, "R", 1) < 0) {
					/* the waiting nsrun is gone: nothing to tell */
				}
				close(ready_fd);
				ready_fd = -1;
			}
			next_probe = (monotonic_us() / 1000) + PROBE_INTERVAL_MS;
		}
		for (size_t i = 0; i < ps->n; i++) {
			int cl;
			if (!(pfd[i].revents & POLLIN))
				continue;
			while ((cl = accept4(ps->listen_fd[i], NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
				size_t c = 0;
				int srv = -1;
				while (c < max_conns && conns[c])
					c++;
				if (c == max_conns) {
					refuse(cl, &cfg->publish[i], max_conns, ++refused);
					continue;
				}
				srv = connect_inside(ps->factory_fd, cport[i]);
				if (srv >= 0 && (conns[c] = calloc(1, sizeof(*conns[c])))) {
					*conns[c] = (struct relay){ .fd = { cl, srv }, .connecting = true };
					continue;
				}
				if (srv >= 0)
					close(srv);
				close(cl); /* the container refused: the client sees it closed */
			}
		}
		for (size_t c = 0; c < max_conns; c++) {
			struct relay *r = conns[c];
			short r0 = pfd[ps->n + 1 + 2 * c].revents, r1 = pfd[ps->n + 2 + 2 * c].revents;
			if (!r || pfd[ps->n + 1 + 2 * c].fd != r->fd[0])
				continue; /* made in this round */
			if (r->connecting) {
				int e = 0;
				socklen_t el = sizeof(e);
				if (!r1)
					continue;
				if (getsockopt(r->fd[1], SOL_SOCKET, SO_ERROR, &e, &el) < 0 || e) {
					relay_free(&conns[c]); /* refused inside: close the client */
					continue;
				}
				r->connecting = false;
				r0 |= POLLIN;
				r1 = 0;
			}
			if (relay_step(r, 0, r0, r1) < 0 || relay_step(r, 1, r1, r0) < 0 ||
			    (r->eof[0] && r->eof[1] && !r->len[0] && !r->len[1]) ||
			    (((r0 | r1) & (POLLERR | POLLNVAL))))
				relay_free(&conns[c]);
		}
	}
}

int publish_start_forwarder(const struct nsrun_config *cfg, struct publish_state *ps, int ready_fd,
			    struct nsrun_error *err)
{
	pid_t parent = getpid();
	pid_t pid;

	close_fd(&ps->container_fd);
	pid = fork();
	if (pid < 0)
		return error_set(err, errno, "fork the port forwarder");
	if (pid == 0) {
		/* dies with the supervisor; the check closes the race with its death before prctl */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
			_exit(1);
		sigset_t all;
		sigfillset(&all);
		sigprocmask(SIG_UNBLOCK, &all, NULL);
		forwarder_main(cfg, ps, ready_fd);
	}
	ps->forwarder = pid;
	return 0;
}

void publish_close(struct publish_state *ps)
{
	if (ps->forwarder > 0) {
		kill(ps->forwarder, SIGKILL);
		while (waitpid(ps->forwarder, NULL, 0) < 0 && errno == EINTR)
			;
		ps->forwarder = -1;
	}
	for (size_t i = 0; i < NSRUN_MAX_PUBLISH; i++)
		close_fd(&ps->listen_fd[i]);
	close_fd(&ps->factory_fd);
	close_fd(&ps->container_fd);
}
