/* seccomp_builtin.c - see seccomp_builtin.h */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "seccomp_builtin.h"
#include "seccomp_profile.h"

/* The profiles' bytes, put into .rodata by the assembler (.incbin reads the file
 * at build time, relative to the directory make runs in: the source tree; the
 * Makefile makes this object depend on the JSON files).  No NUL is added: SYM_size,
 * an address-sized word after them, holds the length. */
#define NSRUN_INCBIN(sym, file)                                                        \
	__asm__(".section .rodata\n"                                                   \
		".global " #sym "\n.type " #sym ", @object\n.balign 16\n" #sym ":\n"   \
		".incbin \"" file "\"\n" #sym "_end:\n"                                 \
		".global " #sym "_size\n.balign 8\n" #sym "_size:\n"                   \
		".dc.a " #sym "_end - " #sym "\n"                                       \
		".previous\n")

NSRUN_INCBIN(nsrun_profile_default, "seccomp-profiles/default.json");
NSRUN_INCBIN(nsrun_profile_strict, "seccomp-profiles/strict.json");

extern const char nsrun_profile_default[], nsrun_profile_strict[];
extern const uintptr_t nsrun_profile_default_size, nsrun_profile_strict_size;

const char seccomp_builtin_names[] = "default, strict";

int seccomp_builtin_find(const char *name, const char **bytes, size_t *len)
{
	if (strcmp(name, "default") == 0) {
		*bytes = nsrun_profile_default;
		*len = (size_t)nsrun_profile_default_size;
		return 0;
	}
	if (strcmp(name, "strict") == 0) {
		*bytes = nsrun_profile_strict;
		*len = (size_t)nsrun_profile_strict_size;
		return 0;
	}
	return -1;
}

int seccomp_builtin_load(const char *name, const char *dir_env, const char *installed, char **bytes,
			 const char **builtin_out, size_t *len, char *source, size_t source_len,
			 struct nsrun_error *err)
{
	const char *builtin;
	size_t n;

	*bytes = NULL;
	if (builtin_out)
		*builtin_out = NULL;
	if (dir_env && *dir_env) {
		snprintf(source, source_len, "%s/%s.json", dir_env, name);
		if (seccomp_profile_read_file(source, bytes, len, err) < 0)
			return error_prefix(err, "NSRUN_SECCOMP_PROFILES"), -1;
		return 0;
	}
	if (installed && *installed) {
		snprintf(source, source_len, "%s/%s.json", installed, name);
		if (access(source, F_OK) == 0)
			return seccomp_profile_read_file(source, bytes, len, err);
	}
	if (seccomp_builtin_find(name, &builtin, &n) < 0)
		return error_set_stage(err, STAGE_CONFIG, ENOENT, "seccomp profile \"%s\": not built in (%s), "
				       "not in %s and NSRUN_SECCOMP_PROFILES is unset", name, seccomp_builtin_names,
				       installed && *installed ? installed : "(no installed directory)");
	snprintf(source, source_len, "built-in %s (compiled into nsrun)", name);
	if (builtin_out) {
		*builtin_out = builtin;
		*len = n;
		return 0;
	}
	*bytes = malloc(n + 1);
	if (!*bytes)
		return error_set_stage(err, STAGE_CONFIG, ENOMEM, "seccomp profile \"%s\"", name);
	memcpy(*bytes, builtin, n);
	(*bytes)[n] = '\0';
	*len = n;
	return 0;
}
