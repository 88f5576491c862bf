/* caps.c - see caps.h */
#include <errno.h>
#include <sys/capability.h>
#include <sys/prctl.h>

#include "caps.h"

int caps_drop_bounding(struct nsrun_error *err)
{
	int last;

	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return error_set(err, errno, "clear the ambient capabilities");
	last = (int)cap_max_bits() - 1;
	for (int c = 0; c <= last; c++) {
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
			return error_set(err, errno, "drop capability %d from the bounding set", c);
	}
	return 0;
}

int caps_clear_and_nnp(struct nsrun_error *err)
{
	cap_t empty = cap_init();

	if (!empty)
		return error_set(err, errno, "cap_init");
	if (cap_set_proc(empty) < 0) {
		int saved = errno;
		cap_free(empty);
		return error_set(err, saved, "clear the capability sets");
	}
	cap_free(empty);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return error_set(err, errno, "set no_new_privs");
	return 0;
}
