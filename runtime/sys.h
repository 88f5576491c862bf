/* sys.h - side-effecting helpers that know nothing about a run. */
#ifndef NSRUN_SYS_H
#define NSRUN_SYS_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct nsrun_error;

/* Reads at most max bytes of path (or of dirfd-relative path when dirfd >= 0 and
 * path is relative) into a NUL-terminated malloc'd *out; *len_out gets the length
 * if not NULL.  Returns 0, or -1 with errno (EFBIG when larger than max). */
int read_file(const char *path, size_t max, char **out, size_t *len_out);

/* As read_file, from fd (a pipe or stdin too) to its end. */
int read_fd(int fd, size_t max, char **out, size_t *len_out);

/* Writes the whole string s to path (O_WRONLY|O_CLOEXEC, no create).
 * Returns 0, or -1 with errno from open(2)/write(2). */
int write_file(const char *path, const char *s);

/* As write_file, on dir/file (a cgroup's, a /proc directory's).  Returns 0, or -1
 * with errno (ENAMETOOLONG when dir/file is past PATH_MAX). */
int write_file_in(const char *dir, const char *file, const char *s);

/* As read_file, on dir/file, at most 1 MiB: the text (malloc'd, NUL-terminated),
 * or NULL with errno. */
char *read_file_in(const char *dir, const char *file);

/* Fields first .. first+n-1 of the stat file of a process directory: dir ("N" or
 * "self" under dir_fd, a /proc's fd; or "/proc/N" with AT_FDCWD), numbered as
 * proc(5) numbers them (4: ppid, 22: starttime, 48-49: arg_start, arg_end), each
 * an unsigned number after the ")" that ends comm (which may hold spaces and
 * parentheses).  first >= 4.  Returns 0, or -1 with errno (of openat(2),
 * read(2); EINVAL when the file has no such fields). */
int proc_stat_fields(int dir_fd, const char *dir, int first, int n, unsigned long long *out);

/* The children of a thread: up to max pids of the "children" file of task (a
 * task directory: "N/task/N" under dir_fd, a /proc's fd; or "/proc/thread-self"
 * with AT_FDCWD), numbered as that /proc numbers them (proc(5), Linux 3.5 with
 * CONFIG_PROC_CHILDREN; one read, readable where the thread is not dumpable).
 * Returns how many, or -1 with errno (of openat(2), read(2)). */
ssize_t proc_children(int dir_fd, const char *task, pid_t *pids, size_t max);

/* write(2) of all len bytes, retrying on EINTR and short writes. Returns 0 or -1. */
int write_all(int fd, const void *buf, size_t len);

/* Whether errno e is what a kernel without a call (ENOSYS) or an outer
 * sandbox's seccomp filter or security module (EPERM, EACCES: the errnos
 * filters answer with) says, where the kernel itself would not: the caller then
 * takes its fallback for that call.  seccomp(2) SECCOMP_RET_ERRNO. */
bool sys_call_refused(int e);

/* read(2) of exactly len bytes, or fewer at EOF, retrying on EINTR and short
 * reads.  Returns the count, or -1 with errno. */
ssize_t read_full(int fd, void *buf, size_t len);

/* Opens path inside the tree at root_fd as if root_fd were "/": symlinks and ".."
 * never lead out of it (openat2(2) RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS; where
 * the kernel or a tool such as valgrind lacks openat2, the same walk is done one
 * component at a time with O_NOFOLLOW, and so it is where a rename or mount on the
 * host keeps racing a ".." of the path: openat2's EAGAIN).  flags are open(2)
 * flags (O_CLOEXEC is added); the last component's symlink is followed unless
 * flags has O_NOFOLLOW.
 * Returns an fd, or -1 with errno (ELOOP after 40 links). */
int open_in_root(int root_fd, const char *path, int flags);

/* As open_in_root, but any symlink on the way is refused with ELOOP
 * (RESOLVE_NO_SYMLINKS): for paths inside a volume, whose links a payload wrote. */
int open_in_root_nofollow(int root_fd, const char *path, int flags);

/* "/proc/self/fd/N" for fd into buf (size >= 32). */
void fd_path(char *buf, size_t len, int fd);

/* In a forked child: closes every fd above 2 except those in keep (n of them, -1
 * entries ignored; keep is sorted in place), with close_range(2), or close(2) of
 * each fd below RLIMIT_NOFILE's hard limit where close_range fails (a kernel
 * before 5.9: ENOSYS; a seccomp filter that denies it). */
void close_fds_except(int *keep, size_t n);

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* close_range(2) of fds lo..hi (hi ~0U: all from lo), flags 0 or
 * CLOSE_RANGE_CLOEXEC (mark them close-on-exec instead).  Where the kernel has
 * no close_range (before 5.9: ENOSYS), no CLOEXEC flag (before 5.11: EINVAL) or a
 * filter denies it: close(2) or fcntl(2) F_SETFD of each fd up to the most the
 * process may hold (RLIMIT_NOFILE's hard limit, at most fs.nr_open's default,
 * 1048576).  Async-signal-safe: for a forked child. */
