/* image_ref.h - Docker image references and the store names they map to.
 *
 * The grammar is distribution's (github.com/distribution/reference, the one
 * docker and podman use): [DOMAIN/]PATH[:TAG][@DIGEST], DOMAIN a host name,
 * IPv4 or [IPv6] address with an optional :PORT, PATH lower-case components
 * separated by '/', TAG [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}, the name at most 255
 * characters.  Normalised as docker does: no domain (the first component has no
 * '.' or ':' and is not "localhost") is docker.io, a one-component path on
 * docker.io gets "library/", and no tag and no digest is ":latest".
 *
 * Store name (docs/images.md): the normalised reference with every '/' written
 * '+' and every ':' written '=', e.g. docker.io+library+redis=7; neither
 * character is in a reference, so the mapping is one-to-one, and every mapped
 * name holds a '+', which no plain image name (NAME of nsrun-image) does.
 */
#ifndef NSRUN_IMAGE_REF_H
#define NSRUN_IMAGE_REF_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

#define IMAGE_REF_MAX 512

struct image_ref {
	char domain[256];   /* docker.io, 127.0.0.1:5000 */
	char path[256];     /* library/redis */
	char tag[129];      /* "latest" when neither tag nor digest is given; "" with a digest alone */
	char digest[160];   /* sha256:HEX or "" */
};

/* The form of a reference, for hints. */
extern const char image_ref_hint[];

/* As image_ref_parse; on failure *why is the reason (static text).  Returns 0 or -1. */
int image_ref_check(const char *s, struct image_ref *ref, const char **why);

/* Parses the reference s into *ref, normalised.  Returns 0, or -1 with err
 * (errnum 0; the message names what is wrong and err->hint gives the form). */
int image_ref_parse(const char *s, struct image_ref *ref, struct nsrun_error *err);

/* Writes the normalised reference (docker.io/library/redis:7) into buf (len
 * bytes).  Returns buf, or NULL if it does not fit. */
char *image_ref_string(const struct image_ref *ref, char *buf, size_t len);

/* Writes the reference as docker shows it (redis:7, team/tool@sha256:...,
 * 127.0.0.1:5000/team/tool:1).  Returns buf, or NULL if it does not fit. */
char *image_ref_familiar(const struct image_ref *ref, char *buf, size_t len);

/* Writes the store name of ref (see above) into buf (len bytes).  Returns 0,
 * or -1 with err when it is longer than IMAGE_STORE_NAME_MAX. */
#define IMAGE_STORE_NAME_MAX 200
int image_ref_store_name(const struct image_ref *ref, char *buf, size_t len, struct nsrun_error *err);

/* Is name a store name made by image_ref_store_name (it holds a '+')? */
bool image_store_name_is_ref(const char *name);

/* The reverse of image_ref_store_name: the normalised reference of a store
 * name.  Returns 0, or -1 if name is not one. */
int image_store_name_ref(const char *name, struct image_ref *ref);

#endif
