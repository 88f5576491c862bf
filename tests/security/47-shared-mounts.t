#!/bin/bash
# An image (or OCI bundle's rootfs) on a shared mount, as everything is on a systemd
# host (/ is mounted shared) and in many outer sandboxes.  nsrun as root (and as root
# of a user namespace: unshare -Urm, nested) cloned the rootfs with open_tree(2),
# and a clone of a shared mount is in that mount's peer group: everything nsrun
# then mounted in the container (its /proc, /dev and its nodes, /tmp, /dev/shm,
# /etc/hosts) appeared in the caller's namespace beneath the rootfs, 22 mounts left
# there after the run, and the run failed (pivot_root(2) refuses a shared root).
# A volume there took the binds and tmpfs mounted inside it the same way, whatever
# the image.  The clones are now made private.  Each run is in a mount namespace of the test's
# own (unshare -m as root, unshare -Urm as an unprivileged user) whose tmpfs holding
# the image is shared.  Control: a mount made by a peer of that tmpfs (a namespace
# copied with its propagation) does appear there, so the count would see a leak.
. "$(dirname "$0")/../lib.sh"
require_nsrun
require_userns
require_probe

command -v runc >/dev/null || PATH=$PATH:/usr/sbin:/sbin
command -v runc >/dev/null || skip_all "runc is not installed (make deps): its spec is the bundle's template"

cat >"$TESTTMP/in-ns.sh" <<'EOF'
# in a mount namespace of our own: $1 a directory to hold the shared tmpfs
D=$1
mount -t tmpfs -o mode=0755 nsrun-shared "$D" && mount --make-shared "$D" || { echo "setup failed"; exit 0; }
mkdir -p "$D/img/proc" "$D/img/dev" "$D/img/tmp" "$D/img/etc" "$D/img/sys" "$D/img/run" "$D/bundle" &&
	touch "$D/img/etc/hosts" "$D/img/etc/hostname" "$D/img/etc/resolv.conf" &&
	echo 'root:x:0:0:root:/:/nsrun-probe' >"$D/img/etc/passwd" && echo 'root:x:0:' >"$D/img/etc/group" &&
	cp "$PROBE" "$D/img/nsrun-probe" && ln -s "$D/img" "$D/bundle/rootfs" &&
	(cd "$D/bundle" && runc spec --rootless) || { echo "setup of the image failed"; exit 0; }
python3 - "$D/bundle/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["process"]["args"] = ["/nsrun-probe", "ids"]
c["process"]["terminal"] = False
c["linux"]["rootfsPropagation"] = "rshared"
c["linux"].pop("seccomp", None)
c["mounts"] = [m for m in c["mounts"] if m["destination"] in ("/proc", "/dev", "/dev/pts", "/dev/shm")]
json.dump(c, open(sys.argv[1], "w"))
PY
count() { grep -c " $D[/ ]" /proc/self/mountinfo; }
echo "before $(count)"
out=$(XDG_CACHE_HOME=$D/cache timeout 60 "$NSRUN" --rootfs "$D/img" -- /nsrun-probe ids 2>&1)
echo "run $? ${out%%$'\n'*}"
echo "after-run $(count)"
out=$(XDG_CACHE_HOME=$D/cache timeout 60 "$NSRUN" --root "$D/state" run --bundle "$D/bundle" c1 2>/dev/null)
echo "oci $? ${out%%$'\n'*}"
echo "after-oci $(count)"
mkdir -p "$D/a/y" "$D/a/t" "$D/b"
out=$(XDG_CACHE_HOME=$D/cache timeout 60 "$NSRUN" --rootfs "$D/img" -v "$D/a:/x" -v "$D/b:/x/y" --tmpfs /x/t \
	-- /nsrun-probe ids 2>&1)
echo "vol $? ${out%%$'\n'*}"
echo "after-vol $(count)"
unshare -m --propagation unchanged mount -t tmpfs peer "$D/img/tmp"
echo "control $(count)"
EOF
mkdir "$TESTTMP/shared"
if [ "$(id -u)" = 0 ]; then
	run_cmd env NSRUN="$NSRUN" PROBE="$PROBE" unshare -m bash "$TESTTMP/in-ns.sh" "$TESTTMP/shared"
else
	run_cmd env NSRUN="$NSRUN" PROBE="$PROBE" unshare -Urm bash "$TESTTMP/in-ns.sh" "$TESTTMP/shared"
fi
line() { sed -n "s/^$1 //p" <<<"$OUT"; }
assert_eq "set-up: a shared tmpfs in a namespace of the test's own, one mount beneath it" 1 "$(line before)"
assert_eq "a run whose rootfs is on the shared mount: the payload runs" \
	"0 ids: ok uid=65534 gid=65534 euid=65534 egid=65534" "$(line run | sed 's/ groups=.*//')"
assert_eq "  ... and none of the container's mounts is left beneath it" 1 "$(line after-run)"
assert_eq "an OCI container of rootfsPropagation rshared there: it runs" "0 ids: ok" \
	"$(line oci | sed 's/ uid=.*//')"
assert_eq "  ... and none of its mounts reached the caller's namespace" 1 "$(line after-oci)"
assert_eq "a volume on the shared mount, a bind and a tmpfs inside it: the payload runs" \
	"0 ids: ok" "$(line vol | sed 's/ uid=.*//')"
assert_eq "  ... and neither reached the caller's namespace" 1 "$(line after-vol)"
assert_eq "control: a peer's mount there is seen (the count would show a leak)" 1 \
	"$(($(line control) - $(line after-vol)))"
done_testing
