#!/bin/bash
# Payload identity: uid/gid 65534, no supplementary groups (as root; see expected_groups), all five capability sets 0,
# NoNewPrivs 1 — also with --user 0:0.
. "$(dirname "$0")/../lib.sh"
require_all

field() { awk -v k="$1:" '$1 == k { $1 = ""; sub(/^ +/, ""); gsub(/\t/, " "); print; exit }' <<<"$OUT"; }

run_host_probe status
assert_match "control: probe prints the status fields on the host" 'CapBnd:' "$OUT"
assert_ne "control: host bounding set is not empty" "0000000000000000" "$(field CapBnd)"

check_identity() {
	local label=$1 uid=$2 gid=$3
	shift 3
	run_probe "$@" -- status
	assert_eq "$label: status ran" 0 "$RC"
	assert_eq "$label: Uid" "$uid $uid $uid $uid" "$(field Uid)"
	assert_eq "$label: Gid" "$gid $gid $gid $gid" "$(field Gid)"
	assert_eq "$label: no supplementary groups but the caller's own (see expected_groups)" \
		"$(expected_groups "$gid")" "$(norm_groups "$(field Groups)")"
	local c
	for c in CapInh CapPrm CapEff CapBnd CapAmb; do
		assert_eq "$label: $c is 0" "0000000000000000" "$(field $c)"
	done
	assert_eq "$label: NoNewPrivs" "1" "$(field NoNewPrivs)"
}

check_identity "default" 65534 65534
check_identity "--user 1000:1000" 1000 1000 --user 1000:1000
check_identity "--user 0:0" 0 0 --user 0:0

# python sees the same
run_nsrun --image python -- python3 -c 'import os; print(os.getuid(), os.getgid(), sorted(set(os.getgroups())))'
want_groups=$(expected_groups 65534 ", ")
assert_eq "python: uid gid groups" "65534 65534 [$want_groups]" "$OUT"

# a setuid-root binary gains nothing (nosuid volume/rootfs + NoNewPrivs)
run_nsrun --image python -- sh -c 'find / -xdev -perm -4000 -type f 2>/dev/null | head -1'
suid=$OUT
if [ -n "$suid" ]; then
	run_nsrun --image python -- sh -c "$suid --help >/dev/null 2>&1; id -u"
	assert_eq "running the image's setuid $suid does not gain root" 65534 "$(tail -1 <<<"$OUT")"
fi
if [ "$(id -u)" = 0 ]; then
	# root can plant a setuid-root copy of the probe in a volume
	mkdir -p "$TESTTMP/suid" && cp "$PROBE" "$TESTTMP/suid/suid-probe" && chmod 4755 "$TESTTMP/suid/suid-probe"
	chmod 755 "$TESTTMP/suid"
	run_cmd "$TESTTMP/suid/suid-probe" ids
	assert_match "control: setuid-root probe runs on the host" '^ids: ok uid=0 .*euid=0' "$OUT"
	run_nsrun --image python -v "$TESTTMP/suid:/opt:ro" -- /opt/suid-probe ids
	assert_match "setuid-root probe in a volume: euid stays 65534" '^ids: ok uid=65534 gid=65534 euid=65534 egid=65534' "$OUT"
	run_nsrun --rootfs "$TESTTMP/suid" -- /suid-probe ids
	[ "$RC" = 0 ] && assert_match "setuid-root probe in --rootfs: euid stays 65534" '^ids: ok uid=65534 .*euid=65534' "$OUT"
else
	diag "not root: cannot plant a setuid-root binary; the image's own setuid files (if any) were tried"
fi

done_testing
