#!/bin/sh
# guest-test.sh - nsrun's cgroup v2 limit tests, run INSIDE the VM tier's guest
# (tests/vm: pure cgroup v2 at /sys/fs/cgroup, every controller enabled at the root,
# users root and tuser = uid 1000). /init runs it as root from /payload.
#
# usage: guest-test.sh [--nsrun | --smoke | --all]
#   --nsrun   (default) nsrun's --memory, --pids-limit and --cpus enforced by a
#             cgroup, checked against the JSON result and the kernel's own files,
#             as root and as uid 1000 in a delegated subtree
#   --smoke   the VM tier itself, no nsrun run: the cgroup v2 set-up, and memory.max,
#             pids.max, cpu.max enforced on the static probe, as root and as uid 1000
#             in a delegated subtree
#   --all     both
#   --systemd only --nsrun's part with a systemd user manager (a scope for nsrun)
# Files next to it: nsrun-probe (static; required), nsrun (for --nsrun),
# seccomp-profiles/ (optional); for the systemd user manager part of --nsrun: the
# host's systemd, systemctl, busctl, dbus-daemon and session.conf. NSRUN and
# NSRUN_PROBE override the binaries.
# Output: TAP, then the plain line "N passed, N failed"; exit 0 when nothing failed.
# (Internal: "guest-test.sh --as-uid1000 MODE DIR" is the part run as uid 1000.)

HERE=$(cd "$(dirname "$0")" && pwd)
NSRUN=${NSRUN:-$HERE/nsrun}
PROBE=${NSRUN_PROBE:-$HERE/nsrun-probe}
[ -n "${NSRUN_SECCOMP_PROFILES:-}" ] || [ ! -d "$HERE/seccomp-profiles" ] ||
	NSRUN_SECCOMP_PROFILES=$HERE/seccomp-profiles
export NSRUN_SECCOMP_PROFILES
CGROOT=/sys/fs/cgroup
STATE=/tmp/nsrun-vm-tests          # shared by the root and the uid 1000 parts
RESULTS=$STATE/results
ROOTFS=$STATE/rootfs
DELEG=$CGROOT/user-1000            # the subtree delegated to uid 1000
WORK=$STATE/work-$(id -u)
MIB=1048576

# ---------------------------------------------------------------- TAP helpers
# one results file for both users, so the test numbers run on across them
record() { # record ok|fail DESCRIPTION
	echo "$1 $2" >>"$RESULTS"
	n=$(wc -l <"$RESULTS")
	if [ "$1" = ok ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi
}
check() { # check DESCRIPTION COMMAND...: passes when COMMAND succeeds
	d=$1
	shift
	if "$@"; then record ok "$d"; else record fail "$d"; fi
}
diag() { echo "# $*"; }
is() { # is DESCRIPTION GOT WANT
	if [ "$2" = "$3" ]; then record ok "$1"; else record fail "$1"; diag "  got '$2', want '$3'"; fi
}
between() { # between VALUE LOW HIGH: LOW <= VALUE <= HIGH, decimals allowed
	awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v != "" && v + 0 == v && v >= lo && v <= hi) }'
}
int_between() { # int_between VALUE LOW HIGH, integers
	case $1 in "" | *[!0-9]*) return 1 ;; esac
	[ "$1" -ge "$2" ] && [ "$1" -le "$3" ]
}
key() { # key FILE KEY: the value of "KEY value" in a flat keyed file
	sed -n "s/^$2 //p" "$1" 2>/dev/null | head -1
}
uptime_s() { cut -d' ' -f1 /proc/uptime; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b }'; }
vmstat_oom() { awk '$1 == "oom_kill" { print $2 }' /proc/vmstat; }

# json_flat: a JSON document on stdin as "path=value" lines, path in dots
# (limits.memory_bytes.enforced=cgroup); strings keep their escapes, unquoted
json_flat() {
	awk '
	function path(   p, d) {
		p = ""
		for (d = 1; d <= depth; d++) p = p (d > 1 ? "." : "") (typ[d] == "{" ? key[d] : idx[d])
		return p
	}
	{ doc = doc $0 "\n" }
	END {
		n = length(doc); i = 1; depth = 0; want_key = 0
		while (i <= n) {
			c = substr(doc, i, 1)
			if (c == "{" || c == "[") { typ[++depth] = c; idx[depth] = 0; key[depth] = ""; want_key = (c == "{"); i++ }
			else if (c == "}" || c == "]") { depth--; i++ }
			else if (c == ",") { if (typ[depth] == "[") idx[depth]++; else want_key = 1; i++ }
			else if (c == ":") { want_key = 0; i++ }
			else if (c == "\"") {
				j = i + 1; v = ""
				while (j <= n) {
					d = substr(doc, j, 1)
					if (d == "\\") { v = v substr(doc, j, 2); j += 2; continue }
					if (d == "\"") break
					v = v d; j++
				}
				i = j + 1
				if (typ[depth] == "{" && want_key) key[depth] = v
				else print path() "=" v
			}
			else if (c ~ /[-0-9a-z.]/) {
				j = i
				while (j <= n && substr(doc, j, 1) ~ /[-+0-9a-zA-Z.]/) j++
				print path() "=" substr(doc, i, j - i)
				i = j
			}
			else i++
		}
	}'
}
jget() { # jget PATH: a value of the last run's JSON result
	sed -n "s/^$1=//p" "$WORK/flat" | head -1
}

# ---------------------------------------------------------------- the environment
check_environment() {
	diag "kernel $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ { print int($2 / 1024) }' /proc/meminfo) MiB"
	check "cgroup2 is mounted on /sys/fs/cgroup" grep -q " $CGROOT cgroup2 " /proc/mounts
	check "... with nsdelegate" sh -c "grep ' $CGROOT cgroup2 ' /proc/mounts | grep -q nsdelegate"
	check "no cgroup v1 hierarchy is mounted" sh -c "! grep -q ' cgroup ' /proc/mounts"
	ctl=$(cat $CGROOT/cgroup.controllers)
	is "every root controller is enabled in cgroup.subtree_control" "$(cat $CGROOT/cgroup.subtree_control)" "$ctl"
	for c in memory pids cpu; do
		check "controller $c is available" sh -c "grep -qw $c $CGROOT/cgroup.subtree_control"
	done
	check "the static probe runs" "$PROBE" exit 0
	check "uid 1000 can create a user namespace" su -s /bin/sh tuser -c "$PROBE unshare user >/dev/null"
}

