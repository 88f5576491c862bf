#!/bin/bash
# Issue 17, kind 6: nsrun's own loops and storage.
# - a reader of nsrun's stdout that takes nothing never stops the supervise loop:
#   --timeout holds, with -t and without;
# - a service's log is bounded by --output-limit (it starts again, saying how much
#   was dropped);
# - --json with --output-limit of control bytes costs memory in proportion to the
#   limit, not six times it (yajl's \u00XX escapes, buffered);
# - the services' state is never in /tmp, where another user could make
#   /tmp/nsrun-UID first and deny -d, ps, stop and rm.
. "$(dirname "$0")/../lib.sh"
require_all
PY=$(command -v python3) || skip_all "python3 is needed on the host"

# ---- a stalled reader and --timeout
FIFO="$TESTTMP/fifo"
mkfifo "$FIFO"
stalled() { # stalled CMD... — CMD's stdout is a pipe whose reader takes nothing for 20 s; sets RC, ERR, ELAPSED
	local t0 t1 reader
	sleep 20 <"$FIFO" >/dev/null 2>&1 &
	reader=$!
	LAST_CMD="$*"
	t0=$(date +%s.%N)
	timeout -k 5 30 "$@" >"$FIFO" 2>"$TESTTMP/.err"
	RC=$?
	t1=$(date +%s.%N)
	ELAPSED=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	OUT=; ERR=$(cat "$TESTTMP/.err")
	kill "$reader" 2>/dev/null; wait "$reader" 2>/dev/null
}
stalled timeout 1 yes
assert_eq "control: a writer to that pipe is stuck (timeout(1) ends it: 124)" 124 "$RC"
stalled "$NSRUN" --image python --timeout 2 -- yes
assert_eq "a stalled reader: --timeout 2 still ends the run (124)" 124 "$RC"
if elapsed_lt 8; then ok "  ... in time (${ELAPSED}s: the timeout and at most 1 s to flush)"; else not_ok "  ... in time" "took ${ELAPSED}s"; fi
stalled "$NSRUN" -t --image python --timeout 2 -- yes
assert_eq "-t with a stalled reader: --timeout 2 still ends the run (124)" 124 "$RC"
if elapsed_lt 8; then ok "  ... in time (${ELAPSED}s)"; else not_ok "  ... in time" "took ${ELAPSED}s"; fi
assert_match "  ... saying so" 'timed out after 2s' "$ERR"

# ---- a service's log
export XDG_RUNTIME_DIR="$TESTTMP/run"
mkdir -m 700 "$XDG_RUNTIME_DIR"
LOUD='i=0; while [ $i -lt 20000 ]; do echo "line $i of the service log, padded to be longer"; i=$((i+1)); done; echo last-line; sleep 60'
svc_log() { # svc_log NAME LIMIT [OPTION...] — starts a loud service, waits for its last line, sets LOG
	run_nsrun -d --name "$1" --output-limit "$2" "${@:3}" --image python -- sh -c "$LOUD"
	local i
	for ((i = 0; i < 100; i++)); do grep -q last-line "$XDG_RUNTIME_DIR/nsrun/$1/log" 2>/dev/null && break; sleep 0.1; done
	LOG="$XDG_RUNTIME_DIR/nsrun/$1/log"
}
svc_log "lb$$" 64k
assert_eq "-d --output-limit 64k: started" 0 "$RC"
size=$(stat -c %s "$LOG")
if [ "$size" -le $((65536 + 200)) ]; then ok "  ... its log stays within the limit ($size bytes)"; else not_ok "  ... its log stays within the limit" "$size bytes"; fi
assert_match "  ... it says what was dropped" '^nsrun: the log reached --output-limit \(65536 bytes\): [0-9]+ bytes before this line were dropped' "$(head -n 1 "$LOG")"
assert_eq "  ... and keeps the newest output" last-line "$(tail -n 1 "$LOG")"
assert_eq "  ... nsrun logs shows it" last-line "$("$NSRUN" logs "lb$$" | tail -n 1)"
"$NSRUN" stop -t 0 "lb$$" >/dev/null 2>&1; "$NSRUN" rm -f "lb$$" >/dev/null 2>&1
# the same through a pty (-t), whose output took another way into the log, unbounded
svc_log "lt$$" 64k -t
assert_eq "-d -t --output-limit 64k: started" 0 "$RC"
size=$(stat -c %s "$LOG")
if [ "$size" -le $((65536 + 200)) ]; then ok "  ... its log (a pty's) stays within the limit ($size bytes)"; else not_ok "  ... its log (a pty's) stays within the limit" "$size bytes"; fi
assert_eq "  ... and keeps the newest output" last-line "$(tail -n 1 "$LOG" | tr -d '\r')"
"$NSRUN" stop -t 0 "lt$$" >/dev/null 2>&1; "$NSRUN" rm -f "lt$$" >/dev/null 2>&1
svc_log "lc$$" 2m
assert_eq "control: with room for it (--output-limit 2m) the whole log is kept" "line 0 of the service log, padded to be longer" "$(head -n 1 "$LOG")"
if [ "$(stat -c %s "$LOG")" -gt 900000 ]; then ok "  ... (the service wrote about 1 MB)"; else not_ok "  ... (the service wrote about 1 MB)" "$(stat -c %s "$LOG")"; fi
"$NSRUN" stop -t 0 "lc$$" >/dev/null 2>&1; "$NSRUN" rm -f "lc$$" >/dev/null 2>&1

