#!/bin/bash
# --network none: a TCP server on the host's loopback is unreachable from inside, the only
# interface is `lo` (up), and there is no route but loopback ones.
. "$(dirname "$0")/../lib.sh"
require_all

# A bounded-lifetime TCP server on the host's 127.0.0.1 (and ::1 when available).
PORT=$(free_port)
timeout 30 python3 -c '
import socket, sys, time
port = int(sys.argv[1]); socks = []
for fam, addr in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
    try:
        s = socket.socket(fam); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((addr, port)); s.listen(16); s.settimeout(0.2); socks.append(s)
    except OSError: pass
print("listening", flush=True)
end = time.time() + 25
while time.time() < end:
    for s in socks:
        try: c, _ = s.accept(); c.close()
        except OSError: pass
' "$PORT" >"$TESTTMP/server.log" 2>&1 &
SERVER=$!
at_exit "kill $SERVER"
for _ in $(seq 50); do grep -q listening "$TESTTMP/server.log" && break; sleep 0.1; done

run_host_probe connect 127.0.0.1 "$PORT"
assert_eq "control: host reaches its own 127.0.0.1:$PORT" "connect: ok 127.0.0.1 $PORT" "$OUT"

run_probe -- connect 127.0.0.1 "$PORT"
assert_eq "payload cannot reach host 127.0.0.1:$PORT (exit 1)" 1 "$RC"
assert_match "  ... because its loopback is its own (ECONNREFUSED)" '^connect: denied ECONNREFUSED' "$OUT"

run_host_probe connect ::1 "$PORT"
if [ "$RC" = 0 ]; then
	ok "control: host reaches [::1]:$PORT"
	run_probe -- connect ::1 "$PORT"
	assert_match "payload cannot reach host [::1]:$PORT" '^connect: denied ' "$OUT"
else
	# no IPv6 on this kernel or host (ipv6.disable=1, no ::1 on lo): no control is
	# possible, and the payload cannot have what the host has not
	diag "no IPv6 loopback on the host: $OUT"
	run_probe -- connect ::1 "$PORT"
	assert_match "payload cannot reach [::1]:$PORT (the host has no IPv6 loopback)" '^connect: denied ' "$OUT"
fi

run_probe --network none -- connect 127.0.0.1 "$PORT"
assert_match "explicit --network none: still unreachable" '^connect: denied ' "$OUT"

# lo is up inside: the payload can talk to itself
run_probe -- loopback 127.0.0.1
assert_eq "lo is up inside (listen+connect on 127.0.0.1)" "loopback: ok 127.0.0.1" "$OUT"

run_probe -- netdev
assert_eq "only lo in /proc/net/dev" "netdev: ok lo" "$OUT"
run_host_probe netdev
assert_match "control: probe lists host interfaces" '^netdev: ok .*lo' "$OUT"

run_probe -- routes
assert_eq "routes probe ran" 0 "$RC"
nonlo=$(tr ' ' '\n' <<<"$OUT" | grep -E '^v[46]:' | grep -vE '@lo(!reject)?$' || true)
assert_eq "no route through anything but lo" "" "$nonlo"
assert_not_match "no IPv4 default route" 'v4:00000000/00000000@[^ !]+( |$)' "$OUT"
assert_not_match "no IPv6 default route (kernel reject routes aside)" 'v6:0{32}/0@[^ !]+( |$)' "$OUT"

done_testing
