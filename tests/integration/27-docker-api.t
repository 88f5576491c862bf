#!/bin/bash
# nsrun api: the Docker Engine API on a unix socket, driven by the real docker-py
# (Debian's python3-docker): the issue's harness verbatim, escape probes of examples/test_isolation.py (the fork bomb through pids_limit too) with their
# controls, every refusal in Docker's error shape, garbage and a client leaving
# mid-stream, the state shared with nsrun ps/-d, and nothing left behind.
. "$(dirname "$0")/../lib.sh"
require_nsrun
require_userns
require_image python
/usr/bin/python3 -c 'import docker' 2>/dev/null || skip_all "no docker-py (Debian python3-docker; make deps)"

api_env
CLIENT=(/usr/bin/python3 "$TESTS_DIR/integration/docker-api-client.py")
mkdir -m 755 "$TESTTMP/vol" "$TESTTMP/other"

# py SCENARIO [ARGS...] — the docker-py client; sets OUT/ERR/RC
py() { run_cmd timeout 120 "${CLIENT[@]}" "$@"; }
# api_procs — the containers' monitors and inits made for this test (their cmdline is
# `nsrun -d --name ...`, their environment has this test's XDG_RUNTIME_DIR), alive
api_procs() { test_procs '* -d --name *'; }
# no_api_procs — none within 5 s
no_api_procs() {
	local _
	for _ in $(seq 50); do
		[ -z "$(api_procs)" ] && return 0
		sleep 0.1
	done
	api_procs >&2
	return 1
}
# no_state_soon — no service directory within 5 s (AutoRemove waits 2 s after the exit)
no_state_soon() {
	local _
	for _ in $(seq 50); do
		[ -z "$(state_entries)" ] && return 0
		sleep 0.1
	done
	return 1
}

# a secret in the server's environment, which no container may see
API_ENV_SECRET="envsecret-$$" api_start --volume-root "$TESTTMP/vol"
assert_eq "  ... the socket is 0600 and ours" "600 $(id -u) socket" "$(stat -c '%a %u %F' "$SOCK")"

# ---- the issue's harness, verbatim: exit code, output, uid, removed
py harness 'import os; print("hello from", os.getuid()); raise SystemExit(3)'
assert_eq "docker-py harness: run, wait, logs, remove" "0" "$RC"
assert_eq "  ... the payload's exit code and output, as uid 65534" $'exit=3\nhello from 65534' "$OUT"
assert_eq "  ... removed: no state directory left" "" "$(state_entries)"
check "  ... no container process left" no_api_procs

# ---- escape probes with their controls, and refusals, in one docker-py process
# (its import alone takes a second or two on a loaded machine)
LISTEN_PORT=$(free_port)
/usr/bin/python3 -c 'import socket,sys,time; s=socket.socket(); s.bind(("127.0.0.1",int(sys.argv[1]))); s.listen(); time.sleep(120)' \
	"$LISTEN_PORT" &
LISTENER=$!
at_exit "kill $LISTENER"
NETPROBE='import socket,sys
for addr in sys.argv[1:]:
    h, p = addr.rsplit(":", 1)
    try:
        socket.create_connection((h, int(p)), timeout=3).close(); print(addr, "connected")
    except OSError as e: print(addr, type(e).__name__)'
WRITEPROBE=$'import os\nfor p in ("/etc/x", "/x", "/tmp/x"):\n    try:\n        open(p, "w").write("x"); print(p, "written")\n    except OSError as e: print(p, e.strerror)'
echo secret >"$TESTTMP/vol/f"
# examples/test_isolation.py's other probes: host files, processes, the server's
# environment, memory past mem_limit (256m; its control: 32m)
HOSTPROBE="import os
print('hostfile', os.path.exists('$TESTTMP/vol/f'), flush=True)
print('procs', sum(p.isdigit() for p in os.listdir('/proc')), flush=True)
print('envsecret', any('envsecret-' in v for v in os.environ.values()), flush=True)
b = b'x' * (32 << 20); print('mem32', len(b) >> 20, flush=True); del b
try:
    b = b'x' * (512 << 20); print('mem512', 'allocated', flush=True)
except MemoryError:
    print('mem512', 'MemoryError', flush=True)"
