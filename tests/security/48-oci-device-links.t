#!/bin/bash
# An OCI bundle's linux.devices path beneath a link nsrun makes in every container's
# /dev (fd, stdin, stdout, stderr, ptmx).  /dev/fd/9/x passed the checks: on the
# host it named x in whatever directory the caller's fd 9 was (a link to /dev/null
# there was taken for the node), and the container then made its mount point (and,
# for a deeper path, directories) through the container's own /dev/fd link: in a
# directory outside the container's /dev, as the container's root.  Such paths are
# now refused before anything is made, and the mount point is made following no
# link.  Controls: a node at a path with a directory of its own (/dev/net/tun or
# /dev/fuse) and a FIFO two directories deep are made.
. "$(dirname "$0")/../lib.sh"
require_nsrun
require_userns
require_probe

T=$TESTTMP/oci
mkdir -p "$TESTTMP/callers"
oci_probe_bundle "$T" "$TESTTMP/image"
# bundle_with ARGS-AS-JSON DEVICES-AS-JSON
bundle_with() { oci_config "$T" "$1" 'c["linux"]["devices"] = json.loads(argv[0])' "" "$2"; }
at_exit oci_cleanup

# the caller's directory on fd 9: a link to /dev/null in it, and a subdirectory
ln -s /dev/null "$TESTTMP/callers/x"
mkdir "$TESTTMP/callers/sub"
ln -s /dev/null "$TESTTMP/callers/sub/x"
for p in /dev/fd/9/x /dev/fd/9/sub/x /dev/stdin/x /dev/ptmx/x; do
	bundle_with '["/nsrun-probe", "ids"]' "[{\"path\": \"$p\", \"type\": \"c\", \"major\": 1, \"minor\": 3}]"
	run_cmd "$NSRUN" --root "$ROOT" run --bundle "$T/bundle" l1 9<"$TESTTMP/callers" <"$TESTTMP/callers"
	assert_match "linux.devices $p: refused, the link named" \
		"^nsrun: config.json: linux.devices\\[0\\].path: \"$p\": /dev/[a-z]* is a link nsrun makes" "$ERR"
	assert_eq "  ... exit 1, the payload not run, nothing left under --root" "1  0" \
		"$RC $OUT $(find "$ROOT" -mindepth 1 2>/dev/null | wc -l)"
done
assert_eq "  ... and nothing made in the caller's directory" "sub x x" \
	"$(cd "$TESTTMP/callers" && find . -mindepth 1 -printf '%f\n' | sort | xargs)"

dev=
for d in /dev/net/tun /dev/fuse; do
	[ -c "$d" ] && { dev=$d; break; }
done
if [ -z "$dev" ]; then
	skip "the host has neither /dev/net/tun nor /dev/fuse (a character device in a directory)" "control"
else
	maj=$((16#$(stat -c %t "$dev")))
	min=$((16#$(stat -c %T "$dev")))
	bundle_with "[\"/nsrun-probe\", \"stat\", \"$dev\"]" \
		"[{\"path\": \"$dev\", \"type\": \"c\", \"major\": $maj, \"minor\": $min}]"
	run_cmd "$NSRUN" --root "$ROOT" run --bundle "$T/bundle" l2
	assert_match "control: $dev, a node in a directory of its own, is made" "^stat: ok $dev char $maj:$min" "$OUT"
fi
bundle_with '["/nsrun-probe", "stat", "/dev/a/b/fifo"]' '[{"path": "/dev/a/b/fifo", "type": "p", "fileMode": 420}]'
run_cmd "$NSRUN" --root "$ROOT" run --bundle "$T/bundle" l3
assert_match "control: a FIFO two directories deep is made" "^stat: ok /dev/a/b/fifo fifo" "$OUT"
done_testing
