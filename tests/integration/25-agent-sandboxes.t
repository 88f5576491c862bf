#!/bin/bash
# nsrun copied alone into the sandboxes coding agents put their commands in, each
# rebuilt here from the agents' published sources, as the user running the suite:
#   a) a sandbox that hides the source tree: only the copied binary and an image
#   b) bwrap --unshare-user --unshare-pid without --proc (the outer /proc is of
#      another pid namespace): as sandbox-runtime's enableWeakerNestedSandbox mode
#      binds it (anthropic-experimental/sandbox-runtime, src/sandbox/linux-sandbox-utils.ts:
#      `--bind /proc /proc` instead of `--proc /proc`)
#   c) Claude Code's sandbox: bwrap --unshare-net --unshare-pid --proc /proc (the same
#      linux-sandbox-utils.ts) and the seccomp filter of vendor/seccomp-src/seccomp-unix-block.c
#      (socket(AF_UNIX), AF_UNIX datagram socketpairs and io_uring denied)
#   d) Codex's linux-sandbox: bwrap --new-session --ro-bind / / --dev /dev --unshare-pid
#      --unshare-net --proc /proc (openai/codex, codex-rs/linux-sandbox/src/bwrap.rs) and
#      its network seccomp filter (codex-rs/linux-sandbox/src/landlock.rs,
#      install_network_seccomp_filter_on_current_thread: sendto, connect, bind, ...
#      and every socket family but AF_UNIX denied)
#   e) nsrun inside nsrun (--allow-nested) with only the binary mounted
#   and plain bwrap --unshare-all --proc /proc, the baseline that always worked
# The filters are tests/sandboxes/agent-sandbox.c (built by make as build/agent-sandbox).
# In each: `nsrun check`'s status, a run printing its uid, and check's verdict is the
# run's.  Each cell reaches full isolation where the kernel allows it.  Run as root,
# the cells run as nobody, as an agent does: bwrap started by root maps only its uid 0,
# to host root, and nsrun refuses to run there (the payload would be host root, which
# RLIMIT_NPROC does not count): tested first, with its control.
. "$(dirname "$0")/../lib.sh"
require_all

command -v bwrap >/dev/null || skip_all "bubblewrap is not installed (make deps)"

SNIPPET='import os; print(os.getuid())'
SRC=$(cd "$TESTS_DIR/.." && pwd)

# the filters' helper: next to nsrun (make), else built here
AGENT_SB=${NSRUN_AGENT_SANDBOX:-$(dirname "$NSRUN")/agent-sandbox}
if [ ! -x "$AGENT_SB" ]; then
	AGENT_SB=$TESTTMP/agent-sandbox
	cc -O2 -static -o "$AGENT_SB" "$TESTS_DIR/sandboxes/agent-sandbox.c" -lseccomp 2>"$TESTTMP/cc.err" ||
		skip_all "no build/agent-sandbox and it cannot be built: $(head -c 300 "$TESTTMP/cc.err")"
fi

