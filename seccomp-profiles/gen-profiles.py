#!/usr/bin/env python3
"""Generates nsrun's seccomp profiles, default.json and strict.json (Docker/OCI format).

The JSON files are the output of this script: edit the lists here, never the JSON.

    python3 seccomp-profiles/gen-profiles.py            # rewrite both files next to this script
    python3 seccomp-profiles/gen-profiles.py OUTDIR     # write them into OUTDIR instead
    python3 seccomp-profiles/gen-profiles.py --check    # exit 1 if the files are not what it makes

Python 3 standard library only; the output is byte-for-byte reproducible.

Errors: a call the profile does not name (newer than the profile or than
libseccomp, or no syscall at all, e.g. syscall(1000)) fails with ENOSYS, the
default action, so libc and language runtimes fall back to older calls
(clone3 -> clone, faccessat2, statx, close_range...).  The attack surface
denied on purpose (DENIED below, clone with a CLONE_NEW* flag, other personality
values, ioctl TIOCSTI/TIOCLINUX, disallowed socket families, set-id bits in a
mode (setid_rules), and in strict.json fork/vfork/clone without CLONE_THREAD)
fails with EPERM through explicit rules, and so do calls that need a privilege
the payload never holds (PRIVILEGED), as the kernel would answer them.

How runtime/seccomp.c compiles a rule, which shapes the rules below: conditions
on distinct arguments are ANDed; several conditions on the same argument become
separate rules (ORed); a rule whose action is the default action is skipped.
libseccomp cannot combine an unconditional rule with conditional ones for the
same call, so "allow ioctl except X" is written as a set of disjoint masked
compares that together cover every other value.
"""
import functools
import json
import os
import sys

EPERM, ENOSYS = 1, 38
ALLOW_COMMON = """
read write readv writev pread64 pwrite64 preadv pwritev preadv2 pwritev2 lseek
open openat openat2 creat close close_range dup dup2 dup3 fcntl flock
stat fstat lstat newfstatat statx statfs fstatfs access faccessat faccessat2
getdents getdents64 getcwd chdir fchdir
mkdir mkdirat rmdir rename renameat renameat2 link linkat unlink unlinkat
symlink symlinkat readlink readlinkat chmod fchmod fchmodat fchmodat2
chown fchown lchown fchownat umask mknod mknodat truncate ftruncate fallocate
utime utimes utimensat futimesat
fsync fdatasync sync syncfs sync_file_range readahead fadvise64
sendfile splice tee vmsplice copy_file_range
setxattr lsetxattr fsetxattr getxattr lgetxattr fgetxattr
listxattr llistxattr flistxattr removexattr lremovexattr fremovexattr
pipe pipe2 memfd_create
mmap munmap mprotect mremap msync mincore madvise brk remap_file_pages
mlock mlock2 munlock mlockall munlockall membarrier
pkey_mprotect pkey_alloc pkey_free get_mempolicy set_mempolicy mbind
map_shadow_stack mseal cachestat
shmget shmat shmdt shmctl semget semop semtimedop semctl
msgget msgsnd msgrcv msgctl
mq_open mq_unlink mq_timedsend mq_timedreceive mq_notify mq_getsetattr
futex futex_waitv futex_wake futex_wait futex_requeue
set_robust_list get_robust_list set_tid_address rseq
execve execveat exit exit_group wait4 waitid
kill tkill tgkill pidfd_open pidfd_send_signal
rt_sigaction rt_sigprocmask rt_sigreturn rt_sigpending rt_sigtimedwait
rt_sigqueueinfo rt_tgsigqueueinfo rt_sigsuspend sigaltstack pause restart_syscall
signalfd signalfd4 eventfd eventfd2
timerfd_create timerfd_settime timerfd_gettime
timer_create timer_settime timer_gettime timer_getoverrun timer_delete
getitimer setitimer alarm nanosleep clock_nanosleep clock_gettime clock_getres
gettimeofday time times
poll ppoll select pselect6 epoll_create epoll_create1 epoll_ctl epoll_wait
epoll_pwait epoll_pwait2
inotify_init inotify_init1 inotify_add_watch inotify_rm_watch
io_setup io_destroy io_getevents io_pgetevents io_submit io_cancel
connect accept accept4 bind listen shutdown getsockname getpeername
sendto recvfrom sendmsg recvmsg sendmmsg recvmmsg setsockopt getsockopt socketpair
getpid getppid gettid getuid geteuid getgid getegid getresuid getresgid
getgroups getpgid getpgrp getsid setpgid setsid
setuid setgid setreuid setregid setresuid setresgid setfsuid setfsgid setgroups
capget capset prctl arch_prctl seccomp
getrlimit setrlimit prlimit64 getrusage getpriority setpriority
sched_yield sched_setparam sched_getparam sched_setscheduler sched_getscheduler
sched_get_priority_max sched_get_priority_min sched_rr_get_interval
sched_setaffinity sched_getaffinity sched_setattr sched_getattr getcpu
uname sysinfo getrandom
landlock_create_ruleset landlock_add_rule landlock_restrict_self
""".split()
PROCESS = "fork vfork".split()
assert len(set(ALLOW_COMMON)) == len(ALLOW_COMMON), [n for n in ALLOW_COMMON if ALLOW_COMMON.count(n) > 1]

