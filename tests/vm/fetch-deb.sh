#!/bin/bash
# fetch-deb.sh - get the two Debian binaries the VM tier needs, without installing
# anything: the package is fetched with `apt-get download` into a cache directory,
# only the wanted file is unpacked (dpkg-deb + tar) and the .deb is dropped.
#
# usage: fetch-deb.sh kernel     print the path of a cached vmlinuz
#        fetch-deb.sh busybox    print the path of a cached static busybox
#
# environment:
#   NSRUN_VM_CACHE       cache directory (default ${XDG_CACHE_HOME:-$HOME/.cache}/nsrun-vm)
#   NSRUN_VM_KERNEL_PKG  kernel package or metapackage (default linux-image-cloud-amd64:
#                        LZ4-compressed, boots in ~3 s under TCG; the generic XZ one is slower)
#
# The package's current version comes from the apt lists (run `apt-get update` once);
# without lists, the newest copy already in the cache is used. Nothing needs root.
set -euo pipefail

# the comment block at the top is the usage text
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit "${1:-2}"; }

CACHE=${NSRUN_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nsrun-vm}

# candidate version of PKG, empty when apt knows nothing about it
candidate() {
	apt-cache policy "$1" 2>/dev/null | awk '$1 == "Candidate:" && $2 != "(none)" {print $2; exit}'
}

# fetch PKG MEMBER [FALLBACK]: unpack MEMBER (a tar glob like ./boot/vmlinuz-*) of
# PKG into $CACHE/PKG_VERSION/ once; print that directory. When apt knows no version
# (no lists), the newest cached directory matching FALLBACK (default PKG_*) is used.
fetch() {
	local pkg=$1 member=$2 fallback=${3:-${1}_*} ver dir tmp opt
	ver=$(candidate "$pkg")
	if [ -z "$ver" ]; then
		dir=$(find "$CACHE" -maxdepth 1 -type d -name "$fallback" 2>/dev/null | sort -V | tail -1)
		[ -n "$dir" ] || { echo "fetch-deb: apt does not know $pkg (run apt-get update first)" >&2; return 1; }
		echo "$dir"
		return 0
	fi
	dir=$CACHE/${pkg}_${ver//:/%}
	if [ ! -d "$dir" ]; then
		mkdir -p "$CACHE"
		tmp=$(mktemp -d "$CACHE/.fetch.XXXXXX")
		echo "fetch-deb: apt-get download $pkg=$ver (not installed)" >&2
		# as root, apt would drop to _apt, who cannot write to a private directory
		opt=()
		[ "$(id -u)" != 0 ] || opt=(-o APT::Sandbox::User=root)
		if ! (cd "$tmp" && apt-get download -q "${opt[@]}" "$pkg=$ver" >&2); then
			rm -rf "$tmp"
			return 1
		fi
		mkdir "$tmp/x"
		dpkg-deb --fsys-tarfile "$tmp"/*.deb | tar -x -C "$tmp/x" --wildcards "$member"
		rm -f "$tmp"/*.deb
		# a concurrent fetch may have won the race: keep its copy
		mv -T "$tmp/x" "$dir" 2>/dev/null || true
		rm -rf "$tmp"
	fi
	echo "$dir"
}

case ${1:-} in
kernel)
	if [ -n "${NSRUN_VM_KERNEL:-}" ]; then echo "$NSRUN_VM_KERNEL"; exit 0; fi
	meta=${NSRUN_VM_KERNEL_PKG:-linux-image-cloud-amd64}
	# a metapackage depends on the versioned image package that holds the kernel
	pkg=$(apt-cache depends "$meta" 2>/dev/null | awk '$1 == "Depends:" && $2 ~ /^linux-image-/ {print $2; exit}')
	[ -n "$pkg" ] || pkg=$meta
	dir=$(fetch "$pkg" './boot/vmlinuz-*' "linux-image-*${meta#linux-image-}_*")
	k=$(find "$dir/boot" -name 'vmlinuz-*' | head -1)
	[ -n "$k" ] || { echo "fetch-deb: no vmlinuz in $dir" >&2; exit 1; }
	echo "$k"
	;;
busybox)
	dir=$(fetch busybox-static './bin/busybox')
	echo "$dir/bin/busybox"
	;;
-h|--help) usage 0 ;;
*) usage ;;
esac
