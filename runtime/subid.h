/* subid.h - more than one id in the container's user namespace (--userns subids):
 * container id 0 is the caller, 1..N the caller's subordinate ids from
 * /etc/subuid and /etc/subgid (subuid(5), subgid(5)), the maps written by the
 * setuid helpers newuidmap(1) and newgidmap(1), as podman maps a rootless
 * container.  As root no helper is needed: root's own subordinate range is written
 * to /proc/PID/{uid,gid}_map directly, container 0..N-1 onto it (root is never
 * mapped).  docs/userns.md says what this means for the host. */
#ifndef NSRUN_SUBID_H
#define NSRUN_SUBID_H

#include <stdbool.h>
#include <sys/types.h>

#include "config.h"
#include "error.h"

/* One contiguous range of subordinate ids. */
struct subid_range {
	unsigned long start;            /* first host id */
	unsigned long count;            /* how many */
};

/* The maps of a run: uid and gid ranges, and who they are for. */
struct subid_maps {
	uid_t uid;                      /* the caller's uid (container 0 when unprivileged) */
	gid_t gid;
	bool direct;                    /* root: written directly, container 0 -> start */
	struct subid_range uids, gids;
	/* an OCI config's maps (config.h), written as given instead of the two lines
	 * above when n_uid_lines or n_gid_lines is not 0 */
	const struct nsrun_id_map *uid_lines, *gid_lines;
	size_t n_uid_lines, n_gid_lines;
};

/* The first range of user (by name, or by uid in decimal, as subuid(5) allows) in
 * the text of a subuid/subgid file.  Returns 1 with *r set, 0 when there is none. */
int subid_find(const char *text, const char *user, unsigned long id, struct subid_range *r);

/* Whether another entry than user's (by name or uid id) of text, a subuid(5) or
 * subgid(5) file, overlaps r: 1 and who (who_size bytes) says whose range, or 0. */
int subid_taken(const char *text, const char *user, unsigned long id, const struct subid_range *r,
		char *who, size_t who_size);

/* Fills m for the caller (getuid/getgid, the name from the password database): the
 * first subuid and subgid ranges, at least 1000 ids each, and none holding id 0 or
 * the caller's own id, each an id of the user namespace nsrun runs in
 * (/proc/self/uid_map, gid_map).  Returns 0, or -1 with err: ENOENT (no range: the
 * hint gives the usermod(8) line), EINVAL (a range that would map host root or the
 * caller) or errnum 0 (a range that user namespace does not map: nested). */
int subid_maps_for_caller(struct subid_maps *m, struct nsrun_error *err);

/* Fills m with cfg's OCI maps (uid_mappings, gid_mappings: runtime-spec
 * config-linux.md), checked before anything is made as newuidmap(1) would:
 * unprivileged, each host range is the caller's own id alone or lies inside its
 * subordinate range (/etc/subuid, /etc/subgid, as subid_maps_for_caller finds
 * it); as root (written directly) no range may hold id 0 where it is host root
 * (ns_is_host_root: in rootless podman's user namespace 0 is the user).  Returns 0, or -1
 * with err naming the mapping, the range allowed and the fix (errnum 0). */
int subid_maps_from_config(struct subid_maps *m, const struct nsrun_config *cfg, struct nsrun_error *err);

/* Writes the maps of the child pid (a number in nsrun's pid namespace) with
 * newuidmap/newgidmap, or directly as root; waits for the helpers, whose stderr
 * becomes the error's text.  Returns 0 or -1 with err (stage id maps). */
int subid_write_maps(pid_t pid, const struct subid_maps *m, struct nsrun_error *err);

/* nsrun check: maps a throwaway user namespace with the helpers (or directly as
 * root).  Returns 0 when it worked, or -1 with err saying why not. */
int subid_check(struct nsrun_error *err);

/* The name of uid from /etc/passwd, read with fgetpwent(3) (no NSS in a static
 * binary, whose getpwuid(3) needs the shared libraries of its glibc); malloc'd,
 * or NULL when it has none there (the uid's number still names it). */
char *subid_user_name(uid_t uid);

#endif