CLONE_NEW = ((0x00020000, "CLONE_NEWNS"), (0x02000000, "CLONE_NEWCGROUP"),
             (0x04000000, "CLONE_NEWUTS"), (0x08000000, "CLONE_NEWIPC"),
             (0x10000000, "CLONE_NEWUSER"), (0x20000000, "CLONE_NEWPID"),
             (0x40000000, "CLONE_NEWNET"))   # CLONE_NEWTIME (0x80) is clone3/unshare only
CLONE_NEW_MASK = 0
for _bit, _ in CLONE_NEW:
    CLONE_NEW_MASK |= _bit
assert CLONE_NEW_MASK == 0x7E020000
CLONE_THREAD = 0x00010000
U64 = (1 << 64) - 1

def rule(names, action="SCMP_ACT_ALLOW", args=None, comment=None, errno=None):
    r = {}
    if comment: r["comment"] = comment
    r["names"] = names
    r["action"] = action
    if errno is not None: r["errnoRet"] = errno
    if args: r["args"] = args
    return r

def commented(r, comment):
    """r with its "comment" first, as rule() writes it."""
    return dict([("comment", comment)] + [(k, v) for k, v in r.items() if k != "comment"])

def deny(names, args=None, comment=None):
    """An explicit EPERM rule: differs from the ENOSYS default, so it is compiled."""
    return rule(names, "SCMP_ACT_ERRNO", args, comment, errno=EPERM)

def arg(index, op, value, value2=0):
    a = {"index": index, "value": value, "op": op}
    if op == "SCMP_CMP_MASKED_EQ": a["valueTwo"] = value2
    return a

# ---- a tiny model of how the rules match, to check the disjoint covers below ----

def arg_matches(a, v):
    op = a["op"]
    if op == "SCMP_CMP_MASKED_EQ": return (v & a["value"]) == a["valueTwo"]
    if op == "SCMP_CMP_EQ": return v == a["value"]
    if op == "SCMP_CMP_NE": return v != a["value"]
    if op == "SCMP_CMP_GT": return v > a["value"]
    if op == "SCMP_CMP_GE": return v >= a["value"]
    if op == "SCMP_CMP_LT": return v < a["value"]
    if op == "SCMP_CMP_LE": return v <= a["value"]
    raise ValueError(op)

def verdict(rules, name, index, v):
    """The set of actions of the rules (one argument compare each) that match v."""
    out = set()
    for r in rules:
        if name in r["names"]:
            assert len(r["args"]) == 1 and r["args"][0]["index"] == index
            if arg_matches(r["args"][0], v):
                out.add((r["action"], r.get("errnoRet")))
    return out

ALLOW, DENY = {("SCMP_ACT_ALLOW", None)}, {("SCMP_ACT_ERRNO", EPERM)}

def check_cover(rules, name, index, values, allowed):
    """Every value gets exactly one verdict: allowed -> ALLOW, else EPERM (never the default)."""
    for v in values:
        got = verdict(rules, name, index, v)
        want = ALLOW if allowed(v) else DENY
        assert got == want, (name, hex(v), got)

