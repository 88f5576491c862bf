#!/bin/bash
# Services that reach each other without a way out (issue 21): an app and
# PostgreSQL on a named network (nsrun network create; by name through the
# network's /etc/hosts) and with --network container:NAME (docker's form, on
# localhost); neither reaches the host's loopback or an outside address, probes
# with controls (the host reaches both; the same probe under --network pasta
# reaches the outside one); the joiner sees none of the service's processes or
# files; a service that dies while another shares its network; network rm
# refuses a network in use and leaves nothing (holder, state, mounts); bad
# names are one line and a hint.  As 24-network-pasta.t, the test runs in a
# network namespace of its own standing in for the host: "remote" 198.51.100.7
# answers through a veth pair, nothing leaves it.
. "$(dirname "$0")/../netns-host.sh" # a network namespace of its own, standing in for the host
. "$(dirname "$0")/../lib.sh"
require_nsrun
require_probe
require_userns
require_image services

export XDG_RUNTIME_DIR="$TESTTMP/run"
mkdir -m 700 "$XDG_RUNTIME_DIR"
NETS="$XDG_RUNTIME_DIR/nsrun/.networks"
NET="n$$"
# shellcheck disable=SC2016
at_exit '"$NSRUN" stop -t 1 --all >/dev/null 2>&1; "$NSRUN" network rm "$NET" >/dev/null 2>&1'

# the test's servers: one outside, one on the host's loopback only
SERVERS='import socket, threading
def serve(addr, text):
    s = socket.socket(); s.bind((addr, 0)); s.listen()
    def loop():
        while True:
            c, _ = s.accept(); c.sendall(text); c.close()
    threading.Thread(target=loop, daemon=True).start()
    return s.getsockname()[1]
print(serve("198.51.100.7", b"remote-ok\n"), serve("127.0.0.1", b"host-loopback-secret\n"), flush=True)
threading.Event().wait()'
python3 -c "$SERVERS" >"$TESTTMP/servers" 2>&1 &
at_exit "kill $!"
for _ in $(seq 100); do [ -s "$TESTTMP/servers" ] && break; sleep 0.1; done
read -r REMOTE_PORT LOOP_PORT <"$TESTTMP/servers"
assert_match "the test's servers are up" '^[0-9]+$' "$REMOTE_PORT"
# reach HOST:PORT... — one line each: HOST and what it answered, or bash's error
# shellcheck disable=SC2016
REACH='for t in "$@"; do r=$(timeout 5 bash -c "exec 3<>/dev/tcp/${t%:*}/${t#*:} && head -n1 <&3" 2>&1 | head -n1); echo "${t%:*} ${r:-nothing}"; done'
IFACES='tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " " | tr "\n" " "'
run_cmd bash -c "$REACH" _ "198.51.100.7:$REMOTE_PORT" "127.0.0.1:$LOOP_PORT"
assert_eq "control: the host reaches the outside server and its own loopback one" \
	"$(printf '198.51.100.7 remote-ok\n127.0.0.1 host-loopback-secret')" "$OUT"

PG=/usr/lib/postgresql/15/bin
PGSTART="$PG/initdb --no-sync -U postgres -A trust -D /var/lib/postgresql/data >/dev/null && exec $PG/postgres \
-D /var/lib/postgresql/data -k /tmp -c listen_addresses=127.0.0.1 -c fsync=off"
# until PostgreSQL takes sessions (it accepts TCP while it starts), 30 s at most
# shellcheck disable=SC2016
PGWAIT='for i in $(seq 150); do pg_isready -q -h "$1" && break; sleep 0.2; done'

# ---- a named network
run_nsrun network create "$NET"
assert_eq "network create: exit 0, prints the name" "0 $NET" "$RC $OUT"
read -r HOLDER <"$NETS/$NET/holder"
run_nsrun network ls
assert_match "  ... network ls: ready, not in use" "$NET"$'\t'"ready"$'\t'"no" "$OUT"
run_nsrun network create "$NET"
assert_eq "  ... a second one of that name: exit 125" 125 "$RC"
assert_match "  ... says it exists" "network create $NET: the network exists" "$ERR"
assert_nsrun_error "  ... one line and a hint"

run_nsrun -d --name "db$$" --network "$NET" -p 0:5432 --tmpfs /var/lib/postgresql:mode=0700 --image services -- sh -c "$PGSTART"
assert_eq "PostgreSQL as a service on the network, its port published: exit 0" 0 "$RC"
DB_PORT=$(sed -n 's#^5432/tcp -> 127.0.0.1:##p' <<<"$OUT")
run_cmd timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$DB_PORT"
assert_eq "  ... the host reaches it through -p" 0 "$RC"
# shellcheck disable=SC2016
run_nsrun -d --name "app$$" --network "$NET" --image services -- sh -c \
	"$PGWAIT"' && psql -h "$1" -U postgres -At -c "select 6*7"; exec sleep 600' _ "db$$"