void close_fds_range(unsigned lo, unsigned hi, unsigned flags);

/* Sends fd with SCM_RIGHTS (unix(7)) over a new connection to the AF_UNIX
 * stream socket at path, "/dev/ptmx" as the data: runc's --console-socket
 * protocol for a terminal's master.  Returns 0, or -1 with errno
 * (ENAMETOOLONG, or of socket(2), connect(2), sendmsg(2)). */
int send_console_fd(const char *path, int fd);
/* Whether glibc can make a thread or a posix_spawn(3) child here: both call
 * clone3(2) first and fall back to clone(2) only when it fails with ENOSYS, so an
 * outer seccomp filter that kills clone3 (SECCOMP_RET_KILL_*, SIGSYS) ended nsrun
 * with exit 159 and no word, and one that refuses it with another errno failed
 * them.  Under no filter (prctl(2) PR_GET_SECCOMP 0) true at once; under one, a
 * child makes the call as glibc does (a struct clone_args of 88 bytes, at NULL
 * here: EFAULT where it is let through) and sends back what it returned; it is
 * not dumpable and has RLIMIT_CORE 0, so a death by SIGSYS leaves no core file.
 * Any answer but EFAULT or ENOSYS is "not usable": another errno (4095 at most,
 * seccomp(2)), or 0 from a filter's errnoRet 0, which glibc would take for the
 * child's return.  The answer is kept for the process, whose filters can only be
 * added to (seccomp(2)).  With why (may be NULL): the cause when false, as "kills
 * clone3(2) (SIGSYS)" or "refuses clone3(2) (Operation not permitted)". */
bool sys_clone3_usable(char *why, size_t why_len);
/* Whether an outer seccomp filter kills clone(2), with which glibc's fork(3)
 * and nsrun make every process: nsrun would die of it at its first fork with
 * no word (exit 159).  Under no filter 0 at once; under one, a child made by
 * the raw fork(2) syscall calls clone with flags it refuses (EINVAL).  Returns
 * -1 with why (the cause and its fix) when SIGSYS killed it, else 0 (not
 * killed, or not known: no fork(2) syscall on this architecture). */
int sys_clone_killed(struct nsrun_error *why);
/* posix_spawn(3) (posix_spawnp with search: a PATH search) of argv with env
 * (NULL: environ) and fds 0-2 from stdio (stdio[0] -1: /dev/null; stdio[1] or [2]
 * -1: ours) and no other fd (posix_spawn_file_actions_addclosefrom_np), the
 * signal mask empty and SIGPIPE, SIGTERM, SIGINT and SIGHUP at their defaults: nsrun api blocks the signals that end it and ignores SIGPIPE, and a
 * child must inherit neither (nsrun stop's SIGTERM would never reach it).
 * Where sys_clone3_usable says no, the same by fork(2) and execve(2).
 * Returns 0 with *pid, or -1 (errno). */
int spawn_child(pid_t *pid, const char *path, bool search, char *const argv[], char *const env[],
		const int stdio[3]);
/* As spawn_child, and the n_keep fds in keep (close-on-exec here) passed on at
 * their numbers; fds below the highest kept one reach the child unless they are
 * close-on-exec (nsrun opens every fd so). */
int spawn_child_keep(pid_t *pid, const char *path, bool search, char *const argv[], char *const env[],
		     const int stdio[3], const int *keep, size_t n_keep);

/* Sets (on) or clears O_NONBLOCK of fd's open file description (fcntl(2)
 * F_GETFL, F_SETFL).  Returns 0 or -1 (errno). */
int fd_set_nonblock(int fd, bool on);

/* CLOCK_MONOTONIC (clock_gettime(2)) in microseconds: for deadlines and durations. */
uint64_t monotonic_us(void);

/* The entry under proc_fd (a /proc) that shows pid's memory, files and root:
 * "PID" itself or, where the thread-group leader has exited while other
 * threads run on (a zombie leader has no mm, fs or files: its statm reads 0,
 * its smaps and fd are empty, its root is ENOENT), "PID/task/TID" of one of
 * them, into dir (len bytes); with resident (may be NULL), that entry's
 * resident pages (statm's second field, read on the way: 0 where no thread has
 * memory).  A payload that ended its main thread with SYS_exit hid 1.5 GB from
 * the memory measure (breaker, session 20).  Returns 0, or -1 with errno where
 * PID/statm cannot be read (dir is then "PID").  proc(5), /proc/pid/task. */
int proc_mm_dir(int proc_fd, pid_t pid, char *dir, size_t len, unsigned long long *resident);

#endif
