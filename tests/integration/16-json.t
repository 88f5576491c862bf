#!/bin/bash
# --json: one result document per run (docs/result.schema.json), every field checked, for a
# normal exit, a non-zero exit, SIGSEGV, a timeout, a memory limit, a fork bomb, 10 MiB and
# 1 GiB of output (nsrun's own memory stays bounded), invalid UTF-8, an nsrun error (missing
# image), and B31 (5 MB on both streams neither deadlocks nor loses bytes).
#
# Needs: python3 with jsonschema (Debian: python3-jsonschema); /usr/bin/time (Debian: time) for
# the peak-RSS measurement (without it /proc/PID/status VmHWM is polled instead).
# NSRUN_RESULT_SCHEMA overrides the schema (default: ../../docs/result.schema.json from here).
. "$(dirname "$0")/../lib.sh"
require_all

SCHEMA=${NSRUN_RESULT_SCHEMA:-$TESTS_DIR/../docs/result.schema.json}
[ -f "$SCHEMA" ] || skip_all "no result schema at $SCHEMA (copy docs/ next to tests/ or set NSRUN_RESULT_SCHEMA)"

PY=
for c in ${NSRUN_PYTHON:-} python3 /usr/bin/python3; do
	if "$c" -c 'import jsonschema' >/dev/null 2>&1; then PY=$c; break; fi
done
[ -n "$PY" ] || skip_all "no python3 with the jsonschema module (Debian: apt-get install python3-jsonschema)"

VERSION=$("$NSRUN" --version | awk 'NR == 1 { print $3 }')
DOC="$TESTTMP/result.json"

# ---------------------------------------------------------------- the checker
# jcheck.py schema DOC SCHEMA          -> validates; prints the errors
# jcheck.py fields DOC RC ELAPSED SPEC -> compares EVERY field of DOC with BASE updated by SPEC
#   (a Python dict; "limits" is merged key by key). A field of the document that the spec does
#   not name is itself a failure, so no field goes unchecked. Matchers: Between(lo, hi),
#   Re(regex), Absent (the key must not be there), OneOf(a, b).
cat >"$TESTTMP/jcheck.py" <<'EOF'
import base64, json, os, re, sys

class Between:
    def __init__(s, lo, hi): s.lo, s.hi = lo, hi
    def ok(s, v): return type(v) is int and s.lo <= v <= s.hi
    def __repr__(s): return f"an integer in [{s.lo}, {s.hi}]"
class Re:
    def __init__(s, rx): s.rx = rx
    def ok(s, v): return isinstance(v, str) and re.search(s.rx, v, re.S) is not None
    def __repr__(s): return f"a string matching /{s.rx}/"
class OneOf:
    def __init__(s, *c): s.c = c
    def ok(s, v): return any(match(x, v) for x in s.c)
    def __repr__(s): return "one of " + " | ".join(map(repr, s.c))
class _Absent:
    def __repr__(s): return "absent"
Absent = _Absent()

def match(want, got):
    if hasattr(want, "ok"): return want.ok(got)
    if isinstance(want, dict):
        return isinstance(got, dict) and want.keys() == got.keys() and all(match(want[k], got[k]) for k in want)
    # exact: same JSON type (True is not 1) and value
    return type(want) is type(got) and want == got

def short(v):
    r = repr(v)
    return r if len(r) < 300 else r[:300] + f"... ({len(v) if hasattr(v, '__len__') else '?'} long)"

