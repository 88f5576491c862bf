/* caps.h - dropping every capability (capabilities(7)) with libcap. */
#ifndef NSRUN_CAPS_H
#define NSRUN_CAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* Docker's default capability set (moby oci/caps/defaults.go): the most --cap-add
 * grants, as a mask of bits 1 << CAP_X. */
uint64_t caps_docker_default(void);

/* Parses one --cap-add value: a name of Docker's default set with or without
 * "CAP_", any case, or ALL (meaning that whole set); several may be comma-separated.
 * ORs the bits into *mask.  Returns 0, or -1 with err naming the refused one
 * (capabilities beyond Docker's default are not granted). */
int caps_parse_add(const char *arg, uint64_t *mask, struct nsrun_error *err);

/* Whether name is a capability the kernel headers libcap was built with know
 * (capabilities(7)), with or without "CAP_", any case: cap_from_name(3).  ALL is
 * not one. */
bool caps_known(const char *name);

/* Writes the names of mask's capabilities of Docker's default set to buf, comma-
 * separated (what --cap-add takes); "" for none. */
void caps_format(uint64_t mask, char *buf, size_t len);

/* As caps_drop_bounding, but keeps the capabilities of keep (bits 1 << CAP_X) in
 * the bounding set.  Returns 0 or -1 with err. */
int caps_keep_bounding(uint64_t keep, struct nsrun_error *err);

/* As caps_clear_and_nnp, but leaves keep (bits 1 << CAP_X) in the permitted and
 * effective sets (and inheritable, which no_new_privs bounds anyway): execve as
 * uid 0 then keeps them (capabilities(7): a root execve's permitted set is the
 * bounding set, cut to the old permitted one under no_new_privs).
 * Returns 0 or -1 with err (errno of capset(2) or prctl(2)). */
int caps_set_and_nnp(uint64_t keep, struct nsrun_error *err);

/* Clears the ambient set and drops every capability from the bounding set
 * (PR_CAPBSET_DROP needs CAP_SETPCAP: call while still uid 0 of the namespace).
 * Returns 0 or -1 with err (errno of prctl(2)). */
int caps_drop_bounding(struct nsrun_error *err);

/* Empties the permitted, effective and inheritable sets, then sets
 * PR_SET_NO_NEW_PRIVS (prctl(2)), after which execve cannot grant privileges.
 * Returns 0 or -1 with err. */
int caps_clear_and_nnp(struct nsrun_error *err);

#endif
