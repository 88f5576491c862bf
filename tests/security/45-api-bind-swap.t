#!/bin/bash
# nsrun api checks a bind's source against its volume roots at create; the container
# starts later (and so for NetworkMode container:NAME, at the end).  A payload with a writable volume under a root (a shared directory)
# swapped the checked directory for a symlink to a host directory outside the roots
# in between, and start mounted what the link pointed at.  Start now mounts the
# object create checked or refuses.  The controls: the same bind without the swap
# reads the directory create saw, and the payload can make the swap (a directory
# under the root becomes a link out of it, on the host).
. "$(dirname "$0")/../lib.sh"
require_nsrun
require_userns
require_image python

api_env
mkdir -m 755 "$TESTTMP/vol" "$TESTTMP/vol/shared" "$TESTTMP/outside"
echo checked >"$TESTTMP/vol/shared/x.txt"
echo host-secret >"$TESTTMP/outside/x.txt"
mkdir "$TESTTMP/vol/shared/d" "$TESTTMP/vol/shared/ok"
cp "$TESTTMP/vol/shared/x.txt" "$TESTTMP/vol/shared/d/"
cp "$TESTTMP/vol/shared/x.txt" "$TESTTMP/vol/shared/ok/"
chmod -R a+rwX "$TESTTMP/vol" "$TESTTMP/outside"
api_start --volume-root "$TESTTMP/vol"

# api METHOD PATH [BODY] — curl on the socket; OUT the body, then the status on its own line
api() {
	run_cmd timeout 60 curl -s --unix-socket "$SOCK" -X "$1" -H 'Content-Type: application/json' \
		-w '\n%{http_code}' ${3:+-d "$3"} "http://d$2"
}
# create SRC — a container that prints /mnt/x.txt of the bind SRC:/mnt:ro; ID
create() {
	api POST /containers/create "{\"Image\":\"python\",\"Cmd\":[\"cat\",\"/mnt/x.txt\"],\"HostConfig\":{\"Binds\":[\"$1:/mnt:ro\"]}}"
	ID=$(sed -n 's/.*"Id":"\([0-9a-f]*\)".*/\1/p' <<<"$OUT")
	[ -n "$ID" ] && at_exit "curl -s --unix-socket \"$SOCK\" -X DELETE \"http://d/containers/$ID?force=1\" >/dev/null"
}
# start_and_log — starts ID, waits for its end; LOG its output, START the start's reply
start_and_log() {
	api POST "/containers/$ID/start"
	START=$OUT
	LOG=""
	[[ "$START" == *$'\n204' ]] || return 0
	api POST "/containers/$ID/wait"
	LOG=$(timeout 60 curl -s --unix-socket "$SOCK" "http://d/containers/$ID/logs?stdout=1&stderr=1" | tr -cd '[:print:]\n')
}

create "$TESTTMP/vol/shared/ok"
assert_match "control: a bind under the root is created" "^[0-9a-f]{64}$" "$ID"
start_and_log
assert_match "  ... it starts and reads what create checked" "checked" "$LOG"

create "$TESTTMP/vol/shared/d"
assert_match "a bind of a shared directory under the root is created" "^[0-9a-f]{64}$" "$ID"
# the swap, by a payload that has the shared directory as a volume
run_nsrun --image python -v "$TESTTMP/vol/shared:/data:rw" -- \
	sh -c "rm -r /data/d && ln -s '$TESTTMP/outside' /data/d && echo swapped"
assert_eq "control: a payload with the shared volume replaces the directory by a link out of the root" \
	"0 swapped" "$RC $OUT"
assert_eq "  ... on the host" "$TESTTMP/outside" "$(readlink "$TESTTMP/vol/shared/d")"
start_and_log
assert_not_match "start does not mount the host directory the link points at" "host-secret" "$LOG$START"
assert_match "  ... it refuses, naming the bind" "bind source .*$TESTTMP/vol/shared/d.*symlink" "$START"
diag "start: $START"

# NetworkMode container:NAME is checked at create (a container made through the API);
# NAME may be the caller's own nsrun -d service by start
api POST "/containers/create?name=net$$" '{"Image":"python","Cmd":["sleep","600"]}'
assert_match "a container net$$ is created" $'\n201$' "$OUT"
api POST /containers/create '{"Image":"python","Cmd":["true"],"HostConfig":{"NetworkMode":"container:net'$$'"}}'
ID=$(sed -n 's/.*"Id":"\([0-9a-f]*\)".*/\1/p' <<<"$OUT")
assert_match "  ... and one joining its network" "^[0-9a-f]{64}$" "$ID"
at_exit "curl -s --unix-socket \"$SOCK\" -X DELETE \"http://d/containers/$ID?force=1\" >/dev/null"
api DELETE "/containers/net$$?force=1"
at_exit "\"$NSRUN\" rm -f net$$"
run_nsrun -d --name "net$$" --image python -- sleep 600
assert_eq "the caller's own nsrun -d service takes the name" 0 "$RC"
api POST /containers/create '{"Image":"python","Cmd":["true"],"HostConfig":{"NetworkMode":"container:net'$$'"}}'
assert_match "control: create refuses to join that service" "refused by nsrun api.*"$'\n403$' "$OUT"
api POST "/containers/$ID/start"
assert_match "start refuses it too (it was an API container at create)" \
	"NetworkMode .*refused by nsrun api: net$$ is now a service of nsrun -d"$'.*\n403$' "$OUT"
run_nsrun rm -f "net$$"
done_testing
