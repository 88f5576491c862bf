#!/bin/bash
# --tmpfs PATH[:size=,mode=] and -p [HOST_IP:]HOST_PORT:CONTAINER_PORT: the option
# parsers, a writable tmpfs on the read-only root, a published port that reaches the
# container while the container itself still reaches nothing of the host.
. "$(dirname "$0")/../lib.sh"
require_all

# ---- --tmpfs
run_nsrun --image python --tmpfs /data:size=1m,mode=0700 -- sh -c \
	'stat -c "%a %u" /data && df -k /data | tail -1 | awk "{print \$2}" && echo x >/data/f && cat /data/f && touch /etc/x'
assert_eq "--tmpfs: mode 0700, owned by the payload, 1m (1024 KiB), writable; the root stays read-only" \
	"$(printf '700 65534\n1024\nx')" "$OUT"
assert_match "  ... /etc is read-only" 'Read-only file system' "$ERR"
run_nsrun --image python --tmpfs /srv/state -- sh -c 'stat -c %a /srv/state; df -k /srv/state | tail -1 | awk "{print \$2}"'
assert_eq "--tmpfs default: mode 1777, size of --tmpfs-size (64m), made where the image lacks it" \
	"$(printf '1777\n65536')" "$OUT"

bad_tmpfs() { # DESC SPEC REGEX
	run_nsrun --image python --tmpfs "$2" -- true
	assert_eq "$1: exit 125" 125 "$RC"
	assert_match "  ... message" "$3" "$ERR"
}
bad_tmpfs "--tmpfs relative path" data 'must be an absolute path'
bad_tmpfs "--tmpfs unknown option" /data:uid=0 'unknown option "uid"'
bad_tmpfs "--tmpfs bad mode" /data:mode=999 'expected octal'
bad_tmpfs "--tmpfs bad size" /data:size=12x '12x'
bad_tmpfs "--tmpfs over /proc" /proc 'managed by nsrun'

# ---- -p: parsing
bad_publish() { # DESC SPEC REGEX
	run_nsrun --image python -p "$2" -- true
	assert_eq "$1: exit 125" 125 "$RC"
	assert_match "  ... message" "$3" "$ERR"
}
bad_publish "-p without a host port" 6379 'expected \[HOST_IP:\]HOST_PORT:CONTAINER_PORT'
bad_publish "-p udp" 0:53/udp 'only tcp'
bad_publish "-p container port 0" 1:0 'container port "0"'
bad_publish "-p port too large" 0:70000 'container port "70000"'
bad_publish "-p host name instead of an address" localhost:0:80 'not a numeric IP address'
run_nsrun --image python -p 0:80 --wait-port 81 -d -- true
assert_match "--wait-port must be published" 'not a published container port' "$ERR"

# ---- -p: --json has the ports as bound (port 0 resolved), and validates
run_nsrun --image python -p 0:8080 -p 127.0.0.1:0:9090 --json - -- true
assert_eq "-p --json: exit 0" 0 "$RC"
BOUND=$(sed -n 's/^nsrun: published 127\.0\.0\.1:\([0-9]*\)->8080\/tcp, 127\.0\.0\.1:\([0-9]*\)->9090\/tcp$/\1 \2/p' <<<"$ERR")
assert_match "  ... the ports are reported on stderr" '^[0-9]+ [0-9]+$' "$BOUND"
assert_eq "  ... and in the document, in order, with network none" \
	"none 127.0.0.1:${BOUND% *}->8080/tcp 127.0.0.1:${BOUND#* }->9090/tcp" \
	"$(jq -r '[.network] + [.ports[] | "\(.host_ip):\(.host_port)->\(.container_port)/\(.protocol)"] | join(" ")' <<<"$OUT")"
SCHEMA=$TESTS_DIR/../docs/result.schema.json
run_cmd python3 -c 'import json, sys, jsonschema
jsonschema.validate(json.loads(sys.argv[1]), json.load(open(sys.argv[2])))' "$OUT" "$SCHEMA"
assert_eq "  ... the document validates against docs/result.schema.json" "0 " "$RC $ERR"
run_nsrun --image python --json - -- true
assert_eq "  ... without -p there is no ports field" null "$(jq -c .ports <<<"$OUT")"

