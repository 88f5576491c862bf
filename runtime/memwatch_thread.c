/* memwatch_thread.c - the thread that takes memwatch's samples, and the API of
 * memwatch.h around it (see there). */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "memwatch.h"
#include "memwatch_internal.h"
#include "sys.h"

/* The measuring thread: a sample when one is due, until a verdict or memwatch_close. */
static void *sampler_main(void *arg)
{
	struct memwatch_sampler *mw = arg;

	while (!atomic_load(&mw->stop)) {
		uint64_t now = monotonic_us();
		struct nsrun_error e = { 0 };
		int r;
		if (now < mw->next_us) {
			struct pollfd p = { .fd = mw->wake[1], .events = POLLIN };
			/* every signal is blocked here (memwatch_arm) */
			int n = poll(&p, 1, (int)((mw->next_us - now + 999) / 1000));
			if (n > 0)
				break;          /* memwatch_close */
			if (n == 0 || errno == EINTR)
				continue;
			/* a thread that ended here would leave the limit unkept, unsaid */
			r = error_set(&e, errno, "--memory: wait for the next sample");
		} else {
			atomic_store(&mw->sample_since, now);
			r = memwatch_sample(mw, now, &e);
			atomic_store(&mw->sample_since, 0);
		}
		if (r != 0 && !atomic_load(&mw->stop)) {
			mw->err = e;
			atomic_store(&mw->verdict, r);
			if (write(mw->wake[1], "v", 1) < 0) {
				/* the loop looks at the verdict at its next wake-up anyway */
			}
			break;
		}
	}
	return NULL;
}

void memwatch_init(struct memwatch *mw, uint64_t limit_bytes, const struct cgroup_v1 *cg1,
		   const struct mount_plan *plan, bool host_scan)
{
	memset(mw, 0, sizeof(*mw));
	mw->limit_bytes = limit_bytes;
	mw->cg1 = cg1;
	mw->plan = plan;
	mw->host_scan = host_scan;
	mw->stall_us = MEMWATCH_STALL_US;
	/* known before the payload runs: the probe forks, and a payload that forked to
	 * the user's RLIMIT_NPROC would make it fail and say "usable" (sys.h) */
	if (limit_bytes && !cg1)
		(void)sys_clone3_usable(NULL, 0);
}

/* Starts s's thread: 0, or -1 with errno and nothing left open (memwatch_poll
 * then samples itself). */
static int start_thread(struct memwatch_sampler *s)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int e;

	s->wake[0] = s->wake[1] = -1;
	/* pthread_create's clone3 would end nsrun, or fail (sys.h) */
	if (!sys_clone3_usable(NULL, 0)) {
		errno = ENOSYS;
		return -1;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, s->wake) < 0) {
		s->wake[0] = s->wake[1] = -1;
		return -1;
	}
	if ((e = pthread_attr_init(&attr)) != 0)
		goto fail;
	/* its frames are small (the sets of inodes are on the heap) */
	pthread_attr_setstacksize(&attr, 256 << 10);
	/* signals stay the loop's (signalfd): the thread blocks them all from its start */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = pthread_create(&s->thread, &attr, sampler_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (e != 0)
		goto fail;
	s->threaded = true;
	return 0;
fail:
	close(s->wake[0]);
	close(s->wake[1]);
	s->wake[0] = s->wake[1] = -1;
	errno = e;
	return -1;
}

void memwatch_arm(struct memwatch *mw, pid_t init, uint64_t now_us)
{
	struct memwatch_sampler *s;

	if (!mw->limit_bytes || mw->armed)
		return;
	mw->armed = true;
	if (mw->cg1) {
		mw->next_us = now_us;
		return;
	}
	/* without memory for it, memwatch_poll says ENOMEM: the limit cannot be kept */
	if (!(s = calloc(1, sizeof(*s))))
		return;
	s->limit_bytes = mw->limit_bytes;
	s->plan = mw->plan;
	s->host_scan = mw->host_scan;
	s->no_memfds = mw->no_memfds;
	s->root_upper_bytes = mw->root_upper_bytes;
	s->init = init;
	s->armed_us = now_us;
	s->interval_us = MIN_INTERVAL_US / 2;
	s->next_us = now_us;
	s->root_fd = s->proc_fd = s->wake[0] = s->wake[1] = -1;
	mw->s = s;
	/* made when the first sample is due: a run that ends before then (most short
	 * ones) pays for no thread, and its payload starts with no sample beside it */
	s->thread_due = true;
}

void memwatch_pin_now(struct memwatch *mw)
{
	struct memwatch_sampler *s = mw->s;

	if (!mw->armed || !s || s->threaded)
		return;
	/* not yet (the payload's exec has not made it dumpable yet, say): sampled at
	 * once instead, which opens them as soon as it can */
	if (!memwatch_pin(s))
		s->next_us = s->armed_us = monotonic_us();
}

bool memwatch_armed(const struct memwatch *mw)
{
	return mw->armed;
}

int memwatch_fd(const struct memwatch *mw)
{
	return mw->armed && !mw->decided && mw->s && mw->s->threaded ? mw->s->wake[0] : -1;
}

