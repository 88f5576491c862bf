/* error.h - errors as values that travel up to one place that prints them.
 *
 * A function that can fail returns int (0, or -1) or a pointer (NULL) and takes
 * `struct nsrun_error *err` last; on success *err is untouched.  The struct is a
 * fixed-size value (no allocation, safe in a forked child) and is also the wire
 * format of an error sent from the container to the supervisor (sync.h).
 */
#ifndef NSRUN_ERROR_H
#define NSRUN_ERROR_H

#include <stdarg.h>
#include <stdio.h>

/* Where in the life of a run an error happened; selects the hint printed by main. */
enum nsrun_stage {
	STAGE_CONFIG = 0,   /* command line, image.json, profiles: before anything is made */
	STAGE_PREPARE,      /* parent: opening files, compiling seccomp, limits */
	STAGE_CLONE,        /* parent: creating the namespaces */
	STAGE_ID_MAPS,      /* parent: writing uid_map / gid_map */
	STAGE_MOUNT,        /* container: building the root file system */
	STAGE_CONTAINER,    /* container: hostname, loopback, other set-up */
	STAGE_EXEC,         /* payload: privileges, seccomp, execve */
	STAGE_SUPERVISE,    /* parent: waiting, signals, timeout */
	STAGE__COUNT
};

struct nsrun_error {
	int errnum;             /* errno value, or 0 for a validation error */
	int stage;              /* enum nsrun_stage */
	char msg[256];          /* lower case, no trailing punctuation */
	const char *hint;       /* static text for this very error, or NULL (then the table's) */
};

/* Name of a stage for messages ("mount", "exec", ...); never NULL. */
const char *error_stage_name(int stage);

/* Formats msg, records errnum and the current default stage, returns -1 so a
 * failure is one line: `return error_set(err, errno, "open %s", path);`. */
int error_set(struct nsrun_error *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* As error_set, with an explicit stage. Returns -1. */
int error_set_stage(struct nsrun_error *err, int stage, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Puts "<context>: " in front of the message already in err. Returns -1. */
int error_prefix(struct nsrun_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Formats the one line main prints: "<msg>: <strerror(errnum)>" (or just msg
 * when errnum is 0) into buf of size len. */
void error_format(const struct nsrun_error *err, char *buf, size_t len);

/* A hint pointer that came from another process of this binary (the container's
 * init over sync, the OCI monitor over a pipe): kept when it points into the
 * binary's read-only image (its text and constants, from __executable_start to
 * the linker's __init_array_start: the same address in every fork of it), else
 * NULL, so neither a peer's heap pointer nor our own writable data is read here. */
const char *error_hint_from_peer(const char *hint);
/* A hint for this error, keyed by (stage, errnum), or NULL. */
const char *error_hint(const struct nsrun_error *err);

/* s made one line of printable text in place: a control character (below 0x20,
 * 0x7f, and the C1 controls U+0080-U+009F), a newline or an escape sequence that
 * came with an image's or a peer's string becomes '?', as does a byte that is
 * not part of well-formed UTF-8, so it cannot forge an "nsrun:" line or drive
 * the caller's terminal; other UTF-8 text is kept.  Returns s. */
char *error_one_line(char *s);

/* Prints "nsrun: warning: <fmt...>" on out, made one line of printable text by
 * error_one_line: a warning may carry a caller's config or an image's strings
 * (a path, an option, a name), which must not drive the terminal or forge a line.
 * At most 1 KiB of text. */
void error_warn(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints "nsrun: <error_format>" and, when there is one, "nsrun: hint: <hint>",
 * both through error_one_line whatever set them. */
void error_print(const struct nsrun_error *err, FILE *out);

#endif
