#!/bin/bash
# A writable root (--read-only=false; an OCI bundle's root.readonly false, the
# spec's default) puts the payload's writes in a tmpfs under the root's overlay:
# memory, up to --tmpfs-size.  Where no cgroup holds --memory (an unprivileged
# caller with nothing delegated), the supervisor measures the container
# (memwatch.h) and counted /tmp and /dev/shm but not that tmpfs: a payload under
# --memory 64m kept 150 MiB of the host's memory in /big.  Now the root's upper
# layer counts too.  Probe: 150 MiB written to / under --memory 64m ends the run
# as out of memory.  Controls: the same write to /tmp (counted before) is ended
# the same way, and 24 MiB in / (under the limit) is not.  As root the limit is
# a cgroup's, which charges tmpfs pages to their writer: the same outcomes.
. "$(dirname "$0")/../lib.sh"
require_nsrun
require_userns
require_image python

plan 6

# write PATH MIB: writes MIB MiB to PATH in the writable root, then holds them
# (2 s: the supervisor samples every 100 ms at most) and says so
write() {
	run_nsrun --image python --memory 64m --read-only=false --tmpfs-size 256m -- \
		sh -c "dd if=/dev/zero of=$1 bs=1M count=$2 2>/dev/null; sleep 2; echo held"
}

write /big 150
assert_eq "150 MiB written to the writable root under --memory 64m: killed (137)" 137 "$RC"
assert_match "... said as out of memory" "out of memory" "$ERR"

write /tmp/big 150
assert_eq "control: the same write to /tmp is killed (137)" 137 "$RC"
assert_match "... said as out of memory" "out of memory" "$ERR"

write /big 24
assert_eq "control: 24 MiB in the writable root (under the limit) runs to its end" 0 "$RC"
assert_eq "... and held them" "held" "$OUT"
