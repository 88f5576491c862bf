/* Unit tests of the reaper's fallback peer check (api_peer_uid_proc, api_ryuk.c):
 * the owner of a loopback connection's other end from /proc/self/net/tcp{,6}, as
 * where sock_diag(7) is denied, with real sockets; the control: another uid's
 * connection (as root) is told apart, and what is not TCP is refused. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api_internal.h"
#include "tap.h"

/* A listener on the loopback of family (AF_INET, AF_INET6); -1 if there is none. */
static int listen_lo(int family, struct sockaddr_storage *addr, socklen_t *len)
{
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(addr, 0, sizeof(*addr));
	if (family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)addr;
		a->sin_family = AF_INET;
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		*len = sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)addr;
		a->sin6_family = AF_INET6;
		a->sin6_addr = in6addr_loopback;
		*len = sizeof(*a);
	}
	if (fd < 0 || bind(fd, (struct sockaddr *)addr, *len) < 0 || listen(fd, 4) < 0 ||
	    getsockname(fd, (struct sockaddr *)addr, len) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* The uid fallback finds for a connection made by a child as uid (-1: ours). */
static long peer_of(int family, long as_uid)
{
	struct sockaddr_storage addr;
	socklen_t len;
	int lfd = listen_lo(family, &addr, &len), fd, status;
	uid_t uid = (uid_t)-1;
	long got = -2;
	pid_t pid;

	if (lfd < 0)
		return -3;
	pid = fork();
	if (pid == 0) {
		int c;
		char b;
		if (as_uid >= 0 && (setgroups(0, NULL) < 0 || setgid((gid_t)as_uid) < 0 || setuid((uid_t)as_uid) < 0))
			_exit(1);
		c = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (c < 0 || connect(c, (struct sockaddr *)&addr, len) < 0)
			_exit(1);
		(void)!read(c, &b, 1); /* until the parent has looked */
		_exit(0);
	}
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd >= 0 && api_peer_uid_proc(fd, &uid) == 0)
		got = (long)uid;
	if (fd >= 0)
		close(fd);
	close(lfd);
	waitpid(pid, &status, 0);
	return got;
}

int main(void)
{
	struct tap t = { 0 };
	int sv[2];
	uid_t uid;
	long v6;

	tap_int(&t, "IPv4 loopback: the peer's uid from /proc/self/net/tcp (ours)", (long long)getuid(),
		peer_of(AF_INET, -1));
	v6 = peer_of(AF_INET6, -1);
	tap_ok(&t, (v6 == (long)getuid() || v6 == -3), "IPv6 loopback: from /proc/self/net/tcp6 (or no ::1 here)");
	if (getuid() == 0) {
		tap_int(&t, "control: another uid's connection is told apart (65534, not ours)", 65534,
			peer_of(AF_INET, 65534));
	} else {
		/* a skip, not a pass: nothing was tried */
		printf("ok %d # SKIP control: another uid's connection needs root to make one (the root run has it)\n",
		       ++t.n);
	}
	/* lines as the kernel prints them: the same addresses, other states */
	{
		const char *lo = "0100007F:9C40", *re = "0100007F:0FA0";
		uid = 4242;
		tap_ok(&t, api_peer_tcp_line("   3: 0100007F:9C40 0100007F:0FA0 06 00000000:00000000 03:00000F0B "
					     "00000000     0        0 0 3 0000000000000000", lo, re, &uid) == 0 &&
			       uid == 4242,
		       "a TIME_WAIT line (st 06, uid 0, inode 0): no match, no uid");
		tap_ok(&t, api_peer_tcp_line("   4: 0100007F:9C40 0100007F:0FA0 05 00000000:00000000 00:00000000 "
					     "00000000  1000        0 0 1 0000000000000000", lo, re, &uid) == 0,
		       "a FIN_WAIT2 line with inode 0: no match");
		tap_ok(&t, api_peer_tcp_line("   5: 0100007F:9C40 0100007F:0FA0 01 00000000:00000000 00:00000000 "
					     "00000000  1000        0 123456 1 0000000000000000 20 4 30 10 -1",
					     lo, re, &uid) == 1 && uid == 1000,
		       "control: the ESTABLISHED line with its inode: a match, its uid");
		tap_ok(&t, api_peer_tcp_line("   5: 0100007F:9C41 0100007F:0FA0 01 00000000:00000000 00:00000000 "
					     "00000000  1000        0 123456 1 0000000000000000 20 4 30 10 -1",
					     lo, re, &uid) == 0,
		       "  ... another port: no match");
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0) {
		errno = 0;
		tap_ok(&t, api_peer_uid_proc(sv[0], &uid) < 0 && errno == EAFNOSUPPORT,
		       "a unix socket: refused (EAFNOSUPPORT), no uid made up");
		close(sv[0]);
		close(sv[1]);
	}
	return tap_done(&t);
}
