#!/bin/sh
# initramfs-test.sh - known-bugs B23 in nsrun's VM tier: run by the guest's /init
# BEFORE it leaves the initramfs, while "/" is still the kernel's initial rootfs,
# where pivot_root(2) fails with EINVAL.  nsrun must still give the payload a root
# of the image's, with every property.  Prints "key value" lines that guest-test.sh
# checks after the switch to the real root; leaves /proc and /dev unmounted.
HERE=$(cd "$(dirname "$0")" && pwd)
R=/initramfs-test-root
echo "root-fstype $(stat -f -c %T /)"
mount -t proc -o nosuid,nodev,noexec proc /proc || { echo "setup-failed proc"; exit 0; }
mount -t devtmpfs -o nosuid devtmpfs /dev 2>/dev/null
mkdir -p "$R/proc" "$R/dev" "$R/tmp" "$R/etc"
# the mount points of nsrun's /etc/hosts and /etc/hostname, as an image has them: the
# guest kernel loads no overlayfs module, and an image that lacks a mount point needs one
: >"$R/etc/hosts"
: >"$R/etc/hostname"
cp "$HERE/nsrun-probe" "$R/probe"
export NSRUN_SECCOMP_PROFILES="$HERE/seccomp-profiles"
run() { # run KEY PROBE-ARGS...: one nsrun run, its output on one line after KEY
	k=$1
	shift
	out=$(timeout -s KILL 60 "$HERE/nsrun" --rootfs "$R" -- /probe "$@" 2>&1)
	echo "$k rc=$? $(echo "$out" | tr '\n' ' ')"
}
run pids pids
run ids ids
run write-root write /escape
run initramfs read /init
# nsrun check must say what these runs found: pivot_root works here (by moving the root)
out=$(timeout -s KILL 60 "$HERE/nsrun" check 2>&1)
echo "check-pivot $(echo "$out" | grep '^pivot_root:')"
echo "check-isolation $(echo "$out" | grep '^isolation:' | cut -d' ' -f1-3)"
rm -rf "$R"
umount /dev 2>/dev/null
umount /proc