@functools.lru_cache(maxsize=None)
def sample_values(bits=64):
    vals = {0, (1 << bits) - 1, (1 << 32) - 1}
    for a in range(bits):
        vals.add(1 << a)
        vals.add(((1 << bits) - 1) ^ (1 << a))
        for b in range(a + 1, bits):
            vals.add((1 << a) | (1 << b))
    vals.update(range(0, 1 << 12))
    x = 0x2545F4914F6CDD1D          # xorshift: fixed pseudo-random values
    for _ in range(4000):
        x ^= (x << 13) & U64; x ^= x >> 7; x ^= (x << 17) & U64
        vals.add(x); vals.add(x & 0xffffffff); vals.add(x & 0x7ffff)
    return tuple(sorted(vals))

# ---- rules ----

def ioctl_rules():
    # allow ioctl unless the low 32 bits of the request (the kernel's
    # unsigned int cmd) are TIOCSTI 0x5412 or TIOCLINUX 0x541C.  One masked
    # compare per rule (libseccomp takes one condition per argument).
    a, b = 0x5412, 0x541C
    out = []
    for k in range(32):
        bit = 1 << k
        if (a & bit) == (b & bit):
            out.append(rule(["ioctl"], args=[arg(1, "SCMP_CMP_MASKED_EQ", bit, (~a) & bit)]))
    # bits 1..3 differ (a: 1,0,0  b: 0,1,1); cover the other six patterns
    for mask, val in ((0x6, 0x6), (0x6, 0x0), (0xC, 0x8), (0xC, 0x4)):
        out.append(rule(["ioctl"], args=[arg(1, "SCMP_CMP_MASKED_EQ", mask, val)]))
    out[0] = commented(out[0], "ioctl: any request except TIOCSTI (0x5412) and TIOCLINUX (0x541C), "
        "compared on the low 32 bits the kernel uses; each of these rules allows the requests "
        "that differ from both in one bit pattern, so together they allow every other request")
    out.append(deny(["ioctl"], [arg(1, "SCMP_CMP_MASKED_EQ", 0xffffffff, a)],
        comment="ioctl TIOCSTI (0x5412, low 32 bits): EPERM, it pushes input into a terminal"))
    out.append(deny(["ioctl"], [arg(1, "SCMP_CMP_MASKED_EQ", 0xffffffff, b)],
        comment="ioctl TIOCLINUX (0x541C, low 32 bits): EPERM, it can paste into a virtual console"))
    check_cover(out, "ioctl", 1, list(sample_values()) + [a, b, a | 1 << 40, b | 1 << 63],
                lambda v: (v & 0xffffffff) not in (a, b))
    return out

PERSONALITY = ((0, "PER_LINUX"), (0x20000, "UNAME26"),
               (0x40000, "ADDR_NO_RANDOMIZE, used by setarch -R"), (0xffffffff, "query"))

def personality_rules():
    out = []
    for v, what in PERSONALITY:
        out.append(rule(["personality"], args=[arg(0, "SCMP_CMP_EQ", v)], comment="personality %s" % what))
    # EPERM for every other value.  Over the 32 bits the kernel reads, a value
    # other than 0 and 0xffffffff has a bit i set whose next bit (cyclically)
    # is clear; one rule per such i, except i = 17 and 18, which would match
    # UNAME26 (bit 17) and ADDR_NO_RANDOMIZE (bit 18) themselves.  What those
    # two leave out besides the allowed values are runs of ones ending at bit
    # 17 or 18 of length 2 or more: two more rules.  Values above 32 bits: GT.
    assert [v for v, _ in PERSONALITY] == [0, 1 << 17, 1 << 18, 0xffffffff]
    den = []
    for i in range(32):
        if i in (17, 18):
            continue
        j = (i + 1) % 32
        den.append(deny(["personality"], [arg(0, "SCMP_CMP_MASKED_EQ", (1 << i) | (1 << j), 1 << i)]))
    den.append(deny(["personality"], [arg(0, "SCMP_CMP_MASKED_EQ", 0x70000, 0x30000)]))
    den.append(deny(["personality"], [arg(0, "SCMP_CMP_MASKED_EQ", 0xE0000, 0x60000)]))
    den.append(deny(["personality"], [arg(0, "SCMP_CMP_GT", 0xffffffff)]))
    den[0] = commented(den[0], "personality: any other value is EPERM; these rules together match every "
        "value but the four allowed ones (a value other than 0 and 0xffffffff has a set bit followed "
        "by a clear one), and values wider than 32 bits")
    out += den
    allowed = {v for v, _ in PERSONALITY}
    check_cover(out, "personality", 0, list(sample_values()) + [0x60000, 0x30000, 0xfffdffff, 0xfffbffff],
                lambda v: v in allowed)
    return out

