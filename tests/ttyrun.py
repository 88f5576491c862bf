#!/usr/bin/env python3
"""ttyrun.py ROWS COLS ACTIONS -- ARGV...: run ARGV with a new pty of ROWS x COLS as its
controlling terminal, stdin, stdout and stderr (the test's stand-in for a user at a
terminal). ACTIONS, comma separated: wait:TEXT (until the output holds TEXT, 20 s at
most), send:HEX (type bytes), resize:R:C (the terminal's new size: SIGWINCH), sleep:S,
mode (note whether the terminal is raw now). Prints the output (CRLF as LF), then
"rc=N restored=yes|no during=MODES": restored = the terminal modes after equal those
before."""
import fcntl, os, select, struct, subprocess, sys, termios, time
rows, cols, actions = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
argv = sys.argv[sys.argv.index("--") + 1:]
master, slave = os.openpty()
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
before = termios.tcgetattr(slave)
def ctty():
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
p = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, start_new_session=True, preexec_fn=ctty)
out = b""
modes = []
def pump(t):
    global out
    end = time.monotonic() + t
    while time.monotonic() < end:
        r, _, _ = select.select([master], [], [], 0.05)
        if r:
            try:
                d = os.read(master, 65536)
            except OSError:
                return
            out += d
        elif p.poll() is not None:
            return
for a in filter(None, actions.split(",")):
    kind, _, arg = a.partition(":")
    if kind == "wait":
        end = time.monotonic() + 20
        while arg.encode() not in out and time.monotonic() < end and p.poll() is None:
            pump(0.05)
    elif kind == "send":
        os.write(master, bytes.fromhex(arg))
    elif kind == "resize":
        r, c = arg.split(":")
        fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", int(r), int(c), 0, 0))
    elif kind == "sleep":
        pump(float(arg))
    elif kind == "mode":
        modes.append("raw" if not (termios.tcgetattr(slave)[3] & termios.ICANON) else "cooked")
end = time.monotonic() + 30
while p.poll() is None and time.monotonic() < end:
    pump(0.1)
if p.poll() is None:
    p.kill()
rc = p.wait()
pump(0.2)
after = termios.tcgetattr(slave)
sys.stdout.write(out.decode(errors="replace").replace("\r\n", "\n"))
print(f"\nrc={rc} restored={'yes' if after == before else 'no'} during={'+'.join(modes) or '-'}")
