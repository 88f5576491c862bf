#!/bin/bash
# -v HOST:CONTAINER[:ro|rw]: read-only unless rw; rw writes land on the host.
. "$(dirname "$0")/../lib.sh"
require_all

V="$TESTTMP/vol"; mkdir -m 777 "$V"; echo from-host >"$V/in.txt"; chmod 666 "$V/in.txt"

run_probe -v "$V:/data" -- read /data/in.txt
assert_match "default volume readable" '^read: ok /data/in.txt 10 bytes: from-host' "$OUT"
run_probe -v "$V:/data" -- write /data/new.txt
assert_match "default volume is read-only" '^write: denied EROFS ' "$OUT"
check "  ... nothing written on the host" test ! -e "$V/new.txt"

run_probe -v "$V:/data:ro" -- write /data/in.txt
assert_match ":ro volume rejects writes (even to a 666 file)" '^write: denied EROFS ' "$OUT"
assert_eq "  ... host file unchanged" from-host "$(cat "$V/in.txt")"

run_probe -v "$V:/data:rw" -- write /data/new.txt
assert_eq ":rw volume accepts writes" "write: ok /data/new.txt" "$OUT"
assert_eq "  ... the write landed on the host" written-by-nsrun-probe "$(cat "$V/new.txt" 2>/dev/null)"
run_probe -v "$V:/data:rw" -- mkdir /data/sub
assert_eq ":rw volume: mkdir" "mkdir: ok /data/sub" "$OUT"
check "  ... directory exists on the host" test -d "$V/sub"

# single file volume
run_probe -v "$V/in.txt:/opt/in.txt:ro" -- read /opt/in.txt
assert_match "file volume" '^read: ok /opt/in.txt 10 bytes' "$OUT"

# two volumes, one ro one rw
mkdir -m 777 "$V/b"
run_probe -v "$V:/data:ro" -v "$V/b:/out:rw" -- write /out/x
assert_eq "two volumes: rw one writable" "write: ok /out/x" "$OUT"

# B24: source on a nosuid,nodev filesystem (/dev/shm) still mounts read-only
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	S=$(mktemp -d -p /dev/shm nsrun-test-vol.XXXXXX); chmod 755 "$S"; echo hi >"$S/f"; chmod 644 "$S/f"
	at_exit "rm -rf '$S'"
	run_nsrun --image python -v "$S:/data:ro" -- sh -c 'cat /data/f; echo x > /data/g; echo w=$?'
	assert_eq "B24: ro volume from /dev/shm works" 0 "$RC"
	assert_match "  ... content readable" '^hi' "$OUT"
	assert_match "  ... write refused" 'w=[12]' "$OUT"
else
	skip "/dev/shm not writable" "B24 ro volume from /dev/shm"
fi

# volumes inside the payload are nosuid,nodev
run_nsrun --image python -v "$V:/data:rw" -- sh -c 'grep " /data " /proc/self/mountinfo'
assert_match "volume mounted nosuid" 'nosuid' "$OUT"
assert_match "volume mounted nodev" 'nodev' "$OUT"

# B05: a symlink planted in a volume does not redirect a later mount outside the rootfs
mkdir -p "$TESTTMP/shared" "$TESTTMP/data" "$TESTTMP/decoy"; chmod 755 "$TESTTMP/shared" "$TESTTMP/data" "$TESTTMP/decoy"
echo inner >"$TESTTMP/data/marker"; echo decoy >"$TESTTMP/decoy/decoy-file"; chmod 644 "$TESTTMP"/data/marker "$TESTTMP"/decoy/decoy-file
ln -s "$TESTTMP/decoy" "$TESTTMP/shared/link"
run_nsrun --image python -v "$TESTTMP/shared:/vol" -v "$TESTTMP/data:/vol/link:ro" -- sh -c 'cat /vol/link/marker'
if [ "$RC" = 125 ]; then
	ok "B05: mount over a symlinked destination refused (125)"
else
	assert_eq "B05: mount over a symlinked destination resolves inside the container" "0 inner" "$RC $OUT"
fi
check "B05: decoy directory untouched" test "$(ls -A "$TESTTMP/decoy")" = decoy-file

# bad volume specs
run_nsrun --image python -v "$TESTTMP/nonexistent:/data" -- true
assert_eq "missing volume source: 125" 125 "$RC"
assert_match "  ... message" '^nsrun: ' "$ERR"
run_nsrun --image python -v "$V:/data:bogus" -- true
assert_eq "bad volume mode: 125" 125 "$RC"
run_nsrun --image python -v "$V:relative" -- true
assert_eq "relative container path: 125" 125 "$RC"

done_testing
