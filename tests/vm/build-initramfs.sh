#!/bin/bash
# build-initramfs.sh - make the initramfs of nsrun's VM tier: a static busybox, an
# /init that sets up a pure cgroup v2 system, and a payload of test files.
#
# usage: build-initramfs.sh -o OUT.cpio.gz [-p PATH]... [-e ENTRY] [-k]
#   -o FILE   the initramfs to write (gzip-compressed newc cpio)
#   -p PATH   copy the file or directory PATH into /payload (repeatable). Dynamically
#             linked ELF files get the libraries ldd resolves on this machine (and
#             their ELF interpreter) copied to the same paths in the image.
#   -e NAME   the test script in /payload that /init runs with sh (default
#             guest-test.sh). Its arguments come from the kernel command line:
#             each nsrunvm.arg=WORD is one argument (run-vm.sh -- ARGS sets them).
#             Without that script, /init prints the cgroup set-up and reports 0.
#   -k        keep the staging directory (its path is printed on stderr)
#
# The guest's /init first moves the root to a tmpfs (pivot_root cannot leave the
# initramfs), then mounts proc, sysfs, devtmpfs, devpts, tmpfs on /tmp, /run and
# /dev/shm, cgroup2 on /sys/fs/cgroup with nsdelegate, enables every controller of
# the root cgroup in its cgroup.subtree_control, turns on unprivileged user
# namespaces. Two users: root and tuser (uid/gid 1000, `su -s /bin/sh tuser
# -c CMD`). It runs the script in /payload (cwd /payload, PATH starting with
# /payload), prints "NSRUN-VM-STATUS=<exit status>" on the console and powers off.
#
# The static busybox comes from the busybox-static package (fetched, not installed,
# by fetch-deb.sh) unless NSRUN_VM_BUSYBOX names one. Nothing here needs root.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# the comment block at the top is the usage text
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit "${1:-2}"; }

out="" entry=guest-test.sh keep=0
paths=()
while getopts "o:p:e:kh" opt; do
	case $opt in
	o) out=$OPTARG ;;
	p) paths+=("$OPTARG") ;;
	e) entry=$OPTARG ;;
	k) keep=1 ;;
	h) usage 0 ;;
	*) usage ;;
	esac