def main(argv):
    mode, path = argv[1], argv[2]
    try:
        with open(path, "rb") as f: raw = f.read()
        doc = json.loads(raw)
    except Exception as e:
        print(f"no JSON document in {path}: {e}"); return 1

    if mode == "schema":
        import jsonschema
        schema = json.load(open(argv[3]))
        errs = sorted(jsonschema.Draft202012Validator(schema).iter_errors(doc), key=str)
        for e in errs[:10]:
            print(f"at {'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message[:300]}")
        return 1 if errs else 0

    rc, elapsed_ms = int(argv[3]), int(float(argv[4]) * 1000)
    version, spec_src = argv[5], argv[6]
    ncpu = os.cpu_count() or 1
    cpu = Between(0, elapsed_ms * ncpu + 50)
    # pids are cgroup limits where the host delegates a cgroup (tests/vm), rlimits elsewhere; memory
    # is a cgroup limit there, a cgroup v1 one as root on a hybrid host, else the supervisor's
    # measure of real use: never an rlimit (26-memory-real-use.t checks which one is used where)
    RLIMIT_OR_CGROUP = OneOf("rlimit", "cgroup")
    MEMORY_HOW = OneOf("cgroup", "cgroup-v1", "supervisor")
    base = {
        "schema": 1, "nsrun_version": version,
        "status": "exited", "exit_code": 0, "signal": None,
        "timed_out": False, "oom_killed": False, "error": None,
        "wall_time_ms": Between(1, elapsed_ms + 50),
        "cpu_user_ms": cpu, "cpu_system_ms": cpu,
        # container: the cgroup's cpu.stat (tests/vm); waited: getrusage of the init (this host)
        "cpu_time_scope": OneOf("waited", "container"),
        "max_rss_kib": Between(100, 1 << 20),
        # memory: the cgroup's peak, or the supervisor's; pids: null without a pids cgroup (this host)
        "memory_peak_bytes": OneOf(None, Between(1, 1 << 40)), "pids_peak": OneOf(None, Between(1, 1 << 22)),
        "stdout": "", "stdout_truncated": False, "stdout_base64": Absent,
        "stderr": "", "stderr_truncated": False, "stderr_base64": Absent,
        "image": "python",
        # --network none; ports only with -p (22-publish-tmpfs.t checks those)
        "network": "none", "ports": Absent,
        # the tier the run got: full on this machine (25-tiers.t checks the others)
        "isolation": "full",
        # who made the run's cgroup: nsrun (root here), a systemd scope (tests/vm), none (the
        # unprivileged user here); 19-cgroup-host.t checks which one where
        "cgroup_manager": OneOf(None, "cgroupfs", "systemd"),
        "limits": {
            "memory_bytes": {"value": 512 << 20, "enforced": MEMORY_HOW},
            "pids": {"value": 128, "enforced": RLIMIT_OR_CGROUP},
            "cpus": {"value": None, "enforced": "none"},
            "cpu_time_ms": {"value": None, "enforced": "none"},
            # the limits of the container user namespace (half those of the caller); none where
            # /proc/sys is read-only, or when nsrun failed before planning them
            "inotify_instances": OneOf({"value": Between(1, 1 << 31), "enforced": OneOf("userns", "none")},
                                       {"value": None, "enforced": "none"}),
            "inotify_watches": OneOf({"value": Between(1, 1 << 31), "enforced": OneOf("userns", "none")},
                                     {"value": None, "enforced": "none"}),
            # System V IPC of the container's IPC namespace: at most --memory each (none where
            # /proc/sys is read-only, as the inotify limits)
            "ipc_bytes": OneOf({"value": 512 << 20, "enforced": "ipcns"}, {"value": None, "enforced": "none"}),
            "timeout_ms": {"value": 30000, "enforced": "supervisor"},
            "tmpfs_bytes": {"value": 64 << 20, "enforced": "tmpfs"},
            "output_bytes": {"value": 1 << 20, "enforced": "supervisor"},
        },
    }
    spec = eval(spec_src, {"Between": Between, "Re": Re, "OneOf": OneOf, "Absent": Absent,
                           "RLIMIT_OR_CGROUP": RLIMIT_OR_CGROUP, "MEMORY_HOW": MEMORY_HOW,
                           "b64": lambda b: base64.b64encode(b).decode(), "MiB": 1 << 20,
                           "ELAPSED_MS": elapsed_ms, "NCPU": ncpu})
    want = dict(base)
    want["limits"] = dict(base["limits"], **spec.pop("limits", {}))
    want.update(spec)
    for s in ("stdout", "stderr"):   # the byte count follows from exact, untruncated text
        if f"{s}_bytes" not in want and isinstance(want[s], str) and want[f"{s}_truncated"] is False:
            want[f"{s}_bytes"] = len(want[s].encode("utf-8"))

    bad = []
    if doc.get("exit_code") != rc:
        bad.append(f"exit_code {doc.get('exit_code')!r} is not what nsrun exited with ({rc})")
    for k, w in want.items():
        if w is Absent:
            if k in doc: bad.append(f"{k}: want absent, got {short(doc[k])}")
        elif k not in doc:
            bad.append(f"{k}: missing (want {short(w)})")
        elif k == "limits" and isinstance(doc[k], dict):
            for lk, lw in w.items():
                if not match(lw, doc[k].get(lk)): bad.append(f"limits.{lk}: want {lw}, got {doc[k].get(lk)}")
            for lk in doc[k]:
                if lk not in w: bad.append(f"limits.{lk}: unchecked field {short(doc[k][lk])}")
        elif not match(w, doc[k]):
            bad.append(f"{k}: want {short(w)}, got {short(doc[k])}")
    for k in doc:
        if k not in want: bad.append(f"{k}: unchecked field {short(doc[k])}")
    print("\n".join(bad))
    return 1 if bad else 0

if sys.argv[1] != "serve":
    sys.exit(main(sys.argv))
