#!/bin/bash
# The old root after pivot_root is never the payload's to reach.  pid 1 has a thread
# detach it (umount2 waits for an RCU grace period after taking it out of the
# namespace: runtime/mount_detach.c) and goes on only once it is out; the payload,
# made after, must never see a mount stacked on "/" ("/.." a mount of its own, a
# second mount at "/" in mountinfo).  The racing payload is the static probe itself,
# run at once, many times.  The control: the same probe where pivot_root's old root
# is still stacked (a namespace of the test's own) sees it.
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

bad=0 runs=0
for _ in $(seq 8); do
	run_probe -- old-root
	runs=$((runs + 1))
	[ "$RC" = 0 ] && [ "$OUT" = "old-root: ok /.. is /, 1 mount at /" ] || { bad=$((bad + 1)); last="$RC $OUT $ERR"; }
done
assert_eq "the payload never sees the old root ($runs runs racing from their first instruction)" \
	"0" "$bad${last:+ (last: $last)}"
done_testing
