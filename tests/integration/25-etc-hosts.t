#!/bin/bash
# /etc/hosts and /etc/hostname of nsrun's own (issue 24): in an image without them,
# and over the default `python` image's (netbase makes one), localhost (127.0.0.1
# and ::1), ::1 and the container's hostname resolve, for getent and Python, and a
# client reaches a server by those names; --hostname and --add-host show in them; every way of
# running mounts them (FILE mode, --rootfs, -t, -d); a volume at /etc/hosts is the
# caller's own.  Read-only and host-reach probes: security/20-etc-hosts.t; Node and
# CPython's test_socket: 25-compat-socket.t; --network pasta: 24-network-pasta.t;
# --allow-nested: 22-nesting.t.
. "$(dirname "$0")/../lib.sh"
require_all

STORE=${NSRUN_IMAGES:-$HOME/.local/share/nsrun/images}
ROOTFS=$STORE/python/rootfs

# ---- an image with no /etc at all (as many are): the files are made in the overlay
mkdir -p "$TESTTMP/bare/bin"; cp "$PROBE" "$TESTTMP/bare/bin/nsrun-probe"; chmod -R a+rX "$TESTTMP/bare"
run_nsrun --rootfs "$TESTTMP/bare" --hostname barebox -- /bin/nsrun-probe read /etc/hostname
assert_eq "an image without /etc: /etc/hostname is nsrun's" "read: ok /etc/hostname 8 bytes: barebox\x0a" "$OUT"
run_nsrun --rootfs "$TESTTMP/bare" -- /bin/nsrun-probe read /etc/hosts
assert_match "  ... and /etc/hosts" '^read: ok /etc/hosts [0-9]+ bytes: # the container' "$OUT"
check "  ... the image is untouched" test ! -e "$TESTTMP/bare/etc"

# ---- resolution: getent (glibc's files source) and Python
run_nsrun --image python -- sh -c 'getent ahosts localhost | cut -d" " -f1 | sort -u | tr "\n" " "; echo;
	getent hosts ::1; getent hosts 127.0.0.1; getent hosts nsrun; hostname; cat /etc/hostname'
assert_eq "default run: exit 0" 0 "$RC"
assert_eq "  ... localhost is 127.0.0.1 and ::1 (getent ahosts)" "127.0.0.1 ::1 " "$(sed -n 1p <<<"$OUT")"
assert_match "  ... ::1 is localhost" '^::1 +localhost( |$)' "$(sed -n 2p <<<"$OUT")"
assert_match "  ... 127.0.0.1 is localhost" '^127\.0\.0\.1 +localhost$' "$(sed -n 3p <<<"$OUT")"
assert_match "  ... the hostname resolves, on loopback" '^127\.0\.1\.1 +nsrun$' "$(sed -n 4p <<<"$OUT")"
assert_eq "  ... hostname(1) and /etc/hostname agree" "nsrun nsrun" "$(sed -n 5,6p <<<"$OUT" | tr '\n' ' ' | sed 's/ $//')"

PYRESOLVE='import socket
fam = lambda n: sorted({a[0].name for a in socket.getaddrinfo(n, 80, type=socket.SOCK_STREAM)})
print("localhost", *fam("localhost"))
print("::1", *fam("::1"))
h = socket.gethostname()
print(h, socket.gethostbyname(h), socket.gethostbyaddr("127.0.0.1")[0], socket.getfqdn())'
run_nsrun --image python -- python3 -c "$PYRESOLVE"
assert_eq "Python: getaddrinfo(localhost) gives IPv4 and IPv6" "localhost AF_INET AF_INET6" "$(sed -n 1p <<<"$OUT")"
assert_eq "  ... getaddrinfo(::1)" "::1 AF_INET6" "$(sed -n 2p <<<"$OUT")"
assert_eq "  ... gethostbyname(gethostname()), the reverse of 127.0.0.1, getfqdn()" \
	"nsrun 127.0.1.1 localhost nsrun" "$(sed -n 3p <<<"$OUT")"

# a client reaches servers by name: localhost on 127.0.0.1 and on ::1, the hostname
# on all addresses (what test suites do: the usual default is localhost)
PYCONNECT='import socket, threading
def server(family, addr):
    s = socket.socket(family); s.bind((addr, 0)); s.listen()
    threading.Thread(target=lambda: s.accept()[0].sendall(b"hi"), daemon=True).start()
    return s.getsockname()[1]
for family, addr, name in ((socket.AF_INET, "127.0.0.1", "localhost"), (socket.AF_INET6, "::1", "localhost"),
                           (socket.AF_INET, "0.0.0.0", socket.gethostname())):
    c = socket.create_connection((name, server(family, addr)), timeout=5)
    print(addr, name, c.recv(2).decode())'
run_nsrun --image python -- python3 -c "$PYCONNECT"
assert_eq "Python: connections by name reach servers on 127.0.0.1, ::1 (localhost) and the hostname" \
	"127.0.0.1 localhost hi|::1 localhost hi|0.0.0.0 nsrun hi" "$(tr '\n' '|' <<<"$OUT" | sed 's/|$//')"

# ---- --hostname and --add-host
run_nsrun --image python --hostname box.example.org --add-host db:10.0.0.5 --add-host 'v6:[2001:db8::1]' \
	--add-host cache=192.0.2.9 --add-host localhost:10.9.9.9 -- sh -c 'getent hosts box.example.org box db v6 cache;
	python3 -c "import socket; print(socket.gethostbyname(\"localhost\"))"; cat /etc/hostname'
