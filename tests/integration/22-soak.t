#!/bin/bash
# The short soak (make soak is the long one): 40 runs in a row and 24 at once of every
# outcome kind (exit 0, exit 3, a Python program, timeout, fork bomb, memory hog,
# output flood, killed by a signal), then 20 nsrun SIGKILLed at a random moment of
# set-up or of the run: every status as expected, nothing left behind (fds, mounts,
# processes, cgroups, temp and runtime files), no container process outlives its
# nsrun and the next run works.  About 8 s.
. "$(dirname "$0")/../lib.sh"
require_all

PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
out=$("$PY" "$TESTS_DIR/soak/soak.py" --nsrun "$NSRUN" --probe "$PROBE" --sequential 40 --concurrent 24 \
	--parallel 4 --faults 20 --ignore-prefix "$(basename "$TESTTMP")" 2>"$TESTTMP/soak.err")
rc=$?
while read -r line; do
	case $line in
	"soak: phase="*)
		phase=$(sed 's/.*phase=\([a-z]*\).*/\1/' <<<"$line")
		assert_match "$phase: no unexpected status" ' unexpected=0 ' "$line"
		assert_match "$phase: nothing leaked" ' leaked_fds=0 leaked_mounts=0 leaked_procs=0 leaked_cgroups=0 leaked_files=0 ' "$line"
		;;
	esac
done <<<"$out"
assert_match "the three phases ran" 'phase=sequential runs=40 .*phase=concurrent runs=24 .*phase=faults runs=20 .*kills_setup=10 kills_run=10 survivors=0 next_run_failed=0' "$(tr '\n' ' ' <<<"$out")"
assert_eq "soak.py exits 0" 0 "$rc"
[ "$rc" = 0 ] || diag "$(cat "$TESTTMP/soak.err")"

done_testing
