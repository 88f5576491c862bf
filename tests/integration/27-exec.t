#!/bin/bash
# nsrun exec NAME -- CMD: a command joins a running service as its payload is: the
# same pid, net, mount and uts namespaces, uid, no capabilities, no_new_privs, the
# service's seccomp filter (a control service without one shows the probe works),
# read-only root, rlimits and cgroup; docker exec's exit statuses; -e, -w, -u, -i;
# bad input is one line and 125; an exec'd process dies when the service stops.
. "$(dirname "$0")/../lib.sh"
require_nsrun
require_userns
require_image python
_setup_probe || skip_all "no probe"

export XDG_RUNTIME_DIR="$TESTTMP/run"
mkdir -m 700 "$XDG_RUNTIME_DIR"
MARK="exec-test-$$"
PORT=$(free_port)
SVC="x$$-svc"
P=/mnt/nsrun-probe

# the service: a marker in its own /tmp, then a web server on loopback
at_exit "\"$NSRUN\" rm -f $SVC x$$-open x$$-ended x$$-kill x$$-mem x$$-reduced x$$-minimal x$$-pids"
run_nsrun -d --name "$SVC" --hostname "svc-$$" --cpu-time 100 -e "SVC_VAR=from-service" -e "NSRUN_SVC_MARK=$MARK" \
	-w /tmp -v "$PROBE_DIR:/mnt:ro" --image python -- \
	sh -c "echo mark-$$ > /tmp/marker && exec python3 -m http.server $PORT --bind 127.0.0.1"
assert_eq "a service to exec into starts" 0 "$RC"

# ex ARGS... — nsrun exec ARGS, sets OUT/ERR/RC
ex() { run_nsrun exec "$@"; }

ex "$SVC" -- $P status
assert_eq "exec: exit 0" 0 "$RC"
assert_match "  ... uid 65534, as the payload" $'Uid:\t65534\t65534\t65534\t65534' "$OUT"
assert_match "  ... no capability in any set" $'CapEff:\t0000000000000000' "$OUT"
assert_match "  ... no bounding set" $'CapBnd:\t0000000000000000' "$OUT"
assert_match "  ... no_new_privs" $'NoNewPrivs:\t1' "$OUT"
assert_match "  ... a seccomp filter" $'Seccomp:\t2' "$OUT"

# the same filter as the service's: the default profile denies unshare; the control
# is a service started without a filter, where the same exec'd probe may unshare
ex "$SVC" -- $P unshare user
assert_eq "exec: unshare(CLONE_NEWUSER) is denied, as in the payload" "unshare: denied EPERM" "$(head -1 <<<"$OUT" | cut -d' ' -f1-3)"
run_nsrun -d --name "x$$-open" --security-opt seccomp=unconfined -v "$PROBE_DIR:/mnt:ro" --image python -- sleep 600
ex "x$$-open" -- $P unshare user
assert_eq "control: in a service without a filter the exec'd probe may unshare" "unshare: ok user" "$(head -1 <<<"$OUT")"
ex "x$$-open" -- $P status
assert_match "  ... and has no filter (the service's profile is the exec's)" $'Seccomp:\t0' "$OUT"
run_nsrun stop -t 1 "x$$-open"

# namespaces: it sees the service's processes, with small numbers
ex "$SVC" -- $P pids
assert_match "same pid namespace: it sees the container's init as pid 1" '^pids: ok self=[0-9]+ 1:' "$OUT"
assert_match "  ... and the payload as pid 2" ' 2:python3( |$)' "$OUT"
assert_eq "  ... and nothing of the host (a handful of processes)" 1 "$(( $(wc -w <<<"$OUT") <= 8 ))"
ex "$SVC" -- sh -c 'readlink /proc/self'
assert_eq "  ... its own pid is small" 1 "$(( ${OUT:-999} < 50 ))"
ex "$SVC" -- cat /tmp/marker
assert_eq "same mount namespace: it reads what the payload wrote in its private /tmp" "mark-$$" "$OUT"
ex "$SVC" -- $P hostname
assert_eq "same uts namespace: the service's hostname" "hostname: ok svc-$$" "$OUT"
# the server may still be starting: polled, as a client would
for _ in $(seq 100); do
	ex "$SVC" -- $P connect 127.0.0.1 "$PORT"
	[ "$RC" = 0 ] && break
	sleep 0.1
