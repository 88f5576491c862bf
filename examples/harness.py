"""Grade untrusted submissions with nsrun: run each against test cases, report per case.
Usage: PYTHONPATH=bindings/python python3 examples/harness.py SUBMISSION.py"""
import sys
import nsrun

CASES = [("2 3\n", "5\n"), ("10 -4\n", "6\n"), ("0 0\n", "0\n")]
code = open(sys.argv[1], encoding="utf-8").read() if len(sys.argv) > 1 else \
    "a, b = map(int, input().split()); print(a + b)"
for stdin, want in CASES:
    r = nsrun.run(code, stdin=stdin, timeout=2, memory="128m", pids_limit=16, output_limit=64 << 10)
    verdict = ("pass" if r.ok and r.stdout == want else "wrong answer" if r.ok
               else "time limit" if r.timed_out else f"runtime error ({r.signal or r.exit_code})")
    print(f"{stdin.strip():>8} -> {verdict:<22} {r.wall_time_ms} ms, {r.max_rss_kib} KiB")