assert_eq "an app service on it: exit 0" 0 "$RC"
for _ in $(seq 600); do
	run_nsrun logs "app$$"
	grep -q '^42$' <<<"$OUT" && break
	sleep 0.1
done
assert_match "  ... the app reaches PostgreSQL by its service name (psql -h db...)" '^42$' "$OUT"
run_nsrun --network "$NET" --image services -- sh -c "$IFACES; echo; getent hosts db$$ app$$ | tr -s ' \n' '  '; echo; \
bash -c '$REACH' _ 198.51.100.7:$REMOTE_PORT 127.0.0.1:$LOOP_PORT"
assert_eq "a run on the network: exit 0" 0 "$RC"
assert_eq "  ... has lo only" "lo " "$(sed -n 1p <<<"$OUT")"
assert_eq "  ... finds both services by name, on 127.0.0.1" "127.0.0.1 db$$ 127.0.0.1 app$$ " "$(sed -n 2p <<<"$OUT")"
assert_match "  ... does not reach the outside server" '^198\.51\.100\.7 .*(unreachable|refused)' "$(sed -n 3p <<<"$OUT")"
assert_match "  ... nor the host's loopback one" '^127\.0\.0\.1 .*refused' "$(sed -n 4p <<<"$OUT")"
# --json names the network as docker inspect's NetworkMode does (it said "none")
run_nsrun --json - --network "$NET" --image services -- true
assert_eq "  ... its --json names the network" "0 $NET" "$RC $(jq -r .network <<<"$OUT" 2>&1)"
run_nsrun --json - --network "container:db$$" --image services -- true
assert_eq "  ... and container:NAME for a service's network" "0 container:db$$" "$RC $(jq -r .network <<<"$OUT" 2>&1)"
run_nsrun --json - --image services -- true
assert_eq "  control: a run of its own says none" "0 none" "$RC $(jq -r .network <<<"$OUT" 2>&1)"
# control: the same probe where there is a way out
if command -v pasta >/dev/null && { exec 9<>/dev/net/tun; } 2>/dev/null; then
	exec 9>&-
	run_nsrun --network pasta --image services -- bash -c "$REACH" _ "198.51.100.7:$REMOTE_PORT"
	assert_eq "control: the same probe under --network pasta reaches the outside server" \
		"198.51.100.7 remote-ok" "$OUT"
	# a pasta service's way out is not handed to whoever names it
	run_nsrun -d --name "p$$" --network pasta --image services -- sleep 600
	run_nsrun --network "container:p$$" --image services -- true
	assert_match "--network container: to a --network pasta service: exit 125, refused" \
		"^125 nsrun: --network container:p$$: the service's network is pasta" "$RC $ERR"
	assert_nsrun_error "  ... one line and a hint"
	"$NSRUN" stop -t 1 "p$$" >/dev/null 2>&1
else
	skip "pasta or /dev/net/tun ($(stat -c %a /dev/net/tun 2>&1)) is missing" \
		"control: the same probe under --network pasta reaches the outside server"
	skip "pasta or /dev/net/tun is missing" "--network container: to a --network pasta service"
	skip "pasta or /dev/net/tun is missing" "  ... one line and a hint"
fi
# the hosts file grows by a line a new name: past its cap a run is refused, said
size=$(stat -c %s "$NETS/$NET/hosts")
yes '# filler' | head -c $((1048576 - 16 - size)) >>"$NETS/$NET/hosts"
run_nsrun --network "$NET" --hostname "full$$" --image services -- true
assert_match "a new name on a network whose hosts file is full: exit 125, says so" \
	"^125 nsrun: --network $NET: its hosts file is full" "$RC $ERR"
assert_nsrun_error "  ... one line and a hint"
run_nsrun --network "$NET" --image services -- true
assert_eq "  control: a run that adds no name goes on" 0 "$RC"
run_nsrun network rm "$NET"
assert_eq "network rm of a network in use: exit 125" 125 "$RC"
assert_match "  ... says it is in use" "network rm $NET: it is in use" "$ERR"
assert_nsrun_error "  ... one line and a hint"

