/* seccomp_builtin.h - the seccomp profiles compiled into nsrun, and where a
 * profile NAME is read from.
 *
 * seccomp-profiles/default.json and strict.json stay the source; the build puts
 * their bytes into the binary (seccomp_builtin.c, .incbin), so a copied nsrun
 * needs no file beside it.  A directory still overrides them: the
 * NSRUN_SECCOMP_PROFILES variable, else the installed one (NSRUN_INSTALLED_PROFILES,
 * $(PREFIX)/share/nsrun/seccomp-profiles) when it holds NAME.json.
 */
#ifndef NSRUN_SECCOMP_BUILTIN_H
#define NSRUN_SECCOMP_BUILTIN_H

#include <stddef.h>

#include "error.h"

/* The bytes of the built-in profile name ("default", "strict"): *bytes points
 * into the binary (not to be freed), *len its length.  Returns 0, or -1 when
 * there is no such built-in profile. */
int seccomp_builtin_find(const char *name, const char **bytes, size_t *len);

/* Names of the built-in profiles, for messages: "default, strict". */
extern const char seccomp_builtin_names[];

/* Where profile NAME comes from, and its bytes (malloc'd, NUL-terminated):
 *   dir_env    the value of NSRUN_SECCOMP_PROFILES (NULL or "": unset): when set,
 *              NAME is DIR/NAME.json and nothing else (an override is never
 *              silently passed over);
 *   installed  the installed profiles directory, used when it has NAME.json;
 *   else the built-in copy.
 * When the built-in copy is chosen and builtin is not NULL, *builtin points at it
 * (not NUL-terminated, *len bytes) and *bytes is NULL: no copy is made (a cold
 * run whose program is cached never reads the profile).  Else *builtin is NULL.
 * source gets "FILE" or "built-in NAME (compiled into nsrun)" (size len).
 * Returns 0, or -1 with err (STAGE_CONFIG; the message names every place looked). */
int seccomp_builtin_load(const char *name, const char *dir_env, const char *installed, char **bytes,
			 const char **builtin, size_t *len, char *source, size_t source_len,
			 struct nsrun_error *err);

#endif
