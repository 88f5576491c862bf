#!/usr/bin/env python3
"""soak.py - many nsrun runs in a row, at once, and killed half-way; counts what went wrong.

Three phases, each optional:
  sequential  N runs one after the other, cycling through the outcome kinds below;
  concurrent  M runs, P at a time;
  faults      K runs whose nsrun is SIGKILLed at a random moment: half drawn
              uniformly over the first --fault-setup-ms of set-up, half uniformly
              over the run (the payload sleeps --fault-run-ms); after each kill no
              process of the container may survive, and the next run must work.

Before and after, the host is counted: this process's open fds, the mount points
of its mount namespace, the processes of its runs (marked in argv and environment),
the cgroups of its runs (nsrun-<pid of one of its nsrun>-<n>),
entries named *nsrun* (and, unless we are root, every entry we own) under the
temporary directories and the runtime directory ($XDG_RUNTIME_DIR).  One summary line per phase and a total:

  soak: phase=... runs=N unexpected=U leaked_fds=.. leaked_mounts=.. leaked_procs=..
        leaked_cgroups=.. leaked_files=.. runs_per_s=.. p50_ms=.. p99_ms=..

Exit status 0 when no run was unexpected and nothing leaked, 1 otherwise.
Runs are started with subprocess (fork+exec, no shell): the driver's cost per run
is well under a millisecond, small next to a run of nsrun (~10 ms).
"""
import argparse
import concurrent.futures
import os
import random
import signal
import subprocess
import sys
import time

# kind: (extra nsrun options, command after --, stdin bytes or None, accepted exit statuses)
# The probe is the tests' static nsrun-probe, bind-mounted at /mnt.
KINDS = [
    ("exit0", [], ["/mnt/nsrun-probe", "exit", "0"], None, {0}),
    ("exit3", [], ["/mnt/nsrun-probe", "exit", "3"], None, {3}),
    ("python", [], None, b"print(6 * 7)\n", {0}),
    ("timeout", ["--timeout", "0.2"], ["/mnt/nsrun-probe", "spin"], None, {124}),
    # fork bomb: --pids-limit stops it (EAGAIN -> probe exits 1)
    ("forkbomb", ["--pids-limit", "8", "--timeout", "10"], ["/mnt/nsrun-probe", "forkbomb", "3", "5000"],
     None, {1}),
    # memory hog: ended as out of memory (137) by the cgroup or by the supervisor's measure
    ("memhog", ["--memory", "32m"], ["/mnt/nsrun-probe", "memhog-via", "malloc", "256"], None, {137}),
    # output flood: 10 MB through a 64 KiB capture, kept draining
    ("flood", ["--capture", "--output-limit", "64k"], ["sh", "-c", "head -c 10000000 /dev/zero"], None, {0}),
    ("killed", [], ["/mnt/nsrun-probe", "kill-self", "9"], None, {137}),
]


# Every run carries the marker in nsrun's argv (so also in the cmdline of its clone,
# the container's init, and of the payload before its exec) and in the payload's
# environment: what the driver counts as left behind is its own, never another
# user's of the same machine.
MARKER = f"soak-{os.getpid()}"
NSRUN_PIDS = set()   # every nsrun started: its cgroups are named nsrun-<pid>-<n>


def argv_for(args, kind):
    name, opts, cmd, stdin, _ = kind
    base = [args.nsrun, "--image", args.image, "-v", f"{args.probe_dir}:/mnt:ro", "-e", f"NSRUN_SOAK={MARKER}"] + opts
    return base + (["-"] if cmd is None else ["--"] + cmd)