# jcheck.py serve: the checks of the whole file in one process (importing jsonschema
# costs more than a check). A request is a line on stdin naming a file of the
# arguments above, each ended by a NUL; the answer is the check's output, then a line
# "@@jcheck-end@@ STATUS"
import contextlib, io
for line in sys.stdin:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        try:
            with open(line.rstrip("\n"), encoding="utf-8") as f:
                rc = main(["jcheck.py"] + f.read().split("\0")[:-1])
        except Exception as e:
            print(f"the checker failed: {e!r}")
            rc = 2
    out = buf.getvalue()
    sys.stdout.write(out + ("" if out.endswith("\n") or not out else "\n") + f"@@jcheck-end@@ {rc}\n")
    sys.stdout.flush()
EOF

# json_run NSRUN-ARGS... — nsrun --json $DOC ARGS with the hang guard (sets RC, OUT, ERR, ELAPSED)
json_run() { rm -f "$DOC"; run_nsrun --json "$DOC" "$@"; }

# the checker, started once for the file (jcheck.py serve)
coproc JCHECK { exec "$PY" "$TESTTMP/jcheck.py" serve 2>&1; }
# jcheck ARGS... — one check (jcheck.py's arguments) by the checker; sets JOUT to its
# output, returns its status (2 when the checker does not answer)
jcheck() {
	local line rc=''
	JOUT=''
	printf '%s\0' "$@" >"$TESTTMP/jcheck.req"
	if [ -z "${JCHECK[1]:-}" ] || ! { echo "$TESTTMP/jcheck.req" >&"${JCHECK[1]}"; } 2>/dev/null; then
		JOUT="the checker (jcheck.py serve) is gone"
		return 2
	fi
	while IFS= read -r -t 120 line <&"${JCHECK[0]}"; do
		case $line in
		"@@jcheck-end@@ "*) rc=${line#* }; break ;;
		esac
		JOUT+=$line$'\n'
	done
	[ -n "$rc" ] || { JOUT+="(no answer from the checker)"; return 2; }
	return "$rc"
}

# expect DESC SPEC — the document validates against the schema, and every field is as SPEC says
expect() {
	if jcheck schema "$DOC" "$SCHEMA"; then
		ok "$1: valid against result.schema.json"
	else
		not_ok "$1: valid against result.schema.json" "$JOUT" "$(_ctx)"
	fi
	if jcheck fields "$DOC" "$RC" "$ELAPSED" "$VERSION" "$2"; then
		ok "$1: every field as expected"
	else
		not_ok "$1: every field as expected" "$JOUT" "$(_ctx)"
	fi
}

# jfield EXPR — a Python expression over the document d (e.g. "len(d['stdout'])")
jfield() { "$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$DOC" "$1" 2>&1; }

# ---------------------------------------------------------------- normal exit
cat >"$TESTTMP/normal.py" <<'EOF'
import sys
b = b"x" * (40 << 20)            # 40 MiB touched: max_rss_kib must see it
print("h\u00e9llo", len(b))
print("warn", file=sys.stderr)
EOF
chmod 644 "$TESTTMP/normal.py"
json_run --image python "$TESTTMP/normal.py"
assert_eq "normal exit: rc 0, nothing on stdout or stderr (all captured)" "0||" "$RC|$OUT|$ERR"
expect "normal exit" '{"stdout": "h\u00e9llo 41943040\n", "stderr": "warn\n",
	"max_rss_kib": Between(40 * 1024, 512 * 1024), "wall_time_ms": Between(1, ELAPSED_MS + 50)}'

# --json - : the document is the whole of stdout, the payload's output is inside it
run_nsrun --json - --image python -- sh -c 'echo out; echo err >&2; exit 0'
printf '%s' "$OUT" >"$DOC"
assert_eq "--json -: rc 0, stderr empty" "0|" "$RC|$ERR"
expect "--json -" '{"stdout": "out\n", "stderr": "err\n", "max_rss_kib": Between(1, 1 << 20)}'

# every limit set: the document reports the values asked for
json_run --image python --memory 256m --pids-limit 32 --cpu-time 5 --timeout 7.5 --tmpfs-size 16m \
	--output-limit 2k -- true
expect "limits as given" '{"max_rss_kib": Between(1, 1 << 20), "limits": {
	"memory_bytes": {"value": 256 << 20, "enforced": MEMORY_HOW},
	"ipc_bytes": {"value": 256 << 20, "enforced": "ipcns"},
	"pids": {"value": 32, "enforced": RLIMIT_OR_CGROUP},
	"cpu_time_ms": {"value": 5000, "enforced": RLIMIT_OR_CGROUP},
	"timeout_ms": {"value": 7500, "enforced": "supervisor"},
	"tmpfs_bytes": {"value": 16 << 20, "enforced": "tmpfs"},
	"output_bytes": {"value": 2048, "enforced": "supervisor"}}}'
