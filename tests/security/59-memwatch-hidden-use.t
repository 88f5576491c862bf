#!/bin/bash
# Memory a payload tries to hide from the supervisor's measure (no cgroup).
# (1) The memory limit holds when the payload's main thread exits and its other
# threads run on.  The thread-group leader is then a zombie with no memory of its
# own: its /proc/PID/statm reads 0 and its smaps and fd are empty, so a measure
# that read only /proc/PID hid everything the other threads held (1.5 GB under
# --memory 64m: breaker, session 20); a payload whose leader exited before the
# measure found it was not found at all (125 after 5 s).  The measure now reads
# one of the live threads (/proc/PID/task/TID).  Where a cgroup holds the limit
# the kernel counts it anyway; each case has a control with room for what it holds.
. "$(dirname "$0")/../lib.sh"
require_all
export XDG_RUNTIME_DIR="$TESTTMP/run"   # the service's state, this test's own
mkdir -m 700 "$XDG_RUNTIME_DIR"

mkdir -p "$TESTTMP/v"
# the leader ends itself with SYS_exit (not exit_group): only it ends
cat >"$TESTTMP/v/leader_exit.py" <<'PY'
import ctypes, os, sys, threading, time
kind, mib = sys.argv[1], int(sys.argv[2])
def hold():
    time.sleep(0.5)                 # after the leader has exited
    if kind == "anon":
        b = bytearray(mib << 20)
        for i in range(0, len(b), 4096):
            b[i] = 1
    else:                           # a memfd, written, not mapped
        fd = os.memfd_create("held")
        chunk = b"x" * (1 << 20)
        for _ in range(mib):
            os.write(fd, chunk)
    print("holding", mib, flush=True)
    time.sleep(2)
    os._exit(3)
threading.Thread(target=hold).start()
time.sleep(0.1)
ctypes.CDLL(None).syscall(60, 0)    # SYS_exit: this thread only
PY
chmod -R a+rX "$TESTTMP/v"

for kind in anon memfd; do
	run_nsrun --image python --memory 64m -v "$TESTTMP/v:/v:ro" --json - -- python3 /v/leader_exit.py "$kind" 200
	assert_eq "$kind: 200 MiB held by a thread after the leader exited: killed under --memory 64m (137)" 137 "$RC"
	assert_match "  ... reported as out of memory" '"oom_killed":true' "$OUT"
	run_nsrun --image python --memory 512m -v "$TESTTMP/v:/v:ro" --json - -- python3 /v/leader_exit.py "$kind" 200
	assert_eq "  ... control: with --memory 512m it holds them and exits 3" "3 holding 200" \
		"$RC $(sed -n 's/.*"stdout":"\(holding [0-9]*\)\\n".*/\1/p' <<<"$OUT")"
done

# a service whose leader exited: its threads are measured, and `nsrun exec`
# joins it through a live thread (it said "open its payload's root": ENOENT)
run_nsrun -d --name "le$$" --image python --memory 64m -v "$TESTTMP/v:/v:ro" -- python3 -c '
import ctypes, threading, time
threading.Thread(target=time.sleep, args=(600,)).start()
time.sleep(0.1)
ctypes.CDLL(None).syscall(60, 0)'
assert_eq "a service whose main thread exits starts" 0 "$RC"
sleep 1
run_nsrun exec "le$$" -- python3 -c 'print("joined")'
assert_eq "  ... nsrun exec joins it" "0 joined" "$RC $OUT"
run_nsrun stop -t 1 "le$$"
assert_eq "  ... and it stops" 0 "$RC"
run_nsrun rm "le$$"

# (2) a --tmpfs inside a rw volume, its parent renamed by the payload: the
# measure looked the tmpfs up by its path at each sample, found nothing there,
# and 110 MB passed --memory 64m (breaker, session 20).  It now holds the tmpfs
# from its first sample on.  Control: the same with the limit raised holds it.
mkdir -p "$TESTTMP/w/a/t"
chmod -R a+rwX "$TESTTMP/w"
for mem in 64m 512m; do
	run_nsrun --image python --memory "$mem" -v "$TESTTMP/w:/w:rw" --tmpfs /w/a/t:size=200m --json - -- sh -c \
		'sleep 0.3; mv /w/a /w/b && head -c 100000000 /dev/zero >/w/b/t/x && sleep 1 && echo held'
	if [ "$mem" = 64m ]; then
		assert_eq "100 MB in a --tmpfs whose parent was renamed: killed under --memory 64m (137)" 137 "$RC"
		assert_match "  ... reported as out of memory" '"oom_killed":true' "$OUT"
	else
		assert_eq "  ... control: with --memory 512m it is held" "0 held" \
			"$RC $(sed -n 's/.*"stdout":"\(held\)\\n".*/\1/p' <<<"$OUT")"
	fi
	rm -rf "$TESTTMP/w/b" "$TESTTMP/w/a"
	mkdir -p "$TESTTMP/w/a/t"
done

done_testing
