#!/bin/bash
# --network pasta: a way out through pasta(1), tested against hosts this test makes
# itself.  The test runs in a network namespace of its own (a user namespace too,
# as the unprivileged user) standing in for the host: a veth pair gives it the
# "host" address 203.0.113.10/24 with a default route, and the "remote" address
# 198.51.100.7, where a server answers.  No packet leaves this namespace.
# Checks: the container gets lo and eth0 and reaches the remote host, but not the
# host's loopback services (not through its own 127.0.0.1, not through the
# gateway address); -p goes through pasta, on 127.0.0.1 only; pasta is gone after
# the run, after a SIGKILL of nsrun too; a missing /dev/net/tun or pasta is one
# clear error.
. "$(dirname "$0")/../netns-host.sh" # a network namespace of its own, standing in for the host
. "$(dirname "$0")/../lib.sh"
require_all
if ! command -v pasta >/dev/null; then
	skip_all "pasta is not installed (Debian package passt)"
fi
if ! { exec 9<>/dev/net/tun; } 2>/dev/null; then
	skip_all "/dev/net/tun ($(stat -c %a /dev/net/tun 2>&1)) cannot be opened by uid $(id -u): pasta needs it (Debian's udev makes it 0666)"
fi
exec 9>&-

# pasta processes of ours that were not there when the test started (an earlier
# leak, or another run beside this test, is not this test's).  pasta makes itself
# non-dumpable once it has joined the container, so its /proc/PID/ns is closed to
# an unprivileged caller: only its cmdline (and uid) tell what it is.
_pasta_now() { pgrep -u "$(id -u)" -f '^pasta ' | sort; }
BASE_PASTA=$(_pasta_now)
pasta_procs() { comm -13 <(printf '%s\n' "$BASE_PASTA") <(_pasta_now) | grep -v '^$' | tr '\n' ' '; }

# servers of the test's "host": a remote service, and one on the host's loopback only
SERVERS='import socket, sys, threading
def serve(addr, port, text):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port)); s.listen()
    def loop():
        while True:
            c, _ = s.accept(); c.sendall(text); c.close()
    threading.Thread(target=loop, daemon=True).start()
    return s.getsockname()[1]
r = serve("198.51.100.7", 0, b"remote-ok\n")
l = serve("127.0.0.1", 0, b"host-loopback-secret\n")
print(r, l, flush=True)
threading.Event().wait()'
python3 -c "$SERVERS" >"$TESTTMP/servers" 2>&1 &
SERVERS_PID=$!
at_exit "kill $SERVERS_PID"
for _ in $(seq 50); do [ -s "$TESTTMP/servers" ] && break; sleep 0.1; done
read -r REMOTE_PORT LOOP_PORT <"$TESTTMP/servers"
assert_match "the test's servers are up" '^[0-9]+$' "$REMOTE_PORT"

CLIENT='import socket, sys
for host, port in zip(sys.argv[1::2], sys.argv[2::2]):
    try:
        c = socket.create_connection((host, int(port)), timeout=3)
        print(host, c.recv(100).decode().strip())
    except OSError as e:
        print(host, type(e).__name__)'
IFACES='tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " " | sort | tr "\n" " "'

# control: the host reaches both of its servers
run_cmd python3 -c "$CLIENT" 198.51.100.7 "$REMOTE_PORT" 127.0.0.1 "$LOOP_PORT"
assert_eq "control: the host reaches the remote server and its own loopback service" \
	"$(printf '198.51.100.7 remote-ok\n127.0.0.1 host-loopback-secret')" "$OUT"

# control: --network none has only lo and reaches nothing
run_nsrun --image python -- sh -c "$IFACES; python3 -c '$CLIENT' 198.51.100.7 $REMOTE_PORT"
assert_eq "--network none: only lo, the remote host is unreachable" \
	"$(printf 'lo 198.51.100.7 OSError')" "$(tr '\n' ' ' <<<"$OUT" | sed 's/ $//')"

snapshot_host
run_nsrun --image python --network pasta -- sh -c \
	"$IFACES; echo; python3 -c '$CLIENT' 198.51.100.7 $REMOTE_PORT 127.0.0.1 $LOOP_PORT 203.0.113.1 $LOOP_PORT; cat /etc/resolv.conf"
assert_eq "--network pasta: exit 0" 0 "$RC"
assert_eq "  ... the container has lo and eth0" "eth0 lo " "$(sed -n 1p <<<"$OUT")"
assert_eq "  ... it reaches the remote host through pasta" "198.51.100.7 remote-ok" "$(sed -n 2p <<<"$OUT")"
assert_eq "  ... not the host's loopback service through its own 127.0.0.1 (-T none)" \
	"127.0.0.1 ConnectionRefusedError" "$(sed -n 3p <<<"$OUT")"