json_run --image python --memory 0 --pids-limit 0 --timeout 0 -- true
expect "limits switched off (0 = none)" '{"max_rss_kib": Between(1, 1 << 20), "limits": {
	"memory_bytes": {"value": None, "enforced": "none"},
	"ipc_bytes": {"value": None, "enforced": "none"},
	"pids": {"value": None, "enforced": "none"},
	"timeout_ms": {"value": None, "enforced": "none"}}}'
json_run --rootfs "$NSRUN_IMAGES/python/rootfs" -- true
expect "--rootfs: image is null" '{"image": None, "max_rss_kib": Between(1, 1 << 20)}'

# ---------------------------------------------------------------- non-zero exit
json_run --image python -- python3 -c 'import sys; print("partial"); sys.stderr.write("bad input\n"); sys.exit(3)'
assert_eq "non-zero exit: rc 3" 3 "$RC"
expect "non-zero exit" '{"exit_code": 3, "stdout": "partial\n", "stderr": "bad input\n"}'
json_run --image python -- python3 -c 'import sys; sys.exit(143)'
expect "sys.exit(143) is an exit, not a signal" '{"exit_code": 143}'
json_run --image python -- no-such-command-xyz
assert_eq "command not found: rc 127" 127 "$RC"
expect "command not found (status exited, error set)" '{"exit_code": 127,
	"error": Re("no-such-command-xyz"), "max_rss_kib": Between(0, 1 << 20), "wall_time_ms": Between(0, ELAPSED_MS + 50)}'
json_run --image python -- /etc/hostname
assert_eq "not executable: rc 126" 126 "$RC"
expect "not executable (status exited, error set)" '{"exit_code": 126,
	"error": Re("/etc/hostname"), "max_rss_kib": Between(0, 1 << 20), "wall_time_ms": Between(0, ELAPSED_MS + 50)}'

# ---------------------------------------------------------------- signals
json_run --image python -v "$PROBE_DIR:/mnt:ro" -- /mnt/nsrun-probe kill-self 11
assert_eq "SIGSEGV (probe): rc 139" 139 "$RC"
expect "SIGSEGV (probe)" '{"status": "signaled", "exit_code": 139, "signal": "SIGSEGV", "max_rss_kib": Between(1, 1 << 20)}'
json_run --image python -- python3 -c 'import os, sys; print("before", flush=True); os.kill(os.getpid(), 11)'
assert_eq "SIGSEGV (python os.kill): rc 139" 139 "$RC"
expect "SIGSEGV (python os.kill)" '{"status": "signaled", "exit_code": 139, "signal": "SIGSEGV", "stdout": "before\n"}'
json_run --image python -- python3 -c 'import os; os.abort()'
expect "SIGABRT" '{"status": "signaled", "exit_code": 134, "signal": "SIGABRT"}'
json_run --image python -v "$PROBE_DIR:/mnt:ro" -- /mnt/nsrun-probe kill-self 9
expect "SIGKILL (not an OOM kill)" '{"status": "signaled", "exit_code": 137, "signal": "SIGKILL", "max_rss_kib": Between(1, 1 << 20)}'

# ---------------------------------------------------------------- timeout
# a busy process: the CPU it burnt before the kill belongs to "all the container's
# processes".  It burns a known 200 ms of CPU time (then waits forever), so the count
# does not depend on how much CPU a loaded machine gives it within the deadline (15
# times that, start-up included); the end is bounded loosely (the wait is forever)
json_run --image python --timeout 3 -v "$PROBE_DIR:/mnt:ro" -- /mnt/nsrun-probe burn 200
assert_eq "timeout: rc 124" 124 "$RC"
if elapsed_lt 15; then ok "timeout: ends within 15 s (${ELAPSED}s)"; else not_ok "timeout: ends within 15 s" "took ${ELAPSED}s"; fi
expect "timeout (after 200 ms of CPU)" '{"status": "timed_out", "exit_code": 124, "timed_out": True, "error": "timed out after 3s",
	"stdout": "burnt 200\n", "wall_time_ms": Between(3000, ELAPSED_MS + 50), "cpu_user_ms": Between(100, ELAPSED_MS * NCPU + 50),
	"max_rss_kib": Between(1, 1 << 20), "limits": {"timeout_ms": {"value": 3000, "enforced": "supervisor"}}}'
