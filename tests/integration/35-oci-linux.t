#!/bin/bash
# The OCI runtime's linux.devices, linux.sysctl, linux.rootfsPropagation,
# linux.cgroupsPath, bind mounts' propagation options and exec --preserve-fds
# (issue 19, docs/oci-runtime.md), over a bundle made as 30-oci-runtime.t makes it
# (runc spec --rootless, an image of the static probe),
# as whoever runs the suite: root, or the unprivileged user of the rootless suite.
# Each probe has its control: the same container without the field.
. "$(dirname "$0")/../lib.sh"
require_all

T=$TESTTMP/oci
oci_probe_bundle "$T" "$TESTTMP/image"
# bundle_with ARGS-AS-JSON [PYTHON EDIT OF c [WORD...]]: config.json made anew, with every
# namespace nsrun makes said (as the namespaced sysctls need)
bundle_with() {
	oci_config "$T" "$1" '
for t in ("network", "cgroup"):
    if not any(n["type"] == t for n in c["linux"]["namespaces"]):
        c["linux"]["namespaces"].append({"type": t})' "${2:-}" "${@:3}"
}
at_exit oci_cleanup

# ---- linux.devices: a node of the host, the one asked for, bound into /dev
dev=
for d in /dev/net/tun /dev/fuse; do
	[ -c "$d" ] && { dev=$d; break; }
done
if [ -z "$dev" ]; then
	skip "the host has neither /dev/net/tun nor /dev/fuse (a character device to list)" "linux.devices"