done
assert_eq "same net namespace: the service's port on its loopback answers" "connect: ok" "$(head -1 <<<"$OUT" | cut -d' ' -f1-2)"
run_probe -- connect 127.0.0.1 "$PORT"
assert_eq "  control: from a run of its own the port is not there" "connect: denied ECONNREFUSED" \
	"$(head -1 <<<"$OUT" | cut -d' ' -f1-3)"
ex "$SVC" -- $P write /etc/nsrun-exec-test
assert_eq "the root file system is read-only" "write: denied EROFS" "$(head -1 <<<"$OUT" | cut -d' ' -f1-3)"
ex "$SVC" -- $P write /tmp/nsrun-exec-test
assert_eq "  control: /tmp is writable" 0 "$RC"
ex "$SVC" -- sh -c 'ulimit -t'
assert_eq "the service's rlimits (--cpu-time 100)" "100" "$OUT"
ex "$SVC" -- sh -c 'cat /proc/self/cgroup; echo ==; cat /proc/2/cgroup'
assert_eq "the payload's cgroups, in each hierarchy" "$(sed -n '1,/^==$/p' <<<"$OUT" | grep -v '^==$')" \
	"$(sed -n '/^==$/,$p' <<<"$OUT" | grep -v '^==$')"

# the service's memory limit holds the exec'd command too (a cgroup, or the
# supervisor's measure of the container's pid namespace): past it the container ends
run_nsrun -d --name "x$$-mem" --memory 64m -v "$PROBE_DIR:/mnt:ro" --image python -- sleep 600
ex "x$$-mem" -- $P memhog 16
assert_eq "control: an exec'd command under the service's --memory 64m runs" 0 "$RC"
# memhog-via holds what it took (a second), so the supervisor's samples see it too
ex "x$$-mem" -- $P memhog-via malloc 256
assert_eq "  ... one that takes 256 MiB is killed (137)" 137 "$RC"
for _ in $(seq 50); do
	[ "$(jq -r .status "$XDG_RUNTIME_DIR/nsrun/x$$-mem/state.json" 2>/dev/null)" = exited ] && break
	sleep 0.1
done
run_nsrun logs "x$$-mem"
assert_match "  ... as the service's out of memory" 'out of memory' "$OUT"
run_nsrun rm -f "x$$-mem"

# ... and its --pids-limit (a cgroup, or RLIMIT_NPROC counted in the payload's user
# namespace, which the command shares)
run_nsrun -d --name "x$$-pids" --pids-limit 16 -v "$PROBE_DIR:/mnt:ro" --image python -- sleep 600
ex "x$$-pids" -- $P forkbomb 5 8
assert_match "control: 8 processes fit in the service's --pids-limit 16" '^forkbomb: ok reached 8 ' "$OUT"
ex "x$$-pids" -- $P forkbomb 5 100
assert_match "  ... a fork bomb in it hits EAGAIN" '^forkbomb: denied EAGAIN fork failed after [0-9]+ processes' "$OUT"
n=$(sed -n 's/.*fork failed after \([0-9]*\) processes.*/\1/p' <<<"$OUT")
assert_eq "  ... within the limit ($n)" 1 "$(( ${n:-99} <= 16 ))"
run_nsrun stop -t 1 "x$$-pids"

# environment, working directory, user, stdin
ex "$SVC" -- $P env
assert_match "the service's environment" 'SVC_VAR=from-service' "$OUT"
ex -e EXTRA=1 -e SVC_VAR=over "$SVC" -- $P env
assert_match "  ... -e adds" 'EXTRA=1' "$OUT"
assert_match "  ... -e overrides" 'SVC_VAR=over' "$OUT"
ex "$SVC" -- $P cwd
assert_match "the service's working directory" '^cwd: ok /tmp ' "$OUT"
ex -w /usr/lib "$SVC" -- $P cwd
assert_match "  ... -w changes it" '^cwd: ok /usr/lib ' "$OUT"
ex -u 1000:1001 "$SVC" -- $P ids
assert_match "-u 1000:1001 gives those ids" '^ids: ok uid=1000 gid=1001' "$OUT"
ex -u 1000:1001 "$SVC" -- $P status
assert_match "  ... still without capabilities" $'CapEff:\t0000000000000000' "$OUT"
ex -u 0 "$SVC" -- $P status
assert_match "-u 0: root of a user namespace of its own" $'Uid:\t0\t0\t0\t0' "$OUT"
assert_match "  ... without capabilities" $'CapEff:\t0000000000000000' "$OUT"
run_cmd bash -c "echo piped | \"$NSRUN\" exec -i $SVC -- cat"
assert_eq "-i passes stdin" "piped" "$OUT"
run_cmd bash -c "echo piped | \"$NSRUN\" exec $SVC -- cat"
assert_eq "  ... without -i the command's stdin is empty (as docker exec)" "0 " "$RC $OUT"

