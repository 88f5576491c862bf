#!/bin/bash
# nsrun pool: a client's frame cannot take the server down.  A request of JSON
# nested a million levels deep (within the frame limit) crashed the server (yajl
# frees a tree by recursion: SIGSEGV), with every request in flight; it is now
# refused with an error answer.  The controls: a request before and after it runs,
# and one nested within the limit is answered as any other.
# Then a request cannot raise the pool's --timeout or --output-limit (a security
# review: a request's "timeout" of an hour, or 0 for none, held its slot past the
# pool's bound; its "output_limit" of 1g took the pool's memory): a request asking
# more is capped at the pool's; the controls: one asking less gets its own.
. "$(dirname "$0")/../lib.sh"
require_nsrun
require_userns
require_image python

mkfifo "$TESTTMP/keep"
TMPDIR=$TESTTMP "$NSRUN" pool --socket "$TESTTMP/p.sock" --image python --size 3 --timeout 3 \
	--output-limit 100 <"$TESTTMP/keep" >"$TESTTMP/p.out" 2>"$TESTTMP/p.err" &
POOL_PID=$!
exec 8>"$TESTTMP/keep"
at_exit "exec 8>&-; kill $POOL_PID 2>/dev/null; wait $POOL_PID 2>/dev/null"
for _ in $(seq 1200); do
	[ -s "$TESTTMP/p.out" ] && break
	kill -0 "$POOL_PID" 2>/dev/null || break
	sleep 0.1
done
assert_eq "the pool says its socket" "$TESTTMP/p.sock" "$(head -1 "$TESTTMP/p.out")"

# frames — sends each argument (a Python expression giving the request's bytes) as
# one frame on its own connection; prints status (or the error) per answer
frames() {
	run_cmd timeout 120 python3 - "$TESTTMP/p.sock" "$@" <<'EOF'
import json, socket, struct, sys
for expr in sys.argv[2:]:
    body = eval(expr)
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    s.sendall(struct.pack(">I", len(body)) + body)
    head = b""
    while len(head) < 4:
        got = s.recv(4 - len(head))
        if not got:
            break
        head += got
    if len(head) < 4:
        print("no answer")
        continue
    n, doc = struct.unpack(">I", head)[0], b""
    while len(doc) < n:
        doc += s.recv(n - len(doc))
    a = json.loads(doc)
    e = a.get("error")
    print(a["status"], str((e.get("message") if isinstance(e, dict) else e) or a.get("stdout") or "").strip())
EOF
}
frames "b'{\"code\": \"print(6*7)\"}'" \
	"b'{\"code\": \"print(1)\", \"args\": ' + b'[' * 1000000 + b']' * 1000000 + b'}'" \
	"b'{\"code\": \"print(1)\", \"args\": ' + b'[' * 20 + b']' * 20 + b'}'" \
	"b'{\"code\": \"print(6*9)\"}'"
assert_eq "control: a request runs" "exited 42" "$(sed -n 1p <<<"$OUT")"
assert_match "a request nested a million levels deep is refused with an answer" \
	"^error .*nested deeper than [0-9]+ levels" "$(sed -n 2p <<<"$OUT")"
assert_match "  control: one nested 20 deep is answered as usual (args of strings only)" \
	'^error .*"args"\[0\]: expected a string' "$(sed -n 3p <<<"$OUT")"
assert_eq "  ... and the server goes on: the next request runs" "exited 54" "$(sed -n 4p <<<"$OUT")"
check "  ... its process is alive" kill -0 "$POOL_PID"

# ---- a request's limits: at most the pool's
# reqs JSON... — sends the requests at once, each on its own connection; prints per
# answer: status, limits.timeout_ms, run_us >= timeout (yes/no), stdout bytes kept,
# limits.output_bytes, and the error if any
reqs() {
	run_cmd timeout 200 python3 - "$TESTS_DIR" "$TESTTMP/p.sock" "$@" <<'PY'
import json, os, sys
from concurrent.futures import ThreadPoolExecutor
sys.path.insert(0, os.path.join(sys.argv[1], "..", "bindings", "python"))
from nsrun.pool import request
def one(doc):
    a = request(sys.argv[2], json.loads(doc), 180)
    lim = a.get("limits") or {}
    t = (lim.get("timeout_ms") or {}).get("value")
    o = (lim.get("output_bytes") or {}).get("value")
    e = a.get("error")
    e = (e.get("message") if isinstance(e, dict) else e) or ""
    ran = ((a.get("pool") or {}).get("run_us") or 0) >= (t or 0) * 1000
    return f'{a["status"]} {t} {"yes" if ran else "no"} {len(a.get("stdout") or "")} {o} {e}'.strip()
with ThreadPoolExecutor(len(sys.argv) - 3) as ex:
    for line in ex.map(one, sys.argv[3:]):
        print(line)
PY
}
SLEEP='import time; time.sleep(100)'
reqs "{\"code\": \"$SLEEP\", \"timeout\": 3600}" "{\"code\": \"$SLEEP\", \"timeout\": 0}" \
	"{\"code\": \"$SLEEP\", \"timeout\": 1}"
assert_eq "a request asking a timeout above the pool's is killed at the pool's" "timed_out 3000 yes 0 100 timed out after 3s" \
	"$(sed -n 1p <<<"$OUT")"
assert_eq "  ... and one asking 0 (none) too" "timed_out 3000 yes 0 100 timed out after 3s" "$(sed -n 2p <<<"$OUT")"
assert_eq "  control: one asking below the pool's is killed at its own" "timed_out 1000 yes 0 100 timed out after 1s" \
	"$(sed -n 3p <<<"$OUT")"

OUTPUT='import sys; sys.stdout.write(\"x\" * 5000)'
reqs "{\"code\": \"$OUTPUT\", \"output_limit\": 1000000}" "{\"code\": \"$OUTPUT\", \"output_limit\": 10}"
# (the third field, whether it ran past the timeout, is no matter here)
assert_match "a request asking an output limit above the pool's keeps the pool's" "^exited 3000 [a-z]+ 100 100$" \
	"$(sed -n 1p <<<"$OUT")"
assert_match "  control: one asking below keeps its own" "^exited 3000 [a-z]+ 10 10$" "$(sed -n 2p <<<"$OUT")"
check "  ... and the pool lives on" kill -0 "$POOL_PID"
done_testing