# (the deadline counts the container's start-up: 1.5 s leaves a loaded machine room to
# reach the echo, and the fraction is kept in the message)
json_run --image python --timeout 1.5 -- sh -c 'echo started; exec sleep 30'
expect "timeout (sleeping, output kept)" '{"status": "timed_out", "exit_code": 124, "timed_out": True, "error": "timed out after 1.5s",
	"stdout": "started\n", "wall_time_ms": Between(1500, ELAPSED_MS + 50), "max_rss_kib": Between(1, 1 << 20),
	"limits": {"timeout_ms": {"value": 1500, "enforced": "supervisor"}}}'

# ---------------------------------------------------------------- memory limit
# 256 MiB really used (written, not only reserved) under 64m: the container is ended
json_run --image python --memory 64m -- python3 -c 'import time; b = b"x" * (256 << 20); time.sleep(1); print("allocated")'
assert_eq "memory limit: 256 MiB used under --memory 64m ends the run (137)" 137 "$RC"
expect "memory limit (out of memory)" '{"status": "oom_killed", "exit_code": 137, "signal": "SIGKILL", "oom_killed": True,
	"error": Re("^killed: out of memory \\(limit 64 MiB(, peak [0-9]+ MiB)?\\)$"), "max_rss_kib": Between(1, 1 << 20),
	"memory_peak_bytes": OneOf(None, Between(1, 1 << 30)),
	"limits": {"memory_bytes": {"value": 64 << 20, "enforced": MEMORY_HOW},
	"ipc_bytes": OneOf({"value": 64 << 20, "enforced": "ipcns"}, {"value": None, "enforced": "none"})}}'

# ---------------------------------------------------------------- fork bomb
json_run --image python --pids-limit 16 --timeout 20 -v "$PROBE_DIR:/mnt:ro" -- /mnt/nsrun-probe forkbomb 5 1000
assert_eq "fork bomb: contained (fork fails), rc 1" 1 "$RC"
expect "fork bomb" '{"exit_code": 1, "stdout": Re("^forkbomb: denied EAGAIN .*\n$"), "stdout_bytes": Between(1, 200),
	"max_rss_kib": Between(1, 1 << 20), "limits": {"pids": {"value": 16, "enforced": RLIMIT_OR_CGROUP}, "timeout_ms": {"value": 20000, "enforced": "supervisor"}}}'
json_run --image python --pids-limit 16 -- python3 -c '
import os, sys
n = 0
try:
    while n < 1000:
        if os.fork() == 0:
            import time; time.sleep(3); os._exit(0)
        n += 1
except OSError as e:
    print("fork failed after", n, e.errno); sys.exit(0)
print("not contained", n)'
expect "fork bomb (python)" '{"stdout": Re("^fork failed after ([0-9]|1[0-6]) 11\n$"), "stdout_bytes": Between(20, 30),
	"limits": {"pids": {"value": 16, "enforced": RLIMIT_OR_CGROUP}}}'

# ---------------------------------------------------------------- output volume
# 10 MiB, under a 20 MiB limit: kept whole
json_run --image python --output-limit 20m -- sh -c 'yes abcdefghi | head -c 10485760'
expect "10 MiB under --output-limit 20m: all kept" '{"stdout": ("abcdefghi\n" * 1048576)[:10 * MiB],
	"max_rss_kib": Between(1, 1 << 20), "limits": {"output_bytes": {"value": 20 * MiB, "enforced": "supervisor"}}}'
# 10 MiB, default limit: the first MiB, truncated, all counted
json_run --image python -- sh -c 'yes abcdefghi | head -c 10485760'
expect "10 MiB at the default limit: first 1 MiB kept" '{"stdout": ("abcdefghi\n" * 110000)[:MiB],
	"stdout_truncated": True, "stdout_bytes": 10 * MiB, "max_rss_kib": Between(1, 1 << 20)}'

