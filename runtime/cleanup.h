/* cleanup.h - scope-bound release of resources (GCC/Clang cleanup attribute).
 *
 * Every such variable is initialised where it is declared (NULL or -1).  Ownership
 * leaves a cleanup variable only through steal_ptr()/steal_fd(), which return the
 * value and leave NULL / -1 behind.  Cleanup does not run on _exit() or execve():
 * child code relies on it for tidiness only.
 */
#ifndef NSRUN_CLEANUP_H
#define NSRUN_CLEANUP_H

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

static inline void cleanup_freep(void *p)
{
	free(*(void **)p);
}

static inline void cleanup_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
		*fd = -1;
	}
}

static inline void cleanup_fclosep(FILE **f)
{
	if (*f) {
		int saved = errno;
		fclose(*f);
		errno = saved;
	}
}

static inline void cleanup_closedirp(DIR **d)
{
	if (*d) {
		int saved = errno;
		closedir(*d);
		errno = saved;
	}
}

static inline void cleanup_yajlp(yajl_val *v)
{
	if (*v)
		yajl_tree_free(*v);
}

#define _cleanup_free_ __attribute__((cleanup(cleanup_freep)))
#define _cleanup_close_ __attribute__((cleanup(cleanup_closep)))
#define _cleanup_fclose_ __attribute__((cleanup(cleanup_fclosep)))
#define _cleanup_closedir_ __attribute__((cleanup(cleanup_closedirp)))
#define _cleanup_yajl_ __attribute__((cleanup(cleanup_yajlp)))

/* Returns *pp and sets *pp to NULL: the caller takes ownership. */
#define steal_ptr(pp) ({ __typeof__(*(pp)) _tmp = *(pp); *(pp) = NULL; _tmp; })

/* Returns *fdp and sets *fdp to -1: the caller takes ownership. */
static inline int steal_fd(int *fdp)
{
	int fd = *fdp;
	*fdp = -1;
	return fd;
}

#endif
