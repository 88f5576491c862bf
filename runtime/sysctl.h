/* sysctl.h - OCI linux.sysctl (config-linux.md "Sysctl"): keys of the
 * container's own namespaces written by its init.
 *
 * The files under /proc/sys of the net, IPC and UTS namespaced keys show the
 * namespace of the process that opens them (proc(5), /proc/sys; net/sysctl_net.c,
 * ipc/ipc_sysctl.c), and the root of the user namespace owning it may write them:
 * so init, as that root and before its mounts (the container's own /proc/sys is
 * read-only), writes them through the /proc it started with, as ucounts.h does.
 */
#ifndef NSRUN_SYSCTL_H
#define NSRUN_SYSCTL_H

#include <stdint.h>

#include "error.h"
#include "util.h"

/* Writes each "key=value" of kv (sysctl(8)'s key: '.' between names, '/' for a
 * '.' inside one; checked by oci_config.c) to /proc/sys/KEY-AS-PATH.  With
 * ipc_bytes (nsrun's System V IPC limit from the memory limit, ucounts.h), a
 * kernel.shmmax, shmall, msgmni or msgmnb above what the namespace has then is
 * refused: it would let IPC memory past the limit.  No allocation.  Returns 0 or -1 with err (errno of
 * open(2)/write(2), naming the key; 0 for a value above the limit). */
int sysctl_apply(const struct strv *kv, uint64_t ipc_bytes, struct nsrun_error *err);

#endif