THEIRS=/tmp
if [ "$(id -u)" = 0 ]; then
	THEIRS="$TESTTMP/vol/theirs"
	mkdir "$THEIRS" && echo x >"$THEIRS/f" && chown -R 65534:65534 "$THEIRS"
fi
for _ in $(seq 50); do ss -Hltn "sport = :$LISTEN_PORT" | grep -q . && break; sleep 0.1; done
batch=(harness "import sys; sys.argv[1:]=['127.0.0.1:$LISTEN_PORT','192.0.2.1:80']"$'\n'"$NETPROBE"
	::: harness "$WRITEPROBE" ::: harness "$HOSTPROBE" ::: run_as 1234:1234 'import os; print("ids", os.getuid(), os.getgid())'
	::: fork 16 500 ::: fork 64 20 ::: bind_read "$TESTTMP/vol" ::: refuse bind /etc ::: refuse bind "$THEIRS" ::: refuse seccomp-path /etc/passwd)
for kind in privileged devices pid-host ipc-host net-host cap-add seccomp-unconfined; do
	batch+=(::: refuse "$kind")
done
py "${batch[@]}"
[ "$RC" = 0 ] || diag "$ERR"
PROBES=$OUT
# has_line DESC ERE — a whole line of the batch's output matches
has_line() { check "$1" grep -Eqx -- "$2" <<<"$PROBES"; }
has_line "network: the host's loopback listener is not reachable from the container" \
	"127.0.0.1:$LISTEN_PORT ConnectionRefusedError"
has_line "  ... nor an outside address" "192.0.2.1:80 (OSError|TimeoutError|ConnectionRefusedError)"
HOST_NET=$(/usr/bin/python3 -c "import sys; sys.argv[1:]=['127.0.0.1:$LISTEN_PORT']"$'\n'"$NETPROBE")
assert_eq "  control: the same probe on the host reaches the listener" "127.0.0.1:$LISTEN_PORT connected" "$HOST_NET"
has_line "writes to the image's / are refused (read_only)" '/etc/x (Read-only file system|Permission denied)'
has_line "  ... at its top too" '/x (Read-only file system|Permission denied)'
has_line "  control: /tmp is writable in the same container" '/tmp/x written'
has_line "a host file (not bound) is not there" 'hostfile False'
check "  control: the host has it" test -f "$TESTTMP/vol/f"
has_line "host processes are not visible (its own few only)" 'procs [1-4]'
check "  control: the host's /proc shows many" test "$(find /proc -maxdepth 1 -name '[0-9]*' | wc -l)" -gt 4
has_line "the server's environment does not reach the container" 'envsecret False'
check "  control: the server has it" grep -qz "^API_ENV_SECRET=envsecret-$$" "/proc/$API_PID/environ"
has_line "memory under mem_limit: allocated (control)" 'mem32 32'
# refused (MemoryError), or the container killed before it could say so
check "memory past mem_limit (256m): not allocated" test -z "$(grep -x 'mem512 allocated' <<<"$PROBES")"
has_line "  ... (refused, or the container killed first)" '(mem512 MemoryError|exit=137)'
# examples/test_isolation.py's fork bomb: 500 forks under pids_limit=16 stop at EAGAIN
# (11) within the limit (a cgroup's pids.max as root; RLIMIT_NPROC, counted per user
# namespace, where none is delegated: docs/limits.md); control: 20 under 64 all fork
has_line "fork bomb under pids_limit=16: EAGAIN at the limit" 'fork 16 500 \[([0-9]|1[0-6]), 11\] exit=0'
has_line "  control: 20 forks under pids_limit=64 all succeed" 'fork 64 20 \[20, null\] exit=0'
has_line "uid: User is what the payload runs as (control for the harness' 65534)" 'ids 1234 1234'
has_line "a bind of the caller's own directory under a root works (control)" 'secret'
has_line "refused: a bind outside the volume roots" 'refused 403 bind source "/etc" is outside the volume roots.*'
has_line "refused: a seccomp profile path outside them (the server would read it)" \
	'refused 403 seccomp profile "/etc/passwd" is outside the volume roots.*'
if [ "$(id -u)" = 0 ]; then
	has_line "refused: a bind under the roots the caller does not own" 'refused 403 bind source ".*/theirs" is not owned by uid 0.*'
