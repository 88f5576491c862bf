#!/bin/bash
# Services' labels, health and waits (issue 21): --label with ps --filter and
# stop/rm --all --filter (control: the unlabelled one stays); --health-cmd and
# ps's (healthy)/(unhealthy)/(health: starting); -d's --wait-log, --wait-http and
# --wait-healthy, each with a service that becomes ready late (the wait is
# shown to have happened) and one that never does (the error names the wait and
# shows the last log lines, nothing left); a published port's
# --publish-max-connections (the connection past it is reset, and counted); nsrun
# api's State.Health and Healthcheck.
# Uses the `python` image (sh, python3).
. "$(dirname "$0")/../lib.sh"
require_nsrun
require_userns
require_image python

export XDG_RUNTIME_DIR="$TESTTMP/run"
mkdir -m 700 "$XDG_RUNTIME_DIR"
STATE="$XDG_RUNTIME_DIR/nsrun"
at_exit '"$NSRUN" rm -f --all'
N="t$$"

# status NAME — the STATUS column of nsrun ps for NAME
status() { "$NSRUN" ps | awk -v n="$1" '$1 == n { sub(/^[^ ]+ +/, ""); sub(/ +[0-9]+ .*/, ""); print }'; }
has_status() { [ "$(status "$1")" = "$2" ]; }
# wait_until SECONDS CMD... — poll CMD every 0.1 s
wait_until() {
	local i n=$(($1 * 10))
	shift
	for ((i = 0; i < n; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}
# no_trace NAME — no state directory and no process of the service NAME
no_trace() { [ ! -e "$STATE/$1" ] && ! pgrep -f -- "--name $1( |\$)" >/dev/null; }

# ---- bad input: one error line, exit 125, nothing made
for args in "--label a=b|--label: only with -d" \
	"-d --wait-log (|--wait-log: .*Unmatched" \
	"-d --wait-http 8000|--wait-http 8000: not a published container port" \
	"-d -p 0:8000 --wait-http 8000/a\tb|the path has a space or control character" \
	"-d --wait-healthy|--wait-healthy: there is no health check" \
	"-d --health-cmd true --health-retries 0|must be more than 0" \
	"-d --label =v|--label: \"=v\": expected KEY=VALUE" \
	"-d --publish-max-connections 0|--publish-max-connections: must be 1 or more" \
	"-d --publish-max-connections 5000|--publish-max-connections"; do
	want=${args#*|}
	IFS=' ' read -r -a a <<<"${args%%|*}"
	a=("${a[@]//\\t/$'\t'}")
	run_nsrun "${a[@]}" --image python -- sleep 600
	assert_eq "${args%%|*}: exit 125" 125 "$RC"
	assert_match "  ... says why" "$want" "$ERR"
done
assert_eq "  ... and no service was made" "" "$(ls -A "$STATE" 2>/dev/null)"
run_nsrun ps --filter status=running
assert_eq "ps --filter other than label: exit 125" 125 "$RC"
run_nsrun stop --filter label=a
assert_eq "stop --filter without --all: exit 125" 125 "$RC"

# ---- labels: ps --filter, stop --all --filter; control: the other stays
run_nsrun -d --name "$N-a" --label "suite=$N" --label tier=db --image python -- sleep 600
assert_eq "-d --label: started" 0 "$RC"
run_nsrun -d --name "$N-b" --label "suite=$N" --label "note=a b" --image python -- sleep 600
run_nsrun -d --name "$N-c" --image python -- sleep 600
run_nsrun ps --json
assert_eq "ps --json shows the labels" '{"suite":"'"$N"'","tier":"db"}' \
	"$(jq -c --arg n "$N-a" '.[] | select(.name == $n) | .labels' <<<"$OUT")"
run_nsrun ps --filter "label=suite=$N"
assert_eq "ps --filter label=KEY=VALUE: the two labelled" "$N-a $N-b" "$(awk 'NR > 1 { print $1 }' <<<"$OUT" | sort | xargs)"
run_nsrun ps --filter "label=suite=$N" --filter tier
assert_eq "ps --filter KEY (no label=): exit 125" 125 "$RC"
run_nsrun ps --filter "label=suite=$N" --filter label=tier --json
assert_eq "ps --filter label=K=V --filter label=KEY: both must hold" "$N-a" "$(jq -r '.[].name' <<<"$OUT")"
run_nsrun ps --filter "label=note=a b"
assert_eq "  ... a value with a space" "$N-b" "$(awk 'NR > 1 { print $1 }' <<<"$OUT")"
run_nsrun stop -t 5 --all --filter "label=suite=$N"
assert_eq "stop --all --filter label=...: stops the labelled ones" "0 $N-a $N-b" "$RC $(sort <<<"$OUT" | xargs)"
check "  ... nothing of them left" no_trace "$N-a"
assert_eq "  ... control: the unlabelled one still runs" "running" "$(status "$N-c")"
run_nsrun rm -f --all --filter label=nobody
assert_eq "rm -f --all --filter that matches none: exit 0, none removed" "0 running" "$RC$OUT $(status "$N-c")"
run_nsrun rm -f "$N-c"

# ---- stop returns once the monitor has ended, not before: strace holds each
# exit_group(2) 3 s, as an ASan build's leak check holds the monitor's exit (the
# monitor had let go of its lock before its exit, and stop returned while it ran)
STRACE=(env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -o /dev/null)
# (through a script, so that strace's own command line does not name the service)
printf '%s\n' "exec \"\$NSRUN\" -d --name $N-held --image python -- sleep 600" >"$TESTTMP/start-held"
"${STRACE[@]}" -e trace=exit_group -e inject=exit_group:delay_enter=3000000 \
	bash "$TESTTMP/start-held" >"$TESTTMP/held.out" 2>&1 &
held_bg=$!
check "a service started under strace (control: it runs)" wait_until 60 has_status "$N-held" running
check "  ... its monitor has the service's name in its command line (control for no_trace)" \
	pgrep -f -- "--name $N-held( |\$)"
run_nsrun stop -t 30 "$N-held"
assert_eq "stop of a service whose monitor's exit is slow: exit 0" "0" "$RC"
check "  ... nothing of it left when stop returned" no_trace "$N-held"
wait "$held_bg"

# ---- a remover that found a service dead removes that one, never another started
# under its name since: rm of an exited service, held by strace after it saw it
# dead (each flock(2) held 4 s before it is made, its look at the lock among them),
# while another rm removes it and a new service takes the name (before, the held
# rm then emptied and removed the new one's state by name, leaving it running
# where no nsrun command found it; a breaker's)
run_nsrun -d --name "$N-re" --image python -- sleep 1
check "an exited service (control: ps shows it exited)" wait_until 30 has_status "$N-re" "exited (0)"
"${STRACE[@]}" -e trace=flock -e inject=flock:delay_enter=4000000 "$NSRUN" rm "$N-re" >"$TESTTMP/re.out" 2>&1 &
held_bg=$!
# has_dir_open: the held rm has the service's directory open
has_dir_open() {
	local pid
	pid=$(pgrep -x -f -- "$NSRUN rm $N-re") && ls -l "/proc/$pid/fd" 2>/dev/null | grep -q "/$N-re\$"
}
check "  ... an rm of it held by strace (control: it has the directory open)" wait_until 30 has_dir_open
run_nsrun rm "$N-re"
assert_eq "  ... another rm removes it meanwhile" "0 $N-re" "$RC $OUT"
run_nsrun -d --name "$N-re" --image python -- sleep 600
assert_eq "  ... and a new service takes the name" 0 "$RC"
wait "$held_bg"
assert_eq "  ... the held rm ends (the service it found is gone): exit 0" "0" "$?"
assert_eq "  ... the new service is still known, running" "running" "$(status "$N-re")"
run_nsrun rm -f "$N-re"
assert_eq "  ... and rm -f stops it" "0 $N-re" "$RC $OUT"
check "  ... nothing of it left" no_trace "$N-re"

run_nsrun -d --name "$N-log" --wait-log 'ready to (serve|go)$' --ready-timeout 30 --image python -- \
	sh -c 'echo starting; sleep 1; echo "now ready to serve"; exec sleep 600'
assert_eq "--wait-log, the line printed after 1 s: started" 0 "$RC"
check "  ... it returned once the line was in the log, not before" grep -q 'ready to serve' "$STATE/$N-log/log"
run_nsrun rm -f "$N-log"
run_nsrun -d --name "$N-nolog" --wait-log 'never printed' --ready-timeout 2 --image python -- \
	sh -c 'echo first words; echo last words; exec sleep 600'
assert_eq "--wait-log, a line that never comes: exit 125 after --ready-timeout" 125 "$RC"
assert_match "  ... says which wait fell short" "not ready within 2s \(--ready-timeout\): no line of its log matched --wait-log \"never printed\"" "$ERR"
assert_match "  ... shows the last log lines" "last log lines:.*first words.*last words" "$(tr '\n' ' ' <<<"$ERR")"
check "  ... nothing left" no_trace "$N-nolog"

# ---- --health-cmd with --wait-healthy: late, and never; ps shows the health
run_nsrun -d --name "$N-h" --health-cmd 'test -e /tmp/ok && echo fine' --health-interval 0.2 \
	--health-start-period 30 --wait-healthy --ready-timeout 30 --image python -- \
	sh -c 'sleep 1; touch /tmp/ok; echo made; exec sleep 600'
assert_eq "--wait-healthy, healthy after 1 s: started" 0 "$RC"
check "  ... it returned once the check passed, not before" grep -q made "$STATE/$N-h/log"
assert_eq "  ... ps shows (healthy)" "running (healthy)" "$(status "$N-h")"
run_nsrun ps --json
assert_eq "  ... ps --json has the health" "healthy 0 fine" \
	"$(jq -r --arg n "$N-h" '.[] | select(.name == $n) | .health | "\(.status) \(.exit_code) \(.output)"' <<<"$OUT")"
"$NSRUN" api --socket "$TESTTMP/api.sock" --idle-timeout 0 2>"$TESTTMP/api.err" &
API=$!
wait_until 30 test -S "$TESTTMP/api.sock"
# api METHOD PATH [BODY] — a request to nsrun api; prints the status and the JSON answer
cat >"$TESTTMP/api.py" <<'PY'
import http.client, json, socket, sys
class C(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX); self.sock.connect(sys.argv[1])
c = C("localhost")
c.request(sys.argv[2], sys.argv[3], body=sys.argv[4] if len(sys.argv) > 4 else None, headers={"Content-Type": "application/json"})
r = c.getresponse()
print(r.status, r.read().decode())
PY
api() { python3 "$TESTTMP/api.py" "$TESTTMP/api.sock" "$@"; }
health_of() { api GET "/containers/$1/json" | sed 's/^[0-9]* //' | jq -r '.State.Health | "\(.Status) \(.FailingStreak) \(.Log[-1].ExitCode) \(.Log[-1].Output)"'; }
assert_eq "  ... nsrun api's inspect has State.Health" "healthy 0 0 fine" "$(health_of "$N-h")"
assert_eq "  ... and its list Up (healthy)" '["Up (healthy)"]' "$(api GET /containers/json | sed 's/^[0-9]* //' | jq -c '[.[].Status]')"
run_cmd python3 "$TESTTMP/api.py" "$TESTTMP/api.sock" POST "/containers/create?name=$N-api" '{"Image": "python", "Cmd": ["sleep", "600"],
	"Healthcheck": {"Test": ["CMD", "sh", "-c", "echo from the api"], "Interval": 200000000, "Retries": 2}}'
assert_match "a container created through the API with a Healthcheck" "^201 " "$OUT"
api POST "/containers/$N-api/start" >/dev/null
wait_until 30 has_status "$N-api" "running (healthy)"
assert_eq "  ... runs it: healthy, its output in State.Health" "healthy 0 0 from the api" "$(health_of "$N-api")"
run_cmd python3 "$TESTTMP/api.py" "$TESTTMP/api.sock" POST "/containers/create?name=$N-bad" '{"Image": "python", "Cmd": ["true"], "Healthcheck": {"Test": ["CMD"]}}'
assert_match "  ... a Healthcheck.Test without a command: 400" '^400 .*Healthcheck.Test' "$OUT"
api DELETE "/containers/$N-api?force=1" >/dev/null
kill "$API"
wait "$API"
run_nsrun exec "$N-h" -- rm /tmp/ok
wait_until 30 has_status "$N-h" "running (unhealthy)"
assert_eq "  ... the file removed: (unhealthy) after --health-retries failures" "running (unhealthy)" "$(status "$N-h")"
run_nsrun rm -f "$N-h"
run_nsrun -d --name "$N-slow" --health-cmd true --health-interval 300 --image python -- sleep 600
assert_eq "a check not run yet: ps shows (health: starting)" "running (health: starting)" "$(status "$N-slow")"
run_nsrun rm -f "$N-slow"
run_nsrun -d --name "$N-sick" --health-cmd 'echo no such thing; exit 3' --health-interval 0.2 --health-retries 2 \
	--wait-healthy --ready-timeout 30 --image python -- sh -c 'echo sick service; exec sleep 600'
assert_eq "--wait-healthy, a check that always fails: exit 125" 125 "$RC"
assert_match "  ... says the check failed, with its status and output" "did not become ready: its health check failed 2 times in a row \(exit status 3: no such thing" "$ERR"
assert_match "  ... shows the last log lines" "sick service" "$ERR"
check "  ... nothing left" no_trace "$N-sick"
run_nsrun -d --name "$N-hung" --health-cmd 'sleep 30' --health-timeout 0.3 --health-interval 0.2 --health-retries 1 \
	--wait-healthy --ready-timeout 30 --image python -- sleep 600
assert_match "a check past --health-timeout counts as failed" "health check failed 1 times in a row \(exit status -1: the check ran past --health-timeout" "$ERR"

# ---- --wait-http: late, and a status that never comes
HTTP='import http.server, time; time.sleep(1)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/ready" else 404); self.end_headers(); self.wfile.write(b"x")
    def log_message(self, *a): print("GET", self.path, flush=True)
print("serving", flush=True)
http.server.HTTPServer(("127.0.0.1", 8000), H).serve_forever()'
run_nsrun -d --name "$N-web" -p 0:8000 --wait-http 8000/ready --ready-timeout 30 --image python -- python3 -c "$HTTP"
assert_eq "--wait-http PORT/PATH, a server up after 1 s: started" 0 "$RC"
check "  ... it returned once GET /ready had answered" grep -q 'GET /ready' "$STATE/$N-web/log"
run_nsrun rm -f "$N-web"
run_nsrun -d --name "$N-404" -p 0:8000 --wait-http 8000/missing --ready-timeout 3 --image python -- python3 -c "$HTTP"
assert_eq "--wait-http, a path that answers 404: exit 125" 125 "$RC"
assert_match "  ... says what it answered" "GET /missing on port 8000 answered 404 \(--wait-http\)" "$ERR"
assert_match "  ... shows the last log lines" "GET /missing" "$ERR"
check "  ... nothing left" no_trace "$N-404"

# ---- --publish-max-connections: the one past it is reset, and counted
SRV='import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", 8000)); s.listen(64)
held = []
while True:
    c, _ = s.accept(); held.append(c); c.sendall(b"hello\n")'
run_nsrun -d --name "$N-conn" -p 0:8000 --wait-port 8000 --publish-max-connections 3 --json - --image python -- python3 -c "$SRV"
PORT=$(jq -r '.ports[0].host_port' <<<"$OUT")
# shellcheck disable=SC2016
CLIENT='import socket, sys
socks, out = [], []
for i in range(5):
    try:  # the reset may come before connect(2) returns
        s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20); socks.append(s)
        out.append(s.recv(16).decode().strip() or "eof")
    except ConnectionResetError:
        out.append("reset")
print(" ".join(out))'
run_cmd python3 -c "$CLIENT" "$PORT"
assert_eq "5 connections at once past --publish-max-connections 3: three served, two reset" "hello hello hello reset reset" "$OUT"
assert_match "  ... the log counts the refusal" "connection refused: 3 open already \(--publish-max-connections\); 1 refused so far" "$(cat "$STATE/$N-conn/log")"
run_nsrun rm -f "$N-conn"

run_nsrun rm -f --all
assert_eq "no state directory left" "" "$(ls -A "$STATE")"
done_testing
