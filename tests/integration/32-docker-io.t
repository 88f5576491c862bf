#!/bin/bash
# nsrun api's interactive streams, driven by the real docker-py and docker CLI:
# exec and attach with stdin (the client's half-close is the EOF) and a TTY (a
# terminal inside, its size from resize before and during the run, raw output),
# each with its control (no stdin: /dev/null; no TTY: no terminal), exec Detach,
# docker exec -i / -it, docker run -i / -it through a terminal,
# Testcontainers' reaper (Ryuk) served by nsrun api with its protocol, and logs
# with stdout and stderr apart, timestamps, since, until and tail (docker-py and
# docker logs).
. "$(dirname "$0")/../lib.sh"
require_nsrun
require_userns
require_image python
/usr/bin/python3 -c 'import docker' 2>/dev/null || skip_all "no docker-py (Debian python3-docker; make deps)"

api_env
CLIENT=(/usr/bin/python3 "$TESTS_DIR/integration/docker-io-client.py")
py() { run_cmd timeout 180 "${CLIENT[@]}" "$@"; }

# service_procs — this test's services' processes (monitors, inits, stdin keepers:
# `nsrun -d ...` with this test's XDG_RUNTIME_DIR), alive
service_procs() { test_procs '* -d *' '* api ryuk *'; }
no_service_procs() {
	local _
	for _ in $(seq 100); do
		[ -z "$(service_procs)" ] && return 0
		sleep 0.1
	done
	service_procs >&2
	return 1
}

api_start
run_nsrun --stdin-once --image python -- true
assert_eq "--stdin-once without -d -i: nsrun's error (125)" 125 "$RC"
assert_match "  ... saying why" "^nsrun: --stdin-once: only with -d -i" "$ERR"
assert_nsrun_error "  ... in one line"
CTR="io-$$"
run_nsrun -d --name "$CTR" --image python -- sleep 300
assert_eq "a service to exec into" 0 "$RC"
check "  control for the leak check at the end: its processes are seen" test -n "$(service_procs)"
at_exit "$NSRUN rm -f $CTR"

DOCKER=${NSRUN_DOCKER_CLI:-$(dirname "$NSRUN")/tools/docker}
[ -x "$DOCKER" ] || DOCKER=/usr/bin/docker
export DOCKER_CONFIG="$TESTTMP/docker-config"
# one client process (docker-py's import alone takes a second or two)
if [ -x "$DOCKER" ]; then
	DOCKER_CLI=$DOCKER py exec_streams "$CTR" ::: attach_streams ::: ryuk ::: cli "$CTR" ::: logs_streams
else
	py exec_streams "$CTR" ::: attach_streams ::: ryuk ::: logs_streams
fi
[ "$RC" = 0 ] || diag "$ERR"

# ---- exec through docker-py: stdin, TTY, resize, Detach
SHOWN=""
# has DESC LINE — the client printed LINE (else its whole output, once, for the log)
has() {
	check "$1" grep -Fqx -- "$2" <<<"$OUT"
	grep -Fqx -- "$2" <<<"$OUT" || [ -n "$SHOWN" ] || { diag "$OUT"; SHOWN=1; }
}
has "exec with stdin: the client's bytes, its half-close as EOF, no terminal" \
	"stdin='hello from stdin\\ndone\\nnotty\\n' exit=0"
has "  control: without AttachStdin its stdin is /dev/null" "no_stdin='done\\n'"
has "exec with a TTY: a terminal, the size resized before start, echo, input, exit code" \
	"tty=True size=True echo=True got=True exit=7"
has "  ... resized while it runs: the size reaches the container's pty" "resized=True exit=0"
has "exec Detach: an empty reply, it runs on its own" "detach_reply='' running=True"
has "  ... its end is recorded, and what it did is there" "detached_exit=0 file='hi\\n'"
has "exec start without an upgrade: only the -t nsrun put there is dropped, -w's value \"-t\" stays; control: -w /tmp" \
	"plain_wd=True plain_wd_ok=b'/tmp\\n'"

# ---- attach through docker-py: docker run -i's and -it's requests
has "attach with stdin to an OpenStdin container: the client's bytes, its half-close as EOF (StdinOnce)" \
	"attach_stdin='to the container\\nend\\nnotty\\n' exit=0"
