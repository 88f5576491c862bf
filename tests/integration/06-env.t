#!/bin/bash
# Environment: scrubbed to PATH, HOME=/tmp, LANG=C.UTF-8, the image's env and -e values.
. "$(dirname "$0")/../lib.sh"
require_all

export NSRUN_TEST_HOST_VAR=leak-$$ LD_LIBRARY_PATH=/nonexistent/leak PYTHONPATH=/leak TERM=xterm-leak
run_probe -e FOO=bar -e 'SPACED=a b  c' --env EMPTY= --env EQ=x=y -- env
env_out=$OUT
get() { sed -n "s/^$1=//p" <<<"$env_out" | head -1; }

assert_eq "HOME=/tmp" /tmp "$(get HOME)"
assert_eq "LANG=C.UTF-8" C.UTF-8 "$(get LANG)"
assert_match "PATH set to a system PATH" '^(/[a-z/]+)(:/[a-z/]+)*$' "$(get PATH)"
assert_match "PATH contains /usr/bin" '(^|:)/usr/bin(:|$)' "$(get PATH)"
assert_eq "-e FOO=bar" bar "$(get FOO)"
assert_eq "-e value with spaces" "a b  c" "$(get SPACED)"
assert_eq "--env EMPTY= is set and empty" "EMPTY=" "$(grep -x 'EMPTY=' <<<"$env_out")"
assert_eq "--env EQ=x=y keeps the second =" "x=y" "$(get EQ)"
for v in NSRUN_TEST_HOST_VAR LD_LIBRARY_PATH PYTHONPATH TERM USER LOGNAME SHELL PWD OLDPWD; do
	assert_eq "host $v not passed" "" "$(grep "^$v=" <<<"$env_out")"
done
others=$(grep -vE '^(PATH|HOME|LANG|FOO|SPACED|EMPTY|EQ)=' <<<"$env_out" || true)
[ -n "$others" ] && diag "other variables (must come from the image's env): $others"
assert_not_match "nothing from the host environment" "leak-$$|/leak|xterm-leak" "$env_out"

run_probe -e HOME=/tmp/h -e LANG=C -e PATH=/bin -- env
assert_match "-e overrides HOME" '(^|
)HOME=/tmp/h(
|$)' "$OUT"
assert_match "-e overrides LANG" '(^|
)LANG=C(
|$)' "$OUT"

run_nsrun --image python -e HOME=/tmp/h -- sh -c 'echo $HOME'
assert_eq "B34: -e HOME=/tmp/h" /tmp/h "$OUT"

# -e KEY without a value passes nsrun's own value, as docker run does: the caller
# names the variable, so it is an explicit choice; an unset KEY is not passed at all
run_cmd env NSRUN_PASSED=from-host "$NSRUN" --image python -e NSRUN_PASSED -- sh -c 'echo "[${NSRUN_PASSED-unset}]"'
assert_eq "-e KEY passes nsrun's value of KEY" "[from-host]" "$OUT"
run_cmd env -u NSRUN_UNSET_VAR "$NSRUN" --image python -e NSRUN_UNSET_VAR -- sh -c 'echo "[${NSRUN_UNSET_VAR-unset}]"'
assert_eq "-e KEY of an unset variable passes nothing" "[unset]" "$OUT"
assert_eq "  ... and runs (rc 0)" 0 "$RC"

done_testing