# -t: a pty of the container's own devpts, with our size; ^C reaches the command
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
run_cmd "$PY" "$TESTS_DIR/ttyrun.py" 33 101 "" -- "$NSRUN" exec -t "$SVC" -- sh -c 'stty size; tty; test -t 0 && test -t 1 && test -t 2 && echo all-tty'
assert_eq "-t: the command's terminal has nsrun's size" "33 101" "$(sed -n 1p <<<"$OUT")"
assert_match "  ... a pty of the container's devpts" '^/dev/pts/[0-9]+$' "$(sed -n 2p <<<"$OUT")"
assert_eq "  ... on stdin, stdout and stderr" "all-tty" "$(sed -n 3p <<<"$OUT")"
assert_match "  ... exit 0, our terminal restored" 'rc=0 restored=yes' "$OUT"
run_cmd "$PY" "$TESTS_DIR/ttyrun.py" 24 80 "wait:go,mode,send:03" -- "$NSRUN" exec -it "$SVC" -- sh -c 'echo go; sleep 20'
assert_match "-it: ^C on our terminal is SIGINT to the command (130); raw mode during, restored after" \
	'rc=130 restored=yes during=raw' "$OUT"

# exit statuses as docker exec's
ex "$SVC" -- true
assert_eq "exit 0" 0 "$RC"
ex "$SVC" -- sh -c 'exit 3'
assert_eq "exit 3 is passed on" 3 "$RC"
ex "$SVC" -- $P kill-self 15
assert_eq "killed by SIGTERM: 143" 143 "$RC"
ex "$SVC" -- nosuch-command
assert_eq "a command not found: 127" 127 "$RC"
assert_nsrun_error "  ... one line"
assert_match "  ... naming it" 'nosuch-command' "$ERR"
ex "$SVC" -- /etc/passwd
assert_eq "a file that cannot be executed: 126" 126 "$RC"

# signals to nsrun exec reach the command
start_nsrun exec "$SVC" -- sh -c 'echo ready; exec /mnt/nsrun-probe sleep 30'
wait_for_output ready
kill -TERM "$NSRUN_PID"
wait_nsrun
assert_eq "SIGTERM to nsrun exec is passed on: the command dies of it (143)" 143 "$RC"
start_nsrun exec "$SVC" -- sh -c 'trap "echo got INT; exit 7" INT; echo ready; while :; do sleep 0.1; done'
wait_for_output ready
kill -INT "$NSRUN_PID"
wait_nsrun
assert_eq "  ... SIGINT too: a command that traps it exits as it chooses" "7 got INT" "$RC $(tail -1 <<<"$OUT")"

# bad input: one line, 125
run_nsrun exec --help
assert_match "exec --help: usage, exit 0" '^0 Usage: nsrun exec' "$RC $OUT"
ex "x$$-nosuch" -- true
assert_eq "no such service: 125" 125 "$RC"
assert_nsrun_error "  ... one line"
assert_match "  ... says so" "exec x$$-nosuch: no such service" "$ERR"
ex "$SVC"
assert_eq "no command: 125" 125 "$RC"
assert_match "  ... says so" "no command" "$ERR"
ex
assert_eq "no service: 125" 125 "$RC"
ex 'bad name' -- true
assert_eq "a bad name: 125" 125 "$RC"
run_nsrun -d --name "x$$-ended" --image python -- true
for _ in $(seq 50); do
	[ "$(jq -r .status "$XDG_RUNTIME_DIR/nsrun/x$$-ended/state.json" 2>/dev/null)" = exited ] && break
	sleep 0.1
done
ex "x$$-ended" -- true
assert_eq "a service that has exited: 125" 125 "$RC"
assert_nsrun_error "  ... one line"
assert_match "  ... says it is not running" 'not running' "$ERR"
run_nsrun rm "x$$-ended"

