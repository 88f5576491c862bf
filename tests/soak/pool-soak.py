#!/usr/bin/env python3
"""pool-soak.py - many mixed requests through one nsrun pool; every answer checked.

  pool-soak.py [--requests N] [--parallel P] [--image NAME] [--samples K] [--progress]

Starts `nsrun pool --image NAME --size P` ($NSRUN, else nsrun on PATH) and sends N
requests, P at a time, cycling through the kinds below; each answer must be exactly
what its kind expects.  Hostile kinds (fork bomb, kill -1, a full /tmp, a process
left behind, a file left in /tmp, SIGKILL to every pid it can name and a ptrace of
its parent, aimed at the zygote) are followed by requests that must not see any of
it.  The zygote's PSS (/proc/PID/smaps_rollup) is sampled K+2 times: it must stay
flat (no sample more than --pss-growth-kib above the first).  Once the pool has
ended nothing may be left on the host: no process of the pool's tree seen during
the run, no cgroup of the zygote's, no mount naming the pool, no file in the pool's
TMPDIR (a directory of the soak's own).  One summary line:

  pool-soak: requests=N unexpected=U zygote_pss_kib=A->B (max M, K samples) restarts=R left=none ...

Exit 0 when unexpected is 0, the PSS flat, no restart and nothing left.
tests/integration/29-pool.t runs a short one; `make soak-pool` the full one
(10,000 requests).
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bindings", "python"))
import nsrun  # noqa: E402

# (name, code, request options, check(result) -> bool)
KINDS = [
    ("good", "print(sum(range(1000)))", {}, lambda r: r.status == "exited" and r.exit_code == 0
     and r.stdout == "499500\n"),
    ("exit3", "import sys; sys.stderr.write('e'); sys.exit(3)", {},
     lambda r: r.status == "exited" and r.exit_code == 3 and r.stderr == "e"),
    ("raise", "raise ValueError('boom')", {}, lambda r: r.exit_code == 1 and "ValueError: boom" in r.stderr),
    ("segv", "import ctypes; ctypes.string_at(0)", {}, lambda r: r.status == "signaled" and r.signal == "SIGSEGV"),
    ("timeout", "while True: pass", {"timeout": 0.5}, lambda r: r.status == "timed_out"),
    ("stdin", "import sys; print(sys.stdin.read()[::-1])", {"stdin": "abc"},
     lambda r: r.stdout == "cba\n"),
    ("forkbomb", "import os\nn = 0\ntry:\n    while n < 10000:\n        if os.fork() == 0:\n"
     "            import time; time.sleep(30)\n        n += 1\nexcept OSError as e:\n    print(e.errno)",
     {}, lambda r: r.status == "exited" and r.stdout.strip() == "11"),  # EAGAIN at the pids limit
    ("kill-all", "import os, signal, subprocess\np = subprocess.Popen(['sleep', '1000'])\n"
     "os.kill(-1, signal.SIGKILL)\nprint('alive', p.wait())", {},
     lambda r: r.stdout == "alive -9\n"),       # all it may signal: its own
    ("fill-tmp", "import os\ntry:\n    with open('/tmp/fill', 'wb') as f:\n        while True:\n"
     "            f.write(b'x' * (1 << 20)); f.flush()\nexcept OSError as e:\n    print(e.errno)", {},
     lambda r: r.stdout.strip() == "28"),  # ENOSPC
    ("leave", "import os, subprocess\nopen('/tmp/left', 'w').write('x')\nopen('/dev/shm/left', 'w').write('x')\n"
     "subprocess.Popen(['sleep', '1000'], start_new_session=True)\nprint('left')", {},
     lambda r: r.stdout == "left\n"),
    ("look", "import os\nprint(sorted(os.listdir('/tmp')), sorted(os.listdir('/dev/shm')),\n"
     "      sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))", {},
     lambda r: r.stdout == "[] [] [1, 2]\n"),
    # at the zygote: every pid it could name gets SIGKILL (only its slot's pid 1,
    # which ignores it, is in reach), and a ptrace of its parent is refused; the
    # zygote's pid and restart count are checked at the end
    ("signal-zygote", "import ctypes, os, signal\nhit = []\nfor p in range(1, 4096):\n"
     "    if p != os.getpid():\n        try:\n            os.kill(p, signal.SIGKILL); hit.append(p)\n"
     "        except OSError:\n            pass\n"
     "libc = ctypes.CDLL(None, use_errno=True)\n"
     "print(hit, libc.ptrace(16, os.getppid(), 0, 0), ctypes.get_errno())", {},
     lambda r: r.status == "exited" and r.stdout == "[1] -1 1\n"),
]


def pss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            return int(re.search(r"^Pss:\s+(\d+)", f.read(), re.M).group(1))
    except (OSError, AttributeError):
        return -1


def _ppid(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def zygote_pid(pool_pid: int) -> int:
    """The host pid of the zygote of the pool pool_pid: the python3 running
    .../zygote.py that descends from it."""
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                cmd = f.read().split(b"\0")
        except OSError:
            continue
        if not (len(cmd) > 3 and cmd[-3].endswith(b"zygote.py") and cmd[0].endswith(b"python3")):
            continue
        try:  # a slot is a fork of the zygote, with its command line: the zygote's parent is not
            with open(f"/proc/{_ppid(int(p))}/cmdline", "rb") as f:
                if b"zygote.py" in f.read():
                    continue
        except OSError:
            continue
        a = int(p)
        for _ in range(16):
            a = _ppid(a)
            if a == pool_pid:
                return int(p)
            if a <= 1:
                break
    return -1


def descendants(pid: int) -> dict[int, str]:
    """pid -> its start time (field 22 of /proc/PID/stat), for pid and every descendant."""
    out: dict[int, str] = {}
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/stat") as f:
                out[p] = f.read().rsplit(")", 1)[1].split()[19]
            for t in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{t}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except (OSError, IndexError):
            pass
    return out


def ps_tree(pid: int) -> str:
    """pid and its descendants: pid, state, wchan, command line."""
    out = []
    for p in sorted(descendants(pid)):
        try:
            with open(f"/proc/{p}/stat") as f:
                st = f.read().rsplit(")", 1)[1].split()[0]
            with open(f"/proc/{p}/wchan") as f:
                wchan = f.read()
            with open(f"/proc/{p}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")[:100]
        except OSError:
            continue
        out.append(f"  {p} {st} {wchan} {cmd}")
    return "\n".join(out)


def alive(pid: int, start: str) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[19] == start
    except (OSError, IndexError):
        return False


def cgroups_of(pid: int) -> set[str]:
    """The host paths of pid's cgroups (v2 and v1 hierarchies) below the root."""
    out: set[str] = set()
    try:
        with open(f"/proc/{pid}/cgroup") as f:
            lines = f.read().splitlines()
        with open("/proc/self/mountinfo") as f:
            mounts = [m.split() for m in f.read().splitlines()]
    except OSError:
        return out
    for line in lines:
        hid, ctrl, path = line.split(":", 2)
        if path in ("/", ""):
            continue
        for m in mounts:
            fs = m[m.index("-") + 1]
            opts = m[-1].split(",")
            if (hid == "0" and fs == "cgroup2") or (fs == "cgroup" and ctrl and ctrl.split(",")[0] in opts):
                out.add(m[4] + path)
                break
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=300)
    ap.add_argument("--parallel", type=int, default=2)
    ap.add_argument("--image", default="python")
    ap.add_argument("--pss-growth-kib", type=int, default=2048)
    ap.add_argument("--samples", type=int, default=10, help="zygote PSS samples during the run")
    ap.add_argument("--progress", action="store_true", help="a line on stderr at each sample")
    a = ap.parse_args()
    unexpected = 0
    lat: list[float] = []
    # the pool's files (its private directory, the client's socket) in a directory
    # of our own: whatever is in it at the end was left behind
    work = tempfile.mkdtemp(prefix="pool-soak-")
    os.environ["TMPDIR"] = work
    tempfile.tempdir = work
    mounts0 = set(open("/proc/self/mountinfo").read().splitlines())
    seen: dict[int, str] = {}               # every process of the pool's tree we saw
    cgroups: set[str] = set()
    pss: list[int] = []
    t0 = time.monotonic()
    with nsrun.Pool(a.image, size=a.parallel, queue=4 * a.parallel + 4, timeout=20,
                    options=["--pids-limit", "32", "--tmpfs-size", "8m"]) as pool:
        zpid = zygote_pid(pool._proc.pid)
        for k in KINDS:                     # warm: one of each before the first measure
            pool.run(k[1], **k[2])
        pss.append(pss_kib(zpid))
        seen.update(descendants(pool._proc.pid))
        # the zygote's cgroups but those the soak is in itself (or their parents):
        # rootless and nothing delegated, nsrun makes none and the zygote stays in ours
        mine = cgroups_of(os.getpid())
        cgroups |= {c for c in cgroups_of(zpid) if not any(m == c or m.startswith(c + "/") for m in mine)}
        every = max(1, a.requests // max(1, a.samples))

        def one(i: int) -> tuple[int, str, bool, str]:
            name, code, opts, check = KINDS[i % len(KINDS)]
            t = time.monotonic()
            try:
                r = pool.run(code, **opts)
            except (nsrun.NsrunError, OSError) as e:
                # an error of the pool's or no answer in time: counted, and the pool's
                # processes shown (what each waits in) for the first few
                if unexpected < 5:
                    print(f"pool-soak: request {i} ({name}): {type(e).__name__}: {e} after "
                          f"{time.monotonic() - t:.1f} s; the pool's processes:\n{ps_tree(pool._proc.pid)}",
                          file=sys.stderr, flush=True)
                return i, name, False, f"{type(e).__name__}: {e}"
            lat.append(time.monotonic() - t)
            return i, name, check(r), repr(r)[:400]

        with ThreadPoolExecutor(a.parallel) as ex:
            for i, name, good, why in ex.map(one, range(a.requests)):
                if not good:
                    unexpected += 1
                    if unexpected <= 5:
                        print(f"pool-soak: unexpected {name}: {why}", file=sys.stderr)
                if (i + 1) % every == 0:
                    pss.append(pss_kib(zpid))
                    seen.update(descendants(pool._proc.pid))
                    if a.progress:
                        print(f"pool-soak: {i + 1} requests, {unexpected} unexpected, zygote PSS {pss[-1]} KiB, "
                              f"{time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)
        r = pool.run("print(1)")
        restarts = (r.pool or {}).get("zygote_restarts", -1)  # type: ignore[attr-defined]
        pss.append(pss_kib(zpid))
        if zygote_pid(pool._proc.pid) != zpid:
            unexpected += 1
            print("pool-soak: the zygote was replaced", file=sys.stderr)
    elapsed = time.monotonic() - t0
    # what is left once the pool has ended: a process we saw, a cgroup of the
    # zygote's, a host mount naming our directory or new since the start that
    # names nsrun, a file in our directory
    left_procs = sorted(p for p, st in seen.items() if alive(p, st))
    left_cgroups = sorted(c for c in cgroups if os.path.isdir(c))
    left_mounts = sorted(m for m in set(open("/proc/self/mountinfo").read().splitlines()) - mounts0
                         if work in m or "nsrun-pool" in m)
    left_files = sorted(os.path.join(d, f) for d, ds, fs in os.walk(work) for f in ds + fs)
    for what, items in (("processes", left_procs), ("cgroups", left_cgroups), ("mounts", left_mounts),
                        ("files", left_files)):
        if items:
            print(f"pool-soak: left {what}: {items[:5]}", file=sys.stderr)
    if not left_files:
        os.rmdir(work)
    left = len(left_procs) + len(left_cgroups) + len(left_mounts) + len(left_files)
    lat.sort()
    p = (lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1000 if lat else -1)
    flat = pss[0] > 0 and min(pss) > 0 and max(pss) - pss[0] <= a.pss_growth_kib
    print(f"pool-soak: requests={a.requests} unexpected={unexpected} zygote_pss_kib={pss[0]}->{pss[-1]} "
          f"(max {max(pss)}, {len(pss)} samples{'' if flat else ', NOT flat'}) restarts={restarts} "
          f"left={'none' if left == 0 else left} "
          f"procs_seen={len(seen)} cgroups={len(cgroups)} seconds={elapsed:.0f} "
          f"p50_ms={p(0.5):.1f} p99_ms={p(0.99):.1f}")
    return 0 if unexpected == 0 and flat and restarts == 0 and left == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
