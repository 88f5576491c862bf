"""Measurements of bench/bench.sh that hyperfine does not make; each writes JSON.

  measure.py phases --runs N --out F -- NSRUN --debug-timing ...
      N runs; for each, the wall time measured here (spawn to exit) and the phases
      nsrun printed with --debug-timing.  Pre-main time (exec, loading) and exit
      are outside nsrun's own clock: the sum of its phases is compared to the wall.
  measure.py throughput --runs N --parallel P --out F -- CMD...
      N runs back to back, then N runs with P at a time: runs/s, p50/p99 latency,
      failures (any non-zero exit).
  measure.py memory --out F -- NSRUN ... sleep 1
      peak RSS (VmHWM) of the supervisor and of the container's pid 1, read from
      /proc while the payload sleeps.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time


def spawn_wait(cmd: list[str], stderr: int | None = subprocess.DEVNULL) -> tuple[int, float, str]:
    """Runs cmd (stdin, stdout /dev/null; stderr captured when stderr is None);
    returns (status, wall seconds, stderr text).  The clock runs from just before
    posix_spawn to the return of waitpid: no Python work inside it."""
    null = os.open(os.devnull, os.O_RDWR)
    r = w = -1
    if stderr is None:
        r, w = os.pipe()  # nsrun's timing lines fit in the pipe's buffer
    acts = [(os.POSIX_SPAWN_DUP2, null, 0), (os.POSIX_SPAWN_DUP2, null, 1),
            (os.POSIX_SPAWN_DUP2, w if w >= 0 else null, 2)]
    try:
        t0 = time.perf_counter()
        pid = os.posix_spawn(cmd[0], cmd, os.environ, file_actions=acts)
        _, status = os.waitpid(pid, 0)
        wall = time.perf_counter() - t0
    finally:
        os.close(null)
        if w >= 0:
            os.close(w)
    err = b""
    if r >= 0:
        with os.fdopen(r, "rb") as f:
            err = f.read()
    return os.waitstatus_to_exitcode(status), wall, err.decode(errors="replace")


TIMING = re.compile(r"^nsrun: timing:\s+(\d+) us\s+(?:[\d.]+%\s+)?(.*)$")


def phases(args: argparse.Namespace) -> dict:
    runs = []
    for _ in range(3):  # warm-up: page cache, seccomp cache
        spawn_wait(args.cmd)
    for _ in range(args.runs):
        status, wall, err = spawn_wait(args.cmd, stderr=None)
        if status != 0:
            raise SystemExit(f"phases: run failed with {status}: {err.strip()}")
        ph = {}
        for line in err.splitlines():
            m = TIMING.match(line)
            if m:
                ph[m.group(2).strip()] = int(m.group(1))
        runs.append({"wall_us": int(wall * 1e6), "phases_us": ph})
    return {"cmd": args.cmd, "runs": runs}


def percentile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


class RunFailed(Exception):
    """A measured run of interleaved() that failed: its name, status and stderr."""


def interleaved(cmds: dict[str, list[str]], n: int, warmup: int = 3) -> tuple[dict[str, list[float]], dict[str, str]]:
    """Runs each command of cmds (name: argv) warmup times (page cache, seccomp
    cache; a command whose warm-up run fails is dropped), then n times each,
    interleaved in an order that turns each round, so drift of a shared machine's
    load affects every command alike; spawn_wait's clock.  Returns (milliseconds
    by name, the last stderr line of each dropped command by name).  Raises
    RunFailed if a measured run fails."""
    names = list(cmds)
    failed: dict[str, str] = {}
    for name in list(names):
        for _ in range(warmup):
            status, _, err = spawn_wait(cmds[name], stderr=None)
            if status != 0:
                failed[name] = " ".join(err.strip().splitlines()[-1:])
                names.remove(name)
                break
    times: dict[str, list[float]] = {name: [] for name in names}
    for i in range(n):
        for k in range(len(names)):
            name = names[(i + k) % len(names)]
            status, wall, err = spawn_wait(cmds[name], stderr=None)
            if status != 0:
                raise RunFailed(f"{name}: failed ({status}): {err.strip()}")
            times[name].append(wall * 1000)
    return times, failed


def table_row(name: str, xs: list[float], ratio: float) -> str:
    """A Markdown row: name, median, 25 % and 75 % of xs (ms), and ratio."""
    return (f"| {name} | {statistics.median(xs):.1f} | {percentile(xs, 0.25):.1f} | {percentile(xs, 0.75):.1f} "
            f"| {ratio:.3f} |")


def run_many(cmd: list[str], n: int, parallel: int) -> dict:
    lat: list[float] = []
    fails: list[int] = []
    lock = threading.Lock()
    todo = iter(range(n))

    def worker() -> None:
        while True:
            with lock:
                if next(todo, None) is None:
                    return
            status, wall, _ = spawn_wait(cmd)
            with lock:
                lat.append(wall)
                if status != 0:
                    fails.append(status)

    t0 = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(parallel)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    return {"runs": n, "parallel": parallel, "elapsed_s": elapsed, "runs_per_s": n / elapsed,
            "p50_ms": percentile(lat, 0.5) * 1000, "p99_ms": percentile(lat, 0.99) * 1000,
            "max_ms": max(lat) * 1000, "failures": len(fails),
            "failure_statuses": sorted(set(fails))}


def throughput(args: argparse.Namespace) -> dict:
    run_many(args.cmd, 5, 1)  # warm-up
    return {"cmd": args.cmd, "cores": os.cpu_count(),
            "sequential": run_many(args.cmd, args.runs, 1),
            "parallel": run_many(args.cmd, args.runs, args.parallel)}


def status_kib(pid: int, field: str) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def memory(args: argparse.Namespace) -> dict:
    samples = []
    for _ in range(3):
        p = subprocess.Popen(args.cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        sup = init = None
        deadline = time.monotonic() + 0.6
        while time.monotonic() < deadline:  # the payload sleeps: both are set up by now
            time.sleep(0.05)
            kids = children(p.pid)
            if kids:
                init = kids[0]
        sup = status_kib(p.pid, "VmHWM")
        init_hwm = status_kib(init, "VmHWM") if init else None
        if p.wait() != 0:
            raise SystemExit(f"memory: run failed with {p.returncode}")
        samples.append({"supervisor_kib": sup, "init_kib": init_hwm})
    sup_v = [s["supervisor_kib"] for s in samples if s["supervisor_kib"]]
    init_v = [s["init_kib"] for s in samples if s["init_kib"]]
    return {"cmd": args.cmd, "samples": samples,
            "supervisor_peak_kib": max(sup_v) if sup_v else None,
            "init_peak_kib": max(init_v) if init_v else None}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["phases", "throughput", "memory"])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--parallel", type=int, default=4)
    ap.add_argument("--out", required=True)
    argv = sys.argv[1:]
    if "--" not in argv:
        ap.error("the command goes after --")
    cut = argv.index("--")
    args = ap.parse_args(argv[:cut])
    args.cmd = argv[cut + 1:]
    result = {"phases": phases, "throughput": throughput, "memory": memory}[args.what](args)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