else
	maj=$((16#$(stat -c %t "$dev")))
	min=$((16#$(stat -c %T "$dev")))
	bundle_with "[\"/nsrun-probe\", \"stat\", \"$dev\"]" \
		"c['linux']['devices'] = [{'path': '$dev', 'type': 'c', 'major': $maj, 'minor': $min}]"
	oci run --bundle "$T/bundle" d1
	assert_eq "linux.devices $dev: the payload sees it, the host's type and numbers" \
		"stat: ok $dev char $maj:$min mode $(stat -c %a "$dev" | xargs printf '%04d')" "$OUT"
	assert_eq "  ... exit 0, no warning about it" "0 0" "$RC $(grep -c devices <<<"$ERR")"
	bundle_with "[\"/nsrun-probe\", \"stat\", \"$dev\"]"
	oci run --bundle "$T/bundle" d1
	assert_eq "  ... control: without linux.devices it is not there" "stat: denied ENOENT stat $dev" "$OUT"
	bundle_with "[\"/nsrun-probe\", \"stat\", \"$dev\"]" \
		"c['linux']['devices'] = [{'path': '$dev', 'type': 'c', 'major': $maj, 'minor': $((min + 1))}]"
	oci run --bundle "$T/bundle" d1
	assert_match "  ... other numbers than the host's node: refused by name" \
		"^nsrun: config.json: linux.devices\\[0\\]: $dev: asked for char $maj:$((min + 1)), the host's node is char $maj:$min" "$ERR"
	assert_nsrun_error "  ... one line (and a hint)"
	assert_eq "  ... exit 1 (runc's), nothing left under --root" "1 0" "$RC $(find "$ROOT" -mindepth 1 | wc -l)"
fi

# ---- linux.sysctl: keys of the container's own namespaces, written before the payload starts
host_port_start=$(cat /proc/sys/net/ipv4/ip_unprivileged_port_start)
bundle_with '["/nsrun-probe", "read", "/proc/sys/net/ipv4/ip_unprivileged_port_start"]' \
	"c['linux']['sysctl'] = {'net.ipv4.ip_unprivileged_port_start': '99', 'kernel.shmmni': '77'}"
oci run --bundle "$T/bundle" s1
assert_match "linux.sysctl net.ipv4.ip_unprivileged_port_start: read back inside" \
	'^read: ok /proc/sys/net/ipv4/ip_unprivileged_port_start [0-9]+ bytes: 99' "$OUT"
assert_eq "  ... the host's is untouched" "$host_port_start" "$(cat /proc/sys/net/ipv4/ip_unprivileged_port_start)"
bundle_with '["/nsrun-probe", "read", "/proc/sys/kernel/shmmni"]' "c['linux']['sysctl'] = {'kernel.shmmni': '77'}"
oci run --bundle "$T/bundle" s1
assert_match "  ... kernel.shmmni (the IPC namespace's) too" '^read: ok /proc/sys/kernel/shmmni [0-9]+ bytes: 77' "$OUT"
bundle_with '["/nsrun-probe", "read", "/proc/sys/kernel/shmmni"]'
oci run --bundle "$T/bundle" s1
assert_match "  ... control: without it, the kernel's default (4096)" \
	'^read: ok /proc/sys/kernel/shmmni [0-9]+ bytes: 4096' "$OUT"
# with a memory limit nsrun caps System V IPC to it (ucounts.h): a sysctl may lower that, not lift it
bundle_with '["/nsrun-probe", "read", "/proc/sys/kernel/shmmax"]' \
	"c['linux']['sysctl'] = {'kernel.shmmax': '1099511627776'}; c['linux']['resources'] = {'memory': {'limit': 67108864}}"
oci run --bundle "$T/bundle" s1
assert_match "  ... kernel.shmmax above the memory limit's IPC share: refused by name" \
	'(^|
)nsrun: linux.sysctl: kernel.shmmax: 1099511627776 is above nsrun.s limit for System V IPC' "$ERR"
assert_eq "  ... exit 1, the payload did not run" "1 " "$RC $OUT"
bundle_with '["/nsrun-probe", "exit", "0"]' \
	"c['linux']['sysctl'] = {'kernel.msgmnb': '1073741824'}; c['linux']['resources'] = {'memory': {'limit': 67108864}}"
oci run --bundle "$T/bundle" s1
assert_match "  ... so is kernel.msgmnb above it (the share is msgmni queues of msgmnb bytes)" \
	'(^|
)nsrun: linux.sysctl: kernel.msgmnb: 1073741824 is above' "$ERR"
bundle_with '["/nsrun-probe", "read", "/proc/sys/kernel/shmmax"]' \
	"c['linux']['sysctl'] = {'kernel.shmmax': '4096'}; c['linux']['resources'] = {'memory': {'limit': 67108864}}"
oci run --bundle "$T/bundle" s1
assert_match "  ... control: one below it is applied" '^read: ok /proc/sys/kernel/shmmax [0-9]+ bytes: 4096' "$OUT"
bundle_with '["/nsrun-probe", "exit", "0"]' "c['linux']['sysctl'] = {'kernel.pid_max': '100000'}"
oci run --bundle "$T/bundle" s1
assert_match "  ... a key of no namespace of the container's (kernel.pid_max): refused by name" \
	'^nsrun: config.json: linux.sysctl: kernel.pid_max: not in a namespace of the container' "$ERR"
assert_nsrun_error "  ... one line"
assert_eq "  ... exit 1 (runc's)" 1 "$RC"
bundle_with '["/nsrun-probe", "exit", "0"]' \
	"c['linux']['sysctl'] = {'net.ipv4.ip_forward': '1'}; c['linux']['namespaces'] = [n for n in c['linux']['namespaces'] if n['type'] != 'network']"
oci run --bundle "$T/bundle" s1
assert_match "  ... a net.* key where the config asks for the host's network namespace: refused" \
	'^nsrun: config.json: linux.sysctl: net.ipv4.ip_forward: linux.namespaces has no network entry' "$ERR"

# ---- linux.rootfsPropagation on the container's root (mountinfo's optional fields)
bundle_with '["/nsrun-probe", "root-propagation"]'
oci run --bundle "$T/bundle" p1
assert_eq "rootfsPropagation absent: the root is private" "root-propagation: ok private" "$OUT"
bundle_with '["/nsrun-probe", "root-propagation"]' "c['linux']['rootfsPropagation'] = 'rshared'"
oci run --bundle "$T/bundle" p1
assert_match "rootfsPropagation rshared: the root is shared" '^root-propagation: ok shared:[0-9]+$' "$OUT"
bundle_with '["/nsrun-probe", "root-propagation"]' "c['linux']['rootfsPropagation'] = 'unbindable'"
oci run --bundle "$T/bundle" p1
assert_eq "rootfsPropagation unbindable: the root is unbindable" "root-propagation: ok unbindable" "$OUT"
bundle_with '["/nsrun-probe", "root-propagation"]' "c['linux']['rootfsPropagation'] = 'sideways'"
oci run --bundle "$T/bundle" p1
assert_match "  ... an unknown value: refused by name" '^nsrun: config.json: linux.rootfsPropagation: "sideways"' "$ERR"

# ---- linux.cgroupsPath: the container's cgroup is that one (config-linux.md "Cgroups
# Path"): absolute below the hierarchy's root, relative below the parent of the
# caller's cgroup (runc's), limits there, gone after delete with the parents nsrun
# made; where it cannot be made (nothing delegated, rootless here) a warning says why
cg2=$(findmnt -rn -t cgroup2 -o TARGET | head -n1)
mem1=$(findmnt -rn -t cgroup -O memory -o TARGET | head -n1)
cgtop=nsrun-cgpath-test-$$
own=$(sed -n 's/^0:://p' /proc/self/cgroup)
base=$(dirname "$own")
cg_remove_test() {
	local d
	for d in "$cg2" "$mem1"; do
		[ -n "$d" ] && [ -d "$d/$cgtop-busy" ] && { cat "$d/$cgtop-busy/cgroup.procs" | xargs -r kill -9; sleep 0.2; rmdir "$d/$cgtop-busy"; }
		[ -n "$d" ] && [ -d "$d/$cgtop" ] && find "$d/$cgtop" -depth -type d -exec rmdir {} + 2>/dev/null
		[ -n "$d" ] && [ -d "$d${base%/}/$cgtop-rel" ] && rmdir "$d${base%/}/$cgtop-rel"
	done
	return 0
}
at_exit cg_remove_test
# init_cgroup ID HIERARCHY: the cgroup of the container's init ("" for v2, or a v1 controller)
init_cgroup() {
	local pid
	pid=$("$NSRUN" --root "$ROOT" state "$1" | jq -r .pid)
	if [ -z "$2" ]; then sed -n 's/^0:://p' "/proc/$pid/cgroup"
	else awk -F: -v c="$2" '{ n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == c) print $3 }' "/proc/$pid/cgroup"; fi
}
res="c['linux']['resources'] = {'memory': {'limit': 67108864}}"
if [ -z "$cg2" ]; then
	not_ok "linux.cgroupsPath: the host has no cgroup2 mount (nsrun's cgroups are v2)"
elif [ -w "$cg2" ]; then
	bundle_with '["/nsrun-probe", "sleep", "300"]' "c['linux']['cgroupsPath'] = '/$cgtop/a/c1'; $res"
	oci run --bundle "$T/bundle" --detach g1
	assert_eq "cgroupsPath /$cgtop/a/c1: the container's init is in that cgroup" "0 /$cgtop/a/c1" "$RC $(init_cgroup g1 '')"
	if [ -f "$cg2/$cgtop/a/c1/memory.max" ]; then
		assert_eq "  ... its memory limit is set there (memory.max)" 67108864 "$(cat "$cg2/$cgtop/a/c1/memory.max")"
	else
		assert_eq "  ... its memory limit is set there (v1 memory group at the same path)" "/$cgtop/a/c1 67108864" \
			"$(init_cgroup g1 memory) $(cat "$mem1/$cgtop/a/c1/memory.limit_in_bytes" 2>&1)"
	fi
	oci delete --force g1
	assert_eq "  ... delete: the cgroup and the parents nsrun made are gone" "0 no no" \
		"$RC $([ -e "$cg2/$cgtop" ] && echo yes || echo no) $([ -n "$mem1" ] && [ -e "$mem1/$cgtop" ] && echo yes || echo no)"
	bundle_with '["/nsrun-probe", "sleep", "300"]' "c['linux']['cgroupsPath'] = '$cgtop/../../$cgtop-rel'"
	oci run --bundle "$T/bundle" --detach g1
	assert_eq "  ... relative ($cgtop/../../$cgtop-rel): below the parent of the caller's, never above it" \
		"${base%/}/$cgtop-rel" "$(init_cgroup g1 '')"
	oci delete --force g1
	bundle_with '["/nsrun-probe", "sleep", "300"]' "$res"
	oci run --bundle "$T/bundle" --detach g1
	assert_match "  ... control: without it, nsrun names the cgroup" '/nsrun-[0-9]+-[0-9]+$' "$(init_cgroup g1 '')"
	oci delete --force g1
	mkdir "$cg2/$cgtop-busy"
	sleep 300 &
	echo $! >"$cg2/$cgtop-busy/cgroup.procs"
	bundle_with '["/nsrun-probe", "exit", "0"]' "c['linux']['cgroupsPath'] = '/$cgtop-busy'"
	oci run --bundle "$T/bundle" g1
	assert_match "  ... a cgroup that holds processes already: refused by name (as runc)" \
		"nsrun: linux.cgroupsPath \"/$cgtop-busy\": the cgroup $cg2/$cgtop-busy holds processes already" "$ERR"
	assert_eq "  ... exit 1, its process untouched" "1 1" "$RC $(wc -l <"$cg2/$cgtop-busy/cgroup.procs")"
else
	bundle_with '["/nsrun-probe", "sleep", "300"]' "c['linux']['cgroupsPath'] = '/$cgtop/a/c1'; $res"
	oci run --bundle "$T/bundle" --detach g1
	assert_match "cgroupsPath where the cgroup root is not delegated ($cg2): a warning naming why" \
		"nsrun: warning: linux.cgroupsPath \"/$cgtop/a/c1\" is not the container.s cgroup: mkdir [^ ]*: Permission denied" "$ERR"
	assert_eq "  ... the container runs, its cgroup not that one, nothing made there" "0 no" \
		"$RC $([ -e "$cg2/$cgtop" ] && echo yes || echo no)"
	c=$(init_cgroup g1 '')
	assert_eq "  ... its init is elsewhere ($c)" yes "$([ -n "$c" ] && [ "$c" != "/$cgtop/a/c1" ] && echo yes)"
	oci delete --force g1
	bundle_with '["/nsrun-probe", "exit", "0"]' "$res"
	oci run --bundle "$T/bundle" g1
	assert_not_match "  ... control: without it, no such warning" 'cgroupsPath' "$ERR"
fi
# --systemd-cgroup: runc's "slice:prefix:name" form; without systemd, refused as runc
bundle_with '["/nsrun-probe", "exit", "0"]' "c['linux']['cgroupsPath'] = '/$cgtop/x'"
run_cmd "$NSRUN" --root "$ROOT" --systemd-cgroup run --bundle "$T/bundle" g1
assert_match "--systemd-cgroup with a path: refused, naming runc's form" \
	'^nsrun: config.json: linux.cgroupsPath with --systemd-cgroup: expected cgroupsPath of the form "slice:prefix:name"' "$ERR"
assert_nsrun_error "  ... one line (and a hint)"
bundle_with '["/nsrun-probe", "exit", "0"]' "c['linux']['cgroupsPath'] = 'system.slice:nsrun:$cgtop'"
run_cmd "$NSRUN" --root "$ROOT" --systemd-cgroup run --bundle "$T/bundle" g1
if [ -d /run/systemd/system ]; then
	assert_match "--systemd-cgroup slice:prefix:name: the scope's cgroup, a warning that no unit is made" \
		"no systemd unit is started: nsrun makes the cgroup /system.slice/nsrun-$cgtop.scope" "$ERR"
else
	assert_match "--systemd-cgroup slice:prefix:name where systemd is not running: refused, as runc" \
		'^nsrun: --systemd-cgroup: systemd is not running on this host' "$ERR"
	assert_eq "  ... exit 1, nothing under --root" "1 0" "$RC $(find "$ROOT" -mindepth 1 | wc -l)"
fi

# ---- bind mounts' propagation options: set in the container's own namespace; one
# container, a bind of the same source for each option (/mnt/none: the control)
src=$TESTTMP/propagation-src
mkdir -p "$src/sub" "$TESTTMP/propagation-sub"
chmod -R a+rX "$src" "$TESTTMP/propagation-sub"
# the source a shared mount of the host's (as root): the container's rshared bind of
# it, and a bind nested in that one, must never appear on the host
shared_src=""
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=1m,mode=755 nsrun-cgpath "$src" && mount --make-shared "$src"; then
	shared_src=1
	at_exit "umount -l '$src'"
	mkdir -p "$src/sub"
fi
bundle_with '["/nsrun-probe", "sleep", "300"]' "c['mounts'] += [{'destination': '/mnt/' + o, 'type': 'bind',
    'source': '$src', 'options': ['rbind'] + ([o] if o != 'none' else [])} for o in argv] + [
    {'destination': '/mnt/rshared/sub', 'type': 'bind', 'source': '$TESTTMP/propagation-sub', 'options': ['rbind']}]" \
	rshared unbindable rslave none
