#!/bin/bash
# Seccomp profiles (issue 3): podman's profile loads unchanged; unknown syscall names (a safe
# skip in an allowlist, a warning and under --strict an error for a hole in a default-allow
# profile); malformed profiles fail before anything runs; `nsrun seccomp check`; the
# compiled-program cache under $XDG_CACHE_HOME/nsrun; a profile name that does not exist.
. "$(dirname "$0")/../lib.sh"
require_all

PROFILES=${NSRUN_SECCOMP_PROFILES:-$TESTS_DIR/../seccomp-profiles}
PODMAN_PROFILE=${NSRUN_PODMAN_SECCOMP:-/usr/share/containers/seccomp.json}
HELLO=${NSRUN_EXAMPLES:-$TESTS_DIR/../examples}/hello.py
MARKER=PAYLOAD-RAN-5f3a
P="$TESTTMP/profiles"
mkdir -p "$P"

NL=$'\n'
# the payload that must not run when the profile is refused
MARKER_CMD=(sh -c "echo $MARKER")

# lines of $ERR that are not empty
err_lines() { grep -c . <<<"$ERR" || true; }

# ------------------------------------------------------------ podman's profile

if [ -r "$PODMAN_PROFILE" ] && [ -f "$HELLO" ]; then
	cp "$HELLO" "$TESTTMP/hello.py" && chmod 644 "$TESTTMP/hello.py"
	run_nsrun --image python --security-opt "seccomp=$PODMAN_PROFILE" "$TESTTMP/hello.py"
	assert_eq "podman profile: examples/hello.py exits 0" 0 "$RC"
	assert_eq "podman profile: examples/hello.py output" "Hello from nsrun!
system: Linux, python 3
host: nsrun, uid 65534, cwd /work
script: /work/hello.py
first 10 primes: [2, 3, 5, 7, 11, 13, 17, 19, 23, 29]
sum of squares 1..100: 338350" "$OUT"
	assert_match "podman profile: loads unchanged, nothing on stderr but notes or warnings" \
		"^(|(nsrun: (note|warning): [^${NL}]*(${NL}|$))+)$" "$ERR"
	[ -n "$ERR" ] && diag "podman profile stderr: $ERR"

	# what it denies to a payload without capabilities (rules with excludes.caps CAP_SYS_ADMIN)
	run_probe --security-opt "seccomp=$PODMAN_PROFILE" -- perf-event-open
	assert_eq "podman profile: perf_event_open without CAP_SYS_ADMIN is EPERM" \
		"perf-event-open: denied EPERM sw-task-clock" "$OUT"
	run_probe --security-opt "seccomp=$PODMAN_PROFILE" -- unshare user
	# unshare(CLONE_NEWUSER): EPERM where the profile allows unshare only with CAP_SYS_ADMIN
	# (moby's layout); containers-common's profile lists it among the unconditional allows,
	# and then nsrun must not deny more than the profile says
	uncond=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(any("unshare" in r.get("names", []) and r.get("action") == "SCMP_ACT_ALLOW"
          and not r.get("args") and not (r.get("includes") or {}) for r in d.get("syscalls", [])))' \
		"$PODMAN_PROFILE" 2>&1)
	if [ "$uncond" = True ]; then
		diag "$PODMAN_PROFILE allows unshare unconditionally ($(dpkg-query -W -f '${Package} ${Version}' golang-github-containers-common 2>/dev/null)): unshare(CLONE_NEWUSER) is not denied by it"
		assert_eq "podman profile: unshare(CLONE_NEWUSER) as the profile says (allowed unconditionally)" \
			"unshare: ok user" "$OUT"
	else
		assert_eq "podman profile: unshare(CLONE_NEWUSER) without CAP_SYS_ADMIN is EPERM" \
			"unshare: denied EPERM user" "$OUT"
	fi
elif [ ! -r "$PODMAN_PROFILE" ]; then
	skip "podman's profile $PODMAN_PROFILE is missing (apt-get install golang-github-containers-common)" "podman profile"
else
	skip "examples/hello.py not found next to tests/ (set NSRUN_EXAMPLES)" "podman profile: examples/hello.py"
fi

# ------------------------------------------------------------ unknown syscall names

# (a) an allow rule naming an unknown syscall in an allowlist profile: skipping it is safe
sed '0,/"syscalls": \[/s//"syscalls": [{"names": ["no_such_syscall_xyz"], "action": "SCMP_ACT_ALLOW"},/' \
	"$PROFILES/default.json" >"$P/allow-unknown.json"
