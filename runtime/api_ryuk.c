/* api_ryuk.c - Testcontainers' reaper (testcontainers/ryuk), served by nsrun
 * itself: a container of that image is no container but `nsrun api ryuk NAME`,
 * a host process that is the service's monitor (it holds its lock, writes its
 * state and log), so list, inspect, logs, stop and rm see it as any other.  Its
 * protocol, after moby-ryuk: it listens on a loopback TCP port published as the
 * container's 8080/tcp and logs "Started!"; a client sends lines of filters
 * ("label=KEY=VALUE", several joined by '&'), each answered "ACK"; once the last
 * client has gone and none came back within the reconnection timeout
 * (RYUK_RECONNECTION_TIMEOUT, 10s), every container whose labels match all the
 * filters of one line is removed, and the reaper exits.  No client within
 * RYUK_CONNECTION_TIMEOUT (60s): it exits.  It can remove only what the caller's
 * API could: the caller's own containers, and it serves only the caller: a
 * connection whose peer socket belongs to another uid is closed unanswered (a
 * port on 127.0.0.1 is open to every local user). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "api_internal.h"
#include "cleanup.h"
#include "state.h"
#include "sys.h"

#define RYUK_PORT 8080
#define RYUK_CONNS 64
#define RYUK_FILTERS 256
#define RYUK_LABELS 16
#define RYUK_LINE 4096

struct ryuk_filter {
	size_t n;
	char *kv[RYUK_LABELS];  /* "KEY=VALUE" (or "KEY": the label is there) */
};

struct ryuk {
	struct ryuk_filter f[RYUK_FILTERS];
	size_t n_filters;
	struct { int fd; size_t len; char line[RYUK_LINE]; } c[RYUK_CONNS];
	const char *self_exe;
	const char *name;
};

bool api_is_ryuk(const char *ref)
{
	static const char *const prefixes[] = { "testcontainers/ryuk", "docker.io/testcontainers/ryuk" };

	for (size_t i = 0; ref && i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t n = strlen(prefixes[i]);
		if (strncmp(ref, prefixes[i], n) == 0 && (ref[n] == '\0' || ref[n] == ':' || ref[n] == '@'))
			return true;
	}
	return false;
}

/* One line of filters into r ("label=K=V&label=K2").  Returns false, adding
 * nothing, if the line has anything else (another kind, an empty term, more than
 * RYUK_LABELS labels) or r is full: a filter silently narrowed would reap more
 * than the client asked, so the client gets no ACK and is closed instead. */
static bool ryuk_add_line(struct ryuk *r, char *line)
{
	struct ryuk_filter *f;
	char *tok;

	if (r->n_filters == RYUK_FILTERS)
		return false;
	f = &r->f[r->n_filters];
	f->n = 0;
	while ((tok = strsep(&line, "&"))) {
		if (strncmp(tok, "label=", 6) != 0 || !tok[6] || f->n == RYUK_LABELS || !(f->kv[f->n] = strdup(tok + 6))) {
			while (f->n)
				free(f->kv[--f->n]);
			return false;
		}
		f->n++;
	}
	if (f->n)
		r->n_filters++;
	return f->n > 0;
}

/* True if the labels object l has every label of f. */
static bool ryuk_match(const struct ryuk_filter *f, yajl_val l)
{
	for (size_t i = 0; i < f->n; i++) {
		const char *eq = strchr(f->kv[i], '=');
		size_t klen = eq ? (size_t)(eq - f->kv[i]) : strlen(f->kv[i]);
		bool found = false;
		for (size_t j = 0; l && YAJL_IS_OBJECT(l) && j < l->u.object.len && !found; j++) {
			const char *k = l->u.object.keys[j], *v = api_str(l->u.object.values[j]);
			found = strlen(k) == klen && strncmp(k, f->kv[i], klen) == 0 && (!eq || strcmp(v, eq + 1) == 0);
		}
		if (!found)
			return false;
	}
	return f->n > 0;
}

