#!/bin/bash
# Issue 17, kind 3: the seccomp BPF cache must never weaken a later run. A payload with a
# rw volume over the cache directory rewrote a cached program to allow everything and fixed
# its checksum; the next run, with no volume, loaded it. Nothing stored beside the cache can
# prove an entry against a writer with the caller's uid, so nsrun refuses, before anything
# starts, a rw volume that reaches what later runs trust: the cache directory (the volume is
# it, an ancestor of it, an alias of one, or inside it; also before the directory exists),
# the profile directory, a profile given by path, the nsrun binary.
# Controls: the same volumes read-only work; a rw volume elsewhere works; the cache is used.
. "$(dirname "$0")/../lib.sh"
require_all

export XDG_CACHE_HOME="$TESTTMP/cache"
mkdir -p "$XDG_CACHE_HOME"
CACHE="$XDG_CACHE_HOME/nsrun"
OTHER="$TESTTMP/other"
mkdir -p "$OTHER"
chmod 777 "$OTHER"

# refused SPEC DESC — a run with volume SPEC is refused before the payload runs
refused() {
	rm -f "$OTHER/ran"
	run_nsrun --image python -v "$1" -v "$OTHER:/o:rw" -- sh -c 'touch /o/ran'
	assert_eq "$2: refused (125)" 125 "$RC"
	assert_match "  ... naming what the volume reaches" "^nsrun: volume \".*\" \\(rw\\) reaches $3" "$ERR"
	assert_nsrun_error "  ... one error line"
	check "  ... the payload never ran" test ! -e "$OTHER/ran"
}

# the cache directory does not exist yet: its parent, rw, would let a payload make it
refused "$XDG_CACHE_HOME:/c:rw" "rw volume over the cache's parent before the cache exists" "nsrun's seccomp cache"
check "  ... and nothing made the cache directory meanwhile" test ! -e "$CACHE"

run_nsrun --image python -- true
assert_eq "control: a plain run works" 0 "$RC"
check "control: ... and fills the cache" test -n "$(ls "$CACHE" 2>/dev/null)"

refused "$CACHE:/c:rw" "rw volume over the cache directory" "nsrun's seccomp cache"
refused "$XDG_CACHE_HOME:/c:rw" "rw volume over its parent" "nsrun's seccomp cache"
mkdir -p "$CACHE/sub"
refused "$CACHE/sub:/c:rw" "rw volume inside the cache directory" "nsrun's seccomp cache"
ln -s "$XDG_CACHE_HOME" "$TESTTMP/alias"
refused "$TESTTMP/alias:/c:rw" "rw volume through a symlink to the cache's parent" "nsrun's seccomp cache"

run_nsrun --image python -v "$CACHE:/c:ro" -v "$OTHER:/o:rw" -- sh -c 'ls /c | head -1; touch /o/ran'
assert_eq "control: the cache directory read-only works" 0 "$RC"
check "control: ... and the payload ran" test -e "$OTHER/ran"
run_nsrun --image python -v "$CACHE:/c:ro" -- sh -c 'echo x >/c/seccomp-x.bpf'
assert_ne "control: ... and cannot write to it" 0 "$RC"

# the profiles, the profile named by path, the binary
PROFILES=${NSRUN_SECCOMP_PROFILES:-}
if [ -n "$PROFILES" ] && [ -d "$PROFILES" ]; then
	refused "$PROFILES:/p:rw" "rw volume over the profile directory" "nsrun's seccomp profiles"
else
	skip "NSRUN_SECCOMP_PROFILES is not set to the profile directory" "rw volume over the profile directory"
fi
mkdir -p "$TESTTMP/prof"
cp "$TESTS_DIR/../seccomp-profiles/default.json" "$TESTTMP/prof/mine.json" 2>/dev/null ||
	echo '{"defaultAction": "SCMP_ACT_ALLOW"}' >"$TESTTMP/prof/mine.json"
chmod -R a+rX "$TESTTMP/prof"
rm -f "$OTHER/ran"
run_nsrun --image python --security-opt "seccomp=$TESTTMP/prof/mine.json" -v "$TESTTMP/prof:/p:rw" -- true
assert_eq "rw volume over the directory of a profile given by path: refused" 125 "$RC"
assert_match "  ... naming the profile" 'reaches the seccomp profile' "$ERR"
run_nsrun --image python --security-opt "seccomp=$TESTTMP/prof/mine.json" -v "$TESTTMP/prof:/p:ro" -- true
assert_eq "control: ... read-only it works" 0 "$RC"
bindir=$(dirname "$(readlink -f "$NSRUN")")
refused "$bindir:/b:rw" "rw volume over the nsrun binary's directory" "the nsrun binary"

# NSRUN_SECCOMP_CACHE=0: no cache is read or written, so its directory may be a volume
NSRUN_SECCOMP_CACHE=0 run_nsrun --image python -v "$CACHE:/c:rw" -- true
assert_eq "with the cache off its directory may be a rw volume" 0 "$RC"

done_testing
