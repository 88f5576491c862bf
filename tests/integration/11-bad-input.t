#!/bin/bash
# Bad input: one stderr line starting "nsrun: " (plus optional "nsrun: hint:" lines) and exit 125;
# never runs a payload.
. "$(dirname "$0")/../lib.sh"
require_nsrun
require_userns
require_image python

mkdir -p "$TESTTMP/adir"
echo 'print("should not run")' >"$TESTTMP/ok.py"
chmod 644 "$TESTTMP/ok.py"

# broken stores
BAD="$TESTTMP/badstore"; mkdir -p "$BAD/python/rootfs"
echo '{ this is not json' >"$BAD/python/image.json"
UNR="$TESTTMP/unreadable"; mkdir -p "$UNR/python/rootfs"; echo '{}' >"$UNR/python/image.json"; chmod 000 "$UNR/python/image.json"
EMPTY="$TESTTMP/emptystore"; mkdir -p "$EMPTY"

# each row: DESCRIPTION | expected stderr regex (after "nsrun: ") | args...
# each row: DESCRIPTION | ERE the first stderr line must match after "nsrun: " | args...
rows=(
	"unknown image|no-such-image|--image no-such-image -- true"
	"missing FILE|missing\.py|--image python $TESTTMP/missing.py"
	"FILE is a directory|adir|--image python $TESTTMP/adir"
	"--memory 12x|memory|12x|--image python --memory 12x -- true"
	"--memory empty|memory|--image python --memory= -- true"
	"--memory negative|memory|-5|--image python --memory -5 -- true"
	"--tmpfs-size 1q|tmpfs-size|1q|--image python --tmpfs-size 1q -- true"
	"--timeout abc|timeout|abc|--image python --timeout abc -- true"
	"--timeout -1|timeout|-1|--image python --timeout -1 -- true"
	"--pids-limit x|pids-limit|--image python --pids-limit x -- true"
	"--cpu-time x|cpu-time|--image python --cpu-time x -- true"
	"--network host|network|host|--image python --network host -- true"
	"--network bridge|network|bridge|--image python --network bridge -- true"
	"--user abc|user|abc|--image python --user abc -- true"
	"--user 1:2:3|user|1:2:3|--image python --user 1:2:3 -- true"
	"-e with a bad name|env|1BAD|--image python -e 1BAD=x -- true"
	"-v without container path|volume|--image python -v $TESTTMP -- true"
	"unknown option|no-such-option|--image python --no-such-option -- true"
	"option missing its value|timeout|--image python --timeout"
	"no image and no rootfs|image|rootfs|-- true"
	"--image without a name|image|--image"
	"nothing to run|.|--image python"
	"-- without a command|.|--image python --"
)

for row in "${rows[@]}"; do
	desc=${row%%|*}; args=${row##*|}; re=${row#*|}; re=${re%|*}
	# shellcheck disable=SC2086
	run_nsrun $args
	assert_eq "$desc: exit 125" 125 "$RC"
	assert_nsrun_error "$desc: one 'nsrun: ' line"
	assert_match "$desc: message names the problem (/$re/)" "^nsrun: .*($re)" "$(head -n 1 <<<"$ERR")"
	assert_not_match "$desc: payload did not run" 'should not run' "$OUT"
done

# messages that must say what to do
run_nsrun --image no-such-image -- true
store=${NSRUN_IMAGES:-$HOME/.local/share/nsrun/images}
assert_match "unknown image: names the image" 'no-such-image' "$ERR"
assert_match "unknown image: names the directory searched" "$store" "$ERR"
assert_match "unknown image: lists existing images" 'python' "$ERR"

run_cmd env NSRUN_IMAGES="$EMPTY" "$NSRUN" --image python -- true
assert_eq "empty store: 125" 125 "$RC"
assert_match "empty store: names the directory" "$EMPTY" "$ERR"

run_cmd env NSRUN_IMAGES="$BAD" "$NSRUN" --image python -- true
assert_eq "malformed image.json: 125" 125 "$RC"
assert_match "malformed image.json: says image.json" '^nsrun: .*image\.json' "$ERR"

# unreadable image.json: mode 000 (not root), or a directory (EISDIR, also for root)
if [ "$(id -u)" = 0 ]; then rm -f "$UNR/python/image.json"; mkdir "$UNR/python/image.json"; fi
run_cmd env NSRUN_IMAGES="$UNR" "$NSRUN" --image python -- true
assert_eq "unreadable image.json: 125" 125 "$RC"
assert_match "unreadable image.json: says image.json" '^nsrun: .*image\.json' "$ERR"

run_nsrun --image python "$TESTTMP/missing.py"
assert_match "missing FILE: names the file" 'missing\.py' "$ERR"
run_nsrun --image python --network host -- true
assert_match "--network host: says network" '^nsrun: .*network' "$ERR"
run_nsrun --image python --memory 12x -- true
assert_match "--memory 12x: names the option or value" '^nsrun: .*(memory|12x)' "$ERR"

done_testing
