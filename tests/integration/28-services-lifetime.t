#!/bin/bash
# Services end with whoever started them (issue 21): nsrun -d --stop-with-parent and
# --stop-with-pid (a parent shell SIGKILLed; control: a service without the flag
# survives it), a pytest suite using the Python fixtures SIGKILLed 20 times rootless
# (3 as root and under ASan; NSRUN_KILL_ROUNDS), at steps of its progress (nothing
# left each time), nsrun stop --all / rm --all, and the command nsrun ps
# shows.  Uses the `services` image (redis-server, postgresql; make service-image).
. "$(dirname "$0")/../lib.sh"
require_nsrun
require_userns
require_image services

# the services' state goes to a private directory of this test
export XDG_RUNTIME_DIR="$TESTTMP/run"
mkdir -m 700 "$XDG_RUNTIME_DIR"
STATE="$XDG_RUNTIME_DIR/nsrun"
at_exit '"$NSRUN" rm -f --all'

# live_procs MARK — live processes of the services marked MARK: the payloads carry
# NSRUN_SVC_MARK=MARK in their environment, the monitors on their command line (-e)
live_procs() {
	local p
	{
		grep -lzx "NSRUN_SVC_MARK=$1" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3
		pgrep -f -- "NSRUN_SVC_MARK=$1( |\$)"
	} | sort -u | while read -r p; do
		case "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" in "" | Z) continue ;; esac
		echo "$p $(cat "/proc/$p/comm" 2>/dev/null)"
	done
}
# host_port NAME — the host port of a running service
host_port() { "$NSRUN" ps --json | jq -r --arg n "$1" '.[] | select(.name == $n) | .ports[0].host_port'; }
# ping PORT — Redis' answer to PING through the published port
ping() {
	timeout 5 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && printf "PING\r\n" >&3 && read -r l <&3 && printf "%s" "${l%$'"'\r'"'}"' _ "$1" 2>/dev/null
}
# our_mounts — host mounts that name this test's directories or the image store
our_mounts() { grep -c -F -e "$TESTTMP" -e "${NSRUN_IMAGES:-/nonexistent}" /proc/self/mountinfo; }
# gone NAME MARK PORT... — nothing of the service is left: state, process, port
gone() {
	local name=$1 mark=$2 p
	shift 2
	[ ! -e "$STATE/$name" ] && [ -z "$(live_procs "$mark")" ] || return 1
	for p in "$@"; do [ -z "$(ss -Hltn "sport = :$p")" ] || return 1; done
}
# wait_until SECONDS CMD... — poll CMD every 0.1 s; sets WAITED (seconds)
wait_until() {
	local i n=$(($1 * 10))
	shift
	for ((i = 0; i < n; i++)); do
		"$@" && { WAITED=$(awk -v i="$i" 'BEGIN { printf "%.1f", i / 10 }'); return 0; }
		sleep 0.1
	done
	WAITED=timeout
	return 1
}
MOUNTS_BEFORE=$(our_mounts)

# ---- bad input
run_nsrun --stop-with-parent --image services -- true
assert_eq "--stop-with-parent without -d: exit 125" 125 "$RC"
assert_match "  ... says it is for -d" 'only with -d' "$ERR"
(exit 0) &
DEAD=$!
wait "$DEAD"
run_nsrun -d --name "t$$-dead" --stop-with-pid "$DEAD" --image services -- sleep 60
assert_eq "--stop-with-pid of a process that is gone: exit 125" 125 "$RC"
assert_match "  ... says so" "stop-with-pid $DEAD: no such process" "$ERR"
check "  ... no state directory" test ! -e "$STATE/t$$-dead"

# ---- a parent shell killed with SIGKILL: its --stop-with-parent service goes, the other stays
NA="t$$-withflag"
NB="t$$-without"
# shellcheck disable=SC2016
bash -c 'for n in "$1" "$2"; do
		flag=(); [ "$n" = "$1" ] && flag=(--stop-with-parent)
		"$NSRUN" -d "${flag[@]}" --name "$n" -p 0:6379 --wait-port 6379 --tmpfs /data -e "NSRUN_SVC_MARK=$n" \
			--image services -- redis-server --save "" --appendonly no --dir /data >"$3/$n.out" 2>&1 || exit
	done
	echo started >"$3/started"
	exec sleep 60' _ "$NA" "$NB" "$TESTTMP" &