# the copied binary, alone in a directory of its own (with the libraries of a
# dynamic build, such as the ASan one, which a static nsrun does not need)
alone=$TESTTMP/alone
mkdir -p "$alone" && cp "$NSRUN" "$alone/nsrun"
if ldd "$NSRUN" >/dev/null 2>&1; then
	for lib in $(ldd "$NSRUN" | awk '$3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
		cp -L "$lib" "$alone/"
	done
fi
cp "$AGENT_SB" "$alone/agent-sandbox"
chmod -R a+rX "$alone"
NS=$alone/nsrun
# nothing of the build tree: the profiles come from the binary itself
env=(env -u NSRUN_SECCOMP_PROFILES NSRUN_IMAGES="$NSRUN_IMAGES")
[ -n "${NSRUN_TEST_SANITIZER:-}" ] && env+=(ASAN_OPTIONS=detect_leaks=0)   # ptrace is denied in some

root=false
AGENT=()
if [ "$(id -u)" = 0 ]; then
	root=true
	AGENT=(setpriv --reuid=65534 --regid=65534 --clear-groups)
fi
# what the cells write (the battery's temporary files, nsrun's cache), theirs
SCRATCH=$TESTTMP/scratch
mkdir -p "$SCRATCH/cache" "$SCRATCH/home"
$root && chown -R 65534:65534 "$SCRATCH"
env+=(XDG_CACHE_HOME="$SCRATCH/cache" HOME="$SCRATCH/home")

# the probe battery (examples/test_isolation.py, with its client) copied out of the
# tree, which cell a hides; in a and b it runs inside the sandbox, in c and d (whose
# filters deny the harness's own calls: its fixtures serve TCP on loopback) outside,
# with each nsrun it starts inside
BATTERY=$TESTTMP/battery
mkdir -p "$BATTERY"
cp "$SRC/examples/test_isolation.py" "$BATTERY/" && cp -r "$SRC/bindings/python/nsrun" "$BATTERY/"
chmod -R a+rX "$BATTERY"
CELLS=0
# battery NAME SANDBOX... -- : the battery in SANDBOX (a bwrap command line ending in --),
# with the test's scratch directory writable there; in full isolation every probe runs.
# A sanitizer build cannot run in the minimal tier (its RLIMIT_DATA backstop is below
# ASan's shadow reservation), so the probes asking for that tier are left out there.
SAN_DESELECT=
[ -n "${NSRUN_TEST_SANITIZER:-}" ] && SAN_DESELECT=minimal
# deselect_args EXPR... : pytest's -k for the probes left out (EXPRs joined by "or"), and
# in $want what pytest's summary line then says
deselect_args() {
	local e="" x
	for x in "$@"; do [ -n "$x" ] && e=${e:+$e or }$x; done
	k=()
	want='[0-9]+ passed in '
	DESELECTED=$e
	[ -n "$e" ] && k=(-k "not ($e)") && want='[0-9]+ passed, [0-9]+ deselected in '
	return 0
}
battery() {
	local name=$1 k want
	shift
	local sb=("$@")
	deselect_args "$SAN_DESELECT"
	NSRUN_TEST_GUARD=300 run_cmd "${sb[@]::${#sb[@]}-1}" --bind "$TESTTMP" "$TESTTMP" -- "${env[@]}" NSRUN="$NS" \
		TMPDIR="$SCRATCH" PYTHONPATH="$BATTERY" /usr/bin/python3 -m pytest -q -p no:cacheprovider -rs \
		"${k[@]+"${k[@]}"}" --basetemp "$SCRATCH/pytest-$((++CELLS))" "$BATTERY/test_isolation.py"
	assert_match "  ... examples/test_isolation.py passes there${DESELECTED:+ (but for: $DESELECTED)} ($name)" \
		"(^|
)$want" "$OUT"
}

# battery_outside NAME DESELECT SANDBOX... : the battery with the harness outside SANDBOX (a
# command prefix) and every nsrun it starts inside it, through a wrapper given as $NSRUN:
# for the sandboxes whose filter denies the harness's own calls (its fixtures serve TCP on
# the host's loopback), as an agent's harness calling nsrun in the agent's sandbox would.
# DESELECT: a pytest -k expression of the probes left out there, or "" for none
battery_outside() {
	local name=$1 wrapper=$SCRATCH/nsrun-in-$((CELLS + 1)) k want
	deselect_args "$2" "$SAN_DESELECT"
	shift 2
	shift ${#AGENT[@]}      # the harness is already the agent's user
	{
		echo '#!/bin/sh'
		printf 'exec'
		# (BATTERY_WHOLE=1: the arguments are the whole command but nsrun's own)
		if [ -n "${BATTERY_WHOLE:-}" ]; then printf ' %q' "$@"; else printf ' %q' "$@" "${env[@]}" "$NS"; fi
		printf ' "$@"\n'
	} >"$wrapper"
	chmod 755 "$wrapper"
	NSRUN_TEST_GUARD=300 run_cmd "${AGENT[@]+"${AGENT[@]}"}" "${env[@]}" NSRUN="$wrapper" TMPDIR="${BATTERY_TMPDIR:-$SCRATCH}" \
		PYTHONPATH="$BATTERY" /usr/bin/python3 -m pytest -q -p no:cacheprovider -rs "${k[@]+"${k[@]}"}" \
		--basetemp "$SCRATCH/pytest-$((++CELLS))" "$BATTERY/test_isolation.py"
	assert_match "  ... examples/test_isolation.py passes through it${DESELECTED:+ (but for: $DESELECTED)} ($name)" \
		"(^|
)$want" "$OUT"
}

