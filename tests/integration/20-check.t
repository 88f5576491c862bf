#!/bin/bash
# nsrun check (first version): one line per feature, ok or missing with the cause,
# exit 0 when a default run works, 1 when it cannot.
. "$(dirname "$0")/../lib.sh"
require_all

run_nsrun check
assert_eq "nsrun check: exit 0 where runs work" 0 "$RC"
assert_match "namespaces ok" '^namespaces: ok \(user, mount, pid, net, ipc, uts' "$OUT"
assert_match "a cgroup v2 line: ok, or missing with the cause" '(^|
)cgroup v2: (ok, runs go under /|missing: .+)' "$OUT"
assert_match "seccomp ok with libseccomp's version" '(^|
)seccomp: ok \(libseccomp [0-9]+\.[0-9]+\.[0-9]+' "$OUT"
# the fallback it reports is the one a run uses (16-json checks the run's side)
if grep -q '^cgroup memory: missing' <<<"$OUT" || grep -q '^cgroup v2: missing' <<<"$OUT"; then
	run_nsrun --json - --image python -- true
	assert_match "check says no memory cgroup, and a run enforces memory with an rlimit" \
		'"memory_bytes":\{"value":[0-9]+,"enforced":"rlimit"\}' "$OUT"
else
	run_nsrun --json - --image python -- true
	assert_match "check says memory cgroup ok, and a run enforces memory with it" \
		'"memory_bytes":\{"value":[0-9]+,"enforced":"cgroup"\}' "$OUT"
fi
runs() { find /sys/fs/cgroup -maxdepth 3 -type d -name 'nsrun-[0-9]*' 2>/dev/null | sort; }
before=$(runs)
run_nsrun check
assert_eq "check leaves no cgroup behind" "$before" "$(runs)"

# where user namespaces are refused, check says so and why, and fails
if command -v unshare >/dev/null && unshare -Ur true 2>/dev/null; then
	run_cmd unshare -Ur sh -c 'echo 0 > /proc/sys/user/max_user_namespaces && exec "$0" check' "$NSRUN"
	assert_eq "no user namespaces: check exits 1" 1 "$RC"
	assert_match "  ... names the cause and the fix" \
		'^namespaces: missing: cannot create a user namespace: user\.max_user_namespaces is 0.*; fix: .*sysctl' "$OUT"
else
	not_ok "unshare -Ur works here (needed to emulate a host without user namespaces)"
fi

done_testing
