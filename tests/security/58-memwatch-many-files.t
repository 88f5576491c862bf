#!/bin/bash
# A container of a million open files must not hold its supervisor, and with it
# the run's --timeout.  Where no cgroup holds --memory, the supervisor measures
# the container (memwatch.h), and looked at every open file of every process for
# memfds in each sample: a payload that dup'd a pipe 19990 times in each of 50
# processes made one sample take seconds, and a run under --timeout 3 was ended
# after 17 s (a breaker's).  A sample now looks at 1024 files at most and the next
# goes on from there.  Probe: about 2,000,000 open files under --timeout 4: timed
# out (124), its processes killed within 2 s of it (a sample of them took 6).
# That is timed by a witness (lib.sh's watch_witness), not by the run's end: the
# end waits for the kernel to close the 2,000,000 files, 1 s on an idle machine
# and 4.8 s in CI beside the other tiers (stop 38, a bound of 4 s past the
# timeout).  Control: the files were made (the payload says so before the
# timeout); on a machine too busy to make them in 4 s (CI's sanitizer run beside
# another suite did not), the timeout is doubled, up to 16 s.  And the memfds are still found, if over several samples:
# 150 MiB in a memfd (written, not mapped: only that look finds it) behind 5000
# open files, under --memory 64m, ends the run as out of memory (137); control:
# 24 MiB there runs to its end.  As root the limit is a cgroup's and nothing is
# measured: the same outcomes.
. "$(dirname "$0")/../lib.sh"
require_nsrun
require_userns
require_image python

plan 9

mkdir -p "$TESTTMP/v"
{ printf '%s\n' "$WITNESS_PY"; cat <<'PY'; } >"$TESTTMP/v/files.py"
import os, resource, sys, time
# the witness: forked before any file is made, it holds the lock until killed
witness("/v/lock")
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
per = min(hard, 1 << 20) - 64
resource.setrlimit(resource.RLIMIT_NOFILE, (per + 64, hard))
procs = min(-(-2000000 // per), 200)
r, w = os.pipe()
for _ in range(procs - 1):
    if os.fork() == 0:
        break
for _ in range(per):
    os.dup(r)
os.write(w, b"x")
if os.getpid() == 2:
    # pid 2 is the first payload process (pid 1 is the init)
    time.sleep(0.5)
    print(f"files {procs * per} in {procs} processes", flush=True)
time.sleep(60)
PY
chmod -R a+rX "$TESTTMP/v"
for limit in 4 8 16; do
	: >"$TESTTMP/v/lock"
	chmod a+r "$TESTTMP/v/lock"
	t0=$(now_ms)
	watch_witness "$TESTTMP/v/lock" "$TESTTMP/killed" &
	run_nsrun --image python --memory 256m --pids-limit 300 --timeout "$limit" -v "$TESTTMP/v:/v:ro" -- \
		python3 /v/files.py
	took=$(($(now_ms) - t0))
	wait $!
	killed=$(($(cat "$TESTTMP/killed") - t0))
	n=$(sed -n 's/^files \([0-9]*\) .*/\1/p' <<<"$OUT")
	[ "${n:-0}" -ge 1000000 ] && break
	echo "# the files were not made within --timeout $limit ($OUT): again with twice the time"
done
assert_eq "about 2,000,000 open files under --timeout $limit: timed out (124)" 124 "$RC"
check "  ... control: the payload made them before the timeout ($OUT)" test "${n:-0}" -ge 1000000
check "  ... its processes killed within 2 s of the timeout (at $killed ms; the run ended at $took ms)" \
	test "$killed" -lt $(((limit + 2) * 1000))
check "  ... and the run ends once the kernel has closed the files (at $took ms)" test "$took" -lt $(((limit + 30) * 1000))
assert_match "  ... said as a timeout" "timed out|timeout" "$ERR"

# memfd MIB: MIB MiB written to a memfd opened after 5000 other files, held 3 s
memfd() {
	run_nsrun --image python --memory 64m --timeout 60 -- python3 -c "
import os, resource, time
resource.setrlimit(resource.RLIMIT_NOFILE, (6000, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
r, w = os.pipe()
for _ in range(5000):
    os.dup(r)
fd = os.memfd_create('big')
for _ in range($1):
    os.write(fd, b'x' * (1 << 20))
time.sleep(3)
print('held')"
}
memfd 150
assert_eq "150 MiB in a memfd behind 5000 open files under --memory 64m: killed (137)" 137 "$RC"
assert_match "  ... said as out of memory" "out of memory" "$ERR"
memfd 24
assert_eq "  ... control: 24 MiB there runs to its end" "0" "$RC"
assert_eq "  ... and held them" "held" "$OUT"
