#!/bin/bash
# Choosing the tier costs a run no start-up (issue 16): without --isolation a run
# tries full at once and makes exactly the processes of --isolation full (no probe
# child).  Only where full's set-up fails before the payload starts is the run made
# again in the highest tier that works (the probes run then, on that path alone):
# the failed attempt started no payload, took none of the caller's stdin and left
# nothing behind, and an option the lower tier cannot give is refused with full's
# failure as the reason.  The place where full fails is a Landlock domain
# (nsrun-probe landlock-exec: no mount), as in 22-nesting.t.
. "$(dirname "$0")/../lib.sh"
require_all
command -v strace >/dev/null || skip_all "strace not installed (Debian: strace)"

LANDLOCK=("$PROBE" landlock-exec)
run_cmd "${LANDLOCK[@]}" "$PROBE" mount-tmpfs "$TESTTMP"
assert_match "control: the Landlock domain refuses mounts" '^mount-tmpfs: denied (EPERM|EACCES)' "$OUT"

# forks CMD...: how many processes CMD and its descendants create (clone, clone3,
# fork, vfork calls, failed ones too), counted by strace -f
forks() {
	strace -f -qq -e trace=clone,clone3,fork,vfork -o "$TESTTMP/strace" "$@" >/dev/null 2>&1 </dev/null
	grep -Ec '(clone3?|v?fork)\(' "$TESTTMP/strace"
}

# ---------------------------------------------------------------- no probe where full works
full=$(forks "$NSRUN" --isolation full --image python -- /bin/true)
auto=$(forks "$NSRUN" --image python -- /bin/true)
assert_eq "a default run creates the processes of --isolation full, no probe besides ($full)" "$full" "$auto"
assert_ne "  control: strace counts the run's processes" 0 "$full"
reduced=$(forks "${LANDLOCK[@]}" "$NSRUN" --isolation reduced --image python -- /bin/true)
fallback=$(forks "${LANDLOCK[@]}" "$NSRUN" --image python -- /bin/true)
if [ "$fallback" -gt "$reduced" ]; then
	ok "  control: where full fails, the failed attempt and the probes show as more ($fallback > $reduced)"
else
	not_ok "  control: where full fails, the failed attempt and the probes show as more ($fallback > $reduced)"
fi
run_nsrun --debug --image python -- /bin/true
assert_not_match "  ... and where it works the probes never run (--debug)" 'probing the tiers' "$ERR"
run_nsrun --debug --image python -- /nonexistent
assert_eq "a payload that cannot be executed is the payload's end (127), no fallback" 127 "$RC"
assert_not_match "  ... no probe" 'probing the tiers' "$ERR"

run_nsrun --debug --image python -w /etc/passwd -- true
assert_eq "a set-up failure of the run's own (--workdir is a file in the image): 125" 125 "$RC"
assert_match "  ... the probes ran after it (--debug)" 'probing the tiers' "$ERR"
assert_match "  ... found full works: full's error stands" '(^|
)nsrun: mount point "/etc/passwd" in the image: Not a directory$' "$ERR"
assert_not_match "  ... no lower tier, no warning" 'warning' "$ERR"

# ---------------------------------------------------------------- the fallback
snapshot_host
head -c 1000000 /dev/zero | tr '\0' x >"$TESTTMP/big"
COUNT='import sys; print(len(sys.stdin.read()))'
run_cmd "${LANDLOCK[@]}" "$NSRUN" --debug --image python -- python3 -c "$COUNT" < <(cat "$TESTTMP/big")
assert_eq "where full fails, a default run takes the reduced tier: the payload got all of a piped stdin" \
	"0 1000000" "$RC $OUT"
assert_match "  ... after full's set-up failed before the payload started (--debug)" \
	'debug: full isolation failed before the payload started \(cannot mount.*\): probing the tiers' "$ERR"
assert_eq "  ... one warning line" 1 "$(grep -c '^nsrun: warning:' <<<"$ERR")"
assert_match "  ... naming the tier and why not full" \
	'(^|
)nsrun: warning: isolation reduced \(full: cannot mount.*Landlock.*\): no mount namespace of its own' "$ERR"
run_cmd "${LANDLOCK[@]}" "$NSRUN" --json - --image python -- true
assert_match "  ... --json says reduced" '"isolation":"reduced"' "$OUT"
run_cmd "${LANDLOCK[@]}" "$NSRUN" --image python - < <(printf 'print("py", 6 * 7)\n')
assert_eq "  ... a program on stdin (-) reaches the reduced run whole" "0 py 42" "$RC $OUT"

# the caller's stdin, a pipe: a run whose payload started takes it (the relay reads
# it); a run refused after full failed must leave it to the caller
READ1='import sys; sys.stdin.read(1)'
THEN_CAT='"$@"; echo "rc=$?"; cat'
run_cmd bash -c "$THEN_CAT" sh "$NSRUN" --image python -- python3 -c "$READ1" < <(printf 'left for the caller')
assert_eq "control: a payload that started took the caller's piped stdin" "rc=0" "$OUT"
run_cmd bash -c "$THEN_CAT" sh "${LANDLOCK[@]}" "$NSRUN" -v "$TESTTMP:/data:ro" --image python -- python3 -c "$READ1" \
	< <(printf 'left for the caller')
assert_eq "where full fails, -v (which reduced cannot give) is refused and stdin is left to the caller" \
	$'rc=125\nleft for the caller' "$OUT"
assert_match "  ... the refusal names the option" '^nsrun: isolation reduced: volumes \(-v\) and --tmpfs need mount' "$ERR"
assert_match "  ... and full's failure as the reason" '(^|
)nsrun: hint: full: cannot mount.*Landlock' "$ERR"
assert_nsrun_error "  ... one error line and a hint"
run_cmd bash -c "$THEN_CAT" sh "${LANDLOCK[@]}" "$NSRUN" --isolation full --image python -- python3 -c "$READ1" \
	< <(printf 'left for the caller')
assert_eq "--isolation full there: refused (125), stdin left to the caller" $'rc=125\nleft for the caller' "$OUT"
assert_not_match "  ... no warning: full was asked for" 'warning' "$ERR"
assert_no_leaks "after the runs that fell back"

done_testing
