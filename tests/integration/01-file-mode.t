#!/bin/bash
# FILE mode: FILE runs with the image's interpreter, mounted read-only at /work/<basename>, cwd /work.
. "$(dirname "$0")/../lib.sh"
require_nsrun
require_userns
require_image python

HELLO=${NSRUN_EXAMPLES:-$TESTS_DIR/../examples}/hello.py
EXPECTED='Hello from nsrun!
system: Linux, python 3
host: nsrun, uid 65534, cwd /work
script: /work/hello.py
first 10 primes: [2, 3, 5, 7, 11, 13, 17, 19, 23, 29]
sum of squares 1..100: 338350'
if [ -f "$HELLO" ]; then
	cp "$HELLO" "$TESTTMP/hello.py" && chmod 644 "$TESTTMP/hello.py"
	run_nsrun --image python "$TESTTMP/hello.py"
	assert_eq "examples/hello.py: exit 0" 0 "$RC"
	assert_eq "examples/hello.py: exact output" "$EXPECTED" "$OUT"
	assert_eq "examples/hello.py: nothing on stderr" "" "$ERR"
	run_nsrun --image python "$TESTTMP/hello.py" one 'two words'
	assert_eq "examples/hello.py with arguments" "$EXPECTED
arguments: ['one', 'two words']" "$OUT"
else
	skip "examples/hello.py not found next to tests/ (set NSRUN_EXAMPLES)" "examples/hello.py"
fi

# a program written by the test
cat >"$TESTTMP/prog.py" <<'PY'
import os, sys
print("argv", sys.argv)
print("cwd", os.getcwd())
print("listing", sorted(os.listdir("/work")))
sys.stdout.flush()
sys.stderr.write("to-stderr\n")
sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
PY
chmod 644 "$TESTTMP/prog.py"
run_nsrun --image python "$TESTTMP/prog.py"
assert_eq "FILE mode: exit 0" 0 "$RC"
assert_eq "FILE mode: argv, cwd, /work contents" "argv ['/work/prog.py']
cwd /work
listing ['prog.py']" "$OUT"
assert_eq "FILE mode: stderr passes through" "to-stderr" "$ERR"
run_nsrun --image python "$TESTTMP/prog.py" 5
assert_eq "FILE mode: payload's exit status" 5 "$RC"

# relative FILE path
run_cmd bash -c 'cd "$1" && exec "$2" --image python prog.py 0' _ "$TESTTMP" "$NSRUN"
assert_match "FILE given as a relative path" "^argv \['/work/prog.py', '0'\]" "$OUT"

# not executable on the host: FILE mode does not need +x
chmod 444 "$TESTTMP/prog.py"
run_nsrun --image python "$TESTTMP/prog.py"
assert_eq "FILE without execute permission runs" 0 "$RC"

# FILE with spaces in the name
cp "$TESTTMP/prog.py" "$TESTTMP/my prog.py"
run_nsrun --image python "$TESTTMP/my prog.py"
assert_match "FILE with a space in its name" "^argv \['/work/my prog.py'\]" "$OUT"

done_testing
