#!/bin/bash
# --tmpfs PATH:tmpcopyup (and so an image's Volume through nsrun api) copies what the
# image has at PATH into the tmpfs, in the container's init before pivot_root, where
# a link of the image that were followed would read the host's files.  A hostile
# image's Volume holds a link to a host file the caller can read, a FIFO (whose
# open would block the start for ever) and a file past the tmpfs's size.
# Probes: the link is copied as a link (inside it leads to nothing: the host file
# is not there), the FIFO is left out and the run ends, the big file fails the run
# as nsrun's one-line error (125) naming it.  Controls: a plain file of the same
# directory is copied with its content; the host file is there and readable by the
# caller; without tmpcopyup the tmpfs is empty; with room for it the big file is
# copied.
. "$(dirname "$0")/../lib.sh"
require_nsrun
require_userns
require_probe

plan 10

R=$TESTTMP/rootfs
mkdir -p "$R/proc" "$R/dev" "$R/tmp" "$R/etc" "$R/vol/sub"
: >"$R/etc/hosts"
: >"$R/etc/hostname"
cp "$PROBE_DIR/nsrun-probe" "$R/probe"
echo HOSTSECRET >"$TESTTMP/hostsecret"
ln -s "$TESTTMP/hostsecret" "$R/vol/leak"
echo plain-content >"$R/vol/sub/plain"
mkfifo "$R/vol/fifo"
chmod -R a+rX "$R" "$TESTTMP"
# cp: a file of the image copied in; (a FIFO on the way would hang the start for ever)
run() { NSRUN_TEST_GUARD=60 run_nsrun --rootfs "$R" --tmpfs "/vol:$1" -- /probe "${@:2}"; }

run size=1m,tmpcopyup read /vol/sub/plain
assert_match "control: a plain file below the Volume is copied in, with its content" \
	'^read: ok /vol/sub/plain .*plain-content' "$OUT"
run size=1m,tmpcopyup read /vol/leak
assert_match "a link to a host file is copied as a link: inside it leads nowhere" '^read: denied ENOENT' "$OUT"
check "  control: the host file is there, readable by the caller" grep -qx HOSTSECRET "$TESTTMP/hostsecret"
run size=1m,tmpcopyup stat /vol/leak
assert_match "  ... and it is a link in the tmpfs" '^stat: ok /vol/leak (link|symlink)' "$OUT"
run size=1m,tmpcopyup stat /vol/fifo
assert_eq "a FIFO is left out, and the run goes on (never opened: the probe's own exit 1)" "1 stat: denied ENOENT stat /vol/fifo" "$RC $OUT"
run size=1m read /vol/sub/plain
assert_match "control: without tmpcopyup the tmpfs is empty" '^read: denied ENOENT' "$OUT"

head -c $((2 << 20)) /dev/zero >"$R/vol/big"
chmod a+r "$R/vol/big"
run size=1m,tmpcopyup read /vol/sub/plain
assert_eq "a file past the tmpfs's size fails the run as nsrun's error" 125 "$RC"
assert_match "  ... naming it, with a hint" \
	'^nsrun: tmpcopyup "/vol": write "big": No space left on device' "$ERR"
assert_nsrun_error "  ... one line (and a hint)"
run size=4m,tmpcopyup read /vol/sub/plain
assert_match "  control: with room for it the run goes on" '^read: ok /vol/sub/plain' "$OUT"
