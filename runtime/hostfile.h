/* hostfile.h - files nsrun opens on the caller's behalf: --stdin FILE, --json FILE.
 *
 * A payload with a rw volume can write into a directory the caller later names:
 * a symlink planted there would make nsrun (maybe root) read a file the payload may
 * not read into it, or overwrite one with the document; a document in a rw volume
 * can be replaced while the run goes on.  So (issue 17, kind 1):
 * - the directory part of the path is the caller's, resolved once before the
 *   payload starts and held as an fd (root follows no link on the way that root
 *   does not own);
 * - a symlink as the last component is refused unless root owns it (no payload can
 *   make a root-owned link: a root caller's container is uid 65534 on the host), so
 *   /dev/stdout and /dev/fd/N still work;
 * - a --json document goes into a new file in that directory, renamed over the name
 *   after the run (rename(2) replaces a link, never follows it), and the name must
 *   still lead to what was written.  A pipe, terminal or device (/dev/stdout) is
 *   opened before the run and written as it is.
 */
#ifndef NSRUN_HOSTFILE_H
#define NSRUN_HOSTFILE_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "config.h"
#include "error.h"

struct host_out {
	const char *path;       /* as the caller named it (borrowed) */
	const char *what;       /* "--json" */
	int dir_fd;             /* its directory, resolved before the run */
	char *name;             /* the last component */
	int fd;                 /* a pipe, terminal or device opened before the run; -1: replace atomically */
	char tmp[64];           /* the new file's name while it is written */
	dev_t dev;              /* what was written: checked against the name at the end */
	ino_t ino;
};

/* Opens path for reading (--stdin FILE) with the rules above.  Returns an fd
 * (O_CLOEXEC) or -1 with err (ELOOP: a symlink not root's). */
int host_in_open(const char *path, const char *what, struct nsrun_error *err);

/* Before the run: resolves and checks path, proving the directory writable (a new
 * file is made and removed again) or opening a non-regular destination.  With
 * refuse_rw (a service, which lives on while the caller reads the file), a path in
 * one of cfg's rw volumes is refused.  Returns 0 or -1 with err. */
int host_out_prepare(const char *path, const char *what, const struct nsrun_config *cfg, bool refuse_rw,
		     struct host_out *h, struct nsrun_error *err);

/* After the run: a stream to write the document into, or NULL with err. */
FILE *host_out_begin(struct host_out *h, struct nsrun_error *err);

/* Closes f, renames the new file over the name and checks that the name leads to
 * it.  Returns 0 or -1 with err (EXDEV: the path was changed to lead elsewhere). */
int host_out_commit(struct host_out *h, FILE *f, struct nsrun_error *err);

/* Releases what prepare opened (removing an uncommitted new file); idempotent. */
void host_out_free(struct host_out *h);

#endif