# cell NAME SANDBOX... -- : nsrun check and a run inside SANDBOX (a command prefix): both
# work, check exits 0 and the run prints uid 65534; check's verdict is the run's.
cell() {
	local name=$1
	shift
	run_cmd "$@" "${env[@]}" "$NS" check
	local check_rc=$RC check_out=$OUT
	run_cmd "$@" "${env[@]}" "$NS" --image python -- python3 -c "$SNIPPET"
	assert_eq "$name: nsrun check exits 0 (a default run works, full isolation)" 0 "$check_rc"
	assert_match "  ... its container start is a run's" '(^|
)container start: ok \(' "$check_out"
	assert_eq "  ... and a run there works, as uid 65534" "0 65534" "$RC $OUT"
	assert_eq "  ... check's verdict is the run's" "$([ "$check_rc" != 2 ] && echo works || echo fails)" \
		"$([ "$RC" = 0 ] && echo works || echo fails)"
	LAST_CHECK=$check_out
}

# ---- host root's bwrap: it maps only its uid 0, to host uid 0 (65534 is not mapped);
# a container there would be host root: every tier refuses, and check says so
if $root; then
	bw_root=(bwrap --unshare-user --unshare-pid --die-with-parent --ro-bind / / --proc /proc --dev /dev --)
	run_cmd "${bw_root[@]}" cat /proc/self/uid_map
	assert_eq "control: root's bwrap maps only uid 0, to host uid 0" "0 0 1" "$(xargs <<<"$OUT")"
	run_cmd "${bw_root[@]}" "${env[@]}" "$NS" --image python -- python3 -c "$SNIPPET"
	assert_eq "in root's bwrap a run is refused (125) and nothing runs" "125 " "$RC $OUT"
	assert_nsrun_error "  ... with one error line and a hint"
	assert_match "  ... naming host root" "^nsrun: the payload's host uid: uid 0 here is host root" "$ERR"
	assert_match "  ... and the fix" '(^|
)nsrun: hint: run nsrun as an unprivileged user' "$ERR"
	for t in reduced minimal; do
		run_cmd "${bw_root[@]}" "${env[@]}" "$NS" --isolation "$t" --image python -- python3 -c "$SNIPPET"
		assert_eq "  ... --isolation $t too (125, nothing runs)" "125 " "$RC $OUT"
	done
	run_cmd "${bw_root[@]}" "${env[@]}" "$NS" check
	assert_eq "  ... and nsrun check exits 2 (nothing would run)" 2 "$RC"
	assert_match "  ... naming the same cause" "(^|
)container start: missing: the payload's host uid: uid 0 here is host root" "$OUT"
	run_cmd bwrap --unshare-user --uid 1000 --gid 1000 --unshare-pid --die-with-parent --ro-bind / / --proc /proc \
		--dev /dev -- "${env[@]}" "$NS" --image python -- python3 -c "$SNIPPET"
	assert_eq "  ... as any uid of root's bwrap (--uid 1000): refused (125)" "125 " "$RC $OUT"
	assert_match "  ... naming it" "^nsrun: the payload's host uid: uid 1000 here is host root" "$ERR"
	run_cmd "${AGENT[@]}" "${bw_root[@]}" "${env[@]}" "$NS" --image python -- python3 -c "$SNIPPET"
	assert_eq "control: the same bwrap started by an unprivileged user runs it, as uid 65534" "0 65534" "$RC $OUT"
fi

