#!/bin/bash
# Issue 17, kind 4: the caller's stdio is never handed to the payload as it is.
# Each type of fd the caller may give nsrun, with the escape a payload would try
# through it, and the control: the same attempt by a program given that fd on the
# host works.  Landlock is off in every probe (as with --allow-nested): what stops
# them is that the payload's fds 0-2 are nsrun's own pipes (runtime/relay.h).
. "$(dirname "$0")/../lib.sh"
require_all
PY=$(command -v python3) || skip_all "python3 is needed on the host"
NL=(--image python --security-opt landlock=unconfined)

# ---- a directory on stdin: /proc/self/fd/0/... would be the host's tree
mkdir -m 755 "$TESTTMP/dir" && echo host-dir-marker >"$TESTTMP/dir/marker" && chmod 644 "$TESTTMP/dir/marker"
run_cmd sh -c 'cat /proc/self/fd/0/marker' <"$TESTTMP/dir"
assert_eq "control: on the host, a directory on stdin opens its tree" host-dir-marker "$OUT"
run_nsrun "${NL[@]}" -- sh -c 'cat /proc/self/fd/0/marker; ls /proc/self/fd/0/' <"$TESTTMP/dir"
assert_not_match "a directory on stdin: the payload cannot walk it" host-dir-marker "$OUT"
assert_eq "  ... its stdin is /dev/null" /dev/null "$("$NSRUN" "${NL[@]}" -- readlink /proc/self/fd/0 <"$TESTTMP/dir")"

# ---- a regular file on stdin: reopened through /proc it could be written
printf 'input-line\n' >"$TESTTMP/input"; chmod 666 "$TESTTMP/input"
cp "$TESTTMP/input" "$TESTTMP/input.control"
run_cmd sh -c 'echo pwned >/proc/self/fd/0' <"$TESTTMP/input.control"
assert_eq "control: on the host, a file on stdin can be rewritten through /proc/self/fd/0" pwned "$(cat "$TESTTMP/input.control")"
run_nsrun "${NL[@]}" -- sh -c 'cat; echo pwned >/proc/self/fd/0' <"$TESTTMP/input"
assert_eq "a file on stdin: the payload reads it" input-line "$OUT"
assert_eq "  ... and cannot write it" input-line "$(cat "$TESTTMP/input")"

# ---- an append-mode log on stdout: truncated and rewritten, earlier lines included
TRUNC='import os
try:
    os.ftruncate(1, 0)
except OSError as e:
    print("ftruncate:", e.strerror, flush=True)
try:
    with open("/proc/self/fd/1", "w") as f:
        f.write("rewritten\n")
except OSError as e:
    print("reopen:", e.strerror, flush=True)
print("new-line", flush=True)'
echo earlier-line >"$TESTTMP/log.control"
"$PY" -c "$TRUNC" >>"$TESTTMP/log.control"
assert_not_match "control: on the host, an append-mode stdout loses its earlier lines" earlier-line "$(cat "$TESTTMP/log.control")"
echo earlier-line >"$TESTTMP/log"; chmod 666 "$TESTTMP/log"
"$NSRUN" "${NL[@]}" -- python3 -c "$TRUNC" >>"$TESTTMP/log" 2>"$TESTTMP/log.err"
assert_eq "an append-mode log: the earlier line stays first" earlier-line "$(head -n 1 "$TESTTMP/log")"
assert_match "  ... the payload's lines come after it (a reopened fd 1 is its own pipe)" 'new-line' "$(tail -n +2 "$TESTTMP/log")"

# ---- a stdout pipe shared by parallel runs: reopened for reading it gives the others' output
STEAL='import os, sys, time
try:
    fd = os.open("/proc/self/fd/1", os.O_RDONLY | os.O_NONBLOCK)
    time.sleep(1.5)
    sys.stderr.write("stolen:" + os.read(fd, 4096).decode(errors="replace") + "\n")
except OSError as e:
    sys.stderr.write("read: " + e.strerror + "\n")'
