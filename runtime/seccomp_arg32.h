/* seccomp_arg32.h - comparisons on arguments the kernel reads as 32 bits.
 *
 * A seccomp filter sees every argument as 64 bits, but a syscall declared with
 * an int, unsigned int, pid_t, uid_t or umode_t argument uses only its low 32
 * bits (SYSCALL_DEFINEx casts the register to the declared type).  A rule that
 * compares such an argument as 64 bits can be bypassed by setting the upper
 * half: "deny ioctl if arg1 == TIOCSTI" does not match 0x100005412, which the
 * kernel runs as TIOCSTI (CVE-2019-10063's class).  So nsrun compiles each
 * comparison on such an argument into masked compares of the low 32 bits, whose
 * upper half is masked out: what the rule means to the kernel.
 */
#ifndef NSRUN_SECCOMP_ARG32_H
#define NSRUN_SECCOMP_ARG32_H

#include <stdbool.h>
#include <stddef.h>

#include "seccomp_profile.h"

/* Most terms one comparison becomes (GE: the value itself and one per clear bit). */
#define SECCOMP_ARG32_MAX_TERMS 33

/* Whether argument index (0..5) of the x86-64 syscall name is one the kernel
 * reads as 32 bits (a table of the calls profiles filter on, from the kernel's
 * SYSCALL_DEFINE declarations; calls not in it are taken as 64 bits, which is
 * what libseccomp does). */
bool seccomp_arg_is_32bit(const char *name, unsigned index);

/* Rewrites the comparison a on a 32-bit argument as an OR of SP_OP_MASKED_EQ
 * terms on the low 32 bits (masks and values below 2^32, so the upper half of
 * the register never matters) into out.  Returns the number of terms: 0 when
 * no 32-bit value can match (the rule never applies), 1 with mask 0 when every
 * value matches.  *wide is set when a's value does not fit in 32 bits (the
 * comparison meant something only for values the kernel never sees). */
size_t seccomp_arg32_terms(const struct seccomp_profile_arg *a,
                           struct seccomp_profile_arg out[SECCOMP_ARG32_MAX_TERMS], bool *wide);

#endif