oci run --bundle "$T/bundle" --detach b1
oci exec b1 /nsrun-probe root-propagation /mnt/rshared /mnt/unbindable /mnt/rslave /mnt/none /mnt/rshared/sub
# the optional fields of the mount at $1 in $OUT, "private" when none
prop_of() { tr ' ' '\n' <<<"$OUT" | sed -n "s|^$1=||p"; }
assert_match "mounts[].options rshared: the bind is shared (a peer group of the container's own)" \
	'^shared:[0-9]+$' "$(prop_of /mnt/rshared)"
assert_eq "  ... unbindable: unbindable" unbindable "$(prop_of /mnt/unbindable)"
assert_eq "  ... rslave: private (a slave of no host mount: every mount was made private first)" \
	private "$(prop_of /mnt/rslave)"
assert_eq "  ... control: without an option, private" private "$(prop_of /mnt/none)"
assert_match "  ... the bind nested in the rshared one is a mount inside, shared with it" '^shared:[0-9]+$' \
	"$(prop_of /mnt/rshared/sub)"
if [ -n "$shared_src" ]; then
	assert_ne "  ... its peer group is not the host's shared source's" \
		"$(awk -v s="$src" '$5 == s' /proc/self/mountinfo | grep -o 'shared:[0-9]*' | tail -n1)" "$(prop_of /mnt/rshared)"