has "  ... its stderr in frames of type 2, apart from stdout" "attach_stderr='to-stderr\\n'"
has "  control: without OpenStdin its stdin is /dev/null" "attach_no_stdin='end\\n' exit=0"
has "attach to a Tty container: a terminal, resize while it runs, raw stream and logs, ^D ends it, inspect says Tty" \
	"attach_tty=True resized=True raw=True exit=4 logs_raw=True inspect_tty=True"
has "  ... its logs with timestamps: raw lines, each after its time" "tty_logs_ts=True"

# ---- Testcontainers' reaper, served by nsrun api (as testcontainers-node creates it)
has "ryuk: created with the Docker socket bound and Privileged (nothing of it runs in a container), logs Started!" \
	"ryuk_started=True"
has "  ... each filter line answered ACK" "ryuk_acks=b'ACK\\nACK\\n'"
has "  ... a line with another kind of filter, an empty term, too many labels or too long: closed, no ACK" \
	"refused=[True, True, True, True]"
if [ "$(id -u)" = 0 ]; then
	has "  ... another user's connection is closed unanswered (its filter is not taken: see other_kept)" \
		"other_uid_refused=True"
fi
has "  control: nothing is removed while its client is connected" "kept_while_connected=True"
has "  ... the client gone, the containers with its labels are removed; control: another session's kept" \
	"reaped=True other_kept=True"
has "  ... and the reaper ends (AutoRemove)" "ryuk_gone=True"

# ---- logs: the streams apart (the log's index), timestamps, since, until, tail
has "logs, control: both streams, in the order written" "logs_both='out1\\nerr1\\nout2\\nerr2\\n'"
has "logs stdout=True stderr=False: only stdout (frames of type 1)" "logs_out='out1\\nout2\\n'"
has "  ... stdout=False stderr=True: only stderr (type 2)" "logs_err='err1\\nerr2\\n'"
has "logs timestamps=True: each line after its RFC 3339 time with nanoseconds" "ts_parse=True"
has "  ... in order, and the 2 s sleep between the outputs is there" "ts_monotonic=True apart=True"
has "logs since= a second between the outputs: only the later" "since='out2\\nerr2\\n'"
has "  ... until= that second: only the earlier" "until='out1\\nerr1\\n'"
has "  ... with follow and timestamps: the later lines, then the end (it exited)" "follow_since=['out2', 'err2']"
has "logs since=yesterday: Docker's error shape, 400, naming it" "bad_since=400 True"
has "logs tail=2 counts the lines of both streams, then stderr is chosen" "tail_err='err2\\n'"

# ---- the docker CLI (make docker-cli puts it next to nsrun)
if [ -x "$DOCKER" ]; then
	has "docker exec -i: stdin piped through, to its end" "cli_i='PIPED IN\\n' rc=0"
	has "docker exec -it on a terminal: its size inside, ^D ends it, the exit code" "cli_it_size=True rc=3"
	has "docker run -i: stdin piped through to its end, the exit code" "cli_run_i='RUN WITH STDIN\\n' rc=2"
	has "docker run -it on a terminal: a terminal inside, its size, ^D ends it, the exit code" \
		"cli_run_it=True size=True rc=6"
	has "  ... docker rm removes them" "cli_rm='cli-run-i\\ncli-run-it\\n'"
	has "docker logs -t: stdout's lines on its stdout, stderr's on its stderr, each after its time" \
		"cli_t_out=['out1', 'out2'] cli_t_err=['err1', 'err2']"
	has "  ... the times the API gave docker-py" "cli_t_same=True"
	has "docker logs --since (RFC 3339 with nanoseconds, sent as SEC.NANO): only the later lines" \
		"cli_since='out2\\n' 'err2\\n' rc=0"
else
	skip "no docker CLI at $DOCKER (make docker-cli)" "the docker CLI: exec -i, exec -it"
fi

run_nsrun rm -f "$CTR"
check "nothing is left: no service directory (the API's containers were removed)" \
	test -z "$(find "$XDG_RUNTIME_DIR/nsrun" -mindepth 1 -maxdepth 1 2>/dev/null)"
check "  ... no monitor, init or keeper of a service's stdin is left" no_service_procs
kill "$API_PID"
wait "$API_PID"
assert_eq "SIGTERM: nsrun api exits 0" 0 "$?"
assert_eq "  ... having said only where it served (no sanitizer report either)" \
	"nsrun: api: serving on unix://$SOCK" "$(cat "$TESTTMP/api.err")"
done_testing
