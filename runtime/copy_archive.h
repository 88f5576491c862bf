/* copy_archive.h - docker cp's two halves, run by `nsrun exec --archive-*` inside a
 * service (and a PUT's half by a run's --copy-archive, exec.h, before its command), after it joined the container's namespaces and took its payload's ids,
 * Landlock rules and seccomp filter (exec_join.h): a payload's symlink then meets
 * only the container's own root, and a write only what the payload may write.
 * Tar archives with libarchive (archive_read_disk(3), archive_write_disk(3)).
 *
 * What they write on fd 1 (the API reads it, api_archive.c): one line first,
 *   the stat of the path as Docker's X-Docker-Container-Path-Stat holds it (JSON:
 *   name, size, mode as Go's os.FileMode, mtime, linkTarget), or
 *   `!ERRNO message` when it failed (ERRNO a number: ENOENT, EROFS, ...);
 * for GET, the tar archive after the line. */
#ifndef NSRUN_COPY_ARCHIVE_H
#define NSRUN_COPY_ARCHIVE_H

enum copy_archive_op {
	COPY_ARCHIVE_NONE,
	COPY_ARCHIVE_STAT,      /* the line alone (HEAD) */
	COPY_ARCHIVE_GET,       /* the line, then a tar of the path, its members named from
				 * the path's last component (Docker's rebase) */
	COPY_ARCHIVE_PUT,       /* extracts the tar on fd 0 into the path, a directory; then
				 * the line (the directory's stat) or the error */
};

/* Does op on path (absolute, inside) with fds 0 and 1 as above; the caller has
 * closed every other fd.  The path is resolved by openat2(2) RESOLVE_IN_ROOT |
 * RESOLVE_NO_MAGICLINKS (a /proc/self/fd/N link on the way: ENOENT).  Symlinks in
 * the last component are not followed (lstat(2)); members of a PUT that are absolute,
 * hold "..", go through a symlink or are device nodes are refused, and no setuid,
 * setgid or sticky bit is set (no ARCHIVE_EXTRACT_PERM: files get the mode under
 * umask 0 without them); members keep their uid and gid where the caller may
 * chown(2) to them (ARCHIVE_EXTRACT_OWNER), else get the caller's.  Returns the exit status: 0, or 1
 * after writing the error line. */
int copy_archive_run(enum copy_archive_op op, const char *path);

struct stat;
/* The stat line's JSON (above) for st, named from shown's last component, with
 * link as its linkTarget ("" for none).  Pure.  Returns it (malloc'd) or NULL
 * (ENOMEM). */
char *copy_archive_stat_json(const struct stat *st, const char *shown, const char *link);

#endif
