#!/bin/bash
# Issue 17, kind 7: the result must stay true whatever the payload does.
#  - killed by a real-time signal: "signal" names it ("SIGRTMIN+2", as `kill -l` does), the
#    document is valid against docs/result.schema.json; control: SIGTERM.
#  - children the kernel reaps itself (SIGCHLD ignored) never reach getrusage(2): without a
#    cgroup the CPU time is then a lower bound, and cpu_time_scope says so ("waited"); with
#    a cgroup it is the whole container's ("container"). Control: the same child waited for
#    is counted either way.
#  - /proc/1/cmdline inside is not nsrun's command line (host paths, -e values); control:
#    the payload reads its own /proc/self/cmdline.
. "$(dirname "$0")/../lib.sh"
require_all

SCHEMA="$TESTS_DIR/../docs/result.schema.json"
DOC="$TESTTMP/result.json"
jget() { python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$DOC" "$1" 2>&1; }
valid() {
	python3 - "$DOC" "$SCHEMA" <<'PY' 2>&1
import json, sys
try:
    import jsonschema
except ImportError:
    print("no python3-jsonschema"); sys.exit(2)
jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))
print("valid")
PY
}

# ---- real-time signals
rtmin=$(kill -l SIGRTMIN)
sig=$((rtmin + 2))
run_probe --json "$DOC" -- kill-self "$sig"
assert_eq "killed by SIGRTMIN+2 ($sig): exit 128+$sig" $((128 + sig)) "$RC"
assert_eq "  ... \"signal\": \"SIGRTMIN+2\"" "signaled SIGRTMIN+2" "$(jget 'd["status"], d["signal"]' | tr -d "()',")"
assert_eq "  ... the document is valid against the schema" valid "$(valid)"
run_probe --json "$DOC" -- kill-self "$(kill -l SIGRTMAX)"
assert_eq "killed by SIGRTMAX: \"signal\": \"SIGRTMAX\"" SIGRTMAX "$(jget 'd["signal"]')"
run_probe --json "$DOC" -- kill-self 15
assert_eq "control: killed by SIGTERM: \"signal\": \"SIGTERM\"" SIGTERM "$(jget 'd["signal"]')"

# ---- CPU time of children reaped by the kernel
# cpu_of MODE — a child that burns 1 s of its own CPU time (measured by itself, so the
# machine's load does not matter), waited for (wait) or reaped by the kernel (ignore: the
# parent polls until it is gone)
cpu_of() {
	run_nsrun --image python --json "$DOC" -- python3 -c '
import os, signal, sys, time
if sys.argv[1] == "ignore":
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
pid = os.fork()
if pid == 0:
    while time.process_time() < 1.0:
        pass
    os._exit(0)
if sys.argv[1] == "wait":
    os.waitpid(pid, 0)
else:
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
' "$1"
	CPU=$(jget 'd["cpu_user_ms"] + d["cpu_system_ms"]')
	SCOPE=$(jget 'd["cpu_time_scope"]')
}
cpu_of wait
diag "child waited for: ${CPU} ms CPU, scope $SCOPE"
check "control: a child waited for is counted (>= its 1000 ms)" test "$CPU" -ge 1000
cpu_of ignore
diag "child reaped by the kernel (SIGCHLD ignored): ${CPU} ms CPU, scope $SCOPE"
case $SCOPE in
container) check "with a cgroup (scope container) the kernel-reaped child is counted" test "$CPU" -ge 1000 ;;
waited) check "without a cgroup its time is missing, and the result says it counts the processes waited for (scope waited)" \
	test "$CPU" -lt 1000 ;;
*) not_ok "cpu_time_scope is container or waited" "got '$SCOPE'" ;;
esac
assert_eq "  ... the document is valid against the schema" valid "$(valid)"

# ---- /proc/1/cmdline
secret="nsrun-secret-$$-$RANDOM"
mkdir -p "$TESTTMP/vol-$secret"
run_nsrun --image python -e "TOKEN=$secret" -v "$TESTTMP/vol-$secret:/v:ro" -- \
	python3 -c 'print(repr(open("/proc/1/cmdline", "rb").read().rstrip(b"\0"))); print(open("/proc/self/cmdline", "rb").read().split(b"\0")[1:3])'
assert_eq "control: the payload reads its own /proc/self/cmdline" "[b'-c', b'print(repr(open(\"/proc/1/cmdline\", \"rb\").read().rstrip(b\"\\\\0\"))); print(open(\"/proc/self/cmdline\", \"rb\").read().split(b\"\\\\0\")[1:3])']" "$(sed -n 2p <<<"$OUT")"
assert_eq "/proc/1/cmdline is \"nsrun-init\", not nsrun's command line" "b'nsrun-init'" "$(sed -n 1p <<<"$OUT")"
assert_not_match "  ... no -e value, no host path in it" "$secret|$TESTTMP" "$OUT"

done_testing
