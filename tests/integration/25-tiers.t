#!/bin/bash
# The isolation tiers below full (--isolation reduced|minimal; docs/isolation.md,
# "Isolation tiers"), forced here where full works, as the caller the suite runs as (root or
# not): each property the tier promises is probed with a control, what it lacks
# is said in one warning line and in --json, --strict refuses it, and what needs
# a mount is refused before anything starts.  Where nsrun takes them by itself is
# 26-agent-sandboxes-tiers.t.
. "$(dirname "$0")/../lib.sh"
require_all

abi=$(python3 -c 'import ctypes; print(ctypes.CDLL(None).syscall(444, None, 0, 1))' 2>/dev/null)
[ "${abi:-0}" -ge 6 ] 2>/dev/null || skip_all "Landlock ABI 6 (Linux 6.12) needed by the minimal tier, here: ${abi:-none}"
ROOT=0; [ "$(id -u)" = 0 ] && ROOT=1

# a rootfs of our own with the probe in it (these tiers have no volumes), owned by the caller
CR="$TESTTMP/rootfs"
mkdir -p "$CR/bin" "$CR/tmp"
cp "$PROBE" "$CR/bin/probe"
chmod -R a+rX "$TESTTMP"
tier_probe() { local t=$1; shift; run_nsrun --isolation "$t" --rootfs "$CR" -- /bin/probe "$@"; }
# minimal chroots only as root: unprivileged, the payload sees the caller's files
MPROBE=/bin/probe; [ $ROOT = 1 ] || MPROBE=$PROBE
minimal_probe() { run_nsrun --isolation minimal --rootfs "$CR" -- "$MPROBE" "$@"; }
# these tiers have no /proc: the payload's privileges through capget(2) and prctl(2)
PRIVS='import ctypes
libc = ctypes.CDLL(None)
hdr = (ctypes.c_uint32 * 2)(0x20080522, 0); data = (ctypes.c_uint32 * 6)()
libc.capget(hdr, data)
print("capeff", data[0] | data[3], "nnp", libc.prctl(39, 0, 0, 0, 0), "seccomp", libc.prctl(21, 0, 0, 0, 0))'

# a TCP server on the host's loopback (the network probes' target)
PORT=$(free_port)
timeout 60 python3 -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16); s.settimeout(0.2)
print("listening", flush=True)
end = time.time() + 55
while time.time() < end:
    try: c, _ = s.accept(); c.close()
    except OSError: pass
' "$PORT" >"$TESTTMP/server.log" 2>&1 &
at_exit "kill $!"
for _ in $(seq 50); do grep -q listening "$TESTTMP/server.log" && break; sleep 0.1; done
run_host_probe connect 127.0.0.1 "$PORT"
assert_eq "control: the host reaches its own 127.0.0.1:$PORT" "connect: ok 127.0.0.1 $PORT" "$OUT"

# ---------------------------------------------------------------- full (the control)
run_nsrun --json - --image python -- true
assert_match "full: --json says isolation full" '"isolation":"full"' "$OUT"
assert_eq "  ... and no warning" "" "$ERR"

# ---------------------------------------------------------------- reduced
tier_probe reduced ids
assert_eq "reduced: the payload is 65534" "ids: ok uid=65534 gid=65534 euid=65534 egid=65534 groups=65534" \
	"$(sed 's/groups=[0-9,]*/groups=65534/' <<<"$OUT")"
assert_match "  ... one warning line names the tier and what it lacks" \
	'^nsrun: warning: isolation reduced: no mount namespace of its own: no fresh /proc, no /dev, no tmpfs /tmp, no volumes.*\(--strict refuses it\)$' "$ERR"