# ---- --json and --output-limit of control bytes: nsrun's memory
MEM='import json, resource, subprocess, sys
p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE)
d = json.loads(p.stdout)
print(len(d["stdout"]), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)'
mem_run() { # mem_run BYTE — nsrun's peak memory (MiB) for a --json run of 8 MiB of BYTE; sets KEPT and MIB
	run_cmd "$PY" -c "$MEM" "$NSRUN" --image python --output-limit 8m --json - -- \
		python3 -c "import sys; sys.stdout.buffer.write(b'$1' * (8 << 20))"
	read -r KEPT MIB <<<"$OUT"
}
mem_run a
assert_eq "control: a document of 8 MiB of plain bytes" 8388608 "${KEPT:-}"
plain=${MIB:-0}
mem_run '\x01'
assert_eq "control: the document holds the 8 MiB of control bytes" 8388608 "${KEPT:-}"
# compared with the plain run, so a sanitizer build's overhead cancels out; buffered,
# the \u0001 escapes cost 6 bytes a byte (48 MiB more)
if [ "${MIB:-999}" -le $((plain + 8)) ]; then ok "  ... nsrun's peak memory is no more than for plain bytes (${MIB} MiB, plain ${plain} MiB)"
else not_ok "  ... nsrun's peak memory is no more than for plain bytes" "${MIB:-?} MiB, plain ${plain} MiB"; fi

# ---- the state directory: not in /tmp, where another user could make it first
if [ "$(id -u)" = 0 ]; then
	# a victim and a squatter of their own (made here if missing), so no one else's runs are touched
	for u in nsrun-victim nsrun-squat; do
		id "$u" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$u" ||
			not_ok "useradd $u"
	done
	VUID=$(id -u nsrun-victim)
	SQUAT="/tmp/nsrun-$VUID"
	[ -e "$SQUAT" ] || runuser -u nsrun-squat -- mkdir -m 700 "$SQUAT"
	at_exit "[ \"\$(stat -c %U '$SQUAT' 2>/dev/null)\" = nsrun-squat ] && rmdir '$SQUAT'"
	assert_eq "control: another user made /tmp/nsrun-$VUID first" nsrun-squat "$(stat -c %U "$SQUAT")"
	V="$TESTTMP/victim"
	VHOME="$V/home"
	mkdir -p "$V/home" "$V/cache" "$V/bin"
	cp "$NSRUN" "$V/bin/nsrun"; cp -r "${NSRUN_SECCOMP_PROFILES:-$TESTS_DIR/../seccomp-profiles}" "$V/profiles"
	chmod -R a+rX "$V"; chown nsrun-victim "$V/home" "$V/cache"; chmod 700 "$V/home"
	as_victim() {
		run_cmd runuser -u nsrun-victim -- env -i PATH=/usr/bin:/bin HOME="$V/home" XDG_CACHE_HOME="$V/cache" \
			NSRUN_IMAGES="${NSRUN_IMAGES:-/var/tmp/nsrun-check/images}" NSRUN_SECCOMP_PROFILES="$V/profiles" \
			"$V/bin/nsrun" "$@"
	}
else
	# an unprivileged suite cannot make another user: a file of its own stands in for
	# the squat (nsrun cannot tell them apart: neither is a private directory of ours)
	SQUAT="/tmp/nsrun-$(id -u)"
	if [ ! -e "$SQUAT" ]; then
		echo squat >"$SQUAT"
		at_exit "rm -f '$SQUAT'"
		check "control: /tmp/nsrun-$(id -u) is taken (a file, standing for another user's directory)" test -f "$SQUAT"
	else
		# an older nsrun's directory: the state must not go there either
		check "control: /tmp/nsrun-$(id -u) exists" test -e "$SQUAT"
	fi
	VHOME="$TESTTMP/home"
	mkdir -m 755 "$VHOME"
	as_victim() { run_cmd env -u XDG_RUNTIME_DIR HOME="$TESTTMP/home" "$NSRUN" "$@"; }
fi
as_victim -d --name "sq$$" --image python -- sleep 60
assert_eq "with /tmp/nsrun-UID squatted: -d works" 0 "$RC"
as_victim ps
assert_match "  ... ps lists it" "sq$$" "$OUT"
as_victim ps --json
assert_match "  ... its state is in its HOME, not in /tmp/nsrun-UID" "\"state_dir\": *\"$VHOME/.local/state/nsrun-services/sq$$\"" "$OUT"
as_victim stop -t 0 "sq$$"
assert_eq "  ... stop works" 0 "$RC"
as_victim rm -f "sq$$"
as_victim ps
assert_not_match "  ... and it is gone" "sq$$" "$OUT"
run_cmd env -u XDG_RUNTIME_DIR -u HOME "$NSRUN" ps
assert_eq "without XDG_RUNTIME_DIR and HOME: 125" 125 "$RC"
assert_match "  ... saying what to do" 'set XDG_RUNTIME_DIR to a directory only you can write' "$ERR"

done_testing