else
	has_line "refused: a bind of a root's parent" 'refused 403 bind source "/tmp" is outside the volume roots.*'
fi
for kind in Privileged Devices 'PidMode "host"' 'IpcMode "host"' 'NetworkMode "host"' CapAdd 'SecurityOpt "seccomp=unconfined"'; do
	has_line "refused: $kind (403, Docker's message)" "refused 403 $kind: refused by nsrun api.*"
done
check "  ... nothing was created by a refusal" test "$(grep -c '^created$' <<<"$PROBES")" = 0
assert_eq "  ... no container is left" "" "$(state_entries)"

# ---- fields as Docker's decoder reads them: CapDrop as one string (a strslice),
# keys in any case, the last of two winning; a field of another type is a 400.
# Each was left out before, and the container got Docker's default capabilities
# or a writable root instead (breaker, session 18).  Control: the defaults.
py types "ty-$$"
TY=$OUT
assert_match "control: a root payload has Docker's default capabilities and a writable root" \
	'(^|
)control capeff 0*a80425fb root writable' "$TY"
has_ty() { assert_match "$1" "(^|
)$2" "$TY"; }
has_ty 'CapDrop "ALL" (one string): every capability dropped' 'capdrop-string capeff 0+ root writable'
has_ty 'CapDrop SYS_ADMIN (never granted) and cap_net_raw: taken, NET_RAW dropped' 'capdrop-beyond capeff 0*a80405fb '
has_ty 'CapDrop "NET_RAWW" (misspelt): 400, never the capability left silently' \
	'bad 400 \{"message":"invalid CapDrop: unknown capability: \\"NET_RAWW\\""\}'
has_ty 'CapAdd "CHOWNN": 400 too' 'bad 400 \{"message":"invalid CapAdd: unknown capability: \\"CHOWNN\\""\}'
has_ty '"hostconfig": {"capdrop": ["ALL"]} (any case): dropped' 'capdrop-lower capeff 0+ '
has_ty '"readonlyrootfs": true (any case): a read-only root' 'readonly-lower capeff 0*a80425fb root Read-only file system'
has_ty '"CapDrop": [] then "CAPDROP": ["ALL"]: the last wins, as in Docker' 'dup-last-wins capeff 0+ '
has_ty '"ReadonlyRootfs": "true": 400' 'bad ReadonlyRootfs 400 \{"message":"HostConfig.ReadonlyRootfs: expected a boolean"\}'
has_ty '"ReadonlyRootfs": 1: 400' 'bad ReadonlyRootfs 400 .*expected a boolean'
has_ty '"Privileged": "yes": 400' 'bad Privileged 400 .*expected a boolean'
has_ty '"CapAdd": 5: 400' 'bad CapAdd 400 .*expected a string or an array of strings'
has_ty '"CapDrop": [1]: 400' 'bad CapDrop 400 .*expected a string or an array of strings'
has_ty '"Memory": "1g": 400' 'bad Memory 400 .*expected a whole number'
has_ty '"Binds": "/x:/y": 400' 'bad Binds 400 .*expected an array of strings'
has_ty '"SecurityOpt": "no-new-privileges": 400' 'bad SecurityOpt 400 .*expected an array of strings'
has_ty '"Env": "A=1": 400' 'bad 400 \{"message":"Env: expected an array of strings"\}'
has_ty 'a mount'"'"'s "ReadOnly": "yes": 400' 'bad 400 \{"message":"HostConfig.Mounts\[0\].ReadOnly: expected a boolean"\}'
has_ty 'a mount'"'"'s BindOptions.Propagation "rshared": 400, as Binds'"'"' :shared' \
	'bad 400 \{"message":"HostConfig.Mounts\[0\].BindOptions.Propagation \\"rshared\\": not supported'
