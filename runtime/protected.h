/* protected.h - what a payload must never be able to write: nsrun's own files.
 *
 * A run trusts files on the host that outlive it: the seccomp BPF cache, the
 * seccomp profiles and the nsrun binary.  A rw volume that reaches one of them
 * (the volume is the file, one of its ancestors, or lies inside it) would let a
 * payload weaken every later run: a cached program rewritten to allow
 * everything, with its checksum fixed, loaded by the next run with no volume at
 * all (issue 17, kind 3).  No proof stored beside the cache helps against a
 * writer with the caller's uid: whatever nsrun can read to check an entry, such
 * a writer can read and forge.  So such volumes are refused before clone.
 */
#ifndef NSRUN_PROTECTED_H
#define NSRUN_PROTECTED_H

#include "config.h"
#include "error.h"

/* Refuses a rw volume of cfg that reaches nsrun's seccomp cache directory (when
 * the cache is on), the profile directory profiles_dir, the profile named by
 * cfg's seccomp spec when it is a path, or the running binary.  Paths are
 * compared by identity (st_dev, st_ino) along each one's chain of ancestors, so
 * symlinks and bind-mount aliases of a directory do not hide it; a protected
 * path that does not exist yet is protected through its existing ancestors.
 * Returns 0, or -1 with *err (STAGE_CONFIG, errnum 0). */
int protected_check_volumes(const struct nsrun_config *cfg, const char *profiles_dir,
                            struct nsrun_error *err);

#endif