if ! grep -q no_such_syscall_xyz "$P/allow-unknown.json"; then
	not_ok "test setup: allow-unknown.json has the unknown name" "sed did not find '\"syscalls\": [' in $PROFILES/default.json"
fi
run_nsrun --image python --security-opt "seccomp=$P/allow-unknown.json" -- "${MARKER_CMD[@]}"
assert_eq "unknown name in an allow rule: the payload runs" "0 $MARKER" "$RC $OUT"
assert_match "unknown name in an allow rule: silent or a note naming it" \
	"^(|(nsrun: (note|warning): [^${NL}]*no_such_syscall_xyz[^${NL}]*(${NL}|$))+)$" "$ERR"
# (--strict also refuses limits no cgroup can enforce: none asked for here, the profile is the subject)
run_nsrun --strict --memory 0 --pids-limit 0 --image python --security-opt "seccomp=$P/allow-unknown.json" -- "${MARKER_CMD[@]}"
assert_eq "unknown name in an allow rule: not an error under --strict (no hole)" "0 $MARKER" "$RC $OUT"

# (b) a deny rule naming an unknown syscall in a default-allow profile: a hole, warned about
cat >"$P/deny-unknown.json" <<'EOF'
{"defaultAction": "SCMP_ACT_ALLOW",
 "syscalls": [{"names": ["no_such_syscall_xyz", "keyctl"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}
EOF
run_probe --security-opt "seccomp=$P/deny-unknown.json" -- keyctl
assert_eq "unknown name in a deny rule: runs, the known name in the rule is enforced" \
	"1 keyctl: denied EPERM join-session-keyring" "$RC $OUT"
assert_eq "unknown name in a deny rule: one stderr line" 1 "$(err_lines)"
assert_match "unknown name in a deny rule: 'nsrun: warning:' naming the syscall" \
	"^nsrun: warning: .*no_such_syscall_xyz" "$ERR"
run_nsrun --strict --image python --security-opt "seccomp=$P/deny-unknown.json" -- "${MARKER_CMD[@]}"
assert_eq "unknown name in a deny rule, --strict: exit 125" 125 "$RC"
assert_nsrun_error "unknown name in a deny rule, --strict: one 'nsrun:' error line"
assert_match "unknown name in a deny rule, --strict: the error names the syscall" "no_such_syscall_xyz" "$ERR"
assert_not_match "unknown name in a deny rule, --strict: no warning line as well" "nsrun: warning:" "$ERR"
assert_eq "unknown name in a deny rule, --strict: the payload does not run" "" "$OUT"

# ------------------------------------------------------------ malformed profiles

head -c 300 "$PROFILES/default.json" >"$P/truncated.json"
echo '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": 5}' >"$P/syscalls-number.json"
echo '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": "read", "action": "SCMP_ACT_ERRNO"}]}' >"$P/names-string.json"
echo '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["read"], "action": "SCMP_ACT_FOO"}]}' >"$P/action-foo.json"
echo '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["read"], "action": "SCMP_ACT_ERRNO", "args": [{"index": 7, "value": 1, "op": "SCMP_CMP_EQ"}]}]}' >"$P/arg-index-7.json"
: >"$P/empty.json"
chmod -R a+rX "$P"

for f in truncated syscalls-number names-string action-foo arg-index-7 empty; do
	run_nsrun --image python --security-opt "seccomp=$P/$f.json" -- "${MARKER_CMD[@]}"
	assert_eq "malformed $f.json: exit 125" 125 "$RC"
	assert_nsrun_error "malformed $f.json: one 'nsrun: ' line (+ hints)"
	assert_match "malformed $f.json: the error names the file" "^nsrun: [^${NL}]*$P/$f\.json" "$ERR"
	assert_eq "malformed $f.json: the payload does not run" "" "$OUT"
done

# ------------------------------------------------------------ nsrun seccomp check

run_nsrun seccomp check default
assert_eq "seccomp check default: exit 0" 0 "$RC"
assert_eq "seccomp check default: nothing on stderr" "" "$ERR"
assert_match "seccomp check default: the default action" "(^|${NL})default action: SCMP_ACT_ERRNO" "$OUT"
assert_match "seccomp check default: the architectures" "(^|${NL})architectures: SCMP_ARCH_" "$OUT"
assert_match "seccomp check default: an allow rule line" "${NL}  syscalls\[[0-9]+\]: SCMP_ACT_ALLOW" "$OUT"
assert_match "seccomp check default: the EPERM rule line" "${NL}  syscalls\[[0-9]+\]: SCMP_ACT_ERRNO\(1 EPERM\)" "$OUT"

run_nsrun seccomp check "$P/action-foo.json"
assert_eq "seccomp check bad.json: exit 125" 125 "$RC"
assert_nsrun_error "seccomp check bad.json: one 'nsrun: ' error line"
assert_match "seccomp check bad.json: names the file and the problem" "$P/action-foo\.json.*SCMP_ACT_FOO" "$ERR"

run_nsrun seccomp check "$P/allow-unknown.json"
assert_eq "seccomp check allow-unknown.json: exit 0" 0 "$RC"
l=$(grep no_such_syscall_xyz <<<"$OUT" | grep -iv 'names:' || true)
assert_match "seccomp check allow-unknown.json: lists the skipped name as safe (no hole)" "no_such_syscall_xyz.*safe" "$l"
assert_not_match "seccomp check allow-unknown.json: not called a hole" "hole" "${l,,}"

run_nsrun seccomp check "$P/deny-unknown.json"
assert_eq "seccomp check deny-unknown.json: exit 0 (holes are reported, not fatal)" 0 "$RC"
l=$(grep no_such_syscall_xyz <<<"$OUT" | grep -iv 'names:' || true)
assert_match "seccomp check deny-unknown.json: lists the skipped name as a hole" "no_such_syscall_xyz.*hole" "${l,,}"

# ------------------------------------------------------------ the cache

CACHE="$TESTTMP/cache"
mkdir -p "$CACHE"
cache_files() { find "$CACHE/nsrun" -mindepth 1 -maxdepth 1 2>/dev/null | sort; }
run_cached_probe() { run_cmd env XDG_CACHE_HOME="$CACHE" "$NSRUN" --image python -v "$PROBE_DIR:/mnt:ro" -- /mnt/nsrun-probe unshare user; }

run_cached_probe
assert_eq "cache: first run works (filter active)" "1 unshare: denied EPERM user" "$RC $OUT"
files=$(cache_files)
assert_match "cache: one cache file under \$XDG_CACHE_HOME/nsrun/" "^$CACHE/nsrun/[^/${NL}]+$" "$files"
assert_eq "cache: the directory is private (0700)" 700 "$(stat -c %a "$CACHE/nsrun" 2>&1)"
F=$(head -1 <<<"$files")
good=$(sha256sum <"$F" 2>&1)

run_cached_probe
assert_eq "cache: a second run works" "1 unshare: denied EPERM user" "$RC $OUT"
assert_eq "cache: still one valid file after the second run" "$files $good" "$(cache_files) $(sha256sum <"$F" 2>&1)"

size=$(stat -c %s "$F")
head -c "$size" /dev/urandom >"$F"
run_cached_probe
assert_eq "cache: a garbage entry is ignored, the run works and is filtered" "1 unshare: denied EPERM user" "$RC $OUT"
assert_eq "cache: nothing on stderr about the garbage entry" "" "$ERR"
assert_eq "cache: the garbage entry is rewritten valid" "$files $good" "$(cache_files) $(sha256sum <"$F" 2>&1)"

: >"$F"
run_cached_probe
assert_eq "cache: a truncated (empty) entry is ignored, the run works" "1 unshare: denied EPERM user" "$RC $OUT"
assert_eq "cache: the truncated entry is rewritten valid" "$files $good" "$(cache_files) $(sha256sum <"$F" 2>&1)"

# one flipped byte in the middle (header fields or program): a checksum mismatch, a miss
cp "$F" "$TESTTMP/entry"
size=$(stat -c %s "$F")
off=$((size / 2))
b=$(od -An -tu1 -j "$off" -N1 "$F" | tr -d ' ')
printf '%b' "$(printf '\\%03o' $(((b ^ 1) & 255)))" | dd of="$F" bs=1 seek="$off" conv=notrunc status=none
assert_ne "cache: test setup: one byte changed" "$good" "$(sha256sum <"$F")"
run_cached_probe
assert_eq "cache: an entry with one flipped byte is ignored, the run is filtered" "1 unshare: denied EPERM user" "$RC $OUT"
assert_eq "cache: the flipped entry is rewritten valid" "$files $good" "$(cache_files) $(sha256sum <"$F" 2>&1)"

# a valid entry of another (allow-everything) profile put in place of the default's: the key
# in the entry does not match, so it is a miss; used, it would leave the payload unconfined
echo '{"defaultAction": "SCMP_ACT_ALLOW"}' >"$P/allow-all.json"
chmod a+r "$P/allow-all.json"
run_cmd env XDG_CACHE_HOME="$CACHE" "$NSRUN" --image python -v "$PROBE_DIR:/mnt:ro" \
	--security-opt "seccomp=$P/allow-all.json" -- /mnt/nsrun-probe unshare user
assert_eq "cache: test setup: the allow-all profile runs unfiltered" "0 unshare: ok user" "$RC $OUT"
G=$(cache_files | grep -v -x -F "$F" | head -1)
if [ -n "$G" ]; then
	cp "$G" "$F"
	run_cached_probe
	assert_eq "cache: another profile's valid entry under the default's name is not used" \
		"1 unshare: denied EPERM user" "$RC $OUT"
	assert_eq "cache: the swapped entry is rewritten valid" "$good" "$(sha256sum <"$F" 2>&1)"
else
	not_ok "cache: the allow-all profile left an entry of its own" "files: $(cache_files)"
fi

# warnings are printed on a cache hit too, and --strict still refuses
for i in 1 2; do
	run_cmd env XDG_CACHE_HOME="$CACHE" "$NSRUN" --image python --security-opt "seccomp=$P/deny-unknown.json" -- "${MARKER_CMD[@]}"
	assert_eq "cache: unknown name in a deny rule, run $i: runs" "0 $MARKER" "$RC $OUT"
	assert_match "cache: unknown name in a deny rule, run $i: the warning" "^nsrun: warning: .*no_such_syscall_xyz" "$ERR"
	run_cmd env XDG_CACHE_HOME="$CACHE" "$NSRUN" --strict --image python --security-opt "seccomp=$P/deny-unknown.json" -- "${MARKER_CMD[@]}"
	assert_eq "cache: unknown name in a deny rule, --strict run $i: exit 125, nothing runs" "125 " "$RC $OUT"
done

# a profile whose content changes (same path, same mtime) is not served from the cache
echo '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["keyctl"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}' >"$P/changing.json"
chmod a+r "$P/changing.json"
touch -d '2020-01-01 00:00:00' "$P/changing.json"
run_cmd env XDG_CACHE_HOME="$CACHE" "$NSRUN" --image python -v "$PROBE_DIR:/mnt:ro" \
	--security-opt "seccomp=$P/changing.json" -- /mnt/nsrun-probe keyctl
assert_eq "cache: a profile denying keyctl with EPERM" "1 keyctl: denied EPERM join-session-keyring" "$RC $OUT"
echo '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["keyctl"], "action": "SCMP_ACT_ERRNO", "errnoRet": 13}]}' >"$P/changing.json"
touch -d '2020-01-01 00:00:00' "$P/changing.json"
run_cmd env XDG_CACHE_HOME="$CACHE" "$NSRUN" --image python -v "$PROBE_DIR:/mnt:ro" \
	--security-opt "seccomp=$P/changing.json" -- /mnt/nsrun-probe keyctl
assert_eq "cache: the same file changed to EACCES (same mtime) takes effect" "1 keyctl: denied EACCES join-session-keyring" "$RC $OUT"

# a cache location that cannot be used is no error
echo not-a-directory >"$TESTTMP/cache-file"
run_cmd env XDG_CACHE_HOME="$TESTTMP/cache-file" "$NSRUN" --image python -v "$PROBE_DIR:/mnt:ro" -- /mnt/nsrun-probe unshare user
assert_eq "cache: XDG_CACHE_HOME a regular file: the run works, filtered, silently" "1 unshare: denied EPERM user|" "$RC $OUT|$ERR"

NOCACHE="$TESTTMP/nocache"
mkdir -p "$NOCACHE"
run_cmd env XDG_CACHE_HOME="$NOCACHE" NSRUN_SECCOMP_CACHE=0 "$NSRUN" --image python -v "$PROBE_DIR:/mnt:ro" -- /mnt/nsrun-probe unshare user
assert_eq "NSRUN_SECCOMP_CACHE=0: the run works and is filtered" "1 unshare: denied EPERM user" "$RC $OUT"
assert_eq "NSRUN_SECCOMP_CACHE=0: nothing written under \$XDG_CACHE_HOME" "" "$(find "$NOCACHE" -mindepth 1 2>&1)"

# ------------------------------------------------------------ a profile name that does not exist

run_nsrun --image python --security-opt seccomp=nonexistent-name -- "${MARKER_CMD[@]}"
assert_eq "seccomp=nonexistent-name: exit 125" 125 "$RC"
assert_nsrun_error "seccomp=nonexistent-name: one 'nsrun: ' line (+ hints)"
assert_match "seccomp=nonexistent-name: the message names it" "^nsrun: [^${NL}]*nonexistent-name" "$ERR"
assert_eq "seccomp=nonexistent-name: the payload does not run" "" "$OUT"

done_testing
