#!/bin/bash
# A secret in the invoking user's home is not readable from inside (not by path, not via /proc).
. "$(dirname "$0")/../lib.sh"
require_all

HOMEDIR=${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}
[ -d "$HOMEDIR" ] && [ -w "$HOMEDIR" ] || skip_all "home directory '$HOMEDIR' not writable"
SECRET="$HOMEDIR/.nsrun-secret-$$"
TOKEN="nsrun-secret-token-$$-$RANDOM"
echo "$TOKEN" >"$SECRET"
chmod 644 "$SECRET"
at_exit "rm -f '$SECRET'"

run_host_probe read "$SECRET"
assert_match "control: host reads the secret" "^read: ok .*$TOKEN" "$OUT"

for path in "$SECRET" "/proc/1/root$SECRET" "/proc/self/root$SECRET" "/proc/1/cwd/$(basename "$SECRET")" \
            "/proc/1/root/proc/1/root$SECRET"; do
	run_probe -- read "$path"
	assert_eq "payload cannot read $path" 1 "$RC"
	assert_not_match "  ... and never sees the token ($path)" "$TOKEN" "$OUT$ERR"
done

# with the home directory's parent as cwd of nsrun: cwd must not leak in
run_cmd bash -c 'cd "$1" && shift && exec "$@"' _ "$HOMEDIR" "$NSRUN" --image python -v "$PROBE_DIR:/mnt:ro" -- /mnt/nsrun-probe read "$(basename "$SECRET")"
assert_eq "relative path from nsrun's cwd (home) is not the host's" 1 "$RC"
assert_not_match "  ... and never sees the token" "$TOKEN" "$OUT$ERR"

# nor through pivot_root's old root: pid 1 detaches it before the payload is made, so
# the payload sees no mount stacked on "/" ("/.." a mount of its own, a second mount
# at "/" in mountinfo).  Control: the probe where the old root is still stacked
# (pivot_root(".", ".") with no detach, in a mount namespace of our own) sees it.
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
