/* image_store.h - the store's images as Docker shows them: `nsrun pull`,
 * `nsrun image ls|inspect|rm`, and the same code for nsrun api's /images.
 *
 * Entries are plain names (nsrun-image build NAME) or a Docker reference's
 * store name (image_ref.h).  Fetching and unpacking are skopeo's and umoci's,
 * contained by rootfs-tools/nsrun-image (the import rules of threat-model.md
 * and `nsrun image check`); nsrun finds that tool beside itself.
 */
#ifndef NSRUN_IMAGE_STORE_H
#define NSRUN_IMAGE_STORE_H

#include <stdbool.h>
#include <stdio.h>

#include <yajl/yajl_gen.h>

#include "error.h"
#include "image_ref.h"
#include "util.h"

/* `nsrun pull [-q] REF`, `nsrun image ls|inspect|rm ...` (argv[0] is "pull"
 * or "image").  Prints errors as main does.  Returns the exit status. */
int image_pull_main(int argc, char **argv);
int image_cmd_main(int argc, char **argv);

/* Pulls ref into the store through rootfs-tools/nsrun-image (found beside
 * self, the path of this nsrun, else on PATH) under its store name, replacing
 * an older pull of the same reference.  out_fd: the tool's stdout and stderr
 * (-1: this process's).  Returns 0, or -1 with err (the tool's last error line
 * when out_fd is a pipe the caller reads: see image_pull_wait). */
int image_pull_spawn(const char *self, const struct image_ref *ref, bool quiet, int out_fd, pid_t *pid,
		     struct nsrun_error *err);

/* Waits for the pull pid.  Returns 0 if it succeeded, else -1 with err. */
int image_pull_wait(pid_t pid, struct nsrun_error *err);

/* The store entry of name (a plain name, a reference, or an image id
 * "sha256:HEX" or a HEX prefix of at least 12) that exists in the store.
 * entry gets len bytes.  Returns 0, or -1 with err (errnum ENOENT: no such
 * image; 0: a malformed reference). */
int image_find(const char *name, char *entry, size_t len, struct nsrun_error *err);

/* Docker's image object for the store entry: full, `docker image inspect`'s
 * (with Config); else /images/json's summary.  Returns 0 or -1 with err. */
int image_gen(yajl_gen g, const char *entry, bool full, struct nsrun_error *err);

/* The image's Entrypoint and Cmd (image.json "entrypoint", "cmd"), appended
 * to entrypoint and cmd.  Returns 0 or -1 with err. */
int image_default_command(const char *entry, struct strv *entrypoint, struct strv *cmd, struct nsrun_error *err);

/* The User of the store's image entry (its OCI config's, image.json "user"; "" for
 * none) into user (size bytes, truncated).  Returns 0 or -1 with err. */
int image_default_user(const char *entry, char *user, size_t size, struct nsrun_error *err);

/* The id of an entry, "sha256:" and 64 hex (id gets at least 72 bytes). */
void image_id(const char *entry, char *id, size_t len);

/* Removes the store entry: renamed aside at once (.ENTRY.old.XXXXXX), its
 * files deleted unless a run still holds its rootfs (then the next pull,
 * build or rm of it deletes them).  Returns 0 or -1 with err. */
int image_remove(const char *entry, struct nsrun_error *err);

/* Calls fn for each store entry with an image.json, in name order.  Returns
 * the number of entries, or -1 with err. */
int image_each(void (*fn)(const char *entry, void *arg), void *arg, struct nsrun_error *err);

#endif