/* Removes the containers that match a filter, as `nsrun rm -f NAME` does. */
static void ryuk_reap(struct ryuk *r)
{
	struct api_ctr *v = NULL;
	size_t n = 0;
	char msg[256];

	if (api_ctrs_load(&v, &n, msg, sizeof(msg)) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		yajl_val l = api_get(v[i].config, "labels", yajl_t_object);
		bool hit = false;
		if (strcmp(v[i].name, r->name) == 0)
			continue;
		for (size_t j = 0; j < r->n_filters && !hit; j++)
			hit = ryuk_match(&r->f[j], l);
		if (!hit)
			continue;
		pid_t pid = fork();
		if (pid == 0) {
			int null = open("/dev/null", O_RDWR | O_CLOEXEC);
			if (null >= 0) {
				dup2(null, 0);
				dup2(null, 1);
			}
			execl(r->self_exe, r->self_exe, "rm", "-f", v[i].name, (char *)NULL);
			_exit(127);
		}
		if (pid > 0)
			while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
				;
		printf("%s removed (%s)\n", v[i].name, v[i].id);
	}
	api_ctrs_free(v, n);
}

/* Reads what conn i sent: each complete line is a filter, answered "ACK".
 * Returns false when the client has gone or sent a line that is refused. */
static bool ryuk_read(struct ryuk *r, size_t i)
{
	char buf[1024];
	ssize_t n = read(r->c[i].fd, buf, sizeof(buf));

	if (n < 0 && errno == EINTR)
		return true;
	if (n <= 0)
		return false;
	for (ssize_t k = 0; k < n; k++) {
		if (buf[k] != '\n') {
			if (r->c[i].len == RYUK_LINE - 1)
				return false; /* a line too long to hold: refused, not cut */
			r->c[i].line[r->c[i].len++] = buf[k];
			continue;
		}
		r->c[i].line[r->c[i].len] = '\0';
		if (r->c[i].len && r->c[i].line[r->c[i].len - 1] == '\r')
			r->c[i].line[r->c[i].len - 1] = '\0';
		if (!ryuk_add_line(r, r->c[i].line)) {
			printf("refused a filter line (only label=KEY[=VALUE] terms, up to %d, are served)\n", RYUK_LABELS);
			fflush(stdout);
			return false;
		}
		r->c[i].len = 0;
		if (send(r->c[i].fd, "ACK\n", 4, MSG_NOSIGNAL) != 4)
			return false;
	}
	return true;
}

/* The owner of the TCP socket at the other end of the loopback connection fd
 * (its local address is our peer's), asked of the kernel with one exact
 * SOCK_DIAG_BY_FAMILY request (sock_diag(7), inet_diag_req_v2).  Returns 0 and
 * *uid (in our user namespace), or -1 with errno. */