def run_one(args, kind):
    """Runs one kind; returns (ok, wall seconds, detail)."""
    argv = argv_for(args, kind)
    t0 = time.monotonic()
    with subprocess.Popen(argv, stdin=subprocess.PIPE if kind[3] else subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, close_fds=True) as p:
        NSRUN_PIDS.add(p.pid)
        try:
            out, err = p.communicate(kind[3], timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            return False, time.monotonic() - t0, f"{kind[0]}: hung for 60 s"
    wall = time.monotonic() - t0
    good = p.returncode in kind[4]
    if good and kind[0] == "python":
        good = out == b"42\n"
    if good and kind[0] == "flood":
        good = len(out) == 65536
    detail = "" if good else f"{kind[0]}: rc={p.returncode} out={out[:80]!r} err={err[:200]!r}"
    return good, wall, detail


# ---------------------------------------------------------------- host snapshot

def _uid_of(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("Uid:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def container_procs():
    """pid -> description: live processes of our runs (the marker in argv or environment)."""
    me, mine = os.getuid(), os.getpid()
    needle = MARKER.encode()
    found = {}
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == mine:
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                cmd = f.read()
            if not cmd:
                continue  # zombie or kernel thread
            if needle not in cmd:
                if _uid_of(d) != me and me != 0:
                    continue
                with open(f"/proc/{d}/environ", "rb") as f:
                    if b"NSRUN_SOAK=" + needle not in f.read():
                        continue
        except OSError:
            continue
        found[int(d)] = cmd.replace(b"\0", b" ").decode(errors="replace")[:120]
    return found


def mounts():
    with open("/proc/self/mountinfo") as f:
        out = set()
        for line in f:
            fields = line.split()
            sep = fields.index("-")
            out.add((fields[4], fields[sep + 1], fields[sep + 2]))
        return out


def cgroups():
    """The cgroups of our runs: nsrun names them nsrun-<its pid>-<n>."""
    found = set()
    for root, dirs, _ in os.walk("/sys/fs/cgroup"):
        for d in dirs:
            parts = d.split("-")
            if len(parts) >= 2 and parts[0] == "nsrun" and parts[1].isdigit() and int(parts[1]) in NSRUN_PIDS:
                found.add(os.path.join(root, d))
        if root.count("/") > 8:
            dirs[:] = []
    return found


def temp_files(args):
    dirs = {"/tmp", "/var/tmp", os.environ.get("TMPDIR", "/tmp")}
    if os.environ.get("XDG_RUNTIME_DIR"):
        dirs.add(os.environ["XDG_RUNTIME_DIR"])
    me = os.getuid()
    found = set()
    for d in dirs:
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for n in names:
            p = os.path.join(d, n)
            if p in args.ignore or any(n.startswith(pre) for pre in args.ignore_prefix):
                continue
            try:
                owner = os.lstat(p).st_uid
            except OSError:
                continue
            # root owns much of /tmp on a shared machine: as root only nsrun's own names count
            if "nsrun" in n or (owner == me and me != 0 and d != "/var/tmp"):
                found.add(p)
    return found


def fds():
    return set(os.listdir("/proc/self/fd"))


def snapshot(args):
    return {"fds": fds(), "mounts": mounts(), "procs": set(container_procs()), "cgroups": cgroups(),
            "files": temp_files(args)}


def leaks(args, before, settle_s=3.0):
    """New items of each kind since `before`; retried for settle_s (teardown may lag)."""
    deadline = time.monotonic() + settle_s
    while True:
        now = snapshot(args)
        new = {k: now[k] - before[k] for k in before}
        # an fd opened by listdir itself is not a leak
        new["fds"] = {fd for fd in new["fds"] if os.path.exists(f"/proc/self/fd/{fd}")}
        if not any(new.values()) or time.monotonic() >= deadline:
            return new
        time.sleep(0.2)


# ---------------------------------------------------------------- phases

def pct(sorted_vals, p):
    if not sorted_vals:
        return 0.0
    i = min(len(sorted_vals) - 1, max(0, int(round(p / 100.0 * len(sorted_vals) + 0.5)) - 1))
    return sorted_vals[i]


def report(phase, runs, unexpected, new, elapsed, walls, extra=""):
    walls = sorted(walls)
    line = (f"soak: phase={phase} runs={runs} unexpected={unexpected} "
            + " ".join(f"leaked_{k}={len(v)}" for k, v in new.items())
            + f" runs_per_s={runs / elapsed if elapsed else 0:.1f}"
            + f" p50_ms={pct(walls, 50) * 1000:.1f} p99_ms={pct(walls, 99) * 1000:.1f}" + extra)
    print(line, flush=True)
    for k, v in new.items():
        for item in sorted(v)[:5]:
            print(f"soak:   leaked {k}: {item}", file=sys.stderr)


def phase_sequential(args):
    before = snapshot(args)
    walls, bad = [], 0
    t0 = time.monotonic()
    for i in range(args.sequential):
        good, wall, detail = run_one(args, KINDS[i % len(KINDS)])
        walls.append(wall)
        if not good:
            bad += 1
            if bad <= 10:
                print(f"soak: unexpected (run {i}): {detail}", file=sys.stderr)
        if args.progress and (i + 1) % args.progress == 0:
            print(f"soak: ... {i + 1} sequential runs, {bad} unexpected, {time.monotonic() - t0:.0f} s",
                  file=sys.stderr, flush=True)
    elapsed = time.monotonic() - t0
    new = leaks(args, before)
    report("sequential", args.sequential, bad, new, elapsed, walls)
    return bad, new


def phase_concurrent(args):
    before = snapshot(args)
    walls, bad = [], 0
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.parallel) as ex:
        futs = [ex.submit(run_one, args, KINDS[i % len(KINDS)]) for i in range(args.concurrent)]
        for i, f in enumerate(futs):
            good, wall, detail = f.result()
            walls.append(wall)
            if not good:
                bad += 1
                if bad <= 10:
                    print(f"soak: unexpected (concurrent run {i}): {detail}", file=sys.stderr)
    elapsed = time.monotonic() - t0
    new = leaks(args, before)
    report("concurrent", args.concurrent, bad, new, elapsed, walls, f" parallel={args.parallel}")
    return bad, new


def marked_procs(marker):
    """pid -> cmdline of the live (not zombie) processes whose cmdline holds marker."""
    found = {}
    needle = marker.encode()
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if needle in cmd:
            found[int(d)] = cmd.replace(b"\0", b" ").decode(errors="replace")[:120]
    return found


def wait_marked_gone(marker, timeout_s):
    """Waits until no process carries marker; returns the survivors (pid -> cmdline)."""
    deadline = time.monotonic() + timeout_s
    while True:
        alive = marked_procs(marker)
        if not alive or time.monotonic() >= deadline:
            return alive
        time.sleep(0.01)


def phase_faults(args):
    """SIGKILL nsrun at a random moment of set-up or of the run."""
    rng = random.Random(args.seed)
    before = snapshot(args)
    survivors = next_failed = 0
    walls = []
    moments = {"setup": 0, "run": 0}
    run_ms = args.fault_run_ms
    t0 = time.monotonic()
    for i in range(args.faults):
        where = "setup" if i % 2 == 0 else "run"
        moments[where] += 1
        # set-up takes ~10 ms here; the run window starts after it
        delay_ms = rng.uniform(0, args.fault_setup_ms) if where == "setup" else \
            args.fault_setup_ms + rng.uniform(0, run_ms)
        # the marker is in nsrun's argv, so also in the cmdline of its clone (the
        # container's init) and of the payload before and after its exec
        marker = f"{MARKER}-fault-{i}"
        argv = [args.nsrun, "--image", args.image, "-v", f"{args.probe_dir}:/mnt:ro", "-e", f"NSRUN_SOAK={MARKER}",
                "--", "/mnt/nsrun-probe", "setsid-sleep", f"{run_ms / 1000:.3f}", marker]
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        NSRUN_PIDS.add(p.pid)
        time.sleep(delay_ms / 1000.0)
        p.kill()
        p.wait()
        # every process of the container dies with nsrun (pid 1's PDEATHSIG, then the
        # kernel kills its pid namespace)
        left = wait_marked_gone(marker, 3.0)
        if left:
            survivors += 1
            print(f"soak: fault {i} ({where}, {delay_ms:.2f} ms): survivors {left}", file=sys.stderr)
            for x in left:
                try:
                    os.kill(x, signal.SIGKILL)
                except OSError:
                    pass
        good, wall, detail = run_one(args, KINDS[0])
        walls.append(wall)
        if not good:
            next_failed += 1
            print(f"soak: fault {i}: the next run failed: {detail}", file=sys.stderr)
    elapsed = time.monotonic() - t0
    new = leaks(args, before)
    report("faults", args.faults, survivors + next_failed, new, elapsed, walls,
           f" kills_setup={moments['setup']} kills_run={moments['run']} survivors={survivors}"
           f" next_run_failed={next_failed}")
    return survivors + next_failed, new


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nsrun", default=os.environ.get("NSRUN", os.path.join(here, "../../build/nsrun")))
    ap.add_argument("--probe", default=os.environ.get("NSRUN_PROBE", os.path.join(here, "../../build/nsrun-probe")))
    ap.add_argument("--image", default="python")
    ap.add_argument("--sequential", type=int, default=10000)
    ap.add_argument("--concurrent", type=int, default=1000)
    ap.add_argument("--parallel", type=int, default=4 * (os.cpu_count() or 1))
    ap.add_argument("--faults", type=int, default=500)
    ap.add_argument("--fault-setup-ms", type=float, default=15.0, help="the set-up window (uniform)")
    ap.add_argument("--fault-run-ms", type=float, default=200.0, help="the run window (uniform)")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--progress", type=int, default=0, help="a stderr line every N sequential runs")
    ap.add_argument("--ignore", action="append", default=[], help="a path that is never a leak")
    ap.add_argument("--ignore-prefix", action="append", default=["nsrun-tests.", "nsrun-probe-cache.", "nsrun-check."],
                    help="a name prefix that is never a leak (default: the test suites' own scratch)")
    args = ap.parse_args()
    args.nsrun = os.path.abspath(args.nsrun)
    args.probe_dir = os.path.dirname(os.path.abspath(args.probe))
    if args.seed is None:
        args.seed = int.from_bytes(os.urandom(4), "little")
    print(f"soak: nsrun={args.nsrun} image={args.image} uid={os.getuid()} seed={args.seed}", flush=True)

    run_one(args, KINDS[0])  # warm the page cache and the seccomp cache before the snapshots
    before = snapshot(args)
    total_bad, total_runs = 0, 0
    t0 = time.monotonic()
    for n, phase in ((args.sequential, phase_sequential), (args.concurrent, phase_concurrent),
                     (args.faults, phase_faults)):
        if n > 0:
            bad, _ = phase(args)
            total_bad += bad
            total_runs += n
    new = leaks(args, before)
    elapsed = time.monotonic() - t0
    print(f"soak: total runs={total_runs} unexpected={total_bad} "
          + " ".join(f"leaked_{k}={len(v)}" for k, v in new.items()) + f" seconds={elapsed:.1f}", flush=True)
    return 0 if total_bad == 0 and not any(new.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
