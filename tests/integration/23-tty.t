#!/bin/bash
# -t/--tty: the payload gets a new pty of the container's own devpts (no host pty is
# visible), with nsrun's window size, resizes passed on (SIGWINCH), ^C reaching it as
# SIGINT through the pty, and the caller's terminal in raw mode during the run and
# restored after it, however the payload ended.  tests/ttyrun.py is the user at a
# terminal (a pty of the test's own).
. "$(dirname "$0")/../lib.sh"
require_all

PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
tty_run() { run_cmd "$PY" "$TESTS_DIR/ttyrun.py" "$@"; }

tty_run 33 101 "mode" -- "$NSRUN" -t --image python -- sh -c 'stty size; tty; ls /dev/pts | tr "\n" " "; echo; test -t 0 && test -t 1 && test -t 2 && echo all-tty'
assert_eq "-t: the payload's terminal has nsrun's size" "33 101" "$(sed -n 1p <<<"$OUT")"
assert_eq "  ... it is the first pty of a devpts of its own" "/dev/pts/0" "$(sed -n 2p <<<"$OUT")"
assert_eq "  ... which holds no other pty" "0 ptmx " "$(sed -n 3p <<<"$OUT")"
assert_eq "  ... on stdin, stdout and stderr" "all-tty" "$(sed -n 4p <<<"$OUT")"
assert_match "  ... exit 0, our terminal restored" 'rc=0 restored=yes' "$OUT"

WINCH='import os, signal, time
signal.signal(signal.SIGWINCH, lambda s, f: print("winch", *os.get_terminal_size(), flush=True))
print("ready", flush=True)
time.sleep(30)'
tty_run 24 80 "wait:ready,mode,resize:40:120,wait:winch,send:03" -- "$NSRUN" -it --image python -- python3 -c "$WINCH"
assert_match "a resize reaches the payload as SIGWINCH with the new size" $'\nwinch 120 40\n' "$OUT"
assert_match "^C on our terminal is SIGINT to the payload (KeyboardInterrupt, 130)" 'KeyboardInterrupt' "$OUT"
assert_match "  ... exit 130; raw mode during the run, restored after" 'rc=130 restored=yes during=raw' "$OUT"

tty_run 24 80 "wait:go,mode" -- "$NSRUN" -t --image python --timeout 1 -- sh -c 'echo go; sleep 10'
assert_match "payload killed at the timeout: 124, terminal restored" 'rc=124 restored=yes during=raw' "$OUT"
tty_run 24 80 "wait:go,mode" -- "$NSRUN" -t --image python -- sh -c 'echo go; sleep 1; kill -9 $$'
assert_match "payload SIGKILLed: 137, terminal restored" 'rc=137 restored=yes during=raw' "$OUT"
tty_run 24 80 "wait:go,send:03" -- "$NSRUN" -t --image python -- sh -c 'trap "" INT; echo go; sleep 1; echo still; exit 4'
assert_match "a payload that ignores SIGINT goes on after ^C: its own status" $'still\n\nrc=4 restored=yes' "$OUT"

# not a terminal on our side: the pty still works, and the end of stdin is its ^D
run_cmd sh -c "printf 'abc\n' | '$NSRUN' -t --image python -- sh -c 'read x; echo got=\$x; cat; echo eof'"
assert_match "-t with a pipe for stdin: input reaches the payload, then EOF" 'got=abc.*eof' "$(tr -d '\r' <<<"$OUT" | tr '\n' ' ')"
assert_eq "  ... exit 0" 0 "$RC"

run_nsrun -t --json - --image python -- true
assert_eq "-t with --json: 125" 125 "$RC"
assert_match "  ... says why" '^nsrun: --tty and --json: a terminal is neither captured' "$ERR"
run_nsrun -t --capture --image python -- true
assert_match "-t with --capture: says why" '^nsrun: --tty and --capture' "$ERR"

# the payload's terminal is the container's: TIOCSTI on it cannot reach ours (B01)
tty_run 24 80 "" -- "$NSRUN" -t --image python -v "$PROBE_DIR:/mnt:ro" -- /mnt/nsrun-probe tiocsti stdin
assert_match "TIOCSTI on the container's pty is denied" '^tiocsti: denied' "$OUT"

done_testing
