"""The cold path against bwrap (issue 20): nsrun / bwrap for one payload.

``nsrun --image NAME -- CMD`` (its defaults: seccomp, limits, all namespaces),
the same with ``--security-opt seccomp=unconfined``, and bwrap with bench.sh's
flags on the same rootfs, interleaved in an order that turns each round, so a
shared machine's drift in load affects every command alike: the wall time of each
run (posix_spawn to waitpid, as bench/measure.py).  Then, with perf installed, the
CPU time of every process of a run (perf stat's task-clock, counted in each
process and summed over the tree as they exit; wait4's rusage would miss what a
pid namespace's kernel-reaped processes used) and its page faults, in rounds of
``perf stat -r 10`` that turn like the runs.  CPU time is what a loaded machine
disturbs least; on a quiet one the wall ratio is the headline.  With --nsrun-b a
second build is measured in the same rounds (A/B); each --variant NAME=OPTIONS adds
nsrun with those options (what one default costs).

Usage (as the user whose runs it measures; rootless: stage a copy the user can read):
  NSRUN_IMAGES=... python3 bench/cold.py [-n 200] [--nsrun-b OTHER] build/nsrun
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import percentile, spawn_wait  # noqa: E402


def perf_stat(cmd: list[str], runs: int) -> tuple[float, float] | None:
    """perf stat -r runs of cmd: (mean task-clock ms, mean page faults), or None."""
    r = subprocess.run(["perf", "stat", "-x", ",", "-r", str(runs), "-e", "task-clock,page-faults", "--"] + cmd,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       check=False)
    vals = {}
    for line in r.stderr.splitlines():
        f = line.split(",")
        ev = f[2].split(":")[0] if len(f) > 2 else ""  # "task-clock:u" for a user
        if ev in ("task-clock", "page-faults"):
            try:
                vals[ev] = float(f[0])
            except ValueError:
                return None
    if r.returncode != 0 or len(vals) != 2:
        return None
    return vals["task-clock"], vals["page-faults"]


def image_rootfs(image: str) -> str:
    store = os.environ.get("NSRUN_IMAGES")
    if not store:
        raise SystemExit("NSRUN_IMAGES is not set: give --rootfs")
    return os.path.join(store, image, "rootfs")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=200, help="rounds (default 200)")
    ap.add_argument("--image", default="python")
    ap.add_argument("--rootfs", help="the image's rootfs for bwrap (default: $NSRUN_IMAGES/IMAGE/rootfs)")
    ap.add_argument("--cpu-rounds", type=int, default=6, help="rounds of perf stat -r 10 (default 6; 0: none)")
    ap.add_argument("--nsrun-b", help="a second nsrun build measured in the same rounds")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=OPTIONS",
                    help="also nsrun with these options (split on spaces), measured in the same rounds; "
                         "repeatable: what each default costs")
    ap.add_argument("nsrun", help="the nsrun binary")
    ap.add_argument("cmd", nargs="*", default=["/bin/true"], help="the payload (default /bin/true)")
    opts = ap.parse_args()

    rootfs = opts.rootfs or image_rootfs(opts.image)
    bwrap = shutil.which("bwrap")
    if not bwrap:
        raise SystemExit("bwrap is not installed")
    cmds = {"nsrun": [opts.nsrun, "--image", opts.image, "--"] + opts.cmd,
            "nsrun (seccomp=unconfined)": [opts.nsrun, "--security-opt", "seccomp=unconfined",
                                           "--image", opts.image, "--"] + opts.cmd}
    for v in opts.variant:
        name, sep, extra = v.partition("=")
        if not sep or not name:
            raise SystemExit(f"--variant {v!r}: expected NAME=OPTIONS")
        cmds[f"nsrun ({name})"] = [opts.nsrun] + extra.split() + ["--image", opts.image, "--"] + opts.cmd
    if opts.nsrun_b:
        cmds["nsrun B"] = [opts.nsrun_b, "--image", opts.image, "--"] + opts.cmd
    cmds["bwrap"] = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", rootfs, "/",
                     "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--uid", "65534", "--gid", "65534",
                     "--cap-drop", "ALL"] + opts.cmd
    names = list(cmds)
    wall: dict[str, list[float]] = {n: [] for n in names}
    cpu: dict[str, list[float]] = {n: [] for n in names}
    faults: dict[str, list[float]] = {n: [] for n in names}
    for n in names:  # warm-up: page cache, seccomp cache
        for _ in range(3):
            status, _, _ = spawn_wait(cmds[n])
            if status != 0:
                raise SystemExit(f"{n}: failed ({status}): {' '.join(cmds[n])}")
    load0 = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    for i in range(opts.n):
        for k in range(len(names)):
            n = names[(i + k) % len(names)]
            status, w, _ = spawn_wait(cmds[n])
            if status != 0:
                raise SystemExit(f"{n}: failed ({status})")
            wall[n].append(w * 1000)
    for i in range(opts.cpu_rounds if shutil.which("perf") else 0):
        for k in range(len(names)):
            n = names[(i + k) % len(names)]
            got = perf_stat(cmds[n], 10)
            if got:
                cpu[n].append(got[0])
                faults[n].append(got[1])
    load1 = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    bw_wall = statistics.median(wall["bwrap"])
    bw_cpu = statistics.median(cpu["bwrap"]) if cpu["bwrap"] else float("nan")
    print(f"{opts.n} rounds, interleaved, as uid {os.getuid()}, `{' '.join(opts.cmd)}`; "
          f"load average {load0} at the start, {load1} at the end")
    print()
    print("| command | wall median (ms) | 25 % | 75 % | wall / bwrap | CPU (ms) | CPU / bwrap | page faults |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for n in names:
        mw = statistics.median(wall[n])
        mc = statistics.median(cpu[n]) if cpu[n] else float("nan")
        pf = statistics.median(faults[n]) if faults[n] else float("nan")
        print(f"| {n} | {mw:.2f} | {percentile(wall[n], 0.25):.2f} | {percentile(wall[n], 0.75):.2f} | "
              f"{mw / bw_wall:.3f} | {mc:.2f} | {mc / bw_cpu:.3f} | {pf:.0f} |")
    if opts.cpu_rounds:
        print()
        print(f"CPU: median over {len(cpu['bwrap'])} rounds of the mean of `perf stat -r 10 -e task-clock` "
              "(every process of the run); page faults likewise.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
