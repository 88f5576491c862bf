#!/bin/bash
# B01 / CVE-2017-5226: the payload must not push input into the caller's terminal (TIOCSTI).
. "$(dirname "$0")/../lib.sh"
require_all

# dev.tty.legacy_tiocsti=0 (CONFIG_LEGACY_TIOCSTI=n): the kernel itself refuses TIOCSTI
# with EIO to a caller without CAP_SYS_ADMIN (drivers/tty/tty_io.c tiocsti()).  Then no
# control can show the injection working for this user; it shows the kernel's EIO
# instead, and the payload must get the filter's own answer, EPERM, not the kernel's.
legacy=$(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null || echo 1)
KERNEL_REFUSES=0
[ "$legacy" = 0 ] && [ "$(id -u)" != 0 ] && KERNEL_REFUSES=1

# pty-run CMD... — run CMD with a fresh pty as its controlling terminal and stdin; print its output
cat >"$TESTTMP/pty-run" <<'PY'
import os, pty, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
buf = b""
end = time.time() + 30
while time.time() < end:
    r, _, _ = select.select([fd], [], [], 0.2)
    if r:
        try:
            d = os.read(fd, 4096)
        except OSError:
            break
        if not d:
            break
        buf += d
    elif os.waitpid(pid, os.WNOHANG)[0]:
        pid = 0
        break
if pid:
    os.waitpid(pid, 0)
sys.stdout.write(buf.decode(errors="replace").replace("\r", ""))
PY
run_in_pty() { run_cmd python3 "$TESTTMP/pty-run" "$@"; }

run_in_pty "$PROBE" tiocsti stdin
if [ "$KERNEL_REFUSES" = 1 ]; then
	assert_match "control: dev.tty.legacy_tiocsti=0, the host kernel refuses TIOCSTI itself (EIO)" 'tiocsti: denied EIO stdin' "$OUT"
	DENIED='tiocsti: denied EPERM '
else
	assert_match "control: on the host, TIOCSTI into the controlling terminal works" 'tiocsti: ok stdin' "$OUT"
	DENIED='tiocsti: denied [A-Z]+ '
fi

run_in_pty "$NSRUN" --image python -v "$PROBE_DIR:/mnt:ro" -- /mnt/nsrun-probe tiocsti stdin
assert_match "payload on the caller's terminal: TIOCSTI refused${DENIED/*EPERM*/ by the filter (EPERM)}" "$DENIED" "$OUT"
assert_not_match "  ... never succeeds" 'tiocsti: ok' "$OUT"

# python version of the bug's reproduction
run_in_pty "$NSRUN" --image python -- python3 -c '
import fcntl, termios
try:
    fcntl.ioctl(0, termios.TIOCSTI, b" "); print("ioctl-succeeded")
except OSError as e:
    print("ioctl-refused", e.errno)'
assert_match "python payload: ioctl refused" 'ioctl-refused [0-9]+' "$OUT"

# control for the probe's pty mode: on the host it can inject into a pty it controls
run_host_probe tiocsti pty
if [ "$KERNEL_REFUSES" = 1 ]; then
	assert_eq "control: dev.tty.legacy_tiocsti=0, TIOCSTI on a new pty is the kernel's EIO" "tiocsti: denied EIO pty" "$OUT"
else
	assert_eq "control: TIOCSTI on a new controlling pty works on the host" "tiocsti: ok pty" "$OUT"
fi
run_probe -- tiocsti pty
diag "inside, TIOCSTI on the payload's own new pty: $OUT"

done_testing
