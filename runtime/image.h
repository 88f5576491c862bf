/* image.h - the image store: lookup, image.json, listing.
 *
 * An image is a directory NAME/ holding rootfs/ and image.json in the store
 * $NSRUN_IMAGES, else ${XDG_DATA_HOME:-$HOME/.local/share}/nsrun/images.
 * image.json (schema 1): {"interpreter": [argv...], "env": ["K=V", ...],
 * "workdir": "/work", "source": {...}, ...}; unknown keys are ignored.
 */
#ifndef NSRUN_IMAGE_H
#define NSRUN_IMAGE_H

#include <stdio.h>

#include "config.h"
#include "error.h"

/* Returns the store directory as a malloc'd string, or NULL with err (no HOME). */
char *image_store_dir(struct nsrun_error *err);

/* Looks cfg->image up in the store, reads its image.json and merges it into cfg:
 * rootfs, image env (after the defaults, before -e), workdir (unless -w) and, in
 * FILE and STDIN modes, prepends the interpreter to the argv.
 * Returns 0 or -1 with err (unknown image: names the store and the images it has). */
int image_resolve(struct nsrun_config *cfg, struct nsrun_error *err);

/* Merges the image.json text (NUL-terminated; file names it in messages) into cfg
 * as image_resolve does.  Returns 0 or -1 with err. */
int image_merge_json(struct nsrun_config *cfg, const char *file, const char *text, struct nsrun_error *err);

/* Prints one line per image of the store ("NAME<TAB>INTERPRETER") to out.
 * Returns the number of images, or -1 with err. */
int image_list(FILE *out, struct nsrun_error *err);

#endif