static int ryuk_peer_uid_diag(int fd, uid_t *uid)
{
	struct sockaddr_in me, peer;
	socklen_t mlen = sizeof(me), plen = sizeof(peer);
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 req;
	} q = {
		.nlh = { .nlmsg_len = sizeof(q), .nlmsg_type = SOCK_DIAG_BY_FAMILY, .nlmsg_flags = NLM_F_REQUEST },
		.req = { .sdiag_family = AF_INET, .sdiag_protocol = IPPROTO_TCP, .idiag_states = 1U << TCP_ESTABLISHED },
	};
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	union { struct nlmsghdr h; char b[8192]; } buf;
	_cleanup_close_ int nl = -1;
	ssize_t n;

	if (getsockname(fd, (struct sockaddr *)&me, &mlen) < 0 || getpeername(fd, (struct sockaddr *)&peer, &plen) < 0)
		return -1;
	if (me.sin_family != AF_INET || peer.sin_family != AF_INET) {
		errno = EAFNOSUPPORT;
		return -1;
	}
	q.req.id.idiag_src[0] = peer.sin_addr.s_addr;
	q.req.id.idiag_sport = peer.sin_port;
	q.req.id.idiag_dst[0] = me.sin_addr.s_addr;
	q.req.id.idiag_dport = me.sin_port;
	q.req.id.idiag_cookie[0] = q.req.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	if ((nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG)) < 0)
		return -1;
	if (sendto(nl, &q, sizeof(q), 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return -1;
	while ((n = recv(nl, &buf, sizeof(buf), 0)) < 0 && errno == EINTR)
		;
	if (n < 0)
		return -1;
	for (struct nlmsghdr *h = &buf.h; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
		if (h->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(h);
			errno = e->error ? -e->error : ENOENT;
			return -1;
		}
		if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY && h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct inet_diag_msg))) {
			const struct inet_diag_msg *m = NLMSG_DATA(h);
			/* an established socket with an owner: a closed one (TIME_WAIT, inode 0)
			 * says uid 0 for a connection that is no one's */
			if (m->id.idiag_sport == peer.sin_port && m->id.idiag_dport == me.sin_port &&
			    m->idiag_state == TCP_ESTABLISHED && m->idiag_inode != 0) {
				*uid = m->idiag_uid;
				return 0;
			}
		}
	}
	errno = ENOENT;
	return -1;
}

int api_peer_tcp_line(const char *line, const char *local, const char *rem, uid_t *uid)
{
	char l[64], r[64];
	unsigned st;
	unsigned long u, inode;

	/* sl local rem st tx:rx tr:when retrnsmt uid timeout inode (proc_net_tcp.rst) */
	if (sscanf(line, " %*s %63s %63s %x %*s %*s %*s %lu %*s %lu", l, r, &st, &u, &inode) != 5)
		return 0;
	/* 01 is TCP_ESTABLISHED (include/net/tcp_states.h) */
	if (st != 1 || inode == 0 || strcmp(l, local) != 0 || strcmp(r, rem) != 0)
		return 0;
	*uid = (uid_t)u;
	return 1;
}

int api_peer_uid_proc(int fd, uid_t *uid)
{
	union { struct sockaddr sa; struct sockaddr_in in; struct sockaddr_in6 in6; } me, peer;
	socklen_t mlen = sizeof(me), plen = sizeof(peer);
	char want_local[64], want_rem[64], line[512];
	_cleanup_fclose_ FILE *f = NULL;

	if (getsockname(fd, &me.sa, &mlen) < 0 || getpeername(fd, &peer.sa, &plen) < 0)
		return -1;
	/* the peer's socket: its local address is our peer's, its remote ours; the
	 * kernel prints each address as the words it holds (%08X), the port in hex */
	if (me.sa.sa_family == AF_INET && peer.sa.sa_family == AF_INET) {
		snprintf(want_local, sizeof(want_local), "%08X:%04X", peer.in.sin_addr.s_addr, ntohs(peer.in.sin_port));
		snprintf(want_rem, sizeof(want_rem), "%08X:%04X", me.in.sin_addr.s_addr, ntohs(me.in.sin_port));
		f = fopen("/proc/self/net/tcp", "re");
	} else if (me.sa.sa_family == AF_INET6 && peer.sa.sa_family == AF_INET6) {
		const uint32_t *p = (const uint32_t *)(const void *)&peer.in6.sin6_addr;
		const uint32_t *m = (const uint32_t *)(const void *)&me.in6.sin6_addr;
		snprintf(want_local, sizeof(want_local), "%08X%08X%08X%08X:%04X", p[0], p[1], p[2], p[3],
			 ntohs(peer.in6.sin6_port));
		snprintf(want_rem, sizeof(want_rem), "%08X%08X%08X%08X:%04X", m[0], m[1], m[2], m[3],
			 ntohs(me.in6.sin6_port));
		f = fopen("/proc/self/net/tcp6", "re");
	} else {
		errno = EAFNOSUPPORT;
		return -1;
	}
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (api_peer_tcp_line(line, want_local, want_rem, uid))
			return 0;
	errno = ENOENT;
	return -1;
}