# 1 GiB: truncated at the limit; nsrun's peak RSS grows by less than the limit + 16 MiB
# over a run that writes one byte (a sanitizer build starts tens of MiB higher: its
# shadow memory, so the growth is what is bounded; the plain build is also bounded
# absolutely). /usr/bin/time -f %M reports nsrun's ru_maxrss from wait4(), which also
# covers the descendants nsrun reaped (sh and head, a few MiB): an upper bound.
LIMIT_KIB=$(( (1048576 + 16 * 1048576) / 1024 ))
GROWTH_KIB=$LIMIT_KIB
# ASan's allocator keeps freed blocks in quarantine and its shadow grows with them:
# a looser bound there, still far below the 1 GiB an unbounded capture would hold
[ -n "${NSRUN_TEST_SANITIZER:-}" ] && GROWTH_KIB=$(( (1048576 + 64 * 1048576) / 1024 ))
GIB_CMD=(--image python --timeout 50 -- sh -c 'head -c 1073741824 /dev/zero')
ONE_CMD=(--image python --timeout 50 -- sh -c 'head -c 1 /dev/zero')
# measure_peak ARGS...: runs nsrun --json $DOC ARGS, sets PEAK_KIB, RC, OUT, ERR, HOW
measure_peak() {
	rm -f "$DOC"
	if [ -x /usr/bin/time ]; then
		run_cmd /usr/bin/time -f '%M' -o "$TESTTMP/rss" "$NSRUN" --json "$DOC" "$@"
		PEAK_KIB=$(tail -n 1 "$TESTTMP/rss")
		HOW="/usr/bin/time %M"
		return
	fi
	# VmHWM of nsrun, polled until it exits (monotonic, so the last reading is the peak so far)
	local t0 pid v
	t0=$(date +%s.%N)
	"$NSRUN" --json "$DOC" "$@" >"$TESTTMP/.out" 2>"$TESTTMP/.err" &
	pid=$!
	PEAK_KIB=0
	while kill -0 "$pid" 2>/dev/null; do
		v=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null) && [ -n "$v" ] && PEAK_KIB=$v
		sleep 0.02
	done
	wait "$pid"; RC=$?
	ELAPSED=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
	OUT=$(cat "$TESTTMP/.out"); ERR=$(cat "$TESTTMP/.err")
	HOW="polled VmHWM"
}
measure_peak "${ONE_CMD[@]}"
BASE_KIB=$PEAK_KIB
measure_peak "${GIB_CMD[@]}"
assert_eq "1 GiB: rc 0" 0 "$RC"
if [[ $PEAK_KIB =~ ^[0-9]+$ ]] && [[ $BASE_KIB =~ ^[0-9]+$ ]] && [ "$PEAK_KIB" -gt 0 ] &&
	[ $((PEAK_KIB - BASE_KIB)) -lt "$GROWTH_KIB" ]; then
	ok "1 GiB: nsrun's peak RSS grew by $((PEAK_KIB - BASE_KIB)) KiB (from $BASE_KIB) < $GROWTH_KIB KiB ($HOW)"
else
	not_ok "1 GiB: nsrun's peak RSS grew by less than $GROWTH_KIB KiB" \
		"measured: '$PEAK_KIB' after '$BASE_KIB' for one byte ($HOW)" "$(_ctx)"
fi
if [ -n "${NSRUN_TEST_SANITIZER:-}" ]; then
	diag "sanitizer build: its shadow memory makes the absolute peak meaningless; the growth above is bounded"
elif [[ $PEAK_KIB =~ ^[0-9]+$ ]] && [ "$PEAK_KIB" -lt "$LIMIT_KIB" ]; then
	ok "1 GiB: nsrun's peak RSS ${PEAK_KIB} KiB < limit + 16 MiB = $LIMIT_KIB KiB ($HOW)"
else
	not_ok "1 GiB: nsrun's peak RSS < limit + 16 MiB = $LIMIT_KIB KiB" "measured: '$PEAK_KIB' ($HOW)" "$(_ctx)"
fi
expect "1 GiB at the default limit" '{"stdout": "\0" * MiB, "stdout_truncated": True, "stdout_bytes": 1 << 30,
	"max_rss_kib": Between(1, 1 << 20), "limits": {"timeout_ms": {"value": 50000, "enforced": "supervisor"}}}'

# --output-limit-action kill: the run ends at the limit
json_run --image python --output-limit 1m --output-limit-action kill -- sh -c 'head -c 1073741824 /dev/zero'
assert_eq "output limit, kill: rc 137" 137 "$RC"
if elapsed_lt 5; then ok "output limit, kill: ends promptly (${ELAPSED}s)"; else not_ok "output limit, kill: ends promptly" "took ${ELAPSED}s"; fi
expect "output limit, kill" '{"status": "output_limit", "exit_code": 137, "error": Re("output"),
	"stdout": "\0" * MiB, "stdout_truncated": True, "stdout_bytes": Between(MiB + 1, (1 << 30) - 1),
	"max_rss_kib": Between(1, 1 << 20)}'
json_run --image python --output-limit 1m --output-limit-action kill -- sh -c 'echo small'
expect "output limit, kill: a run under the limit is a normal exit" '{"stdout": "small\n", "max_rss_kib": Between(1, 1 << 20)}'
# streamed output (no --capture, no --json) has no limit: the kill asked for would
# never come, and 5000 bytes passed --output-limit 1k in silence (breaker, session 18)
run_nsrun --image python --output-limit 1k --output-limit-action kill -- python3 -c 'print("x" * 5000)'
assert_eq "--output-limit-action kill without --capture or --json: refused (125)" 125 "$RC"
assert_match "  ... saying only captured output has a limit" '^nsrun: --output-limit-action kill: only captured output' "$ERR"
assert_nsrun_error "  ... in one line and a hint"
run_nsrun --capture --image python --output-limit 1k --output-limit-action kill -- python3 -c 'print("x" * 5000)'
assert_eq "  control: with --capture the run is ended at the limit (137)" 137 "$RC"

