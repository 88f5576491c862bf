#!/bin/bash
# Issue 17, kinds 1 and 9: paths nsrun opens on the caller's behalf.
# - --stdin FILE and --json FILE never follow a symlink that a payload could have
#   planted (any link root does not own), so a payload with a rw volume cannot make
#   nsrun read a file into it or overwrite one with the document;
# - the --json document is written after the container is gone, by rename, so a
#   payload cannot replace it with a forged one, and a path changed under nsrun
#   during the run is an error;
# - -d --json into a rw volume of the service is refused (the service lives on);
# - a -v source that is the caller's symlink is followed once (as docker does).
# Root and unprivileged differ (the victim is root's, the payload's links are 65534's):
# the suite runs as both.
. "$(dirname "$0")/../lib.sh"
require_all

VOL="$TESTTMP/vol"
mkdir -m 777 "$VOL"
VICTIM="$TESTTMP/victim"
echo victim-secret-line >"$VICTIM"
chmod 600 "$VICTIM"           # the caller's alone (root's, as root)

# ---- the payload plants links in its rw volume
run_nsrun --image python -v "$VOL:/data:rw" -- sh -c "ln -s '$VICTIM' /data/in.txt && ln -s '$VICTIM' /data/out.json"
assert_eq "a payload may plant symlinks in its rw volume" 0 "$RC"
assert_eq "control: on the host the planted link leads to the victim" victim-secret-line "$(cat "$VOL/in.txt")"

# ---- --stdin through the planted link
run_nsrun --image python --stdin "$VOL/in.txt" -- cat
assert_eq "--stdin through a planted symlink is refused (125)" 125 "$RC"
assert_not_match "  ... the victim did not reach the payload" victim-secret "$OUT"
assert_match "  ... saying why" 'nsrun: --stdin ".*in.txt": a symlink that root does not own is not followed' "$ERR"
assert_nsrun_error "  ... one error line"
echo plain-input >"$VOL/plain.txt"
run_nsrun --image python --stdin "$VOL/plain.txt" -- cat
assert_eq "control: --stdin of a regular file in the same volume works" "0 plain-input" "$RC $OUT"
run_nsrun --image python --stdin /dev/null -- cat
assert_eq "control: --stdin /dev/null (a link of root's in /dev on most hosts, or a device) works" "0 " "$RC $OUT"
run_nsrun --image python --stdin "$TESTTMP" -- cat
assert_eq "--stdin of a directory is refused (it would open the host's tree)" 125 "$RC"

# ---- --json through the planted link
run_nsrun --image python --json "$VOL/out.json" -- true
assert_eq "--json through a planted symlink is refused (125)" 125 "$RC"
assert_eq "  ... the victim is untouched" victim-secret-line "$(cat "$VICTIM")"
check "  ... and still a link" test -L "$VOL/out.json"
run_nsrun --image python --json /dev/stdout -- echo hi
assert_match "control: --json /dev/stdout (root's link) works" '^\{"schema":.*"stdout":"hi\\n"' "$OUT"

# ---- --json in a rw volume: the payload replaces the document while it runs
run_nsrun --image python -v "$VOL:/data:rw" --json "$VOL/result.json" -- sh -c \
	'rm -f /data/result.json; echo "{\"status\": \"exited\", \"exit_code\": 0, \"forged\": true}" >/data/result.json && echo wrote >/data/witness; exit 3'
assert_eq "a payload that forges the --json document: nsrun's exit is the payload's (3)" 3 "$RC"
assert_eq "control: the payload could write into the volume" wrote "$(cat "$VOL/witness" 2>/dev/null)"
assert_match "  ... the document is nsrun's, not the forgery" '"exit_code":3' "$(cat "$VOL/result.json")"
assert_not_match "  ... no forged field" forged "$(cat "$VOL/result.json")"

# ---- the directory of the --json path is swapped during the run
mkdir -m 777 "$VOL/sub"
run_nsrun --image python -v "$VOL:/data:rw" --json "$VOL/sub/r.json" -- sh -c \
	'mv /data/sub /data/sub.old && mkdir /data/sub && echo "{\"forged\": true}" >/data/sub/r.json'
