#!/bin/bash
# check-vm.sh - nsrun's VM tier in one command: build the initramfs from a build
# directory's nsrun and nsrun-probe, the seccomp profiles and guest-test.sh, boot
# it under QEMU (run-vm.sh) and print the guest's summary line.
#
# usage: check-vm.sh [-b BUILD_DIR] [-t SECONDS] [-q] [-- GUEST-ARG...]
#   -b DIR      where nsrun and nsrun-probe are (default: build, at the top of the tree)
#   -t SECONDS  time limit of the boot (default 600)
#   -q          do not stream the console (it is printed if the run fails)
#   GUEST-ARG   guest-test.sh's mode: --nsrun (default), --smoke, --all, --systemd
# Exit status: run-vm.sh's (the guest's; 124 time limit; 125 no status).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# the comment block at the top is the usage text
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit "${1:-2}"; }

build=$top/build tmo=600 quiet=()
while getopts "b:t:qh" opt; do
	case $opt in
	b) build=$OPTARG ;;
	t) tmo=$OPTARG ;;
	q) quiet=(-q) ;;
	h) usage 0 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))

payload=(-p "$build/nsrun-probe" -p "$here/guest-test.sh" -p "$here/initramfs-test.sh")
[ ! -f "$build/nsrun" ] || payload+=(-p "$build/nsrun")
[ ! -d "$top/seccomp-profiles" ] || payload+=(-p "$top/seccomp-profiles")
# a systemd user manager and its session bus, for the scope tests: the host's own
# (Debian's systemd and dbus-daemon packages; the guest test fails without them)
for f in /lib/systemd/systemd "$(command -v systemctl)" "$(command -v busctl)" "$(command -v dbus-daemon)" \
	/usr/share/dbus-1/session.conf; do
	[ ! -f "$f" ] || payload+=(-p "$f")
done
[ -f "$build/nsrun-probe" ] || { echo "check-vm: $build/nsrun-probe missing (make all)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/nsrun-vm.XXXXXX")
trap 'rm -rf "$work"' EXIT
# programs that reserve far more address space than they use (issue 22), built here
# from tests/probe: an AddressSanitizer one (gcc) and a Go one (Debian's golang-go),
# with the list of the libraries the ASan one needs, which the guest copies into the
# rootfs it runs it from; the guest test fails where one is missing
mkdir -p "$work/memprogs"
if gcc -fsanitize=address -static-libasan -O1 -g -o "$work/memprogs/asan-alloc" "$top/tests/probe/asan-alloc.c" \
	2>"$work/gcc.err"; then
	LC_ALL=C ldd "$work/memprogs/asan-alloc" | awk '$3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' \
		>"$work/memprogs/asan-alloc.libs"
else
	echo "check-vm: gcc -fsanitize=address failed (build-essential): $(head -c 300 "$work/gcc.err")" >&2
fi
gocache=${NSRUN_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nsrun-vm}/go-build
mkdir -p "$gocache"
if ! (cd "$work" && GOCACHE=$gocache GOPATH=$work/gopath CGO_ENABLED=0 GOFLAGS=-mod=mod \
	go build -o "$work/memprogs/go-alloc" "$top/tests/probe/go-alloc.go") 2>"$work/go.err"; then
	echo "check-vm: go build failed (golang-go): $(head -c 300 "$work/go.err")" >&2
fi
payload+=(-p "$work/memprogs")
"$here/build-initramfs.sh" -o "$work/initramfs.cpio.gz" "${payload[@]}"
set +e
"$here/run-vm.sh" -i "$work/initramfs.cpio.gz" -t "$tmo" -l "$work/console.log" ${quiet[@]+"${quiet[@]}"} -- "$@"
rc=$?
set -e
summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$work/console.log" | tail -1 || true)
accel=$(sed -n 's/^run-vm: ran with //p' "$work/console.log" | tail -1)
echo "== VM tier: ${summary:-no summary from the guest} (status $rc; ${accel:-no accelerator started})"
if [ "$rc" != 0 ]; then
	keep=${TMPDIR:-/tmp}/nsrun-vm-console.log
	cp "$work/console.log" "$keep" && echo "check-vm: console log kept in $keep" >&2
fi
exit "$rc"
