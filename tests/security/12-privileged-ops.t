#!/bin/bash
# mount, unshare, clone(CLONE_NEWNS), ptrace of pid 1, mknod, chroot escape, setuid(0):
# all denied inside. Controls run the same probe on the host in `unshare -r` (a user
# namespace where the probe holds capabilities) or against its own child.
. "$(dirname "$0")/../lib.sh"
require_all

# --- mount
run_cmd unshare -rm "$PROBE" mount-tmpfs "$TESTTMP"
assert_eq "control: mount-tmpfs works with CAP_SYS_ADMIN (unshare -rm)" "mount-tmpfs: ok $TESTTMP" "$OUT"
for d in /tmp /mnt /proc; do
	run_probe -- mount-tmpfs $d
	assert_match "mount tmpfs on $d denied" '^mount-tmpfs: denied (EPERM|EACCES) ' "$OUT"
done
run_probe -- clone-newns
assert_match "clone(CLONE_NEWNS) denied" '^clone-newns: denied EPERM' "$OUT"

# --- unshare
for ns in user mount net pid; do
	run_cmd unshare -r "$PROBE" unshare $ns
	assert_eq "control: unshare $ns works on the host (unshare -r)" "unshare: ok $ns" "$OUT"
	run_probe -- unshare $ns
	assert_match "unshare $ns denied inside" "^unshare: denied (EPERM|ENOSPC|EUSERS|EINVAL|ENOSYS) $ns" "$OUT"
done
# B06: nested user namespace + cgroup v1 release_agent never reachable
run_nsrun --image python -- sh -c 'unshare -UrmC true 2>/dev/null && echo NESTED-USERNS || echo refused'
assert_eq "B06: unshare -UrmC refused inside" "refused" "$(tail -1 <<<"$OUT")"

# --- ptrace
run_host_probe ptrace-attach child
assert_eq "control: probe can ptrace its own child on the host" "ptrace-attach: ok child" "$OUT"
run_probe -- ptrace-attach 1
assert_match "ptrace-attach to pid 1 (nsrun's init) denied" '^ptrace-attach: denied (EPERM|ESRCH)' "$OUT"

# --- mknod
run_probe -- mknod /tmp/fifo fifo
assert_eq "control: mknod of a FIFO in /tmp works inside" "mknod: ok fifo /tmp/fifo" "$OUT"
# EPERM: the kernel (no CAP_MKNOD over the initial namespace); EACCES: Landlock first
run_probe -- mknod /tmp/null char
assert_match "mknod of a char device (1,3) denied" '^mknod: denied (EPERM|EACCES) ' "$OUT"
run_probe -- mknod /dev/shm/null char
assert_match "mknod of a char device in /dev/shm denied" '^mknod: denied (EPERM|EACCES|EROFS) ' "$OUT"

# --- chroot escape
mkdir -p "$TESTTMP/jail/tmp" && chmod 1777 "$TESTTMP/jail/tmp" && cp "$PROBE" "$TESTTMP/jail/"
run_cmd unshare -r -R "$TESTTMP/jail" /nsrun-probe chroot-escape /tmp
assert_match "control: the classic escape works from a plain chroot (unshare -r -R)" '^chroot-escape: ok escaped' "$OUT"
run_probe -- chroot-escape /tmp
assert_eq "chroot escape fails inside (exit 1)" 1 "$RC"
assert_match "  ... chroot denied or contained" '^chroot-escape: denied (EPERM|[A-Z]+ contained)' "$OUT"

# --- setuid
run_cmd unshare -r "$PROBE" setuid0
assert_match "control: setuid(0) works with CAP_SETUID (unshare -r)" '^setuid0: ok' "$OUT"
run_probe -- setuid0
assert_match "setuid(0) denied" '^setuid0: denied (EPERM|EINVAL)' "$OUT"
run_probe --user 1000:1000 -- setuid0
assert_match "setuid(0) denied with --user 1000:1000" '^setuid0: denied (EPERM|EINVAL)' "$OUT"

done_testing
