# tests/lib.sh — TAP helpers for nsrun's integration and security tests (bash).
#
# Source it from a test:   . "$(dirname "$0")/../lib.sh"
#
# Inputs (environment):
#   NSRUN                  nsrun binary (default: ../build/nsrun relative to tests/, else `nsrun` on PATH)
#   NSRUN_PROBE            static nsrun-probe (default: ../build/nsrun-probe, tests/probe/nsrun-probe,
#                          else compiled from tests/probe/nsrun-probe.c into a temp dir)
#   NSRUN_IMAGES           image store holding `python` (default: /var/tmp/nsrun-check/images if it
#                          exists, else nsrun's own default)
#   NSRUN_OCI_IMAGES       the redis:7 and postgres:16 OCI test images (make oci-test-images;
#                          default: oci-images beside the NSRUN_IMAGES store)
#   NSRUN_TESTS_MUST_WORK  1 = every skip is a failure (CI)
#   NSRUN_TEST_GUARD       seconds before a hung nsrun is killed (default 60)
#   NSRUN_LEAK_IGNORE      ERE of /tmp entry names that are never leaks (other tools' scratch files)
#
# Everything is located relative to this file, so a copy of tests/ anywhere works.

set -u
exec </dev/null   # a payload never reads the terminal unless a test passes stdin explicitly

# Debian's tools first: the tests want its python3 (with jsonschema, redis, psycopg2),
# bwrap and podman; a pyenv or venv python3 first on PATH starts 2-3 times slower
# (16-json.t calls it sixty times) and lacks those modules
PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH
export PATH

TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TEST_NAME=$(basename "$0")

_T_NUM=0
_T_FAILED=0
_T_PLANNED=

# ---------------------------------------------------------------- scratch space

# One private scratch directory per test file, removed on exit. World-traversable so the
# payload (a different uid when the tests run as root) can reach volumes under it.
TESTTMP=$(mktemp -d "${TMPDIR:-/tmp}/nsrun-tests.XXXXXX") || { echo "Bail out! mktemp failed"; exit 255; }
chmod 755 "$TESTTMP"
_T_CLEANUPS=()

at_exit() { _T_CLEANUPS+=("$1"); }

_t_exit() {
	local rc=$?
	local c
	for c in "${_T_CLEANUPS[@]+"${_T_CLEANUPS[@]}"}"; do eval "$c" >/dev/null 2>&1 || true; done
	if [ -n "${_WATCHDOG_PID:-}" ]; then kill "$_WATCHDOG_PID" 2>/dev/null || true; fi
	rm -rf "$TESTTMP" 2>/dev/null || { chmod -R u+rwX "$TESTTMP" 2>/dev/null; rm -rf "$TESTTMP" 2>/dev/null; } || true
	if [ -z "$_T_PLANNED" ] && [ "$_T_NUM" -gt 0 ] && [ -z "${_T_DONE:-}" ]; then
		echo "1..$_T_NUM"
	fi
	if [ "$_T_FAILED" -gt 0 ] && [ "$rc" -eq 0 ]; then rc=1; fi
	exit "$rc"
}
trap _t_exit EXIT

# ---------------------------------------------------------------- TAP core

plan() { _T_PLANNED=$1; echo "1..$1"; }

done_testing() {
	_T_DONE=1
	[ -z "$_T_PLANNED" ] && echo "1..$_T_NUM"
	return 0
}

diag() {
	local l
	while IFS= read -r l; do echo "# $l" >&2; done <<<"$*"
}

ok() {
	_T_NUM=$((_T_NUM + 1))
	echo "ok $_T_NUM - $*"
}

