#!/bin/bash
# config.json's linux.namespaces[].path (issue 19, docs/oci-runtime.md): a pod's
# network namespace, made here, joined by the container; what cannot be joined
# refused by name, before anything is made.  As root the namespace is one of
# `ip netns add` (owned by our user namespace); as an unprivileged user, the one of
# an `unshare -Urn` holder (owned by a user namespace the caller made).
#
# Probe: the pod's address (10.231.7.1 on its lo) can be bound in the container;
# control: without path the container's own network namespace has no such address.
. "$(dirname "$0")/../lib.sh"
require_all

command -v runc >/dev/null || PATH=$PATH:/usr/sbin:/sbin
command -v runc >/dev/null || skip_all "runc is not installed (make deps): its spec is the bundle's template"
command -v ip >/dev/null || skip_all "ip (iproute2) is not installed (make deps)"

T=$TESTTMP/ocins
IMG=$TESTTMP/image
mkdir -p "$T/bundle" "$IMG/etc"
(cd "$IMG" && mkdir proc dev sys tmp run && touch etc/hosts etc/hostname etc/resolv.conf &&
	echo 'root:x:0:0:root:/:/nsrun-probe' >etc/passwd && echo 'root:x:0:' >etc/group &&
	cp "$PROBE_DIR/nsrun-probe" .)
chmod -R a+rX "$IMG"
ln -s "$IMG" "$T/bundle/rootfs"
(cd "$T/bundle" && runc spec --rootless) || skip_all "runc spec --rootless failed"
cp "$T/bundle/config.json" "$T/template.json"
ROOT=$T/state
oci() { run_cmd "$NSRUN" --root "$ROOT" "$@"; }
# bundle_with ARGS-AS-JSON NETWORK-PATH: config.json of the template with that
# network entry ("" : a network namespace of its own)
bundle_with() {
	python3 - "$T/template.json" "$T/bundle/config.json" "$1" "$2" <<'EOF'
import json, sys
src, dst, args, path = sys.argv[1:]
c = json.load(open(src))
c["process"]["args"] = json.loads(args)
c["process"]["terminal"] = False
c["linux"].pop("seccomp", None)
ns = [n for n in c["linux"]["namespaces"] if n["type"] != "network"]
ns.append({"type": "network", "path": path} if path else {"type": "network"})
c["linux"]["namespaces"] = ns
json.dump(c, open(dst, "w"))
EOF
}

ADDR=10.231.7.1
if [ "$(id -u)" = 0 ]; then
	NETNS=nsrun-ocins-$$
	ip netns add "$NETNS" || skip_all "ip netns add failed"
	at_exit "ip netns del $NETNS"
	ip -n "$NETNS" link set lo up && ip -n "$NETNS" addr add "$ADDR/32" dev lo || bail "set up the pod's lo"
	POD=/run/netns/$NETNS
else
	# the pod: a user and network namespace of ours, held by a sleep
	unshare -Urn sh -c "ip link set lo up && ip addr add $ADDR/32 dev lo && exec sleep 600" </dev/null >/dev/null 2>&1 &
	HOLDER=$!
	at_exit "kill $HOLDER"
	end=$((SECONDS + 30))
	until [ "$(readlink "/proc/$HOLDER/ns/net" 2>/dev/null)" != "$(readlink /proc/self/ns/net)" ] &&
		[ "$(cat "/proc/$HOLDER/comm" 2>/dev/null)" = sleep ]; do
		[ "$SECONDS" -lt "$end" ] || bail "the pod's holder (unshare -Urn) did not start"
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
bundle_with '["/nsrun-probe", "hostname"]' "$POD"
oci run --bundle "$T/bundle" j4
assert_eq "  ... its own uts namespace (the config's hostname)" "hostname: ok $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hostname"])' "$T/template.json")" "$OUT"

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
bundle_with '["/nsrun-probe", "exit", "0"]' "$T/nothing-here"
oci run --bundle "$T/bundle" b3
assert_match "a path that does not exist: refused" "network path $T/nothing-here: open: No such file" "$ERR"
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

done_testing