assert_not_match "  ... nor through the gateway address (--no-map-gw)" 'secret' "$(sed -n 4p <<<"$OUT")"
assert_eq "  ... /etc/resolv.conf is the host's" "$(cat /etc/resolv.conf)" "$(sed -n '5,$p' <<<"$OUT")"
assert_eq "  ... nothing on stderr" "" "$ERR"
assert_no_leaks "--network pasta"
# in a sandbox whose /proc is of another pid namespace (bwrap --unshare-pid without
# --proc: sandbox-runtime's nested mode), pasta is pointed at the container by its
# number in that /proc.  As root, by nobody: root's bwrap maps only host root, where
# nsrun refuses to run (25-agent-sandboxes.t)
AGENT=()
[ "$(id -u)" = 0 ] && AGENT=(setpriv --reuid=65534 --regid=65534 --clear-groups)
mkdir -p "$TESTTMP/cache-agent" && chmod 777 "$TESTTMP/cache-agent"
if ! "${AGENT[@]+"${AGENT[@]}"}" sh -c 'exec 9<>/dev/net/tun' 2>/dev/null; then
	skip "/dev/net/tun ($(stat -c %a /dev/net/tun)) cannot be opened by the sandbox's user: pasta needs it (Debian's udev makes it 0666)" \
		"pasta in bwrap without --proc"
else
	run_cmd "${AGENT[@]+"${AGENT[@]}"}" bwrap --unshare-user --unshare-pid --die-with-parent --ro-bind / / \
		--bind /proc /proc --dev /dev --dev-bind /dev/net/tun /dev/net/tun -- \
		env NSRUN_IMAGES="$NSRUN_IMAGES" XDG_CACHE_HOME="$TESTTMP/cache-agent" "$NSRUN" --image python --network pasta -- \
		sh -c "$IFACES; echo; python3 -c '$CLIENT' 198.51.100.7 $REMOTE_PORT"
	assert_eq "in bwrap without --proc: --network pasta gives eth0 and reaches the remote host" \
		"0 eth0 lo 198.51.100.7 remote-ok" "$RC $(tr -s ' \n' '  ' <<<"$OUT" | sed 's/ $//')"
	# shellcheck disable=SC2016
	run_cmd "${AGENT[@]+"${AGENT[@]}"}" bwrap --unshare-user --unshare-pid --die-with-parent --ro-bind / / \
		--bind /proc /proc --dev /dev -- sh -c 'read -r pid rest </proc/self/stat; echo "$$ $pid"'
	read -r own seen <<<"$OUT"
	assert_ne "  control: there /proc/self names the shell by another number than its own ($OUT)" "$own" "$seen"
	assert_eq "  ... no pasta left" "" "$(pasta_procs)"
fi

# /etc/hosts names the container's address (eth0's, as pasta copied it from the host)
run_nsrun --image python --network pasta --hostname box -- sh -c \
	'python3 -c "import socket; print(socket.gethostbyaddr(\"203.0.113.10\")[0], \"203.0.113.10\" in {a[4][0] for a in socket.getaddrinfo(\"box\", 80)})"; getent hosts localhost'
assert_eq "  ... /etc/hosts: the container's eth0 address is the hostname's (both ways)" "box True" "$(sed -n 1p <<<"$OUT")"
assert_match "  ... and localhost is loopback" '^(::1|127\.0\.0\.1) +localhost' "$(sed -n 2p <<<"$OUT")"
run_nsrun --image python --network pasta --json - -- true
assert_eq "  ... --json says network pasta" pasta "$(jq -r .network <<<"$OUT")"
assert_eq "  ... no pasta left" "" "$(pasta_procs)"

# the payload still runs as nobody with no capability, and cannot reconfigure eth0
run_probe --network pasta -- mount-tmpfs /tmp
assert_match "--network pasta: the payload still cannot mount" 'denied' "$OUT$ERR"
run_nsrun --image python --network pasta -- sh -c 'id -u; grep CapEff /proc/self/status'
assert_eq "  ... and runs as 65534 with no capability" "$(printf '65534\nCapEff:\t0000000000000000')" "$OUT"

# -p through pasta: on 127.0.0.1 only
SRV='import socket
s = socket.socket(); s.bind(("0.0.0.0", 8080)); s.listen()
print("listening", flush=True)
c, a = s.accept(); c.sendall(b"served through pasta\n"); c.close()'
"$NSRUN" --image python --timeout 60 --network pasta -p 0:8080 -- python3 -c "$SRV" \
	>"$TESTTMP/srv.out" 2>"$TESTTMP/srv.err" &