# not_ok DESC [DIAGNOSTIC...]
not_ok() {
	_T_NUM=$((_T_NUM + 1))
	_T_FAILED=$((_T_FAILED + 1))
	echo "not ok $_T_NUM - $1"
	# on stderr too, which prove shows without -v: CI prints these lines again at its end
	echo "# FAILED: ${0##*/} test $_T_NUM - $1" >&2
	shift
	[ $# -gt 0 ] && diag "$@"
	return 0
}

# todo DESC PASSED(0|1) REASON — a known gap: reported, never fails the file
todo() {
	_T_NUM=$((_T_NUM + 1))
	if [ "$2" = 0 ]; then echo "ok $_T_NUM - $1 # TODO $3"; else echo "not ok $_T_NUM - $1 # TODO $3"; fi
}

# skip REASON [DESC]
skip() {
	_T_NUM=$((_T_NUM + 1))
	if [ "${NSRUN_TESTS_MUST_WORK:-0}" = 1 ]; then
		_T_FAILED=$((_T_FAILED + 1))
		echo "not ok $_T_NUM - ${2:-skipped} (skip forbidden by NSRUN_TESTS_MUST_WORK=1: $1)"
	else
		echo "ok $_T_NUM # SKIP $1"
	fi
}

# skip_all REASON — the whole file cannot run here
skip_all() {
	if [ "${NSRUN_TESTS_MUST_WORK:-0}" = 1 ]; then
		echo "1..1"
		echo "not ok 1 - $TEST_NAME cannot run (skip forbidden by NSRUN_TESTS_MUST_WORK=1): $1"
		_T_DONE=1 _T_PLANNED=1 _T_FAILED=1
		exit 1
	fi
	echo "1..0 # SKIP $1"
	_T_DONE=1 _T_PLANNED=0
	exit 0
}

# check DESC CMD... — passes when CMD succeeds
check() {
	local desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc" "command failed: $*"; fi
}

assert_eq() {
	if [ "$2" == "$3" ]; then
		ok "$1"
	else
		not_ok "$1" "expected: '$2'" "  actual: '$3'" "$(_ctx)"
	fi
}

assert_ne() {
	if [ "$2" != "$3" ]; then ok "$1"; else not_ok "$1" "expected anything but: '$2'" "$(_ctx)"; fi
}

# assert_match DESC REGEX ACTUAL (bash ERE, unanchored unless the regex anchors)
assert_match() {
	if [[ $3 =~ $2 ]]; then
		ok "$1"
	else
		not_ok "$1" "expected to match: /$2/" "  actual: '$3'" "$(_ctx)"
	fi
}

assert_not_match() {
	if [[ $3 =~ $2 ]]; then
		not_ok "$1" "expected NOT to match: /$2/" "  actual: '$3'" "$(_ctx)"
	else
		ok "$1"
	fi
}

# context of the last run, for diagnostics
_ctx() {
	[ -n "${LAST_CMD:-}" ] || return 0
	printf 'last run: %s\n  rc=%s\n  stdout: %s\n  stderr: %s' "$LAST_CMD" "${RC:-}" \
		"$(printf '%s' "${OUT:-}" | head -c 1500)" "$(printf '%s' "${ERR:-}" | head -c 1500)"
}

# ---------------------------------------------------------------- inputs

_find_nsrun() {
	if [ -n "${NSRUN:-}" ]; then echo "$NSRUN"; return; fi
	if [ -x "$TESTS_DIR/../build/nsrun" ]; then (cd "$TESTS_DIR/../build" && echo "$PWD/nsrun"); return; fi
	command -v nsrun 2>/dev/null || echo "$TESTS_DIR/../build/nsrun"
}
NSRUN=$(_find_nsrun)
export NSRUN

if [ -z "${NSRUN_IMAGES:-}" ] && [ -d /var/tmp/nsrun-check/images ]; then
	NSRUN_IMAGES=/var/tmp/nsrun-check/images
fi
[ -n "${NSRUN_IMAGES:-}" ] && export NSRUN_IMAGES
NSRUN_OCI_IMAGES=${NSRUN_OCI_IMAGES:-$(dirname "${NSRUN_IMAGES:-/var/tmp/nsrun-check/images}")/oci-images}

NSRUN_LEAK_IGNORE=${NSRUN_LEAK_IGNORE:-'^(bash_tool_|bash_jobs|cc[A-Za-z0-9]{6}\.|tmp[a-z0-9_]{8}$|hsperfdata_)'}

# The probe: an existing static binary, else compiled once into a per-user cache.
_find_probe() {
	local c
	local src="$TESTS_DIR/probe/nsrun-probe.c"
	if [ -n "${NSRUN_PROBE:-}" ]; then echo "$NSRUN_PROBE"; return 0; fi
	# a prebuilt probe is used only if it is not older than the source next to it
	for c in "$TESTS_DIR/../build/nsrun-probe" "$TESTS_DIR/probe/nsrun-probe"; do
		[ -x "$c" ] && [ -f "$c" ] && { [ ! -f "$src" ] || [ ! "$src" -nt "$c" ]; } && { echo "$c"; return 0; }
	done
	local cache out
	cache="${TMPDIR:-/tmp}/nsrun-probe-cache.$(id -u)"
	out="$cache/nsrun-probe-$(cksum <"$src" | cut -d' ' -f1)"
	if [ ! -x "$out" ]; then
		mkdir -p "$cache" && chmod 700 "$cache" || return 1
		cc -static -O2 -Wall -Wextra -o "$out.$$" "$src" 2>"$cache/build.log" && mv -f "$out.$$" "$out" || return 1
	fi
	echo "$out"
}

# Copy the probe into a private directory that the payload can read; that directory is
# what run_probe mounts at /mnt (never a build tree with other things in it).
PROBE_DIR=
PROBE=
_setup_probe() {
	[ -n "$PROBE_DIR" ] && return 0
	local src
	src=$(_find_probe) || return 1
	PROBE_DIR="$TESTTMP/probe"
	mkdir -p "$PROBE_DIR" && cp "$src" "$PROBE_DIR/nsrun-probe" || return 1
	chmod 755 "$PROBE_DIR" "$PROBE_DIR/nsrun-probe"
	PROBE="$PROBE_DIR/nsrun-probe"
}

# assert_nsrun_error DESC — $ERR is one "nsrun: <what>: <why>" line, optionally followed by
# "nsrun: hint: ..." lines (STYLE: printed once by main, then the hint)
assert_nsrun_error() {
	local first rest
	first=$(head -n 1 <<<"$ERR")
	rest=$(tail -n +2 <<<"$ERR" | grep -v '^nsrun: hint: ' || true)
	if [[ $first == "nsrun: "* && $first != "nsrun: hint:"* ]] && [ -z "$rest" ]; then
		ok "$1"
	else
		not_ok "$1" "want one 'nsrun: ' line (+ optional 'nsrun: hint:' lines)" "$(_ctx)"
	fi
}

# ---------------------------------------------------------------- running things

# run_cmd CMD... — run with a hang guard; sets OUT, ERR, RC, ELAPSED (seconds, float).
# Called thousands of times a suite: bash's own clock (EPOCHREALTIME, microseconds) and
# $(<file), no date, awk or cat started around each command
run_cmd() {
	local t0 t1 cs
	LAST_CMD="$*"
	t0=${EPOCHREALTIME/[.,]/}
	timeout -k 5 "${NSRUN_TEST_GUARD:-60}" "$@" >"$TESTTMP/.out" 2>"$TESTTMP/.err"
	RC=$?
	t1=${EPOCHREALTIME/[.,]/}
	cs=$(((t1 - t0 + 5000) / 10000))   # hundredths of a second
	printf -v ELAPSED '%d.%02d' $((cs / 100)) $((cs % 100))
	OUT=$(<"$TESTTMP/.out")
	ERR=$(<"$TESTTMP/.err")
	return 0
}

# wait_socket PATH — until a server accepts on the unix socket PATH (generous: 10 s)
wait_socket() {
	local _
	for _ in $(seq 100); do
		/usr/bin/python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])' "$1" 2>/dev/null &&
			return 0
		sleep 0.1
	done
	return 1
}