has_ty 'CapAdd ["ALL"] (every capability, in Docker): 403' 'bad 403 \{"message":"CapAdd: refused by nsrun api: \\"ALL\\"'
has_ty 'Memory 1 (Docker'"'"'s floor is 6 MB): 400' 'bad 400 \{"message":"Minimum memory limit allowed is 6MB"\}'
has_ty 'a list filter of another type: 400, not every container' 'filters \{"label":5\} 400 .*invalid filters: \\"label\\": expected an array of strings or an object'
has_ty '  ... nor one of its values' 'filters \{"label":\[1\]\} 400 .*invalid filters'
has_ty '  ... nor filters that are no object' 'filters 5 400 .*invalid filters: expected an object'
has_ty '  control: a label no container has: 200, none' 'filters \{"label":\["suite=none"\]\} 200 \[\]'
has_ty 'an exec with Privileged: 403, not run unprivileged in silence' \
	'exec privileged True 403 Privileged: refused by nsrun api: an exec never gets'
has_ty '  ... of another type: 400' 'exec privileged yes 400 exec: Privileged: expected a boolean'
has_ty '  control: Privileged false: created' 'exec privileged False created'
assert_eq "  ... no container is left" "" "$(state_entries)"

# ---- garbage, and a client leaving mid-stream: the server goes on
py garbage ::: follow_and_drop "drop-$$"
assert_match "garbage request: 400, the server goes on" $'^HTTP/1.1 400' "$OUT"
assert_match "invalid JSON: 400 with Docker's message" $'HTTP/1.1 400 Bad Request\n\\{"message":"invalid JSON: [^"]+"\\}' "$OUT"
assert_match "JSON nested too deep: 400" '"message":"invalid JSON: JSON nested deeper than 32 levels"' "$OUT"
assert_match "a body past 1 MiB: 413" $'HTTP/1.1 413 [^\n]*\n\\{"message":"request body larger' "$OUT"
assert_match "an unknown path: 404 in Docker's shape" $'HTTP/1.1 404 Not Found\n\\{"message":"page not found' "$OUT"
assert_match "an unknown container: 404 No such container" '"message":"No such container: nosuch"' "$OUT"
assert_match "  ... and the server still answers" $'ping=True\nfollowed' "$OUT"
assert_match "logs follow, client gone mid-stream: the server and the container go on" \
	$'followed=True\nping=True\nstatus=running$' "$OUT"
run_nsrun ps
assert_match "nsrun ps sees the API's container" "drop-$$ +running" "$OUT"
run_nsrun logs "drop-$$"
assert_match "nsrun logs shows its output" "tick" "$OUT"
check "  control for the leak checks below: its monitor and init are seen" test -n "$(api_procs)"

# ---- one state model: the API sees an nsrun -d service; labels, filters, stop,
# ports, auto_remove, images, networks
run_nsrun -d --name "svc-$$" --image python -- sleep 60
assert_eq "nsrun -d service started" 0 "$RC"
py remove "drop-$$" ::: listed "svc-$$" ::: lifecycle
LIFE=$OUT LIFE_RC=$RC LIFE_ERR=$ERR
run_nsrun rm -f "svc-$$"
assert_eq "  ... nsrun rm -f removes it" "0 svc-$$" "$RC $OUT"
check "the API's container is removed with force" grep -qx removed <<<"$LIFE"
check "  ... its state directory is gone" test ! -e "$STATE/drop-$$"
check "docker-py lists the nsrun -d service" grep -qx "listed=\['svc-$$'\]" <<<"$LIFE"
OUT=$(sed '1,2d' <<<"$LIFE")
# ---- labels, filters, stop, ports, auto_remove, images, networks
assert_eq "lifecycle through docker-py" "0" "$LIFE_RC"
assert_eq "  ... label filters, created, id prefix, exec (output, exit code, the pid namespace; 409 when not running), stop, a free loopback port, auto_remove, run not detached with remove (LogConfig), images, networks" \
"running=['lc-a']
all=['lc-a', 'lc-b']
n2=['lc-b']
created=created
prefix=lc-a
exec=3 ['0', 'err', 'out']
exec_sees_sleep=True
exec_created=409
stopped=exited exit=143
bound=127.0.0.1
port=True
auto_removed=True
run_attached=attached
images=['python:latest']
networks=['bridge', 'host', 'none']" "$OUT"
[ "$LIFE_RC" = 0 ] || diag "$LIFE_ERR"
assert_eq "  ... no state directory left" "" "$(state_entries)"
check "  ... no container process is left" no_api_procs

