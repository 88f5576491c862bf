#!/bin/bash
# bench/redis-start.sh — start-up of a Redis service until its port answers PING:
# `nsrun -d -p 0:6379 --wait-port 6379 ...` against the same redis-server started
# as a bare host process, printed as medians and their ratio.
#
#   bench/redis-start.sh [-n RUNS] [-i IMAGE]
#
# NSRUN (default build/nsrun), NSRUN_IMAGES and the image (default: `services` if it
# is in the store, else `redis`) as for nsrun; needs redis-server on the host (Debian:
# redis-server).  Each sample: from just before the start until a PING through the
# (published) port is answered; the stop is not timed.
set -euo pipefail

RUNS=20
IMAGE=
while getopts 'n:i:' o; do
	case $o in
	n) RUNS=$OPTARG ;;
	i) IMAGE=$OPTARG ;;
	*) echo "usage: $0 [-n RUNS] [-i IMAGE]" >&2; exit 2 ;;
	esac
done
NSRUN=${NSRUN:-$(cd "$(dirname "$0")/.." && pwd)/build/nsrun}
[ -x "$NSRUN" ] || { echo "$0: no nsrun at $NSRUN (make, or set NSRUN)" >&2; exit 1; }
command -v redis-server >/dev/null || { echo "$0: redis-server not on the host (apt-get install redis-server)" >&2; exit 1; }
if [ -z "$IMAGE" ]; then
	IMAGE=redis
	"$NSRUN" images 2>/dev/null | grep -qw services && IMAGE=services
fi
"$NSRUN" images 2>/dev/null | grep -qw "$IMAGE" || { echo "$0: image $IMAGE not installed" >&2; exit 1; }

# state of the bench's services in a private directory, removed at the end
RUN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/redis-start.XXXXXX")
chmod 700 "$RUN_DIR"
export XDG_RUNTIME_DIR=$RUN_DIR
trap 'rm -rf "$RUN_DIR"' EXIT

# One timing loop in Python (started once, outside the timed windows): each sample
# runs from just before the start until a PING is answered, polling every 1 ms.
python3 - "$NSRUN" "$IMAGE" "$RUNS" "$RUN_DIR" <<'PY'
import os, socket, statistics, subprocess, sys, time

nsrun, image, runs, run_dir = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
DEVNULL = subprocess.DEVNULL


def pong(port):
    end = time.monotonic() + 10
    while time.monotonic() < end:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return
        except OSError:
            pass
        time.sleep(0.001)
    sys.exit(f"no PONG on port {port}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


bare, ns = [], []
try:
    for i in range(runs):
        port = free_port()
        t0 = time.monotonic()
        p = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                              "--appendonly", "no", "--dir", run_dir], stdout=DEVNULL, stderr=DEVNULL)
        pong(port)
        bare.append(time.monotonic() - t0)
        p.terminate()
        p.wait()

        name = f"bench-{os.getpid()}-{i}"
        t0 = time.monotonic()
        out = subprocess.run([nsrun, "-d", "--name", name, "-p", "0:6379", "--wait-port", "6379", "--tmpfs", "/data",
                              "--image", image, "--", "redis-server", "--save", "", "--appendonly", "no",
                              "--dir", "/data"], capture_output=True, text=True, check=True).stdout
        port = int(out.split("127.0.0.1:")[1])
        pong(port)
        ns.append(time.monotonic() - t0)
        subprocess.run([nsrun, "stop", "-t", "1", name], stdout=DEVNULL, check=True)
finally:
    names = subprocess.run([nsrun, "ps"], capture_output=True, text=True).stdout.split()
    left = [n for n in names if n.startswith(f"bench-{os.getpid()}-")]
    if left:
        subprocess.run([nsrun, "stop", "-t", "1", *left], stdout=DEVNULL)

b, n = statistics.median(bare), statistics.median(ns)
print(f"redis start until PING answers (median of {runs})")
print(f"  bare host redis-server        {b * 1000:8.1f} ms")
print(f"  nsrun -d (image {image:8s})    {n * 1000:8.1f} ms")
print(f"  ratio nsrun/bare              {n / b:8.2f}")
PY
