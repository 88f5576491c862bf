#!/bin/bash
# PID namespace: pid 1 is nsrun's init, the payload is pid 2, no host process is visible.
. "$(dirname "$0")/../lib.sh"
require_all

run_host_probe pids
n=$(tr ' ' '\n' <<<"$OUT" | grep -cE '^[0-9]+:')
if [ "$n" -gt 5 ]; then ok "control: host probe lists $n host processes"; else not_ok "control: host probe lists host processes" "$OUT"; fi

run_probe -- pids
assert_match "payload is pid 2" '^pids: ok self=2 ' "$OUT"
pids=$(tr ' ' '\n' <<<"$OUT" | grep -E '^[0-9]+:' | cut -d: -f1 | tr '\n' ' ')
assert_eq "only pids 1 and 2 are visible" "1 2 " "$pids"
init=$(tr ' ' '\n' <<<"$OUT" | grep -E '^1:' | cut -d: -f2)
assert_ne "pid 1 is not the payload" "nsrun-probe" "$init"
assert_match "pid 1 is nsrun's init (comm '$init')" '^nsrun' "$init"

# pid 1 is not the payload: the payload's self-signal works (B28)
run_probe -- kill-self 15
assert_eq "payload can kill itself with SIGTERM (143)" 143 "$RC"

# no host pid exists inside: the host's pid of this shell is not signalable
run_probe -- ptrace-attach $$
assert_match "host shell pid $$ is not reachable from inside" '^ptrace-attach: denied (ESRCH|EPERM)' "$OUT"

done_testing
