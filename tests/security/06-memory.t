#!/bin/bash
# A memory hog fails to allocate or is killed; the run ends. Control: small allocations work.
. "$(dirname "$0")/../lib.sh"
require_all

run_probe --memory 64m -- memhog 16
assert_eq "control: 16 MiB under --memory 64m works" "memhog: ok 16 MiB" "$OUT"

run_probe --memory 64m --timeout 20 -- memhog 512
if [ "$RC" = 1 ] && [[ $OUT =~ ^memhog:\ denied\ ENOMEM ]]; then
	ok "512 MiB under --memory 64m: allocation fails ($OUT)"
elif [ "$RC" = 137 ]; then
	ok "512 MiB under --memory 64m: killed (137)"
else
	not_ok "512 MiB under --memory 64m: allocation fails or run is killed" "$(_ctx)"
fi
assert_not_match "  ... never reports success" '^memhog: ok' "$OUT"

run_probe --memory 128m --timeout 20 -- memhog 100
assert_eq "control: 100 MiB under --memory 128m works" "memhog: ok 100 MiB" "$OUT"

# python too: a big bytearray raises MemoryError (or the run is killed)
run_nsrun --image python --memory 64m --timeout 20 -- python3 -c 'b = bytearray(512 << 20); print("allocated")'
assert_not_match "python bytearray(512 MiB) under --memory 64m is not allocated" 'allocated' "$OUT"
assert_ne "  ... and the run does not succeed" 0 "$RC"
assert_ne "  ... and it is not a timeout" 124 "$RC"

# the default limit is 512m: 1 GiB fails
run_probe --timeout 30 -- memhog 1024
assert_not_match "1 GiB under the default --memory 512m is not allocated" '^memhog: ok' "$OUT"

done_testing
