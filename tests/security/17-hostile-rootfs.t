#!/bin/bash
# B08 / CVE-2019-16884, CVE-2023-28642: a rootfs whose /proc is a symlink or a fake tree must
# not make nsrun skip confinement: either 125 naming /proc, or a real procfs.
. "$(dirname "$0")/../lib.sh"
require_nsrun
require_userns
require_probe

mkroot() {
	local r=$1
	mkdir -p "$r"/{bin,work,tmp,dev,mnt,opt,etc/fakeproc/self}
	cp "$PROBE" "$r/bin/nsrun-probe"
	printf 'Uid:\t0\t0\t0\t0\nNoNewPrivs:\t0\nCapEff:\t000001ffffffffff\nSeccomp:\t0\n' >"$r/etc/fakeproc/self/status"
	chmod -R a+rX "$r"
}

for variant in relative-symlink absolute-symlink fake-tree; do
	R="$TESTTMP/$variant"
	mkroot "$R"
	case $variant in
	relative-symlink) ln -s etc/fakeproc "$R/proc" ;;
	absolute-symlink) ln -s /etc/fakeproc "$R/proc" ;;
	fake-tree) mkdir -p "$R/proc/self" && cp "$R/etc/fakeproc/self/status" "$R/proc/self/status" && chmod -R a+rX "$R/proc" ;;
	esac
	run_nsrun --rootfs "$R" -- /bin/nsrun-probe status
	if [ "$RC" = 125 ]; then
		ok "$variant /proc: refused (125)"
		assert_match "  ... message names /proc" '^nsrun: .*/proc' "$ERR"
	else
		assert_match "$variant /proc: real procfs (NoNewPrivs 1)" 'NoNewPrivs:[[:space:]]+1' "$OUT"
		assert_match "$variant /proc: real procfs (CapEff 0)" 'CapEff:[[:space:]]+0000000000000000' "$OUT"
		assert_match "$variant /proc: real procfs (Seccomp 2)" 'Seccomp:[[:space:]]+2' "$OUT"
	fi
	check "$variant: fake status file untouched" grep -q 'CapEff:.000001ffffffffff' "$R/etc/fakeproc/self/status"
done

# a /tmp symlink pointing outside the rootfs does not redirect the tmpfs mount onto the host
R="$TESTTMP/tmplink"; mkroot "$R"; rmdir "$R/tmp"; mkdir -m 777 "$TESTTMP/outside"; ln -s "$TESTTMP/outside" "$R/tmp"
mkdir -p "$R/proc"
run_nsrun --rootfs "$R" -- /bin/nsrun-probe write /tmp/escaped
if [ "$RC" = 125 ]; then ok "/tmp symlink to a host path: refused (125)"; else ok "/tmp symlink to a host path: ran (rc $RC)"; fi
check "  ... nothing written to the host directory" test ! -e "$TESTTMP/outside/escaped"
assert_eq "  ... host directory not mounted over" "" "$(awk -v d="$TESTTMP/outside" '$5 == d' /proc/self/mountinfo)"

done_testing
