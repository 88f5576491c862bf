/* mount_detach.c - see mount_detach.h.
 *
 * Why a thread: umount2(2) of the old root takes it out of the namespace at once
 * (umount_tree() under namespace_sem), then waits for an RCU grace period before
 * it returns (namespace_unlock() in fs/namespace.c, synchronize_rcu_expedited):
 * on a loaded machine milliseconds, every run.  The thread makes that wait; pid 1
 * goes on once the old root is out of its namespace, so the payload never sees it.
 * The thread is made before the rootfs is built (its cost off the pivot's path) and
 * waits on a futex(2) word until asked.
 * References: pivot_root(2) ("pivot_root(".", ".")"), umount2(2), statx(2)
 * (STATX_MNT_ID), futex(2).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/futex.h>

#include "mount_detach.h"

enum { WAIT, DETACH, QUIT };

struct old_root_detach {
	int order;      /* WAIT, then DETACH or QUIT (futex word) */
	int done;       /* 0 until umount2 returned, then 1 + its errno */
	int refs;       /* the thread's and the caller's: the last one frees */
};

static void put(struct old_root_detach *d)
{
	if (__atomic_sub_fetch(&d->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(d);
}

static void *detach_thread(void *arg)
{
	struct old_root_detach *d = arg;
	int order;

	while ((order = __atomic_load_n(&d->order, __ATOMIC_ACQUIRE)) == WAIT)
		syscall(SYS_futex, &d->order, FUTEX_WAIT_PRIVATE, WAIT, NULL, NULL, 0);
	if (order == DETACH) {
		int r = umount2(".", MNT_DETACH);   /* errno is this thread's own */
		__atomic_store_n(&d->done, r == 0 ? 1 : 1 + errno, __ATOMIC_RELEASE);
	}
	put(d);
	return NULL;
}

struct old_root_detach *mount_detach_prepare(void)
{
	struct old_root_detach *d = calloc(1, sizeof(*d));
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t t;
	bool ok;

	if (!d)
		return NULL;
	d->refs = 2;
	if (pthread_attr_init(&attr) != 0) {
		free(d);
		return NULL;
	}
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 << 10);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ok = pthread_create(&t, &attr, detach_thread, d) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (!ok) {
		free(d);
		return NULL;
	}
	return d;
}

static void order(struct old_root_detach *d, int what)
{
	__atomic_store_n(&d->order, what, __ATOMIC_RELEASE);
	syscall(SYS_futex, &d->order, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void mount_detach_cancel(struct old_root_detach *d)
{
	if (!d)
		return;
	order(d, QUIT);
	put(d);
}

/* The mount id of path, as it resolves ("/.." crosses into a mount stacked on
 * "/"), or 0 where statx has no STATX_MNT_ID (before Linux 5.8). */
static unsigned long long mnt_id(const char *path)
{
	struct statx st;

	if (statx(AT_FDCWD, path, AT_NO_AUTOMOUNT | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &st) < 0 ||
	    !(st.stx_mask & STATX_MNT_ID))
		return 0;
	return st.stx_mnt_id;
}

int mount_detach_old_root(struct old_root_detach *d, struct nsrun_error *err)
{
	unsigned long long root = d ? mnt_id("/") : 0;
	int done = 0;

	if (!d || !root) {
		mount_detach_cancel(d);
		if (umount2(".", MNT_DETACH) < 0)
			return error_set(err, errno, "detach the old root");
		return 0;
	}
	order(d, DETACH);
	/* gone once "/.." is "/" itself (nothing stacked on it), or once umount2 returned */
	for (unsigned i = 0; !(done = __atomic_load_n(&d->done, __ATOMIC_ACQUIRE)); i++) {
		unsigned long long up = mnt_id("/..");
		if (up == root)
			break;
		if (!up) {
			/* statx failed: wait for umount2 itself */
			while (!(done = __atomic_load_n(&d->done, __ATOMIC_ACQUIRE)))
				sched_yield();
			break;
		}
		if (i >= 100)
			sched_yield();
	}
	put(d);
	if (done > 1)
		return error_set(err, done - 1, "detach the old root");
	return 0;
}
