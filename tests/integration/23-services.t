#!/bin/bash
# nsrun -d: services with a name, published ports, ps/logs/stop/rm, --wait-port;
# ten at once; nothing left after stop, after a failed start, or after the monitor
# is SIGKILLed.  Uses the `services` image (redis-server; make service-image).
. "$(dirname "$0")/../lib.sh"
require_nsrun
require_userns
require_image services

# the services' state goes to a private directory of this test
export XDG_RUNTIME_DIR="$TESTTMP/run"
mkdir -m 700 "$XDG_RUNTIME_DIR"
STATE="$XDG_RUNTIME_DIR/nsrun"
MARK="svc-test-$$"
REDIS=(redis-server --save '' --appendonly no --dir /data)

# start NAME [NSRUN-OPTIONS...] — a Redis service on a free host port; sets OUT/ERR/RC
start() {
	local name=$1
	shift
	run_nsrun -d --name "$name" -p 0:6379 --wait-port 6379 --tmpfs /data -e "NSRUN_SVC_MARK=$MARK" "$@" \
		--image services -- "${REDIS[@]}"
}
# host_port NAME — the host port of a running service, from nsrun ps --json
host_port() {
	"$NSRUN" ps --json | jq -r --arg n "$1" '.[] | select(.name == $n) | .ports[0].host_port'
}
# ping PORT — Redis' answer to PING through the published port
ping() {
	timeout 5 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && printf "PING\r\n" >&3 && read -r l <&3 && printf "%s" "${l%$'"'\r'"'}"' _ "$1" 2>/dev/null
}
# live_procs — processes (not zombies) of the services of this test: the payloads carry
# the mark in their environment, the monitors and forwarders their --name on the command line
live_procs() {
	local p
	{
		grep -lz "NSRUN_SVC_MARK=$MARK" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3
		pgrep -f -- "--name t$$-"
	} | sort -u | while read -r p; do
		case "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" in "" | Z) continue ;; esac
		echo "$p $(cat "/proc/$p/comm" 2>/dev/null)"
	done
}

# ---- one service: start, ps, logs, talk to it, stop
N1="t$$-one"
start "$N1"
assert_eq "nsrun -d --wait-port: exit 0 once Redis accepts" 0 "$RC"
assert_match "  ... prints the name, then the port" "^$N1"$'\n'"6379/tcp -> 127.0.0.1:[0-9]+$" "$OUT"
P1=$(host_port "$N1")
assert_eq "  ... nsrun ps --json has the port it printed" "6379/tcp -> 127.0.0.1:$P1" "$(tail -1 <<<"$OUT")"
assert_eq "  ... Redis answers on it" "+PONG" "$(ping "$P1")"
assert_eq "  ... listening on 127.0.0.1 only" "127.0.0.1:$P1" "$(ss -Hltn "sport = :$P1" | awk '{print $4}')"
run_nsrun ps
assert_match "nsrun ps lists it as running with its port" "$N1 +running +[0-9]+ +127.0.0.1:$P1->6379/tcp +redis-server" "$OUT"
run_nsrun logs "$N1"
assert_match "nsrun logs shows what Redis wrote" 'Ready to accept connections' "$OUT"
STAT=$(stat -c '%a %u' "$STATE" "$STATE/$N1" | sort -u)
assert_eq "state directories are 0700 and ours" "700 $(id -u)" "$STAT"
start "$N1"
assert_eq "a second service of the same name: exit 125" 125 "$RC"
assert_match "  ... says the name is in use" "name \"$N1\" is already in use" "$ERR"
run_nsrun rm "$N1"
assert_eq "rm of a running service is refused" 125 "$RC"
run_nsrun -d --name 'bad name' --image services -- true
assert_match "an invalid name is refused" 'use \[a-zA-Z0-9\]' "$ERR"
run_nsrun stop -t 5 "$N1"
assert_eq "nsrun stop: exit 0" "0 $N1" "$RC $OUT"
check "  ... no state directory left" test ! -e "$STATE/$N1"
assert_eq "  ... the port is closed" "" "$(ss -Hltn "sport = :$P1")"
assert_eq "  ... no process left" "" "$(live_procs)"

# ---- ten at once
# the host's mount table: only mounts added by this test count (another program may
# mount or unmount meanwhile), without the mount ids, which change with every mount
mount_set() { cut -d' ' -f4- /proc/self/mountinfo | sort; }
MOUNTS_BEFORE=$(mount_set)
ports=()
started=0
for i in $(seq 10); do
	start "t$$-$i"
	[ "$RC" = 0 ] && started=$((started + 1))
	ports+=("$(sed -n 's/^6379\/tcp -> 127.0.0.1://p' <<<"$OUT")")