assert_eq "  ... only that line on stderr" 1 "$(wc -l <<<"$ERR")"
tier_probe reduced hostname
assert_eq "reduced: a uts namespace of its own" "hostname: ok nsrun" "$OUT"
tier_probe reduced connect 127.0.0.1 "$PORT"
assert_match "reduced: a net namespace of its own: the host's loopback is out of reach" '^connect: denied ECONNREFUSED' "$OUT"
tier_probe reduced loopback 127.0.0.1
assert_eq "  ... and its own lo is up" "loopback: ok 127.0.0.1" "$OUT"
run_nsrun --isolation reduced --image python -- python3 -c 'import os; print(os.getpid())'
assert_eq "reduced: a pid namespace of its own (the payload is pid 2)" "2" "$OUT"
tier_probe reduced write /tmp/x
assert_match "reduced: the image is read-only (Landlock)" '^write: denied EACCES' "$OUT"
run_host_probe write "$CR/tmp/x"
assert_match "  control: the caller can write that directory" '^write: ok' "$OUT"
tier_probe reduced read /etc/hostname
assert_match "reduced: the host's files are out of reach (chroot)" '^read: denied ENOENT' "$OUT"
run_host_probe read /etc/hostname
assert_match "  control: the host has /etc/hostname" '^read: ok' "$OUT"
run_nsrun --isolation reduced --image python -- python3 -c "$PRIVS"
assert_eq "reduced: no capability, no_new_privs, a seccomp filter" "capeff 0 nnp 1 seccomp 2" "$OUT"
run_cmd python3 -c "$PRIVS"
assert_match "  control: the test itself has no seccomp filter" 'seccomp 0$' "$OUT"
tier_probe reduced unshare user
assert_match "reduced: no namespaces for the payload" '^unshare: denied EPERM' "$OUT"
tier_probe reduced chroot-escape /tmp
assert_match "reduced: no chroot escape" '^chroot-escape: denied' "$OUT"
run_nsrun --isolation reduced --json - --image python -- true
assert_match "reduced: --json says so" '"isolation":"reduced"' "$OUT"
run_nsrun --isolation chroot --json - --image python -- true
assert_match "  ... and chroot is its old name" '"isolation":"reduced"' "$OUT"

# ---------------------------------------------------------------- minimal
run_nsrun --isolation minimal --image python -- python3 -c "$PRIVS"
assert_eq "minimal: no capability, no_new_privs, seccomp filters" "capeff 0 nnp 1 seccomp 2" "$OUT"
assert_match "  ... one warning line names the tier and what it lacks" \
	'^nsrun: warning: isolation minimal: no namespace at all: host pid, network \(sockets refused by seccomp, but socketpair\).*\(--strict refuses it\)$' "$ERR"
minimal_probe connect 127.0.0.1 "$PORT"
assert_match "minimal: no network socket (the host's loopback included)" '^connect: denied EAFNOSUPPORT' "$OUT"
minimal_probe ids
if [ $ROOT = 1 ]; then
	assert_match "minimal as root: uid and gid 65534" '^ids: ok uid=65534 gid=65534 euid=65534 egid=65534' "$OUT"
	tier_probe minimal read /etc/hostname
	assert_match "minimal as root: chrooted into the image" '^read: denied ENOENT' "$OUT"
	tier_probe minimal write /tmp/x
	assert_match "minimal as root: the image is read-only" '^write: denied (EACCES|EROFS)' "$OUT"
	tier_probe minimal setuid0
	assert_match "minimal as root: no way back to uid 0" '^setuid0: denied' "$OUT"
else
	assert_match "minimal unprivileged: the payload is the caller" "^ids: ok uid=$(id -u) gid=$(id -g)" "$OUT"
	# no chroot without a user namespace: the outer file system, read-only by Landlock
	run_nsrun --isolation minimal --rootfs "$CR" -- "$PROBE" write "$TESTTMP/minimal-x"
	assert_match "minimal unprivileged: a directory of the caller's is read-only (Landlock)" '^write: denied EACCES' "$OUT"
	run_host_probe write "$TESTTMP/minimal-x"
	assert_match "  control: the caller writes it" '^write: ok' "$OUT"
	sleep 30 >/dev/null 2>&1 &
	victim=$!
	at_exit "kill $victim 2>/dev/null"
	run_nsrun --isolation minimal --rootfs "$CR" -- /bin/kill -0 "$victim"
	assert_eq "minimal unprivileged: no signal to the caller's processes (Landlock scope)" 1 "$RC"
	run_cmd kill -0 "$victim"
	assert_eq "  control: the caller signals it" 0 "$RC"
fi
minimal_probe loopback 127.0.0.1
assert_match "minimal: AF_INET refused even on loopback" '^loopback: denied EAFNOSUPPORT' "$OUT"
run_nsrun --isolation minimal --image python -- python3 -c '
import socket; a, b = socket.socketpair(); a.send(b"x"); print("unix", b.recv(1).decode())'
assert_eq "  control: AF_UNIX socketpairs work" "unix x" "$OUT"
# no network namespace: a socket of the caller's (an nsrun api, the session bus)
# or an abstract one of the host's would be in reach, and Landlock does not stop
# a connect(2) to a socket file (breaker, session 18).  A name that starts with
# @ is an abstract one: its @ stands for the NUL byte.
UNIX_LISTEN='import socket, sys, time
keep = []
for name in sys.argv[1:]:
    s = socket.socket(socket.AF_UNIX); s.bind(name.replace("@", "\0", 1)); s.listen(8); keep.append(s)
