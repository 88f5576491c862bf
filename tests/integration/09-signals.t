#!/bin/bash
# Signals INT TERM HUP QUIT USR1 USR2 to nsrun are forwarded to the payload (B30);
# SIGKILL of nsrun kills the container; a payload that ignores the signal is SIGKILLed
# after --stop-timeout (137).
. "$(dirname "$0")/../lib.sh"
require_all

# The handlers write with os.write: print() in a handler that interrupts print()'s own
# flush fails with "reentrant call" (Python's signal docs), a Python race, not ours.
HANDLER='import os, signal, sys, time
def h(s, f):
    os.write(1, b"got %d\n" % s); sys.exit(7)
for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
    signal.signal(s, h)
print("ready", flush=True)
time.sleep(60)'

for sig in TERM INT HUP QUIT USR1 USR2; do
	num=$(kill -l "$sig")
	start_nsrun --image python --timeout 30 -- python3 -c "$HANDLER"
	if wait_for_output '^ready' 15; then
		kill -s "$sig" "$NSRUN_PID"
		t0=$(date +%s)
		wait_nsrun
		assert_eq "SIG$sig forwarded: handler ran, nsrun exits 7" "7 ready
got $num" "$RC $OUT"
		[ $(( $(date +%s) - t0 )) -le 3 ] && ok "  ... within 3 s" || not_ok "  ... within 3 s"
	else
		kill -KILL "$NSRUN_PID" 2>/dev/null; wait_nsrun
		not_ok "SIG$sig forwarded: payload never became ready" "$(_ctx)"
		not_ok "  ... within 3 s"
	fi
done

# payload without a handler: SIGTERM to nsrun -> payload dies of SIGTERM -> 143
# (the payload says when it runs: a fixed sleep could end before a slow start-up did)
start_nsrun --image python -v "$PROBE_DIR:/mnt:ro" --timeout 30 -- sh -c 'echo ready; exec /mnt/nsrun-probe sleep 30'
wait_for_output '^ready' 15 || diag "the payload never said ready: $(cat "$TESTTMP/.bgerr")"
kill -TERM "$NSRUN_PID"
wait_nsrun
assert_eq "SIGTERM to nsrun, payload without handler -> 143" 143 "$RC"

# a payload that ignores SIGTERM/SIGINT/SIGHUP is SIGKILLed after --stop-timeout (default 2 s): 137
IGNORE='import signal, time
for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(s, signal.SIG_IGN)
print("ready", flush=True)
time.sleep(60)'
for case in "TERM 1 1" "INT 0.5 0.5" "HUP default 2"; do
	read -r sig opt want_s <<<"$case"
	opts=(); [ "$opt" = default ] || opts=(--stop-timeout "$opt")
	start_nsrun --image python --timeout 30 "${opts[@]+"${opts[@]}"}" -- python3 -c "$IGNORE"
	if wait_for_output '^ready' 15; then
		t0=$(date +%s%N)
		kill -s "$sig" "$NSRUN_PID"
		wait_nsrun
		ms=$(( ($(date +%s%N) - t0) / 1000000 ))
		assert_eq "SIG$sig ignored, stop timeout $opt: SIGKILLed, exit 137" 137 "$RC"
		assert_match "  ... and says why" "^nsrun: killed: still running ${want_s}s after SIG$sig \\(--stop-timeout\\)" "$ERR"
		lo=$(awk -v s="$want_s" 'BEGIN { print int(s * 1000) }')
		if [ "$ms" -ge "$lo" ] && [ "$ms" -le $((lo + 2500)) ]; then ok "  ... after ${want_s}s (${ms} ms)"
		else not_ok "  ... after ${want_s}s" "took ${ms} ms"; fi
	else
		kill -KILL "$NSRUN_PID" 2>/dev/null; wait_nsrun
		not_ok "SIG$sig ignored: payload never became ready" "$(_ctx)"; not_ok "  ... says why"; not_ok "  ... timing"
	fi
done

# --stop-timeout does not cut a payload that handles the signal and exits in time
start_nsrun --image python --timeout 30 --stop-timeout 5 -- python3 -c 'import os, signal, sys, time
def h(s, f):
    time.sleep(0.5); os.write(1, b"cleaned up\n"); sys.exit(3)
signal.signal(signal.SIGTERM, h)
print("ready", flush=True)
time.sleep(60)'
if wait_for_output '^ready' 15; then
	kill -TERM "$NSRUN_PID"; wait_nsrun
	assert_eq "handler that takes 0.5 s within --stop-timeout 5: its own status" "3 ready
cleaned up" "$RC $OUT"
else
	kill -KILL "$NSRUN_PID" 2>/dev/null; wait_nsrun; not_ok "handler within --stop-timeout: never ready" "$(_ctx)"
fi

run_nsrun --image python --stop-timeout -1 -- true
assert_eq "--stop-timeout -1: rejected, 125" 125 "$RC"
assert_match "  ... with its message" '^nsrun: --stop-timeout: "-1"' "$ERR"

# SIGKILL of nsrun kills the container
start_nsrun --image python -v "$PROBE_DIR:/mnt:ro" --timeout 60 -- sh -c "/mnt/nsrun-probe setsid-sleep 50.0093; exec /mnt/nsrun-probe sleep 50.0093"
found=""
for _ in $(seq 300); do
	found=$(pgrep -u "$(id -u)" -f "nsrun-probe sleep 50\.0093" || true)
	[ -n "$found" ] && break
	sleep 0.05
done
if [ -n "$found" ]; then ok "control: container processes visible on the host before the kill"; else not_ok "control: container processes visible on the host before the kill"; fi
kill -KILL "$NSRUN_PID"
wait_nsrun
left=
for _ in 1 2 3 4 5 6 7 8 9 10; do
	left=$(pgrep -u "$(id -u)" -f 'nsrun-probe (sleep|setsid-sleep) 50\.0093' || true)
	[ -z "$left" ] && break
	sleep 0.3
done
assert_eq "SIGKILL of nsrun: no container process left" "" "$left"
[ -n "$left" ] && kill -KILL $left 2>/dev/null

done_testing