fi
assert_eq "  ... on the host nothing is mounted below the${shared_src:+ shared} source" "" \
	"$(awk -v s="$src/" 'index($5, s) == 1' /proc/self/mountinfo)"
oci delete --force b1

# ---- mounts in the listed order (config.md "Mounts": "The runtime MUST mount entries in
# the listed order"): a bind at /mnt/y/sub listed before a tmpfs at /mnt/y is under it,
# unseen (nsrun's own order, parents first, put the bind inside the tmpfs); control:
# listed the other way round, the bind is seen in the tmpfs.  (runtime-tools' mounts
# reads the order from mountinfo, which since Linux 6.8 lists mounts by creation, and
# a bind's tree is cloned by the supervisor before the container's tmpfs mounts are
# made: docs/oci-runtime.md, "Conformance")
echo listed >"$src/marker"
chmod a+r "$src/marker"
order_mounts="c['mounts'] += [m for m in ({'destination': '/mnt/y/sub', 'type': 'bind', 'source': '$src', 'options': ['rbind']},
    {'destination': '/mnt/y', 'type': 'tmpfs', 'source': 'tmpfs', 'options': ['size=1k']})][::int(argv[0])]"
bundle_with '["/nsrun-probe", "read", "/mnt/y/sub/marker"]' "$order_mounts" 1
oci run --bundle "$T/bundle" o1
assert_eq "mounts: a bind listed before a tmpfs over it is under it" "read: denied ENOENT open /mnt/y/sub/marker" "$OUT"
bundle_with '["/nsrun-probe", "read", "/mnt/y/sub/marker"]' "$order_mounts" -1
oci run --bundle "$T/bundle" o1
assert_match "  ... control: listed the other way round, the bind is seen in the tmpfs" '^read: ok /mnt/y/sub/marker .*listed' "$OUT"
rm -f "$src/marker"

