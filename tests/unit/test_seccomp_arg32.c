/* test_seccomp_arg32.c - comparisons on 32-bit syscall arguments (issue 17,
 * kind 8; CVE-2019-10063's class): the rewrite into masked compares of the low
 * 32 bits against the comparison the kernel sees, for every operator over a
 * sweep of values, then a user profile compiled and loaded in a forked child
 * where a request with its upper 32 bits set must still meet the rule.  TAP. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "seccomp.h"
#include "seccomp_arg32.h"

static int test_n, test_failed;

__attribute__((format(printf, 2, 3)))
static void ok(bool cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", cond ? "ok" : "not ok", ++test_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!cond)
		test_failed++;
	fflush(stdout);
}

/* What the kernel sees: the comparison of the low 32 bits. */
static bool cmp32(enum seccomp_profile_op op, uint64_t x, uint64_t v, uint64_t v2)
{
	uint64_t x32 = (uint32_t)x;

	switch (op) {
	case SP_OP_EQ: return x32 == v;
	case SP_OP_NE: return x32 != v;
	case SP_OP_LT: return x32 < v;
	case SP_OP_LE: return x32 <= v;
	case SP_OP_GE: return x32 >= v;
	case SP_OP_GT: return x32 > v;
	case SP_OP_MASKED_EQ: return (x32 & v) == v2;
	}
	return false;
}

/* What the filter does with the terms: any (x & mask) == value on 64 bits. */
static bool terms_match(const struct seccomp_profile_arg *t, size_t n, uint64_t x)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].op == SP_OP_MASKED_EQ && (x & t[i].value) == t[i].value_two)
			return true;
	return false;
}

static const uint64_t probes[] = {
	0, 1, 2, 3, 16, 17, 0x5412, 0x5413, 0x541c, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff,
	0x100000000, 0x100005412, 0x1000000011, 0xffffffff00005412, 0xffffffffffffffff, 0x8000000000000001,
};

static void test_terms(void)
{
	static const enum seccomp_profile_op ops[] = { SP_OP_EQ, SP_OP_NE, SP_OP_LT, SP_OP_LE, SP_OP_GE,
	                                               SP_OP_GT, SP_OP_MASKED_EQ };
	const size_t n_probes = sizeof(probes) / sizeof(probes[0]);

	for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
		bool same = true;

		for (size_t vi = 0; vi < n_probes && same; vi++) {
			struct seccomp_profile_arg a = { .index = 1, .op = ops[o], .value = probes[vi],
			                                 .value_two = ops[o] == SP_OP_MASKED_EQ ? probes[vi] & 0x5412 : 0 };
			struct seccomp_profile_arg t[SECCOMP_ARG32_MAX_TERMS];
			bool wide;
			size_t n = seccomp_arg32_terms(&a, t, &wide);

			for (size_t k = 0; k < n; k++)
				same = same && t[k].index == 1 && t[k].value <= 0xffffffff && t[k].value_two <= 0xffffffff;
			/* every probe, every probe's neighbours, and 4096 pseudo-random values */
			uint64_t r = 0x2545F4914F6CDD1DULL;
			for (size_t xi = 0; xi < n_probes * 3 + 4096 && same; xi++) {
				uint64_t x = xi < n_probes * 3 ? probes[xi / 3] + (xi % 3) - 1 : (r ^= r << 13, r ^= r >> 7, r ^= r << 17);

				if (terms_match(t, n, x) != cmp32(ops[o], x, a.value, a.value_two)) {
					printf("#   %s %#llx: x = %#llx: terms %d\n", seccomp_profile_op_name(ops[o]),
					       (unsigned long long)a.value, (unsigned long long)x, terms_match(t, n, x));
					same = false;
				}
			}
		}
		ok(same, "%s on a 32-bit argument: the masked terms match exactly the values whose low 32 bits "
		   "compare true, whatever the upper half", seccomp_profile_op_name(ops[o]));
	}
	ok(seccomp_arg_is_32bit("ioctl", 1) && seccomp_arg_is_32bit("socket", 0) &&
	   seccomp_arg_is_32bit("personality", 0) && seccomp_arg_is_32bit("chmod", 1),
	   "ioctl's request, socket's family, personality, chmod's mode are 32 bits");
	ok(!seccomp_arg_is_32bit("clone", 0) && !seccomp_arg_is_32bit("unshare", 0) &&
	   !seccomp_arg_is_32bit("ioctl", 2) && !seccomp_arg_is_32bit("mmap", 2) &&
	   !seccomp_arg_is_32bit("no_such_call", 0),
	   "clone's and unshare's flags, ioctl's argument, mmap's prot stay 64 bits");
}