print("listening", flush=True); time.sleep(60)'
UNIX_CONNECT='import errno, socket, sys
for name in sys.argv[1:]:
    try:
        s = socket.socket(socket.AF_UNIX); s.connect(name.replace("@", "\0", 1)); print(name[0], "connected")
    except OSError as e:
        print(name[0], "denied", errno.errorcode[e.errno])'
usock="$TESTTMP/tier-unix.sock"
asock="@nsrun-tier-$$-$RANDOM"
coproc LISTENER { exec python3 -c "$UNIX_LISTEN" "$usock" "$asock"; }
at_exit "kill $LISTENER_PID 2>/dev/null"
read -r -t 10 ready <&"${LISTENER[0]}" || true
assert_eq "  (a unix socket listens at a path and in the abstract namespace)" "listening" "$ready"
if [ $ROOT = 1 ]; then
	# chrooted as 65534: the path is out of reach anyway, the abstract name is not
	run_nsrun --isolation minimal --image python -- python3 -c "$UNIX_CONNECT" "$asock"
	assert_eq "minimal: no AF_UNIX socket, so no abstract socket of the host's" "@ denied EPERM" "$OUT"
else
	run_nsrun --isolation minimal --rootfs "$CR" -- python3 -c "$UNIX_CONNECT" "$usock" "$asock"
	assert_eq "minimal: no AF_UNIX socket, so no socket file of the caller's nor abstract one" \
		"/ denied EPERM
@ denied EPERM" "$OUT"
fi
run_cmd python3 -c "$UNIX_CONNECT" "$usock" "$asock"
assert_eq "  control: the caller connects to both" "/ connected
@ connected" "$OUT"
# no pid namespace: what the payload leaves behind (setsid, its own session) still dies
marker="nsrun-tier-$$-$RANDOM"
minimal_probe setsid-sleep 30 "$marker"
assert_match "minimal: a payload that leaves a daemon in another session exits" '^setsid-sleep: ok' "$OUT"
sleep 0.3
assert_eq "  ... and the daemon died with the run" "" "$(pgrep -f "$marker" || true)"
DAEMON='import os, sys, time
if os.fork() == 0:
    os.setsid(); time.sleep(30); os._exit(0)
time.sleep(30)'
run_nsrun --isolation minimal --timeout 1 --image python -- python3 -c "$DAEMON" "$marker-t"
assert_eq "minimal: the timeout ends the run (124)" 124 "$RC"
sleep 0.3
assert_eq "  ... and kills the payload's daemon too" "" "$(pgrep -f "$marker-t" || true)"
run_nsrun --isolation minimal --json - --image python -- true
assert_match "minimal: --json says so" '"isolation":"minimal"' "$OUT"

# ---------------------------------------------------------------- refused before anything starts
for t in reduced minimal; do
	run_nsrun --isolation "$t" --strict --memory 0 --pids-limit 0 --image python -- true
	assert_eq "$t: --strict refuses it (125)" 125 "$RC"
	assert_match "  ... saying so" "^nsrun: isolation $t is weaker than full: --strict refuses it" "$ERR"
	assert_nsrun_error "  ... one error line and a hint"
	run_nsrun --isolation "$t" --image python -v "$TESTTMP:/data:ro" -- true
	assert_match "$t: volumes are refused" "^nsrun: isolation $t: volumes \\(-v\\) and --tmpfs need mount" "$ERR"
	echo 'print(1)' >"$TESTTMP/f.py"
	run_nsrun --isolation "$t" --image python "$TESTTMP/f.py"
	assert_match "$t: FILE mode is refused, stdin named as the way" "^nsrun: isolation $t: FILE mode needs a mount" "$ERR"
	run_nsrun --isolation "$t" -u 1000 --image python -- true
	assert_match "$t: -u is refused" "^nsrun: isolation $t: -u needs an id map" "$ERR"
	run_nsrun --isolation "$t" --image python - <<<'print(6 * 7)'
	assert_eq "$t: a program on stdin runs" "42" "$OUT"
done
run_nsrun --isolation bogus --image python -- true
assert_match "--isolation: an unknown tier is named" '^nsrun: --isolation: "bogus": unknown \(full, reduced or minimal\)' "$ERR"
run_nsrun --strict --memory 0 --pids-limit 0 --json - --image python -- true
assert_match "--strict without --isolation: full" '"isolation":"full"' "$OUT"

done_testing

