#!/bin/bash
# Only fds 0, 1, 2 reach the payload (B04); a leaked fd cannot be used as a workdir.
. "$(dirname "$0")/../lib.sh"
require_all

echo host-secret-fd >"$TESTTMP/secret"
exec 7<"$TESTTMP/secret" 8<"${HOME:-/}" 9<"$TESTTMP"

run_host_probe fds
assert_match "control: host probe sees the inherited fds 7 8 9" '^fds: ok 0 1 2 (.* )?7 8 9( |$)' "$OUT"

run_probe -- fds
assert_eq "payload sees only 0 1 2" "fds: ok 0 1 2" "$OUT"
run_nsrun --image python -- sh -c 'cat <&7; ls /proc/self/fd/8/ /proc/self/fd/9/'
assert_not_match "fd 7 content unreachable" 'host-secret-fd' "$OUT"

run_nsrun --image python - <<<'import os; print(sorted(int(f) for f in os.listdir("/proc/self/fd")))'
assert_match "python payload: only 0 1 2 (+ listdir's own)" '^\[0, 1, 2(, [0-9]+)?\]$' "$OUT"

# B04: --workdir through a leaked fd must not give a cwd outside the container
for n in 3 4 5 6 7 8 9 10; do
	run_probe --workdir /proc/self/fd/$n -- cwd
	if [ "$RC" = 125 ]; then
		ok "--workdir /proc/self/fd/$n refused (125)"
	else
		assert_not_match "--workdir /proc/self/fd/$n: cwd inside the container" 'unreachable|nsrun-tests|/home/|/root' "$OUT"
	fi
done
exec 7<&- 8<&- 9<&-

# nsrun started with fd 0, 1 or 2 closed: the first fd nsrun opens would take that
# number and reach the payload as a standard stream. They must be /dev/null instead.
run_cmd sh -c '"$0" --image python -- sh -c "readlink /proc/self/fd/0" <&-' "$NSRUN"
assert_eq "started with stdin closed: the payload's fd 0 is /dev/null" /dev/null "$OUT"
run_cmd sh -c '"$0" --image python -- sh -c "readlink /proc/self/fd/2 >&1" 2>&-' "$NSRUN"
assert_eq "started with stderr closed: the payload's fd 2 is /dev/null" /dev/null "$OUT"

done_testing
