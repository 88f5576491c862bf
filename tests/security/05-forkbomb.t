#!/bin/bash
# A fork bomb is contained by --pids-limit; the run ends and the host can still fork.
. "$(dirname "$0")/../lib.sh"
require_all

# control: the probe's fork loop works (bounded to 40 processes)
run_host_probe forkbomb 2 40
assert_match "control: host probe forks 40 processes" '^forkbomb: ok reached 40 ' "$OUT"
run_probe --pids-limit 128 -- forkbomb 2 40
assert_match "control: inside, 40 processes fit under --pids-limit 128" '^forkbomb: ok reached 40 ' "$OUT"

run_probe --pids-limit 32 --timeout 20 -- forkbomb 5.0031 5000
assert_match "fork bomb under --pids-limit 32 hits EAGAIN" '^forkbomb: denied EAGAIN fork failed after [0-9]+ processes' "$OUT"
n=$(sed -n 's/.*fork failed after \([0-9]*\) processes.*/\1/p' <<<"$OUT")
if [ -n "$n" ] && [ "$n" -le 32 ]; then ok "  ... after at most 32 processes ($n)"; else not_ok "  ... after at most 32 processes" "got: ${n:-?}" "$(_ctx)"; fi
assert_eq "  ... and the run ends with the probe's status" 1 "$RC"
if elapsed_lt 15; then ok "  ... within 15 s (${ELAPSED}s)"; else not_ok "  ... within 15 s" "took ${ELAPSED}s"; fi

# default limit (128)
run_probe --timeout 20 -- forkbomb 5.0031 5000
assert_match "fork bomb under the default limit hits EAGAIN" '^forkbomb: denied EAGAIN' "$OUT"
n=$(sed -n 's/.*fork failed after \([0-9]*\) processes.*/\1/p' <<<"$OUT")
if [ -n "$n" ] && [ "$n" -le 128 ]; then ok "  ... after at most 128 processes ($n)"; else not_ok "  ... after at most 128 processes" "got: ${n:-?}"; fi

# a shell fork bomb (no cleanup of its own) also ends; timeout kills everything
run_nsrun --image python --pids-limit 32 --timeout 3 -- sh -c 'b() { b | b & }; b; sleep 30'
assert_eq "shell fork bomb: run ends by timeout (124)" 124 "$RC"

check "host can still fork afterwards" /bin/sh -c 'true & wait'
# the pid namespace's processes die with its init; polled, not a fixed grace
for _ in $(seq 100); do
	left=$(pgrep -u "$(id -u)" -f 'nsrun-probe forkbomb 5\.0031' || true)
	[ -z "$left" ] && break
	sleep 0.05
done
assert_eq "no bomb processes left on the host" "" "$left"

# B25: the limit is per container, not per host user (RLIMIT_NPROC counts every process
# of the invoking user): 100 host processes of ours must not eat the container's budget
for _ in $(seq 100); do sleep 30 & done
at_exit "kill $(jobs -p | tr '\n' ' ')"
run_probe --pids-limit 32 --timeout 20 -- forkbomb 1 10
assert_match "B25: with 100 host processes of ours, 10 forks fit under --pids-limit 32" '^forkbomb: ok reached 10 ' "$OUT"
run_nsrun --image python --pids-limit 32 -- python3 -c 'import subprocess; print(subprocess.run(["true"]).returncode)'
assert_eq "B25: python subprocess under --pids-limit 32" "0 0" "$RC $OUT"
kill $(jobs -p) 2>/dev/null; wait 2>/dev/null  # shellcheck disable=SC2046

done_testing