# ---- a) the source tree hidden: the binary alone, no profile directory
hide=(--tmpfs "$SRC")
for d in "$(dirname "$NSRUN")" "${NSRUN_SECCOMP_PROFILES:-}"; do
	[ -n "$d" ] && [ -d "$d" ] && [[ $d != "$SRC" && $d != "$SRC"/* ]] && hide+=(--tmpfs "$d")
done
bw_hidden=("${AGENT[@]+"${AGENT[@]}"}" bwrap --unshare-user --unshare-pid --die-with-parent --ro-bind / / --bind /proc /proc "${hide[@]}"
	--dev /dev --)
cell "source tree hidden" "${bw_hidden[@]}"
battery "source tree hidden" "${bw_hidden[@]}"
assert_match "  ... its profile is the built-in one" '(^|
)seccomp profile: ok \(built-in default \(compiled into nsrun\)' "$LAST_CHECK"
run_cmd "${bw_hidden[@]}" "${env[@]}" "$NS" seccomp check default
assert_match "  ... and seccomp check says so" '^profile: built-in default \(compiled into nsrun\)' "$OUT"
run_cmd "${bw_hidden[@]}" env NSRUN_SECCOMP_PROFILES="$SRC/seccomp-profiles" NSRUN_IMAGES="$NSRUN_IMAGES" \
	"$NS" --image python -- true
assert_eq "control: the tree is hidden there (NSRUN_SECCOMP_PROFILES into it fails: 125)" 125 "$RC"
assert_match "  ... naming the variable and the file" \
	"^nsrun: NSRUN_SECCOMP_PROFILES: open seccomp profile \"$SRC/seccomp-profiles/default.json\"" "$ERR"
run_cmd "${bw_hidden[@]}" "${env[@]}" "$NS" --debug --image python -- true
assert_match "  ... and --debug says where the profile came from" \
	'(^|
)nsrun: debug: seccomp profile built-in default \(compiled into nsrun\)' "$ERR"

# ---- plain bwrap --unshare-all with its own /proc (the issue's second row; 22-nesting.t
# has its properties one by one): the same check, run and battery
bw_plain=("${AGENT[@]+"${AGENT[@]}"}" bwrap --unshare-all --die-with-parent --ro-bind / / --dev /dev --proc /proc --)
cell "plain bwrap --unshare-all --proc /proc" "${bw_plain[@]}"
battery "plain bwrap --unshare-all" "${bw_plain[@]}"

# ---- b) bwrap --unshare-pid without --proc: /proc of another pid namespace
bw_noproc=("${AGENT[@]+"${AGENT[@]}"}" bwrap --unshare-user --unshare-pid --die-with-parent --ro-bind / / --bind /proc /proc --dev /dev --)
cell "bwrap --unshare-pid without --proc" "${bw_noproc[@]}"
battery "bwrap --unshare-pid without --proc" "${bw_noproc[@]}"
# shellcheck disable=SC2016
run_cmd "${bw_noproc[@]}" sh -c 'read -r pid rest </proc/self/stat; echo "$$ $pid"'
read -r own seen <<<"$OUT"
assert_ne "control: there /proc/self names the shell by another number than its own ($OUT)" "$own" "$seen"

# ---- c) Claude Code's sandbox
bw_claude=("${AGENT[@]+"${AGENT[@]}"}" bwrap --new-session --die-with-parent --unshare-user --unshare-net --ro-bind / / --dev /dev
	--unshare-pid --proc /proc --)
cell "Claude Code's sandbox (sandbox-runtime)" "${bw_claude[@]}" "$AGENT_SB" claude --
battery_outside "Claude Code's sandbox" "" "${bw_claude[@]}" "$AGENT_SB" claude --
assert_match "  ... lo comes up through a socketpair" \
	'(^|
)container start: ok .*lo up through socketpair\(AF_UNIX\)' "$LAST_CHECK"
pyprobe='import socket
try:
    socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); print("unix allowed")
except PermissionError: print("unix denied")
a, b = socket.socketpair(); a.send(b"x"); print("pair", b.recv(1).decode())'
run_cmd "${bw_claude[@]}" "$AGENT_SB" claude -- /usr/bin/python3 -c "$pyprobe"
assert_eq "control: there socket(AF_UNIX) is denied, a stream socketpair allowed" "unix denied
pair x" "$OUT"
run_cmd "${bw_claude[@]}" "$AGENT_SB" none -- /usr/bin/python3 -c "$pyprobe"
assert_eq "  ... and without the filter allowed" "unix allowed
pair x" "$OUT"

# ---- d) Codex's linux-sandbox
bw_codex=("${AGENT[@]+"${AGENT[@]}"}" bwrap --new-session --die-with-parent --unshare-user --ro-bind / / --dev /dev --unshare-pid
	--unshare-net --proc /proc --)
cell "Codex's linux-sandbox network filter" "${bw_codex[@]}" "$AGENT_SB" codex --
# the payload inherits Codex's filter (seccomp(2): filters stay across execve), which denies
# it every socket but AF_UNIX and send(2): the network probes cannot even make their
# sockets there (the control below shows the denial), so they are left out
battery_outside "Codex's linux-sandbox" network "${bw_codex[@]}" "$AGENT_SB" codex --
pyprobe='import socket
try:
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM); print("inet allowed")
except PermissionError: print("inet denied")
a, b = socket.socketpair()
try:
    a.send(b"x"); print("send allowed")
except PermissionError: print("send denied")'
run_cmd "${bw_codex[@]}" "$AGENT_SB" codex -- /usr/bin/python3 -c "$pyprobe"
assert_eq "control: there AF_INET sockets and send(2) are denied" "inet denied
send denied" "$OUT"
run_cmd "${bw_codex[@]}" "$AGENT_SB" none -- /usr/bin/python3 -c "$pyprobe"
assert_eq "  ... and without the filter allowed" "inet allowed
send allowed" "$OUT"

# ---- e) nsrun inside nsrun, only the binary mounted
nested=(--allow-nested --image python -v "$alone:/opt/nsrun:ro" -v "$NSRUN_IMAGES/python/rootfs:/images/python:ro"
	-e LD_LIBRARY_PATH=/opt/nsrun -e ASAN_OPTIONS=detect_leaks=0)
[ -n "${NSRUN_TEST_SANITIZER:-}" ] && nested+=(--memory 0)
run_nsrun "${nested[@]}" -- /opt/nsrun/nsrun check
check_rc=$([ "$RC" = 0 ] && echo works || echo fails)
assert_eq "nsrun in nsrun, the binary alone: check exits 0" 0 "$RC"
assert_match "  ... with the built-in profile" '(^|
)seccomp profile: ok \(built-in default' "$OUT"
run_nsrun "${nested[@]}" -- /opt/nsrun/nsrun --rootfs /images/python -- python3 -c "$SNIPPET"
assert_eq "  ... and the inner run works, as uid 65534" "0 65534" "$RC $OUT"
assert_eq "  ... check's verdict is the run's" "$check_rc" "$([ "$RC" = 0 ] && echo works || echo fails)"
# the battery, its harness outside and every nsrun it starts inside the outer run,
# which sees the image store and the harness's temporary files (and nothing of nsrun's
# cache: a writable volume may not reach it); the probe that asks for the reduced tier
# is left out: the outer run's filter denies chroot(2), which that tier needs (full
# is what this cell gets)
NTMP=$SCRATCH/nested-tmp
mkdir -p "$NTMP"
$root && chown 65534:65534 "$NTMP"
BATTERY_WHOLE=1 BATTERY_TMPDIR=$NTMP battery_outside "nsrun in nsrun" lower_tier "${AGENT[@]+"${AGENT[@]}"}" "${env[@]}" "$NS" --allow-nested --memory 0 --pids-limit 0 \
	--timeout 120 --image python -v "$alone:/opt/nsrun:ro" -v "$NSRUN_IMAGES/python:/images/python:ro" \
	-v "$NTMP:$NTMP:rw" -e NSRUN_IMAGES=/images -e LD_LIBRARY_PATH=/opt/nsrun -e ASAN_OPTIONS=detect_leaks=0 \
	-- /opt/nsrun/nsrun

done_testing
