#!/bin/bash
# A store the image tools' sandbox cannot look up by path still works: as root
# the sandbox runs as uid 65534 and bwrap re-resolves its --bind-fd source by
# path as that uid, so a store under a 0700 directory (root's default, under
# /root) used to fail every `nsrun pull` and `nsrun-image import` ("cannot
# read the manifest").  Each sandbox now gets the work directory bound where
# every user may look it up, in a mount namespace of its own (nothing of it is
# seen on the host, also when the pull is killed).  Here: a store under a 0700
# directory (as nsrun-test: its own, as a home is), a pull from a loopback
# registry and an import of an oci-archive into it, both run; a pull killed
# mid-way leaves no mount and no process; and when the sandbox itself cannot
# be set up, the message says so with the sandbox's own words (as root, the
# control: without CAP_SYS_ADMIN there is no mount namespace, and bwrap's old
# failure is what shows).
# Needs: skopeo umoci jq bwrap bsdtar python3. Missing tools are a failure.
. "$(dirname "$0")/../lib.sh"

image_import_setup unshare

nothing_left() {  # NAME — no temporary directory, no sandbox process
	! compgen -G "$STORE/.$1.tmp.*" >/dev/null && ! pgrep -f -- "$STORE/\.$1\.tmp\." >/dev/null
}
# the mounts of this (the host's) mount namespace that name PRIV or are on /dev/shm or /mnt
host_mounts() { awk -v p="$PRIV" 'index($4 $5, p) || $5 == "/dev/shm" || $5 == "/mnt"' /proc/self/mountinfo; }
# registry PORT LAYOUT STALL — registry.py serving LAYOUT as test/img:1 (STALL:
# none, manifest) in the background; listens PORT waits until it answers
registry() {
	python3 "$TESTS_DIR/security/image/registry.py" "$1" "$2" "$3" "$T/stalled" >"$T/registry-$1.log" 2>&1 &
	at_exit "kill $! 2>/dev/null"
}
listens() {
	for _ in $(seq 300); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

PRIV=$T/private
STORE=$PRIV/images/store
mkdir -m 0700 "$PRIV"
MOUNTS_BEFORE=$(host_mounts)

if [ "$(id -u)" = 0 ]; then
	run_cmd setpriv --reuid=65534 --regid=65534 --clear-groups -- test -x "$PRIV"
	assert_eq "control: the sandbox's uid 65534 cannot look up the 0700 directory above the store" 1 "$RC"
else
	assert_eq "the store's parent is 0700, the caller's own (as a home is)" "700 $(id -u)" "$(stat -c '%a %u' "$PRIV")"
fi

mk oci "$T/img" plain
PORT=$(free_port) PORT2=$(free_port)
registry "$PORT" "$T/img" none
registry "$PORT2" "$T/img" manifest
check "the test registry answers" listens "$PORT"
PULL=("$NSRUN" pull --quiet --interpreter /bin/hello --tls-verify=false)

run_cmd "${PULL[@]}" "docker://127.0.0.1:$PORT/test/img:1" p --store "$STORE"
assert_eq "nsrun pull into a store under a 0700 directory succeeds" "0 " "$RC $ERR"
check "... the image runs" runs p
check "... leaving no temporary directory or process" nothing_left p

# the import is nsrun-image's (shell): nothing of it for the sanitizers to see,
# so under them (CI's ASan run) only the C pull's checks run
IMPORTS=1
[ -n "${NSRUN_TEST_SANITIZER:-}" ] && IMPORTS=
if [ -n "$IMPORTS" ]; then
	mk oci-archive "$T/img.tar" plain
	run_cmd "$TOOL" import --quiet --interpreter /bin/hello "oci-archive:$T/img.tar" i --store "$STORE"
	assert_eq "nsrun-image import of an oci-archive into it succeeds" "0 " "$RC $ERR"
	check "... the image runs" runs i
	check "... leaving no temporary directory or process" nothing_left i
fi
assert_eq "... and no mount on the host (nothing on /dev/shm or /mnt, nothing of the store)" "$MOUNTS_BEFORE" "$(host_mounts)"

# killed mid-way (the registry never answers the manifest: the tool is running
# in its sandbox): no mount, no process; the temporary directory a SIGKILL
# leaves goes with the next pull of the name
check "a stalling registry answers" listens "$PORT2"
"${PULL[@]}" "docker://127.0.0.1:$PORT2/test/img:1" k --store "$STORE" 2>"$T/k.err" &
KPID=$!
at_exit "kill -KILL $KPID 2>/dev/null"
for _ in $(seq 600); do [ -e "$T/stalled" ] && break; sleep 0.1; done
check "a pull waits in its sandbox on the stalled registry" test -e "$T/stalled"
{ kill -KILL "$KPID" && wait "$KPID"; } 2>/dev/null
for _ in $(seq 100); do pgrep -f "127\.0\.0\.1:$PORT2/" >/dev/null || break; sleep 0.1; done
assert_eq "killed with SIGKILL: no process of its sandbox is left" "" "$(pgrep -af "127\.0\.0\.1:$PORT2/")"
assert_eq "... and no mount on the host" "$MOUNTS_BEFORE" "$(host_mounts)"
run_cmd "${PULL[@]}" "docker://127.0.0.1:$PORT/test/img:1" k --store "$STORE"
assert_eq "... the next pull of the name succeeds" "0 " "$RC $ERR"
check "... and removes the killed pull's temporary directory" nothing_left k

# the sandbox itself failing: its own words, not the tool's step.  A hard
# RLIMIT_FSIZE below --max-size: prlimit (in the sandbox's chain, without
# privileges) cannot set the bound
LOWFSIZE=(prlimit --fsize=4194304:4194304 --)
HINT="hint: the (pull|import) runs .*under setpriv, prlimit and bwrap .*docs/images\\.md"
run_cmd "${LOWFSIZE[@]}" "${PULL[@]}" "docker://127.0.0.1:$PORT/test/img:1" u --store "$STORE"
assert_eq "the sandbox cannot be set up (prlimit fails): the pull fails" 1 "$RC"
assert_match "... saying so with prlimit's message" \
	'^nsrun: pull "u": the image tool.s sandbox could not be set up: prlimit: .*FSIZE.*$' "$(head -n1 <<<"$ERR")"
assert_match "... and a hint" "^nsrun: $HINT" "$(sed -n 2p <<<"$ERR")"
if [ -n "$IMPORTS" ]; then
	run_cmd "${LOWFSIZE[@]}" "$TOOL" import --quiet --interpreter /bin/hello "oci-archive:$T/img.tar" u --store "$STORE"
	assert_eq "... an import too fails" 1 "$RC"
	assert_match "... saying so with prlimit's message" \
		'^nsrun-image: import "u": the image tool.s sandbox could not be set up: prlimit: .*FSIZE.*$' "$(head -n1 <<<"$ERR")"
	assert_match "... and a hint" "^nsrun-image: $HINT" "$(sed -n 2p <<<"$ERR")"
fi
check "... leaving nothing" nothing_left u

if [ "$(id -u)" = 0 ]; then
	# control: root without CAP_SYS_ADMIN makes no mount namespace, and the
	# old failure shows, in bwrap's words
	NOADMIN=(setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin --)
	run_cmd "${NOADMIN[@]}" "${PULL[@]}" "docker://127.0.0.1:$PORT/test/img:1" c --store "$STORE"
	assert_eq "control: as root without CAP_SYS_ADMIN, the pull into that store fails" 1 "$RC"
	assert_match "... in bwrap's words" \
		'^nsrun: pull "c": the image tool.s sandbox could not be set up: bwrap: Can.t find source path /proc/self/fd/[0-9]+: Permission denied$' \
		"$(head -n1 <<<"$ERR")"
	if [ -n "$IMPORTS" ]; then
		run_cmd "${NOADMIN[@]}" "$TOOL" import --quiet --interpreter /bin/hello "oci-archive:$T/img.tar" c --store "$STORE"
		assert_eq "control: ... and so does the import" 1 "$RC"
		assert_match "... in bwrap's words" \
			'^nsrun-image: import "c": the image tool.s sandbox could not be set up: bwrap: Can.t find source path /proc/self/fd/[0-9]+: Permission denied$' \
			"$(head -n1 <<<"$ERR")"
	fi
	check "... leaving nothing" nothing_left c
fi

done_testing
