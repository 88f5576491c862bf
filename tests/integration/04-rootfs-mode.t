#!/bin/bash
# --rootfs DIR: a plain directory is the image.
. "$(dirname "$0")/../lib.sh"
require_nsrun
require_userns
require_probe

R="$TESTTMP/rootfs"
mkdir -p "$R"/{bin,work,tmp,proc,dev,mnt,opt,etc}
cp "$PROBE" "$R/bin/nsrun-probe"
echo "rootfs-marker" >"$R/etc/marker"
chmod -R a+rX "$R"

run_nsrun --rootfs "$R" -- /bin/nsrun-probe read /etc/marker
assert_eq "--rootfs: runs a command from the directory" "read: ok /etc/marker 14 bytes: rootfs-marker\x0a" "$OUT"
assert_eq "--rootfs: exit 0" 0 "$RC"

run_nsrun --rootfs "$R" -- /bin/nsrun-probe status
assert_match "--rootfs: payload uid 65534" 'Uid:[[:space:]]+65534' "$OUT"
assert_match "--rootfs: NoNewPrivs 1" 'NoNewPrivs:[[:space:]]+1' "$OUT"

run_nsrun --rootfs "$R" -- /bin/nsrun-probe write /etc/x
assert_match "--rootfs: root is read-only" '^write: denied (EROFS|EACCES) ' "$OUT"
check "--rootfs: directory unchanged" test ! -e "$R/etc/x"

run_nsrun --rootfs "$R" -- /bin/nsrun-probe write /tmp/x
assert_eq "--rootfs: /tmp writable" "write: ok /tmp/x" "$OUT"
check "--rootfs: /tmp write did not land in the directory" test ! -e "$R/tmp/x"

run_nsrun --rootfs "$R" -- /bin/nsrun-probe pids
assert_match "--rootfs: payload is pid 2" '^pids: ok self=2 ' "$OUT"

run_nsrun --rootfs "$R" -- /bin/nsrun-probe exit 4
assert_eq "--rootfs: exit status" 4 "$RC"

run_nsrun --rootfs "$TESTTMP/does-not-exist" -- /bin/nsrun-probe exit 0
assert_eq "--rootfs missing directory: 125" 125 "$RC"
assert_match "  ... one nsrun: line" '^nsrun: ' "$ERR"

done_testing