# ---- --network container:NAME: the database's own network namespace
run_nsrun --network "container:db$$" --image services -- sh -c "$IFACES; echo; psql -h localhost -U postgres -At -c 'select 1'; \
ls /proc | grep -c '^[0-9]'; test -e /var/lib/postgresql/data/PG_VERSION && echo sees-files || echo no-files; \
bash -c '$REACH' _ 198.51.100.7:$REMOTE_PORT 127.0.0.1:$LOOP_PORT; grep '^0::' /proc/self/cgroup"
assert_eq "--network container:db: exit 0" 0 "$RC"
assert_eq "  ... lo only" "lo " "$(sed -n 1p <<<"$OUT")"
assert_eq "  ... reaches PostgreSQL on localhost" "1" "$(sed -n 2p <<<"$OUT")"
assert_match "  ... sees only its own processes (its own pid namespace)" '^[1-4]$' "$(sed -n 3p <<<"$OUT")"
assert_eq "  ... not the service's files" "no-files" "$(sed -n 4p <<<"$OUT")"
assert_match "  ... does not reach the outside server" '^198\.51\.100\.7 .*(unreachable|refused)' "$(sed -n 5p <<<"$OUT")"
assert_match "  ... nor the host's loopback one" '^127\.0\.0\.1 .*refused' "$(sed -n 6p <<<"$OUT")"
assert_eq "  ... its cgroup namespace is rooted at its run's cgroup, as a run's own" "0::/" "$(sed -n 7p <<<"$OUT")"
run_nsrun exec "db$$" -- test -e /var/lib/postgresql/data/PG_VERSION
assert_eq "  control: the service has them (nsrun exec)" 0 "$RC"
# the joiner gains nothing of the service: ids, capabilities, no_new_privs and
# seccomp as a run of its own has them
run_probe -- status
OWN=$OUT
run_probe --network "container:db$$" -- status
assert_eq "  ... its payload's ids, capabilities, no_new_privs and seccomp are a run's own" "$OWN" "$OUT"
assert_match "  control: those are none and on" 'CapEff:[[:space:]]*0000000000000000.*NoNewPrivs:[[:space:]]*1.*Seccomp:[[:space:]]*2' \
	"$(tr '\n' ' ' <<<"$OWN")"
run_nsrun --network "container:db$$" -p 0:80 --image services -- true
assert_match "-p with --network container: is refused (the service publishes)" '^nsrun: -p and --network container:' "$ERR"
assert_nsrun_error "  ... one line and a hint"

# ---- a service that dies while another shares its network
run_nsrun -d --name "r$$" --tmpfs /data --image services -- redis-server --save '' --appendonly no --dir /data
run_nsrun -d --name "w$$" --network "container:r$$" --image services -- sh -c \
	'while :; do redis-cli -p 6379 ping 2>&1 | head -n1; sleep 0.2; done'
assert_eq "a service joining another's network: exit 0" 0 "$RC"
for _ in $(seq 100); do
	run_nsrun logs "w$$"
	grep -q PONG <<<"$OUT" && break
	sleep 0.1
done
assert_match "  ... it reaches the other's Redis on localhost" PONG "$OUT"
# the same through the Docker API (docker-py): NetworkMode container:NAME
if /usr/bin/python3 -c 'import docker' 2>/dev/null; then
	"$NSRUN" api --socket "$TESTTMP/api.sock" --idle-timeout 0 >/dev/null 2>&1 &
	at_exit "kill $!"
	for _ in $(seq 100); do [ -S "$TESTTMP/api.sock" ] && break; sleep 0.1; done
	run_cmd /usr/bin/python3 -c 'import sys, time, docker
c = docker.DockerClient(base_url="unix://" + sys.argv[1])
def tryit(f):
    try:
        f()
    except docker.errors.APIError as e:
        print(e.status_code, e.explanation)
# a plain nsrun -d service is not the API clients to join
tryit(lambda: c.containers.create("services", ["true"], network_mode="container:" + sys.argv[2]))
# the API defaults (root, --userns subids where the caller has a range, a writable root),
# as the container of a Docker client is: joining it was once refused (33-multi-id.t)
r = c.containers.run("services", ["redis-server", "--save", "", "--appendonly", "no", "--dir", "/"], detach=True)
for _ in range(300):
    k = c.containers.run("services", ["redis-cli", "ping"], network_mode="container:" + r.id, detach=True)
    k.wait(timeout=30)
    out = k.logs().decode().strip()
    k.remove(force=True)
    if out == "PONG":
        break
    time.sleep(0.1)
