#!/bin/bash
# The root filesystem and FILE are read-only; /tmp is the writable place (control).
. "$(dirname "$0")/../lib.sh"
require_all

for path in /probe-was-here /usr/probe-was-here /etc/passwd /usr/bin/python3 /work/probe-was-here /mnt/probe-was-here; do
	run_probe -- write "$path"
	assert_eq "cannot write $path (exit 1)" 1 "$RC"
	assert_match "  ... refused by the filesystem ($path)" '^write: denied (EROFS|EACCES|EPERM) ' "$OUT"
done
run_probe -- mkdir /usr/probe-dir
assert_match "cannot mkdir in /usr" '^mkdir: denied (EROFS|EACCES|EPERM) ' "$OUT"

# control: /tmp is writable, so the probe does write when allowed
run_probe -- write /tmp/probe-was-here
assert_eq "control: writing /tmp inside works" "write: ok /tmp/probe-was-here" "$OUT"

# FILE mode: the program file is mounted read-only at /work/<basename>, even though the
# host file is world-writable
cat >"$TESTTMP/selfwrite.py" <<'PY'
import os, sys
os.execv("/mnt/nsrun-probe", ["nsrun-probe"] + sys.argv[1:])
PY
chmod 666 "$TESTTMP/selfwrite.py"
cp "$TESTTMP/selfwrite.py" "$TESTTMP/orig.py"
run_nsrun --image python -v "$PROBE_DIR:/mnt:ro" "$TESTTMP/selfwrite.py" write /work/selfwrite.py
assert_match "FILE mode: /work/selfwrite.py is not writable" '^write: denied (EROFS|EACCES|EPERM) ' "$OUT"
check "FILE mode: host file unchanged" cmp -s "$TESTTMP/selfwrite.py" "$TESTTMP/orig.py"
run_nsrun --image python -v "$PROBE_DIR:/mnt:ro" "$TESTTMP/selfwrite.py" write /work/newfile
assert_match "FILE mode: cannot create files in /work" '^write: denied (EROFS|EACCES|EPERM) ' "$OUT"
run_nsrun --image python -v "$PROBE_DIR:/mnt:ro" "$TESTTMP/selfwrite.py" write /tmp/x
assert_eq "control: FILE mode payload writes /tmp" "write: ok /tmp/x" "$OUT"

# the rootfs is mounted read-only, nosuid, nodev
run_probe -- read /proc/self/mountinfo
assert_eq "mountinfo readable" 0 "$RC"
run_nsrun --image python -- sh -c 'cat /proc/self/mountinfo'
rootline=$(awk '$5 == "/"' <<<"$OUT" | head -1)
assert_match "/ is mounted ro" '^[^ ]+ [^ ]+ [^ ]+ [^ ]+ / (ro,|[^ ]*,ro(,| ))' "$rootline"
assert_match "/ is nosuid" ' / [^ ]*nosuid' "$rootline"
assert_match "/ is nodev" ' / [^ ]*nodev' "$rootline"

done_testing
