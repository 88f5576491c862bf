#!/bin/bash
# nsrun images, --help, --version.
. "$(dirname "$0")/../lib.sh"
require_nsrun

run_nsrun --help
assert_eq "--help: exit 0" 0 "$RC"
assert_match "--help: usage on stdout" '[Uu]sage' "$OUT"
assert_match "--help: documents --image" '--image' "$OUT"
assert_match "--help: documents --timeout" '--timeout' "$OUT"

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
