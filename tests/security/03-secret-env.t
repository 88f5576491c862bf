#!/bin/bash
# A secret in nsrun's own environment never reaches the payload (environ, /proc/1/environ).
. "$(dirname "$0")/../lib.sh"
require_all

TOKEN="nsrun-env-secret-$$-$RANDOM"
export NSRUN_TEST_SECRET_TOKEN="$TOKEN" AWS_SECRET_ACCESS_KEY="$TOKEN"

run_host_probe env
assert_match "control: host probe sees the variable" "NSRUN_TEST_SECRET_TOKEN=$TOKEN" "$OUT"

run_probe -- env
assert_eq "env probe ran" 0 "$RC"
assert_not_match "payload environ has no secret" "$TOKEN" "$OUT"

for p in /proc/1/environ /proc/self/environ /proc/2/environ /proc/1/cmdline; do
	run_probe -- read "$p"
	assert_not_match "$p has no secret" "$TOKEN" "$OUT$ERR"
done

# the secret is not smuggled through stdin mode either
run_nsrun --image python - <<<'import os; print(sorted(os.environ))' 
assert_not_match "stdin-mode python sees no secret variable names" 'NSRUN_TEST_SECRET_TOKEN|AWS_SECRET' "$OUT"

done_testing