PARENT=$!
wait_until 30 test -e "$TESTTMP/started"
assert_eq "a shell started two services (one with --stop-with-parent)" "started" "$(cat "$TESTTMP/started" 2>/dev/null)$(cat "$TESTTMP"/*.out 2>/dev/null | grep nsrun:)"
PA=$(host_port "$NA")
PB=$(host_port "$NB")
assert_eq "  ... both answer" "+PONG +PONG" "$(ping "$PA") $(ping "$PB")"
kill -KILL "$PARENT"
wait "$PARENT" 2>/dev/null
if wait_until 10 gone "$NA" "$NA" "$PA"; then
	ok "SIGKILL of the parent: the --stop-with-parent service is gone (no state, process or port) after ${WAITED}s"
else
	not_ok "SIGKILL of the parent: the --stop-with-parent service is gone" \
		"state: $(ls "$STATE" 2>&1); procs: $(live_procs "$NA"); port: $(ss -Hltn "sport = :$PA")"
fi
run_nsrun ps
assert_match "  ... control: the service without the flag is still running" "$NB +running" "$OUT"
assert_eq "  ... and answers" "+PONG" "$(ping "$PB")"
run_nsrun stop -t 5 "$NB"
assert_eq "  ... until stopped" "0 $NB" "$RC $OUT"
check "  ... which leaves nothing either" gone "$NB" "$NB" "$PB"

# ---- --stop-with-pid PID: the service goes when PID does
NC="t$$-pid"
sleep 60 &
SP=$!
run_nsrun -d --stop-with-pid "$SP" --name "$NC" -e "NSRUN_SVC_MARK=$NC" --image services -- sleep 60
assert_eq "--stop-with-pid PID: started" 0 "$RC"
check "  ... it runs while PID does" test -n "$(live_procs "$NC")"
kill -KILL "$SP"
wait "$SP" 2>/dev/null
if wait_until 10 gone "$NC" "$NC"; then
	ok "  ... PID killed: the service is gone after ${WAITED}s"
else
	not_ok "  ... PID killed: the service is gone" "state: $(ls "$STATE" 2>&1); procs: $(live_procs "$NC")"
fi

# ---- a pytest suite with Redis and PostgreSQL fixtures, SIGKILLed at moments of its progress
BINDINGS="$TESTS_DIR/../bindings/python"
PY=/usr/bin/python3
# the steps the suite writes as it goes (killed_services.py); each kill waits for one
# of them, then a random 0 to 0.2 s more: the moments follow the suite, not the clock
STEPS=(collected redis-starting redis-up redis-used pg-starting pg-up pg-used waiting)
# 20 kills in the rootless suite (the product), each step in turn; as root and under
# ASan (the same code path of nsrun, run as another user) 3, at steps 3 apart
# (collected, redis-used, pg-used): a kill costs a pytest start and up to a
# PostgreSQL start, 2 to 3 s on an idle CI machine, and CI has 30 minutes in all
STRIDE=1
if [ "$(id -u)" != 0 ] && [ "${NSRUN_TEST_SANITIZER:-0}" != 1 ]; then
	ROUNDS=${NSRUN_KILL_ROUNDS:-20}
else
	ROUNDS=${NSRUN_KILL_ROUNDS:-3} STRIDE=3
fi
if ! "$PY" -c 'import pytest' 2>/dev/null; then
	skip "pytest killed: no pytest for $PY (python3-pytest)"
