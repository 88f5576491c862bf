#!/bin/bash
# `-- CMD [ARG...]`: run a command inside the image.
. "$(dirname "$0")/../lib.sh"
require_all

run_nsrun --image python -- sh -c 'echo "$0 $1"; echo err >&2' one two
assert_eq "sh -c: stdout and arguments" "one two" "$OUT"
assert_eq "sh -c: stderr" "err" "$ERR"
assert_eq "sh -c: exit 0" 0 "$RC"

run_nsrun --image python -- python3 -c 'import sys; print(sys.version_info[0])'
assert_eq "python3 found through PATH" 3 "$OUT"

run_probe -- cwd
assert_match "default cwd is /work" '^cwd: ok /work ' "$OUT"

run_nsrun --image python -- /bin/echo 'spaces  kept' '' "quote'd"
assert_eq "arguments passed verbatim" "spaces  kept  quote'd" "$OUT"

run_nsrun --image python -- sh -c 'cat' <<<'piped input'
assert_eq "stdin reaches the command" "piped input" "$OUT"

# large output on both streams does not deadlock (B31)
run_nsrun --image python --timeout 20 -- python3 -c '
import sys
sys.stderr.write("e" * 5_000_000); sys.stderr.flush()
sys.stdout.write("o" * 5_000_000); sys.stdout.flush()
sys.stderr.write("E" * 70_000)'
assert_eq "B31: 5 MB on stdout and stderr: exit 0" 0 "$RC"
assert_eq "  ... all stdout" 5000000 "${#OUT}"
assert_eq "  ... all stderr" 5070000 "${#ERR}"
if elapsed_lt 10; then ok "  ... quickly (${ELAPSED}s)"; else not_ok "  ... quickly" "took ${ELAPSED}s"; fi

# the image's interpreter and tools work as uid 65534 (B34)
run_nsrun --image python -- python3 -c '
import locale, os, pathlib, sys
p = pathlib.Path(os.path.expanduser("~/.cache/probe")); p.mkdir(parents=True, exist_ok=True)
print("HOME", os.environ.get("HOME"), "cache-ok")
print("enc", sys.stdout.encoding.lower(), locale.getpreferredencoding().lower())
print("\u00e9\u4e2d")'
assert_eq "B34: HOME usable, UTF-8 output" "HOME /tmp cache-ok
enc utf-8 utf-8
é中" "$OUT"

done_testing
