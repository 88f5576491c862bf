/* image.h - the image store: lookup, image.json, listing.
 *
 * An image is a directory NAME/ holding rootfs/ and image.json in the store
 * $NSRUN_IMAGES, else ${XDG_DATA_HOME:-$HOME/.local/share}/nsrun/images.
 * image.json (schema 1): {"interpreter": [argv...], "env": ["K=V", ...],
 * "workdir": "/work", "entrypoint": [...], "cmd": [...], "user": "...",
 * "source": {...}, ...}; unknown keys are ignored.  Pulled images live under
 * their reference's store name (image_ref.h).
 */
#ifndef NSRUN_IMAGE_H
#define NSRUN_IMAGE_H

#include <stdio.h>

#include "config.h"
#include "error.h"

/* Returns the store directory as a malloc'd string, or NULL with err (no HOME). */
char *image_store_dir(struct nsrun_error *err);

/* The store entry (directory name) of image: the plain name itself when the
 * store has it (nsrun-image build NAME), else the store name of image parsed as
 * a Docker reference (image_ref.h: redis:7 is docker.io+library+redis=7).
 * name gets len bytes.  Returns 0, or -1 with err (a malformed reference). */
int image_store_entry(const char *image, char *name, size_t len, struct nsrun_error *err);

/* How an entry of the store is shown: a reference's as docker writes it
 * (redis:7), a plain name as it is.  buf gets len bytes. */
void image_display_name(const char *entry, char *buf, size_t len);

/* Looks cfg->image (a plain name or a Docker reference) up in the store, reads its image.json and merges it into cfg:
 * rootfs, image env (after the defaults, before -e), workdir (unless -w), the
 * user (cfg->image_user, for a note only); in FILE and STDIN modes prepends the
 * interpreter to the argv; a COMMAND run with no argv gets the image's
 * entrypoint then cmd (docker run IMAGE).
 * Returns 0 or -1 with err (unknown image: names the store and the images it has). */
int image_resolve(struct nsrun_config *cfg, struct nsrun_error *err);

/* Merges the image.json text (NUL-terminated; file names it in messages) into cfg
 * as image_resolve does.  Returns 0 or -1 with err. */
int image_merge_json(struct nsrun_config *cfg, const char *file, const char *text, struct nsrun_error *err);

/* What image_resolve does once the image's directory dir is found: checks
 * dir/rootfs is a directory, reads dir/image.json and merges it into cfg (the
 * rules: depth, no NUL, types, env entries KEY=VALUE execve takes, workdir an
 * absolute path without ".."; the one place they are, for runs and `nsrun image
 * check` alike).  interp NULL: a run, the interpreter is prepended in FILE and
 * STDIN modes; else the interpreter is handed to *interp (caller frees) and
 * cfg->process.args is left alone.  Sets cfg->image_dir and cfg->rootfs.
 * Returns 0 or -1 with err. */
int image_load_dir(struct nsrun_config *cfg, const char *dir, struct strv *interp, struct nsrun_error *err);

/* Finds the command cfg->process.args.v[0] (an image's interpreter) inside
 * cfg->rootfs as the payload's exec will (exec_candidates: the PATH of
 * cfg->process.env, at most EXEC_CANDIDATES_MAX entries, relative ones from
 * cfg->process.cwd), resolving every symlink inside the rootfs (open_in_root,
 * openat2(2) RESOLVE_IN_ROOT: at most 40 links a lookup), never on the host.  A
 * path under a mount of the run (volume, --tmpfs, /tmp, /dev, /proc) counts as
 * found: the image does not decide what is there.  found (len bytes) gets the
 * container path.  Returns 0, or -1 with err (errnum 0: not an executable
 * regular file anywhere looked; or the rootfs cannot be opened). */
int image_find_interpreter(const struct nsrun_config *cfg, char *found, size_t len, struct nsrun_error *err);

/* `nsrun image check [--json] [--name NAME] DIR` (argv[0] is "image"): the checks of a run
 * (image_load_dir, then image_find_interpreter if the image has an interpreter)
 * on the image directory DIR.  Prints the error as main does; --json also writes
 * {"image", "ok", and "interpreter", "interpreter_path", "workdir", "env" or
 * "error", "hint"} to out.  Returns the exit status: 0, or 125. */
int image_check_main(int argc, char **argv, FILE *out);

/* Prints one line per image of the store ("NAME<TAB>INTERPRETER") to out.
 * Returns the number of images, or -1 with err. */
int image_list(FILE *out, struct nsrun_error *err);

#endif
