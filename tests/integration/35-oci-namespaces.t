#!/bin/bash
# config.json's linux.namespaces[].path, id map ranges and additionalGids (issue 19,
# docs/oci-runtime.md).
#
# A pod's network namespace, made here, joined by the container; what cannot be
# joined refused by name, before anything is made.  As root the namespace is one of
# `ip netns add` (owned by our user namespace); as an unprivileged user, the one of
# an `unshare -Urn` holder (owned by a user namespace the caller made).
#
# Probe: the pod's address (10.231.7.1 on its lo) can be bound in the container;
# control: without path the container's own network namespace has no such address.
. "$(dirname "$0")/../lib.sh"
require_all

command -v ip >/dev/null || skip_all "ip (iproute2) is not installed (make deps)"

T=$TESTTMP/ocins
oci_probe_bundle "$T" "$TESTTMP/image"
# bundle_with ARGS-AS-JSON NETWORK-PATH [PYTHON EDIT OF c]: config.json of the
# template with that network entry ("" : a network namespace of its own)
bundle_with() {
	oci_config "$T" "$1" '
ns = [n for n in c["linux"]["namespaces"] if n["type"] != "network"]
ns.append({"type": "network", "path": argv[0]} if argv[0] else {"type": "network"})
c["linux"]["namespaces"] = ns' "${3:-}" "$2"
}

ADDR=10.231.7.1
# a set-up step that failed: one failed test that says which, and the end
setup_failed() {
	not_ok "set-up: $1"
	done_testing
	exit 1
}
# pod_holder WHAT SETUP UNSHARE-OPTION...: a sleep holding new namespaces (unshare's
# options), its hostname nsrun-pod, after the shell commands SETUP (each ending in
# &&), as HOLDER (killed at exit); the set-up fails naming WHAT unless it started
# within 30 s
pod_holder() {
	local what=$1 setup=$2 end
	shift 2
	unshare "$@" sh -c "hostname nsrun-pod && $setup exec sleep 600" </dev/null >/dev/null 2>&1 &
	HOLDER=$!
	at_exit "kill $HOLDER"
	end=$((SECONDS + 30))
	until [ "$(readlink "/proc/$HOLDER/ns/uts" 2>/dev/null)" != "$(readlink /proc/self/ns/uts)" ] &&
		[ "$(cat "/proc/$HOLDER/comm" 2>/dev/null)" = sleep ]; do
		[ "$SECONDS" -lt "$end" ] || setup_failed "$what did not start"
		sleep 0.1
	done
}
if [ "$(id -u)" = 0 ]; then
	NETNS=nsrun-ocins-$$
	ip netns add "$NETNS" || skip_all "ip netns add failed"
	at_exit "ip netns del $NETNS"
	{ ip -n "$NETNS" link set lo up && ip -n "$NETNS" addr add "$ADDR/32" dev lo; } || setup_failed "the pod's lo"
	POD=/run/netns/$NETNS
	# the pod's ipc and uts: of our own user namespace, as the ip netns's
	pod_holder "the pod's ipc and uts holder (unshare)" "" --ipc --uts
else
	# the pod: a user, network, ipc and uts namespace of ours, held by a sleep
	pod_holder "the pod's holder (unshare -Urn)" "ip link set lo up && ip addr add $ADDR/32 dev lo &&" -Urn --ipc --uts
	POD=/proc/$HOLDER/ns/net
fi
PODIPC=/proc/$HOLDER/ns/ipc PODUTS=/proc/$HOLDER/ns/uts

# ---- the pod's network namespace, joined
bundle_with '["/nsrun-probe", "loopback", "'$ADDR'"]' "$POD"
oci run --bundle "$T/bundle" j1
assert_eq "network path $POD: joined, the pod's address is there" "loopback: ok $ADDR" "$OUT"
assert_eq "  ... exit 0" 0 "$RC"
check "  ... and nothing kept under --root" test ! -e "$ROOT/j1"
# create, start, exec (podman exec in a pod): the process joins it as the payload did
bundle_with '["/nsrun-probe", "sleep", "300"]' "$POD"
oci create --bundle "$T/bundle" j5 </dev/null
oci start j5
oci exec j5 /nsrun-probe loopback "$ADDR"
assert_eq "  ... exec in a container that joined it: there too" "loopback: ok $ADDR" "$OUT"
oci delete --force j5
bundle_with '["/nsrun-probe", "loopback", "'$ADDR'"]' ""
oci run --bundle "$T/bundle" j2
assert_match "control: without path, a network namespace of its own: no such address" \
	"^loopback: denied EADDRNOTAVAIL" "$OUT"

