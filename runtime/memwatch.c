/* memwatch.c - see memwatch.h */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "cleanup.h"
#include "memwatch.h"
#include "memwatch_internal.h"
#include "sys.h"

#define NOT_FOUND_LIMIT_US 5000000 /* see memwatch_sample */
#define ASSUMED_RATE_BYTES_PER_S (8ULL << 30)   /* a fast writer of fresh pages (tmpfs, memfd) */
#define MAX_COSTLY_INTERVAL_US 1000000
#define COST_FACTOR 10                          /* interval >= 10 x the last sample's time */
#define MAX_SEEN 4096                           /* inodes counted once per sample */
#define MEMFD_FDS_PER_SAMPLE 1024               /* open files a sample looks at for memfds */

/* n first and each pair together: a sample writes only the pages it uses.  On a
 * guest with shadow page tables each first touch of a page is a fault of about
 * 10 us, and a calloc of the whole table cost a cold run 13 of them. */
struct seen {
	size_t n;
	struct {
		dev_t dev;
		ino_t ino;
	} id[MAX_SEEN];
};

/* True if (dev, ino) was counted already in this sample; remembers it otherwise.
 * Past MAX_SEEN everything counts again: an over-estimate. */
static bool seen_before(struct seen *s, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->id[i].dev == dev && s->id[i].ino == ino)
			return true;
	if (s->n < MAX_SEEN) {
		s->id[s->n].dev = dev;
		s->id[s->n].ino = ino;
		s->n++;
	}
	return false;
}

/* True if (dev, ino) is in s (NULL: empty). */
static bool seen_has(const struct seen *s, dev_t dev, ino_t ino)
{
	for (size_t i = 0; s && i < s->n; i++)
		if (s->id[i].dev == dev && s->id[i].ino == ino)
			return true;
	return false;
}

bool memwatch_can_measure(void)
{
	return access("/proc/self/smaps_rollup", R_OK) == 0;
}