else
	left="" missed="" idle=""
	for ((i = 0; i < ROUNDS; i++)); do
		M="t$$-py$i"
		STEP=${STEPS[(i * STRIDE) % ${#STEPS[@]}]}
		PORTS="$TESTTMP/ports$i"
		PROGRESS="$TESTTMP/progress$i"
		: >"$PORTS"
		: >"$PROGRESS"
		NSRUN_SVC_MARK=$M NSRUN_SVC_PORTS=$PORTS NSRUN_SVC_PROGRESS=$PROGRESS PYTHONPATH=$BINDINGS \
			"$PY" -m pytest -q -p no:cacheprovider "$BINDINGS/tests/killed_services.py" >"$TESTTMP/py$i.log" 2>&1 &
		PYPID=$!
		wait_until 60 grep -qx "$STEP" "$PROGRESS" || missed+=" [$i: $STEP never came: $(tr '\n' ' ' <"$PROGRESS")]"
		sleep "$(awk -v r="$RANDOM" 'BEGIN { printf "%.3f", (r % 200) / 1000 }')"
		# from redis-up on, a service runs when the kill comes
		case $STEP in collected | redis-starting) ;; *) [ -s "$PORTS" ] || idle+=" $i:$STEP" ;; esac
		kill -KILL "$PYPID"
		wait "$PYPID" 2>/dev/null
		# shellcheck disable=SC2046
		if ! wait_until 15 gone "$M" "$M" $(cat "$PORTS") || [ -n "$(ls -A "$STATE")" ]; then
			left+=" [$i at $STEP: state: $(ls -A "$STATE" | tr '\n' ' ') procs: $(live_procs "$M" | tr '\n' ' ')]"
		fi
	done
	assert_eq "pytest with the fixtures SIGKILLed $ROUNDS times, at each step of its progress: nothing left each time" "" "$left"
	assert_eq "  ... every kill came at the step it waited for" "" "$missed"
	assert_eq "  ... from redis-up on, a service was running when the kill came" "" "$idle"
	# control: the same suite with stop_with_parent=False, killed once both run, leaves them
	M="t$$-pyctl"
	PORTS="$TESTTMP/ports-ctl"
	: >"$PORTS"
	NSRUN_SVC_STOP_WITH_PARENT=0 NSRUN_SVC_MARK=$M NSRUN_SVC_PORTS=$PORTS NSRUN_SVC_PROGRESS= PYTHONPATH=$BINDINGS \
		"$PY" -m pytest -q -p no:cacheprovider "$BINDINGS/tests/killed_services.py" >"$TESTTMP/py-ctl.log" 2>&1 &
	PYPID=$!
	two_ports() { [ "$(grep -c . "$PORTS")" = 2 ]; }
	wait_until 30 two_ports
	kill -KILL "$PYPID"
	wait "$PYPID" 2>/dev/null
	sleep 1
	run_nsrun ps --json
	assert_eq "  ... control: with stop_with_parent=False both services outlive the killed pytest" 2 \
		"$(jq '[.[] | select(.status == "running")] | length' <<<"$OUT")"
	run_nsrun rm -f --all
	# shellcheck disable=SC2046
	check "  ... until removed (rm -f --all)" gone "$M" "$M" $(cat "$PORTS")
fi

# ---- nsrun ps shows the command as given; stop --all, rm --all
ND="t$$-args"
run_nsrun -d --name "$ND" -e "NSRUN_SVC_MARK=$ND" --image services -- sh -c 'exec sleep 60' '' 'a b'
assert_eq "a service with an empty argument and one with a space: started" 0 "$RC"
run_nsrun ps
assert_match "nsrun ps shows them as shell words" "$ND +running +[0-9]+ +sh -c 'exec sleep 60' '' 'a b'\$" "$OUT"
run_nsrun ps --json
assert_eq "  ... so does ps --json" "sh -c 'exec sleep 60' '' 'a b'" "$(jq -r --arg n "$ND" '.[] | select(.name == $n) | .command' <<<"$OUT")"
NE="t$$-exited"
run_nsrun -d --name "$NE" --image services -- sh -c 'exit 3'
wait_until 10 test -n "$("$NSRUN" ps | grep "$NE .*exited")"
run_nsrun stop --all "$ND"
assert_eq "stop --all with a name: a usage error" 125 "$RC"
run_nsrun rm --all
assert_eq "rm --all: exit 125 (one is running)" 125 "$RC"
assert_match "  ... says which runs" "\"$ND\" is running" "$ERR"
assert_eq "  ... removed the exited one" "$NE" "$OUT"
check "  ... kept the running one" test -n "$(live_procs "$ND")"
run_nsrun stop -t 5 --all
assert_eq "stop --all: stops every service of the caller" "0 $ND" "$RC $OUT"
check "  ... nothing left" gone "$ND" "$ND"
run_nsrun -d --name "t$$-f" -e "NSRUN_SVC_MARK=t$$-f" --image services -- sleep 60
run_nsrun rm -f --all
assert_eq "rm -f --all: stops and removes a running one" "0 t$$-f" "$RC $OUT"
check "  ... nothing left" gone "t$$-f" "t$$-f"
run_nsrun rm --all
assert_eq "rm --all with none: exit 0, nothing printed" "0 " "$RC $OUT"
assert_eq "no state directory left" "" "$(ls -A "$STATE")"
assert_eq "no mount left on the host" "$MOUNTS_BEFORE" "$(our_mounts)"

done_testing
