#!/bin/bash
# nsrun check: one line per feature, ok or missing with the cause and the fix; exit 0
# when a default run works, 2 when no run can; --json says the same as a document.
. "$(dirname "$0")/../lib.sh"
require_all

run_nsrun check
assert_eq "nsrun check: exit 0 where runs work" 0 "$RC"
for f in "user namespace" "mount namespace" "pid namespace" "net namespace" "ipc namespace" \
	"uts namespace" "container start" "fresh /proc" "/dev nodes" pivot_root "seccomp profile"; do
	assert_match "$f: ok" "(^|
)$f: ok" "$OUT"
done
assert_match "the nesting depth left is reported" '(^|
)user namespace: ok \((at least )?[0-9]+ more levels can be nested below it\)' "$OUT"
assert_match "a cgroup v2 line: ok, or missing with the cause" '(^|
)cgroup v2: (ok \(runs go under /|missing: .+; fix: )' "$OUT"
assert_match "seccomp ok with libseccomp's version" '(^|
)seccomp: ok \(libseccomp [0-9]+\.[0-9]+\.[0-9]+' "$OUT"
assert_match "landlock: its ABI, or why not" '(^|
)landlock: (ok \(ABI [0-9]+\)|missing: .+)' "$OUT"
assert_match "pasta: ok, or why --network pasta cannot work and the fix" '(^|
)pasta: (ok \(--network pasta can make eth0|missing: .*(passt|/dev/net/tun).*; fix: )' "$OUT"
assert_match "newuidmap and subordinate ids" '(^|
)newuidmap: (ok \(--userns subids maps a user namespace|missing: .*; fix: none needed but for --userns subids)' "$OUT"
bad=$(grep -Ev '^[a-z/_ 0-9]+: (ok( \(.+\))?|missing: .+)$' <<<"$OUT" || true)
assert_eq "every line is FEATURE: ok or FEATURE: missing: ..." "" "$bad"
bad=$(grep ': missing: ' <<<"$OUT" | grep -v '; fix: ' || true)
assert_eq "every missing line has a fix" "" "$bad"
text=$OUT

# --json: the same answers as a document
run_nsrun check --json
assert_eq "check --json: exit 0 too" 0 "$RC"
got=$(jq -r '(.checks[] | "\(.name): " + (if .status == "ok" then "ok" else "missing: " + .cause end)),
	"ok=\(.ok)"' <<<"$OUT" 2>&1)
assert_match "  ... valid JSON with ok true" 'ok=true$' "$got"
assert_eq "  ... the same features and verdicts as the text" \
	"$(sed -E 's/^([^:]+: ok).*/\1/; s/; fix: .*//' <<<"$text")" "$(sed '$d' <<<"$got")"
run_nsrun check --bogus
assert_eq "check with an unknown option: 125" 125 "$RC"

# the fallback it reports is the one a run uses (16-json checks the run's side)
# (as root on a hybrid host, check said "missing" for a v1 group that held --memory
# while --json said cgroup-v1: it now says which, session 23)
if grep -q '^cgroup memory: ok (a cgroup v1 memory group' <<<"$text"; then
	run_nsrun --json - --image python -- true
	assert_match "check says a cgroup v1 memory group, and a run enforces memory with it" \
		'"memory_bytes":\{"value":[0-9]+,"enforced":"cgroup-v1"\}' "$OUT"
elif grep -q '^cgroup memory: missing' <<<"$text" || grep -q '^cgroup v2: missing' <<<"$text"; then
	run_nsrun --json - --image python -- true
	# what check names as the fallback: the supervisor's measure of real use, never
	# a per-process rlimit
	assert_match "check says no memory cgroup, and a run enforces memory with the supervisor" \
		'"memory_bytes":\{"value":[0-9]+,"enforced":"supervisor"\}' "$OUT"
else
	run_nsrun --json - --image python -- true
	assert_match "check says memory cgroup ok, and a run enforces memory with it" \
		'"memory_bytes":\{"value":[0-9]+,"enforced":"cgroup"\}' "$OUT"
fi
# --strict wants every limit in a cgroup: check says where it refuses a run
# (it said "none needed" and a --strict run failed, session 22's trial)
run_nsrun --strict --image python -- true
if grep -q -- '--strict, which wants every limit in a cgroup, refuses' <<<"$text"; then
	assert_eq "check says --strict refuses a run here, and it does (125)" 125 "$RC"
	assert_match "  ... naming the limit" '^nsrun: --(memory|pids-limit) cannot be enforced by a cgroup here \(--strict\)' "$ERR"
else
	assert_eq "check says nothing of --strict, and a --strict run works" 0 "$RC"
fi
# check makes a cgroup as a run would (named nsrun-PID-...) and removes it; others'
# runs may come and go meanwhile, so look for this check's own
mounts=$(_snap_mounts)
"$NSRUN" check >/dev/null 2>&1 &
pid=$!
wait "$pid"
assert_eq "check leaves no cgroup behind" "" \
	"$(find /sys/fs/cgroup -maxdepth 4 -type d -name "nsrun-$pid-*" 2>/dev/null)"
assert_eq "  ... no mount (its probes mount in namespaces of their own)" "" "$(_new_lines "$mounts" "$(_snap_mounts)")"
assert_eq "  ... and no process" "" "$(pgrep -s 0 -f "$NSRUN check" || true)"

# the run's own seccomp profile: check compiles and loads it; one that cannot be
# read is a missing line and exit 2, as the run then fails (never "ok")
assert_match "check compiles and loads the run's seccomp profile" '(^|
)seccomp profile: ok \(.*[0-9]+ BPF instructions, loads here\)' "$text"
NSRUN_SECCOMP_PROFILES=$TESTTMP/no-profiles run_nsrun check
assert_eq "NSRUN_SECCOMP_PROFILES without default.json: check exits 2" 2 "$RC"
cause=$(sed -n 's/^seccomp profile: missing: \(.*\); fix: .*/\1/p' <<<"$OUT")
assert_match "  ... naming the variable and the file" \
	"^NSRUN_SECCOMP_PROFILES: open seccomp profile \"$TESTTMP/no-profiles/default.json\"" "$cause"
NSRUN_SECCOMP_PROFILES=$TESTTMP/no-profiles run_nsrun --image python -- true
assert_eq "  ... and a run there fails with that cause" "125 nsrun: $cause" "$RC $(head -n 1 <<<"$ERR")"

# where user namespaces are refused, the run and check name the same cause and fix
# as root, the user namespaces below are made by nobody: root's own (unshare -r)
# map only host root, where nsrun refuses to run at all (25-agent-sandboxes.t)
AGENT=()
[ "$(id -u)" = 0 ] && AGENT=(setpriv --reuid=65534 --regid=65534 --clear-groups)
if command -v unshare >/dev/null && unshare -Ur true 2>/dev/null; then
	zero='echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"'
	run_cmd "${AGENT[@]+"${AGENT[@]}"}" unshare -Ur sh -c "$zero" sh "$NSRUN" check
	# root of that namespace has only uid 0 mapped: not even the minimal tier (uid 65534) works
	assert_eq "user.max_user_namespaces=0: check exits 2 (no tier works)" 2 "$RC"
	assert_match "  ... names the cause and the fix" \
		'(^|
)user namespace: missing: cannot create a user namespace: user\.max_user_namespaces is 0.*; fix: .*sysctl -w user\.max_user_namespaces=' "$OUT"
	cause=$(sed -n 's/^user namespace: missing: \(.*\); fix: .*/\1/p' <<<"$OUT")
	run_cmd "${AGENT[@]+"${AGENT[@]}"}" unshare -Ur sh -c "$zero" sh "$NSRUN" --image python -- python3 -c 'print(1)'
	assert_eq "  ... and a run fails with 125" 125 "$RC"
	assert_nsrun_error "  ... one error line and its hint"
	assert_eq "  ... naming the same cause as check" "nsrun: $cause" "$(head -n 1 <<<"$ERR")"
	assert_match "  ... and the same fix" '^nsrun: hint: .*sysctl -w user\.max_user_namespaces=' "$(tail -n 1 <<<"$ERR")"
else
	not_ok "unshare -Ur works here (needed to emulate a host without user namespaces)"
fi

done_testing