/* The peer's uid: by sock_diag, else (a sandbox that denies NETLINK_SOCK_DIAG, or
 * NSRUN_RYUK_PEER=proc) by /proc/self/net/tcp{,6}.  Returns 0 or -1 (errno). */
static int ryuk_peer_uid(int fd, uid_t *uid)
{
	const char *how = getenv("NSRUN_RYUK_PEER");

	if ((!how || strcmp(how, "proc") != 0) && ryuk_peer_uid_diag(fd, uid) == 0)
		return 0;
	return api_peer_uid_proc(fd, uid);
}

/* Serves lfd until the end (see the top).  Returns when it is time to exit. */
static void ryuk_serve(struct ryuk *r, int lfd, uint64_t connect_us, uint64_t reconnect_us)
{
	uint64_t deadline = monotonic_us() + connect_us;
	sigset_t set;
	int sfd;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	for (size_t i = 0; i < RYUK_CONNS; i++)
		r->c[i].fd = -1;
	for (;;) {
		struct pollfd p[RYUK_CONNS + 2];
		uint64_t now = monotonic_us();
		size_t open_conns = 0;
		if (deadline && now >= deadline) {
			ryuk_reap(r);
			break;
		}
		for (size_t i = 0; i < RYUK_CONNS; i++) {
			p[i] = (struct pollfd){ .fd = r->c[i].fd, .events = POLLIN };
			open_conns += r->c[i].fd >= 0;
		}
		p[RYUK_CONNS] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		p[RYUK_CONNS + 1] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		if (poll(p, RYUK_CONNS + 2, deadline ? (int)((deadline - now) / 1000 + 1) : -1) < 0 && errno != EINTR)
			break;
		if (p[RYUK_CONNS + 1].revents & POLLIN)
			break; /* docker stop: ends without reaping, as ryuk's SIGTERM */
		if (p[RYUK_CONNS].revents & POLLIN) {
			int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
			size_t i = 0;
			uid_t uid;
			if (fd >= 0 && (ryuk_peer_uid(fd, &uid) < 0 || uid != getuid())) {
				/* another user's (or unknown): it may not add filters nor hold the reaper */
				close(fd);
				fd = -1;
			}
			while (fd >= 0 && i < RYUK_CONNS && r->c[i].fd >= 0)
				i++;
			if (fd >= 0 && i == RYUK_CONNS) {
				close(fd);
			} else if (fd >= 0) {
				r->c[i].fd = fd;
				r->c[i].len = 0;
				deadline = 0; /* a client: no end while one is connected */
				open_conns++;
			}
		}
		for (size_t i = 0; i < RYUK_CONNS; i++) {
			if (r->c[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)) || ryuk_read(r, i))
				continue;
			close(r->c[i].fd);
			r->c[i].fd = -1;
			if (--open_conns == 0) {
				printf("all clients gone: removing in %llu ms unless one comes back\n",
				       (unsigned long long)(reconnect_us / 1000));
				fflush(stdout);
				deadline = monotonic_us() + reconnect_us;
			}
		}
	}
	for (size_t i = 0; i < RYUK_CONNS; i++)
		if (r->c[i].fd >= 0)
			close(r->c[i].fd);
	if (sfd >= 0)
		close(sfd);
}

/* `nsrun api ryuk NAME CONNECT_TIMEOUT RECONNECT_TIMEOUT` (run by start): makes
 * NAME's directory, listens, daemonizes once its state says where; exit 0 then. */