def family_rules(name, families):
    """socket/socketpair: allow the listed families, EPERM for every other value
    (aligned blocks below the largest family, GT above it)."""
    out = [rule([name], args=[arg(0, "SCMP_CMP_EQ", v)], comment="%s %s" % (name, what))
           for v, what in families]
    allowed = {v for v, _ in families}
    top = max(allowed)
    v = 0
    den = []
    while v < top:
        if v in allowed:
            v += 1
            continue
        size = 1
        while v % (size * 2) == 0 and all(x not in allowed for x in range(v, v + size * 2)) and v + size * 2 <= top:
            size *= 2
        if size == 1:
            den.append(deny([name], [arg(0, "SCMP_CMP_EQ", v)]))
        else:
            den.append(deny([name], [arg(0, "SCMP_CMP_MASKED_EQ", U64 ^ (size - 1), v)]))
        v += size
    den.append(deny([name], [arg(0, "SCMP_CMP_GT", top)]))
    den[0] = commented(den[0], "%s: EPERM for every other address family" % name)
    out += den
    check_cover(out, name, 0, list(sample_values()) + list(range(0, 256)), lambda x: x in allowed)
    return out

def clone_rules(strict):
    if strict:
        out = [rule(["clone"], args=[arg(0, "SCMP_CMP_MASKED_EQ", CLONE_NEW_MASK | CLONE_THREAD, CLONE_THREAD)],
                    comment="clone: threads only (CLONE_THREAD set, no CLONE_NEW* flag): no new processes"),
               deny(["clone"], [arg(0, "SCMP_CMP_MASKED_EQ", CLONE_THREAD, 0)],
                    comment="clone without CLONE_THREAD (a new process): EPERM")]
        allowed = lambda v: (v & (CLONE_NEW_MASK | CLONE_THREAD)) == CLONE_THREAD
    else:
        out = [rule(["clone"], args=[arg(0, "SCMP_CMP_MASKED_EQ", CLONE_NEW_MASK, 0)],
                    comment="clone: threads and processes, but no CLONE_NEW* flag (no new namespaces)")]
        allowed = lambda v: (v & CLONE_NEW_MASK) == 0
    for bit, flag in CLONE_NEW:
        out.append(deny(["clone"], [arg(0, "SCMP_CMP_MASKED_EQ", bit, bit)],
                        comment="clone with %s: EPERM" % flag))
    # overlapping EPERM rules are fine; what matters is that no value gets both verdicts
    for v in sample_values():
        got = verdict(out, "clone", 0, v)
        assert got == (ALLOW if allowed(v) else DENY), (hex(v), got)
    return out

DENIED = ("unshare setns mount umount2 fsopen fsconfig fsmount fspick move_mount open_tree "
    "mount_setattr pivot_root chroot ptrace process_vm_readv process_vm_writev kcmp pidfd_getfd "
    "keyctl add_key request_key bpf perf_event_open userfaultfd io_uring_setup io_uring_enter "
    "io_uring_register kexec_load kexec_file_load init_module finit_module delete_module "
    "open_by_handle_at name_to_handle_at reboot swapon swapoff acct clock_settime settimeofday "
    "adjtimex clock_adjtime syslog quotactl quotactl_fd vhangup iopl ioperm "
    "ustat sysfs modify_ldt").split()