# ---------------------------------------------------------------- smoke: the raw kernel
in_cgroup() { # in_cgroup DIR CMD...: run CMD inside cgroup DIR (time-limited)
	# shellcheck disable=SC2016 # $$ and $@ are the inner shell's
	timeout -s KILL 120 sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$@"
}

# smoke_limits WHO BOX: memory.max, pids.max, cpu.max on the probe in the new cgroup BOX
smoke_limits() {
	who=$1 box=$2
	check "$who: create cgroup $box" mkdir "$box"
	for c in memory pids cpu; do
		check "$who: $c controller in the new cgroup" grep -qw $c "$box/cgroup.controllers"
	done
	# memory.max 32M, no swap: a 64 MiB hog is OOM-killed
	check "$who: write memory.max 32M" sh -c "echo 32M >$box/memory.max"
	[ ! -e "$box/memory.swap.max" ] || echo 0 >"$box/memory.swap.max"
	before=$(vmstat_oom)
	in_cgroup "$box" "$PROBE" memhog 64 >"$WORK/out" 2>&1
	rc=$?
	is "$who: memhog 64 MiB under memory.max 32M dies of SIGKILL (137)" "$rc" 137
	check "$who: memory.events oom_kill >= 1" int_between "$(key "$box/memory.events" oom_kill)" 1 999
	check "$who: /proc/vmstat oom_kill went up" int_between "$(($(vmstat_oom) - before))" 1 999
	diag "  memory.events: $(tr '\n' ' ' <"$box/memory.events")"
	# pids.max 10: the fork loop stops short of 10 tasks
	check "$who: write pids.max 10" sh -c "echo 10 >$box/pids.max"
	in_cgroup "$box" "$PROBE" forkbomb 3 1000 >"$WORK/out" 2>&1
	out=$(cat "$WORK/out")
	diag "  $out"
	n=$(echo "$out" | sed -n 's/.*fork failed after \([0-9]*\) processes.*/\1/p')
	check "$who: forkbomb under pids.max 10 fails after at most 10 tasks" int_between "$n" 1 10
	check "$who: pids.events max >= 1" int_between "$(key "$box/pids.events" max)" 1 99999
	# cpu.max 20 ms every 100 ms: 0.2 CPU
	check "$who: write cpu.max 20000 100000" sh -c "echo '20000 100000' >$box/cpu.max"
	u0=$(key "$box/cpu.stat" usage_usec) t0=$(uptime_s)
	in_cgroup "$box" "$PROBE" spin 3 >"$WORK/out" 2>&1
	u1=$(key "$box/cpu.stat" usage_usec) t1=$(uptime_s)
	r=$(ratio "$((u1 - u0))" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print (b - a) * 1e6 }')")
	check "$who: spin 3 under cpu.max 0.2: usage/wall $r within 0.1..0.35" between "$r" 0.1 0.35
	check "$who: cpu.stat nr_throttled >= 1" int_between "$(key "$box/cpu.stat" nr_throttled)" 1 999999
	check "$who: remove the emptied cgroup" rmdir "$box"
}

# ---------------------------------------------------------------- nsrun
make_rootfs() {
	rm -rf "$ROOTFS"
	mkdir -p "$ROOTFS/bin" "$ROOTFS/proc" "$ROOTFS/dev" "$ROOTFS/tmp" "$ROOTFS/work" "$ROOTFS/etc"
	# every mount point nsrun uses, as an image has them (/etc/hosts and /etc/hostname
	# are nsrun's own files): the guest kernel has no overlayfs module loaded
	: >"$ROOTFS/etc/hosts"
	: >"$ROOTFS/etc/hostname"
	cp "$PROBE" "$ROOTFS/probe"
	cp /bin/busybox "$ROOTFS/bin/busybox"
	ln -s busybox "$ROOTFS/bin/sh"
	# check-vm.sh's ASan and Go programs (issue 22), the ASan one with its libraries
	if [ -f "$HERE/memprogs/asan-alloc" ]; then
		cp "$HERE/memprogs/asan-alloc" "$ROOTFS/asan-alloc"
		while read -r lib; do
			mkdir -p "$ROOTFS$(dirname "$lib")" && cp -L "$lib" "$ROOTFS$lib"
		done <"$HERE/memprogs/asan-alloc.libs"
	fi
	[ ! -f "$HERE/memprogs/go-alloc" ] || cp "$HERE/memprogs/go-alloc" "$ROOTFS/go-alloc"
	chmod -R a+rX "$ROOTFS"
}

# How nsrun is started (PLACE): "" where the caller is; "scope": alone in a new
# cgroup under $DELEG, as systemd-run --user --scope -p Delegate=yes would (nsrun
# must be alone in its cgroup to enable controllers below it: the no-internal-process
# rule); or a cgroup directory to move into first. Time-limited in every case.
PLACE=""
start_nsrun() { # start_nsrun ARGS...
	case $PLACE in
	"")
		timeout -s KILL 120 "$NSRUN" "$@"
		return
		;;
	scope)
		_n=$(($(cat "$WORK/scopes" 2>/dev/null || echo 0) + 1))
		echo "$_n" >"$WORK/scopes"
		_dir=$DELEG/scope-$_n
		mkdir "$_dir" || return 125
		;;
	*) _dir=$PLACE ;;
	esac
	# busybox timeout forks its watchdog first: only sh, then nsrun, moves
	# shellcheck disable=SC2016 # $$ and $@ are the inner shell's
	timeout -s KILL 120 sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$_dir" "$NSRUN" "$@"
	_rc=$?
	if [ "$PLACE" = scope ]; then
		rmdir "$_dir/nsrun-supervisor" 2>/dev/null
		rmdir "$_dir" 2>/dev/null || diag "  $_dir not removable: $(find "$_dir" -mindepth 1 -type d | tr '\n' ' ')"
	fi
	return $_rc
}

