#!/bin/bash
# Signals INT TERM HUP QUIT USR1 USR2 to nsrun are forwarded to the payload (B30);
# SIGKILL of nsrun kills the container.
. "$(dirname "$0")/../lib.sh"
require_all

HANDLER='import signal, sys, time
def h(s, f):
    print("got", s, flush=True); sys.exit(7)
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
start_nsrun --image python -v "$PROBE_DIR:/mnt:ro" --timeout 30 -- /mnt/nsrun-probe sleep 30
sleep 1
kill -TERM "$NSRUN_PID"
wait_nsrun
assert_eq "SIGTERM to nsrun, payload without handler -> 143" 143 "$RC"

# SIGKILL of nsrun kills the container
start_nsrun --image python -v "$PROBE_DIR:/mnt:ro" --timeout 60 -- sh -c "/mnt/nsrun-probe setsid-sleep 50.0093; exec /mnt/nsrun-probe sleep 50.0093"
sleep 1.5
found=$(pgrep -u "$(id -u)" -f "nsrun-probe sleep 50\.0093" || true)
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
