/* seccomp-bpf - compiles a Docker/OCI seccomp profile (JSON) with nsrun's own
 * profile code and writes the classic BPF program (struct sock_filter[]) to
 * stdout: what `bwrap --seccomp FD` loads.  For the Docker-default-like sandbox
 * of tests/integration/26-agent-sandboxes-tiers.t.  Rules conditioned on
 * capabilities are left out, as for a process without CAP_SYS_ADMIN.
 *
 *   seccomp-bpf PROFILE.json > prog.bpf
 */
#include <stdio.h>
#include <stdlib.h>
#include <linux/filter.h>

#include "error.h"
#include "seccomp.h"
#include "sys.h"

int main(int argc, char **argv)
{
	struct nsrun_error err = { 0 };
	struct nsrun_seccomp *f = NULL;
	const struct sock_fprog *prog;

	if (argc != 2) {
		fprintf(stderr, "usage: seccomp-bpf PROFILE.json > prog.bpf\n");
		return 2;
	}
	setenv("NSRUN_SECCOMP_CACHE", "0", 1);
	if (seccomp_prepare(argv[1], "/nonexistent", 0, NULL, NULL, &f, &err) < 0 || !f) {
		error_print(&err, stderr);
		return 1;
	}
	prog = seccomp_program(f);
	if (write_all(1, prog->filter, (size_t)prog->len * sizeof(prog->filter[0])) < 0) {
		perror("seccomp-bpf: write");
		return 1;
	}
	seccomp_free(f);
	return 0;
}
