#!/bin/bash
# pid 1's memory stays out of the payload's reach.  A foreground run starts its
# payload in pid 1's own memory (clone CLONE_VM|CLONE_VFORK, container.c
# payload_spawn), which must be dumpable for the few system calls that write the
# payload's id maps; a memory left dumpable would let the payload, whose host uid
# is pid 1's when rootless, ptrace pid 1 and use its capabilities and its socket
# to the supervisor.  The host's view says which: the files of /proc/PID of a
# non-dumpable process are root's (proc(5), PR_SET_DUMPABLE in prctl(2)), of a
# dumpable one its uid's (the directory itself always shows the euid).  A -d service starts its payload with fork(2): the same must hold.
. "$(dirname "$0")/../lib.sh"
require_all

me=$(id -u)
export XDG_RUNTIME_DIR="$TESTTMP/run"   # the service's state, this test's own
mkdir -m 700 "$XDG_RUNTIME_DIR"

# check_init_memory DESC: the background run's pid 1 and payload, as the host sees them
check_init_memory() {
	local desc=$1 init payload init_uid payload_uid
	init=$(pgrep -P "$2" | head -1)
	payload=$(pgrep -P "$init" | head -1)
	if [ -z "$init" ] || [ -z "$payload" ]; then
		not_ok "$desc: found pid 1 and the payload" "supervisor $2, init '$init', payload '$payload'"
		return
	fi
	init_uid=$(stat -c %u "/proc/$init/environ")
	payload_uid=$(stat -c %u "/proc/$payload/environ")
	# control: the payload is dumpable after its execve, so its /proc is its uid's,
	# which is this user's rootless and nobody's (not root's) as root
	if [ "$me" != 0 ]; then
		assert_eq "$desc: control: the payload's /proc is this user's (dumpable)" "$me" "$payload_uid"
	else
		assert_ne "$desc: control: the payload's /proc is not root's (its own uid, dumpable)" 0 "$payload_uid"
	fi
	assert_eq "$desc: pid 1's /proc is root's: its memory is not dumpable" 0 "$init_uid"
	assert_ne "$desc: the payload's uid cannot reach pid 1 (ptrace needs the same uid and a dumpable memory)" \
		"$payload_uid" "$init_uid"
}

# the foreground run takes the shared-memory path (else the checks below would
# only see fork's, as the service's do)
run_nsrun --debug-timing --image python -- true
if [ "${NSRUN_TEST_SANITIZER:-0}" = 1 ]; then
	# its runtime is not told of the child's stack (container.c payload_spawn)
	assert_match "the sanitizer build forks its payload even in a foreground run (--debug-timing)" \
		"payload: fork, user namespace" "$ERR"
else
	assert_match "a foreground run starts its payload in pid 1's memory (--debug-timing)" \
		"payload: vfork \\(in init's memory\\)" "$ERR"
fi

start_nsrun --image python -- sh -c 'echo started; exec sleep 30'
if wait_for_output '^started' 20; then
	check_init_memory "foreground run" "$NSRUN_PID"
else
	not_ok "foreground run started" "$(cat "$TESTTMP/.bgerr")"
fi
kill -TERM "$NSRUN_PID" 2>/dev/null
wait_nsrun

# the same from inside, with no seccomp filter (the default profile denies ptrace
# itself): the payload's ptrace of its own child works, of pid 1 fails
run_probe --security-opt seccomp=unconfined -- ptrace-attach child
assert_eq "control: unfiltered, the payload can ptrace its own child" "ptrace-attach: ok child" "$OUT"
run_probe --security-opt seccomp=unconfined -- ptrace-attach 1
assert_match "unfiltered, the payload cannot ptrace pid 1" '^ptrace-attach: denied (EPERM|ESRCH)' "$OUT"

# a service (-d): its payload is forked (nsrun exec may join before it starts)
name=initmem-$$
run_nsrun -d --name "$name" --image python -- sleep 30
assert_eq "a service starts" 0 "$RC"
monitor=$(jq -r .pid "$XDG_RUNTIME_DIR/nsrun/$name/state.json" 2>/dev/null)
if [ -n "$monitor" ] && [ "$monitor" != null ]; then
	for _ in $(seq 50); do
		pgrep -P "$(pgrep -P "$monitor" | head -1)" >/dev/null 2>&1 && break
		sleep 0.1
	done
	check_init_memory "service" "$monitor"
else
	not_ok "the service's monitor pid is in its state.json" "$(ls -la "$XDG_RUNTIME_DIR/nsrun/$name" 2>&1)"
fi
run_nsrun rm -f "$name"

done_testing
