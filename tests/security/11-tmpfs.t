#!/bin/bash
# /tmp is a private writable tmpfs, limited by --tmpfs-size (default 64m).
. "$(dirname "$0")/../lib.sh"
require_all

run_probe --tmpfs-size 1m -- write /tmp/small 524288
assert_eq "control: 512 KiB fits in a 1m /tmp" "write: ok /tmp/small 524288 bytes" "$OUT"

run_probe --tmpfs-size 1m -- write /tmp/big 2097152
assert_match "2 MiB into a 1m /tmp fails with ENOSPC" '^write: denied ENOSPC /tmp/big after [0-9]+ bytes' "$OUT"

run_probe --tmpfs-size 512k -- write /tmp/big 1048576
assert_match "k suffix: 1 MiB into a 512k /tmp fails" '^write: denied ENOSPC' "$OUT"

run_probe -- write /tmp/big 73400320
assert_match "default: 70 MiB into /tmp (64m) fails with ENOSPC" '^write: denied ENOSPC' "$OUT"
run_probe -- write /tmp/ok 10485760
assert_eq "default: 10 MiB fits" "write: ok /tmp/ok 10485760 bytes" "$OUT"

# /tmp is private: a file written in one run is gone in the next, and not on the host
marker="nsrun-tmp-marker-$$"
run_probe -- write "/tmp/$marker"
run_probe -- read "/tmp/$marker"
assert_match "/tmp does not persist between runs" '^read: denied ENOENT' "$OUT"
check "/tmp writes do not reach the host /tmp" test ! -e "/tmp/$marker"

run_nsrun --image python -- sh -c 'grep " /tmp " /proc/self/mountinfo'
assert_match "/tmp is a tmpfs" ' - tmpfs ' "$OUT"
assert_match "/tmp is nosuid,nodev" 'nosuid.*nodev|nodev.*nosuid' "$OUT"

done_testing
