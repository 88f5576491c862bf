/* image_store.h - the store's images as Docker shows them: `nsrun pull`,
 * `nsrun image ls|inspect|rm`, and the same code for nsrun api's /images.
 *
 * Entries are plain names (nsrun-image build NAME) or a Docker reference's
 * store name (image_ref.h).  The pull is image_pull.h's.
 */
#ifndef NSRUN_IMAGE_STORE_H
#define NSRUN_IMAGE_STORE_H

#include <stdbool.h>
#include <stdio.h>

#include <yajl/yajl_gen.h>

#include "error.h"
#include "image_pull.h"
#include "image_ref.h"
#include "util.h"

/* `nsrun image ls|inspect|rm ...` (argv[0] is "image"; `nsrun image pull`
 * is image_pull_main, image_pull.h).  Prints errors as main does.  Returns
 * the exit status. */
int image_cmd_main(int argc, char **argv);

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

/* The strings of the store entry's image.json key (an array: "volumes",
 * "exposed_ports", the keys of the OCI config's Volumes and ExposedPorts),
 * appended to out; none there: nothing.  Returns 0 or -1 with err. */
int image_config_strings(const char *entry, const char *key, struct strv *out, struct nsrun_error *err);

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