# below isolation full there is no container as exec joins it: refused, one line
for tier in reduced minimal; do
	run_nsrun -d --name "x$$-$tier" --isolation "$tier" --image python -- sleep 600
	assert_eq "a service of isolation $tier starts" 0 "$RC"
	ex "x$$-$tier" -- true
	assert_eq "  ... exec into it: 125" 125 "$RC"
	assert_nsrun_error "  ... one line"
	assert_match "  ... naming the tier" "isolation $tier\)?: exec joins only a service of isolation full" "$ERR"
	# exec.json is not what decides it: the payload's namespaces are looked at
	spec="$XDG_RUNTIME_DIR/nsrun/x$$-$tier/exec.json"
	jq '.isolation = "full"' "$spec" >"$spec.new" && mv "$spec.new" "$spec"
	ex "x$$-$tier" -- true
	assert_match "  ... also when its exec.json says full" "^125 nsrun: exec x$$-$tier: .*isolation $tier\): exec joins only" \
		"$RC $ERR"
	run_nsrun stop -t 1 "x$$-$tier"
done

# the service stops: an exec'd process and what it left behind die with it
run_nsrun -d --name "x$$-kill" -v "$PROBE_DIR:/mnt:ro" --image python -- sleep 600
ex "x$$-kill" -- $P setsid-sleep 600.$$ "/tmp/$MARK"
assert_eq "an exec'd process leaves a setsid'd grandchild behind" 0 "$RC"
start_nsrun exec "x$$-kill" -- $P sleep 601.$$
# anchored: "sleep 601.PID" is also in the command line of the nsrun exec
# client, which matched at once, before the command had joined the container;
# the stop then raced the join, which failed with 125 (CI, session 20)
for _ in $(seq 100); do pgrep -f "^$P sleep 601\.$$\$" >/dev/null && break; sleep 0.1; done
assert_ne "  ... a long exec'd command runs" "" "$(pgrep -f "^$P sleep 601\.$$\$")"
assert_ne "  ... and so does the grandchild" "" "$(pgrep -f "setsid-sleep 600.$$")"
run_nsrun stop -t 1 "x$$-kill"
wait_nsrun
assert_eq "the service stops: the exec'd command is killed (137)" 137 "$RC"
for _ in $(seq 50); do pgrep -f "sleep 60[01].$$" >/dev/null || break; sleep 0.1; done
assert_eq "  ... nothing of either is left" "" "$(pgrep -af "sleep 60[01].$$")"

# --archive-put (docker cp, PUT .../archive) into a /tmp too small for it: the
# write(2) that fails with ENOSPC made libarchive warn, which was taken for
# success, and the file was left at its full size, its tail zeros (breaker,
# session 18).  Control: the same archive with a member that fits.
python3 - "$TESTTMP" <<'PY'
import io, sys, tarfile
for name, size in (("big", 3 << 20), ("small", 256 << 10)):
    with tarfile.open(f"{sys.argv[1]}/{name}.tar", "w") as t:
        for member, n in ((name + "A", size), ("after", 5)):
            i = tarfile.TarInfo(member); i.size = n; i.mode = 0o644
            t.addfile(i, io.BytesIO(b"A" * n))
PY
run_nsrun -d --name "x$$-full" --tmpfs-size 1m --image python -- sleep 600
assert_eq "a service with a 1 MiB /tmp" 0 "$RC"
run_cmd sh -c '"$0" exec -i --archive-put /tmp "$1" <"$2"' "$NSRUN" "x$$-full" "$TESTTMP/big.tar"
assert_match "archive-put of a 3 MiB member into it: fails, saying the disk is full" \
	'^!28 extract into /tmp: bigA: .*No space left on device' "$OUT"
ex "x$$-full" -- sh -c 'ls /tmp; wc -c </tmp/bigA 2>/dev/null'
assert_ne "  ... nothing after the failed member was extracted" "after" "$(printf '%s\n' "$OUT" | grep -x after)"
ex "x$$-full" -- rm -f /tmp/bigA
run_cmd sh -c '"$0" exec -i --archive-put /tmp "$1" <"$2"' "$NSRUN" "x$$-full" "$TESTTMP/small.tar"
assert_match "  control: one of 256 KiB is extracted" '^[^!]' "$OUT"
ex "x$$-full" -- sh -c 'wc -c </tmp/smallA; cat /tmp/after'
assert_eq "  ... whole, and the member after it" "262144
AAAAA" "$OUT"
run_nsrun rm -f "x$$-full"

run_nsrun stop -t 1 "$SVC"
assert_eq "the service stops" 0 "$RC"
done_testing
