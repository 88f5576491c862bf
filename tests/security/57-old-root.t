#!/bin/bash
# The old root after pivot_root is never the payload's to reach: pid 1 detaches it
# before the payload is made, so the payload sees no mount stacked on "/" ("/.." a
# mount of its own, a second mount at "/" in mountinfo).  The control: the same
# probe where pivot_root's old root is still stacked (a namespace of the test's
# own) sees it.  (A detach in a thread, which pid 1 would not wait for, was tried
# and not kept: bench/RESULTS.md; this is the probe it was proved with.)
. "$(dirname "$0")/../lib.sh"
require_nsrun
require_userns
require_probe
require_image python

# control: pivot_root(".", ".") with no detach, in a mount namespace of our own
mkdir -p "$TESTTMP/nr"
cat >"$TESTTMP/pivot.sh" <<'SH'
mount -t tmpfs nr "$1" && cp "$2" "$1/nsrun-probe" && mkdir "$1/proc" && mount --rbind /proc "$1/proc" && cd "$1" && pivot_root . . && exec ./nsrun-probe old-root
SH
if [ "$(id -u)" = 0 ]; then UNSHARE=(unshare -m); else UNSHARE=(unshare -Urm); fi
run_cmd "${UNSHARE[@]}" sh "$TESTTMP/pivot.sh" "$TESTTMP/nr" "$PROBE"
assert_match "control: the probe sees an old root stacked on / (no detach)" \
	'^old-root: ok /\.\. is another mount, 2 mounts at /$' "$OUT"

run_probe -- old-root
assert_eq "the payload sees no mount stacked on / (the old root is gone)" "0|old-root: ok /.. is /, 1 mount at /" \
	"$RC|$OUT"
done_testing
