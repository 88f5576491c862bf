#!/bin/bash
# Testcontainers for Node.js (npm testcontainers and @testcontainers/postgresql,
# make testcontainers-node) against nsrun api with its defaults, Ryuk enabled
# (served by nsrun api itself): a GenericContainer Redis with a log wait strategy
# and a file copied in before its start (withCopyContentToContainer), and PostgreSQL through its module, a real query in each (PostgreSQL then
# stopped by it); then the test process, killed with SIGKILL while Redis runs,
# leaves no container, process or port behind (Ryuk's job), with its control:
# while it lives, they are there.  Then the docker CLI runs postgres:16: run --rm,
# run -d, exec psql, rm -f.  One node process, for CI's time.
# The images are redis:7 and postgres:16 by those names, pulled by Testcontainers
# through nsrun api from a loopback registry in docker.io's place (a registries.conf
# mirror): the tests' images (make oci-test-images), whose entrypoints start as root
# and run the server as its user (setpriv, as the official images do with gosu),
# which on the host is a subordinate id (nsrun api's default where the caller has a
# range); control: the same image with one id cannot switch user.
. "$(dirname "$0")/../lib.sh"
require_nsrun
require_userns
require_test_images
ME=$(id -u)
UBASE=$(awk -F: -v u="$(id -un)" -v n="$ME" '$1 == u || $1 == n { print $2; exit }' /etc/subuid 2>/dev/null)
[ -n "$UBASE" ] || skip_all "$(id -un) has no subordinate ids (usermod --add-subuids 100000-165535 --add-subgids 100000-165535 $(id -un))"
TC=${NSRUN_TESTCONTAINERS:-$(dirname "$NSRUN")/tools/testcontainers}
NODE=$(command -v node) || skip_all "no node (Debian's nodejs)"
[ -d "$TC/node_modules/testcontainers" ] || skip_all "no Testcontainers for Node.js in $TC (make testcontainers-node)"

api_env
# Testcontainers' lock file and config are per user: this test's own
export HOME="$TESTTMP/home" TMPDIR="$TESTTMP"
mkdir "$HOME"
SCRIPT=$TESTS_DIR/testcontainers/tc.js
export NODE_PATH="$TC/node_modules"
# procs — this test's services' processes: monitors, inits, the reaper
procs() { test_procs '* -d *' '* api ryuk *'; }
# gone_within SECONDS — no state directory and no process of a service left by then
gone_within() {
	local _
	for _ in $(seq $(($1 * 10))); do
		[ -z "$(state_entries)" ] && [ -z "$(procs)" ] && return 0
		sleep 0.1
	done
	state_entries >&2
	procs >&2
	return 1
}

# the registry, as docker.io, with the two images; the API pulls into this test's store
export NSRUN_IMAGES="$TESTTMP/store"
mkdir "$NSRUN_IMAGES"
check "a loopback registry as docker.io" start_registry "$TESTTMP"
check "  ... holding redis:7 and postgres:16" push_test_images

# the reaper's grace period: a second (Testcontainers passes none; Ryuk's is 10 s)
RYUK_RECONNECTION_TIMEOUT=1s api_start

# one test process (node's start and Testcontainers' own Ryuk are the slow part)
"$NODE" "$SCRIPT" >"$TESTTMP/tc.out" 2>"$TESTTMP/tc.err" &
TCPID=$!
at_exit "kill -9 $TCPID"
for _ in $(seq 1800); do
	grep -q '^started=' "$TESTTMP/tc.out" && break
	kill -0 "$TCPID" 2>/dev/null || break
	sleep 0.1
done
OUT=$(cat "$TESTTMP/tc.out")
grep -q '^started=' <<<"$OUT" && grep -qx 'postgres=0 42 port=true' <<<"$OUT" || diag "$OUT $(cat "$TESTTMP/tc.err")"
check "GenericContainer Redis, log wait strategy, exec redis-cli set/get" grep -qx 'redis=0 from-node port=true' <<<"$OUT"
assert_eq "  ... withCopyContentToContainer: the file, put before start, is there with its mode" \
	"copied=-rw-r----- copied-by-node" "$(grep '^copied=' <<<"$OUT")"
check "PostgreSqlContainer (its module), psql runs a query" grep -qx 'postgres=0 42 port=true' <<<"$OUT"
check "  ... both pulled by reference through nsrun api into its store" \
	test -f "$NSRUN_IMAGES/docker.io+library+redis=7/image.json" -a -f "$NSRUN_IMAGES/docker.io+library+postgres=16/image.json"
