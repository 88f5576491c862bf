# pool_zygote.py - the zygote of `nsrun pool` (docs/pool.md), built into nsrun.
#
# It runs as the payload of the pool's container (made by the ordinary run path
# with --allow-nested), imports the preloaded modules once, and then only forks:
# it never reads or runs a request's code.  Each slot is
#   S  (zygote's child) unshare(user, mount, pid, net, ipc, uts): fresh /tmp and
#      /dev/shm, lo up, the channel hidden; forks R and reports its status
#   R  pid 1 of the slot's pid namespace: a fresh /proc with the cold run's masks;
#      tells nsrun its pid, forks P, reaps, reports P's wait status straight to
#      nsrun (which measures the slot's memory meanwhile); its exit ends the namespace
#   P  the request: fds 0-3 only, rlimits, every capability dropped, seccomp (the
#      cold run's BPF, compiled by nsrun), and only then reads the request.
# Python 3.11 has no os.unshare: the calls go through ctypes (unshare(2),
# mount(2), prctl(2), capset(2)).
import atexit
import builtins
import ctypes
import fcntl
import gc
import json
import os
import resource
import select
import signal
import socket
import struct
import sys
import traceback

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x20000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_SECCOMP, PR_CAPBSET_DROP = 1, 4, 22, 24
PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 38, 47, 4
SECCOMP_MODE_FILTER = 2
SYS_CAPSET, SYS_CLOSE_RANGE = 126, 436   # x86_64
SIOCSIFFLAGS, IFF_UP, IFF_LOOPBACK, IFF_RUNNING = 0x8914, 1, 8, 0x40

libc = ctypes.CDLL(None, use_errno=True)


def call(rc, what):
    if rc < 0:
        e = ctypes.get_errno()
        raise OSError(e, "%s: %s" % (what, os.strerror(e)))
    return rc


def prctl(op, a=0, b=0):
    return call(libc.prctl(ctypes.c_int(op), ctypes.c_ulong(a), ctypes.c_ulong(b), ctypes.c_ulong(0),
                           ctypes.c_ulong(0)), "prctl %d" % op)


def mount(src, dst, fstype, flags, data=None):
    enc = (lambda s: s.encode() if s is not None else None)
    call(libc.mount(enc(src), enc(dst), enc(fstype), ctypes.c_ulong(flags), enc(data)),
         "mount %s on %s" % (fstype or src, dst))


def write_file(path, text):
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


# the cold run's /proc masks (mount_plan.c, as Docker's)
PROC_MASK_FILES = ("kcore", "keys", "latency_stats", "timer_list", "timer_stats", "sched_debug", "interrupts")
PROC_MASK_DIRS = ("acpi", "asound", "scsi", "driver")
PROC_READONLY = ("bus", "fs", "irq", "sys", "sysrq-trigger")


