/* caps.h - dropping every capability (capabilities(7)) with libcap. */
#ifndef NSRUN_CAPS_H
#define NSRUN_CAPS_H

#include "error.h"

/* Clears the ambient set and drops every capability from the bounding set
 * (PR_CAPBSET_DROP needs CAP_SETPCAP: call while still uid 0 of the namespace).
 * Returns 0 or -1 with err (errno of prctl(2)). */
int caps_drop_bounding(struct nsrun_error *err);

/* Empties the permitted, effective and inheritable sets, then sets
 * PR_SET_NO_NEW_PRIVS (prctl(2)), after which execve cannot grant privileges.
 * Returns 0 or -1 with err. */
int caps_clear_and_nnp(struct nsrun_error *err);

#endif
