"""What choosing the isolation tier costs a run's start-up (issue 16).

A default run (no --isolation: full is tried at once, the tiers are probed only
when full's set-up fails) beside ``--isolation full`` (no choice at all), and,
with --before BINARY, the default run of another build (one that probes before
every run), all on ``--image python -- /bin/true``.  The runs are interleaved, in
an order that turns each round, so drift of a shared machine's load affects every
command alike; the clock is bench/measure.py's (posix_spawn to waitpid).  Prints a
Markdown table: medians, quartiles, and each median against ``--isolation full``'s.

Usage (as the user whose runs it measures; rootless: stage a copy the user can read):
  NSRUN_IMAGES=... python3 bench/tier_start.py [-n 100] [--before OLD_NSRUN] build/nsrun
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import RunFailed, interleaved, table_row  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=100, help="runs of each command (default 100)")
    ap.add_argument("--before", help="another nsrun whose default run is measured too")
    ap.add_argument("nsrun", help="the nsrun binary")
    opts = ap.parse_args()

    payload = ["--image", "python", "--", "/bin/true"]
    cmds = {
        "default run (no --isolation)": [opts.nsrun] + payload,
        "--isolation full": [opts.nsrun, "--isolation", "full"] + payload,
    }
    if opts.before:
        cmds["default run, before (probes first)"] = [opts.before] + payload
    try:
        times, failed = interleaved(cmds, opts.n)
    except RunFailed as e:
        print(e, file=sys.stderr)
        return 1
    for n, why in failed.items():
        print(f"{n}: failed: {why}", file=sys.stderr)
        return 1

    ref = statistics.median(times["--isolation full"])
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"{opts.n} runs of each, interleaved, as uid {os.getuid()}; load average {load} at the end")
    print()
    print("| command | median (ms) | 25 % | 75 % | median / --isolation full |")
    print("|---|---:|---:|---:|---:|")
    for n, xs in times.items():
        print(table_row(n, xs, statistics.median(xs) / ref))
    return 0


if __name__ == "__main__":
    sys.exit(main())