# nsrun_json OPTION... -- CMD...: one run with --json and --debug; sets RC and CG
# (the run's cgroup as --debug names it); JSON in $WORK/json, flattened in $WORK/flat
nsrun_json() {
	start_nsrun --rootfs "$ROOTFS" --timeout 60 --json - --debug "$@" >"$WORK/json" 2>"$WORK/err"
	RC=$?
	json_flat <"$WORK/json" >"$WORK/flat"
	CG=$(sed -n 's/^nsrun: debug: cgroup //p' "$WORK/err" | head -1)
	case $CG in "" | /*) ;; *) CG=$CGROOT/$CG ;; esac
	if [ "$RC" = 125 ] || [ ! -s "$WORK/json" ]; then
		diag "  nsrun exit $RC; stderr: $(grep -v '^nsrun: debug' "$WORK/err" | head -3 | tr '\n' ' ')"
	fi
}
show_run() { # a line about the last run; its whole JSON when it went wrong
	diag "  nsrun exit $RC: status=$(jget status) exit_code=$(jget exit_code) oom_killed=$(jget oom_killed)" \
		"wall=$(jget wall_time_ms)ms cpu=$(jget cpu_user_ms)+$(jget cpu_system_ms)ms cgroup=${CG:-?}"
	case $(jget status) in exited | oom_killed) ;; *) diag "  json: $(head -c 800 "$WORK/json")" ;; esac
}

# The i386 ABI (int 0x80) under the default profile, on a kernel that runs it: Debian's
# kernel has IA-32 emulation and QEMU delivers int 0x80 (some hosts' hypervisors do
# not, and there the host suites take lib.sh foreign_abi_verdict's other branch).
# Control: the call works without a filter; under the profile, which names only
# x86_64, the filter kills it (SIGSYS: 159) or answers EPERM.
abi_i386() {
	unc=$("$PROBE" int80 2>&1 | head -1)
	case $unc in "int80: ok"*) record ok "control: int 0x80 works in the guest without a filter ($unc)" ;;
	*) record fail "control: int 0x80 works in the guest without a filter"; diag "  got '$unc'" ;; esac
	start_nsrun --rootfs "$ROOTFS" --timeout 60 -- /probe int80 >"$WORK/out" 2>&1
	rc=$?
	out=$(head -1 "$WORK/out")
	if [ "$rc" = 159 ] || case $out in "int80: denied EPERM"*) true ;; *) false ;; esac; then
		record ok "int 0x80 under the default profile: denied by the filter (exit $rc${out:+, $out})"
	else
		record fail "int 0x80 under the default profile: denied by the filter (SIGSYS or EPERM)"
		diag "  exit $rc, output '$out'"
	fi
}

# run cgroups left behind anywhere in the hierarchy (nsrun-<pid>-<n>)
leftovers() { find $CGROOT -mindepth 1 -type d -name 'nsrun-[0-9]*' 2>/dev/null | tr '\n' ' '; }
check_no_leftovers() { is "$1: no nsrun-<pid>-<n> cgroup is left" "$(leftovers)" ""; }

# nsrun_limits WHO: the nsrun tests, nsrun started as PLACE says
nsrun_limits() {
	who=$1
	# baseline: nsrun works at all here
	start_nsrun --rootfs "$ROOTFS" --timeout 60 -- /probe exit 0 >"$WORK/out" 2>&1
	rc=$?
	is "$who: nsrun --rootfs runs the probe (exit 0)" "$rc" 0
	[ "$rc" = 0 ] || diag "  $(head -c 400 "$WORK/out")"

	# --memory 32m: the OOM killer of the run's cgroup ends it
	before=$(vmstat_oom)
	nsrun_json --memory 32m -- /probe memhog 64
	show_run
	check "$who: --debug names the run's cgroup (got '$CG')" sh -c "case '$CG' in $CGROOT/*nsrun-*) true ;; *) false ;; esac"
	is "$who: --memory 32m, memhog 64: JSON status" "$(jget status)" oom_killed
	is "$who: ... exit_code 137" "$(jget exit_code)" 137
	is "$who: ... oom_killed true" "$(jget oom_killed)" true
	is "$who: ... limits.memory_bytes.enforced" "$(jget limits.memory_bytes.enforced)" cgroup
	is "$who: ... limits.memory_bytes.value" "$(jget limits.memory_bytes.value)" $((32 * MIB))
	check "$who: ... the kernel counted an OOM kill (/proc/vmstat oom_kill)" int_between "$(($(vmstat_oom) - before))" 1 999
	check "$who: ... the run's cgroup is gone after the run" test ! -e "${CG:-/nonexistent}"
	check_no_leftovers "$who: memory"

	# B27: a SIGKILL that is not the OOM killer's is not reported as one, and an OOM
	# kill of a child is reported although the payload itself was not the one that
	# grew (memory.oom.group: the whole container goes, exit 137)
	nsrun_json --memory 32m -- /probe kill-self 9
	show_run
	is "$who: B27 self-SIGKILL under --memory 32m: status" "$(jget status)" signaled
	is "$who: ... exit_code 137" "$(jget exit_code)" 137
	is "$who: ... oom_killed false" "$(jget oom_killed)" false
	nsrun_json --memory 32m -- /bin/busybox sh -c '/probe memhog 64; echo child-rc=$?; exit 0'
	show_run
	is "$who: B27 a child OOM-killed under --memory 32m: status" "$(jget status)" oom_killed
	is "$who: ... exit_code 137 (the group is killed)" "$(jget exit_code)" 137
	is "$who: ... oom_killed true" "$(jget oom_killed)" true
	check_no_leftovers "$who: B27"

	# issue 22: memory really used, in every way, is ended under --memory 256m; a 4 GiB
	# MAP_NORESERVE reservation (one page touched) runs under the default --memory
	nsrun_json -- /probe reserve 4
	is "$who: a 4 GiB MAP_NORESERVE reservation under the default --memory: exit" "$RC" 0
	# an AddressSanitizer program (terabytes of shadow reserved) and a Go program (its
	# heap arenas) under the default --memory, each with a control that shows it is what
	# it claims: ASan catches an overflow; the Go program's real use is counted
	if [ -f "$ROOTFS/asan-alloc" ]; then
		nsrun_json -e ASAN_OPTIONS=detect_leaks=0 -- /asan-alloc
		is "$who: an ASan-built program under the default --memory: exit, stdout" "$RC $(jget stdout)" "0 asan: ok 1\n"
		is "$who: ... limits.memory_bytes.enforced" "$(jget limits.memory_bytes.enforced)" cgroup
		nsrun_json -e ASAN_OPTIONS=detect_leaks=0 -- /asan-alloc overflow
		case $(jget stderr) in
		*heap-buffer-overflow*) record ok "$who: ... ASan works there: it catches a heap overflow" ;;
		*) record fail "$who: ... ASan works there: it catches a heap overflow (stderr: $(jget stderr | head -c 300))" ;;
		esac
	else
		record fail "$who: an ASan-built program is in the payload (check-vm.sh builds it with gcc -fsanitize=address)"
	fi
	if [ -f "$ROOTFS/go-alloc" ]; then
		nsrun_json -- /go-alloc 64
		is "$who: a Go program using 64 MiB under the default --memory: exit, stdout" "$RC $(jget stdout)" \
			"0 go: ok 64 MiB\n"
		nsrun_json --memory 128m -- /go-alloc 300
		show_run
		is "$who: ... control: using 300 MiB under --memory 128m it is ended: status" "$(jget status)" oom_killed
	else
		record fail "$who: a Go program is in the payload (check-vm.sh builds it with go build)"
	fi
	# 300 MiB: the guest has 512 MiB, and the kernel's overcommit heuristic refuses a
	# single allocation larger than its memory outright (ENOMEM, no limit involved)
	for kind in malloc memfd shm shared procs:128; do
		mib=300 extra=""
		case $kind in
		shm) extra="--tmpfs-size 2g" ;;
		procs:*) mib=16 extra="--pids-limit 256" ;;
		esac
		# shellcheck disable=SC2086 # extra is a list of words
		nsrun_json --memory 256m $extra -- /probe memhog-via "$kind" "$mib"
		show_run
		is "$who: $kind, $mib MiB under --memory 256m: status" "$(jget status)" oom_killed
		is "$who: ... limits.memory_bytes.enforced" "$(jget limits.memory_bytes.enforced)" cgroup
	done
	check_no_leftovers "$who: real use"

	# --pids-limit 10: fork() fails before 10 tasks
	nsrun_json --pids-limit 10 -- /probe forkbomb 3 1000
	show_run
	out=$(jget stdout)
	n=$(echo "$out" | sed -n 's/.*fork failed after \([0-9]*\) processes.*/\1/p')
	check "$who: --pids-limit 10, forkbomb: fork fails after at most 10 tasks (got '$n')" int_between "$n" 1 10
	is "$who: ... limits.pids.enforced" "$(jget limits.pids.enforced)" cgroup
	is "$who: ... limits.pids.value" "$(jget limits.pids.value)" 10
	check_no_leftovers "$who: pids"

	# --cpus 0.2: about a fifth of a CPU over the run
	nsrun_json --cpus 0.2 -- /probe spin 3
	show_run
	used=$(($(jget cpu_user_ms) + $(jget cpu_system_ms)))
	r=$(ratio "$used" "$(jget wall_time_ms)")
	is "$who: --cpus 0.2, spin 3: exit 0" "$(jget exit_code)" 0
	check "$who: ... (cpu_user_ms + cpu_system_ms) / wall_time_ms = '$r' within 0.1..0.35" between "$r" 0.1 0.35
	is "$who: ... limits.cpus.enforced" "$(jget limits.cpus.enforced)" cgroup
	check "$who: ... limits.cpus.value is 0.2" between "$(jget limits.cpus.value)" 0.199 0.201
	check_no_leftovers "$who: cpus"

	# the limits as written in the live cgroup, read while the run sleeps
	: >"$WORK/err"
	start_nsrun --rootfs "$ROOTFS" --timeout 60 --debug \
		--memory 32m --pids-limit 10 --cpus 0.2 -- /probe sleep 6 >"$WORK/out" 2>"$WORK/err" &
	bg=$!
	live=""
	for _ in $(seq 100); do
		live=$(sed -n 's/^nsrun: debug: cgroup //p' "$WORK/err" | head -1)
		case $live in "" | /*) ;; *) live=$CGROOT/$live ;; esac
		# without the debug line: the one run cgroup there is
		[ -n "$live" ] || live=$(find $CGROOT -mindepth 1 -type d -name 'nsrun-[0-9]*' 2>/dev/null | head -1)
		# (cgroupfs files have size 0: test -s cannot tell an empty one)
		[ -n "$live" ] && [ -n "$(cat "$live/cgroup.procs" 2>/dev/null)" ] && break
		live=""
		sleep 0.1
	done
	if [ -n "$live" ]; then
		diag "  live cgroup $live"
		is "$who: live run: memory.max" "$(cat "$live/memory.max" 2>&1)" $((32 * MIB))
		is "$who: live run: pids.max" "$(cat "$live/pids.max" 2>&1)" 10
		is "$who: live run: cpu.max" "$(cat "$live/cpu.max" 2>&1)" "20000 100000"
		check "$who: live run: the payload is in it" test -n "$(cat "$live/cgroup.procs" 2>/dev/null)"
	else
		record fail "$who: live run: found the run's cgroup while it ran"
		diag "  stderr: $(grep -v '^nsrun: debug' "$WORK/err" | head -3 | tr '\n' ' ')"
	fi
	wait "$bg"
	is "$who: live run: exit 0" "$?" 0
	check_no_leftovers "$who: live run"
}

# ---------------------------------------------------------------- uid 1000
# Root's half: a subtree delegated to uid 1000 as systemd's Delegate=yes does it
# (the directory and its cgroup.procs, cgroup.subtree_control, cgroup.threads are
# chowned), the controllers enabled above it, a shell of uid 1000 moved into it.
delegate_and_run_uid1000() {
	mode=$1
	for c in memory pids cpu; do echo "+$c" >$CGROOT/cgroup.subtree_control; done
	mkdir -p $DELEG &&
		chown 1000:1000 $DELEG $DELEG/cgroup.procs $DELEG/cgroup.subtree_control $DELEG/cgroup.threads
	is "root: delegate $DELEG to uid 1000" "$(stat -c %u:%g $DELEG)" 1000:1000
	sh -c 'echo $$ >"$1/cgroup.procs" && exec su -s /bin/sh tuser -c "sh \"\$0\" --as-uid1000 \"\$1\" \"\$2\"" "$2" "$3" "$1"' \
		sh $DELEG "$0" "$mode"
	rc=$?
	[ "$rc" = 0 ] || diag "  the uid 1000 part exited with $rc"
	# tidy up: kill what is left, remove the subtree bottom-up
	echo 1 >$DELEG/cgroup.kill
	sleep 0.2
	find $DELEG -mindepth 1 -depth -type d | while read -r d; do rmdir "$d" 2>/dev/null; done
	rmdir $DELEG 2>/dev/null || diag "  could not remove $DELEG"
}

# uid 1000's half, started in $DELEG by root
as_uid1000() {
	mode=$1
	is "uid1000: running as uid 1000" "$(id -u)" 1000
	is "uid1000: started in the delegated cgroup" "$(sed -n 's/^0:://p' /proc/self/cgroup)" /user-1000
	# leave the delegated cgroup for a leaf, so controllers can be enabled below it
	mkdir $DELEG/shell && echo $$ >$DELEG/shell/cgroup.procs
	is "uid1000: moved itself into a leaf of the delegated cgroup" "$(sed -n 's/^0:://p' /proc/self/cgroup)" /user-1000/shell
	check "uid1000: enable +memory +pids +cpu in the delegated cgroup.subtree_control" \
		sh -c "echo '+memory +pids +cpu' >$DELEG/cgroup.subtree_control"
	check "uid1000: cannot change the delegated cgroup's own memory.max" sh -c "! (echo max >$DELEG/memory.max) 2>/dev/null"
	case $mode in
	smoke) smoke_limits uid1000 $DELEG/box ;;
	nsrun)
		PLACE=scope
		nsrun_limits uid1000
		;;
	esac
	if [ "$mode" = nsrun ]; then
		# nsrun started in a cgroup it shares with another process cannot enable
		# controllers below it: the run must still work (with rlimits)
		mkdir $DELEG/shared
		(echo 0 >$DELEG/shared/cgroup.procs && exec sleep 60) &
		holder=$!
		sleep 0.2
		PLACE=$DELEG/shared
		nsrun_json --memory 32m -- /probe exit 0
		show_run
		is "uid1000: nsrun in a cgroup shared with another process: still runs (exit 0)" "$RC" 0
		diag "  limits.memory_bytes.enforced there: '$(jget limits.memory_bytes.enforced)'"
		# no memory controller there: the supervisor measures real use (memwatch.h)
		nsrun_json --memory 256m -- /probe memhog-via memfd 1024
		show_run
		is "uid1000: ... 1 GiB of memfd under --memory 256m there: status" "$(jget status)" oom_killed
		is "uid1000: ... limits.memory_bytes.enforced" "$(jget limits.memory_bytes.enforced)" supervisor
		kill "$holder" 2>/dev/null
		wait "$holder" 2>/dev/null
		check_no_leftovers "uid1000: shared cgroup"
	fi
}

# ---------------------------------------------------------------- a systemd user manager
# Issue 22: where nothing is delegated to the caller but a systemd user manager runs,
# nsrun asks it for a scope with Delegate=yes (cgroup_systemd.h) and the limit is
# memory.max.  Laid out as a systemd host lays out a user: $SDCG is the user's slice
# (root's), "manager" is user@1000.service (delegated to uid 1000, where the real
# `systemd --user` runs), "session" is the login session's scope (root's: uid 1000
# may not write it, so nsrun started there finds no cgroup of its own).  The units
# are the guest's own: default.target, and dbus.socket/dbus.service, a session bus
# at $XDG_RUNTIME_DIR/bus that the manager joins, as Debian's dbus-user-session has it.
SDCG=$CGROOT/user-1000.slice
SDRUN=/run/user/1000
SDUNITS=$STATE/user-units
SDPID=""

# scopes left behind anywhere in the hierarchy (nsrun-<pid>-<hex>.scope)
scope_leftovers() { find $CGROOT -mindepth 1 -type d -name 'nsrun-*.scope' 2>/dev/null | tr '\n' ' '; }

# as_tuser CMD: CMD (a shell string) as uid 1000 with the user manager's environment
as_tuser() {
	su -s /bin/sh tuser -c "XDG_RUNTIME_DIR=$SDRUN; export XDG_RUNTIME_DIR; $1"
}

# Root's half: the layout, the units, the manager, its bus; then uid 1000's tests
# (systemd_user_part) from the session's cgroup; then tidy up.  The binaries are
# the host's (check-vm.sh copies them with their libraries).
systemd_scope_tests() {
	for b in systemd systemctl busctl dbus-daemon; do
		if [ ! -x "$HERE/$b" ]; then
			record fail "systemd: $b in the guest's payload (check-vm.sh copies the host's; Debian's systemd and dbus-daemon packages)"
			return
		fi
	done
	for c in memory pids cpu; do echo "+$c" >$CGROOT/cgroup.subtree_control; done
	mkdir -p $SDCG/manager $SDCG/session $SDCG/limited && echo "+memory +pids +cpu" >$SDCG/cgroup.subtree_control
	# a session that is itself limited (as under systemd-run --scope -p MemoryMax=):
	# nsrun must stay under that limit, not move out of it into a scope
	echo 400M >$SDCG/limited/memory.max
	# user@1000.service's Delegate=yes
	chown 1000:1000 $SDCG/manager $SDCG/manager/cgroup.procs $SDCG/manager/cgroup.subtree_control \
		$SDCG/manager/cgroup.threads
	# Moving nsrun from the session into the manager's scope needs write access to
	# the cgroup.procs of their common ancestor: on a real host the user manager asks
	# the system manager to do it (AttachProcessesToUnit) when the kernel refuses it;
	# this guest has no system manager, so that one file is the user's
	chown 1000:1000 $SDCG/cgroup.procs
	# sd_booted(3): a user manager refuses to start without this directory
	mkdir -p /run/systemd/system $SDRUN "$SDUNITS"
	chown 1000:1000 $SDRUN && chmod 700 $SDRUN
	[ -s /etc/machine-id ] || echo 5e1ec7ed5e1ec7ed5e1ec7ed5e1ec7ed >/etc/machine-id
	cat >"$SDUNITS/default.target" <<EOT
[Unit]
Description=nsrun VM tier user session
Wants=dbus.socket
EOT
	cat >"$SDUNITS/dbus.socket" <<EOT
[Unit]
Description=D-Bus user message bus socket
DefaultDependencies=no
[Socket]
ListenStream=%t/bus
EOT
	cat >"$SDUNITS/dbus.service" <<EOT
[Unit]
Description=D-Bus user message bus
Requires=dbus.socket
DefaultDependencies=no
[Service]
ExecStart=$HERE/dbus-daemon --config-file=$HERE/session.conf --address=systemd: --nofork --nopidfile --systemd-activation
EOT
	chmod -R a+rX "$SDUNITS"
	# shellcheck disable=SC2016 # $$ is the inner shell's
	sh -c 'echo $$ >"$1/cgroup.procs" && exec su -s /bin/sh tuser -c "XDG_RUNTIME_DIR=$2 SYSTEMD_UNIT_PATH=$3 exec $4 --user --log-target=console"' \
		sh $SDCG/manager $SDRUN "$SDUNITS" "$HERE/systemd" >"$STATE/systemd-user.log" 2>&1 &
	SDPID=$!
	for _ in $(seq 100); do [ -S $SDRUN/systemd/private ] && break; sleep 0.1; done
	check "systemd: the user manager of uid 1000 runs (its private socket is there)" test -S $SDRUN/systemd/private
	# the first connection starts the bus (socket activation); the manager joins it
	ok=1
	for _ in $(seq 50); do
		as_tuser "$HERE/busctl --user --auto-start=no --timeout=1 call org.freedesktop.systemd1 /org/freedesktop/systemd1 org.freedesktop.DBus.Peer Ping" \
			>/dev/null 2>&1 && ok=0 && break
		sleep 0.2
	done
	check "systemd: the user manager answers on the session bus $SDRUN/bus" test "$ok" = 0
	if [ "$ok" != 0 ]; then
		diag "  manager log: $(tail -c 1500 "$STATE/systemd-user.log" | tr '\n' '|')"
		diag "  $(as_tuser "$HERE/systemctl --user status --no-pager -n 20 dbus.socket dbus.service" 2>&1 | tr '\n' '|')"
		diag "  $(as_tuser "$HERE/busctl --user --auto-start=no --timeout=1 call org.freedesktop.systemd1 /org/freedesktop/systemd1 org.freedesktop.DBus.Peer Ping" 2>&1 | tr '\n' '|')"
	fi
	is "systemd: the manager's cgroup is the delegated one" \
		"$(sed -n 's/^0:://p' "/proc/$SDPID/cgroup" 2>/dev/null)" /user-1000.slice/manager/init.scope
	# shellcheck disable=SC2016 # $$ and $0 are the inner shell's
	sh -c 'echo $$ >"$1/cgroup.procs" && exec su -s /bin/sh tuser -c "sh \"\$0\" --systemd-user" "$2"' \
		sh $SDCG/session "$0"
	rc=$?
	[ "$rc" = 0 ] || diag "  the uid 1000 part exited with $rc"
	# shellcheck disable=SC2016 # $$ and $0 are the inner shell's
	sh -c 'echo $$ >"$1/cgroup.procs" && exec su -s /bin/sh tuser -c "sh \"\$0\" --systemd-limited" "$2"' \
		sh $SDCG/limited "$0"
	rc=$?
	[ "$rc" = 0 ] || diag "  the uid 1000 part in the limited session exited with $rc"
	# tidy up: the manager ends its units and itself on SIGTERM
	kill "$SDPID" 2>/dev/null
	for _ in $(seq 50); do kill -0 "$SDPID" 2>/dev/null || break; sleep 0.1; done
	echo 1 >$SDCG/cgroup.kill
	sleep 0.2
	find $SDCG -depth -type d | while read -r d; do rmdir "$d" 2>/dev/null; done
	check "systemd: nothing left of the user's slice after the manager ended" test ! -e $SDCG
}

# uid 1000 in a session cgroup with memory.max 400M (root's): no scope is asked for,
# since the run would leave that limit; the control is systemd_user_part's first run
systemd_limited_part() {
	WORK=$STATE/work-1000
	cd "$WORK" || exit 1
	XDG_RUNTIME_DIR=$SDRUN
	export XDG_RUNTIME_DIR
	unset DBUS_SESSION_BUS_ADDRESS
	# (held 20 s: the supervisor's samples see it whatever the guest's speed)
	nsrun_json --memory 32m -- /probe memhog-via malloc 64 20
	show_run
	is "systemd, in a session with memory.max 400M: no scope (cgroup_manager)" "$(jget cgroup_manager)" null
	is "systemd: ... limits.memory_bytes.enforced" "$(jget limits.memory_bytes.enforced)" supervisor
	is "systemd: ... status" "$(jget status)" oom_killed
	check "systemd: ... --debug says the scope would leave the session's memory.max" \
		grep -q "debug: no systemd scope: .*memory.max of /user-1000.slice/limited is 419430400, which a scope" "$WORK/err"
	grep -q "debug: no systemd scope" "$WORK/err" || diag "  $(grep 'debug: .*\(scope\|cgroup\)' "$WORK/err" | tr '\n' '|')"
	is "systemd: ... and nsrun stayed in that session" "$(scope_leftovers)" ""
	check_no_leftovers "systemd: limited session"
}

# uid 1000's half, started in the session's cgroup (root's) by root
systemd_user_part() {
	WORK=$STATE/work-1000
	cd "$WORK" || exit 1
	XDG_RUNTIME_DIR=$SDRUN
	export XDG_RUNTIME_DIR
	unset DBUS_SESSION_BUS_ADDRESS
	is "systemd: nsrun's caller is in the session's cgroup" "$(sed -n 's/^0:://p' /proc/self/cgroup)" /user-1000.slice/session
	check "systemd: ... which uid 1000 may not write (nothing is delegated there)" sh -c "! test -w $SDCG/session/cgroup.procs"

	# control: no manager reachable (no XDG_RUNTIME_DIR): no cgroup, the supervisor measures
	unset XDG_RUNTIME_DIR
	nsrun_json --memory 32m -- /probe memhog 64
	export XDG_RUNTIME_DIR=$SDRUN
	show_run
	is "systemd control: without a user manager: limits.memory_bytes.enforced" "$(jget limits.memory_bytes.enforced)" supervisor
	is "systemd control: ... cgroup_manager" "$(jget cgroup_manager)" null
	is "systemd control: ... no scope was asked for" "$(scope_leftovers)" ""

	# through the session bus
	before=$(vmstat_oom)
	nsrun_json --memory 32m -- /probe memhog 64
	show_run
	scope=$(sed -n 's/^nsrun: debug: systemd scope \([^,]*\),.*/\1/p' "$WORK/err" | head -1)
	via=$(sed -n 's/^nsrun: debug: systemd scope [^,]*, via \([^ ]*\).*/\1/p' "$WORK/err" | head -1)
	[ -n "$scope" ] || diag "  debug: $(grep 'debug: .*\(scope\|cgroup\)' "$WORK/err" | tr '\n' '|')"
	check "systemd: --debug names the scope nsrun-<pid>-<hex>.scope (got '$scope')" \
		sh -c "case '$scope' in nsrun-[0-9]*-????????.scope) true ;; *) false ;; esac"
	is "systemd: ... it came through the session bus" "$via" "unix:path=$SDRUN/bus"
	[ "$via" = "unix:path=$SDRUN/bus" ] || diag "  $(grep 'debug: systemd scope' "$WORK/err")"
	check "systemd: ... the run's cgroup was below the scope, in the manager's tree (got '$CG')" \
		sh -c "case '$CG' in $SDCG/manager/*$scope/nsrun-*) true ;; *) false ;; esac"
	is "systemd: --memory 32m, memhog 64: JSON status" "$(jget status)" oom_killed
	is "systemd: ... exit_code 137" "$(jget exit_code)" 137
	is "systemd: ... oom_killed true" "$(jget oom_killed)" true
	is "systemd: ... limits.memory_bytes.enforced" "$(jget limits.memory_bytes.enforced)" cgroup
	is "systemd: ... cgroup_manager" "$(jget cgroup_manager)" systemd
	check "systemd: ... the kernel counted an OOM kill (/proc/vmstat oom_kill)" int_between "$(($(vmstat_oom) - before))" 1 999

	# the limits as written, read while a run sleeps; the scope is a unit of the manager
	: >"$WORK/err"
	start_nsrun --rootfs "$ROOTFS" --timeout 60 --debug \
		--memory 32m --pids-limit 10 --cpus 0.2 -- /probe sleep 6 >"$WORK/out" 2>"$WORK/err" &
	bg=$!
	live="" scope=""
	for _ in $(seq 100); do
		live=$(sed -n 's/^nsrun: debug: cgroup //p' "$WORK/err" | head -1)
		scope=$(sed -n 's/^nsrun: debug: systemd scope \([^,]*\),.*/\1/p' "$WORK/err" | head -1)
		[ -n "$live" ] && [ -n "$(cat "$live/cgroup.procs" 2>/dev/null)" ] && break
		live=""
		sleep 0.1
	done
	if [ -n "$live" ]; then
		is "systemd: live run: memory.max" "$(cat "$live/memory.max" 2>&1)" $((32 * MIB))
		is "systemd: live run: pids.max" "$(cat "$live/pids.max" 2>&1)" 10
		is "systemd: live run: cpu.max" "$(cat "$live/cpu.max" 2>&1)" "20000 100000"
		is "systemd: live run: the manager has the scope, active" \
			"$("$HERE/systemctl" --user is-active "$scope" 2>&1)" active
		is "systemd: live run: ... with Delegate=yes" \
			"$("$HERE/systemctl" --user show -p Delegate --value "$scope" 2>&1)" yes
	else
		record fail "systemd: live run: found the run's cgroup while it ran"
		diag "  stderr: $(head -c 600 "$WORK/err" | tr '\n' '|')"
	fi
	wait "$bg"
	is "systemd: live run: exit 0" "$?" 0
	# the scope ends when it is empty, that is when nsrun has exited: the manager
	# notices, stops it and removes its cgroup (give it time: it is asynchronous)
	for _ in $(seq 50); do [ -z "$(scope_leftovers)" ] && break; sleep 0.1; done
	is "systemd: no nsrun-*.scope cgroup is left after the runs" "$(scope_leftovers)" ""
	is "systemd: ... and no nsrun-*.scope unit in the manager" \
		"$("$HERE/systemctl" --user list-units --all --plain --no-legend 'nsrun-*' 2>&1)" ""
	check_no_leftovers "systemd: bus"

	# without a session bus (the address leads nowhere): the manager's own socket
	DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent/bus
	export DBUS_SESSION_BUS_ADDRESS
	nsrun_json --memory 256m -- /probe memhog-via memfd 300
	unset DBUS_SESSION_BUS_ADDRESS
	show_run
	via=$(sed -n 's/^nsrun: debug: systemd scope [^,]*, via \([^ ]*\).*/\1/p' "$WORK/err" | head -1)
	is "systemd: no bus at DBUS_SESSION_BUS_ADDRESS: the scope came through the manager's socket" \
		"$via" "unix:path=$SDRUN/systemd/private"
	check "systemd: ... after the bus address, which --debug says led nowhere" \
		grep -q "debug: systemd scope .*(not unix:path=/nonexistent/bus: " "$WORK/err"
	is "systemd: ... 300 MiB of memfd under --memory 256m: status" "$(jget status)" oom_killed
	is "systemd: ... limits.memory_bytes.enforced" "$(jget limits.memory_bytes.enforced)" cgroup
	is "systemd: ... cgroup_manager" "$(jget cgroup_manager)" systemd
	for _ in $(seq 50); do [ -z "$(scope_leftovers)" ] && break; sleep 0.1; done
	is "systemd: ... no scope is left" "$(scope_leftovers)" ""
	check_no_leftovers "systemd: private socket"
}

