#!/bin/bash
# B18: user namespaces unavailable (limit 0, or forbidden by an outer sandbox): exit 125 with
# a message about user namespaces, not a bare "No space left on device"; nothing runs.
. "$(dirname "$0")/../lib.sh"
require_nsrun
require_userns
require_image python

OUTDIR="$TESTTMP/out"; mkdir -m 777 "$OUTDIR"

# emulate user.max_user_namespaces=0 inside a user namespace of our own
# as root, by nobody: root's own namespaces map only host root, where nsrun refuses
# to run for that reason first (25-agent-sandboxes.t)
AGENT=()
[ "$(id -u)" = 0 ] && AGENT=(setpriv --reuid=65534 --regid=65534 --clear-groups)
run_cmd "${AGENT[@]+"${AGENT[@]}"}" unshare -Ur sh -c 'echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"' _ \
	"$NSRUN" --image python -v "$OUTDIR:/out:rw" -- touch /out/ran
assert_eq "max_user_namespaces=0: exit 125" 125 "$RC"
assert_match "  ... message mentions user namespaces" '^nsrun: .*(user namespace|user\.max_user_namespaces|userns)' "$ERR"
assert_nsrun_error "  ... one nsrun: line (+ hint)"
check "  ... payload did not run" test ! -e "$OUTDIR/ran"

if command -v bwrap >/dev/null && bwrap --help 2>&1 | grep -q -- --disable-userns; then
	run_cmd "${AGENT[@]+"${AGENT[@]}"}" bwrap --unshare-user --disable-userns --dev-bind / / -- "$NSRUN" --image python -v "$OUTDIR:/out:rw" -- touch /out/ran
	if [[ $ERR == *"bwrap:"* ]]; then
		skip "bwrap --disable-userns does not work here: $ERR" "outer sandbox forbids user namespaces"
	else
		assert_eq "outer bwrap --disable-userns: exit 125" 125 "$RC"
		assert_match "  ... message mentions user namespaces" '^nsrun: .*(user namespace|userns)' "$ERR"
		check "  ... payload did not run" test ! -e "$OUTDIR/ran"
	fi
else
	skip "bwrap with --disable-userns not installed" "outer sandbox forbids user namespaces"
fi

# control: the same command runs normally
run_nsrun --image python -v "$OUTDIR:/out:rw" -- touch /out/ran
assert_eq "control: the run works without the restriction" 0 "$RC"
check "control: payload ran" test -e "$OUTDIR/ran"

done_testing
