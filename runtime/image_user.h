/* image_user.h - Docker's `User` by name (`redis`, `postgres:postgres`,
 * `1000:staff`, `app:1000`): looked up in the image's own /etc/passwd and
 * /etc/group, as runc's libcontainer/user.GetExecUser does for docker run.
 *
 * The files are opened inside the image tree only (openat2(2) RESOLVE_IN_ROOT |
 * RESOLVE_NO_MAGICLINKS through open_in_root, sys.h): a link of the image to
 * the host's /etc/passwd meets the image's own root, never the host's.  Each is
 * read whole, at most IMAGE_USER_FILE_MAX bytes, and only if it is a regular
 * file (a FIFO would block the read), then parsed with fgetpwent_r(3) and
 * fgetgrent_r(3) from memory.
 */
#ifndef NSRUN_IMAGE_USER_H
#define NSRUN_IMAGE_USER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "config.h"
#include "error.h"

#define IMAGE_USER_FILE_MAX (1 << 20)   /* /etc/passwd, /etc/group read: bytes at most */
#define IMAGE_USER_ID_MAX 65534         /* the highest id a container has (config_set_user) */

/* Is spec "USER[:GROUP]" with each part a number or a name of letters, digits,
 * '_', '.', '-' (not first) and a final '$' (useradd's rule), 1 to 64 bytes?
 * Pure. */
bool image_user_spec_valid(const char *spec);

/* The ids of spec (image_user_spec_valid) in the image tree at root_fd (a
 * directory fd, O_PATH is enough): a name from /etc/passwd (its uid, and its gid
 * unless GROUP is given), GROUP from /etc/group; with no GROUP and a user found by
 * name, the groups of /etc/group that list it become *groups (n_groups of at most
 * max_groups, the primary one left out), as Docker's.  A number is taken as it is.
 * Returns 0, or -1 with err: errnum 0 and Docker's words ("unable to find user
 * NAME: no matching entries in passwd file", the same of a group) for a name that
 * is not there (or no such file); errnum of open/read for a file that cannot be
 * read (ELOOP: a link that leads nowhere inside the image; EFBIG: past
 * IMAGE_USER_FILE_MAX; EINVAL: not a regular file); errnum 0 for an id past
 * IMAGE_USER_ID_MAX. */
int image_user_lookup(int root_fd, const char *spec, uid_t *uid, gid_t *gid, gid_t *groups, size_t max_groups,
		      size_t *n_groups, struct nsrun_error *err);

/* cfg->user_spec (a --user with a name) resolved in cfg->rootfs: sets
 * cfg->process.uid, gid and additional_gids.  No user_spec: nothing to do.
 * Returns 0 or -1 with err (image_user_lookup's, with a hint). */
int image_user_apply(struct nsrun_config *cfg, struct nsrun_error *err);

#endif