# the payload's other isolation is as in a namespace nsrun makes
bundle_with '["/nsrun-probe", "status"]' "$POD"
oci run --bundle "$T/bundle" j3
assert_match "  ... in it, the payload has no capability" 'CapEff:[[:space:]]+0000000000000000' "$OUT"
assert_match "  ... no_new_privs" 'NoNewPrivs:[[:space:]]+1' "$OUT"
assert_match "  ... and nsrun's seccomp filter" 'Seccomp:[[:space:]]+2' "$OUT"

# ---- what cannot be joined: refused by name, nothing made
bundle_with '["/nsrun-probe", "exit", "0"]' "/proc/$$/ns/ipc"
oci run --bundle "$T/bundle" b1
assert_match "an ipc namespace as the network path: refused by name" \
	"(^|
)nsrun: linux.namespaces: network path /proc/$$/ns/ipc: not a network namespace" "$ERR"
assert_eq "  ... exit 1 (an OCI verb's error)" 1 "$RC"
check "  ... nothing left under --root" test ! -e "$ROOT/b1"
bundle_with '["/nsrun-probe", "exit", "0"]' "$T/template.json"
oci run --bundle "$T/bundle" b2
assert_match "a file that is no namespace: refused by name" "network path $T/template.json: not a namespace file" "$ERR"
bundle_with '["/nsrun-probe", "loopback", "127.0.0.1"]' "/proc/$$/ns/net"
oci run --bundle "$T/bundle" b4
if [ "$(id -u)" = 0 ]; then
	assert_match "nsrun's own network namespace (the host's), as root: a warning that says so" \
		"nsrun: warning: network namespace /proc/$$/ns/net is nsrun's own: the container shares the host's network" \
		"$ERR"
	assert_eq "  ... and it runs there" "loopback: ok 127.0.0.1" "$OUT"
else
	assert_match "nsrun's own network namespace, unprivileged: refused, no rights in its owner" \
		"(^|
)nsrun: linux.namespaces: network path /proc/$$/ns/net: owned by a user namespace in which uid $(id -u) has no CAP_SYS_ADMIN" \
		"$ERR"
	assert_eq "  ... exit 1, the payload never ran" "1 " "$RC $OUT"
fi
check "  ... nothing left under --root" test ! -e "$ROOT/b4"

# ---- uid/gid map ranges: 0 the caller, 1..999 subordinate ids (as root: root's
# maps written directly, 0 onto 200000: never host root)
if [ "$(id -u)" = 0 ]; then
	U0=200000 G0=200000 SUB=201000 BAD=0
else
	U0=$(id -u) G0=$(id -g)
	SUB=$(awk -F: -v u="$(id -un)" -v n="$(id -u)" '($1 == u || $1 == n) && $3 >= 1000 { print $2; exit }' /etc/subuid)
	[ -n "$SUB" ] || setup_failed "no /etc/subuid range of at least 1000 ids for $(id -un) (the rootless suite needs one)"
	BAD=$((SUB + 10000000))
fi
maps() { # UID-HOST-BASE: the two maps, 0 -> $U0/$G0 and 1..999 -> BASE
	echo "c['linux']['uidMappings'] = [{'containerID': 0, 'hostID': $U0, 'size': 1}, {'containerID': 1, 'hostID': $1, 'size': 999}];" \
		"c['linux']['gidMappings'] = [{'containerID': 0, 'hostID': $G0, 'size': 1}, {'containerID': 1, 'hostID': $1, 'size': 999}];" \
		"c['process']['user'] = {'uid': 0, 'gid': 0};"
}
bundle_with '["/nsrun-probe", "read", "/proc/self/uid_map"]' "" "$(maps "$SUB")"
oci run --bundle "$T/bundle" m1
assert_match "uidMappings with a range: /proc/self/uid_map as given" \
	"^read: ok /proc/self/uid_map [0-9]+ bytes: +0 +$U0 +1.x0a +1 +$SUB +999.x0a\$" "$OUT"
