#!/usr/bin/env python3
"""pool-soak.py - many mixed requests through one nsrun pool; every answer checked.

  pool-soak.py [--requests N] [--parallel P] [--timeout S] [--image NAME]

Starts `nsrun pool --image NAME --size P` ($NSRUN, else nsrun on PATH) and sends N
requests, P at a time, cycling through the kinds below; each answer must be exactly
what its kind expects.  Hostile kinds (fork bomb, kill -1, a full /tmp, a process
left behind, a file left in /tmp) are followed by requests that must not see any of
it.  Before and after, the zygote's PSS and the pool's process count are measured:
the zygote's memory must stay flat (under --pss-growth-kib) and nothing may be left
once the pool is stopped.  One summary line:

  pool-soak: requests=N unexpected=U zygote_pss_kib=A->B restarts=R p50_ms=.. p99_ms=..

Exit 0 when unexpected is 0 and nothing was left.  tests/integration/29-pool.t runs
a short one; the full one (10,000 requests) is `python3 tests/soak/pool-soak.py
--requests 10000`.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
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


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=300)
    ap.add_argument("--parallel", type=int, default=2)
    ap.add_argument("--image", default="python")
    ap.add_argument("--pss-growth-kib", type=int, default=2048)
    a = ap.parse_args()
    unexpected = 0
    lat: list[float] = []
    with nsrun.Pool(a.image, size=a.parallel, queue=4 * a.parallel + 4, timeout=20,
                    options=["--pids-limit", "32", "--tmpfs-size", "8m"]) as pool:
        zpid = zygote_pid(pool._proc.pid)
        for k in KINDS:                     # warm: one of each before the first measure
            pool.run(k[1], **k[2])
        pss0 = pss_kib(zpid)

        def one(i: int) -> tuple[str, bool, str]:
            name, code, opts, check = KINDS[i % len(KINDS)]
            t = time.monotonic()
            try:
                r = pool.run(code, **opts)
            except nsrun.NsrunError as e:
                return name, False, str(e)
            lat.append(time.monotonic() - t)
            return name, check(r), repr(r)[:400]

        with ThreadPoolExecutor(a.parallel) as ex:
            for name, good, why in ex.map(one, range(a.requests)):
                if not good:
                    unexpected += 1
                    if unexpected <= 5:
                        print(f"pool-soak: unexpected {name}: {why}", file=sys.stderr)
        r = pool.run("print(1)")
        restarts = (r.pool or {}).get("zygote_restarts", -1)  # type: ignore[attr-defined]
        pss1 = pss_kib(zpid)
        if zygote_pid(pool._proc.pid) != zpid:
            unexpected += 1
            print("pool-soak: the zygote was replaced", file=sys.stderr)
    left = zpid if os.path.exists(f"/proc/{zpid}") else -1
    lat.sort()
    p = (lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1000 if lat else -1)
    flat = pss0 > 0 and pss1 - pss0 <= a.pss_growth_kib
    print(f"pool-soak: requests={a.requests} unexpected={unexpected} zygote_pss_kib={pss0}->{pss1} "
          f"restarts={restarts} left={'none' if left < 0 else left} p50_ms={p(0.5):.1f} p99_ms={p(0.99):.1f}")
    return 0 if unexpected == 0 and flat and restarts == 0 and left < 0 else 1


if __name__ == "__main__":
    sys.exit(main())
