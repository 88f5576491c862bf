#!/usr/bin/env python3
"""pool-slot-steps.py [ROUNDS] — where a warm pool's slot set-up goes (bench/RESULTS.md).

Makes ROUNDS slots as runtime/pool_zygote.py's S and R do (fork, unshare of the six
namespaces, uid/gid maps, the tmpfs mounts, hostname, lo up, fork R, a fresh /proc)
and times each step in the child with perf_counter_ns, then the slot's end (the
parent's wait for S, which includes the kernel's teardown of its namespaces).  Run on
the host as any user that may make user namespaces: the steps are the zygote's, in
the zygote's order, through the same ctypes calls; prints the median and p90 of each."""
import ctypes
import json
import os
import statistics
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "runtime"))
libc = ctypes.CDLL(None, use_errno=True)
NEW = {"user": 0x10000000, "mount": 0x20000, "pid": 0x20000000, "net": 0x40000000, "ipc": 0x08000000,
       "uts": 0x04000000}
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 16384, 1 << 18


def ok(rc, what):
    if rc < 0:
        raise OSError(ctypes.get_errno(), what)


def mount(src, dst, fs, flags, data=None):
    enc = (lambda s: s.encode() if s is not None else None)
    ok(libc.mount(enc(src), enc(dst), enc(fs), ctypes.c_ulong(flags), enc(data)), "mount " + dst)


def slot(w):
    t = {}
    last = time.perf_counter_ns()

    def mark(name):
        nonlocal last
        now = time.perf_counter_ns()
        t[name] = (now - last) / 1e6
        last = now
    uid, gid = os.getuid(), os.getgid()
    ok(libc.unshare(NEW["user"]), "unshare user")
    mark("unshare user")
    for f, v in (("setgroups", "deny"), ("uid_map", "%d %d 1\n" % (uid, uid)), ("gid_map", "%d %d 1\n" % (gid, gid))):
        with open("/proc/self/" + f, "w") as fh:
            fh.write(v)
    mark("uid/gid maps")
    for ns in ("mount", "pid", "ipc", "uts"):
        ok(libc.unshare(NEW[ns]), "unshare " + ns)
        mark("unshare " + ns)
    ok(libc.unshare(NEW["net"]), "unshare net")
    mark("unshare net")
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=8m")
    mount("shm", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=1777,size=8m")
    mark("tmpfs /tmp, /dev/shm")
    ok(libc.sethostname(b"nsrun", 5), "sethostname")
    mark("sethostname")
    if os.environ.get("IMPORT_IN_SLOT"):
        import fcntl
        mark("import fcntl (in the slot, as the zygote did)")
    else:
        fcntl = sys.modules["fcntl"]
    import socket
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    mark("socket()")
    fcntl.ioctl(s, 0x8914, struct.pack("16sH22x", b"lo", 1 | 8 | 0x40))
    mark("lo up (SIOCSIFFLAGS)")
    s.close()
    mark("close")
    r, w2 = os.pipe()
    pid = os.fork()
    if pid == 0:
        t0 = time.perf_counter_ns()
        mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        os.write(w2, struct.pack("q", time.perf_counter_ns() - t0))
        os._exit(0)
    m = struct.unpack("q", os.read(r, 8))[0] / 1e6
    mark("fork R, fresh /proc")
    t["  of which mount /proc in R"] = m
    os.waitpid(pid, 0)
    mark("R's end (pid namespace torn down)")
    os.write(w, json.dumps(t).encode())


def main():
    import socket  # noqa: F401  (as the zygote: imported once, before any fork)
    if not os.environ.get("IMPORT_IN_SLOT"):
        import fcntl  # noqa: F401  (as the zygote does now)
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    steps = {}
    for _ in range(rounds):
        r, w = os.pipe()
        t0 = time.perf_counter_ns()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            try:
                slot(w)
            finally:
                os._exit(0)
        t1 = time.perf_counter_ns()
        os.close(w)
        data = os.read(r, 65536)
        t2 = time.perf_counter_ns()
        os.waitpid(pid, 0)
        t3 = time.perf_counter_ns()
        os.close(r)
        rec = json.loads(data)
        rec["fork S (parent's side)"] = (t1 - t0) / 1e6
        rec["S's end (its namespaces torn down)"] = (t3 - t2) / 1e6
        rec["total"] = (t3 - t0) / 1e6
        for k, v in rec.items():
            steps.setdefault(k, []).append(v)
    print("| step | median (ms) | p90 (ms) |\n|---|---:|---:|")
    for k, v in steps.items():
        v.sort()
        print("| %s | %.2f | %.2f |" % (k, statistics.median(v), v[int(len(v) * 0.9) - 1 if len(v) > 1 else 0]))


main()
