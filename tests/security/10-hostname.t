#!/bin/bash
# UTS namespace: default hostname nsrun; the host's name is not visible or changeable.
. "$(dirname "$0")/../lib.sh"
require_all

host=$(uname -n)
run_probe -- hostname
assert_eq "default hostname" "hostname: ok nsrun" "$OUT"
run_probe --hostname sandbox-7 -- hostname
assert_eq "--hostname sandbox-7" "hostname: ok sandbox-7" "$OUT"
run_nsrun --image python -- python3 -c 'import socket; socket.sethostname("evil")'
assert_ne "payload cannot set the hostname" 0 "$RC"
assert_eq "host hostname unchanged" "$host" "$(uname -n)"
run_probe -- read /proc/sys/kernel/hostname
assert_match "/proc/sys/kernel/hostname is the container's" '^read: ok /proc/sys/kernel/hostname [0-9]+ bytes: nsrun' "$OUT"

done_testing
