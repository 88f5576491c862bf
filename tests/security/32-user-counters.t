#!/bin/bash
# Issue 17, kind 5 (per-user kernel counters): inotify instances, like fanotify groups and
# namespaces, are counted per user and charged up the user namespaces to the caller's user
# on the host; a root caller's payload exhausted root's host-wide inotify limit. The
# container's user namespace now has its own limits (half the caller's): a payload that
# takes every inotify instance it can stops there, and the caller on the host can still
# make one meanwhile. --json says the limit and that the user namespace enforces it.
# Control: the same exhaustion done on the host by a user directly does leave it without an
# instance (the probe can see an exhaustion).
. "$(dirname "$0")/../lib.sh"
require_all

O="$TESTTMP/o"
mkdir -p "$O"
chmod 777 "$O"
DOC="$TESTTMP/result.json"
HOLD='
import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
fds, err = [], 0
while len(fds) < 100000:
    fd = libc.inotify_init1(0)
    if fd < 0:
        err = ctypes.get_errno()
        break
    fds.append(fd)
print(len(fds), err, flush=True)
open(sys.argv[1], "w").close()
time.sleep(float(sys.argv[2]))
'
one_instance='import ctypes; l = ctypes.CDLL(None, use_errno=True); fd = l.inotify_init1(0); print("ok" if fd >= 0 else "failed %d" % ctypes.get_errno())'
host_max=$(cat /proc/sys/fs/inotify/max_user_instances)

start_nsrun --image python --json "$DOC" -v "$O:/o:rw" -- python3 -c "$HOLD" /o/holding 30
for _ in $(seq 300); do [ -e "$O/holding" ] && break; kill -0 "$NSRUN_PID" 2>/dev/null || break; sleep 0.1; done
check "the payload took every inotify instance it could and holds them" test -e "$O/holding"
assert_eq "control: meanwhile the caller on the host can still make an inotify instance" ok \
	"$(python3 -c "$one_instance" 2>&1)"
kill -TERM "$NSRUN_PID" 2>/dev/null
wait_nsrun
got=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["stdout"].split("\n")[0])' "$DOC" 2>&1)
count=${got% *}
errno=${got#* }
lim=$(python3 -c 'import json, sys; l = json.load(open(sys.argv[1]))["limits"]["inotify_instances"]; print(l["value"], l["enforced"])' "$DOC" 2>&1)
diag "inside: $count instances, then errno $errno; --json: $lim; the caller's host limit: $host_max"
assert_eq "--json: inotify_instances is half the caller's limit, enforced by the user namespace" \
	"$((host_max / 2)) userns" "$lim"
check "inside, the instances stop at the container's limit or below (EMFILE)" \
	test "${count:-999999}" -le "$((host_max / 2))" -a "${count:-0}" -gt 0 -a "$errno" = 24
assert_eq "the host's limit is unchanged" "$host_max" "$(cat /proc/sys/fs/inotify/max_user_instances)"

run_nsrun --image python -- python3 -c 'import os; print(os.getuid())'
assert_eq "control: runs still work after" 0 "$RC"

# the control exhausts a host user's instances for a moment: as root, uid 65534's rather
# than root's (other runs on a shared host are charged to root)
as_caller=()
[ "$(id -u)" = 0 ] && as_caller=(setpriv --reuid=65534 --regid=65534 --clear-groups)
run_cmd "${as_caller[@]+"${as_caller[@]}"}" python3 -c "
import ctypes
l = ctypes.CDLL(None, use_errno=True)
fds = []
while len(fds) < 100000:
    fd = l.inotify_init1(0)
    if fd < 0:
        break
    fds.append(fd)
print(len(fds), ctypes.get_errno())"
diag "a user exhausting its instances on the host: $OUT"
assert_eq "control: the same exhaustion on the host stops at the user's host limit (EMFILE)" 24 "${OUT#* }"

done_testing