# Calls that need a privilege the payload never holds (CAP_SYS_ADMIN over the
# container's namespaces): the kernel answers an unprivileged caller EPERM, and
# so does the profile (programs test for EPERM: CPython's test_sethostname).
PRIVILEGED = "sethostname setdomainname fanotify_init fanotify_mark".split()

# Calls removed from Linux or left out of most builds: no rule, the default
# ENOSYS is what such a kernel answers (tests/unit/test_seccomp_profile.c keeps
# the list with the reasons).
REMOVED = "nfsservctl create_module get_kernel_syms query_module uselib _sysctl lookup_dcookie".split()

# Set-user-ID and set-group-ID bits: a file made through a rw volume outlives
# the run with the caller's uid, so no call may set them (Nix's build sandbox
# denies them the same way).  The mode argument of each call that sets a mode
# or creates a file with one, grouped by its index; EPERM when S_ISUID or
# S_ISGID is in it.  mkdir/mkdirat are not here: the kernel drops both bits
# from their mode (vfs_mkdir keeps only S_IRWXUGO|S_ISVTX).
S_ISUID, S_ISGID = 0o4000, 0o2000
MODE_ARG = ((1, ["chmod", "creat", "fchmod", "mknod"]),
            (2, ["fchmodat", "fchmodat2", "mknodat", "open"]),
            (3, ["openat"]))
MODE_CALLS = [n for _, names in MODE_ARG for n in names]

def setid_rules():
    out = []
    for index, names in MODE_ARG:
        rs = [rule(names, args=[arg(index, "SCMP_CMP_MASKED_EQ", S_ISUID | S_ISGID, 0)],
                   comment="%s: a mode (argument %d) without S_ISUID and S_ISGID" % ("/".join(names), index)),
              deny(names, [arg(index, "SCMP_CMP_MASKED_EQ", S_ISUID, S_ISUID)],
                   comment="%s with S_ISUID in the mode: EPERM, no set-user-ID file leaves a container"
                   % "/".join(names)),
              deny(names, [arg(index, "SCMP_CMP_MASKED_EQ", S_ISGID, S_ISGID)],
                   comment="%s with S_ISGID in the mode: EPERM" % "/".join(names))]
        for n in names:
            check_cover(rs, n, index, sample_values(), lambda v: (v & (S_ISUID | S_ISGID)) == 0)
        out += rs
    return out