bundle_with '["/nsrun-probe", "ids"]' "" "$(maps "$SUB") c['process']['user'] = {'uid': 500, 'gid': 600, 'additionalGids': [5, 700]}"
oci run --bundle "$T/bundle" m2
assert_eq "  ... the payload runs as a mapped id (user 500:600), with additionalGids" \
	"ids: ok uid=500 gid=600 euid=500 egid=600 groups=5,700" "$OUT"
# ranges with a joined network namespace (podman's keep-id in a pod): the
# container's user namespace, a child of the pod's owner, maps the owner's ids
# of those host ids; one that the owner does not map is refused, naming it
bundle_with '["/nsrun-probe", "read", "/proc/self/uid_map"]' "$POD" "$(maps "$SUB")"
oci run --bundle "$T/bundle" m4
if [ "$(id -u)" = 0 ]; then
	assert_match "uidMappings ranges with a network path (ip netns add's, the owner nsrun's): as given" \
		"^read: ok /proc/self/uid_map [0-9]+ bytes: +0 +$U0 +1.x0a +1 +$SUB +999.x0a\$" "$OUT"
else
	assert_match "uidMappings ranges with a network path whose owner maps one id (unshare -Urn): refused, naming the range" \
		"(^|
)nsrun: .*linux.gidMappings\[1\]: host ids $SUB-$((SUB + 998)) are not mapped in the user namespace that owns the joined namespaces" "$ERR"
	assert_eq "  ... exit 1, the payload never ran" "1 " "$RC $OUT"
fi
if [ "$(id -u)" = 0 ]; then
	bundle_with '["/nsrun-probe", "exit", "0"]' "" "$(maps 0)"
	oci run --bundle "$T/bundle" m3
	assert_match "control: a range holding host root: refused by name" \
		"nsrun: config.json: linux.uidMappings\[1\]: host ids 0-998 hold host root" "$ERR"
else
	bundle_with '["/nsrun-probe", "exit", "0"]' "" "$(maps "$BAD")"
	oci run --bundle "$T/bundle" m3
	assert_match "control: a range the caller was not given: refused, naming it, its own range and the fix" \
		"nsrun: config.json: linux.uidMappings\[1\]: host ids $BAD-$((BAD + 998)) are neither the caller's id $U0 nor in its subordinate range $SUB-[0-9]+ \(/etc/subuid\): map ids of that range, or ask root for more \(usermod --add-subuids\)" "$ERR"
fi
assert_eq "  ... exit 1, the payload never ran" "1 " "$RC $OUT"
check "  ... nothing left under --root" test ! -e "$ROOT/m3"
bundle_with '["/nsrun-probe", "ids"]' "" "$(maps "$SUB") c['process']['user'] = {'uid': 0, 'gid': 0, 'additionalGids': [5000]}"
oci run --bundle "$T/bundle" m4
assert_match "additionalGids with a gid the map does not hold: refused by name" \
	"nsrun: config.json: process.user.additionalGids\[0\]: gid 5000 is not mapped by linux.gidMappings" "$ERR"
# one id mapped: setgroups(2) is denied in such a namespace: a warning, no groups
bundle_with '["/nsrun-probe", "ids"]' "" "c['process']['user'] = {'uid': 0, 'gid': 0, 'additionalGids': [5]}"
oci run --bundle "$T/bundle" m5
assert_match "additionalGids with one gid mapped: a warning that says why" \
	"nsrun: warning: process.user.additionalGids: not set: the user namespace maps one gid" "$ERR"
assert_match "  ... and the payload runs without them" "^ids: ok uid=0 gid=0 euid=0 egid=0 groups=[0-9]*\$" "$OUT"

