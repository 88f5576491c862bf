"""Writes bench/RESULTS.md (and the table in README.md) from a bench/bench.sh run.

Usage: report.py --stage DIR --runs N --results bench/RESULTS.md [--readme README.md]

Every section of RESULTS.md this script does not write (its title is not in
WRITTEN) is kept as it is, in its order, after the ones it writes: other benches
and notes add their own.  KEPT are those that get a placeholder when absent.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
from pathlib import Path

KEPT = {
    "## Optimisations tried": "(notes kept across runs: edit them in bench/RESULTS.md)",
    "## Reliability (make soak)": "recorded by make soak",
    "## Services (Redis start-up)": "recorded by the Redis start-up bench",
    "## Memory limit without a cgroup (bench/memwatch.sh)": "recorded by bench/memwatch.sh",
    "## Choosing the isolation tier (bench/tier_start.py)": "recorded by bench/tier_start.py",
    "## Warm pool (bench/pool.py)": "recorded by bench/pool.py",
}
# the sections main() writes (the strace one only when it has a trace); any other
# section of RESULTS.md is someone else's and is kept
WRITTEN = ("## Targets", "## Start-up, one hyperfine run per payload",
           "## Where nsrun's time goes (`--debug-timing`, `/bin/true`)",
           "## Throughput (`nsrun --image python -- /bin/true`)", "## Memory", "## How each tool was run",
           "## System calls of one run (`strace -f -c`, all three processes)")
README_BEGIN = "<!-- bench-table:begin (written by make bench) -->"
README_END = "<!-- bench-table:end -->"

PAYLOADS = {
    "true": "`/bin/true`",
    "python": "`python3 -c pass`",
    "hello": "`examples/hello.py`",
}


def sh(*cmd: str) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def machine() -> list[str]:
    cpu = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_kib = 0
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal:"):
                mem_kib = int(line.split()[1])
    except OSError:
        pass
    os_name = ""
    try:
        for line in open("/etc/os-release"):
            if line.startswith("PRETTY_NAME="):
                os_name = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    load = " ".join(open("/proc/loadavg").read().split()[:3])
    try:
        load0 = " ".join((STAGE / "load-start").read_text().split()[:3])
    except OSError:
        load0 = "?"
    commit = sh("git", "-C", str(Path(__file__).resolve().parent.parent), "describe", "--always", "--dirty")
    tools = []
    for name, cmd in (("hyperfine", ["hyperfine", "--version"]), ("bwrap", ["bwrap", "--version"]),
                      ("crun", ["crun", "--version"]), ("podman", ["podman", "--version"])):
        out = sh(*cmd).splitlines()
        tools.append(f"{name} {out[0].split()[-1] if out else 'absent'}")
    return [
        f"- {os_name}, kernel {platform.release()}, {os.cpu_count()} CPUs ({cpu}), "
        f"{mem_kib // 1024} MiB RAM",
        f"- load average (1, 5, 15 min) at the start {load0}, at the end {load} on {os.cpu_count()} CPUs: "
        "the machine is shared, other jobs ran during the bench",
        f"- nsrun at commit {commit or '?'}, linked static-pie",
        f"- {', '.join(tools)}",
    ]


STAGE = Path(".")


def load_json(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def groups(stage: Path) -> dict[str, dict[str, dict]]:
    out = {}
    for p in PAYLOADS:
        data = load_json(stage / f"group-{p}.json")
        if data:
            out[p] = {r["command"]: r for r in data["results"]}
    return out


def ms(x: float | None) -> str:
    return "-" if x is None else f"{x * 1000:.1f}"


def ratio(a: dict | None, b: dict | None) -> float | None:
    if not a or not b:
        return None
    return a["median"] / b["median"]


def fmt_ratio(r: float | None) -> str:
    return "-" if r is None else f"{r:.2f}"


def peers(stage: Path) -> dict[str, tuple[str, str]]:
    out = {}
    try:
        for line in (stage / "peers.tsv").read_text().splitlines():
            name, status, why = (line.split("\t") + ["", ""])[:3]
            out[name] = (status, why)
    except OSError:
        pass
    return out


def phase_table(ph: dict | None) -> tuple[list[str], dict[str, float], float, float]:
    """Lines of the phase table, median per phase, median sum and median wall (us)."""
    if not ph or not ph.get("runs"):
        return ["(not measured)"], {}, 0.0, 0.0
    runs = ph["runs"]
    names: list[str] = []
    for r in runs:
        for k in r["phases_us"]:
            if k not in names:
                names.append(k)
    med = {k: statistics.median([r["phases_us"].get(k, 0) for r in runs]) for k in names}
    total_key = next((k for k in names if k.startswith("total")), None)
    totals = [r["phases_us"].get(total_key, 0) for r in runs] if total_key else []
    walls = [r["wall_us"] for r in runs]
    shares = [t / w for t, w in zip(totals, walls) if w]
    lines = ["| phase | median µs | share of the total |", "|---|---:|---:|"]
    tot = med.get(total_key, 0) if total_key else 0
    for k in names:
        if k == total_key:
            continue
        lines.append(f"| {k} | {med[k]:.0f} | {100 * med[k] / tot:.1f}% |" if tot else f"| {k} | {med[k]:.0f} | |")
    if total_key:
        lines.append(f"| **{total_key}** | **{tot:.0f}** | |")
    lines.append(f"| wall time measured outside nsrun (spawn to exit) | {statistics.median(walls):.0f} | |")
    within = sum(1 for s in shares if s >= 0.9)
    lines.append("")
    lines.append(f"Sum of the phases / measured wall time: median {100 * statistics.median(shares):.1f}%, "
                 f"min {100 * min(shares):.1f}%, max {100 * max(shares):.1f}% over {len(shares)} runs; "
                 f"{within} of {len(shares)} runs within 10% "
                 f"(**{'PASS' if statistics.median(shares) >= 0.9 else 'FAIL'}**: the check is the median). "
                 "The rest is outside nsrun's clock: the caller's spawn, the time nsrun waits for a CPU before "
                 "main (the first phase counts the CPU time it used, not its waits) and the exit of the process.")
    return lines, med, statistics.median(totals) if totals else 0.0, statistics.median(walls)


def kept_sections(results: Path) -> dict[str, str]:
    """Bodies of the sections of the current RESULTS.md this script does not write,
    in their order (dicts keep it)."""
    out = {}
    try:
        text = results.read_text()
    except OSError:
        return out
    parts = re.split(r"(?m)^(## .*)$", text)
    for i in range(1, len(parts) - 1, 2):
        title = parts[i].strip()
        if title not in WRITTEN:
            out[title] = parts[i + 1].strip("\n")
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--stage", required=True, type=Path)
    ap.add_argument("--runs", type=int, default=0)
    ap.add_argument("--results", required=True, type=Path)
    ap.add_argument("--readme", type=Path)
    a = ap.parse_args()
    st = a.stage
    global STAGE
    STAGE = st
    g = groups(st)
    pe = peers(st)
    ph = load_json(st / "phases.json")
    tp = load_json(st / "throughput.json")
    mem = load_json(st / "memory.json")
    how = (st / "how.txt").read_text().strip() if (st / "how.txt").exists() else ""
    kept = kept_sections(a.results)

    t = g.get("true", {})
    py = g.get("python", {})
    he = g.get("hello", {})
    n = t.get("nsrun")
    par = (tp or {}).get("parallel", {})
    sup_kib = (mem or {}).get("supervisor_peak_kib")
    init_kib = (mem or {}).get("init_peak_kib")
    head = [
        ("nsrun (defaults, seccomp on) / bwrap (no seccomp), `/bin/true`", ratio(n, t.get("bwrap")), 0.8, "le"),
        ("nsrun / kernel floor (clone+maps+mounts+pivot_root+exec), `/bin/true`",
         ratio(n, t.get("floor: clone+maps+mounts+pivot+exec")), 1.3, "le"),
        ("nsrun / bare on the host, `python3 -c pass`", ratio(py.get("nsrun"), py.get("bare (host)")), 1.35, "le"),
        ("nsrun / bare on the host, `examples/hello.py`", ratio(he.get("nsrun"), he.get("bare (host)")), 1.35, "le"),
        ("nsrun / bare from the image rootfs (its own python3 and stdlib), `python3 -c pass`",
         ratio(py.get("nsrun"), py.get("bare (image rootfs)")), 1.35, "le"),
        ("nsrun / bare from the image rootfs, `examples/hello.py`",
         ratio(he.get("nsrun"), he.get("bare (image rootfs)")), 1.35, "le"),
        ("nsrun / crun, `/bin/true`", ratio(n, t.get("crun")), 0.35, "le"),
        ("nsrun / podman, `/bin/true`", ratio(n, t.get("podman")), 0.05, "le"),
        (f"runs/s of `/bin/true` at parallelism {par.get('parallel', '?')} ({(tp or {}).get('cores', '?')} cores), "
         f"{par.get('failures', '?')} failures", par.get("runs_per_s"), 100, "ge"),
        ("supervisor peak RSS (MiB)", sup_kib / 1024 if sup_kib else None, 2, "le"),
    ]
    lines = ["# nsrun start-up: benchmark results", "",
             f"Written by `make bench` (bench/bench.sh, bench/report.py) on "
             f"{datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}, "
             f"hyperfine -N, {a.runs} runs per command after 3 warm-ups, as the unprivileged user.",
             "", *machine(), "",
             "Ratios are the headline: every ratio compares medians from one hyperfine invocation, so both "
             "sides ran under the same load; absolute times on this shared machine move with its load.", "",
             "## Targets", "",
             "| measure | target | measured | met |", "|---|---:|---:|:---:|"]
    missed = []
    for label, val, target, how_cmp in head:
        if val is None:
            lines.append(f"| {label} | {'≤' if how_cmp == 'le' else '≥'} {target} | not measured | - |")
            continue
        ok = val <= target if how_cmp == "le" else val >= target
        if not ok:
            missed.append(label)
        shown = f"{val:.3f}" if val < 1 and how_cmp == "le" else f"{val:.2f}" if how_cmp == "le" else f"{val:.0f}"
        lines.append(f"| {label} | {'≤' if how_cmp == 'le' else '≥'} {target} | {shown} | {'yes' if ok else '**no**'} |")
    lines.append("")

    # the start-up tables
    lines += ["## Start-up, one hyperfine run per payload", "",
              "Milliseconds; `nsrun / this` is the ratio of the medians.", ""]
    for p, title in PAYLOADS.items():
        res = g.get(p)
        if not res:
            lines += [f"### {title}", "", "(not measured)", ""]
            continue
        base = res.get("nsrun")
        lines += [f"### {title}", "", "| command | median | mean ± σ | min | user | system | nsrun / this |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        for name, r in res.items():
            lines.append(f"| {name} | {ms(r['median'])} | {ms(r['mean'])} ± {ms(r['stddev'])} | {ms(r['min'])} | "
                         f"{ms(r['user'])} | {ms(r['system'])} | {fmt_ratio(ratio(base, r))} |")
        for peer in ("bwrap", "crun", "podman"):
            status, why = pe.get(peer, ("", ""))
            if status and status != "ok":
                lines.append(f"| {peer} | not run: {why} | | | | | |")
        lines.append("")

    # phases
    pl, med, tot, wall = phase_table(ph)
    lines += ["## Where nsrun's time goes (`--debug-timing`, `/bin/true`)", "",
              f"Median over {len((ph or {}).get('runs', []))} runs of `nsrun --debug-timing --image python -- /bin/true` "
              "(bench/measure.py phases, run at nice -10 when the bench runs as root: the check is about what "
              "nsrun's clock covers, not speed); each phase ends at a stamp made by the supervisor, the "
              "container's init or the payload in a shared page (runtime/timing.c). The wall time is taken "
              "around posix_spawn and waitpid.", "", *pl, ""]
    if missed and med:
        top = sorted(((v, k) for k, v in med.items() if not k.startswith("total")), reverse=True)[:4]
        lines += ["Targets missed: " + "; ".join(missed) + ".", "",
                  "The phases that cost the most (median µs): " +
                  ", ".join(f"{k} {v:.0f}" for v, k in top) + ". See \"Optimisations tried\" below.", ""]

    # throughput and memory
    lines += ["## Throughput (`nsrun --image python -- /bin/true`)", ""]
    if tp:
        lines += ["| mode | runs | runs/s | p50 ms | p99 ms | max ms | failures |", "|---|---:|---:|---:|---:|---:|---:|"]
        for mode in ("sequential", "parallel"):
            r = tp[mode]
            label = mode if mode == "sequential" else f"parallel {r['parallel']}"
            lines.append(f"| {label} | {r['runs']} | "
                         f"{r['runs_per_s']:.1f} | {r['p50_ms']:.1f} | {r['p99_ms']:.1f} | {r['max_ms']:.1f} | "
                         f"{r['failures']} |")
    else:
        lines.append("(not measured)")
    lines += ["", "## Memory", ""]
    if mem:
        lines += [f"Peak RSS (VmHWM) while the payload (`sleep 1`) runs, the highest of 3 runs: supervisor "
                  f"**{sup_kib} KiB**, the container's pid 1 **{init_kib} KiB** (pid 1 is a fork of the "
                  "supervisor, so pages they share count in both).", ""]
    else:
        lines += ["(not measured)", ""]

    # how
    lines += ["## How each tool was run", "",
              f"- Namespace: {how}",
              "- bare (host): the payload run directly; bare (image rootfs): the image's own ld.so, libraries "
              "and binaries run without any isolation "
              "(`ROOTFS/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 --library-path ROOTFS/usr/lib/x86_64-linux-gnu "
              "ROOTFS/usr/bin/...`).",
              "- floor: `bench/floor-clone.c` (clone with nsrun's seven namespace flags, `_exit`) and "
              "`bench/floor-run.c` (clone, id maps, private propagation, rootfs bound read-only, proc, tmpfs /dev "
              "with six device binds, tmpfs /tmp, pivot_root, capabilities cleared, no_new_privs, exec; no init "
              "process, no second user namespace, no seccomp), both static.",
              "- nsrun: `nsrun --image python -- CMD` with its defaults (all namespaces, read-only pivot_root, "
              "/proc with masks, /dev, /tmp, caps dropped, no_new_privs, the default seccomp profile, limits); "
              "hello.py in FILE mode (`nsrun --image python hello.py`).",
              "- bwrap: `bwrap --unshare-all --die-with-parent --new-session --ro-bind ROOTFS / --proc /proc "
              "--dev /dev --tmpfs /tmp --uid 65534 --gid 65534 --cap-drop ALL CMD` (hello.py bound read-only "
              "into /tmp).",
              "- crun: `crun run` of bundles generated from `crun spec --rootless` (user, mount, pid, net, ipc, "
              "uts, cgroup namespaces; read-only root; /proc, tmpfs /dev with devpts, shm and mqueue; tmpfs "
              "/tmp; no capabilities; no_new_privs; no /sys; no seccomp, like bwrap).",
              "- podman: `podman run --rm --network none` of the same rootfs imported with `podman import` "
              "into a store of the bench's own (overlay driver, cgroupfs manager, no events log).", ""]
    fails = st / "failures.txt"
    if fails.exists():
        lines += ["**Failures during the timed runs:**", "", *[f"- {x}" for x in fails.read_text().splitlines()], ""]
    status_lines = [f"- {k}: {'ran' if s == 'ok' else 'could not run: ' + w}" for k, (s, w) in pe.items()]
    if status_lines:
        lines += ["Probes before the runs:", "", *status_lines, ""]

    strace = st / "strace.txt"
    if strace.exists():
        body = strace.read_text().strip().splitlines()
        lines += ["## System calls of one run (`strace -f -c`, all three processes)", "", "```",
                  *body[:22], "```", ""]

    for title, body in kept.items():
        lines += [title, "", body, ""]
    for title, placeholder in KEPT.items():
        if title not in kept:
            lines += [title, "", placeholder, ""]

    a.results.write_text("\n".join(lines).rstrip() + "\n")
    print("\n".join(lines[lines.index("## Targets"):lines.index("## Start-up, one hyperfine run per payload")]))

    if a.readme and a.readme.exists():
        table = lines[lines.index("## Targets") + 2:lines.index("## Start-up, one hyperfine run per payload") - 1]
        text = a.readme.read_text()
        if README_BEGIN in text and README_END in text:
            pre, rest = text.split(README_BEGIN, 1)
            _, post = rest.split(README_END, 1)
            when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
            block = "\n".join([README_BEGIN, "", *table, "",
                               f"Medians from `make bench` on {when}, rootless, on a shared {os.cpu_count()}-CPU "
                               "machine under other jobs' load; the times, the phases and how each tool was run "
                               "are in bench/RESULTS.md.", "",
                               README_END])
            a.readme.write_text(pre + block + post)
    return 0


if __name__ == "__main__":
    sys.exit(main())