SRV_PID=$!
at_exit "kill -9 $SRV_PID 2>/dev/null"
for _ in $(seq 100); do grep -q listening "$TESTTMP/srv.out" 2>/dev/null && break; sleep 0.1; done
HOST_PORT=$(sed -n 's/.*published 127\.0\.0\.1:\([0-9]*\)->8080.*/\1/p' "$TESTTMP/srv.err")
assert_match "-p 0:8080 with pasta: the chosen port is reported" '^[0-9]+$' "$HOST_PORT"
LISTEN=$(ss -Hltn "sport = :$HOST_PORT" | awk '{print $4}' | sort -u | tr '\n' ' ')
assert_eq "  ... it listens on 127.0.0.1 only" "127.0.0.1:$HOST_PORT " "$LISTEN"
run_cmd python3 -c "$CLIENT" 127.0.0.1 "$HOST_PORT"
assert_eq "  ... and reaches the server inside" "127.0.0.1 served through pasta" "$OUT"
{ wait "$SRV_PID"; SRC=$?; } 2>/dev/null
assert_eq "  ... the service exits 0" 0 "$SRC"
assert_eq "  ... no pasta left" "" "$(pasta_procs)"

# -p on an address that is not loopback stays with nsrun's forwarder (pasta's tap
# path does not complete such connections): the test host's own 203.0.113.10
SRV2='import socket, threading
def serve(port, text):
    s = socket.socket(); s.bind(("0.0.0.0", port)); s.listen()
    c, a = s.accept(); c.sendall(text); c.close()
t = threading.Thread(target=serve, args=(8081, b"loopback port\n")); t.start()
print("listening", flush=True)
serve(8080, b"host address port\n"); t.join()'
"$NSRUN" --image python --timeout 60 --network pasta -p 203.0.113.10:0:8080 -p 0:8081 -- python3 -c "$SRV2" \
	>"$TESTTMP/srv2.out" 2>"$TESTTMP/srv2.err" &
SRV_PID=$!
at_exit "kill -9 $SRV_PID 2>/dev/null"
for _ in $(seq 100); do grep -q listening "$TESTTMP/srv2.out" 2>/dev/null && break; sleep 0.1; done
P1=$(sed -n 's/.*published 203\.0\.113\.10:\([0-9]*\)->8080.*/\1/p' "$TESTTMP/srv2.err")
P2=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\)->8081.*/\1/p' "$TESTTMP/srv2.err")
run_cmd python3 -c "$CLIENT" 203.0.113.10 "$P1" 127.0.0.1 "$P2"
assert_eq "-p on the host's own address and on 127.0.0.1 together, with pasta: both answer" \
	"$(printf '203.0.113.10 host address port\n127.0.0.1 loopback port')" "$OUT"
{ wait "$SRV_PID"; SRC=$?; } 2>/dev/null
assert_eq "  ... the service exits 0" 0 "$SRC"

# --timeout covers pasta's start-up too: 124, as for any other set-up.  The slow start
# is built, not hoped for: a stand-in waits SLOW seconds, then execs the real pasta.
# The control (a deadline past SLOW) shows the stand-in is a working pasta, so the 124
# comes from the deadline, however fast or slow the machine is.
mkdir -p "$TESTTMP/fake" "$TESTTMP/slow"
SLOW_MARK="sleep 2.$$"   # this run's own: no sleep of another run is counted
printf '#!/bin/sh
%s
exec %s "$@"
' "$SLOW_MARK" "$(command -v pasta)" >"$TESTTMP/slow/pasta"
chmod +x "$TESTTMP/slow/pasta"
run_cmd env PATH="$TESTTMP/slow:$PATH" "$NSRUN" --image python --network pasta --timeout 60 -- \
	sh -c "$IFACES"
assert_eq "control: a pasta that takes 2 s to start works, with --timeout 60 (eth0 is there)" "0 eth0 lo " "$RC $OUT"
run_cmd env PATH="$TESTTMP/slow:$PATH" "$NSRUN" --image python --network pasta --timeout 0.5 -- true
assert_eq "--timeout 0.5 passes while pasta starts: exit 124" 124 "$RC"
assert_eq "  ... the usual message" "nsrun: timed out after 0.5s" "$ERR"
for _ in $(seq 40); do [ -z "$(pasta_procs)" ] && ! pgrep -u "$(id -u)" -fx "$SLOW_MARK" >/dev/null && break; sleep 0.05; done
assert_eq "  ... no pasta left, nor the stand-in's sleep" "" "$(pasta_procs)$(pgrep -u "$(id -u)" -fx "$SLOW_MARK")"

# a pasta that floods stderr and fails, and one that never finishes and forks:
# the guard drains the first, and kills the second with what it forked at the deadline
printf '#!/bin/sh
yes "a line of pasta" | head -c 300000 >&2
echo "fake pasta gives up" >&2
exit 3
' \
	>"$TESTTMP/fake/pasta"
