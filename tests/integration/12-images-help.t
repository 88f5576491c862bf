#!/bin/bash
# nsrun images, --help, --version.
. "$(dirname "$0")/../lib.sh"
require_nsrun

run_nsrun --help
assert_eq "--help: exit 0" 0 "$RC"
assert_match "--help: usage on stdout" '[Uu]sage' "$OUT"
assert_match "--help: documents --image" '--image' "$OUT"
assert_match "--help: documents --timeout" '--timeout' "$OUT"
assert_match "--help: --memory is the whole container's, not each process's" \
	'--memory BYTES +memory of the whole container, all its processes together' "$OUT"
# docs/usage.md has a row for every option of --help (the man page is made from --help
# by help2man, so it has them all); the control: the check finds an option it lacks
HELP=$OUT USAGE_DOC=$TESTS_DIR/../docs/usage.md
# undocumented FILE: the options of --help that no table row of FILE names
undocumented() {
	grep -oE '^  (-[a-zA-Z], )?--[a-z0-9-]+' <<<"$HELP" | grep -oE -- '--[a-z0-9-]+$' | sort -u |
		awk 'NR == FNR { if (/^\| /) rows = rows " " $0 " "; next }
			!match(rows, "[^a-z0-9-]" $0 "[^a-z0-9-]") { print }' "$1" -
}
if [ -f "$USAGE_DOC" ]; then
	assert_eq "docs/usage.md has a row for every option of --help" "" "$(undocumented "$USAGE_DOC" | tr '\n' ' ')"
	grep -v -- '--stdin-once' "$USAGE_DOC" >"$TESTTMP/usage.md"
	assert_eq "  control: without its --stdin-once row, the check names it" "--stdin-once " \
		"$(undocumented "$TESTTMP/usage.md" | tr '\n' ' ')"
else
	not_ok "docs/usage.md has a row for every option of --help" "no $USAGE_DOC beside the tests"
fi

run_nsrun --version
assert_eq "--version: exit 0" 0 "$RC"
assert_match "--version: prints a version" '^nsrun .*[0-9]' "$OUT"

require_userns
run_nsrun images
assert_eq "images: exit 0" 0 "$RC"
if grep -Eq '(^|[[:space:]])python([[:space:]]|$)' <<<"$OUT"; then
	ok "images lists python"
elif [ -n "${NSRUN_IMAGES:-}" ] && [ -d "$NSRUN_IMAGES/python" ]; then
	not_ok "images lists python" "$(_ctx)"
else
	skip "no python image in ${NSRUN_IMAGES:-the default store}" "images lists python"
fi

run_cmd env NSRUN_IMAGES="$TESTTMP" "$NSRUN" images
assert_eq "images on an empty store: exit 0" 0 "$RC"
assert_not_match "  ... lists nothing named python" 'python' "$OUT"

done_testing
