/* seccomp_arg32.c - comparisons on arguments the kernel reads as 32 bits.
 *
 * The table lists, for the x86-64 calls seccomp profiles filter on (Docker's,
 * podman's, ours, and the rest of the kernel attack surface), which arguments
 * the kernel declares as int, unsigned int, pid_t, uid_t/gid_t, clockid_t,
 * key_t, key_serial_t or umode_t in its SYSCALL_DEFINEx (include/linux/
 * syscalls.h).  Arguments declared long or unsigned long (clone's and
 * unshare's flags, mmap's, mount's flags, ptrace's request) stay 64 bits.
 */
#include "seccomp_arg32.h"

#include <stdint.h>
#include <string.h>

#define A(i) (1u << (i))
#define LOW32 0xffffffffULL

static const struct {
	const char *name;
	unsigned args;          /* bit i: argument i is 32 bits */
} arg32_table[] = {
	{ "accept4", A(0) | A(3) }, { "add_key", A(4) }, { "arch_prctl", A(0) },
	{ "bind", A(0) | A(2) }, { "bpf", A(0) | A(2) }, { "chmod", A(1) },
	{ "chown", A(1) | A(2) }, { "clock_adjtime", A(0) }, { "clock_getres", A(0) },
	{ "clock_gettime", A(0) }, { "clock_nanosleep", A(0) | A(1) }, { "clock_settime", A(0) },
	{ "close", A(0) }, { "connect", A(0) | A(2) }, { "copy_file_range", A(0) | A(2) | A(5) },
	{ "creat", A(1) }, { "dup", A(0) }, { "dup2", A(0) | A(1) }, { "dup3", A(0) | A(1) | A(2) },
	{ "epoll_create1", A(0) }, { "eventfd2", A(0) | A(1) }, { "execveat", A(0) | A(4) },
	{ "faccessat", A(0) | A(2) }, { "faccessat2", A(0) | A(2) | A(3) },
	{ "fanotify_init", A(0) | A(1) }, { "fchmod", A(0) | A(1) }, { "fchmodat", A(0) | A(2) },
	{ "fchmodat2", A(0) | A(2) | A(3) }, { "fchown", A(0) | A(1) | A(2) },
	{ "fchownat", A(0) | A(2) | A(3) | A(4) }, { "fcntl", A(0) | A(1) }, { "flock", A(0) | A(1) },
	{ "fsconfig", A(0) | A(1) | A(4) }, { "fsmount", A(0) | A(1) | A(2) }, { "fsopen", A(1) },
	{ "fspick", A(0) | A(2) }, { "futex", A(1) | A(2) }, { "getrandom", A(2) },
	{ "getrlimit", A(0) }, { "getsockopt", A(0) | A(1) | A(2) },
	{ "inotify_init1", A(0) }, { "io_uring_enter", A(0) | A(1) | A(2) | A(3) },
	{ "io_uring_register", A(0) | A(1) | A(3) }, { "io_uring_setup", A(0) },
	{ "ioctl", A(0) | A(1) }, { "ioprio_set", A(0) | A(1) | A(2) }, { "kcmp", A(0) | A(1) | A(2) },
	{ "keyctl", A(0) }, { "kill", A(0) | A(1) }, { "landlock_restrict_self", A(0) | A(1) },
	{ "lchown", A(1) | A(2) }, { "listen", A(0) | A(1) }, { "lseek", A(0) | A(2) },
	{ "madvise", A(2) }, { "membarrier", A(0) | A(1) | A(2) }, { "memfd_create", A(1) },
	{ "mkdir", A(1) }, { "mkdirat", A(0) | A(2) }, { "mknod", A(1) | A(2) },
	{ "mknodat", A(0) | A(2) | A(3) }, { "mlock2", A(2) }, { "mount_setattr", A(0) | A(2) },
	{ "move_mount", A(0) | A(2) | A(4) }, { "mq_open", A(1) | A(2) }, { "msgctl", A(0) | A(1) },
	{ "msgget", A(0) | A(1) }, { "name_to_handle_at", A(0) | A(4) }, { "newfstatat", A(0) | A(3) },
	{ "open", A(1) | A(2) }, { "open_by_handle_at", A(0) | A(2) }, { "open_tree", A(0) | A(2) },
	{ "openat", A(0) | A(2) | A(3) }, { "perf_event_open", A(1) | A(2) | A(3) },
	{ "personality", A(0) }, { "pidfd_getfd", A(0) | A(1) | A(2) }, { "pidfd_open", A(0) | A(1) },
	{ "pidfd_send_signal", A(0) | A(1) | A(3) }, { "pipe2", A(1) }, { "prctl", A(0) },
	{ "prlimit64", A(0) | A(1) }, { "process_vm_readv", A(0) }, { "process_vm_writev", A(0) },
	{ "quotactl", A(0) }, { "read", A(0) }, { "reboot", A(0) | A(1) | A(2) },
	{ "recvmsg", A(0) | A(2) }, { "recvfrom", A(0) | A(3) }, { "renameat2", A(0) | A(2) | A(4) },
	{ "request_key", A(3) }, { "rt_sigaction", A(0) }, { "sched_setattr", A(0) | A(2) },
	{ "sched_setscheduler", A(0) | A(1) }, { "seccomp", A(0) | A(1) }, { "semctl", A(0) | A(1) | A(2) },
	{ "semget", A(0) | A(1) | A(2) }, { "sendmsg", A(0) | A(2) }, { "sendto", A(0) | A(3) },
	{ "setfsgid", A(0) }, { "setfsuid", A(0) }, { "setgid", A(0) }, { "setns", A(0) | A(1) },
	{ "setpriority", A(0) | A(1) | A(2) }, { "setregid", A(0) | A(1) },
	{ "setresgid", A(0) | A(1) | A(2) }, { "setresuid", A(0) | A(1) | A(2) },
	{ "setreuid", A(0) | A(1) }, { "setrlimit", A(0) }, { "setsockopt", A(0) | A(1) | A(2) | A(4) },
	{ "setuid", A(0) }, { "shmctl", A(0) | A(1) }, { "shmget", A(0) | A(2) },
	{ "shutdown", A(0) | A(1) }, { "socket", A(0) | A(1) | A(2) },
	{ "socketpair", A(0) | A(1) | A(2) }, { "splice", A(0) | A(2) | A(5) },
	{ "statx", A(0) | A(2) | A(3) }, { "syslog", A(0) | A(2) }, { "tgkill", A(0) | A(1) | A(2) },
	{ "timer_create", A(0) }, { "timerfd_create", A(0) | A(1) }, { "tkill", A(0) | A(1) },
	{ "umount2", A(1) }, { "userfaultfd", A(0) }, { "wait4", A(0) | A(2) },
	{ "waitid", A(0) | A(1) | A(3) }, { "write", A(0) },
};