done
assert_eq "ten services started" 10 "$started"
assert_eq "  ... on ten distinct ports" 10 "$(printf '%s\n' "${ports[@]}" | sort -u | grep -c .)"
pongs=0
for p in "${ports[@]}"; do [ "$(ping "$p")" = "+PONG" ] && pongs=$((pongs + 1)); done
assert_eq "  ... each answers on its own port" 10 "$pongs"
run_nsrun ps --json
assert_eq "  ... nsrun ps --json lists ten running" 10 "$(jq '[.[] | select(.status == "running")] | length' <<<"$OUT")"
run_nsrun stop $(for i in $(seq 10); do echo "t$$-$i"; done)
assert_eq "  ... nsrun stop of the ten: exit 0" 0 "$RC"
assert_eq "  ... stopped each" 10 "$(grep -c "^t$$-" <<<"$OUT")"
assert_eq "  ... no process left" "" "$(live_procs)"
left=""
for p in "${ports[@]}"; do [ -n "$(ss -Hltn "sport = :$p")" ] && left+=" $p"; done
assert_eq "  ... no port left listening" "" "$left"
assert_eq "  ... no state directory left" "" "$(ls -A "$STATE")"
assert_eq "  ... no mount left (the mounts were the containers' own)" "" "$(comm -13 <(echo "$MOUNTS_BEFORE") <(mount_set))"

# ---- a monitor killed with SIGKILL takes its container with it; ps cleans its state
NK="t$$-killed"
start "$NK"
PK=$(sed -n 's/^6379\/tcp -> 127.0.0.1://p' <<<"$OUT")
MON=$(jq .pid "$STATE/$NK/state.json")
kill -KILL "$MON"
for _ in $(seq 50); do [ -z "$(live_procs)" ] && break; sleep 0.1; done
run_nsrun ps
assert_eq "after SIGKILL of the monitor: ps does not list it" "" "$(grep -- "$NK" <<<"$OUT")"
check "  ... and removed its state" test ! -e "$STATE/$NK"
assert_eq "  ... nothing of it runs" "" "$(live_procs)"
assert_eq "  ... its port is closed" "" "$(ss -Hltn "sport = :$PK")"

# ---- stop -t: a service that ignores SIGTERM is killed after SECONDS
run_nsrun -d --name "t$$-stubborn" -e "NSRUN_SVC_MARK=$MARK" --image services -- sh -c 'trap "" TERM; while :; do sleep 1; done'
assert_eq "a service without a port: ready once it exec'd" 0 "$RC"
run_nsrun stop -t 0.5 "t$$-stubborn"
assert_eq "stop -t 0.5 of one that ignores SIGTERM: exit 0" 0 "$RC"
assert_match "  ... after the grace, not much later" '^[0-4]\.' "$ELAPSED"
assert_eq "  ... nothing of it runs" "" "$(live_procs)"

# ---- not ready: exit 125 with its last log lines, nothing left
run_nsrun -d --name "t$$-never" -p 0:6379 --wait-port 6379 --ready-timeout 1 -e "NSRUN_SVC_MARK=$MARK" \
	--image services -- sh -c 'echo "this one never listens"; sleep 60'
assert_eq "--wait-port that never opens: exit 125" 125 "$RC"
assert_match "  ... says so" 'was not ready within 1s' "$ERR"
assert_match "  ... with the service's last log lines" 'this one never listens' "$ERR"
check "  ... no state directory" test ! -e "$STATE/t$$-never"
assert_eq "  ... nothing of it runs" "" "$(live_procs)"
run_nsrun -d --name "t$$-missing" --image services -- no-such-server
assert_eq "a command that is not there: exit 127, as docker run -d" 127 "$RC"
assert_match "  ... ended before it was ready (127), with the reason" 'No such file or directory(.|\n)*ended before it was ready \(status 127\)' "$ERR"
check "  ... no state directory" test ! -e "$STATE/t$$-missing"
run_nsrun -d --name "t$$-noexec" --image services -- /etc/hostname
assert_eq "a command that cannot be executed: exit 126, as docker run -d" 126 "$RC"
assert_match "  ... ended before it was ready (126), with the reason" 'Permission denied(.|\n)*ended before it was ready \(status 126\)' "$ERR"
check "  ... no state directory" test ! -e "$STATE/t$$-noexec"

# ---- the default state directory, without XDG_RUNTIME_DIR: in HOME, never in /tmp
ND="t$$-default"
mkdir -m 755 "$TESTTMP/home"
(unset XDG_RUNTIME_DIR; export HOME="$TESTTMP/home"; start "$ND"; echo "$RC" >"$TESTTMP/default.rc")
assert_eq "without XDG_RUNTIME_DIR: started" 0 "$(cat "$TESTTMP/default.rc")"
check "  ... its state is in \$HOME/.local/state/nsrun-services" test -f "$TESTTMP/home/.local/state/nsrun-services/$ND/state.json"
(unset XDG_RUNTIME_DIR; export HOME="$TESTTMP/home"; "$NSRUN" stop "$ND" >/dev/null)
check "  ... and gone after stop" test ! -e "$TESTTMP/home/.local/state/nsrun-services/$ND"
FAKE="$TESTTMP/evil"
mkdir -m 700 "$FAKE" && ln -s /tmp "$FAKE/nsrun"
XDG_RUNTIME_DIR="$FAKE" run_nsrun ps
assert_eq "a symlinked state directory is refused" 125 "$RC"
assert_match "  ... with a reason" 'symlink is refused' "$ERR"

done_testing