int api_ryuk_main(int argc, char **argv)
{
	struct nsrun_error err = { .stage = STAGE_PREPARE };
	_cleanup_close_ int root_fd = -1, dir_fd = -1, lock_fd = -1, log_fd = -1, lfd = -1;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	uint64_t connect_us = 0, reconnect_us = 0;
	struct service_state st = { 0 };
	char root[PATH_MAX], exe[PATH_MAX];
	struct ryuk *r = NULL;
	int ready[2] = { -1, -1 };
	ssize_t n;
	pid_t pid;
	char c;

	if (argc != 6 || !service_name_valid(argv[3]) ||
	    parse_duration_us("RYUK_CONNECTION_TIMEOUT", argv[4], &connect_us, &err) < 0 ||
	    parse_duration_us("RYUK_RECONNECTION_TIMEOUT", argv[5], &reconnect_us, &err) < 0) {
		if (!err.msg[0])
			error_set(&err, 0, "usage: nsrun api ryuk NAME CONNECT_TIMEOUT RECONNECT_TIMEOUT (run by nsrun api)");
		error_print(&err, stderr);
		return 125;
	}
	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) < 0) {
		error_set(&err, errno, "readlink /proc/self/exe");
		goto fail;
	}
	exe[n] = '\0';
	if ((lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 || bind(lfd, (struct sockaddr *)&a, alen) < 0 ||
	    listen(lfd, RYUK_CONNS) < 0 || getsockname(lfd, (struct sockaddr *)&a, &alen) < 0) {
		error_set(&err, errno, "listen on a loopback port for ryuk's clients");
		goto fail;
	}
	if ((root_fd = state_open_root(root, sizeof(root), &err)) < 0 ||
	    (dir_fd = state_create_dir(root_fd, argv[3], &lock_fd, &log_fd, &err)) < 0)
		goto fail;
	if (pipe2(ready, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
		error_set(&err, errno, "fork the reaper");
		state_remove_dir(root_fd, argv[3]);
		goto fail;
	}
	if (pid > 0) {
		/* start's answer waits for the state: the port is known once it is written */
		close(ready[1]);
		n = read(ready[0], &c, 1);
		close(ready[0]);
		return n == 1 ? 0 : 125;
	}
	close(ready[0]);
	setsid();
	if (!(r = calloc(1, sizeof(*r))) || dup2(log_fd, 1) < 0 || dup2(log_fd, 2) < 0)
		_exit(125);
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null >= 0)
		dup2(null, 0);
	snprintf(st.name, sizeof(st.name), "%s", argv[3]);
	snprintf(st.status, sizeof(st.status), "running");
	snprintf(st.image, sizeof(st.image), "testcontainers/ryuk");
	snprintf(st.command, sizeof(st.command), "nsrun api ryuk (Testcontainers' reaper, in nsrun api)");
	if ((size_t)snprintf(st.log, sizeof(st.log), "%s/%s/%s", root, argv[3], LOG_FILE) >= sizeof(st.log))
		st.log[0] = '\0';
	st.pid = getpid();
	st.created = (long long)time(NULL);
	st.n_ports = 1;
	snprintf(st.ports[0].host_ip, sizeof(st.ports[0].host_ip), "127.0.0.1");
	st.ports[0].host_port = ntohs(a.sin_port);
	st.ports[0].container_port = RYUK_PORT;
	if (state_write(dir_fd, &st) < 0)
		_exit(125);
	/* Testcontainers waits for this line (its pattern: ".+ Started!") */
	{
		char when[32];
		time_t t = time(NULL);
		struct tm tm;
		strftime(when, sizeof(when), "%Y/%m/%d %H:%M:%S", gmtime_r(&t, &tm));
		printf("%s Started!\n", when);
		fflush(stdout);
	}
	(void)!write(ready[1], "R", 1);
	close(ready[1]);
	r->self_exe = exe;
	r->name = argv[3];
	ryuk_serve(r, lfd, connect_us, reconnect_us);
	for (size_t i = 0; i < r->n_filters; i++)
		for (size_t j = 0; j < r->f[i].n; j++)
			free(r->f[i].kv[j]);
	free(r);
	snprintf(st.status, sizeof(st.status), "exited");
	st.exit_code = 0;
	state_write(dir_fd, &st);
	fflush(stdout);
	_exit(0);
fail:
	error_print(&err, stderr);
	return 125;
}
