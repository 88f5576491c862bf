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

# B04 through a link the payload plants: nsrun exec -w (as podman exec --workdir)
# into a service whose payload made links to /proc/self/fd/N in a writable place;
# the joining process holds host fds (CLOEXEC, still open at its chdir).  Each must
# be refused, never a cwd on the host's side.  Control: a link to a directory of
# the container's own is followed.
SVC=fds-$$
export XDG_RUNTIME_DIR=$TESTTMP/xdg && mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
run_nsrun -d --name "$SVC" --image python -- sh -c \
	'for n in 3 4 5 6 7 8 9 10 11 12; do ln -s /proc/self/fd/$n /tmp/l$n; done; mkdir /tmp/real; ln -s /tmp/real /tmp/ok; touch /tmp/planted; exec sleep 60'
at_exit "'$NSRUN' rm -f '$SVC' >/dev/null 2>&1"
for _ in $(seq 100); do
	run_nsrun exec "$SVC" -- test -e /tmp/planted
	[ "$RC" = 0 ] && break
	sleep 0.1
done
run_nsrun exec -w /tmp/ok "$SVC" -- pwd
assert_eq "control: exec -w through the container's own link works" "0 /tmp/real" "$RC $OUT"
bad=
for n in 3 4 5 6 7 8 9 10 11 12; do
	run_nsrun exec -w "/tmp/l$n" "$SVC" -- sh -c 'pwd; ls ..'
	[ "$RC" = 125 ] || bad+=" l$n: rc=$RC $(head -c 200 <<<"$OUT")"
done
assert_eq "exec -w through a planted /proc/self/fd/N link (N 3..12): each refused (125)" "" "$bad"
run_nsrun rm -f "$SVC"

# nsrun started with fd 0, 1 or 2 closed: the first fd nsrun opens would take that
# number and reach the payload as a standard stream. They must be /dev/null instead.
run_cmd sh -c '"$0" --image python -- sh -c "readlink /proc/self/fd/0" <&-' "$NSRUN"
assert_eq "started with stdin closed: the payload's fd 0 is /dev/null" /dev/null "$OUT"
run_cmd sh -c '"$0" --image python -- sh -c "readlink /proc/self/fd/2 >&1" 2>&-' "$NSRUN"
assert_eq "started with stderr closed: the payload's fd 2 is /dev/null" /dev/null "$OUT"

done_testing
