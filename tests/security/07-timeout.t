#!/bin/bash
# Timeout kills everything, setsid'd/double-forked grandchildren included (B32).
. "$(dirname "$0")/../lib.sh"
require_all

OUTDIR="$TESTTMP/out"; mkdir -m 777 "$OUTDIR"

run_probe --timeout 2 -- spin
assert_eq "infinite loop: exit 124" 124 "$RC"
assert_eq "  ... message" "nsrun: timed out after 2s" "$ERR"
if elapsed_lt 4; then ok "  ... within 4 s (${ELAPSED}s)"; else not_ok "  ... within 4 s" "took ${ELAPSED}s"; fi

start=$(date +%s)
run_nsrun --image python --timeout 2 -v "$PROBE_DIR:/mnt:ro" -v "$OUTDIR:/out:rw" -- \
	sh -c '/mnt/nsrun-probe setsid-sleep 3.0071 /out/late1; (/mnt/nsrun-probe sleep 3.0071; echo x > /out/late2) & exec /mnt/nsrun-probe spin 3600.0071'
assert_eq "setsid grandchild + busy payload: exit 124" 124 "$RC"
assert_match "  ... message" '^nsrun: timed out after 2s$' "$ERR"
if elapsed_lt 4; then ok "  ... within 4 s although a grandchild holds stdout (${ELAPSED}s)"; else not_ok "  ... within 4 s" "took ${ELAPSED}s"; fi
# wait until the grandchildren would have written their markers
while [ $(( $(date +%s) - start )) -lt 5 ]; do sleep 0.5; done
assert_eq "setsid'd grandchild was killed (no marker)" "" "$(ls -A "$OUTDIR")"
left=$(pgrep -u "$(id -u)" -f 'nsrun-probe (sleep|setsid-sleep|spin) (3|3600)\.0071' || true)
assert_eq "no probe processes left on the host" "" "$left"

# control: without the timeout the marker is written
run_nsrun --image python --timeout 10 -v "$PROBE_DIR:/mnt:ro" -v "$OUTDIR:/out:rw" -- \
	sh -c '/mnt/nsrun-probe setsid-sleep 0.5 /out/ctl; /mnt/nsrun-probe sleep 1.5'
assert_eq "control: the grandchild writes its marker when given time" "late" "$(cat "$OUTDIR/ctl" 2>/dev/null)"
rm -f "$OUTDIR/ctl"

# main payload exits while a detached grandchild holds the pipes: the run ends now (B32)
run_nsrun --image python --timeout 10 -v "$PROBE_DIR:/mnt:ro" -v "$OUTDIR:/out:rw" -- \
	sh -c '/mnt/nsrun-probe setsid-sleep 3.0072 /out/late3; echo main-done'
assert_eq "payload exits, grandchild detached: exit 0" 0 "$RC"
assert_match "  ... output" 'main-done' "$OUT"
if elapsed_lt 3; then ok "  ... ends without waiting for the grandchild (${ELAPSED}s)"; else not_ok "  ... ends without waiting for the grandchild" "took ${ELAPSED}s"; fi
sleep 3.5
assert_eq "  ... and the grandchild died with the container (no marker)" "" "$(ls -A "$OUTDIR")"

left=$(pgrep -u "$(id -u)" -f 'nsrun-probe setsid-sleep 3\.0072' || true)
assert_eq "  ... no process of it left on the host" "" "$left"

# fractional timeout
run_probe --timeout 0.5 -- sleep 10
assert_eq "--timeout 0.5: exit 124" 124 "$RC"
if elapsed_lt 2.5; then ok "  ... within 2.5 s (${ELAPSED}s)"; else not_ok "  ... within 2.5 s" "took ${ELAPSED}s"; fi

# --timeout 0 = none
run_probe --timeout 0 -- sleep 1
assert_eq "--timeout 0: no limit" "0 sleep: ok slept 1" "$RC $OUT"

done_testing