done
[ $# -lt "$OPTIND" ] || { echo "build-initramfs: unexpected argument '${!OPTIND}'" >&2; usage; }
[ -n "$out" ] || { echo "build-initramfs: -o OUT is required" >&2; usage; }
for p in ${paths[@]+"${paths[@]}"}; do
	[ -e "$p" ] || { echo "build-initramfs: $p: not found" >&2; exit 2; }
done
case $entry in */*|"") echo "build-initramfs: -e takes a file name in /payload" >&2; exit 2 ;; esac

busybox=${NSRUN_VM_BUSYBOX:-$("$here/fetch-deb.sh" busybox)}
if LC_ALL=C ldd "$busybox" >/dev/null 2>&1; then
	echo "build-initramfs: $busybox is not a static binary" >&2
	exit 2
fi

stage=$(mktemp -d "${TMPDIR:-/tmp}/nsrun-vm-stage.XXXXXX")
root=$stage/root
cleanup() {
	if [ "$keep" = 1 ]; then echo "build-initramfs: staging directory kept: $root" >&2; else rm -rf "$stage"; fi
}
trap cleanup EXIT

mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,run,root,home/tuser,payload,var/tmp}
cp "$busybox" "$root/bin/busybox"
# only the shell here: /init has busybox install its other applets (a fork per link
# on this side would cost seconds)
ln -s busybox "$root/bin/sh"

# ---- the payload, plus the shared libraries its dynamic ELF files need
is_elf() { [ "$(head -c4 "$1" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ]; }
for p in ${paths[@]+"${paths[@]}"}; do
	cp -a "$p" "$root/payload/"
done
chmod -R a+rX "$root/payload"
find "$root/payload" -type f | while read -r f; do
	is_elf "$f" || continue
	# "libx.so => /path (addr)" and the interpreter's "/lib64/ld-linux... (addr)"
	{ LC_ALL=C ldd "$f" 2>/dev/null || true; } |
		awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' |
		while read -r lib; do
			[ -e "$root$lib" ] && continue
			mkdir -p "$root$(dirname "$lib")"
			cp -L "$lib" "$root$lib"
		done
done
# a usr-merged host resolves /lib64/ld-linux.so through /usr: keep both spellings working
for d in lib lib64; do
	if [ -d "$root/usr/$d" ] && [ ! -e "$root/$d" ]; then ln -s "usr/$d" "$root/$d"; fi
done

# ---- users
cat >"$root/etc/passwd" <<'EOT'
root:x:0:0:root:/root:/bin/sh
tuser:x:1000:1000:nsrun VM test user:/home/tuser:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOT
cat >"$root/etc/group" <<'EOT'
root:x:0:
tuser:x:1000:
nogroup:x:65534:
EOT
printf '%s\n' /bin/sh /bin/ash >"$root/etc/shells"
echo nsrun-vm >"$root/etc/hostname"
chmod 1777 "$root/tmp" "$root/var/tmp"
echo "$entry" >"$root/etc/nsrun-vm-entry"

# ---- PID 1
cat >"$root/init" <<'EOT'
#!/bin/sh
# /init of nsrun's VM tier (tests/vm/build-initramfs.sh): a pure cgroup v2 system,
# then the payload's test script; its status goes to the console, then power off.
PATH=/payload:/bin:/sbin:/usr/bin:/usr/sbin
HOME=/root
export PATH HOME
if [ ! -e /bin/mount ]; then
	# a symlink per applet (busybox finds itself through /proc/self/exe)
	/bin/busybox mount -t proc proc /proc && /bin/busybox --install -s && /bin/busybox umount /proc
fi
# The initramfs is the kernel's rootfs, which pivot_root(2) cannot leave (EINVAL):
# first move everything to a tmpfs and make that the root, as a real boot does.
if [ ! -e /.nsrun-vm-root ]; then
	# known-bugs B23: nsrun while "/" is the initramfs (its output is checked later)
	[ ! -f /payload/initramfs-test.sh ] || sh /payload/initramfs-test.sh >/initramfs-test.out 2>&1
	mkdir -p /newroot
	mount -t tmpfs -o mode=755 nsrun-vm-root /newroot
	for e in /* /.[!.]*; do
		case $e in /proc | /sys | /dev | /newroot | '/.[!.]*') ;; *) cp -a "$e" /newroot/ ;; esac
	done
	mkdir -p /newroot/proc /newroot/sys /newroot/dev
	: >/newroot/.nsrun-vm-root
	exec switch_root /newroot /init
fi
mount -t proc -o nosuid,nodev,noexec proc /proc
mount -t sysfs -o nosuid,nodev,noexec sysfs /sys
mount -t devtmpfs -o nosuid devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm
mount -t devpts -o nosuid,noexec,newinstance,ptmxmode=0666,mode=620 devpts /dev/pts
[ -e /dev/ptmx ] || ln -s pts/ptmx /dev/ptmx
mount -t tmpfs -o nosuid,nodev,mode=1777 tmpfs /tmp
mount -t tmpfs -o nosuid,nodev,mode=1777 tmpfs /dev/shm
mount -t tmpfs -o nosuid,nodev,mode=755 tmpfs /run
# cgroup v2 only; nsdelegate makes cgroup namespaces delegation boundaries, as systemd does
if ! mount -t cgroup2 -o nosuid,nodev,noexec,nsdelegate cgroup2 /sys/fs/cgroup; then
	mount -t cgroup2 -o nosuid,nodev,noexec cgroup2 /sys/fs/cgroup
fi
for c in $(cat /sys/fs/cgroup/cgroup.controllers); do
	echo "+$c" >/sys/fs/cgroup/cgroup.subtree_control || echo "nsrun-vm: cannot enable controller $c"
done
# Debian kernels allow unprivileged user namespaces by default; make sure of it
[ ! -w /proc/sys/kernel/unprivileged_userns_clone ] || echo 1 >/proc/sys/kernel/unprivileged_userns_clone
hostname "$(cat /etc/hostname)"
ip link set lo up 2>/dev/null
chown 1000:1000 /home/tuser
echo "NSRUN-VM-BOOTED uptime=$(cut -d' ' -f1 /proc/uptime)s kernel=$(uname -r)"
echo "nsrun-vm: cgroup2 root controllers: $(cat /sys/fs/cgroup/cgroup.subtree_control)"

entry=/payload/$(cat /etc/nsrun-vm-entry)
set --
for w in $(cat /proc/cmdline); do
	case $w in nsrunvm.arg=*) set -- "$@" "${w#nsrunvm.arg=}" ;; esac
done
cd /payload || cd /
if [ -f "$entry" ]; then
	sh "$entry" "$@" </dev/null
	rc=$?
else
	echo "nsrun-vm: no $entry in the image: nothing to test"
	rc=0
fi
echo "NSRUN-VM-STATUS=$rc uptime=$(cut -d' ' -f1 /proc/uptime)s"
sync
poweroff -f
sleep 5
EOT
chmod 755 "$root/init"

# ---- the archive: every file root-owned, whoever builds it
mkdir -p "$(dirname "$out")"
if command -v cpio >/dev/null; then cpio=(cpio --quiet -o -H newc -R 0:0); else cpio=("$busybox" cpio -o -H newc -R 0:0); fi
(cd "$root" && find . -print | LC_ALL=C sort | "${cpio[@]}") | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
echo "build-initramfs: $out ($(du -k "$out" | cut -f1) KiB, payload: $(cd "$root/payload" && find . -mindepth 1 -maxdepth 1 -printf '%f ')entry $entry)" >&2