# regression: with many ports the "published" line was cut at 511 bytes
MANY=()
for i in $(seq 1 32); do MANY+=(-p "0:$((8000 + i))"); done
run_nsrun --image python "${MANY[@]}" -- true
assert_eq "32 -p: the published line names all 32" 32 "$(grep '^nsrun: published ' <<<"$ERR" | grep -o -- '->80[0-9]*/tcp' | wc -l)"

# ---- -p: a port in use is an error before anything starts
PORT=$(free_port)
python3 -c 'import socket,sys,time; s=socket.socket(); s.bind(("127.0.0.1",int(sys.argv[1]))); s.listen(); print("up",flush=True); time.sleep(20)' \
	"$PORT" >"$TESTTMP/busy.log" 2>&1 &
BUSY=$!
at_exit "kill $BUSY"
for _ in $(seq 50); do grep -q up "$TESTTMP/busy.log" && break; sleep 0.1; done
run_nsrun --image python -p "$PORT:80" -- true
assert_eq "-p on a port in use: exit 125" 125 "$RC"
assert_match "  ... says which" "bind 127.0.0.1:$PORT: Address already in use" "$ERR"

# ---- -p: the published port reaches a server inside; the container reaches nothing outside
SRV='import socket
s = socket.socket(); s.bind(("127.0.0.1", 8080)); s.listen()
print("listening", flush=True)
for _ in range(2):
    c, a = s.accept(); c.sendall(b"hello from inside, peer " + a[0].encode() + b"\n"); c.close()'
"$NSRUN" --image python --timeout 60 -p 0:8080 -- python3 -c "$SRV" >"$TESTTMP/srv.out" 2>"$TESTTMP/srv.err" &
SRV_PID=$!
at_exit "kill $SRV_PID"
for _ in $(seq 400); do grep -q listening "$TESTTMP/srv.out" && break; sleep 0.05; done
HPORT=$(sed -n 's/^nsrun: published 127.0.0.1:\([0-9]*\)->8080\/tcp$/\1/p' "$TESTTMP/srv.err")
assert_match "-p 0:8080: the chosen host port is reported" '^[0-9]+$' "$HPORT"
LISTEN=$(ss -Hltn "sport = :$HPORT" | awk '{print $4}')
assert_eq "  ... it listens on 127.0.0.1 only" "127.0.0.1:$HPORT" "$LISTEN"
run_host_probe connect 127.0.0.1 "$HPORT"
assert_eq "  ... a host connection goes through" "connect: ok 127.0.0.1 $HPORT" "$OUT"
GOT=$(timeout 20 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && read -r l <&3 && echo "$l"' _ "$HPORT")
assert_eq "  ... and reaches the server inside, from its own loopback" "hello from inside, peer 127.0.0.1" "$GOT"
wait "$SRV_PID"
assert_eq "  ... the run ends normally" 0 "$?"

# inside a container with a published port: no host address, only lo
run_probe -p 0:8080 -- connect 127.0.0.1 "$PORT"
assert_match "with -p: the host's 127.0.0.1:$PORT (listening) is unreachable inside" '^connect: denied ECONNREFUSED' "$OUT"
# the host's own address where it has one; else TEST-NET-2 (RFC 5737), which nothing
# routes: inside, with only lo, any address off loopback must be unreachable (no
# packet is sent: there is no interface to send it on)
HOSTIP=$(ip -4 -o addr show scope global 2>/dev/null | awk '{sub(/\/.*/, "", $4); print $4; exit}')
what="the host's address $HOSTIP"
[ -n "$HOSTIP" ] || { HOSTIP=198.51.100.1; what="$HOSTIP (the host has no global IPv4 address)"; }
run_probe -p 0:8080 -- connect "$HOSTIP" 22
assert_match "with -p: $what is unreachable inside" '^connect: denied (ENETUNREACH|EHOSTUNREACH)' "$OUT"
run_probe -p 0:8080 -- netdev
assert_eq "with -p: only lo inside" "netdev: ok lo" "$OUT"

done_testing
