/* agent-sandbox - the seccomp filters coding agents' sandboxes put on the commands
 * they run, rebuilt from their published sources (our code, their rules), for
 * tests/integration/25-agent-sandboxes.t:
 *
 *   agent-sandbox claude -- CMD [ARG...]
 *       Claude Code's sandbox-runtime (github.com/anthropic-experimental/sandbox-runtime,
 *       vendor/seccomp-src/seccomp-unix-block.c, applied by vendor/seccomp-src/apply-seccomp.c
 *       inside bwrap --unshare-net, src/sandbox/linux-sandbox-utils.ts): EPERM for
 *       socket(AF_UNIX, ...), socketpair(AF_UNIX, SOCK_DGRAM or SOCK_RAW, ...) and
 *       io_uring_setup/enter/register; everything else allowed.
 *   agent-sandbox codex -- CMD [ARG...]
 *       Codex's linux-sandbox network filter (github.com/openai/codex,
 *       codex-rs/linux-sandbox/src/landlock.rs install_network_seccomp_filter_on_current_thread,
 *       and src/seccomp.rs NetworkSeccompMode::Restricted): EPERM for connect, accept,
 *       accept4, bind, listen, getpeername, getsockname, shutdown, sendto, sendmmsg,
 *       recvmmsg, getsockopt, setsockopt, ptrace, io_uring_setup/enter/register, and
 *       socket and socketpair of any family but AF_UNIX; everything else allowed.
 *   agent-sandbox none -- CMD [ARG...]
 *       no filter (the tests' control), the same no_new_privs.
 *
 * Like both, it sets no_new_privs, loads the filter, then execs CMD.  Exit 125
 * when the filter cannot be made or loaded, 127 when CMD cannot be run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

static int deny(scmp_filter_ctx ctx, int nr)
{
	return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
}

static int claude_rules(scmp_filter_ctx ctx)
{
	int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1,
				  SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffff, AF_UNIX));

	for (int type = SOCK_DGRAM; rc == 0 && type <= SOCK_RAW; type++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socketpair), 2,
				      SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffff, AF_UNIX),
				      SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, type));
	if (rc == 0)
		rc = deny(ctx, SCMP_SYS(io_uring_setup));
	if (rc == 0)
		rc = deny(ctx, SCMP_SYS(io_uring_enter));
	if (rc == 0)
		rc = deny(ctx, SCMP_SYS(io_uring_register));
	return rc;
}

static int codex_rules(scmp_filter_ctx ctx)
{
	static const int calls[] = {
		SCMP_SYS(connect), SCMP_SYS(accept), SCMP_SYS(accept4), SCMP_SYS(bind), SCMP_SYS(listen),
		SCMP_SYS(getpeername), SCMP_SYS(getsockname), SCMP_SYS(shutdown), SCMP_SYS(sendto),
		SCMP_SYS(sendmmsg), SCMP_SYS(recvmmsg), SCMP_SYS(getsockopt), SCMP_SYS(setsockopt),
		SCMP_SYS(ptrace), SCMP_SYS(io_uring_setup), SCMP_SYS(io_uring_enter), SCMP_SYS(io_uring_register),
	};
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < sizeof(calls) / sizeof(calls[0]); i++)
		rc = deny(ctx, calls[i]);
	/* seccompiler's Dword Ne: the low 32 bits of the domain differ from AF_UNIX */
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1,
				      SCMP_A0(SCMP_CMP_NE, AF_UNIX));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socketpair), 1,
				      SCMP_A0(SCMP_CMP_NE, AF_UNIX));
	return rc;
}

int main(int argc, char **argv)
{
	scmp_filter_ctx ctx = NULL;
	const char *mode = argc > 1 ? argv[1] : "";
	int rc = 0;

	if (argc < 4 || strcmp(argv[2], "--") != 0 ||
	    (strcmp(mode, "claude") && strcmp(mode, "codex") && strcmp(mode, "none"))) {
		fprintf(stderr, "usage: agent-sandbox claude|codex|none -- CMD [ARG...]\n");
		return 125;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		perror("agent-sandbox: no_new_privs");
		return 125;
	}
	if (strcmp(mode, "none") != 0) {
		ctx = seccomp_init(SCMP_ACT_ALLOW);
		if (!ctx)
			rc = -ENOMEM;
		if (rc == 0)
			rc = strcmp(mode, "claude") == 0 ? claude_rules(ctx) : codex_rules(ctx);
		if (rc == 0)
			rc = seccomp_load(ctx);
		seccomp_release(ctx);
		if (rc < 0) {
			fprintf(stderr, "agent-sandbox: %s filter: %s\n", mode, strerror(-rc));
			return 125;
		}
	}
	execvp(argv[3], argv + 3);
	fprintf(stderr, "agent-sandbox: exec %s: %s\n", argv[3], strerror(errno));
	return 127;
}
