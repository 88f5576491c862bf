/* Unit tests of state_joined (state.h): state.json's "joined", the namespaces an
 * OCI container joined by path, read by exec and delete (exec_target.h). */
#include <stdbool.h>
#include <stdio.h>

#include "state.h"
#include "tap.h"

static bool joined(const char *list, const char *kind)
{
	struct service_state st = { 0 };

	snprintf(st.joined, sizeof(st.joined), "%s", list);
	return state_joined(&st, kind);
}

int main(void)
{
	struct tap t = { 0 };

	tap_ok(&t, joined("ipc,uts,pid,user", "pid"), "pid in the full list");
	tap_ok(&t, joined("ipc,uts,pid,user", "user"), "user, the last");
	tap_ok(&t, joined("ipc,uts,pid,user", "ipc"), "ipc, the first");
	tap_ok(&t, joined("pid", "pid"), "pid alone");
	tap_ok(&t, !joined("", "pid"), "none joined");
	tap_ok(&t, !joined("ipc,uts", "pid"), "not in the list");
	tap_ok(&t, !joined("pidx,user", "pid"), "a longer name is not it");
	tap_ok(&t, !joined("ipc,uts", "ut"), "nor a prefix of one");
	return tap_done(&t);
}