static bool is_pid_name(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* The parent pid in /proc/PID/stat (proc(5): the field after the ")" of comm and
 * the state), or -1. */
static pid_t parent_of(int proc_fd, const char *pid)
{
	unsigned long long ppid;

	return proc_stat_fields(proc_fd, pid, 4, 1, &ppid) < 0 ? -1 : (pid_t)ppid;
}

/* The pids of the /proc at proc_fd (the host's, or the container's: every process
 * of its pid namespace), into a malloc'd array; their number, or -1 with errno. */
static ssize_t proc_pids(int proc_fd, pid_t **out)
{
	_cleanup_closedir_ DIR *d = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	int fd = openat(proc_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	*out = NULL;
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while ((de = readdir(d))) {
		if (!is_pid_name(de->d_name))
			continue;
		if (n == cap) {
			pid_t *a = realloc(*out, (cap = cap ? cap * 2 : 64) * sizeof(*a));
			if (!a) {
				free(*out);
				*out = NULL;
				return -1;
			}
			*out = a;
		}
		(*out)[n++] = (pid_t)strtol(de->d_name, NULL, 10);
	}
	return (ssize_t)n;
}

/* The pids of the host's /proc that descend from init (init included), into a
 * malloc'd array; -1 with errno. */
static ssize_t host_descendants(int proc_fd, pid_t init, pid_t **out)
{
	_cleanup_free_ pid_t *pid = NULL;
	_cleanup_free_ pid_t *ppid = NULL;
	_cleanup_free_ bool *in = NULL;
	ssize_t m = proc_pids(proc_fd, &pid);
	size_t n, found = 1;
	char name[24];

	if (m < 0)
		return -1;
	n = (size_t)m;
	ppid = calloc(n ? n : 1, sizeof(*ppid));
	in = calloc(n ? n : 1, sizeof(*in));
	*out = calloc(n + 1, sizeof(**out));
	if (!ppid || !in || !*out) {
		free(*out);
		*out = NULL;
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%d", (int)pid[i]);
		ppid[i] = parent_of(proc_fd, name);
	}
	(*out)[0] = init;
	/* each pass adds the children of what is in; a tree of depth k takes k passes */
	for (bool grew = true; grew;) {
		grew = false;
		for (size_t i = 0; i < n; i++) {
			if (in[i] || pid[i] == init)
				continue;
			for (size_t j = 0; j < found; j++)
				if (ppid[i] == (*out)[j]) {
					in[i] = grew = true;
					(*out)[found++] = pid[i];
					break;
				}
		}
	}
	return (ssize_t)found;
}

/* The files a sample counts whole already (tmpfs_bytes: a tmpfs's dev, with
 * ino 0; memfds_counted: a memfd's dev and ino), whose pages a process's Pss
 * would count again where it maps them. */
struct counted {
	const struct seen *tmpfs, *memfds, *memfds_last;
	_Atomic bool *stop;     /* memwatch_close asks: the rest of a long read is not waited for */
	uint64_t give_up_us;    /* a sample in the loop: it sets stop past this (0: never) */
	size_t lines;           /* smaps lines read in this sample: give_up_us is looked at
				 * every 256 of them, across processes */
};

/* With c->give_up_us, is it past?  Then sets c->stop: the sample ends. */
static bool give_up(struct counted *c)
{
	if (!c->give_up_us || monotonic_us() <= c->give_up_us)
		return false;
	atomic_store(c->stop, true);
	return true;
}

/* Is the mapping of a /proc/PID/smaps header line a shared one of a counted file? */
static bool counted_mapping(const char *line, const struct counted *c)
{
	char perms[8], path[16] = "";
	unsigned maj, min;
	unsigned long long ino;
	dev_t dev;

	if (sscanf(line, "%*x-%*x %7s %*x %x:%x %llu %15s", perms, &maj, &min, &ino, path) < 4 || perms[3] != 's')
		return false;
	dev = makedev(maj, min);
	if (seen_has(c->tmpfs, dev, 0))
		return true;
	return strncmp(path, "/memfd:", 7) == 0 &&
	       (seen_has(c->memfds, dev, (ino_t)ino) || seen_has(c->memfds_last, dev, (ino_t)ino));
}

/* The Pss of the process's mappings, less those of files counted whole (c):
 * /proc/PID/smaps, a mapping at a time.  Returns 0 or -1 with errno. */
static int pss_bytes(int fd, struct counted *c, uint64_t *bytes)
{
	FILE *f = fdopen(fd, "r");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	bool skip = false;

	if (!f) {
		close(fd);
		return -1;
	}
	while (getline(&line, &cap, f) > 0) {
		if (atomic_load_explicit(c->stop, memory_order_relaxed))
			break;
		if (c->give_up_us && ++c->lines % 256 == 0 && give_up(c))
			break;
		/* a header starts with the mapping's range, a field with its name */
		if ((line[0] >= '0' && line[0] <= '9') || (line[0] >= 'a' && line[0] <= 'f'))
			skip = counted_mapping(line, c);
		else if (!skip && strncmp(line, "Pss:", 4) == 0)
			*bytes += strtoull(line + 4, NULL, 10) * 1024;
	}
	if (ferror(f) && errno != ESRCH) {
		fclose(f);
		return -1;
	}
	fclose(f);
	return 0;
}

/* The process's memory in bytes: with precise, its Pss (a walk of its page
 * tables, pss_bytes), less the pages of files counted whole (c); else the
 * resident pages of /proc/PID/statm (the mm's counters, O(1)), which count
 * shared pages in full and so are never less.  0 for a process that is gone or a
 * zombie.  Returns 0 or -1 with errno. */
static int process_bytes(int proc_fd, pid_t pid, struct counted *precise, uint64_t *bytes)
{
	char dir[48], path[64];
	unsigned long long resident;
	int fd;

	*bytes = 0;
	/* the statm read that finds where pid's memory shows is the cheap measure */
	if (proc_mm_dir(proc_fd, pid, dir, sizeof(dir), &resident) < 0)
		return errno == ENOENT || errno == ESRCH ? 0 : -1;
	if (!precise) {
		*bytes = (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
		return 0;
	}
	snprintf(path, sizeof(path), "%s/smaps", dir);
	fd = openat(proc_fd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? 0 : -1;
	return pss_bytes(fd, precise, bytes);   /* closes fd */
}

/* Adds to *sum the allocated bytes of the memfds pid holds open as fds from
 * first_fd on, each inode once, looking at *budget of them at most.  Returns -1
 * when the budget ran out (*next_fd: where to go on), else 0. */
static int memfd_bytes(int proc_fd, pid_t pid, int first_fd, struct seen *seen, size_t *budget, uint64_t *sum,
		       int *next_fd)
{
	char dir[48], path[64];
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	int fd;

	(void)proc_mm_dir(proc_fd, pid, dir, sizeof(dir), NULL);
	snprintf(path, sizeof(path), "%s/fd", dir);
	fd = openat(proc_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((de = readdir(d))) {
		char link[64];
		struct stat st;
		ssize_t n;
		int num;
		if (!is_pid_name(de->d_name) || (num = atoi(de->d_name)) < first_fd)
			continue;
		if (*budget == 0) {
			*next_fd = num;
			return -1;
		}
		(*budget)--;
		n = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (n < 7 || memcmp(link, "/memfd:", 7) != 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, 0) == 0 && !seen_before(seen, st.st_dev, st.st_ino))
			*sum += (uint64_t)st.st_blocks * 512;
	}
	return 0;
}

static int pid_order(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

/* The memfds of the n processes of pids (sorted here), each inode once: a pass
 * over them looks at MEMFD_FDS_PER_SAMPLE open files a sample at most, and the
 * next sample goes on where it stopped, so that a container of a million open
 * files does not hold the supervisor (and the run's timeout) for seconds.  Until a
 * pass ends, the larger of its sum so far and the last whole pass's counts. */
static uint64_t memfds_counted(struct memwatch_sampler *mw, pid_t *pids, size_t n)
{
	size_t budget = MEMFD_FDS_PER_SAMPLE;

	if (!mw->pass_seen) {
		if (!(mw->pass_seen = malloc(sizeof(*mw->pass_seen))))
			return mw->memfd_last_pass;
		mw->pass_seen->n = 0;
	}
	qsort(pids, n, sizeof(*pids), pid_order);
	for (size_t i = 0; i < n; i++) {
		int next_fd = 0;
		if (pids[i] < mw->pass_pid)
			continue;
		if (memfd_bytes(mw->proc_fd, pids[i], pids[i] == mw->pass_pid ? mw->pass_fd : 0, mw->pass_seen,
				&budget, &mw->memfd_pass, &next_fd) < 0) {
			mw->pass_pid = pids[i];
			mw->pass_fd = next_fd;
			return mw->memfd_pass > mw->memfd_last_pass ? mw->memfd_pass : mw->memfd_last_pass;
		}
	}
	mw->memfd_last_pass = mw->memfd_pass;
	mw->memfd_pass = 0;
	mw->pass_pid = 0;
	mw->pass_fd = 0;
	/* its inodes stay known (counted_mapping): the next pass starts empty */
	if (!mw->last_seen && (mw->last_seen = malloc(sizeof(*mw->last_seen))))
		mw->last_seen->n = 0;
	if (mw->last_seen) {
		struct seen *t = mw->last_seen;
		mw->last_seen = mw->pass_seen;
		mw->pass_seen = t;
	}
	mw->pass_seen->n = 0;
	return mw->memfd_last_pass;
}

/* Opens the container's tmpfs mounts not open yet into mw->tmpfs_fds: /dev/shm,
 * then each MOP_TMPFS of the plan, by path in the container.  They are kept: a
 * --tmpfs inside a rw volume whose parent the payload renamed was no longer found
 * at its path, and 110 MB passed --memory 64m (breaker, session 20); so they are
 * opened as early as the container's root is (memwatch_pin).  Returns 0, or -1
 * with errno (ENOMEM). */
static int pin_tmpfs(struct memwatch_sampler *mw)
{
	if (!mw->tmpfs_fds) {
		mw->n_tmpfs = 1;
		for (size_t i = 0; mw->plan && i < mw->plan->n; i++)
			mw->n_tmpfs += mw->plan->ops[i].kind == MOP_TMPFS;
		if (!(mw->tmpfs_fds = malloc(mw->n_tmpfs * sizeof(int))))
			return -1;
		for (size_t i = 0; i < mw->n_tmpfs; i++)
			mw->tmpfs_fds[i] = -1;
	}
	if (mw->tmpfs_fds[0] < 0)
		mw->tmpfs_fds[0] = open_in_root(mw->root_fd, "/dev/shm", O_PATH | O_DIRECTORY);
	for (size_t i = 0, k = 1; mw->plan && i < mw->plan->n; i++) {
		if (mw->plan->ops[i].kind != MOP_TMPFS)
			continue;
		if (mw->tmpfs_fds[k] < 0)
			mw->tmpfs_fds[k] = open_in_root(mw->root_fd, mw->plan->ops[i].target, O_PATH | O_DIRECTORY);
		k++;
	}
	return 0;
}

/* Used bytes of the tmpfs at fd (-1: none), once per file system. */
static uint64_t tmpfs_bytes(int fd, struct seen *seen)
{
	struct statfs sfs;
	struct stat st;

	if (fd < 0 || fstatfs(fd, &sfs) < 0 || sfs.f_type != TMPFS_MAGIC || fstat(fd, &st) < 0 ||
	    seen_before(seen, st.st_dev, 0))
		return 0;
	return (uint64_t)(sfs.f_blocks - sfs.f_bfree) * (uint64_t)sfs.f_bsize;
}

/* Used bytes of the tmpfs under the container's root when that is nsrun's
 * overlay (--read-only=false): the overlay's statfs(2) is its upper layer's,
 * which is nsrun's when its size is the tmpfs's (size bytes, rounded up to
 * pages); a root on another overlay (an image on a host's overlayfs) is not
 * counted. */
static uint64_t root_upper_used(int root_fd, uint64_t size)
{
	struct statfs sfs;

	if (root_fd < 0 || fstatfs(root_fd, &sfs) < 0 || sfs.f_type != OVERLAYFS_SUPER_MAGIC ||
	    (uint64_t)sfs.f_blocks * (uint64_t)sfs.f_bsize > size + (uint64_t)sfs.f_bsize)
		return 0;
	return (uint64_t)(sfs.f_blocks - sfs.f_bfree) * (uint64_t)sfs.f_bsize;
}

/* Opens pid's root (/proc/PID/root, O_PATH) into mw->root_fd: 0 when done or
 * pid is gone (ENOENT, ESRCH: mw->root_fd stays -1), -1 with errno. */
static int open_root_of(struct memwatch_sampler *mw, int host_proc, pid_t pid)
{
	char dir[48], path[64];

	(void)proc_mm_dir(host_proc, pid, dir, sizeof(dir), NULL);  /* its leader may have exited */
	snprintf(path, sizeof(path), "%s/root", dir);
	mw->root_fd = openat(host_proc, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	/* EACCES: not dumpable (yet).  The payload is started in init's memory
	 * (exec.c), and init goes on, and says EXEC_OK, once its execve(2) has
	 * switched memory, before the exec makes that memory dumpable
	 * (begin_new_exec: exec_mmap, then set_dumpable); or it runs a file it may
	 * not read.  Tried again at the next sample. */
	return mw->root_fd < 0 && errno != ENOENT && errno != ESRCH && errno != EACCES ? -1 : 0;
}

/* The root of a child of init, through init's task/TID/children (proc(5), Linux
 * 3.5 with CONFIG_PROC_CHILDREN; readable though init is not dumpable): mw->root_fd
 * when found.  0 when done or not known here, -1 with errno. */
static int open_child_root(struct memwatch_sampler *mw, int host_proc)
{
	char path[64];
	pid_t kids[32];
	ssize_t n;

	snprintf(path, sizeof(path), "%d/task/%d", (int)mw->init, (int)mw->init);
	n = proc_children(host_proc, path, kids, sizeof(kids) / sizeof(kids[0]));
	for (ssize_t i = 0; i < n && mw->root_fd < 0; i++)
		if (open_root_of(mw, host_proc, kids[i]) < 0)
			return -1;
	return 0;
}

/* Opens the container's root (that of a child of init: init itself is not dumpable,
 * and its memory map belongs to the host's user namespace, so an unprivileged
 * caller may not follow its /proc/PID/root) and its /proc.  0 when done, 1 when no
 * child is there yet, -1 with errno. */
static int open_container(struct memwatch_sampler *mw)
{
	_cleanup_close_ int host_proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_free_ pid_t *pids = NULL;
	ssize_t n = 0;

	if (host_proc < 0)
		return -1;
	/* init's children first: one small read, where the scan below reads every
	 * process of the host */
	if (open_child_root(mw, host_proc) < 0)
		return -1;
	if (mw->root_fd < 0 && (n = proc_pids(host_proc, &pids)) < 0)
		return -1;
	/* init's children: pids are handed out in increasing order until they wrap
	 * (kernel/pid.c, alloc_pid), so the payload, forked after init, is among the
	 * few pids above init's; those are read first, the rest only when none of them
	 * is init's child.  Reading the parent of every process of the host cost a
	 * cold run one /proc/PID/stat read for each (about 140 on a CI machine). */
	for (int above = 1; above >= 0 && mw->root_fd < 0; above--) {
		for (ssize_t i = 0; i < n && mw->root_fd < 0; i++) {
			char path[64];
			if ((pids[i] > mw->init) != above || pids[i] == mw->init)
				continue;
			if (parent_of(host_proc, (snprintf(path, sizeof(path), "%d", (int)pids[i]), path)) != mw->init)
				continue;
			if (open_root_of(mw, host_proc, pids[i]) < 0)
				return -1;
		}
	}
	if (mw->root_fd < 0)
		return 1;
	if (mw->host_scan) {
		mw->proc_fd = host_proc;
		host_proc = -1;
		return 0;
	}
	mw->proc_fd = open_in_root(mw->root_fd, "/proc", O_RDONLY | O_DIRECTORY);
	if (mw->proc_fd >= 0) {
		struct statfs sfs;
		if (fstatfs(mw->proc_fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC)
			return 0;
		errno = ENOTSUP;
	}
	return -1;
}

/* One sample: the container's use in bytes, by resident set sizes (cheap); when
 * that sum passes the limit, again by proportional set sizes, which count a page
 * shared by n processes of the container (after fork(2)) once.  Returns 0 or -1
 * with errno. */
static int measure(struct memwatch_sampler *mw, uint64_t *total)
{
	_cleanup_free_ pid_t *pids = NULL;
	_cleanup_free_ struct seen *seen = malloc(sizeof(*seen));  /* not calloc: see struct seen */
	uint64_t shared = 0;
	ssize_t n;

	*total = 0;
	if (!seen)
		return -1;
	seen->n = 0;
	n = mw->host_scan ? host_descendants(mw->proc_fd, mw->init, &pids) : proc_pids(mw->proc_fd, &pids);
	if (n < 0)
		return -1;
	if (!mw->no_memfds)
		shared += memfds_counted(mw, pids, (size_t)n);
	if (mw->root_upper_bytes)
		shared += root_upper_used(mw->root_fd, mw->root_upper_bytes);
	if (!mw->host_scan) {
		if (pin_tmpfs(mw) < 0)
			return -1;
		for (size_t i = 0; i < mw->n_tmpfs; i++)
			shared += tmpfs_bytes(mw->tmpfs_fds[i], seen);
	}
	/* mapped, their pages are in a Pss too: counted once (a cgroup charges a page once) */
	struct counted counted = { .tmpfs = seen, .memfds = mw->pass_seen, .memfds_last = mw->last_seen,
				   .stop = &mw->stop, .give_up_us = mw->threaded ? 0 : mw->give_up_us };
	for (int precise = 0; precise < 2; precise++) {
		*total = shared;
		for (ssize_t i = 0; i < n && !atomic_load_explicit(&mw->stop, memory_order_relaxed); i++) {
			uint64_t b;
			/* in the loop, a process at a time too: thousands of small ones add up */
			if (give_up(&counted))
				break;
			/* the init (pid 1 inside, or init in the host's list) is nsrun's own and not
			 * readable by an unprivileged caller (see open_container): its few pages are not counted */
			bool is_init = mw->host_scan ? pids[i] == mw->init : pids[i] == 1;
			if (process_bytes(mw->proc_fd, pids[i], precise ? &counted : NULL, &b) < 0) {
				if (is_init)
					continue;
				return -1;
			}
			*total += b;
		}
		if (*total <= mw->limit_bytes)
			break;
		if (!precise)
			mw->precise_samples++;
	}
	return 0;
}

bool memwatch_pin(struct memwatch_sampler *mw)
{
	int r = mw->root_fd < 0 ? open_container(mw) : 0;

	if (r < 0) {
		/* the first sample opens them again, and says why it cannot */
		if (mw->root_fd >= 0)
			close(mw->root_fd);
		if (mw->proc_fd >= 0)
			close(mw->proc_fd);
		mw->root_fd = mw->proc_fd = -1;
		return false;
	}
	if (r > 0)
		return false;
	if (!mw->host_scan)
		(void)pin_tmpfs(mw);    /* ENOMEM: the sample says so */
	return true;
}

int memwatch_sample(struct memwatch_sampler *mw, uint64_t now_us, struct nsrun_error *err)
{
	uint64_t total = 0, headroom, wait_us, cost_us, rate;
	int r;

	if (mw->root_fd < 0) {
		r = open_container(mw);
		if (r < 0)
			return error_set(err, errno, "--memory: open the container's /proc to measure its memory");
		if (r > 0) {
			/* the payload is init's child from its exec on: not finding it for
			 * seconds means this /proc does not show the container, and a limit
			 * that cannot be measured must not pass for one that holds */
			if (now_us > mw->armed_us && now_us - mw->armed_us > NOT_FOUND_LIMIT_US)
				return error_set(err, ESRCH, "--memory: the container's processes cannot be found "
						 "(or may not be read: a payload file it may not read) in /proc to "
						 "measure their memory");
			mw->next_us = now_us + MIN_INTERVAL_US;
			return 0;
		}
	}
	if (measure(mw, &total) < 0)
		return error_set(err, errno, "--memory: measure the container's memory");
	/* stopped part way (closed, or given up): a part is no verdict, the resident
	 * sizes of some processes least of all */
	if (atomic_load(&mw->stop))
		return 0;
	cost_us = monotonic_us() - now_us;
	mw->samples++;
	mw->cost_us += cost_us;
	if (total > mw->peak_bytes)
		mw->peak_bytes = total;
	if (total > mw->limit_bytes)
		return 1;
	/* the rate the use grows at: twice the last one seen, at least the assumed one */
	rate = ASSUMED_RATE_BYTES_PER_S / 1000000;
	if (mw->last_sample_us && now_us > mw->last_sample_us && total > mw->last_bytes &&
	    2 * (total - mw->last_bytes) / (now_us - mw->last_sample_us) > rate)
		rate = 2 * (total - mw->last_bytes) / (now_us - mw->last_sample_us);
	mw->last_bytes = total;
	mw->last_sample_us = now_us;
	headroom = mw->limit_bytes - total;
	wait_us = headroom / rate;
	if (wait_us < MIN_INTERVAL_US)
		wait_us = MIN_INTERVAL_US;
	if (wait_us > MAX_INTERVAL_US)
		wait_us = MAX_INTERVAL_US;
	/* from 5 ms after the exec, at most twice the last interval: a payload that writes
	 * from its first instruction is seen early, and its rate with it */
	if (wait_us > 2 * mw->interval_us)
		wait_us = 2 * mw->interval_us;
	/* about a tenth of a CPU at most: many processes, or page tables read, space the
	 * samples, up to a second apart */
	if (wait_us < COST_FACTOR * cost_us)
		wait_us = COST_FACTOR * cost_us < MAX_COSTLY_INTERVAL_US ? COST_FACTOR * cost_us : MAX_COSTLY_INTERVAL_US;
	mw->interval_us = wait_us;
	mw->next_us = now_us + wait_us;
	return 0;
}
