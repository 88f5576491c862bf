#!/bin/bash
# An OCI hook past its timeout is killed with what it started: only the hook's own
# process was, and a shell hook's child (sleep 300 &) lived on after create had
# failed, left on the host.  Each hook now runs in a process group of its own, which
# the timeout kills.  Control: a hook that ends in time may leave a process running
# (runtime-spec hooks start helpers, as network set-up does): the probe sees it.
. "$(dirname "$0")/../lib.sh"
require_nsrun
require_userns
require_probe

T=$TESTTMP/oci
oci_probe_bundle "$T" "$TESTTMP/image"
# bundle_with PRESTART-HOOK-AS-JSON
bundle_with() {
	oci_config "$T" '["/nsrun-probe", "exit", "0"]' 'c["hooks"] = {"prestart": [json.loads(argv[0])]}' "" "$1"
}
# alive PID — 0 if PID is a process that has not ended (a zombie has)
alive() { [ -n "$1" ] && [ -e "/proc/$1" ] && ! grep -q '^[0-9]* ([^)]*) Z' "/proc/$1/stat" 2>/dev/null; }
# gone_within PID SECONDS
gone_within() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		alive "$1" || return 0
		sleep 0.1
	done
	return 1
}
cleanup() {
	local p
	for p in "$T"/*.pid; do [ -s "$p" ] && kill -9 "$(cat "$p")" 2>/dev/null; done
	for p in "$ROOT"/*/; do [ -d "$p" ] && "$NSRUN" --root "$ROOT" delete --force "$(basename "$p")"; done
}
at_exit cleanup

# shellcheck disable=SC2016 # expanded by the hook
printf '#!/bin/sh\nsleep 300 </dev/null >/dev/null 2>&1 &\necho $! >"$1"\nwait\n' >"$T/hook-hangs"
# shellcheck disable=SC2016
printf '#!/bin/sh\nsleep 300 </dev/null >/dev/null 2>&1 &\necho $! >"$1"\n' >"$T/hook-leaves"
chmod +x "$T/hook-hangs" "$T/hook-leaves"

bundle_with "{\"path\": \"$T/hook-hangs\", \"args\": [\"hook\", \"$T/hangs.pid\"], \"timeout\": 1}"
run_cmd "$NSRUN" --root "$ROOT" create --bundle "$T/bundle" h1
assert_match "a prestart hook past its timeout: create fails, naming it" \
	"nsrun: hooks\\.prestart\\[0\\] $T/hook-hangs: timed out after 1 s" "$ERR"
assert_eq "  ... the hook had started its child" 1 "$([ -s "$T/hangs.pid" ] && echo 1)"
check "  ... which was killed with it" gone_within "$(cat "$T/hangs.pid" 2>/dev/null)" 30

bundle_with "{\"path\": \"$T/hook-leaves\", \"args\": [\"hook\", \"$T/leaves.pid\"], \"timeout\": 30}"
run_cmd "$NSRUN" --root "$ROOT" run --bundle "$T/bundle" h2
assert_eq "control: a hook that ends in time: the run goes on (exit 0)" 0 "$RC"
check "  ... and the process it left runs on (the probe sees a survivor)" alive "$(cat "$T/leaves.pid" 2>/dev/null)"
done_testing
