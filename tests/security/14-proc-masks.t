#!/bin/bash
# Fresh /proc with Docker-style masks.
. "$(dirname "$0")/../lib.sh"
require_all

run_probe -- read /proc/self/status
assert_match "control: /proc/self/status readable inside" '^read: ok /proc/self/status [1-9][0-9]* bytes' "$OUT"
run_probe -- write /tmp/w
assert_eq "control: probe can open files for writing inside" "write: ok /tmp/w" "$OUT"

run_probe -- read /proc/kcore
if [ "$RC" = 1 ] || [[ $OUT =~ ^read:\ ok\ /proc/kcore\ 0\ bytes ]]; then
	ok "/proc/kcore unreadable ($OUT)"
else
	not_ok "/proc/kcore unreadable" "$(_ctx)"
fi

for p in /proc/sysrq-trigger /proc/sys/kernel/hostname /proc/sys/kernel/core_pattern /proc/sys/vm/drop_caches /proc/sys/net/ipv4/ip_forward; do
	run_probe -- open-write $p
	assert_match "$p not writable" '^open-write: denied (EROFS|EACCES|EPERM|ENOENT) ' "$OUT"
done

for p in /proc/timer_list /proc/sched_debug /proc/keys; do
	run_probe -- read $p
	if [ "$RC" = 1 ] || [[ $OUT =~ ^read:\ ok\ $p\ 0\ bytes ]]; then ok "$p masked"; else not_ok "$p masked" "$(_ctx)"; fi
done

run_nsrun --image python -- sh -c 'grep " /proc " /proc/self/mountinfo | head -1'
assert_match "/proc is a fresh procfs" ' - proc ' "$OUT"
run_nsrun --image python -- sh -c 'grep " /proc/sys " /proc/self/mountinfo'
assert_match "/proc/sys is mounted read-only" ' /proc/sys ro' "$OUT"

done_testing