# the images' users: redis 100, postgres 101; container id N >= 1 is UBASE+N-1 (newuidmap),
# as root UBASE+N (root's range, written directly)
REDIS_HOST_UID=$((UBASE + 99))
[ "$ME" = 0 ] && REDIS_HOST_UID=$((UBASE + 100))
assert_eq "  ... redis-server runs as its user inside (the entrypoint switched from root)" \
	"redis_user=redis:100" "$(grep '^redis_user=' <<<"$OUT")"
assert_eq "  ... so does PostgreSQL" "postgres_user=postgres:101" "$(grep '^postgres_user=' <<<"$OUT")"
host_redis() {
	local s
	for s in /proc/[0-9]*/status; do
		awk '$1 == "Name:" { n = $2 } $1 == "Uid:" { u = $2 } END { if (n == "redis-server") print u }' "$s" 2>/dev/null
	done | sort -u
}
assert_eq "  ... on the host, redis-server's uid is the subordinate id $REDIS_HOST_UID" "$REDIS_HOST_UID" \
	"$(host_redis | grep -x "$REDIS_HOST_UID")"
PG=$(sed -n 's/^stopped=//p' <<<"$OUT")
ID=$(sed -n 's/^started=//p' <<<"$OUT")
gone_ctr() { [ -n "$1" ] && ! grep -rqs -- "$1" "$STATE"; }
check "  ... stopped, PostgreSQL's container is removed" gone_ctr "$PG"
check "  control: Redis's is there (its id found the same way)" grep -rqs -- "$ID" "$STATE"
assert_match "a test process holds a Redis" '^[0-9a-f]{64}$' "$ID"
PORT=$(cat "$STATE"/*/state.json 2>/dev/null | grep -o '"host_port": *[0-9]*' | grep -o '[0-9]*$' | sort -u)
check "  control: while it lives, its container and the reaper run (and hold ports)" \
	test "$(procs | grep -c .)" -ge 2 -a -n "$PORT"
kill -9 "$TCPID"
wait "$TCPID" 2>/dev/null
check "SIGKILLed: Ryuk removes its container and ends; no process, state or port left" gone_within 60
LEFT=""
for p in $PORT; do ss -Hltn "sport = :$p" | grep -q . && LEFT="$LEFT $p"; done
assert_eq "  ... no port of theirs is still listened on" "" "$LEFT"

# ---- the docker CLI with postgres:16, the image Testcontainers pulled (no second pull)
DOCKER=${NSRUN_DOCKER_CLI:-$(dirname "$NSRUN")/tools/docker}
[ -x "$DOCKER" ] || DOCKER=/usr/bin/docker
export DOCKER_CONFIG="$TESTTMP/docker-config"
T0=$SECONDS
run_cmd timeout -s KILL 120 "$DOCKER" run --rm postgres:16 psql --version
assert_match "docker run --rm postgres:16 psql --version" "^0 psql \(PostgreSQL\) [0-9]" "$RC $OUT"
PGC="pg-$$"
# initdb --no-sync: nothing of the cluster need reach the disk, for CI's time
run_cmd timeout -s KILL 120 "$DOCKER" run -d --name "$PGC" -e POSTGRES_PASSWORD=pw -e POSTGRES_INITDB_ARGS=--no-sync postgres:16
assert_eq "docker run -d postgres:16 (its entrypoint makes the cluster as its user)" 0 "$RC"
pg_ready() {
	local _
	for _ in $(seq 600); do
		"$DOCKER" logs "$PGC" 2>&1 | grep -q "ready to accept connections" && return 0
		sleep 0.2
	done
	"$DOCKER" logs "$PGC" >&2
	return 1
}
check "  ... it says it is ready (docker logs)" pg_ready
run_cmd timeout -s KILL 60 "$DOCKER" exec -e PGPASSWORD=pw "$PGC" psql -h 127.0.0.1 -U postgres -tAc 'select 6 * 7'
assert_eq "  ... docker exec psql runs a query" "0 42" "$RC $OUT"
run_cmd timeout -s KILL 60 "$DOCKER" rm -f "$PGC"
assert_eq "  ... docker rm -f removes it" "0 $PGC" "$RC $OUT"
check "  ... nothing of it is left" gone_within 30
diag "(docker run postgres:16: $((SECONDS - T0)) s)"

# control: the same image with one id (nsrun's default: no --userns subids), root
# inside with the capabilities: its entrypoint cannot switch to the redis user
run_nsrun --image redis:7 --user 0 --cap-add ALL --read-only=false
assert_match "control: redis:7 with one id fails where its entrypoint gives /data to redis" \
	"^1 chown: changing ownership of '.': Invalid argument\$" "$RC $ERR"

kill "$API_PID"
wait "$API_PID"
assert_eq "SIGTERM: nsrun api exits 0" 0 "$?"
assert_eq "  ... having said only where it served (no sanitizer report either)" \
	"nsrun: api: serving on unix://$SOCK" "$(cat "$TESTTMP/api.err")"
done_testing
