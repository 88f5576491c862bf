"""Start-up cost of nsrun for a trivial Python program.

Measures ``nsrun.run("pass")`` (container set-up, python3 start, teardown, JSON) against
``subprocess.run(["python3", "-c", "pass"])`` on the host, interleaved so that drift of
the machine affects both equally; prints the medians (milliseconds) and their ratio.

Usage: NSRUN=build/nsrun NSRUN_IMAGES=... python3 bench/python_start.py [-n N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
if str(_ROOT / "bindings" / "python") not in sys.path:
    sys.path.insert(0, str(_ROOT / "bindings" / "python"))
if not os.environ.get("NSRUN") and (_ROOT / "build" / "nsrun").is_file():
    os.environ["NSRUN"] = str(_ROOT / "build" / "nsrun")

import nsrun  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=30, help="runs of each (default 30)")
    ap.add_argument("--python", default="python3", help="host interpreter (default python3)")
    opts = ap.parse_args()

    # warm-up: page cache, image lookup
    nsrun.run("pass")
    subprocess.run([opts.python, "-c", "pass"], check=True)

    ns: list[float] = []
    host: list[float] = []
    for _ in range(opts.n):
        t = time.perf_counter()
        r = nsrun.run("pass")
        ns.append((time.perf_counter() - t) * 1000)
        if not r.ok:
            print(f"nsrun run failed: {r}", file=sys.stderr)
            return 1
        t = time.perf_counter()
        subprocess.run([opts.python, "-c", "pass"], check=True)
        host.append((time.perf_counter() - t) * 1000)

    m_ns, m_host = statistics.median(ns), statistics.median(host)
    print(f"runs: {opts.n} each, interleaved")
    print(f"nsrun.run('pass'):          median {m_ns:7.1f} ms  (min {min(ns):.1f}, max {max(ns):.1f})")
    print(f"python3 -c pass (host):     median {m_host:7.1f} ms  (min {min(host):.1f}, max {max(host):.1f})")
    print(f"ratio: {m_ns / m_host:.1f}x   overhead: {m_ns - m_host:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
