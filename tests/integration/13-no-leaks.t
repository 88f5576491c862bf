#!/bin/bash
# No host mount, process or temp file left after 100 runs (normal, failing, signalled,
# timed out, bad input, SIGKILLed nsrun).
. "$(dirname "$0")/../lib.sh"
require_all

V="$TESTTMP/v"; mkdir -m 777 "$V"
run_probe -- exit 0   # warm up (page cache) before the snapshot
snapshot_host

fails=0
for i in $(seq 1 100); do
	case $((i % 10)) in
	1) run_probe --timeout 0.3 -- setsid-sleep 5 ;;                     # exits, leaves a grandchild
	2) run_probe --timeout 0.3 -- spin; [ "$RC" = 124 ] || fails=$((fails + 1)) ;;
	3) run_probe -- kill-self 9; [ "$RC" = 137 ] || fails=$((fails + 1)) ;;
	4) run_probe -v "$V:/out:rw" -- write /out/f$i; [ "$RC" = 0 ] || fails=$((fails + 1)) ;;
	5) run_nsrun --image python --memory 12x -- true; [ "$RC" = 125 ] || fails=$((fails + 1)) ;;
	6) run_nsrun --image python - <<<'print(1)'; [ "$RC" = 0 ] || fails=$((fails + 1)) ;;
	7) run_probe -- exit 3; [ "$RC" = 3 ] || fails=$((fails + 1)) ;;
	*) run_probe -- exit 0; [ "$RC" = 0 ] || fails=$((fails + 1)) ;;
	esac
done
assert_eq "100 runs gave the expected statuses" 0 "$fails"

# three SIGKILLed supervisors
for i in 1 2 3; do
	start_nsrun --image python -v "$PROBE_DIR:/mnt:ro" -- /mnt/nsrun-probe sleep 30
	sleep 0.7
	kill -KILL "$NSRUN_PID"
	wait_nsrun
done

assert_no_leaks "after 100 runs and 3 SIGKILLed nsrun"

done_testing
