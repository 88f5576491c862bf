#!/bin/bash
# --debug-timing / NSRUN_DEBUG=timing: one line per phase, from nsrun's exec to its
# exit, adding up to the total; the payload's own run is where its time shows.
. "$(dirname "$0")/../lib.sh"
require_all

# phase_us NAME — microseconds of the timing line whose phase is NAME (from ERR)
phase_us() { sed -n "s/^nsrun: timing: *\([0-9]*\) us .*  $1\$/\1/p" <<<"$ERR" | head -1; }

run_nsrun --debug-timing --image python -- sh -c 'sleep 0.3'
assert_eq "--debug-timing: the run itself succeeds" 0 "$RC"
for phase in "exec of nsrun, start-up before main (its CPU time)" "seccomp compile or cache load" \
	"clone (namespaces)" "id maps" "init: pivot_root" "payload: seccomp load" "payload runs" \
	"teardown, report"; do
	assert_match "  ... a line for \"$phase\"" '^[0-9]+$' "$(phase_us "$phase")"
done
total=$(sed -n 's/^nsrun: timing: *\([0-9]*\) us  total (exec to exit)$/\1/p' <<<"$ERR")
sum=$(sed -n 's/^nsrun: timing: *\([0-9]*\) us  *[0-9.]*%  .*/\1/p' <<<"$ERR" | awk '{ s += $1 } END { print s + 0 }')
assert_match "  ... a total line" '^[0-9]+$' "$total"
check "  ... the phases add up to the total ($sum us of $total us)" eval '[ "$sum" -eq "$total" ]'
runs=$(phase_us "payload runs")
check "  ... the payload's 0.3 s sleep is in \"payload runs\" ($runs us)" eval '[ "${runs:-0}" -ge 300000 ]'
wall_us=$(awk -v e="$ELAPSED" 'BEGIN { printf "%d", (e + 0.01) * 1000000 }')
check "  ... the total is within the wall time measured around nsrun ($total us <= $wall_us us)" \
	eval '[ "${total:-0}" -le "$wall_us" ] && [ "${total:-0}" -ge 300000 ]'

NSRUN_DEBUG=timing run_nsrun --image python -- true
assert_match "NSRUN_DEBUG=timing prints the same lines" 'nsrun: timing: +[0-9]+ us  total \(exec to exit\)' "$ERR"
run_nsrun --image python -- true
assert_not_match "control: without it, no timing lines" 'nsrun: timing:' "$ERR"

done_testing