print(out)
tryit(lambda: c.containers.create("services", ["true"], network_mode="container:" + r.id, ports={"80/tcp": 0}))
tryit(lambda: c.containers.create("services", ["true"], network_mode="container:" + r.id, links={r.id: "db"}))
r.remove(force=True)' "$TESTTMP/api.sock" "r$$"
	assert_eq "docker-py: network_mode container:NAME of a CLI service: 403" \
		"403 NetworkMode \"container:r$$\": refused by nsrun api: only a container made through the API can be joined, not a service of nsrun -d" \
		"$(sed -n 1p <<<"$OUT")"
	assert_eq "  control: of an API container, reaches its Redis; with ports: Docker's 400" \
		"$(printf 'PONG\n400 conflicting options: port publishing and the container type network mode')" "$(sed -n 2,3p <<<"$OUT")"
	assert_eq "  ... and with Links: refused as without it" "501 VolumesFrom and Links are not supported by nsrun api" \
		"$(sed -n 4p <<<"$OUT")"
else
	skip "no docker-py (Debian python3-docker; make deps)" "docker-py: network_mode container:NAME"
fi
run_nsrun stop -t 2 "r$$"
assert_eq "the service whose network it shares stops: exit 0" 0 "$RC"
for _ in $(seq 100); do
	run_nsrun logs "w$$"
	grep -q 'Could not connect' <<<"$OUT" && break
	sleep 0.1
done
assert_match "  ... the joiner goes on, its peer gone" 'Could not connect' "$OUT"
run_nsrun ps
assert_match "  ... still running" "w$$ +running" "$OUT"
run_nsrun stop -t 2 "w$$"
assert_eq "  ... and stops as any service" 0 "$RC"
run_nsrun --network "container:r$$" --image services -- true
assert_match "joining a service that is gone: exit 125, says so" "^125 nsrun: --network container:r$$: no such service" "$RC $ERR"

# ---- removal leaves nothing
MOUNTS_BEFORE=$(cut -d' ' -f4- /proc/self/mountinfo | sort)
run_nsrun stop -t 2 "app$$" "db$$"
assert_eq "the services stop" 0 "$RC"
run_nsrun network rm "$NET"
assert_eq "network rm once unused: exit 0" "0 $NET" "$RC $OUT"
check "  ... no state left" test -z "$(ls -A "$NETS")"
gone=no
for _ in $(seq 50); do
	case "$(awk '{print $3}' "/proc/$HOLDER/stat" 2>/dev/null)" in "" | Z) gone=yes; break ;; esac
	sleep 0.1
done
assert_eq "  ... its holder process is gone" yes "$gone"
assert_eq "  ... no mount left" "" "$(comm -13 <(echo "$MOUNTS_BEFORE") <(cut -d' ' -f4- /proc/self/mountinfo | sort))"
run_nsrun --network "$NET" --image services -- true
assert_match "a run on a removed network: exit 125, says so" "^125 nsrun: --network $NET: no such network" "$RC $ERR"
assert_nsrun_error "  ... one line and a hint"

# ---- a network whose holder was killed: said, and rm still cleans up
run_nsrun network create "$NET"
read -r HOLDER <"$NETS/$NET/holder"
kill -KILL "$HOLDER"
for _ in $(seq 50); do
	case "$(awk '{print $3}' "/proc/$HOLDER/stat" 2>/dev/null)" in "" | Z) break ;; esac
	sleep 0.1
done
run_nsrun --network "$NET" --hostname "ghost$$" --image services -- true
assert_match "a network whose holder was killed: exit 125, says so" "^125 nsrun: --network $NET: its holder process is gone" "$RC $ERR"
assert_eq "  ... the run that failed added no name to its hosts file" 0 "$(grep -c "ghost$$" "$NETS/$NET/hosts")"
run_nsrun network rm "$NET"
assert_eq "  ... network rm removes it" "0 $NET" "$RC $OUT"
check "  ... no state left" test -z "$(ls -A "$NETS")"

# ---- bad names
for bad in 'a/b' '.hidden'; do
	run_nsrun network create "$bad"
	assert_match "network create \"$bad\": exit 125, not a network name" "^125 nsrun: network create .*not a network name" "$RC $ERR"
done
assert_nsrun_error "  ... one line and a hint"
for bad in pasta default container1; do
	run_nsrun network create "$bad"
	assert_match "network create $bad: exit 125, a reserved name" "^125 nsrun: network create $bad: \"$bad\": a reserved name" "$RC $ERR"
done
assert_nsrun_error "  ... one line and a hint"
check "  ... none made" test -z "$(ls -A "$NETS")"
run_nsrun network rm nope$$
assert_match "network rm of no such network: exit 125" "^125 nsrun: network rm nope$$: no such network" "$RC $ERR"
for bad in 'container:a b' 'host'; do
	run_nsrun --network "$bad" --image services -- true
	assert_match "--network \"$bad\": exit 125, one line" "^125 nsrun: --network: " "$RC $ERR"
	assert_nsrun_error "  ... and a hint"
done
run_nsrun network bogus
assert_eq "network with an unknown subcommand: exit 125" 125 "$RC"

done_testing
