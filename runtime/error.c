/* error.c - see error.h */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "error.h"

static const char *const stage_names[STAGE__COUNT] = {
	[STAGE_CONFIG] = "config",
	[STAGE_PREPARE] = "prepare",
	[STAGE_CLONE] = "clone",
	[STAGE_ID_MAPS] = "id maps",
	[STAGE_MOUNT] = "mount",
	[STAGE_CONTAINER] = "container",
	[STAGE_EXEC] = "exec",
	[STAGE_SUPERVISE] = "supervise",
};

const char *error_stage_name(int stage)
{
	if (stage < 0 || stage >= STAGE__COUNT || !stage_names[stage])
		return "unknown";
	return stage_names[stage];
}

/* A message is one line of text: a control character that came with user input
 * (a newline, an escape sequence) becomes '?', so that input cannot forge a second
 * "nsrun:" line or drive the caller's terminal. */
/* The length of the well-formed UTF-8 sequence at p (RFC 3629: no overlong
 * form, no surrogate, at most U+10FFFF) and its code point in *cp, or 0. */
static size_t utf8_seq(const unsigned char *p, unsigned *cp)
{
	size_t n = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc0 ? 2 : 0;
	unsigned c = n == 4 ? p[0] & 0x07u : n == 3 ? p[0] & 0x0fu : p[0] & 0x1fu;

	if (!n || p[0] > 0xf4)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0; /* the NUL at the end too */
		c = (c << 6) | (p[i] & 0x3fu);
	}
	if ((n == 2 && c < 0x80) || (n == 3 && c < 0x800) || (n == 4 && c < 0x10000) || c > 0x10ffff ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

char *error_one_line(char *s)
{
	unsigned char *p = (unsigned char *)s;

	while (*p) {
		unsigned cp = 0;
		size_t n = *p < 0x80 ? 1 : utf8_seq(p, &cp);
		if (n == 1 && (*p < 0x20 || *p == 0x7f)) {
			*p = '?';
		} else if (n == 0) {
			/* not UTF-8: a lone byte 0x80-0xff (0x9b is CSI to an 8-bit terminal) */
			*p = '?';
			n = 1;
		} else if (n > 1 && cp >= 0x80 && cp <= 0x9f) {
			/* a C1 control (U+009B: CSI) written in UTF-8 */
			memset(p, '?', n);
		}
		p += n;
	}
	return s;
}

static void one_line(char *s)
{
	error_one_line(s);
}

static int error_vset(struct nsrun_error *err, int stage, int errnum, const char *fmt, va_list ap)
{
	if (!err)
		return -1;
	err->errnum = errnum;
	err->stage = stage;
	err->hint = NULL;
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	one_line(err->msg);
	return -1;
}

int error_set(struct nsrun_error *err, int errnum, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	error_vset(err, err ? err->stage : 0, errnum, fmt, ap);
	va_end(ap);
	return -1;
}

int error_set_stage(struct nsrun_error *err, int stage, int errnum, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	error_vset(err, stage, errnum, fmt, ap);
	va_end(ap);
	return -1;
}

int error_prefix(struct nsrun_error *err, const char *fmt, ...)
{
	char prefix[128];
	char old[sizeof(err->msg)];
	va_list ap;

	if (!err)
		return -1;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	/* may cut the end of a very long message: that is fine for a message */
	size_t n = strlen(prefix);
	if (n + 2 >= sizeof(err->msg))
		n = sizeof(err->msg) - 3;
	memcpy(err->msg, prefix, n);
	memcpy(err->msg + n, ": ", 2);
	size_t rest = sizeof(err->msg) - n - 3;
	size_t olen = strnlen(old, rest);
	memcpy(err->msg + n + 2, old, olen);
	err->msg[n + 2 + olen] = '\0';
	one_line(err->msg);
	return -1;
}

void error_format(const struct nsrun_error *err, char *buf, size_t len)
{
	if (err->errnum)
		snprintf(buf, len, "%s: %s", err->msg, strerror(err->errnum));
	else
		snprintf(buf, len, "%s", err->msg);
}

struct hint {
	int stage;      /* -1: any stage */
	int errnum;
	const char *text;
};

static const struct hint hints[] = {
	{ STAGE_CLONE, EPERM,
	  "user namespaces are refused here: check `sysctl kernel.unprivileged_userns_clone` (must be 1), "
	  "`sysctl kernel.apparmor_restrict_unprivileged_userns` (Ubuntu: 0, or an AppArmor profile for nsrun), "
	  "and whether an outer sandbox's seccomp filter denies clone/unshare (`grep Seccomp /proc/self/status`)" },
	{ STAGE_CLONE, ENOSPC,
	  "the user namespace limit is reached: raise `sysctl user.max_user_namespaces` (0 disables them), "
	  "or you are nested more than 32 user namespaces deep" },
	{ STAGE_CLONE, EUSERS,
	  "too many nested user namespaces (the kernel allows 32 levels)" },
	{ STAGE_CLONE, EINVAL,
	  "the kernel does not support one of the namespaces nsrun creates" },
	{ STAGE_ID_MAPS, EPERM,
	  "the kernel refused the uid/gid map: an outer sandbox may forbid writing /proc/PID/uid_map" },
	{ STAGE_MOUNT, ENOSPC, "a mount limit was exceeded (`sysctl fs.mount-max`), not disk space" },
	{ STAGE_MOUNT, EPERM,
	  "mounting is refused: an outer sandbox (Landlock, seccomp, a masked /proc) forbids it; run `nsrun check`" },
	{ STAGE_EXEC, ENOENT, "the command or its interpreter (#! line) is not in the image" },
};

/* the linker's bounds of the binary's read-only part (ld's default script; static-pie
 * too): text, .rodata (where a hint's literal is), .eh_frame; .init_array and the
 * writable data follow */
extern const char __executable_start[], __init_array_start[];

const char *error_hint_from_peer(const char *hint)
{
	uintptr_t p = (uintptr_t)hint;

	if (p >= (uintptr_t)__executable_start && p < (uintptr_t)__init_array_start)
		return hint;
	return NULL;
}

const char *error_hint(const struct nsrun_error *err)
{
	if (err->hint)
		return err->hint;
	for (size_t i = 0; i < sizeof(hints) / sizeof(hints[0]); i++) {
		if ((hints[i].stage == -1 || hints[i].stage == err->stage) && hints[i].errnum == err->errnum)
			return hints[i].text;
	}
	return NULL;
}

void error_print(const struct nsrun_error *err, FILE *out)
{
	char line[512], hint_line[512];
	const char *hint = error_hint(err);

	error_format(err, line, sizeof(line));
	fprintf(out, "nsrun: %s\n", error_one_line(line));
	if (hint) {
		snprintf(hint_line, sizeof(hint_line), "%s", hint);
		fprintf(out, "nsrun: hint: %s\n", error_one_line(hint_line));
	}
}

void error_warn(FILE *out, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(out, "nsrun: warning: %s\n", error_one_line(line));
}