# ---------------------------------------------------------------- B23: the initramfs root
# /init ran initramfs-test.sh before it left the initramfs, where pivot_root(2)
# fails with EINVAL; its lines are in /initramfs-test.out ("KEY rc=N output").
initramfs_results() {
	f=/initramfs-test.out
	if [ ! -f $f ]; then
		record fail "B23: /init ran initramfs-test.sh (no $f)"
		return
	fi
	diag "B23 runs on the initramfs: $(tr '\n' '|' <$f)"
	case $(key $f root-fstype) in tmpfs | ramfs) record ok "B23: the runs were on the initramfs root (rootfs)" ;; *) record fail "B23: the runs were on the initramfs root (rootfs)" ;; esac
	line=$(key $f pids)
	is "B23: nsrun works on an initramfs root (rc 0)" "${line%% *}" "rc=0"
	case $line in *"pids: ok self=2 1:"*) record ok "B23: ... in its own pid namespace" ;; *) record fail "B23: ... in its own pid namespace" ;; esac
	is "B23: ... as 65534" "$(key $f ids | cut -d' ' -f1-4)" "rc=0 ids: ok uid=65534"
	case $(key $f write-root) in "rc=1 write: denied EROFS"*) record ok "B23: ... on a read-only root" ;; *) record fail "B23: ... on a read-only root" ;; esac
	case $(key $f initramfs) in "rc=1 read: denied ENOENT"*) record ok "B23: ... the initramfs out of reach" ;; *) record fail "B23: ... the initramfs out of reach" ;; esac
	is "B23: nsrun check there says pivot_root works, as the runs found" "$(key $f check-pivot)" "pivot_root: ok"
	is "B23: ... and that a run gets full isolation" "$(key $f check-isolation)" "isolation: ok (full:"
}