# ---- the docker CLI (Debian's docker.io; only its client runs)
# make docker-cli puts it next to nsrun (build/tools), without its daemon
DOCKER=${NSRUN_DOCKER_CLI:-$(dirname "$NSRUN")/tools/docker}
[ -x "$DOCKER" ] || DOCKER=/usr/bin/docker
if [ -x "$DOCKER" ]; then
	export DOCKER_CONFIG="$TESTTMP/docker-config"
	# dk ARGS... — the CLI, killed if it hangs (it takes SIGTERM as a signal for the container)
	dk() { run_cmd timeout -s KILL 60 "$DOCKER" "$@"; }
	dk images
	assert_match "docker images: the store's images (pulls: 31-image-refs)" 'python +latest +[0-9a-f]{12} ' "$OUT"
	dk run --rm python python3 -c 'print(6 * 7); raise SystemExit(4)'
	assert_eq "docker run --rm: the output and the exit code" "4 42" "$RC $OUT"
	check "  ... and it is removed" no_state_soon
	dk run -d --name "web-$$" -p 127.0.0.1::8000 python python3 -m http.server 8000 --bind 127.0.0.1
	assert_match "docker run -d -p 127.0.0.1::8000: the id" '^[0-9a-f]{64}$' "$OUT"
	dk exec "web-$$" sh -c 'read -r h </proc/sys/kernel/hostname; echo "in-$h"; exit 5'
	assert_eq "docker exec: the output and the exit code" "5 in-nsrun" "$RC $OUT"
	# -u by name, from the container's /etc/passwd (Debian's daemon: 1:1), as docker exec
	dk exec -u daemon "web-$$" python3 -c 'import os; print(os.getuid(), os.getgid())'
	assert_eq "docker exec -u NAME: the ids of the container's /etc/passwd" "0 1 1" "$RC $OUT"
	dk exec -u 1:1 "web-$$" python3 -c 'import os; print(os.getuid(), os.getgid())'
	assert_eq "  control: the same ids by number" "0 1 1" "$RC $OUT"
	dk exec -u nosuchuser "web-$$" true
	assert_match "  ... a name it lacks: Docker's words" "unable to find user nosuchuser: no matching entries in passwd file" "$ERR$OUT"
	assert_ne "  ... and a failure" 0 "$RC"
	dk port "web-$$"
	WEB_PORT=${OUT##*:}
	assert_match "docker port: a loopback port" '^8000/tcp -> 127.0.0.1:[0-9]+$' "$OUT"
	WEB=$(/usr/bin/python3 -c 'import socket,sys,time
for _ in range(300):
    try:
        s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5); s.sendall(b"GET / HTTP/1.0\r\n\r\n")
        r = s.recv(64)
        if r: print(r.split(b"\r\n")[0].decode()); break
    except OSError: pass
    time.sleep(0.1)' "$WEB_PORT")
	assert_eq "  ... the server inside answers there" "HTTP/1.0 200 OK" "$WEB"
	dk ps
	assert_match "docker ps: it runs, with its port" "python +\"python3 -m http.ser.*Up +127.0.0.1:$WEB_PORT->8000/tcp +web-$$" "$OUT"
	dk logs "web-$$"
	assert_match "docker logs: the request it served" '"GET / HTTP/1.0" 200' "$OUT$ERR"
	dk run -d --name "logf-$$" python sh -c 'echo one; sleep 1; echo two'
	dk logs -f "logf-$$"
	assert_eq "docker logs -f: the lines as they come, until the container ends" $'0 one\ntwo' "$RC $OUT"
	dk rm "logf-$$"
	dk stop -t 1 "web-$$"
	dk ps -a
	assert_match "docker stop, ps -a: exited" "Exited \(143\) .*web-$$" "$OUT"
	dk rm "web-$$"
	assert_eq "docker rm" "0 web-$$" "$RC $OUT"
	assert_eq "  ... nothing left" "" "$(state_entries)"
	check "  ... no container process left" no_api_procs
else
	skip "no docker CLI at $DOCKER (make docker-cli takes it out of Debian's docker.io)" "the docker CLI against nsrun api"
fi

# ---- the socket: a live one and a non-socket are not replaced; the idle timeout
run_nsrun api --socket "$SOCK" --idle-timeout 1
assert_eq "a second server on a live socket is refused" 125 "$RC"
assert_match "  ... saying another server answers there" 'another server answers there' "$ERR"
: >"$TESTTMP/file"
run_nsrun api --socket "$TESTTMP/file" --idle-timeout 1
assert_match "a non-socket path is refused, and kept" 'not a socket, refused to replace it' "$ERR"
check "  ... the file is still there" test -f "$TESTTMP/file"
run_cmd timeout 20 "$NSRUN" api --socket "$TESTTMP/idle.sock" --idle-timeout 1
assert_eq "--idle-timeout 1: exits 0 by itself" 0 "$RC"
check "  ... and removes its socket" test ! -e "$TESTTMP/idle.sock"
# ---- socket activation: systemd's LISTEN_FDS protocol, the socket made by the test
ACT_SOCK="$TESTTMP/act.sock"
/usr/bin/python3 -c 'import os, socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen()
if s.fileno() != 3: os.dup2(s.fileno(), 3)
os.set_inheritable(3, True)
os.environ.update(LISTEN_FDS="1", LISTEN_PID=str(os.getpid()))
os.execv(sys.argv[2], [sys.argv[2], "api", "--idle-timeout", "0"])' "$ACT_SOCK" "$NSRUN" 2>"$TESTTMP/act.err" &
ACT_PID=$!
at_exit "kill $ACT_PID"
PING=$(/usr/bin/python3 -c 'import socket, sys, time
for _ in range(50):
    try:
        s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"GET /_ping HTTP/1.0\r\n\r\n")
        r = s.recv(4096); print(r.split(b"\r\n")[0].decode(), r.split(b"\r\n\r\n")[1].decode()); break
    except OSError: time.sleep(0.1)' "$ACT_SOCK")
assert_eq "socket activation (LISTEN_FDS): it serves the socket it was given" "HTTP/1.1 200 OK OK" "$PING"
kill "$ACT_PID"
wait "$ACT_PID"
assert_eq "  ... exits 0 on SIGTERM" 0 "$?"
check "  ... and leaves the socket to its owner" test -S "$ACT_SOCK"
assert_eq "  ... having said where it served" "nsrun: api: serving on (fd 3 from LISTEN_FDS)" "$(cat "$TESTTMP/act.err")"

# an exec started without an upgrade streams from a thread of the server, which
# waited for the command's output with no end: the server did not exit on SIGTERM
# until the command ended, its socket still open (breaker, session 18)
PLAIN_MARK="$((300 + $$ % 200)).$$"
"${CLIENT[@]}" plain_exec "plain-$$" "$PLAIN_MARK" >"$TESTTMP/plain.out" 2>&1 &
PLAIN_PID=$!
at_exit "kill $PLAIN_PID 2>/dev/null; $NSRUN rm -f plain-$$ >/dev/null 2>&1"
for _ in $(seq 100); do pgrep -f "sleep $PLAIN_MARK" >/dev/null && break; sleep 0.1; done
assert_ne "a plain (not upgraded) exec's command runs" "" "$(pgrep -f "sleep $PLAIN_MARK" || true)"
kill "$API_PID"
for _ in $(seq 100); do kill -0 "$API_PID" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$API_PID" 2>/dev/null; then
	not_ok "SIGTERM: nsrun api exits within 10 s, a plain exec streaming"
	kill -KILL "$API_PID"
else
	ok "SIGTERM: nsrun api exits within 10 s, a plain exec streaming"
fi
wait "$API_PID"
assert_eq "  ... with 0" 0 "$?"
for _ in $(seq 50); do pgrep -f "sleep $PLAIN_MARK" >/dev/null || break; sleep 0.1; done
assert_eq "  ... and the exec'd command was ended with it" "" "$(pgrep -af "sleep $PLAIN_MARK" || true)"
wait "$PLAIN_PID"
assert_eq "  ... its client saw the stream end" "streaming
ended" "$(cat "$TESTTMP/plain.out")"
run_nsrun rm -f "plain-$$"
check "  ... and removes its socket" test ! -e "$SOCK"
assert_eq "  ... having said only where it served (no sanitizer report either)" \
	"nsrun: api: serving on unix://$SOCK" "$(cat "$TESTTMP/api.err")"
done_testing
