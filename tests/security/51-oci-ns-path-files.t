#!/bin/bash
# An OCI bundle's linux.namespaces[].path naming a file that is no namespace.
# nsrun opened the path with open(2) before asking the file what it was: a FIFO
# there blocked nsrun for ever (create never returned, its state directory
# stayed), and a device there was opened, with whatever that does.  Now the path
# is opened O_PATH and must be on nsfs before it is opened for reading.
# Probes: a FIFO as the network and uts path, and a directory (a regular
# file: integration/35-oci-namespaces.t): each refused at once (exit 1, as runc's
# errors; one nsrun: line besides the config's warnings, "not a namespace file"),
# nothing kept under --root.  Control: the uts namespace of a holder made here (unshare
# --uts, with -Ur when not root; hostname nsrun-holder51) joined by the same bundle: the payload sees
# its hostname.
. "$(dirname "$0")/../lib.sh"
require_all

T=$TESTTMP/ocinsf
oci_probe_bundle "$T" "$TESTTMP/image"
at_exit oci_cleanup
# bundle_ns TYPE PATH: the probe bundle printing its hostname, joining TYPE's PATH
bundle_ns() {
	oci_config "$T" '["/nsrun-probe", "hostname"]' '
ns = [n for n in c["linux"]["namespaces"] if n["type"] != argv[0]]
ns.append({"type": argv[0], "path": argv[1]})
c["linux"]["namespaces"] = ns' "" "$1" "$2"
}

plan 11

mkfifo "$T/fifo"
NL=$'\n'
mkdir "$T/dir"
n=0
for c in "network fifo" "uts fifo" "network dir"; do
	read -r type what <<<"$c"
	n=$((n + 1))
	bundle_ns "$type" "$T/$what"
	# a guard well above a refusal's time: before the fix this waited for ever
	NSRUN_TEST_GUARD=30 oci run --bundle "$T/bundle" f$n </dev/null
	assert_eq "$type path to a $what: refused (1), not a hang" 1 "$RC"
	assert_match "... as no namespace file, in one line" \
		"^nsrun: linux.namespaces: $type path $T/$what: not a namespace file [^$NL]*\$" "$(grep -v '^nsrun: warning: ' <<<"$ERR")"
	check "... nothing kept under --root" test ! -e "$ROOT/f$n"
done

# as root the holder's uts namespace is the host user namespace's (one made by root's
# unshare -Ur maps its root to host root, which a join refuses: 35-oci-namespaces)
holder_userns=(-Ur)
[ "$(id -u)" = 0 ] && holder_userns=()
unshare "${holder_userns[@]}" --uts sh -c 'hostname nsrun-holder51 && exec sleep 600' </dev/null >/dev/null 2>&1 &
HOLDER=$!
at_exit "kill $HOLDER"
end=$((SECONDS + 30))
until [ "$(readlink "/proc/$HOLDER/ns/uts" 2>/dev/null)" != "$(readlink /proc/self/ns/uts)" ] &&
	[ "$(cat "/proc/$HOLDER/comm" 2>/dev/null)" = sleep ]; do
	[ "$SECONDS" -lt "$end" ] || break
	sleep 0.1
done
bundle_ns uts "/proc/$HOLDER/ns/uts"
oci run --bundle "$T/bundle" ok1 </dev/null
assert_eq "control: a uts namespace's path is joined (exit 0)" 0 "$RC"
assert_eq "... the payload sees its hostname" "hostname: ok nsrun-holder51" "$OUT"
