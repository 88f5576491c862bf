#!/bin/bash
# nsrun exec joins only what nsrun made: a payload that moved itself into a user
# namespace of its own (it may, with --allow-nested) is refused, not joined (exec would
# otherwise run the caller's command in namespaces the payload chose); the control is
# the same service with a payload that stays where nsrun put it.
. "$(dirname "$0")/../lib.sh"
require_nsrun
require_userns
require_image python

export XDG_RUNTIME_DIR="$TESTTMP/run"
mkdir -m 700 "$XDG_RUNTIME_DIR"
at_exit "\"$NSRUN\" rm -f x$$-moved x$$-stayed"

run_nsrun -d --name "x$$-stayed" --allow-nested --image python -- sleep 600
assert_eq "control: a service with --allow-nested starts" 0 "$RC"
run_nsrun exec "x$$-stayed" -- true
assert_eq "  ... and exec joins it while its payload stays in its namespaces" 0 "$RC"

run_nsrun -d --name "x$$-moved" --allow-nested --image python -- unshare -U sleep 600
assert_eq "a service whose payload unshares a user namespace of its own starts" 0 "$RC"
# unshare(1) has made it and exec'd sleep once the payload's comm is sleep
for _ in $(seq 50); do
	run_nsrun exec "x$$-moved" -- true
	[ "$RC" = 125 ] && break
	sleep 0.1
done
assert_eq "  ... exec refuses it: 125" 125 "$RC"
assert_nsrun_error "  ... one line"
assert_match "  ... saying why" "exec x$$-moved: its payload is not in the user namespace nsrun made for it" "$ERR"
run_nsrun stop -t 1 "x$$-moved" "x$$-stayed"
assert_eq "both stop" 0 "$RC"
done_testing