assert_eq "--json whose directory was swapped during the run: 125" 125 "$RC"
assert_match "  ... saying the path no longer leads to the document" 'no longer leads to the document nsrun wrote' "$ERR"
check "  ... nsrun's document is where it opened the directory" grep -q '"status":"exited"' "$VOL/sub.old/r.json"
run_nsrun --image python -v "$VOL:/data:rw" --json "$VOL/sub.old/r2.json" -- true
assert_eq "control: --json into a volume's directory left alone works" 0 "$RC"

# ---- a planted symlink as a directory of the --json path
mkdir -m 700 "$TESTTMP/private"
run_nsrun --image python -v "$VOL:/data:rw" -- ln -s "$TESTTMP/private" /data/outdir
assert_eq "a payload plants a directory link in its volume" 0 "$RC"
run_nsrun --image python --json "$VOL/outdir/r.json" -- true
if [ "$(id -u)" = 0 ]; then
	assert_eq "as root, --json through a directory link root does not own is refused (125)" 125 "$RC"
	assert_match "  ... naming the link" 'outdir" is a symlink that root does not own' "$ERR"
	check "  ... nothing was written where it leads" test ! -e "$TESTTMP/private/r.json"
	mkdir -m 755 "$TESTTMP/rootdir"; ln -s "$TESTTMP/rootdir" "$TESTTMP/rootlink"
	run_nsrun --image python --json "$TESTTMP/rootlink/r.json" -- true
	assert_eq "control: as root, through a link of root's own it works" 0 "$RC"
	check "  ... the document is where the link leads" test -s "$TESTTMP/rootdir/r.json"
else
	# the payload's links are the caller's own here, and lead nowhere the caller
	# could not write: followed (docs/threat-model.md)
	assert_eq "unprivileged, a directory link of the caller's uid is followed" 0 "$RC"
	check "  ... the document is where it leads" test -s "$TESTTMP/private/r.json"
fi

# ---- -d --json into a rw volume of the service
export XDG_RUNTIME_DIR="$TESTTMP/run"
mkdir -m 700 "$XDG_RUNTIME_DIR"
run_nsrun -d --name "hp$$" -v "$VOL:/data:rw" --json "$VOL/svc.json" --image python -- sleep 30
assert_eq "-d --json into the service's rw volume is refused (125)" 125 "$RC"
assert_match "  ... saying why" 'is in the rw volume .*: the service could replace it' "$ERR"
run_nsrun -d --name "hp$$" -v "$VOL:/data:rw" --json "$TESTTMP/svc.json" --image python -- sleep 30
assert_eq "control: -d --json outside the volume works" 0 "$RC"
assert_match "  ... with the document" "\"name\":\"hp$$\"" "$(cat "$TESTTMP/svc.json" 2>/dev/null)"
"$NSRUN" stop -t 0 "hp$$" >/dev/null 2>&1 || "$NSRUN" rm -f "hp$$" >/dev/null 2>&1

# ---- -v with the caller's own symlink as the source (kind 9)
mkdir -m 755 "$TESTTMP/real"
echo through-the-link >"$TESTTMP/real/f"
chmod 644 "$TESTTMP/real/f"
ln -s real "$TESTTMP/link"
run_nsrun --image python -v "$TESTTMP/link:/data" -- cat /data/f
assert_eq "-v SOURCE that is the caller's symlink: followed once" "0 through-the-link" "$RC $OUT"
run_nsrun --image python -v "$TESTTMP/real:/data" -- cat /data/f
assert_eq "control: the directory itself" "0 through-the-link" "$RC $OUT"
ln -s nowhere "$TESTTMP/dangling"
run_nsrun --image python -v "$TESTTMP/dangling:/data" -- true
assert_eq "-v SOURCE a dangling symlink: 125" 125 "$RC"
assert_nsrun_error "  ... one error line"

done_testing