# --output-limit 0: the document must say what happened — either 0 means none (all kept) or 0
# bytes are kept (value 0, truncated); not "no limit" with the output thrown away
json_run --image python --output-limit 0 -- echo hi
expect "--output-limit 0 is reported consistently" '{"max_rss_kib": Between(1, 1 << 20), "stdout": OneOf("hi\n", ""),
	"stdout_truncated": OneOf(True, False), "stdout_bytes": 3, "limits": {"output_bytes": OneOf(
	{"value": None, "enforced": "none"}, {"value": 0, "enforced": "supervisor"})}}'
lim=$(jfield "(d['limits']['output_bytes']['value'], d['stdout'], d['stdout_truncated'])")
assert_match "--output-limit 0: no limit and all kept, or limit 0 and nothing kept" \
	"^(\(None, 'hi\\\\n', False\)|\(0, '', True\))$" "$lim"

# ---------------------------------------------------------------- invalid UTF-8
json_run --image python -- sh -c "printf 'a\377\376b\303'; printf '\200x' >&2"
expect "invalid UTF-8: U+FFFD in the text, exact bytes in base64" '{
	"stdout": "a\ufffd\ufffdb\ufffd", "stdout_bytes": 5, "stdout_base64": b64(b"a\xff\xfeb\xc3"),
	"stderr": "\ufffdx", "stderr_bytes": 2, "stderr_base64": b64(b"\x80x"), "max_rss_kib": Between(1, 1 << 20)}'
json_run --image python -- sh -c "printf '\303\251\344\270\255\360\237\231\202'"
expect "valid multi-byte UTF-8: no base64" '{"stdout": "\u00e9\u4e2d\U0001f642", "max_rss_kib": Between(1, 1 << 20)}'
json_run --image python --output-limit 3 -- sh -c "printf '\303\251\344\270\255'"
expect "a character cut by the limit: U+FFFD and the kept bytes" '{"stdout": "\u00e9\ufffd",
	"stdout_truncated": True, "stdout_bytes": 5, "stdout_base64": b64(b"\xc3\xa9\xe4"),
	"max_rss_kib": Between(1, 1 << 20), "limits": {"output_bytes": {"value": 3, "enforced": "supervisor"}}}'
json_run --image python -- sh -c "printf 'nul\000in\001the\037middle\"\\\\'"
expect "control characters and quotes survive the JSON escaping" '{"stdout": "nul\0in\x01the\x1fmiddle\"\\", "max_rss_kib": Between(1, 1 << 20)}'

# ---------------------------------------------------------------- stdin
printf 'from the caller' >"$TESTTMP/in.txt"
json_run --image python -- python3 -c 'import sys; print(repr(sys.stdin.read()))' <"$TESTTMP/in.txt"
expect "stdin is empty with --json (not the caller's)" $'{"stdout": "\'\'\\n"}'
json_run --image python --stdin "$TESTTMP/in.txt" -- python3 -c 'import sys; print(repr(sys.stdin.read()))'
expect "--stdin FILE" $'{"stdout": "\'from the caller\'\\n"}'
# `-`: the program is on stdin.  With --json stdin was emptied, so an empty
# program ran and the run said it exited 0 (breaker, session 20); -i passes it too
printf 'print(6 * 7)\n' >"$TESTTMP/prog.py"
json_run --image python - <"$TESTTMP/prog.py"
expect "FILE - with --json: the program on stdin runs" '{"stdout": "42\n", "exit_code": 0}'
json_run --image python -i -- python3 -c 'import sys; print(repr(sys.stdin.read()))' <"$TESTTMP/in.txt"
expect "-i with --json: stdin is passed" $'{"stdout": "\'from the caller\'\\n"}'
# a FIFO: the open waited for the other end before --timeout ran, for ever if no
# one came; one a payload planted in a rw volume at a later run's --json path
# read that run's document (breaker, session 18)
mkfifo "$TESTTMP/in.fifo" "$TESTTMP/out.fifo"
run_cmd timeout 30 "$NSRUN" --image python --timeout 2 --stdin "$TESTTMP/in.fifo" -- python3 -c 'import sys; print(repr(sys.stdin.read()))'
assert_eq "--stdin FIFO with no writer: the run starts, and its --timeout holds (124)" 124 "$RC"
if elapsed_lt 15; then ok "  ... within 15 s (${ELAPSED}s)"; else not_ok "  ... within 15 s" "took ${ELAPSED}s"; fi
run_cmd timeout 20 "$NSRUN" --image python --timeout 5 --json "$TESTTMP/out.fifo" -- true
assert_eq "--json FIFO: refused at once (125), not waited on" 125 "$RC"
assert_match "  ... saying why, with what to name instead" '^nsrun: --json ".*/out.fifo": a FIFO, not written' "$ERR"
assert_nsrun_error "  ... in one line and a hint"
run_cmd timeout 20 sh -c 'exec 3<>"$1"; "$0" --image python --timeout 5 --json - -- true >&3 && head -c 10 <&3' "$NSRUN" "$TESTTMP/out.fifo"
assert_eq "  control: the caller's own FIFO, opened by the caller, takes --json -" '0 {"schema":' "$RC $OUT"

