#!/bin/bash
# Exit status: payload's own; 128+N on signal N; 124 timeout; 126 cannot execute; 127 not found.
. "$(dirname "$0")/../lib.sh"
require_all

run_probe -- exit 0;  assert_eq "exit 0 -> 0" 0 "$RC"
run_probe -- exit 3;  assert_eq "exit 3 -> 3" 3 "$RC"
run_probe -- exit 125; assert_eq "payload's own 125 -> 125" 125 "$RC"
run_probe -- exit 255; assert_eq "exit 255 -> 255" 255 "$RC"

run_probe -- kill-self 9
assert_eq "SIGKILL -> 137" 137 "$RC"
run_probe -- kill-self 11
assert_eq "SIGSEGV -> 139" 139 "$RC"
run_probe -- kill-self 15
assert_eq "SIGTERM -> 143 (payload is not pid 1)" 143 "$RC"
run_probe -- kill-self 6
assert_eq "SIGABRT -> 134" 134 "$RC"

# B28 through python
run_nsrun --image python -- python3 -c 'import os; os.abort()'
assert_eq "python os.abort() -> 134" 134 "$RC"
run_nsrun --image python -- python3 -c 'import ctypes; ctypes.string_at(0)'
assert_eq "python NULL dereference -> 139" 139 "$RC"
run_nsrun --image python -- python3 -c 'import sys; sys.exit(143)'
assert_eq "python sys.exit(143) -> 143" 143 "$RC"

run_probe --timeout 1 -- sleep 30
assert_eq "timeout -> 124" 124 "$RC"
assert_eq "  ... with the message" "nsrun: timed out after 1s" "$ERR"

run_nsrun --image python -- /no/such/command
assert_eq "absolute path not found -> 127" 127 "$RC"
run_nsrun --image python -- no-such-command-xyz
assert_eq "command not on PATH -> 127" 127 "$RC"
assert_match "  ... says so on stderr" 'no-such-command-xyz' "$ERR"

run_nsrun --image python -- /etc/hostname
assert_eq "not executable (/etc/hostname) -> 126" 126 "$RC"
run_nsrun --image python -- /tmp
assert_eq "a directory as command -> 126" 126 "$RC"

# the payload's 126/127 are its own when it exits with them
run_nsrun --image python -- sh -c 'exit 127'
assert_eq "payload's own exit 127 -> 127" 127 "$RC"

# --cpu-time: RLIMIT_CPU kills a busy loop (SIGXCPU 152, or SIGKILL 137 at the hard limit)
# (1 s of CPU can take 15 s of wall time on a loaded 2-core machine: the wall-clock
# timeout is far beyond, and the status, not 124, says which limit ended it)
run_probe --cpu-time 1 --timeout 120 -- spin
assert_match "--cpu-time 1: busy loop killed by SIGXCPU/SIGKILL, not the wall-clock timeout (124)" '^(152|137)$' "$RC"
if elapsed_lt 100; then ok "  ... before the wall-clock timeout (${ELAPSED}s)"; else not_ok "  ... before the wall-clock timeout" "took ${ELAPSED}s"; fi
run_probe --cpu-time 5 -- spin 0.3
assert_eq "control: --cpu-time 5 lets a 0.3 s loop finish" "0 spin: ok spun" "$RC $OUT"

done_testing