# ---- process.rlimits: set as given (runtime-tools' process_rlimits), but CORE and NOFILE
rl="c['process']['rlimits'] = [{'type': 'RLIMIT_FSIZE', 'soft': 1000, 'hard': 2000},
    {'type': 'RLIMIT_CPU', 'soft': 60, 'hard': 120}]"
bundle_with '["/nsrun-probe", "write", "/tmp/f", "4096"]' "$rl"
oci run --bundle "$T/bundle" l1
assert_eq "rlimits RLIMIT_FSIZE 1000: writing 4096 bytes ends the payload with SIGXFSZ (128+25)" 153 "$RC"
bundle_with '["/nsrun-probe", "write", "/tmp/f", "4096"]' "c['process'].pop('rlimits', None)"
oci run --bundle "$T/bundle" l1
assert_eq "  ... control: without it the write succeeds" "0 write: ok /tmp/f 4096 bytes" "$RC $OUT"
bundle_with '["/nsrun-probe", "read", "/proc/self/limits"]' "$rl"
oci run --bundle "$T/bundle" l1
assert_match "  ... RLIMIT_CPU soft 60, hard 120 as given (not nsrun's soft + 1)" 'Max cpu time +60 +12' "$OUT"
bundle_with '["/nsrun-probe", "exit", "0"]' \
	"c['process']['rlimits'] = [{'type': 'RLIMIT_FSIZE', 'soft': 1000, 'hard': 18446744073709551615}]"