# ---------------------------------------------------------------- main
suite=--nsrun
case ${1:-} in
--systemd-user)
	systemd_user_part
	exit 0
	;;
--systemd-limited)
	systemd_limited_part
	exit 0
	;;
--as-uid1000)
	WORK=$STATE/work-1000
	mkdir -p "$WORK"
	cd "$WORK" || exit 1
	as_uid1000 "$2"
	exit 0
	;;
--smoke | --all | --nsrun | --systemd) suite=$1 ;;
"") ;;
*)
	awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
	exit 2
	;;
esac

[ "$(id -u)" = 0 ] || { echo "guest-test: run as root in the guest" >&2; exit 2; }
rm -rf "$STATE"
mkdir -p "$STATE" "$STATE/work-0" "$STATE/work-1000"
chmod 777 "$STATE"                 # not sticky: both users append to one results file
chown 1000:1000 "$STATE/work-1000"
: >"$RESULTS"
chmod 666 "$RESULTS"
t_start=$(uptime_s)

check_environment
if [ "$suite" = --smoke ] || [ "$suite" = --all ]; then
	diag "---- smoke: the VM's cgroup v2, without nsrun"
	smoke_limits root $CGROOT/smoke-root
	delegate_and_run_uid1000 smoke
	check "root: nothing left of the delegated subtree" test ! -e $DELEG
	if [ -x "$NSRUN" ]; then
		check "nsrun (dynamically linked) starts in the guest: --version" sh -c "'$NSRUN' --version >/dev/null"
	fi
fi
if [ "$suite" = --nsrun ] || [ "$suite" = --all ]; then
	diag "---- nsrun --memory, --pids-limit, --cpus"
	if [ -x "$NSRUN" ]; then
		initramfs_results
		make_rootfs
		abi_i386
		nsrun_limits root ""
		delegate_and_run_uid1000 nsrun
		diag "---- nsrun in a scope of a systemd user manager"
		systemd_scope_tests
		check_no_leftovers "after all runs"
	else
		record fail "nsrun binary present at $NSRUN"
	fi
fi

if [ "$suite" = --systemd ]; then
	make_rootfs
	systemd_scope_tests
	check_no_leftovers "after the systemd runs"
fi

pass=$(grep -c '^ok ' "$RESULTS")
fail=$(grep -c '^fail ' "$RESULTS")
echo "1..$((pass + fail))"
diag "guest time $(awk -v a="$t_start" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }')s"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