chmod +x "$TESTTMP/fake/pasta"
run_cmd env PATH="$TESTTMP/fake:$PATH" "$NSRUN" --image python --network pasta -- true
assert_eq "a pasta that writes 300 kB to stderr and exits 3: exit 125" 125 "$RC"
assert_eq "  ... its last line is the reason" "nsrun: --network pasta: pasta failed: fake pasta gives up" "$ERR"
assert_match "  ... at once, not at the 10 s start-up limit" '^[0-4]\.' "$ELAPSED"
MARK="sleep 3600.$$"   # this run's own: no sleep of another run is counted
printf '#!/bin/sh\n%s &\n%s\n' "$MARK" "$MARK" >"$TESTTMP/fake/pasta"
run_cmd env PATH="$TESTTMP/fake:$PATH" "$NSRUN" --image python --network pasta --timeout 1 -- true
assert_eq "a pasta that never finishes, --timeout 1: exit 124" 124 "$RC"
for _ in $(seq 40); do pgrep -u "$(id -u)" -fx "$MARK" >/dev/null || break; sleep 0.05; done
assert_eq "  ... what it forked is killed too" "" "$(pgrep -u "$(id -u)" -fx "$MARK")"

# nsrun killed, alone or with its whole process group (^C, a hang-up, kill -- -PGID):
# pasta's guard, in a group of its own, sees the socket close and kills pasta
for how in "KILL nsrun" "KILL group" "HUP group" "INT group"; do
	sig=${how% *}
	: >"$TESTTMP/k.out"
	setsid "$NSRUN" --image python --timeout 60 --network pasta -- sh -c 'echo up; exec sleep 30' \
		>"$TESTTMP/k.out" 2>&1 &
	KPID=$!
	# the payload starts once pasta has configured eth0
	for _ in $(seq 400); do grep -q up "$TESTTMP/k.out" && break; sleep 0.05; done
	assert_match "SIG$how: the running container has its pasta" '[0-9]' "$(pasta_procs)"
	if [ "${how#* }" = group ]; then kill -"$sig" -- -"$KPID"; else kill -"$sig" "$KPID"; fi
	{ wait "$KPID"; } 2>/dev/null
	for _ in $(seq 60); do [ -z "$(pasta_procs)" ] && break; sleep 0.05; done
	assert_eq "  ... after SIG$how no pasta is left" "" "$(pasta_procs)"
done

# nsrun SIGKILLed while pasta starts (its first process may have forked the daemon
# and not yet exited): the guard lists its children again after each reap
leaks=0
for i in $(seq 0 11); do
	"$NSRUN" --image python --timeout 60 --network pasta -- sleep 30 >/dev/null 2>&1 &
	KPID=$!
	sleep "0.$(printf '%03d' $((i * 13)))"
	kill -KILL "$KPID"
	{ wait "$KPID"; } 2>/dev/null
	for _ in $(seq 60); do [ -z "$(pasta_procs)" ] && break; sleep 0.05; done
	[ -z "$(pasta_procs)" ] || { leaks=$((leaks + 1)); kill -9 $(pasta_procs) 2>/dev/null; }
done
assert_eq "SIGKILL of nsrun 0 to 143 ms into start-up, 12 times: no pasta left" 0 "$leaks"

# errors: no /dev/net/tun (an empty /dev/net in a mount namespace of our own), no pasta
if [ "$(id -u)" = 0 ]; then
	NO_TUN=(unshare --mount -- sh -c 'mount -t tmpfs none /dev/net && exec "$@"' sh)
else
	NO_TUN=(unshare --user --map-current-user --mount --keep-caps -- sh -c \
		'mount -t tmpfs none /dev/net && exec setpriv --inh-caps=-all --ambient-caps=-all -- "$@"' sh)
fi
run_cmd "${NO_TUN[@]}" "$NSRUN" --image python --network pasta -- true
assert_eq "--network pasta without /dev/net/tun: exit 125" 125 "$RC"
assert_match "  ... pasta's reason in one line" '^nsrun: --network pasta: pasta failed: .*tun' "$(head -1 <<<"$ERR")"
assert_match "  ... with a hint" 'hint: .*/dev/net/tun' "$ERR"
assert_eq "  ... no pasta left" "" "$(pasta_procs)"
run_cmd env PATH=/nonexistent "$NSRUN" --image python --network pasta -- true
assert_eq "--network pasta without pasta on PATH: exit 125" 125 "$RC"
assert_match "  ... says what to install" "pasta not found \(install Debian's passt package\)" "$ERR"
run_nsrun --image python --network host -- true
assert_eq "--network host: exit 125" 125 "$RC"
assert_match "  ... refused, the hint names the modes" 'refused: .*hint: none \(loopback only\), pasta' "$(tr '\n' ' ' <<<"$ERR")"

done_testing
