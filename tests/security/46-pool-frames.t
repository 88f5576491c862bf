#!/bin/bash
# nsrun pool: a client's frame cannot take the server down.  A request of JSON
# nested a million levels deep (within the frame limit) crashed the server (yajl
# frees a tree by recursion: SIGSEGV), with every request in flight; it is now
# refused with an error answer.  The controls: a request before and after it runs,
# and one nested within the limit is answered as any other.
. "$(dirname "$0")/../lib.sh"
require_nsrun
require_userns
require_image python

mkfifo "$TESTTMP/keep"
TMPDIR=$TESTTMP "$NSRUN" pool --socket "$TESTTMP/p.sock" --image python --size 1 <"$TESTTMP/keep" \
	>"$TESTTMP/p.out" 2>"$TESTTMP/p.err" &
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
done_testing