steal_run() { # steal_run CMD... — CMD's stdout is a pipe that another writer shares
	{ "$@" 2>"$TESTTMP/stolen" & sleep 0.7; echo other-runs-secret; wait; } | { sleep 3; cat >/dev/null; }
}
steal_run "$PY" -c "$STEAL"
assert_match "control: on the host, a shared stdout pipe gives back the other writer's output" 'stolen:other-runs-secret' "$(cat "$TESTTMP/stolen")"
steal_run "$NSRUN" "${NL[@]}" -- python3 -c "$STEAL"
assert_not_match "a shared stdout pipe: the payload reads nothing of the others" other-runs-secret "$(cat "$TESTTMP/stolen")"
assert_match "  ... (it ran)" 'stolen:|read: ' "$(cat "$TESTTMP/stolen")"

# ---- a socket on stdout: the peer's messages, and the peer's fds, would be the payload's
SOCK='import socket, subprocess, sys
a, b = socket.socketpair()
a.sendall(b"peer-secret")
p = subprocess.run(sys.argv[1:], stdout=b, stderr=subprocess.PIPE)
b.close()
print(p.stderr.decode(errors="replace"))'
RECV='import socket, sys
try:
    s = socket.socket(fileno=1)
    s.settimeout(2)
    sys.stderr.write("got:" + s.recv(100).decode() + "\n")
except OSError as e:
    sys.stderr.write("recv: " + str(e) + "\n")'
run_cmd "$PY" -c "$SOCK" "$PY" -c "$RECV"
assert_match "control: on the host, a socket on stdout gives the peer's messages" 'got:peer-secret' "$OUT"
run_cmd "$PY" -c "$SOCK" "$NSRUN" "${NL[@]}" -- python3 -c "$RECV"
assert_not_match "a socket on stdout: the payload cannot read from it" 'got:peer-secret' "$OUT"
assert_match "  ... (it ran: its stdout is not a socket)" 'recv: ' "$OUT"
run_cmd "$PY" -c 'import socket, subprocess, sys
a, b = socket.socketpair()
subprocess.run(sys.argv[1:], stdout=b)
b.close()
print(a.recv(100).decode().strip())' "$NSRUN" "${NL[@]}" -- echo through-the-socket
assert_eq "  ... and its output still reaches the socket" through-the-socket "$OUT"

# ---- the terminal: a background run must not read what the user types
# The keys are typed once the program says it is about to read (or has ended), and
# the shell then waits for it: the control ends when it has read them, the run at its
# --timeout
BG='set -m
"$0" "$@" >"$T/bg" 2>&1 &
while ! grep -q "^reading" "$T/bg" && kill -0 $! 2>/dev/null; do sleep 0.1; done
echo ready; wait'
typed=$(printf 'typed-secret\n' | od -An -tx1 | tr -d ' \n')
T=$TESTTMP run_cmd env T="$TESTTMP" "$PY" "$TESTS_DIR/ttyrun.py" 24 80 "wait:ready,send:$typed" -- \
	bash -c "$BG" setsid sh -c 'echo reading >&2; read -r x; echo "bg-got=$x"'
assert_match "control: on the host, a background program without a controlling terminal reads the user's keys" 'bg-got=typed-secret' "$(cat "$TESTTMP/bg")"
run_cmd env T="$TESTTMP" "$PY" "$TESTS_DIR/ttyrun.py" 24 80 "wait:ready,send:$typed" -- \
	bash -c "$BG" "$NSRUN" "${NL[@]}" --timeout 4 -- sh -c 'echo reading >&2; read -r x; echo "bg-got=$x"'
assert_not_match "a background run does not read the user's keys" 'typed-secret' "$(cat "$TESTTMP/bg")"
run_cmd "$PY" "$TESTS_DIR/ttyrun.py" 24 80 "wait:ready,send:$typed" -- \
	"$NSRUN" "${NL[@]}" --timeout 10 -- sh -c 'echo ready; read -r x; echo "fg-got=$x"'
assert_match "control: in the foreground the payload reads the terminal through nsrun" 'fg-got=typed-secret' "$OUT"

# ---- the cheap path: the harmless devices are passed as they are
assert_eq "/dev/null on stdin and stdout is passed as it is (no copy)" "/dev/null" \
	"$("$NSRUN" --image python -- sh -c 'readlink /proc/self/fd/0 >&2' </dev/null 2>&1 >/dev/null)"

done_testing
