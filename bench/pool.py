"""Latency and throughput of a snippet through `nsrun pool` (docs/pool.md).

Three ways to run the same snippet, interleaved A B C A B C so that the machine's
drift touches each alike: (A) a request through a pool (`nsrun.Pool`), (B) a bare
``python3 -c`` on the host, (C) a cold ``nsrun.run``.  Prints p50/p99 of each and the
ratios from this one run, for ``print(sum(range(1000)))`` and for one importing the
preloaded modules; then requests/s through the pool at parallelism 1, 2 and 4, and
the PSS of the zygote and of an idle slot (S, R, P together).

Usage: NSRUN=build/nsrun NSRUN_IMAGES=... python3 bench/pool.py [-n N] [--size N]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
if str(_ROOT / "bindings" / "python") not in sys.path:
    sys.path.insert(0, str(_ROOT / "bindings" / "python"))
if not os.environ.get("NSRUN") and (_ROOT / "build" / "nsrun").is_file():
    os.environ["NSRUN"] = str(_ROOT / "build" / "nsrun")

import nsrun  # noqa: E402

SNIPPETS = {
    "sum": "print(sum(range(1000)))",
    "preloaded": "import json, re, decimal; print(json.dumps(re.findall('a', 'banana')), decimal.Decimal(1))",
}
PRELOAD = ["json", "re", "decimal"]


def pct(v: list[float], q: float) -> float:
    s = sorted(v)
    return s[min(len(s) - 1, int(q * len(s)))] * 1000


def children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def pss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            return int(re.search(r"^Pss:\s+(\d+)", f.read(), re.M).group(1))
    except (OSError, AttributeError):
        return 0


def tree(pid: int) -> list[int]:
    out = [pid]
    for c in children(pid):
        out += tree(c)
    return out


def zygote_of(pool_pid: int) -> int:
    for p in tree(pool_pid):
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                if b"zygote.py" in f.read():
                    return p
        except OSError:
            pass
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=100, help="runs of each, per snippet (default 100)")
    ap.add_argument("--size", type=int, default=2, help="the pool's --size (default 2)")
    ap.add_argument("--python", default="/usr/bin/python3", help="host interpreter")
    ap.add_argument("--throughput-s", type=float, default=10.0, help="seconds per parallelism")
    o = ap.parse_args()

    with nsrun.Pool("python", size=o.size, preload=PRELOAD, timeout=30) as pool:
        for code in SNIPPETS.values():        # warm-up: page cache, image, slots
            pool.run(code)
            nsrun.run(code)
            subprocess.run([o.python, "-c", code], check=True, capture_output=True)
        for name, code in SNIPPETS.items():
            t = {"pool": [], "bare": [], "cold": []}
            for _ in range(o.n):
                time.sleep(0.05)  # the pool's slots are made again: a request at a time, as a harness in a loop
                a = time.monotonic()
                r = pool.run(code)
                b = time.monotonic()
                subprocess.run([o.python, "-c", code], check=True, capture_output=True)
                c = time.monotonic()
                rc = nsrun.run(code)
                d = time.monotonic()
                assert r.ok and rc.ok, (r, rc)
                t["pool"].append(b - a)
                t["bare"].append(c - b)
                t["cold"].append(d - c)
            print(f"snippet {name}: n={o.n}")
            for k, v in t.items():
                print(f"  {k:5s} p50 {pct(v, 0.5):7.2f} ms  p99 {pct(v, 0.99):7.2f} ms")
            print(f"  pool/bare p50 {pct(t['pool'], 0.5) / pct(t['bare'], 0.5):.3f}  "
                  f"pool/cold p50 {pct(t['pool'], 0.5) / pct(t['cold'], 0.5):.3f}  "
                  f"cold/bare p50 {pct(t['cold'], 0.5) / pct(t['bare'], 0.5):.3f}")
        for par in (1, 2, 4):
            done = 0
            end = time.monotonic() + o.throughput_s

            def worker(_: int) -> int:
                n = 0
                while time.monotonic() < end:
                    if pool.run(SNIPPETS["sum"]).ok:
                        n += 1
                return n

            start = time.monotonic()
            with ThreadPoolExecutor(par) as ex:
                done = sum(ex.map(worker, range(par)))
            print(f"throughput parallelism {par}: {done / (time.monotonic() - start):.1f} requests/s")
        time.sleep(2)                          # the slots are idle again
        z = zygote_of(pool._proc.pid)
        slots = [c for c in children(z)]
        per_slot = [sum(pss_kib(p) for p in tree(s)) for s in slots]
        print(f"PSS: zygote {pss_kib(z)} KiB; idle slots (S+R+P) {per_slot} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