bool seccomp_arg_is_32bit(const char *name, unsigned index)
{
	if (index > SECCOMP_PROFILE_MAX_ARG)
		return false;
	for (size_t i = 0; i < sizeof(arg32_table) / sizeof(arg32_table[0]); i++)
		if (strcmp(arg32_table[i].name, name) == 0)
			return (arg32_table[i].args & A(index)) != 0;
	return false;
}

static size_t term(struct seccomp_profile_arg *out, size_t n, unsigned index, uint64_t mask, uint64_t value)
{
	out[n].index = index;
	out[n].op = SP_OP_MASKED_EQ;
	out[n].value = mask & LOW32;
	out[n].value_two = value & LOW32;
	return n + 1;
}

/* x < v on 32 bits, v <= 2^32: for each set bit k of v, the values equal to v
 * above k with bit k clear (disjoint terms). */
static size_t less_than(struct seccomp_profile_arg *out, unsigned index, uint64_t v)
{
	size_t n = 0;

	if (v > LOW32)
		return term(out, 0, index, 0, 0);  /* every 32-bit value */
	for (int k = 31; k >= 0; k--) {
		uint64_t above = LOW32 & ~((2ULL << k) - 1);

		if (v & (1ULL << k))
			n = term(out, n, index, above | (1ULL << k), v & above);
	}
	return n;
}

/* x >= v on 32 bits, v <= 2^32: x == v, or for each clear bit k of v, the values
 * equal to v above k with bit k set. */
static size_t at_least(struct seccomp_profile_arg *out, unsigned index, uint64_t v)
{
	size_t n;

	if (v > LOW32)
		return 0;
	n = term(out, 0, index, LOW32, v);
	for (int k = 31; k >= 0; k--) {
		uint64_t above = LOW32 & ~((2ULL << k) - 1);

		if (!(v & (1ULL << k)))
			n = term(out, n, index, above | (1ULL << k), (v & above) | (1ULL << k));
	}
	return n;
}

size_t seccomp_arg32_terms(const struct seccomp_profile_arg *a,
                           struct seccomp_profile_arg out[SECCOMP_ARG32_MAX_TERMS], bool *wide)
{
	uint64_t v = a->value;
	size_t n = 0;

	*wide = a->op == SP_OP_MASKED_EQ ? (a->value_two & ~LOW32) != 0 : v > LOW32;
	switch (a->op) {
	case SP_OP_EQ:
		return v > LOW32 ? 0 : term(out, 0, a->index, LOW32, v);
	case SP_OP_NE:
		if (v > LOW32)
			return term(out, 0, a->index, 0, 0);
		for (int k = 0; k < 32; k++)
			n = term(out, n, a->index, 1ULL << k, ~v & (1ULL << k));
		return n;
	case SP_OP_LT:
		return less_than(out, a->index, v);
	case SP_OP_LE:
		return less_than(out, a->index, v >= LOW32 ? LOW32 + 1 : v + 1);
	case SP_OP_GE:
		return at_least(out, a->index, v);
	case SP_OP_GT:
		return v >= LOW32 ? 0 : at_least(out, a->index, v + 1);
	case SP_OP_MASKED_EQ:
		/* (x & m) == d: bits of d outside m, or above the 32 the kernel
		 * reads, are never matched by what the kernel runs */
		if ((a->value_two & ~a->value) || (a->value_two & ~LOW32))
			return 0;
		return term(out, 0, a->index, a->value, a->value_two);
	}
	return 0;
}