assert_eq "--hostname FQDN, --add-host: exit 0" 0 "$RC"
assert_eq "  ... the FQDN and its first label resolve" "127.0.1.1 box.example.org box|127.0.1.1 box.example.org box" \
	"$(sed -n 1,2p <<<"$OUT" | tr -s ' ' | tr '\n' '|' | sed 's/|$//')"
assert_eq "  ... --add-host NAME:IP, NAME:[IPv6], NAME=IP" "10.0.0.5 db|2001:db8::1 v6|192.0.2.9 cache" \
	"$(sed -n 3,5p <<<"$OUT" | tr -s ' ' | tr '\n' '|' | sed 's/|$//')"
assert_eq "  ... an --add-host of localhost does not take it over (docker's order)" "127.0.0.1" "$(sed -n 6p <<<"$OUT")"
assert_eq "  ... /etc/hostname is the --hostname" "box.example.org" "$(sed -n 7p <<<"$OUT")"
run_nsrun --image python --add-host db:10.0.0.5 -- python3 -c 'import socket; print(socket.gethostbyname("db"))'
assert_eq "  ... Python resolves an --add-host name" "10.0.0.5" "$OUT"

# ---- every way of running: FILE mode, --rootfs, -t, -d
printf 'import socket\nprint(socket.gethostbyname("localhost"), open("/etc/hostname").read().strip())\n' >"$TESTTMP/names.py"
chmod 644 "$TESTTMP/names.py"
run_nsrun --image python --hostname filebox "$TESTTMP/names.py"
assert_eq "FILE mode: localhost resolves, /etc/hostname is ours" "127.0.0.1 filebox" "$OUT"
run_nsrun --rootfs "$ROOTFS" --hostname rootbox -- sh -c 'getent hosts rootbox; head -c 1 /etc/hosts'
assert_eq "--rootfs: the same files" "127.0.1.1 rootbox|#" "$(tr -s ' ' <<<"$OUT" | tr '\n' '|' | sed 's/|$//')"
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
run_cmd "$PY" "$TESTS_DIR/ttyrun.py" 24 80 "mode" -- "$NSRUN" -t --image python --hostname ttybox -- sh -c 'getent hosts ttybox localhost'
assert_match "-t: the hostname resolves" '127\.0\.1\.1 +ttybox' "$OUT"
assert_match "  ... and localhost" '(::1|127\.0\.0\.1) +localhost' "$OUT"

export XDG_RUNTIME_DIR="$TESTTMP/run"
mkdir -m 700 "$XDG_RUNTIME_DIR"
SVC="etc-hosts-$$"
run_nsrun -d --name "$SVC" --hostname svcbox --add-host db:10.0.0.8 --image python -- \
	sh -c 'getent hosts svcbox db; cat /etc/hostname; echo logged; exec sleep 60'
assert_eq "-d with --add-host: the service starts" 0 "$RC"
for _ in $(seq 50); do "$NSRUN" logs "$SVC" 2>/dev/null | grep -q logged && break; sleep 0.1; done
run_nsrun logs "$SVC"
assert_eq "  ... it resolves its hostname and the --add-host name; /etc/hostname is ours" \
	"127.0.1.1 svcbox|10.0.0.8 db|svcbox|logged" "$(tr -s ' ' <<<"$OUT" | tr '\n' '|' | sed 's/|$//')"
run_nsrun stop -t 1 "$SVC"
assert_eq "  ... stopped" 0 "$RC"

# ---- a volume at /etc/hosts is the caller's own (as docker leaves it)
printf '127.0.0.1 mine\n' >"$TESTTMP/hosts"; chmod 644 "$TESTTMP/hosts"
run_nsrun --image python -v "$TESTTMP/hosts:/etc/hosts" -- sh -c 'cat /etc/hosts; getent hosts nsrun || echo no-nsrun; cat /etc/hostname'
assert_eq "-v HOST:/etc/hosts: that file, nothing of nsrun's in it; /etc/hostname still ours" \
	"127.0.0.1 mine|no-nsrun|nsrun" "$(tr '\n' '|' <<<"$OUT" | sed 's/|$//')"

# ---- --debug shows the two mounts in the plan; --isolation chroot says what it lacks
run_nsrun --debug --image python -- true
assert_match "--debug: the plan has nsrun's /etc/hosts and /etc/hostname, read-only" \
	'etc-file /etc/hosts - ro mkfile.*etc-file /etc/hostname - ro mkfile' "$(tr '\n' ' ' <<<"$ERR")"
run_cmd sh -c "echo 'print(open(\"/etc/hostname\").read().strip())' | '$NSRUN' --isolation chroot --image python -"
if [ "$RC" = 0 ]; then
	assert_match "--isolation chroot (the reduced tier): its warning says the image's own /etc/hosts is used" \
		'nsrun: warning: isolation reduced: .*no /etc/hosts or /etc/hostname of nsrun' "$ERR"
	assert_eq "  ... the image's /etc/hostname is what the payload sees" "$(cat "$ROOTFS/etc/hostname")" "$OUT"
else
	# the mode needs Landlock; the reason is nsrun's one line
	skip "--isolation chroot not available here: $(head -n 1 <<<"$ERR")"
fi

done_testing
