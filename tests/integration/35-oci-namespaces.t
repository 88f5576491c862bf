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
if [ "$(id -u)" = 0 ]; then
	NETNS=nsrun-ocins-$$
	ip netns add "$NETNS" || skip_all "ip netns add failed"
	at_exit "ip netns del $NETNS"
	{ ip -n "$NETNS" link set lo up && ip -n "$NETNS" addr add "$ADDR/32" dev lo; } || setup_failed "the pod's lo"
	POD=/run/netns/$NETNS
else
	# the pod: a user and network namespace of ours, held by a sleep
	unshare -Urn sh -c "ip link set lo up && ip addr add $ADDR/32 dev lo && exec sleep 600" </dev/null >/dev/null 2>&1 &
	HOLDER=$!
	at_exit "kill $HOLDER"
	end=$((SECONDS + 30))
	until [ "$(readlink "/proc/$HOLDER/ns/net" 2>/dev/null)" != "$(readlink /proc/self/ns/net)" ] &&
		[ "$(cat "/proc/$HOLDER/comm" 2>/dev/null)" = sleep ]; do
		[ "$SECONDS" -lt "$end" ] || setup_failed "the pod's holder (unshare -Urn) did not start"
		sleep 0.1
	done
	POD=/proc/$HOLDER/ns/net
fi

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

done_testing