# run_nsrun ARGS... — "$NSRUN" ARGS with the guard (stdin: whatever the caller redirects)
run_nsrun() { run_cmd "$NSRUN" "$@"; }

# run_probe [NSRUN-OPTIONS...] -- PROBE-ARGS...  (inside the python image, probe at /mnt)
run_probe() {
	local opts=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	run_nsrun --image python -v "$PROBE_DIR:/mnt:ro" "${opts[@]+"${opts[@]}"}" -- /mnt/nsrun-probe "$@"
}

# run_host_probe PROBE-ARGS... — the same probe on the host (the control)
run_host_probe() { run_cmd "$PROBE" "$@"; }

# Background run for signal tests: start_nsrun ARGS...; sets NSRUN_PID; wait_nsrun sets RC/OUT/ERR.
start_nsrun() {
	LAST_CMD="$NSRUN $*"
	"$NSRUN" "$@" >"$TESTTMP/.bgout" 2>"$TESTTMP/.bgerr" &
	NSRUN_PID=$!
	(sleep "${NSRUN_TEST_GUARD:-60}"; kill -KILL "$NSRUN_PID") >/dev/null 2>&1 &
	_WATCHDOG_PID=$!
}

wait_nsrun() {
	{ wait "$NSRUN_PID"; RC=$?; } 2>/dev/null   # no "Killed" job message
	kill "$_WATCHDOG_PID" 2>/dev/null
	wait "$_WATCHDOG_PID" 2>/dev/null
	_WATCHDOG_PID=
	OUT=$(<"$TESTTMP/.bgout")
	ERR=$(<"$TESTTMP/.bgerr")
}

# wait_for_output REGEX [SECONDS] — poll the background run's stdout
wait_for_output() {
	local i n=$(( ${2:-10} * 10 ))
	for ((i = 0; i < n; i++)); do
		grep -Eq "$1" "$TESTTMP/.bgout" 2>/dev/null && return 0
		kill -0 "$NSRUN_PID" 2>/dev/null || { grep -Eq "$1" "$TESTTMP/.bgout" 2>/dev/null; return; }
		sleep 0.1
	done
	return 1
}

# probe output helpers
probe_errno() { sed -n 's/^[a-z0-9-]*: denied \([A-Z0-9]*\).*/\1/p' <<<"$1" | head -1; }

# The last run's outcome as one line: the probe's result line, or how it died
# ("killed by signal 31 (...)"): a filter that kills (SIGSYS) prints nothing.
probe_outcome() {
	if [ "$RC" -ge 128 ] && [ "$RC" -lt 160 ]; then
		echo "killed by signal $((RC - 128)) ${OUT:+($(head -1 <<<"$OUT"))}"
	else
		head -1 <<<"$OUT"
	fi
}