uint64_t memwatch_next_us(const struct memwatch *mw, uint64_t now_us)
{
	const struct memwatch_sampler *s = mw->s;
	uint64_t since;

	if (!mw->armed || mw->decided)
		return UINT64_MAX;
	if (mw->cg1)
		return mw->next_us;
	if (!s || !s->threaded)
		return s ? s->next_us : now_us;
	/* the thread's verdict wakes the loop (memwatch_fd); a sample that stalls does
	 * not: the loop looks when it would have run too long */
	if (!mw->stall_us)
		return UINT64_MAX;
	since = atomic_load(&s->sample_since);
	if (since)
		return since < UINT64_MAX - mw->stall_us ? since + mw->stall_us : UINT64_MAX;
	return now_us < UINT64_MAX - mw->stall_us ? now_us + mw->stall_us / 2 : UINT64_MAX;
}

int memwatch_timeout_ms(const struct memwatch *mw, uint64_t now_us, int limit_ms)
{
	uint64_t next = memwatch_next_us(mw, now_us), ms;

	if (next == UINT64_MAX)
		return limit_ms;
	ms = next > now_us ? (next - now_us + 999) / 1000 : 0;
	if (ms > INT_MAX)
		ms = INT_MAX;
	return limit_ms >= 0 && (uint64_t)limit_ms < ms ? limit_ms : (int)ms;
}

/* The verdict on a sample that ran past mw->stall_us: -1 with err. */
static int stalled(const struct memwatch *mw, struct nsrun_error *err)
{
	error_set(err, 0, "--memory: a sample of the container's memory has taken over %.3g s "
		  "(its processes' memory maps are slow to read: many processes, many mappings): "
		  "the limit is not being kept, so the run ends", (double)mw->stall_us / 1e6);
	err->hint = "a delegated cgroup v2 holds --memory in the kernel, with no measure to slow "
		    "down (docs/limits.md); a lower --pids-limit bounds the processes to read; "
		    "--memory-sample-timeout allows a longer sample";
	return -1;
}

/* memwatch_poll but for its once-only verdict */
static int poll_sampler(struct memwatch *mw, uint64_t now_us, struct nsrun_error *err)
{
	struct memwatch_sampler *s = mw->s;
	uint64_t since;
	int v;

	if (mw->cg1) {
		if (now_us < mw->next_us)
			return 0;
		mw->next_us = now_us + MAX_INTERVAL_US;
		return cgroup_v1_oom_kills(mw->cg1) > 0;
	}
	if (!s)
		return error_set(err, ENOMEM, "--memory: measure the container's memory");
	if (!s->threaded) {
		uint64_t start, stall_at;
		if (now_us < s->next_us)
			return 0;
		if (s->thread_due) {
			s->thread_due = false;
			/* the thread takes the sample due now; where it cannot be made (an outer
			 * filter on clone3, sys_clone3_usable, or no memory) this loop samples,
			 * each sample bounded by the stall bound */
			if (start_thread(s) == 0)
				return 0;
		}
		start = monotonic_us();
		/* past the caller's deadline: the caller acts on it first (a sample would
		 * stop at its first look anyway, but not before finding the container) */
		if (mw->deadline_us && start >= mw->deadline_us)
			return 0;
		stall_at = mw->stall_us ? start + mw->stall_us : 0;
		/* in the loop, the sample itself gives up (sets stop) at the bound, or at
		 * the caller's deadline, which it must not hold up.  From the clock, not
		 * now_us: a pool passes one now_us to all its slots' samples in turn */
		s->give_up_us = stall_at;
		if (mw->deadline_us && (!stall_at || mw->deadline_us < stall_at))
			s->give_up_us = mw->deadline_us > start ? mw->deadline_us : start;
		v = memwatch_sample(s, start, err);
		if (v != 0 || !atomic_load(&s->stop))
			return v;
		if (stall_at && s->give_up_us == stall_at)
			return stalled(mw, err);
		/* stopped at the deadline: the caller keeps it, and the next sample is due */
		atomic_store(&s->stop, false);
		return 0;
	}
	if ((v = atomic_load(&s->verdict)) != 0) {
		if (v < 0) {
			int stage = err->stage;
			*err = s->err;
			err->stage = stage;
		}
		return v;
	}
	since = atomic_load(&s->sample_since);
	if (since && mw->stall_us && now_us > since + mw->stall_us)
		return stalled(mw, err);
	return 0;
}

int memwatch_poll(struct memwatch *mw, uint64_t now_us, struct nsrun_error *err)
{
	int r;

	if (!mw->armed || mw->decided)
		return 0;
	r = poll_sampler(mw, now_us, err);
	mw->decided = r != 0;
	return r;
}

void memwatch_close(struct memwatch *mw)
{
	struct memwatch_sampler *s = mw->s;

	mw->armed = mw->decided = false;
	mw->next_us = 0;
	if (!s)
		return;
	if (s->threaded) {
		atomic_store(&s->stop, true);
		if (write(s->wake[0], "s", 1) < 0) {
			/* its socket is full of nothing but our stops: it sees the flag */
		}
		pthread_join(s->thread, NULL);
	}
	mw->peak_bytes = s->peak_bytes;
	mw->samples = s->samples;
	mw->precise_samples = s->precise_samples;
	mw->cost_us = s->cost_us;
	for (int i = 0; i < 2; i++)
		if (s->wake[i] >= 0)
			close(s->wake[i]);
	if (s->root_fd >= 0)
		close(s->root_fd);
	if (s->proc_fd >= 0)
		close(s->proc_fd);
	free(s->pass_seen);
	free(s->last_seen);
	for (size_t i = 0; s->tmpfs_fds && i < s->n_tmpfs; i++)
		if (s->tmpfs_fds[i] >= 0)
			close(s->tmpfs_fds[i]);
	free(s->tmpfs_fds);
	free(s);
	mw->s = NULL;
}