# ---- a pod's ipc and uts namespaces (issue 19), joined with its network, as
# containerd's CRI and podman's pods join the pause container's
# joins IPC-PATH UTS-PATH: the edit of bundle_with that puts those entries in
joins() {
	echo "c['linux']['namespaces'] = [n for n in c['linux']['namespaces'] if n['type'] not in ('ipc', 'uts')]" \
		"+ [{'type': 'ipc', 'path': '$1'} if '$1' else {'type': 'ipc'}, {'type': 'uts', 'path': '$2'} if '$2' else {'type': 'uts'}];"
}
bundle_with '["/nsrun-probe", "sysv-shm", "make", "0x4e535255"]' "$POD" "$(joins "$PODIPC" "$PODUTS")"
oci run --bundle "$T/bundle" i1
assert_eq "ipc and uts paths: the first container makes a System V segment in the pod's ipc namespace" \
	"sysv-shm: ok 0x4e535255" "$OUT"
assert_match "  ... the config's hostname with a joined uts: a warning, not set" \
	"nsrun: warning: hostname: not set: the uts namespace is joined" "$ERR"
bundle_with '["/nsrun-probe", "sysv-shm", "find", "0x4e535255"]' "$POD" "$(joins "$PODIPC" "$PODUTS")"
oci run --bundle "$T/bundle" i2
assert_eq "  ... the second container of the pod sees it" "sysv-shm: ok 0x4e535255" "$OUT"
bundle_with '["/nsrun-probe", "sysv-shm", "find", "0x4e535255"]' "$POD" "$(joins "" "")"
oci run --bundle "$T/bundle" i4
assert_match "control: without the paths, an ipc namespace of its own: no such segment" \
	"^sysv-shm: denied ENOENT" "$OUT"
bundle_with '["/nsrun-probe", "hostname"]' "$POD" "$(joins "" "")"
oci run --bundle "$T/bundle" i5
assert_eq "  ... and the config's hostname" "hostname: ok runc" "$OUT"
# exec (podman exec in a pod) joins them as the payload did
bundle_with '["/nsrun-probe", "sleep", "300"]' "$POD" "$(joins "$PODIPC" "$PODUTS")"
oci create --bundle "$T/bundle" i6 </dev/null
oci start i6
oci state i6
assert_match "  ... state of a container that joined them" '"status": *"running"' "$OUT"
check "  ... nsrun's own state records them" grep -q '"joined": *"ipc,uts"' "$ROOT/i6/state.json"
oci exec i6 /nsrun-probe sysv-shm find 0x4e535255
assert_eq "  ... exec in it: the pod's segment" "sysv-shm: ok 0x4e535255" "$OUT"
oci exec i6 /nsrun-probe hostname
assert_eq "  ... and the pod's hostname (the container's uts namespace, exec joins it)" "hostname: ok nsrun-pod" "$OUT"
oci delete --force i6
check "  ... delete leaves nothing under --root" test ! -e "$ROOT/i6"
# an ipc path alone (no network path): joined all the same
bundle_with '["/nsrun-probe", "sysv-shm", "find", "0x4e535255"]' "" "$(joins "$PODIPC" "")"
oci run --bundle "$T/bundle" i7
assert_eq "  ... an ipc path without a network path: joined" "sysv-shm: ok 0x4e535255" "$OUT"
# a pod whose infra container is nsrun's (podman's and Kubernetes' pause), on the
# pod's network: its pid file names its namespaces (the monitor's pid: taken as
# its init's), of its own user namespace, a child of the network's owner (two
# owners, the outer joined first)
bundle_with '["/nsrun-probe", "sleep", "300"]' "$POD" "c['hostname'] = 'nsrun-infra'"
oci create --bundle "$T/bundle" --pid-file "$T/infra.pid" infra </dev/null
oci start infra
oci exec infra /nsrun-probe sysv-shm make 0x4e535257
[ "$OUT" = "sysv-shm: ok 0x4e535257" ] || setup_failed "the infra container's segment: $OUT $ERR"
IPID=$(cat "$T/infra.pid")
bundle_with '["/nsrun-probe", "sleep", "300"]' "$POD" "$(joins "/proc/$IPID/ns/ipc" "/proc/$IPID/ns/uts")"
oci create --bundle "$T/bundle" i8 </dev/null
assert_eq "ipc and uts of an nsrun infra container, by its pid file: create" 0 "$RC"
oci start i8
oci exec i8 /nsrun-probe sysv-shm find 0x4e535257
assert_eq "  ... its segment" "sysv-shm: ok 0x4e535257" "$OUT"
oci exec i8 /nsrun-probe hostname
assert_eq "  ... its hostname" "hostname: ok nsrun-infra" "$OUT"
oci exec i8 /nsrun-probe loopback "$ADDR"
assert_eq "  ... and the pod's network, of another (outer) owner" "loopback: ok $ADDR" "$OUT"
oci delete --force i8
oci delete --force infra
# refused by name, before anything is made
bundle_with '["/nsrun-probe", "exit", "0"]' "$POD" "$(joins "$PODUTS" "")"
oci run --bundle "$T/bundle" r1
assert_match "a uts namespace as the ipc path: refused by name" \
	"(^|
)nsrun: linux.namespaces: ipc path $PODUTS: not an ipc namespace \(a namespace of another type\)" "$ERR"
assert_eq "  ... exit 1, the payload never ran" "1 " "$RC $OUT"
check "  ... nothing left under --root" test ! -e "$ROOT/r1"
bundle_with '["/nsrun-probe", "hostname"]' "" "$(joins "" "/proc/$$/ns/uts")"
oci run --bundle "$T/bundle" r2
if [ "$(id -u)" = 0 ]; then
	assert_match "nsrun's own uts namespace (the host's), as root: a warning that says so" \
		"nsrun: warning: uts namespace /proc/$$/ns/uts is nsrun's own: the container shares the host's hostname" \
		"$ERR"
	assert_eq "  ... and it runs there" "hostname: ok $(hostname)" "$OUT"
