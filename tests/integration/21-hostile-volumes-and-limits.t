#!/bin/bash
# Regressions from a review that attacked nsrun as a hostile payload would:
# - a symlink an earlier payload left in a shared rw volume must not move a later
#   run's nested volume (over /proc, /dev or /): mount points inside a volume are
#   resolved without following any symlink;
# - a positive --timeout below a microsecond is a timeout, not "no timeout";
# - --capture whose output cannot be written is an error, not a silent loss.
. "$(dirname "$0")/../lib.sh"
require_all

SH="$TESTTMP/shared"; OTHER="$TESTTMP/other"
mkdir -p "$SH" "$OTHER"
chmod 777 "$SH"
echo other-volume >"$OTHER/marker"
chmod -R a+rX "$OTHER"

# control: a nested volume at a real directory of the shared volume works
mkdir -m 777 "$SH/real"
run_nsrun --image python -v "$SH:/data:rw" -v "$OTHER:/data/real" -- cat /data/real/marker
assert_eq "control: a nested volume at a directory of the outer one" "0 other-volume" "$RC $OUT"

# the earlier payload plants links in the shared volume
run_nsrun --image python -v "$SH:/data:rw" -- sh -c 'ln -s /proc /data/sub && ln -s / /data/root && ln -s /dev /data/dev'
assert_eq "a payload may write symlinks into its rw volume" 0 "$RC"
for link in sub root dev; do
	run_nsrun --image python -v "$SH:/data:rw" -v "$OTHER:/data/$link" -- sh -c 'cat /proc/self/status >/dev/null && ls /dev/null && echo ran'
	assert_eq "a nested volume at the planted link /data/$link is refused (125)" 125 "$RC"
	assert_match "  ... saying why (a symlink is not followed)" '^nsrun: mount point "/data/'"$link"'": Too many levels of symbolic links' "$ERR"
	assert_not_match "  ... and the payload did not run over it" 'ran' "$OUT"
done

# a positive timeout below 1 us: 1 us, not unlimited
run_nsrun --image python --timeout 0.0000001 -- sleep 5
assert_eq "--timeout 0.0000001 times out (124), it does not mean none" 124 "$RC"
if elapsed_lt 3; then ok "  ... at once (${ELAPSED}s)"; else not_ok "  ... at once" "took ${ELAPSED}s"; fi
run_nsrun --image python --timeout 0 -- true
assert_eq "--timeout 0 still means none" 0 "$RC"

# --capture to a full stdout: nsrun says so and fails
run_cmd sh -c '"$0" --image python --capture -- echo hi >/dev/full' "$NSRUN"
assert_eq "--capture with stdout on /dev/full: 125" 125 "$RC"
assert_match "  ... with the reason" '^nsrun: write the captured output: No space left on device' "$ERR"

done_testing
