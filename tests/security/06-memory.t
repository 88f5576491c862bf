#!/bin/bash
# A memory hog is ended as out of memory (137): by the cgroup, or, without one, by the
# supervisor's measure of real use (26-memory-real-use.t has every way of using memory).
# Control: small allocations work.
. "$(dirname "$0")/../lib.sh"
require_all

run_probe --memory 64m -- memhog 16
assert_eq "control: 16 MiB under --memory 64m works" "memhog: ok 16 MiB" "$OUT"

# memhog-via holds what it took for a second, as a program at work does: the supervisor
# (no cgroup) sees memory held for longer than its sampling interval
run_probe --memory 64m --timeout 20 -- memhog-via malloc 512
assert_eq "512 MiB under --memory 64m: killed (137)" 137 "$RC"
assert_match "  ... as out of memory" '^nsrun: killed: out of memory \(limit 64 MiB' "$ERR"
assert_not_match "  ... never reports success" '^memhog-via: ok' "$OUT"

run_probe --memory 128m --timeout 20 -- memhog 100
assert_eq "control: 100 MiB under --memory 128m works" "memhog: ok 100 MiB" "$OUT"

# python too: 512 MiB of bytes really used (an untouched bytearray is only reserved)
run_nsrun --image python --memory 64m --timeout 20 -- python3 -c 'import time; b = b"x" * (512 << 20); time.sleep(1); print("allocated")'
assert_not_match "python: 512 MiB used under --memory 64m never completes" 'allocated' "$OUT"
assert_eq "  ... the run is ended as out of memory (137), not a timeout" 137 "$RC"

# the default limit is 512m: 1 GiB fails
run_probe --timeout 30 -- memhog-via malloc 1024
assert_not_match "1 GiB under the default --memory 512m is not allocated" '^memhog-via: ok' "$OUT"
assert_eq "  ... the run is ended as out of memory (137)" 137 "$RC"

done_testing