else
	assert_match "the host's uts namespace, unprivileged: refused, no rights in its owner" \
		"(^|
)nsrun: linux.namespaces: uts path /proc/$$/ns/uts: owned by a user namespace in which uid $(id -u) has no CAP_SYS_ADMIN" \
		"$ERR"
	assert_eq "  ... exit 1, the payload never ran" "1 " "$RC $OUT"
fi
check "  ... nothing left under --root" test ! -e "$ROOT/r2"

# ---- a pod's pid and user namespaces (podman pod create --share pid, Kubernetes'
# shareProcessNamespace): the pod, a user and pid namespace of ours held by a
# sleep (its pid 1); the container's init joins them (one of the pod's
# processes, not pid 1), and what the payload leaves is killed at its end
# (as root, made by the unprivileged user: a user namespace whose root is host
# root is refused, below)
as_pod_user=()
[ "$(id -u)" = 0 ] && as_pod_user=(runuser -u nsrun-test --)
"${as_pod_user[@]}" unshare --kill-child -Urpf --mount-proc sleep 600 </dev/null >/dev/null 2>&1 &
PODPID_HOLDER=$!
at_exit "kill $PODPID_HOLDER"
end=$((SECONDS + 30))
# its sleep: the first descendant of that name (runuser, unshare, sleep)
find_sleeper() {
	local p=$1 c
	while [ "$(cat "/proc/$p/comm" 2>/dev/null)" != sleep ]; do
		c=$(cat "/proc/$p/task/$p/children" 2>/dev/null) && [ -n "$c" ] || return 1
		p=${c%% *}
	done
	echo "$p"
}
until SLEEPER=$(find_sleeper "$PODPID_HOLDER"); do
	[ "$SECONDS" -lt "$end" ] || setup_failed "the pod's pid holder (unshare -Urpf) did not start"
	sleep 0.1