run_cmd bash -c 'ulimit -f 100000 && exec "$@"' - "$NSRUN" --root "$ROOT" run --bundle "$T/bundle" l1
assert_match "  ... a hard limit above nsrun's own (which the payload could not raise): refused, naming it" \
	'^nsrun: config.json: process.rlimits\[0\]: RLIMIT_FSIZE hard [0-9]+ is above the hard limit nsrun runs with \(102400000\)' "$ERR"
assert_nsrun_error "  ... one line (and a hint)"
bundle_with '["/nsrun-probe", "exit", "0"]' "c['process']['rlimits'] = [{'type': 'RLIMIT_BOGUS', 'soft': 1, 'hard': 1}]"
oci run --bundle "$T/bundle" l1
assert_match "  ... an unknown type: refused by name" '^nsrun: config.json: process.rlimits\[0\].type: "RLIMIT_BOGUS"' "$ERR"
bundle_with '["true"]' "c['process'].pop('rlimits', None)"

# ---- exec --preserve-fds: the caller's fds 3 to 3+N-1 reach the exec'd process, no others
bundle_with '["/nsrun-probe", "sleep", "300"]'
oci run --bundle "$T/bundle" --detach x1
oci exec --preserve-fds 2 x1 /nsrun-probe fds 3</dev/null 4</dev/null
assert_eq "exec --preserve-fds 2: fds 3 and 4 reach the process" "fds: ok 0 1 2 3 4" "$OUT"
oci exec x1 /nsrun-probe fds 3</dev/null 4</dev/null
assert_eq "  ... control: without it, only 0, 1, 2" "fds: ok 0 1 2" "$OUT"
oci exec --preserve-fds 3 x1 /nsrun-probe fds 3</dev/null 4</dev/null
assert_match "  ... an fd that is not open: refused" '^nsrun: exec: --preserve-fds 3: fd 5 is not open' "$ERR"
oci delete --force x1

done_testing