# foreign_abi_verdict PROBE UNCONFINED DEFAULT — is a call through a foreign ABI (int 0x80:
# the i386 table) denied by the default profile?  UNCONFINED and DEFAULT are probe_outcome
# lines of the same probe with seccomp=unconfined and with the default profile.  What the
# kernel does decides which answer is right, so both kinds of kernel are judged here (and
# unit-tested on canned outcomes in integration/00-test-lib.t):
#   IA-32 emulation on: unconfined the call works, so the control holds; the profile names
#     only x86_64, so the filter kills (SIGSYS, signal 31) or answers EPERM;
#   emulation off (CONFIG_IA32_EMULATION=n, ia32_emulation=0, or a hypervisor that does not
#     deliver int 0x80): the kernel refuses before the filter sees the call; no control is
#     possible, the default run must end as the unconfined one does, and never work.
# Prints "ok: why" or "not ok: why"; returns 0 for ok.
foreign_abi_verdict() {
	local p=$1 unc=$2 def=$3
	if [[ $unc == "$p: ok"* ]]; then
		if [[ $def == "killed by signal 31"* || $def == "$p: denied EPERM"* ]]; then
			echo "ok: emulated ABI works unconfined ($unc); the filter denies it ($def)"
			return 0
		fi
		echo "not ok: emulated ABI works unconfined ($unc), but the default profile gave '$def' (want SIGSYS or EPERM)"
		return 1
	fi
	if [[ $def == "$p: ok"* ]]; then
		echo "not ok: the call works under the default profile ($def) but not unconfined ($unc)"
		return 1
	fi
	if [ "$unc" != "$def" ]; then
		echo "not ok: the kernel refuses the ABI (unconfined: '$unc'), so the default run must end the same, not '$def'"
		return 1
	fi
	echo "ok: the kernel itself refuses the ABI, with or without the filter ($def)"
	return 0
}

# ---------------------------------------------------------------- preconditions

require_nsrun() {
	[ -x "$NSRUN" ] || skip_all "nsrun binary not found or not executable: $NSRUN (set NSRUN or run make)"
}

require_probe() {
	_setup_probe || skip_all "no static nsrun-probe: set NSRUN_PROBE or install a static libc (cc -static failed)"
}

# require_image [NAME] — the image store must hold NAME (default python)
require_image() {
	local name=${1:-python}
	run_nsrun images
	if [ "$RC" != 0 ] || ! grep -Eq "(^|[[:space:]])$name([[:space:]]|$)" <<<"$OUT"; then
		skip_all "image '$name' not installed (NSRUN_IMAGES=${NSRUN_IMAGES:-unset}; nsrun images rc=$RC: $(head -c 300 <<<"$OUT$ERR"))"
	fi
}

# require_userns — probe once that an unprivileged user namespace can be made
_USERNS_CAUSE=
_userns_ok() {
	if [ -z "${_USERNS_CHECKED:-}" ]; then
		_USERNS_CHECKED=1
		local out max
		max=$(cat /proc/sys/user/max_user_namespaces 2>/dev/null || echo '?')
		if [ "$max" = 0 ]; then
			_USERNS_CAUSE="user.max_user_namespaces=0"
		elif [ "$(cat /proc/sys/kernel/unprivileged_userns_clone 2>/dev/null || echo 1)" = 0 ]; then
			_USERNS_CAUSE="kernel.unprivileged_userns_clone=0"
		elif [ "$(cat /proc/sys/kernel/apparmor_restrict_unprivileged_userns 2>/dev/null || echo 0)" = 1 ] && \
		     ! unshare -Ur true 2>/dev/null; then
			_USERNS_CAUSE="kernel.apparmor_restrict_unprivileged_userns=1"
		elif ! out=$(unshare -Ur sh -c 'cat /proc/self/uid_map' 2>&1); then
			_USERNS_CAUSE="unshare -Ur failed: $out"
		fi
	fi
	[ -z "$_USERNS_CAUSE" ]
}

require_userns() {
	_userns_ok || skip_all "no user namespaces: $_USERNS_CAUSE"
}

# standard preamble for tests that run the probe inside the python image
require_all() {
	require_nsrun
	require_userns
	require_probe
	require_image python
}

# ---------------------------------------------------------------- leak detection

# Mounts (mount point, fs type, source) of our mount namespace.
_snap_mounts() {
	awk '{ for (i = 7; i <= NF; i++) if ($i == "-") break; print $5, $(i+1), $(i+2) }' /proc/self/mountinfo | sort
}