done
at_exit "kill -KILL $SLEEPER" # pid 1 of its namespace: a TERM from here is ignored (pid_namespaces(7))
PODPIDNS=$(readlink "/proc/$SLEEPER/ns/pid")
# pidjoin [user]: the edit that puts the holder's pid (and user) path in, and no maps
pidjoin() {
	echo "c['linux']['namespaces'] = [n for n in c['linux']['namespaces'] if n['type'] not in ('pid', 'user')]" \
		"+ [{'type': 'pid', 'path': '/proc/$SLEEPER/ns/pid'}]" \
		"+ ([{'type': 'user', 'path': '/proc/$SLEEPER/ns/user'}] if '${1:-}' else [{'type': 'user'}]);" \
		"c['linux'].pop('uidMappings', None); c['linux'].pop('gidMappings', None)"
}
# the processes in the pod's pid namespace, by our /proc
pod_procs() {
	local p n=0
	for p in /proc/[0-9]*; do [ "$(readlink "$p/ns/pid" 2>/dev/null)" = "$PODPIDNS" ] && n=$((n + 1)); done
	echo "$n"
}
bundle_with '["/nsrun-probe", "pids"]' "" "$(pidjoin user)"
oci run --bundle "$T/bundle" pj1
assert_match "pid and user paths: the payload sees the pod's pid 1 (its sleep), and is not pid 2" \
	'^pids: ok self=([3-9]|[1-9][0-9]+) 1:sleep ' "$OUT"
bundle_with '["/nsrun-probe", "pids"]' "" "c['linux'].pop('uidMappings', None); c['linux'].pop('gidMappings', None)"
oci run --bundle "$T/bundle" pj2
assert_match "control: without the paths, a pid namespace of its own (nsrun's init, the payload)" \
	'^pids: ok self=2 1:nsrun 2:nsrun-probe$' "$OUT"
bundle_with '["/nsrun-probe", "pids"]' "" "$(pidjoin)"
oci run --bundle "$T/bundle" pj3
assert_match "a pid path alone: joined, the container's user namespace its owner" \
	'^pids: ok self=([3-9]|[1-9][0-9]+) 1:sleep ' "$OUT"
bundle_with '["/nsrun-probe", "setsid-sleep", "300"]' "" "$(pidjoin user)"
oci run --bundle "$T/bundle" pj4
assert_match "  ... a payload that leaves a process there (setsid, double fork)" '^setsid-sleep: ok grandchild' "$OUT"
assert_eq "  ... which is killed at the end: only the pod's sleep is left" 1 "$(pod_procs)"
# exec (podman exec in a pod sharing pid) into a container that joined the pod's pid
# and user namespaces: the command is one of the pod's processes, in the
# container's user namespace; delete then kills the container's processes (its
# payload, what exec left running) and only those: the pod's sleep stays
# gone PID: no such process, or a zombie nobody reaped yet, within 10 s (a
# SIGKILLed process may take a moment to die on a loaded machine)
gone() {
	local end=$((SECONDS + 10))
	until [ ! -e "/proc/$1" ] || grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.1
	done
}
bundle_with '["/nsrun-probe", "sleep", "300"]' "" "$(pidjoin user)"
oci create --bundle "$T/bundle" pj8 </dev/null
oci start pj8
check "  ... nsrun's own state records the joined pid and user namespaces" \
	grep -q '"joined": *"pid,user"' "$ROOT/pj8/state.json"
oci state pj8
assert_match "  ... state: running, its init's pid" '"status": *"running",.*"pid": *[1-9]' "$(tr -d '\n' <<<"$OUT")"
oci exec pj8 /nsrun-probe pids
assert_match "exec in a container that joined the pod's pid namespace: the command sees the pod's pid 1 (its sleep)" \
	'^pids: ok self=([3-9]|[1-9][0-9]+) 1:sleep ' "$OUT"
oci exec --detach --pid-file "$T/pj8.exec" pj8 /nsrun-probe sleep 300
EPID=$(cat "$T/pj8.exec" 2>/dev/null)
if [ -n "$EPID" ]; then at_exit "kill -KILL $EPID"; fi
assert_eq "  ... exec --detach: the command is in the pod's pid namespace" "$PODPIDNS" \
	"$(readlink "/proc/$EPID/ns/pid" 2>&1)"