/* In a child: load the profile at path, return the errno of syscall(nr, a0, a1, 0) (0: success). */
static int errno_under(const char *path, long nr, unsigned long a0, unsigned long a1)
{
	int pfd[2], e = -1;
	pid_t pid;

	if (pipe(pfd) < 0)
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct nsrun_seccomp *f = NULL;
		struct nsrun_error err = { 0 };
		long r;

		close(pfd[0]);
		if (seccomp_prepare(path, NULL, 0, NULL, NULL, &f, &err) < 0 ||
		    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || seccomp_apply(f, &err) < 0) {
			e = -2;
		} else {
			r = syscall(nr, a0, a1, 0);
			e = r < 0 ? errno : 0;
			if (r >= 0 && nr == SYS_socket)
				close((int)r);
		}
		if (write(pfd[1], &e, sizeof(e)) < 0)
			_exit(2);
		_exit(0);
	}
	close(pfd[1]);
	if (pid < 0 || read(pfd[0], &e, sizeof(e)) != sizeof(e))
		e = -1;
	close(pfd[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return e;
}

static void test_load(void)
{
	char dir[] = "/tmp/nsrun-test-arg32-XXXXXX", path[64];
	FILE *f;
	int e;

	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/p.json", dir);
	/* a default-allow profile in Docker's style: EDOM marks the rule's answer */
	f = fopen(path, "we");
	if (!f || fputs("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": ["
	                "{\"names\": [\"ioctl\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 33,"
	                " \"args\": [{\"index\": 1, \"value\": 21522, \"op\": \"SCMP_CMP_EQ\"}]},"
	                "{\"names\": [\"socket\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 33,"
	                " \"args\": [{\"index\": 0, \"value\": 1, \"op\": \"SCMP_CMP_NE\"}]}]}", f) < 0 ||
	    fclose(f) != 0) {
		printf("Bail out! write %s\n", path);
		exit(1);
	}
	setenv("NSRUN_SECCOMP_CACHE", "0", 1);
	e = errno_under(path, SYS_ioctl, (unsigned long)-1, 0x5412);
	ok(e == EDOM, "deny ioctl TIOCSTI (EQ): TIOCSTI meets the rule (errno %d)", e);
	e = errno_under(path, SYS_ioctl, (unsigned long)-1, 0x100005412UL);
	ok(e == EDOM, "deny ioctl TIOCSTI (EQ): TIOCSTI with the upper 32 bits set meets it too (errno %d)", e);
	e = errno_under(path, SYS_ioctl, (unsigned long)-1, 0x100005413UL);
	ok(e == EBADF, "control: another request with the upper bits set reaches the kernel (EBADF, errno %d)", e);
	e = errno_under(path, SYS_socket, AF_UNIX, SOCK_STREAM);
	ok(e == 0, "allow only AF_UNIX (NE 1): AF_UNIX works (errno %d)", e);
	e = errno_under(path, SYS_socket, 0x100000001UL, SOCK_STREAM);
	ok(e == 0, "... AF_UNIX with the upper bits set is AF_UNIX to the kernel: allowed (errno %d)", e);
	e = errno_under(path, SYS_socket, AF_INET, SOCK_STREAM);
	ok(e == EDOM, "... AF_INET meets the rule (errno %d)", e);
	unsetenv("NSRUN_SECCOMP_CACHE");
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	test_terms();
	test_load();
	printf("1..%d\n", test_n);
	return test_failed ? 1 : 0;
}
