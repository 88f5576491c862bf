#!/bin/bash
# `-`: the program comes from standard input.
. "$(dirname "$0")/../lib.sh"
require_nsrun
require_userns
require_image python

run_nsrun --image python - <<<'print("from stdin", 6 * 7)'
assert_eq "stdin program: exit 0" 0 "$RC"
assert_eq "stdin program: output" "from stdin 42" "$OUT"

run_nsrun --image python - alpha beta <<<'import sys; print(sys.argv[1:])'
assert_eq "stdin program: arguments" "['alpha', 'beta']" "$OUT"

run_nsrun --image python - <<<'import sys; sys.exit(9)'
assert_eq "stdin program: exit status" 9 "$RC"

# a longer program (bigger than a pipe buffer)
{ for i in $(seq 3000); do echo "x$i = $i  # padding padding padding padding"; done; echo 'print(x3000)'; } >"$TESTTMP/big.py"
run_nsrun --image python - <"$TESTTMP/big.py"
assert_eq "stdin program larger than 64 KiB" "3000" "$OUT"

run_nsrun --image python - </dev/null
assert_eq "empty stdin program: exit 0, no output" "0:" "$RC:$OUT"

run_nsrun --image python - <<<'import os; print(os.getcwd(), os.getuid())'
assert_eq "stdin program: cwd /work, uid 65534" "/work 65534" "$OUT"

run_nsrun --image python - <<<'raise SystemExit("boom")'
assert_eq "stdin program: SystemExit message -> 1" "1" "$RC"
assert_match "  ... message on stderr" 'boom' "$ERR"

done_testing