# Processes of our uid that look like containers or nsrun: a pid namespace other than
# ours, or nsrun/nsrun-probe in comm/cmdline, or pasta (comm passt*: --network pasta). Kernel threads and this shell's own
# helpers are excluded. Prints "pid comm".  Bash builtins only in the loop (read, mapfile,
# test -ef on the namespace links): a few programs per process took seconds a call on a
# loaded host, and the leak checks call it more than once.
_snap_procs() {
	local IFS=$' \t\n' me p k v comm cmd a
	me=$(id -u)
	for p in /proc/[0-9]*; do
		p=${p#/proc/}
		[ "$p" = "$$" ] || [ "$p" = "$BASHPID" ] && continue
		k=
		{ while read -r k v _; do [ "$k" = Uid: ] && break; done; } 2>/dev/null <"/proc/$p/status" || continue
		[[ $k == Uid: && $v == "$me" ]] || continue
		mapfile -d '' -t a 2>/dev/null <"/proc/$p/cmdline" || continue
		[ ${#a[@]} -gt 0 ] || continue                # kernel thread or zombie
		cmd="${a[*]} "
		IFS= read -r comm 2>/dev/null <"/proc/$p/comm" || continue
		# (-e and -ef follow the link as readlink(1) reads it: both need ptrace read access)
		if [ -e "/proc/$p/ns/pid" ] && ! [ "/proc/$p/ns/pid" -ef /proc/self/ns/pid ]; then
			echo "$p $comm [other pidns] $cmd"
		elif [[ $comm == nsrun* || $comm == passt* || $cmd == *nsrun-probe* || $cmd =~ (^|/)nsrun( |$) ]]; then
			echo "$p $comm $cmd"
		fi
	done | sort
}

# Temp files: nsrun-named entries of $TMPDIR and /tmp, and every entry of /tmp owned by us.
# An unprivileged user's nsrun makes nothing that root owns: in the rootless suite a
# root-owned entry is another job's (CI runs make check-asan, make fuzz and the VM tier
# as root beside it), never a leak of its own.  NSRUN_TEST_BESIDE_UID (CI, for the root
# suite it runs beside the rootless one) names the uid of a suite run beside this one:
# its nsrun-named entries are that suite's.
_snap_tmp() {
	local d me others=()
	me=$(id -u)
	[ "$me" = 0 ] || others=(! -uid 0)
	[ -z "${NSRUN_TEST_BESIDE_UID:-}" ] || [ "$NSRUN_TEST_BESIDE_UID" = "$me" ] || others+=(! -uid "$NSRUN_TEST_BESIDE_UID")
	for d in "${TMPDIR:-/tmp}" /tmp; do
		find "$d" -mindepth 1 -maxdepth 1 \( -name '*nsrun*' "${others[@]}" -o -uid "$me" \) -printf '%p\n' 2>/dev/null
	done | grep -v -F "$TESTTMP" | grep -v '/nsrun-probe-cache\.' | grep -v '/nsrun-tests\.' \
	     | awk -v re="$NSRUN_LEAK_IGNORE" '{ n = $0; sub(/.*\//, "", n); if (n !~ re) print }' | sort -u
}

snapshot_host() {
	_SNAP_MOUNTS=$(_snap_mounts)
	_SNAP_PROCS=$(_snap_procs)
	_SNAP_TMP=$(_snap_tmp)
}

# new lines of $2 that are not in $1
_new_lines() { comm -13 <(printf '%s\n' "$1" | sort -u) <(printf '%s\n' "$2" | sort -u) | grep -v '^$'; }

# assert_no_leaks DESC — compare with the last snapshot_host (retries for 3 s so that
# teardown that is merely slow is not reported, but something that stays is)
assert_no_leaks() {
	local desc=${1:-nothing left on the host}
	local i m p t
	for i in 1 2 3 4 5 6; do
		m=$(_new_lines "$_SNAP_MOUNTS" "$(_snap_mounts)")
		p=$(_new_lines "$(cut -d' ' -f1 <<<"$_SNAP_PROCS")" "$(_snap_procs | cut -d' ' -f1)")
		t=$(_new_lines "$_SNAP_TMP" "$(_snap_tmp)")
		[ -z "$m$p$t" ] && break
		sleep 0.5
	done
	[ -n "$p" ] && p=$(_snap_procs | grep -E "^($(tr '\n' '|' <<<"$p" | sed 's/|$//')) ")
	assert_eq "$desc: no new mounts" "" "$m"
	assert_eq "$desc: no container/nsrun processes left" "" "$p"
	assert_eq "$desc: no temp files left" "" "$t"
}

# ---------------------------------------------------------------- misc

# free_port — a currently unused TCP port on 127.0.0.1
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# start_registry DIR — a loopback registry (Debian's docker-registry, or
# $NSRUN_TEST_REGISTRY) storing in DIR/registry, put in docker.io's place by a
# containers-registries.conf(5) mirror entry (DIR/registries.conf, exported as
# CONTAINERS_REGISTRIES_CONF, which skopeo and so nsrun pull and nsrun api honour);
# stopped at exit.  Sets REGISTRY (127.0.0.1:PORT).  Returns 1 if it does not answer.
start_registry() {
	local dir=$1 port _
	port=$(free_port)
	mkdir -p "$dir/registry"
	cat >"$dir/registry.yml" <<EOF
version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $dir/registry
http:
  addr: 127.0.0.1:$port
  secret: nsrun-test-$$
EOF
	"${NSRUN_TEST_REGISTRY:-/usr/bin/docker-registry}" serve "$dir/registry.yml" >"$dir/registry.log" 2>&1 &
	at_exit "kill -KILL $!; wait $!"
	REGISTRY=127.0.0.1:$port
	cat >"$dir/registries.conf" <<EOF
[[registry]]
prefix = "docker.io"
location = "$REGISTRY"
insecure = true
EOF
	export CONTAINERS_REGISTRIES_CONF=$dir/registries.conf
	for _ in $(seq 200); do
		skopeo inspect --raw --tls-verify=false "docker://$REGISTRY/none:1" 2>&1 | grep -q 'manifest unknown\|not found' &&
			return 0
		sleep 0.1
	done
	return 1
}

# push_test_images — the Docker clients' test images redis:7 and postgres:16 (make
# oci-test-images; $NSRUN_OCI_IMAGES)
# pushed to start_registry's registry as docker.io/library/redis:7 and
# library/postgres:16.  Returns skopeo's status.
push_test_images() {
	local oci=$NSRUN_OCI_IMAGES
	skopeo copy --quiet --dest-tls-verify=false "oci:$oci/redis:7" "docker://$REGISTRY/library/redis:7" &&
		skopeo copy --quiet --dest-tls-verify=false "oci:$oci/postgres:16" "docker://$REGISTRY/library/postgres:16"
}

# require_test_images — skip_all unless push_test_images can run
require_test_images() {
	local oci=$NSRUN_OCI_IMAGES t
	for t in skopeo "${NSRUN_TEST_REGISTRY:-/usr/bin/docker-registry}"; do
		command -v "$t" >/dev/null 2>&1 || skip_all "needs $t (make deps)"
	done
	[ -f "$oci/redis/index.json" ] && [ -f "$oci/postgres/index.json" ] ||
		skip_all "no redis:7 and postgres:16 test images in $oci (make oci-test-images)"
}

# elapsed_lt SECONDS — is ELAPSED below SECONDS?
elapsed_lt() { awk -v e="$ELAPSED" -v l="$1" 'BEGIN { exit !(e < l) }'; }

# now_ms — the wall clock in ms
now_ms() { date +%s%3N; }

# watch_witness LOCK OUT — the time a container's processes were killed, apart
# from the time the kernel takes to tear them down (a run's end waits for that:
# millions of mappings or files take seconds under load).  The payload forks a
# witness first, a small process that takes flock(LOCK_EX) on LOCK (a file of a
# volume) and sleeps.  Run in the background: waits up to 12 s for the witness to
# take the lock, then writes into OUT the time, in ms, it lets the lock go: when
# it is killed.
# WITNESS_PY: Python defining witness(LOCK), which forks the witness and returns
# once it holds the lock; a payload script starts with it (printf '%s\n' "$WITNESS_PY")
WITNESS_PY='import fcntl as _fcntl, os as _os, time as _time
def witness(lock):
    r, w = _os.pipe()
    if _os.fork() == 0:
        fd = _os.open(lock, _os.O_RDONLY)
        _fcntl.flock(fd, _fcntl.LOCK_EX)
        _os.write(w, b"l")
        _time.sleep(600)
        _os._exit(0)
    _os.read(r, 1)
    _os.close(r)
    _os.close(w)'
watch_witness() {
	local i
	for ((i = 0; i < 600; i++)); do
		flock -n "$1" true || break
		sleep 0.02
	done
	flock "$1" true
	now_ms >"$2"
}

# The supplementary groups a payload with gid $1 is expected to show, sorted, unique,
# joined by $2 (default space). None when the caller is root: nsrun drops them before
# clone. An unprivileged caller cannot drop its own (setgroups is denied in its user
# namespace, user_namespaces(7)): the kernel shows its primary group as the payload's
# gid (both map to the caller's gid) and any other group as the overflow gid 65534.
expected_groups() {
	local pgid=$1 sep=${2:- } g
	[ "$(id -u)" = 0 ] && return 0
	for g in $(awk '$1 == "Groups:" { $1 = ""; print }' /proc/self/status); do
		if [ "$g" = "$(id -g)" ]; then echo "$pgid"; else echo 65534; fi
	done | sort -n | uniq | paste -sd"$sep" -
}

# Sorts and de-duplicates a group list separated by spaces or commas; joins with $2.
norm_groups() {
	tr ', ' '\n\n' <<<"$1" | grep -v '^$' | sort -n | uniq | paste -sd"${2:- }" -
}

# ---------------------------------------------------------------- nsrun api suites

# api_env — the Docker API suites' (27, 32, 33) own world: XDG_RUNTIME_DIR
# ($TESTTMP/run, where their services' state goes: STATE), the API's socket SOCK
# and DOCKER_HOST naming it.  api_start then starts the API.
api_env() {
	export XDG_RUNTIME_DIR="$TESTTMP/run"
	mkdir -m 700 "$XDG_RUNTIME_DIR"
	STATE="$XDG_RUNTIME_DIR/nsrun"
	SOCK="$TESTTMP/d.sock"
	export DOCKER_HOST="unix://$SOCK"
}

# api_start [ARG...] — `nsrun api --socket $SOCK --idle-timeout 0 ARG...` in the
# background (API_PID, killed at exit; its stderr in $TESTTMP/api.err), and a
# test that it listens.  An environment for it goes before: VAR=VALUE api_start.
api_start() {
	"$NSRUN" api --socket "$SOCK" --idle-timeout 0 "$@" 2>"$TESTTMP/api.err" &
	API_PID=$!
	at_exit "kill $API_PID"
	check "nsrun api listens on --socket" wait_socket "$SOCK"
}

# state_entries — the service directories under $STATE
state_entries() { find "$STATE" -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null; }

# test_procs GLOB... — "PID CMDLINE" of each live process whose environment has
# this test's XDG_RUNTIME_DIR and whose command line matches one of the globs
test_procs() {
	local p cmd g hit
	for p in $(grep -lz "^XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR\$" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3); do
		cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline") || continue
		hit=
		for g in "$@"; do
			# shellcheck disable=SC2053
			[[ $cmd == $g ]] && hit=1
		done
		[ -n "$hit" ] || continue
		case "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" in "" | Z) continue ;; esac
		echo "$p $cmd"
	done
}

# ---------------------------------------------------------------- image import suites

# image_import_setup [TOOL...] — the set-up of the image import suites
# (security/40-42): TOOL (rootfs-tools/nsrun-image, or $NSRUN_IMAGE_TOOL) and MK
# (security/image/mkimage.py, which writes the images); nsrun, the probe, and
# skopeo umoci jq bwrap bsdtar python3 plus each TOOL given, a missing one failing
# the suite; T ($TESTTMP), STORE ($T/store, not made), a private HOME and
# XDG_RUNTIME_DIR, no NSRUN_IMAGES, and a longer hang guard: imports take
# seconds, tens of them on a busy machine.
# shellcheck disable=SC2034  # TOOL, MK, STORE: for the suites
image_import_setup() {
	local missing=() t
	TOOL=${NSRUN_IMAGE_TOOL:-$TESTS_DIR/../rootfs-tools/nsrun-image}
	MK=$TESTS_DIR/security/image/mkimage.py
	require_nsrun
	require_probe
	for t in skopeo umoci jq bwrap bsdtar python3 "$@"; do
		command -v "$t" >/dev/null 2>&1 || missing+=("$t")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		echo "1..1"
		echo "not ok 1 - $TEST_NAME needs: ${missing[*]} (Debian: apt-get install skopeo umoci jq bubblewrap libarchive-tools python3 attr gzip)"
		exit 1
	fi
	T=$TESTTMP
	export NSRUN_TEST_GUARD=$((${NSRUN_TEST_GUARD:-60} * 5))
	STORE=$T/store
	export HOME=$T/home XDG_RUNTIME_DIR=$T/run PROBE
	unset XDG_DATA_HOME SOURCE_DATE_EPOCH NSRUN_IMAGES
	mkdir -p "$HOME" "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
}
# mk ARG... — (after image_import_setup) MK writes an image; its failure is a not ok
mk() { python3 "$MK" "$@" >"$T/mk.err" 2>&1 || not_ok "mkimage.py $*" "$(cat "$T/mk.err")"; }
# runs NAME — (after image_import_setup) the imported NAME's /bin/hello runs under
# nsrun from STORE (the control)
runs() {
	NSRUN_IMAGES=$STORE run_nsrun --image "$1" -- /bin/hello ids
	[ "$RC" = 0 ]
}

# mkimg NAME JSON — a store image in $S/NAME around the static probe at /bin/hello
# (its image.json: JSON), readable by all
mkimg() {
	local r=$S/$1/rootfs
	mkdir -p "$r/bin" "$r/work" "$r/tmp" "$r/proc" "$r/dev" "$r/sys" "$r/etc"
	cp "$PROBE" "$r/bin/hello"
	printf '%s' "$2" >"$S/$1/image.json"
	chmod -R a+rX,go-w "$S/$1"
}

# serve_layout LAYOUT [STALL] — the image import suites' test registry
# (security/image/registry.py) serving the OCI layout LAYOUT on a free port, RPORT,
# as RPID (killed at exit); with STALL (manifest, blob) it stalls there and makes
# $T/stalled.  Returns once it accepts connections (5 s at most).
serve_layout() {
	local _
	RPORT=$(free_port)
	python3 "$TESTS_DIR/security/image/registry.py" "$RPORT" "$1" "${2:-none}" "$T/stalled" >"$T/registry.log" 2>&1 &
	RPID=$!
	at_exit "kill $RPID 2>/dev/null"
	for _ in $(seq 50); do
		python3 -c "import socket; socket.create_connection(('127.0.0.1', $RPORT))" 2>/dev/null && break
		sleep 0.1
	done
}

# ---------------------------------------------------------------- OCI runtime suites

# oci_probe_bundle DIR IMAGE — the OCI runtime suites' (30, 35) bundle: IMAGE, a
# root file system of the static probe alone (it starts at once; IMAGE made here,
# readable by all), and DIR/bundle over it, its config.json runc's
# `runc spec --rootless`, kept as DIR/template.json, from which oci_config makes
# each case's.  Sets ROOT (DIR/state, the runtime's --root); oci ARG... runs
# `nsrun --root $ROOT ARG...` (run_cmd).  skip_all without runc (make deps).
oci_probe_bundle() {
	local dir=$1 img=$2
	command -v runc >/dev/null || PATH=$PATH:/usr/sbin:/sbin
	command -v runc >/dev/null || skip_all "runc is not installed (make deps): its spec is the bundle's template"
	mkdir -p "$dir/bundle" "$img/etc"
	(cd "$img" && mkdir proc dev sys tmp run && touch etc/hosts etc/hostname etc/resolv.conf &&
		echo 'root:x:0:0:root:/:/nsrun-probe' >etc/passwd && echo 'root:x:0:' >etc/group &&
		cp "$PROBE_DIR/nsrun-probe" .)
	chmod -R a+rX "$img"
	ln -s "$img" "$dir/bundle/rootfs"
	(cd "$dir/bundle" && runc spec --rootless) || skip_all "runc spec --rootless failed"
	cp "$dir/bundle/config.json" "$dir/template.json"
	ROOT=$dir/state
}
oci() { run_cmd "$NSRUN" --root "$ROOT" "$@"; }

# oci_config DIR ARGS-AS-JSON SUITE-EDIT [CASE-EDIT [WORD...]] — DIR/bundle/config.json
# made anew from DIR/template.json: process.args, no terminal, no seccomp, then the
# Python statements SUITE-EDIT and CASE-EDIT run on it (c: the config; argv: the
# WORDs)
oci_config() {
	python3 - "$1/template.json" "$1/bundle/config.json" "$2" "$3" "${4:-}" "${@:5}" <<'EOF'
import json, sys
src, dst, args, suite, edit = sys.argv[1:6]
argv = sys.argv[6:]
c = json.load(open(src))
c["process"]["args"] = json.loads(args)
c["process"]["terminal"] = False
c["linux"].pop("seccomp", None)
exec(suite)
if edit:
    exec(edit)
json.dump(c, open(dst, "w"))
EOF
}

# oci_cleanup — delete --force every container left in $ROOT (at_exit it)
oci_cleanup() {
	local d
	for d in "$ROOT"/*/; do [ -d "$d" ] && "$NSRUN" --root "$ROOT" delete --force "$(basename "$d")"; done
}

# ---------------------------------------------------------------- podman

# podman_private RUNTIME [USER] — a podman of the test's own (23-check-podman, 30 and
# 35): its storage, run, config and temp directories all under P ($TESTTMP/podman),
# RUNTIME its OCI runtime, the cgroupfs manager, no events.  Sets P, podman (its
# argv), as_me (the environment it runs in: as USER through runuser when given and
# root, $P then USER's) and pod ARG... (run_cmd of podman ARG... in it); at exit,
# removes its pods, containers and storage (as root, also the overlay mounts podman
# made of it on the host, and /run/nsrun when nsrun made it) and ends its rootless
# pause process.  podman_import DIR NAME [IMPORT-OPTION...] imports the tree DIR
# as the image NAME (run_cmd).
# shellcheck disable=SC2034  # P, podman: for the suites
podman_private() {
	local runtime=$1 user=${2:-} cache=${XDG_CACHE_HOME:-$TESTTMP/podman/cache} asan=${ASAN_OPTIONS:-}
	[ "$(id -u)" = 0 ] || user=
	# root's seccomp cache and sanitizer options (a log path) are not the user's
	[ -z "$user" ] || { cache=$TESTTMP/podman/cache; asan=; }
	P=$TESTTMP/podman
	mkdir -p "$P/home" "$P/xdg" "$P/tmp"
	chmod 700 "$P/xdg"
	podman=(podman --root "$P/root" --runroot "$P/runroot" --storage-driver overlay --runtime "$runtime"
		--cgroup-manager cgroupfs --events-backend none)
	as_me=(env -i PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin LANG=C.UTF-8 HOME="$P/home" XDG_RUNTIME_DIR="$P/xdg"
		XDG_CONFIG_HOME="$P/home/.config" TMPDIR="$P/tmp" XDG_CACHE_HOME="$cache" ASAN_OPTIONS="$asan")
	if [ -n "$user" ]; then
		as_me=(runuser -u "$user" -- "${as_me[@]}")
		chown -R "$user" "$P"
	fi
	_PODMAN_HAD_RUN_NSRUN=$([ -e /run/nsrun ] && echo 1)
	at_exit _podman_cleanup
}
_podman_cleanup() {
	"${as_me[@]}" "${podman[@]}" pod rm -af -t 0
	"${as_me[@]}" "${podman[@]}" rm -af -t 0
	[ -n "$_PODMAN_HAD_RUN_NSRUN" ] || [ "$(id -u)" != 0 ] || [ ! -d /run/nsrun ] || rmdir /run/nsrun
	"${as_me[@]}" "${podman[@]}" unshare rm -rf "$P/root" "$P/runroot"
	# as root, podman's overlay storage is a mount of the host's (each podman command
	# mounts it again): not left behind
	if [ "$(id -u)" = 0 ]; then
		findmnt -rn -o TARGET | grep "^$P/" | sort -r | while read -r m; do umount -l "$m"; done
		rm -rf "$P/root"
	fi
	local pause
	pause=$(cat "$P/xdg/libpod/tmp/pause.pid" 2>/dev/null) && kill -KILL "$pause"
}
pod() { run_cmd "${as_me[@]}" "${podman[@]}" "$@"; }
# (files only root may read, like /etc/security/opasswd, stay out: nothing needs them)
podman_import() {
	local dir=$1 name=$2
	shift 2
	# shellcheck disable=SC2016 # expanded by that sh
	run_cmd "${as_me[@]}" sh -c 'd=$1; shift; tar -C "$d" --ignore-failed-read -c . | "$@"' sh "$dir" \
		"${podman[@]}" import -q "$@" - "$name"
}