def fresh_proc(ucounts):
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    # the slot's share of the container's inotify limits (pool.c), written for the
    # slot's own user namespace while its /proc/sys is still writable (where it is
    # not, the requests share the container's, as before)
    for name, value in ucounts.items():
        try:
            write_file("/proc/sys/user/" + name, "%d\n" % value)
        except OSError:
            pass
    for f in PROC_MASK_FILES:
        if os.path.exists("/proc/" + f):
            mount("/dev/null", "/proc/" + f, None, MS_BIND)
    for d in PROC_MASK_DIRS:
        if os.path.isdir("/proc/" + d):
            mount("tmpfs", "/proc/" + d, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=0")
    for p in PROC_READONLY:
        if os.path.exists("/proc/" + p):
            mount("/proc/" + p, "/proc/" + p, None, MS_BIND | MS_REC)
            mount(None, "/proc/" + p, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)


def lo_up():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", IFF_UP | IFF_LOOPBACK | IFF_RUNNING))
    finally:
        s.close()


def drop_caps():
    for cap in range(64):
        if libc.prctl(PR_CAPBSET_DROP, ctypes.c_ulong(cap), 0, 0, 0) < 0 and ctypes.get_errno() != 22:
            call(-1, "drop capability %d from the bounding set" % cap)
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    hdr = struct.pack("Ii", 0x20080522, 0)          # _LINUX_CAPABILITY_VERSION_3, this thread
    data = ctypes.create_string_buffer(24)           # two zeroed __user_cap_data_struct
    call(libc.syscall(ctypes.c_long(SYS_CAPSET), ctypes.c_char_p(hdr), data), "capset")


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def load_seccomp(bpf):
    if not bpf:
        return
    buf = ctypes.create_string_buffer(bpf, len(bpf))
    prog = SockFprog(len(bpf) // 8, ctypes.addressof(buf))
    call(libc.prctl(ctypes.c_int(PR_SET_SECCOMP), ctypes.c_ulong(SECCOMP_MODE_FILTER), ctypes.byref(prog),
                    ctypes.c_ulong(0), ctypes.c_ulong(0)), "load the seccomp filter")


def set_rlimits(cfg):
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if cfg["pids"]:
        resource.setrlimit(resource.RLIMIT_NPROC, (cfg["pids"], cfg["pids"]))
    if cfg["memory_bytes"]:
        resource.setrlimit(resource.RLIMIT_DATA, (cfg["memory_bytes"], cfg["memory_bytes"]))
    if cfg["cpu_time_s"]:
        resource.setrlimit(resource.RLIMIT_CPU, (cfg["cpu_time_s"], cfg["cpu_time_s"] + 1))


def run_request(cfg, bpf):
    """P: the sandbox is complete before the request is read."""
    os.setsid()
    prctl(PR_SET_DUMPABLE, 1)                        # its own /proc/self, as after an execve
    set_rlimits(cfg)
    drop_caps()
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    load_seccomp(bpf)
    # all that does not depend on the request is done before it is read;
    # signals as python3 starts with them, not as the zygote has them
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    stdio = (open(0, "r", closefd=False), open(1, "w", closefd=False), open(2, "w", closefd=False))
    # a fresh __main__, as python3 -c has: the zygote's own stays its functions'
    main_mod = type(sys)("__main__")
    main_mod.__builtins__ = builtins
    g = main_mod.__dict__
    os.environ.clear()
    sys.stdin, sys.stdout, sys.stderr = stdio
    sys.modules["__main__"] = main_mod
    gc.enable()
    # the compiler's first use (its arenas, the pages it writes that this process
    # still shares with the zygote) paid here, not by the request
    compile("print(sum(range(10)))", "<string>", "exec")
    chunks = []
    while True:
        b = os.read(3, 65536)
        if not b:
            break
        chunks.append(b)
    os.close(3)
    if not chunks:
        os._exit(0)                                  # the pool ended: no request
    req = json.loads(b"".join(chunks))
    # the request's own limits, at most the pool's: lowering takes no privilege
    if req.get("memory_bytes"):
        resource.setrlimit(resource.RLIMIT_DATA, (req["memory_bytes"], req["memory_bytes"]))
    if req.get("pids"):
        resource.setrlimit(resource.RLIMIT_NPROC, (req["pids"], req["pids"]))
    for kv in req.get("env", []):
        k, _, v = kv.partition("=")
        os.environ[k] = v
    try:
        os.chdir(req.get("cwd") or "/")
    except OSError:
        os.chdir("/")
    sys.argv = ["-c"] + list(req.get("args", []))
    rc = 0
    try:
        exec(compile(req["code"], "<string>", "exec"), g)
    except SystemExit as e:
        if e.code is None:
            rc = 0
        elif isinstance(e.code, int):
            rc = e.code & 0xff
        else:
            print(e.code, file=sys.stderr)
            rc = 1
    except BaseException:
        traceback.print_exc()
        rc = 1
    try:
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        pass
    os._exit(rc)


def slot_init(cfg, bpf, fds, stat_w, alive_r):
    """R: pid 1 of the slot's pid namespace."""
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    # S killed before that line (a request's timeout while its slot was still being
    # made) sent no death signal: S's end of alive is closed then, and R must not
    # run the request with no one to kill it (nor keep the zygote waiting for its
    # status).  getppid() cannot tell: it is 0 for a pid namespace's pid 1
    if select.select([alive_r], [], [], 0)[0]:
        os._exit(125)
    os.close(alive_r)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE, signal.SIGCHLD):
        signal.signal(sig, signal.SIG_DFL)
    fresh_proc(cfg.get("ucounts", {}))
    # R's first message names it to nsrun: the kernel adds its pid, as nsrun's /proc
    # names it (SCM_CREDENTIALS, unix(7); SO_PASSCRED is set on both ends), and
    # nsrun measures the slot's memory through it while a request runs
    os.write(stat_w, b"r")
    # the report's encoder used once here, before P: its first use (the pages it
    # writes that R shares with the zygote) is not paid between P's end and the answer
    json.dumps({"status": 0, "utime": 0.0, "stime": 0.0, "maxrss": 0})
    pid = os.fork()
    if pid == 0:
        try:
            for i, fd in enumerate(fds):
                os.dup2(fd, i)
            # nothing of the zygote's (its channel, the other slots' pipes) stays open in
            # the request: close_range(2), else one by one (a kernel before 5.9, or an
            # outer filter that denies it)
            if libc.syscall(ctypes.c_long(SYS_CLOSE_RANGE), ctypes.c_uint(4), ctypes.c_uint(0xffffffff), 0) != 0:
                os.closerange(4, os.sysconf("SC_OPEN_MAX"))
            run_request(cfg, bpf)
        except BaseException as e:
            os.write(2, ("nsrun: pool: set up the request's sandbox: %s\n" % e).encode())
        os._exit(125)
    for fd in fds:
        os.close(fd)
    drop_caps()
    prctl(PR_SET_DUMPABLE, 0)
    while True:
        try:
            got, status, ru = os.wait4(-1, 0)
        except ChildProcessError:
            os._exit(0)
        if got == pid:
            os.write(stat_w, json.dumps({"status": status, "utime": ru.ru_utime, "stime": ru.ru_stime,
                                         "maxrss": ru.ru_maxrss}).encode())
            os._exit(0)                              # the kernel kills the rest of the namespace


def slot_main(cfg, bpf, fds, stat_w, zygote):
    """S: the slot's namespaces, made before any request is known."""
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != zygote:
        os._exit(125)
    # RLIMIT_NPROC is counted per user namespace and up its parents (ucounts):
    # the slot's namespace takes the zygote's limit (the container's, for every
    # slot) as its parents' bound, and P sets the request's own; set here, the
    # request's would bound the sum of all the zygote's requests, one's fork bomb
    # starving the others
    uid, gid = os.getuid(), os.getgid()
    call(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS),
         "unshare")
    # the zygote is not dumpable (no one may trace it), so /proc/self would be
    # another's: dumpable for as long as the maps take
    prctl(PR_SET_DUMPABLE, 1)
    write_file("/proc/self/setgroups", "deny")
    write_file("/proc/self/uid_map", "%d %d 1\n" % (uid, uid))
    write_file("/proc/self/gid_map", "%d %d 1\n" % (gid, gid))
    prctl(PR_SET_DUMPABLE, 0)
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    size = cfg["tmpfs_bytes"]
    mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=%d" % size)
    if os.path.isdir("/dev/shm"):
        mount("shm", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=1777,size=%d" % size)
    # a devpts of its own: the container's would let one request open another's ptys
    if os.path.isdir("/dev/pts"):
        mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620")
    # the channel to nsrun: not the request's business
    mount("tmpfs", cfg["channel"], "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=0,mode=000")
    hn = cfg["hostname"].encode()
    call(libc.sethostname(hn, len(hn)), "sethostname")
    lo_up()
    alive_r, alive_w = os.pipe()                     # S holds alive_w until it ends
    pid = os.fork()
    if pid == 0:
        try:
            os.close(alive_w)
            slot_init(cfg, bpf, fds, stat_w, alive_r)
        except BaseException as e:
            os.write(2, ("nsrun: pool: set up the slot's pid 1: %s\n" % e).encode())
        os._exit(125)
    for fd in fds + [stat_w, alive_r]:
        os.close(fd)
    drop_caps()
    prctl(PR_SET_DUMPABLE, 0)
    _, status = os.waitpid(pid, 0)
    os._exit(0 if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 else 125)


def main():
    channel = sys.argv[1]
    with open(channel + "/config.json") as f:
        cfg = json.load(f)
    with open(channel + "/seccomp.bpf", "rb") as f:
        bpf = f.read()
    for mod in cfg["preload"]:
        __import__(mod)
    prctl(PR_SET_DUMPABLE, 0)
    ctl = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    ctl.connect(channel + "/zygote.sock")
    wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *a: None)
    signal.signal(signal.SIGTERM, lambda *a: os._exit(0))
    me = os.getpid()
    slots = {}                                       # S's pid -> slot id
    idle = set()
    busy = set()                                     # slots taken whose S has not ended
    owed = 0                                         # slots taken and not yet made again
    next_id = 0

    def make_slot():
        nonlocal next_id
        sid = next_id
        next_id += 1
        ctl_r, ctl_w = os.pipe()
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        # R's messages to nsrun: its name (with its pid), then its report
        stat_a, stat_b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        for end in (stat_a, stat_b):
            end.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        stat_r, stat_w = stat_a.detach(), stat_b.detach()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(wake_r)
                # the zygote's socket is its own: held here too, the zygote's death
                # would not close it, and nsrun would see its slots end first
                ctl.close()
                for fd in (ctl_w, in_w, out_r, err_r, stat_r):
                    os.close(fd)
                slot_main(cfg, bpf, [in_r, out_w, err_w, ctl_r], stat_w, me)
            except BaseException as e:
                os.write(2, ("nsrun: pool: set up a slot: %s\n" % e).encode())
            os._exit(125)
        for fd in (ctl_r, in_r, out_w, err_w, stat_w):
            os.close(fd)
        # R's report of P's end goes to nsrun straight (stat_r), not through here:
        # one process fewer to wake between a request's end and its answer
        socket.send_fds(ctl, [json.dumps({"ready": sid}).encode()], [ctl_w, in_w, out_r, err_r, stat_r])
        for fd in (ctl_w, in_w, out_r, err_r, stat_r):
            os.close(fd)
        slots[pid] = sid
        idle.add(sid)

    def make_owed():
        nonlocal owed
        while owed:
            owed -= 1
            make_slot()

    def reap():
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid in slots:
                sid = slots.pop(pid)
                idle.discard(sid)
                busy.discard(sid)
                make_owed()

    # what the zygote holds is never collected again: a slot's fork shares its
    # pages instead of copying each one the collector would touch
    gc.collect()
    gc.freeze()
    gc.disable()
    for _ in range(cfg["size"]):
        make_slot()
    ctl.send(json.dumps({"hello": me}).encode())
    by_id = {}
    while True:
        r, _, _ = select.select([ctl, wake_r], [], [])
        if wake_r in r:
            try:
                while os.read(wake_r, 512):
                    pass
            except BlockingIOError:
                pass
            reap()
        if ctl in r:
            msg = ctl.recv(65536)
            if not msg:
                os._exit(0)                          # nsrun went away
            m = json.loads(msg)
            if "take" in m:
                # a lone request's slot is made again once it ends, not now: a
                # slot's making (forks, namespaces, mounts) would take the CPU and
                # the kernel's locks from the request just taken.  When no idle
                # slot is left, or requests run side by side (a burst, where slots
                # are the bound), what is owed is made at once
                idle.discard(m["take"])
                busy.add(m["take"])
                owed += 1
                if not idle or len(busy) > 1:
                    make_owed()
            elif "kill" in m:
                by_id = {v: k for k, v in slots.items()}
                if m["kill"] in by_id:
                    os.kill(by_id[m["kill"]], signal.SIGKILL)


main()