def profile(strict):
    rules = []
    allow = [n for n in ALLOW_COMMON if n not in MODE_CALLS] + ([] if strict else PROCESS)
    if strict:
        allow = [n for n in allow if n != "socketpair"]
    rules.append(rule(sorted(allow), comment="ordinary process, file, memory, ipc, signal, time and socket calls"))
    rules.extend(personality_rules())
    rules.extend(clone_rules(strict))
    if strict:
        rules.append(rule(["socket"], args=[arg(0, "SCMP_CMP_EQ", 1)], comment="socket AF_UNIX"))
        rules.append(deny(["socket"], [arg(0, "SCMP_CMP_NE", 1)], comment="socket: EPERM for other families"))
        rules.append(rule(["socketpair"], args=[arg(0, "SCMP_CMP_EQ", 1)], comment="socketpair AF_UNIX"))
        rules.append(deny(["socketpair"], [arg(0, "SCMP_CMP_NE", 1)], comment="socketpair: EPERM for other families"))
    else:
        rules.extend(family_rules("socket", ((1, "AF_UNIX"), (2, "AF_INET"), (10, "AF_INET6"),
                                             (16, "AF_NETLINK, used by getaddrinfo"))))
    rules.append(rule(["clone3"], "SCMP_ACT_ERRNO", errno=ENOSYS,
        comment="clone3: ENOSYS (also the default), its flags are in memory a filter cannot read; "
                "glibc then falls back to clone"))
    rules.extend(ioctl_rules())
    rules.extend(setid_rules())
    rules.append(deny(sorted(DENIED), comment="kernel attack surface denied on purpose: EPERM"))
    rules.append(deny(PRIVILEGED, comment="calls that need a privilege the payload does not hold: "
                      "EPERM, what the kernel answers an unprivileged caller"))
    if strict:
        rules.append(deny(PROCESS, comment="strict: no new processes: EPERM"))
    if strict:
        comment = ("nsrun strict profile: for pure computation. An allowlist like nsrun's default "
            "profile, but no new processes (fork/vfork and clone without CLONE_THREAD fail with "
            "EPERM) and sockets only AF_UNIX (other families EPERM). ")
    else:
        comment = ("nsrun default profile: an allowlist for running untrusted programs (CPython, "
            "Node.js, sh/bash/coreutils: threads, processes, AF_UNIX/AF_INET/AF_INET6/AF_NETLINK "
            "sockets, timers, polling; other socket families EPERM). ")
    comment += ("A call the profile does not name (newer than the profile, removed from Linux, or "
        "no syscall at all) fails with ENOSYS, so libc and runtimes fall back to older calls. The "
        "attack surface denied on purpose fails with EPERM: %s, clone with any CLONE_NEW* flag, "
        "personality other than 0/UNAME26/ADDR_NO_RANDOMIZE/query, ioctl TIOCSTI and TIOCLINUX, "
        "a set-user-ID or set-group-ID bit in the mode of %s. Calls that need a privilege the "
        "payload does not hold fail with EPERM as the kernel would answer: %s. clone3 returns ENOSYS "
        "(glibc falls back to clone, whose flags are checked). Other architectures than those "
        "listed (i386 int 0x80, x32 on x86-64) kill the process."
        % (" ".join(DENIED), "/".join(MODE_CALLS), " ".join(PRIVILEGED)))
    p = {"comment": comment, "defaultAction": "SCMP_ACT_ERRNO", "defaultErrnoRet": ENOSYS,
         "architectures": ["SCMP_ARCH_X86_64"],
         "archMap": [{"architecture": "SCMP_ARCH_AARCH64", "subArchitectures": []}],
         "syscalls": rules}
    for n in DENIED + PRIVILEGED + REMOVED + ["clone3"] + (PROCESS if strict else []):
        assert n not in rules[0]["names"], n
    for n in ("ioctl", "personality", "clone", "socket") + tuple(MODE_CALLS) + (("socketpair",) if strict else ()):
        assert n not in rules[0]["names"], n
    return p

def dump(p):
    out = ["{"]
    for k in ("comment", "defaultAction", "defaultErrnoRet", "architectures", "archMap"):
        out.append("  %s: %s," % (json.dumps(k), json.dumps(p[k])))
    out.append('  "syscalls": [')
    rs = []
    for r in p["syscalls"]:
        if len(r["names"]) > 4:
            lines = []
            cur = []
            for n in r["names"]:
                cur.append(json.dumps(n))
                if len(", ".join(cur)) > 80:
                    lines.append(", ".join(cur)); cur = []
            if cur: lines.append(", ".join(cur))
            body = ['    {', '      "comment": %s,' % json.dumps(r["comment"]), '      "names": [']
            body.append(",\n".join("        " + l for l in lines))
            body.append('      ],')
            rest = {k: v for k, v in r.items() if k not in ("comment", "names")}
            body.append(",\n".join('      %s: %s' % (json.dumps(k), json.dumps(v)) for k, v in rest.items()))
            body.append('    }')
            rs.append("\n".join(body))
        else:
            rs.append("    " + json.dumps(r))
    out.append(",\n".join(rs))
    out.append("  ]")
    out.append("}")
    return "\n".join(out) + "\n"

def main(argv):
    check = "--check" in argv
    rest = [a for a in argv if a != "--check"]
    if len(rest) > 1 or any(a.startswith("-") for a in rest):
        sys.exit("usage: gen-profiles.py [--check] [OUTDIR]")
    outdir = rest[0] if rest else os.path.dirname(os.path.abspath(__file__))
    stale = []
    for strict, fn in ((False, "default.json"), (True, "strict.json")):
        text = dump(profile(strict))
        path = os.path.join(outdir, fn)
        if check:
            try:
                with open(path) as f:
                    same = f.read() == text
            except FileNotFoundError:
                same = False
            if not same:
                stale.append(path)
        else:
            with open(path, "w") as f:
                f.write(text)
    if stale:
        sys.exit("not what gen-profiles.py generates: " + " ".join(stale))

if __name__ == "__main__":
    main(sys.argv[1:])