PJ8=
for p in /proc/[0-9]*; do
	[ "$p" != "/proc/$EPID" ] && [ "$(readlink "$p/ns/pid" 2>/dev/null)" = "$PODPIDNS" ] &&
		[ "$(cat "$p/comm" 2>/dev/null)" = nsrun-probe ] && PJ8=${p#/proc/}
done
assert_eq "  ... in the user namespace of the container's payload" "$(readlink "/proc/$PJ8/ns/user" 2>&1)" \
	"$(readlink "/proc/$EPID/ns/user" 2>&1)"
check "  ... control: the container's processes are in the pod before delete" test "$(pod_procs)" -gt 1
oci delete --force pj8
assert_eq "  ... delete --force: exit 0" 0 "$RC"
check "  ... kills the command exec left there" gone "$EPID"
check "  ... and the payload" gone "$PJ8"
# (the container's other processes in the pod, its init among them, are SIGKILLed by
# delete and may take a moment to die on a loaded machine: within 10 s, as gone)
end=$((SECONDS + 10))
until [ "$(pod_procs)" = 1 ] || [ "$SECONDS" -ge "$end" ]; do sleep 0.1; done
assert_eq "  ... and leaves the pod's sleep alone: only it is left in the pod" "1 alive" \
	"$(pod_procs) $(kill -0 "$SLEEPER" && echo alive)"
bundle_with '["/nsrun-probe", "sleep", "300"]' "" "c['linux'].pop('uidMappings', None); c['linux'].pop('gidMappings', None)"
oci create --bundle "$T/bundle" pj9 </dev/null
oci start pj9
oci exec pj9 /nsrun-probe pids
assert_match "control: exec in a container of its own pid namespace sees its init as pid 1" \
	'^pids: ok self=[0-9]+ 1:nsrun ' "$OUT"
oci delete --force pj9
bundle_with '["/nsrun-probe", "exit", "0"]' "" "$(pidjoin user); c['linux']['uidMappings'] = [{'containerID': 0, 'hostID': $(id -u), 'size': 1}]"
oci run --bundle "$T/bundle" pj5
assert_match "a user path with uidMappings: refused by name, with the reason" \
	"nsrun: config.json: linux.uidMappings: given with linux.namespaces' user path: the joined user namespace's maps are its maker's" "$ERR"
assert_eq "  ... exit 1, the payload never ran" "1 " "$RC $OUT"
bundle_with '["/nsrun-probe", "exit", "0"]' "" "c['linux']['namespaces'] = [n for n in c['linux']['namespaces'] if n['type'] != 'user'] + [{'type': 'user', 'path': '/proc/$$/ns/user'}]; c['linux'].pop('uidMappings', None); c['linux'].pop('gidMappings', None)"
oci run --bundle "$T/bundle" pj6
if [ "$(id -u)" = 0 ]; then
	assert_match "nsrun's own user namespace as the user path: refused (the container's root would be nsrun's)" \
		"nsrun: linux.namespaces: user path /proc/$$/ns/user: owned by nsrun's own user namespace" "$ERR"
else
	assert_match "nsrun's own user namespace as the user path, unprivileged: refused, no rights in it" \
		"nsrun: linux.namespaces: user path /proc/$$/ns/user: owned by a user namespace in which uid $(id -u) has no CAP_SYS_ADMIN" "$ERR"
fi
assert_eq "  ... exit 1, the payload never ran" "1 " "$RC $OUT"
check "  ... nothing left under --root" test ! -e "$ROOT/pj6"
if [ "$(id -u)" = 0 ]; then
	unshare --kill-child -Urpf --mount-proc sleep 600 </dev/null >/dev/null 2>&1 &
	ROOTPOD=$!
	at_exit "kill $ROOTPOD"
	end=$((SECONDS + 30))
	until ROOTSLEEPER=$(cat "/proc/$ROOTPOD/task/$ROOTPOD/children" 2>/dev/null) && [ -n "$ROOTSLEEPER" ]; do
		[ "$SECONDS" -lt "$end" ] || setup_failed "root's pid holder (unshare -Urpf) did not start"
		sleep 0.1
	done
	ROOTSLEEPER=${ROOTSLEEPER% }
	at_exit "kill -KILL $ROOTSLEEPER"
	bundle_with '["/nsrun-probe", "exit", "0"]' "" "c['linux']['namespaces'] = [n for n in c['linux']['namespaces'] if n['type'] != 'pid'] + [{'type': 'pid', 'path': '/proc/$ROOTSLEEPER/ns/pid'}]; c['linux'].pop('uidMappings', None); c['linux'].pop('gidMappings', None)"
	oci run --bundle "$T/bundle" pj7
	assert_match "a pid namespace whose owner's root is host root (root's unshare -r): refused" \
		"nsrun: the user namespace that owns the joined namespaces maps its root to host root" "$ERR"
	assert_eq "  ... exit 1, the payload never ran" "1 " "$RC $OUT"
fi

# ---- podman pods: `podman pod create` (its infra container nsrun's too) and two
# `podman run --pod` sharing its net, ipc and uts (podman's default --share): the
# second sees the first's System V segment and the pod's hostname
command -v podman >/dev/null || { not_ok "podman is installed (make deps)"; done_testing; exit 1; }
podman_private "$NSRUN"
# the probe's image, its entrypoint the probe and its command a sleep: the pod's
# infra container runs that (no catatonit pause image is needed)
podman_import "$TESTTMP/image" localhost/nsrun-probe \
	--change 'ENTRYPOINT ["/nsrun-probe"]' --change 'CMD ["sleep", "100000"]'
[ "$RC" = 0 ] || setup_failed "podman import of the probe image"
who=$([ "$(id -u)" = 0 ] && echo root || echo rootless)
pod pod create --name nsrun-pod --network none --hostname nsrun-pod --infra-image localhost/nsrun-probe
[ "$RC" = 0 ] || setup_failed "podman pod create"
# (the first run starts the pod's infra container, under nsrun too)
pod run --rm --pod nsrun-pod localhost/nsrun-probe sysv-shm make 0x4e535256
assert_eq "podman ($who) run --pod: the first container makes a System V segment" "sysv-shm: ok 0x4e535256" "$OUT"
pod run --rm --pod nsrun-pod localhost/nsrun-probe sysv-shm find 0x4e535256
assert_eq "  ... the second container of the pod sees it" "sysv-shm: ok 0x4e535256" "$OUT"
run_cmd ipcs -m
assert_eq "  ... in the pod's ipc namespace, not the host's (ipcs -m here: no such key)" "0 " \
	"$RC $(grep -i 0x4e535256 <<<"$OUT")"
pod run --rm --pod nsrun-pod localhost/nsrun-probe hostname
assert_eq "  ... and has the pod's hostname" "hostname: ok nsrun-pod" "$OUT"
# (the control, a container of an ipc namespace of its own, is i4's above)
pod run --rm --pod nsrun-pod localhost/nsrun-probe pids
assert_match "  ... control: a pod that does not share pid: the container's own pid namespace" \
	'^pids: ok self=2 1:nsrun 2:nsrun-probe$' "$OUT"
# podman pod create --share pid: its infra container and each container get a
# network namespace podman makes (and its ping_group_range sysctl, which the
# container's root may not write there: a warning); the container joins the
# infra's pid namespace and sees its processes.  Rootless, podman's network needs
# slirp4netns or pasta, which the suite does not: --network none
pidnet=()
[ "$(id -u)" = 0 ] || pidnet=(--network none)
pod pod create --name nsrun-pidpod --share pid "${pidnet[@]}" --infra-image localhost/nsrun-probe
[ "$RC" = 0 ] || setup_failed "podman pod create --share pid: $ERR"
pod run --rm --pod nsrun-pidpod "${pidnet[@]}" localhost/nsrun-probe pids
assert_match "podman ($who) pod create --share pid, run --pod: the container sees the infra's init and payload" \
	'^pids: ok self=([3-9]|[1-9][0-9]+) 1:nsrun 2:nsrun-probe ' "$OUT"
done_testing