# ---------------------------------------------------------------- nsrun's own failure
json_run --image no-such-image-xyz -- true
assert_eq "missing image: rc 125" 125 "$RC"
assert_nsrun_error "missing image: one nsrun: line on stderr"
expect "missing image: a document with status error" '{"status": "error", "exit_code": 125,
	"error": Re("no-such-image-xyz"), "image": "no-such-image-xyz",
	"wall_time_ms": Between(0, ELAPSED_MS + 50), "max_rss_kib": Between(0, 0),
	"cpu_user_ms": Between(0, 0), "cpu_system_ms": Between(0, 0),
	"stdout": None, "stdout_bytes": 0, "stderr": None, "stderr_bytes": 0}'
msg=$(jfield "d['error']")
assert_eq "missing image: error is the message nsrun printed" "nsrun: $msg" "$(head -n 1 <<<"$ERR")"
json_run --image python --memory lots -- true
assert_eq "malformed option after --json: rc 125" 125 "$RC"
expect "malformed option after --json: status error" '{"status": "error", "exit_code": 125, "error": Re("--memory"),
	"isolation": Absent,
	"wall_time_ms": Between(0, ELAPSED_MS + 50), "max_rss_kib": Between(0, 0),
	"cpu_user_ms": Between(0, 0), "cpu_system_ms": Between(0, 0),
	"stdout": None, "stdout_bytes": 0, "stderr": None, "stderr_bytes": 0,
	"limits": {"memory_bytes": OneOf({"value": None, "enforced": "none"}, {"value": 512 << 20, "enforced": MEMORY_HOW})}}'

# ---------------------------------------------------------------- B31
cat >"$TESTTMP/big.py" <<'EOF'
import sys
sys.stderr.write('e' * 5_000_000); sys.stderr.flush()
sys.stdout.write('o' * 5_000_000); sys.stdout.flush()
sys.stderr.write('E' * 70_000)
EOF
chmod 644 "$TESTTMP/big.py"
json_run --image python --timeout 20 --output-limit 20m -v "$TESTTMP/big.py:/big.py:ro" -- python3 /big.py
assert_eq "B31: rc 0" 0 "$RC"
# (a deadlock would stall until --timeout 20: 15 s tells them apart on a loaded machine)
if elapsed_lt 15; then ok "B31: under 15 s, no stall (${ELAPSED}s)"; else not_ok "B31: under 15 s" "took ${ELAPSED}s"; fi
expect "B31: 5 MB + 5 MB, exact" '{"stdout": "o" * 5_000_000, "stderr": "e" * 5_000_000 + "E" * 70_000,
	"limits": {"timeout_ms": {"value": 20000, "enforced": "supervisor"},
	           "output_bytes": {"value": 20 * MiB, "enforced": "supervisor"}}}'
# shellcheck disable=SC2016  # expanded by the inner sh
run_cmd sh -c '"$0" --image python --timeout 20 -v "$1:/big.py:ro" -- python3 /big.py 2>/dev/null | wc -c' "$NSRUN" "$TESTTMP/big.py"
assert_eq "B31 without --json: stdout byte count exact" "0 5000000" "$RC $(tr -d ' ' <<<"$OUT")"
if elapsed_lt 15; then ok "B31 without --json: under 15 s, no stall (${ELAPSED}s)"; else not_ok "B31 without --json: under 15 s" "took ${ELAPSED}s"; fi
# shellcheck disable=SC2016  # expanded by the inner sh
run_cmd sh -c '"$0" --capture --output-limit 20m --image python --timeout 20 -v "$1:/big.py:ro" -- python3 /big.py 2>/dev/null | wc -c' "$NSRUN" "$TESTTMP/big.py"
assert_eq "B31 with --capture: stdout byte count exact" "0 5000000" "$RC $(tr -d ' ' <<<"$OUT")"

done_testing
