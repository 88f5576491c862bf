/* util.h - pure helpers: strict number parsing and string vectors. No syscalls. */
#ifndef NSRUN_UTIL_H
#define NSRUN_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* Parses a size such as "64m", "512M", "1g", "4096", "10k" (binary units: k = 1024)
 * into *out bytes.  Returns 0, or -1 with err naming `what` (e.g. "--memory"). */
int parse_size_bytes(const char *what, const char *s, uint64_t *out, struct nsrun_error *err);

/* Parses seconds, fractional allowed ("1.5", "30", "0.25"), into *out microseconds,
 * truncated, except that a positive value below 1 us gives 1 us (0 means "none" to
 * the callers).  Rejects negatives, NaN, exponents and overflow.  Returns 0 or -1. */
int parse_duration_us(const char *what, const char *s, uint64_t *out, struct nsrun_error *err);

/* Parses a decimal unsigned integer no larger than max into *out. Returns 0 or -1. */
int parse_uint(const char *what, const char *s, uint64_t max, uint64_t *out, struct nsrun_error *err);

/* A NULL-terminated vector of malloc'd strings. */
struct strv {
	char **v;
	size_t n;
	size_t cap;
};

/* Appends a copy of s. Returns 0, or -1 with errno ENOMEM. */
int strv_push(struct strv *sv, const char *s);
/* Appends "key=value" replacing an entry with the same key. Returns 0 or -1 (ENOMEM). */
int strv_setenv(struct strv *sv, const char *kv);
/* As strv_setenv of each of the n of kvs in turn (a key set twice keeps its first
 * place and its last value), in O((sv->n + n) log(sv->n + n)) where n calls would
 * take O(n^2).  Returns 0 or -1 (ENOMEM; sv unchanged). */
int strv_setenv_many(struct strv *sv, const char *const *kvs, size_t n);
/* Looks up KEY in a "KEY=VALUE" vector; returns the value or NULL. */
const char *strv_getenv(const struct strv *sv, const char *key);
void strv_free(struct strv *sv);

/* Formats microseconds as seconds for messages ("2s", "0.5s") into buf. */
void format_seconds(uint64_t us, char *buf, size_t len);

/* Formats a size in bytes for messages into buf, rounded down to its largest
 * whole unit: "64 MiB", "512 KiB", "1 bytes" (so no limit under 1 MiB reads 0). */
void format_bytes(uint64_t bytes, char *buf, size_t len);

/* Joins the n strings of v with spaces into buf (len bytes, always terminated),
 * each as a POSIX shell word would read back: as it is when made only of
 * [A-Za-z0-9_@%+=:,./-], else in single quotes, a ' as '\'' (so an empty
 * argument shows as '', one with a space stays one word; Docker's ps shows a
 * command this way).  A word that does not fit whole ends the output with "...".
 * Returns buf. */
char *shell_quote_join(const char *const *v, size_t n, char *buf, size_t len);

/* True if s is a syntactically valid environment assignment KEY=VALUE. */
bool is_env_assignment(const char *s);

/* Deepest array/object nesting nsrun accepts in any JSON it parses (image.json,
 * seccomp profiles, service state): yajl's tree parser recurses once per level
 * and a document nested ~400,000 deep overflows the stack. */
#define JSON_MAX_DEPTH 32

/* Scans len bytes of JSON text for [ and { outside strings.  Returns the offset
 * of the first bracket deeper than max_depth, or len if there is none.  Runs
 * before the parser (yajl has no depth limit of its own), so it need not judge
 * validity: unbalanced or broken text is left to yajl's error. */
size_t json_scan_depth(const char *buf, size_t len, int max_depth);

/* Scans len bytes of JSON text for a "\u0000" escape inside a string (RFC 8259
 * section 7 allows it; a C string would end there, so a value holding it would
 * silently lose its tail).  Returns its offset, or len if there is none. */
size_t json_scan_nul(const char *buf, size_t len);

/* Longest environment entry ("KEY=VALUE") execve(2) takes: MAX_ARG_STRLEN (32
 * pages, include/uapi/linux/binfmts.h) less the terminating NUL; a longer one
 * fails the exec with E2BIG. */
#define ENV_ENTRY_MAX 131071

#endif
