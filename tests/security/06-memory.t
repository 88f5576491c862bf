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

# System V segments that no process maps (made, written, detached), which the supervisor's
# measure cannot see (memwatch.h): the container's IPC namespace holds at most --memory of
# them (shmall, shmmax; msgmni for queues), so 128 MiB of them under --memory 64m is
# refused (ENOSPC), or ended as out of memory where a cgroup charges them.  Control: under
# --memory 1g the same 128 MiB is held (the probe takes memory the measure cannot see)
SHM='import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
for i in range(8):
    sid = libc.shmget(0, ctypes.c_size_t(16 << 20), 0o1600)
    if sid < 0:
        print("shmget", ctypes.get_errno()); sys.exit(3)
    p = libc.shmat(sid, None, 0)
    ctypes.memset(p, 1, 16 << 20)
    libc.shmdt(ctypes.c_void_p(p))
print("held 128 MiB")'
run_nsrun --memory 64m --image python -- python3 -c "$SHM"
assert_match "128 MiB of detached System V segments under --memory 64m: refused (ENOSPC) or out of memory" \
	'^(3:shmget 28|137:)$' "$RC:$OUT"
run_nsrun --memory 1g --image python -- python3 -c "$SHM"
assert_eq "  ... control: under --memory 1g they are held" "held 128 MiB" "$OUT"

done_testing
