#!/bin/bash
# nsrun-image pull/import end to end: a real registry on loopback (Debian's
# docker-registry binary with a temporary config and storage, started and
# stopped here: never the system service), an image made by this test with
# umoci from a copy of the `python` test image, pushed with skopeo, pulled
# into a temporary store, listed by `nsrun images` and run by nsrun. Also
# imports from oci:, oci-archive:, docker-archive: and plain paths, inspect,
# rm, replacement while a run of the old image is in progress, and pulls
# interrupted by SIGINT and SIGKILL (through a loopback proxy that stalls blob
# downloads) leaving no image and only leftovers the next pull removes.
#
# Needs (Debian packages): skopeo umoci docker-registry jq python3, and
# golang-github-containers-common (/etc/containers/policy.json for skopeo).
# Missing tools are a failure, not a skip. NSRUN_IMAGE_TOOL overrides the tool.
# Checks run by eval are single-quoted on purpose.
# shellcheck disable=SC2016,SC2012
. "$(dirname "$0")/../lib.sh"

TOOL=${NSRUN_IMAGE_TOOL:-$TESTS_DIR/../rootfs-tools/nsrun-image}
REGISTRY_BIN=${NSRUN_TEST_REGISTRY:-/usr/bin/docker-registry}
SRC_IMAGES=${NSRUN_IMAGES:-/var/tmp/nsrun-check/images}

missing=()
for t in skopeo umoci jq python3 flock; do
	command -v "$t" >/dev/null 2>&1 || missing+=("$t")
done
[ -x "$REGISTRY_BIN" ] || missing+=("$REGISTRY_BIN (package docker-registry)")
[ -x "$TOOL" ] || missing+=("$TOOL")
[ -x "$NSRUN" ] || missing+=("$NSRUN (run make)")
[ -f "$SRC_IMAGES/python/image.json" ] || missing+=("the python test image in $SRC_IMAGES (make test-image)")
if [ ${#missing[@]} -gt 0 ]; then
	echo "1..1"
	echo "not ok 1 - $TEST_NAME needs: ${missing[*]} (Debian: apt-get install skopeo umoci docker-registry jq)"
	_T_DONE=1 _T_PLANNED=1 _T_FAILED=1
	exit 1
fi

T=$TESTTMP
# a pull of the python image takes tens of seconds in the sandbox on a loaded
# machine: a hang guard five times a run's
export NSRUN_TEST_GUARD=$((${NSRUN_TEST_GUARD:-60} * 5))
STORE=$T/store
export HOME=$T/home XDG_RUNTIME_DIR=$T/run   # skopeo's auth/config lookups stay in here
mkdir -p "$HOME" "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
unset XDG_DATA_HOME SOURCE_DATE_EPOCH

REGISTRY_PID='' PROXY_PID=''
# bg_start NAME CMD... — a background helper whose pid is killed at exit
bg_start() {
	local name=$1
	shift
	"$@" >"$T/$name.log" 2>&1 &
	eval "${name}_PID=$!"
	at_exit "kill -KILL $! ; wait $!"
}

# wait_until SECONDS CMD... — poll CMD every 0.1 s
wait_until() {
	local i n=$(($1 * 10))
	shift
	for ((i = 0; i < n; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

http_ok() {  # URL — HTTP status 200
	python3 - "$1" <<'EOF' >/dev/null 2>&1
import sys, urllib.request
sys.exit(0 if urllib.request.urlopen(sys.argv[1], timeout=2).status == 200 else 1)
EOF
}

no_tmp_dirs() {  # STORE NAME — no .NAME.tmp.* / .NAME.old.* left
	! compgen -G "$1/.$2.tmp.*" >/dev/null && ! compgen -G "$1/.$2.old.*" >/dev/null
}

# ---------------------------------------------------------------- the registry

PORT=$(free_port)
mkdir -p "$T/registry/data"
cat >"$T/registry/config.yml" <<EOF
version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $T/registry/data
  delete:
    enabled: true
http:
  addr: 127.0.0.1:$PORT
  secret: nsrun-test-$$
EOF
# the binary alone, not the package's systemd unit (which serves /var/lib/docker-registry)
bg_start REGISTRY "$REGISTRY_BIN" serve "$T/registry/config.yml"
at_exit "rm -rf '$T/registry'"
if wait_until 20 http_ok "http://127.0.0.1:$PORT/v2/"; then
	ok "a private registry runs on 127.0.0.1:$PORT"
else
	not_ok "a private registry runs on 127.0.0.1:$PORT" "$(cat "$T/REGISTRY.log")"
	exit 1
fi
REG=127.0.0.1:$PORT

# ---------------------------------------------------------------- the test image

# A copy of the python image's rootfs (what this user can read: the image keeps
# /etc/shadow and the like from others) as one layer, with a config.
mkdir -p "$T/src"
tar -C "$SRC_IMAGES/python/rootfs" -cf - --ignore-failed-read . 2>/dev/null | tar -C "$T/src" -xf - 2>/dev/null
OCI=$T/oci
run_cmd sh -c "umoci init --layout '$OCI' && umoci new --image '$OCI:py' &&
	umoci insert --rootless --image '$OCI:py' '$T/src' / &&
	umoci config --image '$OCI:py' --config.entrypoint python3 --config.cmd=-V \
		--config.env PATH=/usr/local/bin:/usr/bin:/bin --config.env LANG=C.UTF-8 --config.env TEST_VAR=from-config \
		--config.workingdir /srv --config.user 1000:1000"
assert_eq "umoci builds an OCI image from the python rootfs" 0 "$RC"
rm -rf "$T/src"

run_cmd skopeo copy --quiet --dest-tls-verify=false "oci:$OCI:py" "docker://$REG/test/py:1"
assert_eq "skopeo pushes it to the registry" 0 "$RC"
run_cmd skopeo inspect --tls-verify=false "docker://$REG/test/py:1"
REG_DIGEST=$(jq -r .Digest <<<"$OUT")
assert_match "the registry has a digest for test/py:1" '^sha256:[0-9a-f]{64}$' "$REG_DIGEST"

# ---------------------------------------------------------------- pull from the registry

run_cmd "$TOOL" pull --tls-verify=false "docker://$REG/test/py:1" py-pulled --store "$STORE"
assert_eq "pull --tls-verify=false docker://$REG/test/py:1 succeeds" 0 "$RC"
J=$STORE/py-pulled/image.json
check "the image has rootfs/ and image.json" test -d "$STORE/py-pulled/rootfs" -a -f "$J"
check "only rootfs/ and image.json are in the image" \
	test "$(cd "$STORE/py-pulled" && ls -A | tr '\n' ' ')" = "image.json rootfs "
check "nothing is left beside it" no_tmp_dirs "$STORE" py-pulled
assert_eq "image.json: interpreter guessed from the image (python3)" '["python3"]' "$(jq -c .interpreter "$J")"
assert_eq "image.json: entrypoint and cmd" '["python3"] ["-V"]' "$(jq -c .entrypoint "$J") $(jq -c .cmd "$J")"
assert_eq "image.json: env from the config (+ PYTHONDONTWRITEBYTECODE)" \
	'["PATH=/usr/local/bin:/usr/bin:/bin","LANG=C.UTF-8","TEST_VAR=from-config","PYTHONDONTWRITEBYTECODE=1"]' \
	"$(jq -c .env "$J")"
assert_eq "image.json: workdir and user" '/srv 1000:1000' "$(jq -r '.workdir + " " + .user' "$J")"
assert_eq "image.json: source type, ref and the registry's digest" \
	"oci docker://$REG/test/py:1 $REG_DIGEST" "$(jq -r '.source | "\(.type) \(.ref) \(.digest)"' "$J")"
assert_match "image.json: created" '^[0-9]{4}-[0-9]{2}-[0-9]{2}T' "$(jq -r .created "$J")"
check "mount points exist" test -d "$STORE/py-pulled/rootfs/work" -a -d "$STORE/py-pulled/rootfs/proc" \
	-a -d "$STORE/py-pulled/rootfs/dev" -a -d "$STORE/py-pulled/rootfs/tmp"
assert_eq "no setuid/setgid files, no device nodes" "" \
	"$(find "$STORE/py-pulled/rootfs" -xdev \( -perm /6000 -o -type b -o -type c \) -print)"
assert_eq "everything is readable by others" "" \
	"$(find "$STORE/py-pulled/rootfs" -xdev ! -type l ! -perm -o=r -print |
		grep -vE '/etc/(g?shadow-?|security/opasswd|sudoers(\.d)?|ssl/private)$|/var/cache/debconf/passwords\.dat$' | head -5)"

run_cmd "$TOOL" list --store "$STORE"
assert_match "list shows the pulled image and its source" "^py-pulled +[0-9.]+[KMG]? +docker://$REG/test/py:1\$" "$OUT"
NSRUN_IMAGES=$STORE run_nsrun images
assert_eq "nsrun images lists what nsrun-image list lists" "py-pulled" "$OUT"

printf 'import os, sys\nprint("pulled", 6 * 7, sys.version_info[0], os.environ["TEST_VAR"], os.getuid())\n' >"$T/code.py"
chmod 644 "$T/code.py"
NSRUN_IMAGES=$STORE run_nsrun --image py-pulled "$T/code.py"
assert_eq "nsrun --image py-pulled code.py runs it with the image's python" "pulled 42 3 from-config 65534" "$OUT"
NSRUN_IMAGES=$STORE run_nsrun --image py-pulled -- -c 'import os; print(os.getcwd())'
assert_eq "-- CMD runs under the image's Entrypoint (python3), in its WorkingDir" "/srv" "$OUT"

run_cmd "$TOOL" pull --tls-verify=false "docker://$REG/test/py:1" py-pulled --store "$STORE"
check "pull of an existing name without --force fails" test "$RC" = 1
assert_match "... and says --force" "already exists.*--force" "$ERR"
run_cmd "$TOOL" pull "docker://$REG/test/py:1" py-tls --store "$STORE"
check "pull from a plain-HTTP registry without --tls-verify=false fails" test "$RC" = 1
check "... and leaves nothing" eval '[ ! -e "$STORE/py-tls" ] && no_tmp_dirs "$STORE" py-tls'
run_cmd "$TOOL" pull --quiet --tls-verify=false "docker://$REG/test/nope:1" py-nope --store "$STORE"
check "pull of a missing image fails and leaves nothing" \
	eval '[ "$RC" = 1 ] && [ ! -e "$STORE/py-nope" ] && no_tmp_dirs "$STORE" py-nope'
run_cmd "$TOOL" pull --tls-verify=maybe "docker://$REG/test/py:1" x --store "$STORE"
assert_eq "a bad --tls-verify value is a usage error" 2 "$RC"
run_cmd "$TOOL" pull "http://$REG/test/py:1" x --store "$STORE"
assert_eq "an unsupported transport is a usage error" 2 "$RC"
run_cmd "$TOOL" pull "docker://$REG/test/py:1" --store "$STORE"
assert_eq "pull without NAME is a usage error" 2 "$RC"

# ---------------------------------------------------------------- replacing while in use

# the run imports its modules only once the pull has finished (a file in a volume
# says so), whatever the machine's speed: the old tree must still be there then
SIG=$TESTTMP/sig
mkdir -p "$SIG" && chmod 777 "$SIG"
# (the run's --timeout and the guards are far above a pull's time on a loaded
# machine: what is tested is the order of events, not their speed)
NSRUN_IMAGES=$STORE NSRUN_TEST_GUARD=300 start_nsrun --timeout 300 --image py-pulled --entrypoint '' -v "$SIG:/sig:ro" -- python3 -c \
	'import os, time; print("started", flush=True)
while not os.path.exists("/sig/pulled"): time.sleep(0.05)
import json, email.parser; print("late-import", json.dumps(1))'
if wait_for_output started 60; then
	NSRUN_TEST_GUARD=300 run_cmd "$TOOL" pull --quiet --force --tls-verify=false "docker://$REG/test/py:1" py-pulled --store "$STORE"
	assert_eq "pull --force replaces the image while a run of it is in progress" "0 " "$RC $OUT"
	: >"$SIG/pulled"
	wait_nsrun
	assert_eq "the run of the old image keeps working (late imports succeed)" "started
late-import 1" "$OUT"
else
	wait_nsrun
	not_ok "a background run of py-pulled started" "$(_ctx)"
fi
NSRUN_IMAGES=$STORE run_nsrun --image py-pulled "$T/code.py"
assert_eq "the replaced image runs" "pulled 42 3 from-config 65534" "$OUT"
run_cmd "$TOOL" rm py-pulled --store "$STORE"   # deletes any old tree that is no longer in use
check "after the run, rm leaves nothing aside" no_tmp_dirs "$STORE" py-pulled

# ---------------------------------------------------------------- local sources

run_cmd skopeo copy --quiet "oci:$OCI:py" "oci-archive:$T/py-oci.tar:test/py:1"
run_cmd2=$RC
run_cmd skopeo copy --quiet "oci:$OCI:py" "docker-archive:$T/py-docker.tar:test/py:1"
assert_eq "skopeo writes an oci-archive and a docker-archive" "0 0" "$run_cmd2 $RC"

for src in "oci:$OCI:py" "oci-archive:$T/py-oci.tar" "docker-archive:$T/py-docker.tar" "$OCI" "$T/py-oci.tar" "$T/py-docker.tar"; do
	run_cmd "$TOOL" import --quiet "$src" imp --store "$STORE"
	if [ "$RC" = 0 ] && [ -z "$OUT$ERR" ]; then
		NSRUN_IMAGES=$STORE run_nsrun --image imp "$T/code.py"
		assert_eq "import ${src#"$T"/} (quiet) gives a working image" "pulled 42 3 from-config 65534" "$OUT"
		case $src in
		/*) assert_match "... recorded with its transport" '^(oci|oci-archive|docker-archive):/' "$(jq -r .source.ref "$STORE/imp/image.json")" ;;
		esac
	else
		not_ok "import ${src#"$T"/} (quiet) gives a working image" "$(_ctx)"
	fi
	"$TOOL" rm imp --store "$STORE" >/dev/null 2>&1
done
run_cmd "$TOOL" import "docker://$REG/test/py:1" imp --store "$STORE"
assert_eq "import refuses a registry (use pull)" 2 "$RC"
run_cmd "$TOOL" import "$T/code.py" imp --store "$STORE"
check "import of a file that is no image fails" test "$RC" = 1

# ---------------------------------------------------------------- inspect, rm

"$TOOL" import --quiet --interpreter python3,-I --env EXTRA=1 "oci:$OCI:py" py2 --store "$STORE" >/dev/null 2>&1
run_cmd "$TOOL" inspect py2 --store "$STORE"
assert_eq "inspect exits 0" 0 "$RC"
assert_eq "inspect prints image.json with path and size" "py2 $STORE/py2 true" \
	"$(jq -r '"\(.name) \(.path) \(.size > 1000000)"' <<<"$OUT")"
assert_eq "--interpreter and --env are recorded" '["python3","-I"] EXTRA=1' \
	"$(jq -c .interpreter <<<"$OUT") $(jq -r '.env[-1]' <<<"$OUT")"
run_cmd "$TOOL" inspect nope --store "$STORE"
check "inspect of a missing image fails" test "$RC" = 1
run_cmd "$TOOL" rm py2 --store "$STORE"
check "rm removes the image" eval '[ "$RC" = 0 ] && [ ! -e "$STORE/py2" ] && no_tmp_dirs "$STORE" py2'

# ---------------------------------------------------------------- interrupted pulls

# A proxy to the registry that passes manifests and stalls every blob request.
cat >"$T/stall.py" <<'EOF'
import socket, sys, threading, time
listen, upstream, flag = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    for s in (a, b):
        try: s.shutdown(socket.SHUT_RDWR)
        except OSError: pass
def serve(c):
    first = c.recv(65536)
    if b"/blobs/" in first.split(b"\r\n", 1)[0]:
        open(flag, "w").close()
        time.sleep(3600)
    u = socket.create_connection(("127.0.0.1", upstream))
    u.sendall(first)
    threading.Thread(target=pipe, args=(u, c), daemon=True).start()
    pipe(c, u)
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", listen)); s.listen(16)
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
EOF
SPORT=$(free_port)
bg_start PROXY python3 "$T/stall.py" "$SPORT" "$PORT" "$T/stalled"
wait_until 10 python3 -c "import socket; socket.create_connection(('127.0.0.1', $SPORT))" 2>/dev/null

# A background job of a script ignores SIGINT unless told otherwise.
env --default-signal=INT "$TOOL" pull --tls-verify=false "docker://127.0.0.1:$SPORT/test/py:1" py-int \
	--store "$STORE" >"$T/int.out" 2>"$T/int.err" &
PULL=$!
if wait_until 30 test -e "$T/stalled"; then
	check "during the pull only a temp dir exists, not the image" \
		eval '[ ! -e "$STORE/py-int" ] && compgen -G "$STORE/.py-int.tmp.*" >/dev/null'
	kill -INT "$PULL"
	if wait_until 10 eval '! kill -0 $PULL 2>/dev/null'; then
		wait "$PULL"
		assert_eq "SIGINT stops the pull at once with status 130" 130 "$?"
	else
		kill -KILL "$PULL"
		not_ok "SIGINT stops the pull at once" "$(cat "$T/int.err")"
	fi
	check "an interrupted pull leaves no image and no temp dir" \
		eval '[ ! -e "$STORE/py-int" ] && no_tmp_dirs "$STORE" py-int'
	assert_eq "no skopeo or umoci of the pull is left running" "" \
		"$(pgrep -u "$(id -u)" -af 'py-int\.tmp' || true)"
else
	kill -KILL "$PULL"
	not_ok "the pull through the stalling proxy reached the blobs" "$(cat "$T/int.err")"
fi

rm -f "$T/stalled"
"$TOOL" pull --tls-verify=false "docker://127.0.0.1:$SPORT/test/py:1" py-int --store "$STORE" >/dev/null 2>&1 &
PULL=$!
if wait_until 30 test -e "$T/stalled"; then
	kill -KILL "$PULL"
	wait "$PULL" 2>/dev/null
	kill -KILL "$PROXY_PID"   # the orphaned skopeo gets a closed connection and gives up
	wait "$PROXY_PID" 2>/dev/null
	left=$(compgen -G "$STORE/.py-int.tmp.*" | head -1)
	check "a killed pull leaves no image, only a temp dir" eval '[ ! -e "$STORE/py-int" ] && [ -n "$left" ]'
	wait_until 30 flock -n "$left" true
	run_cmd "$TOOL" pull --tls-verify=false "docker://$REG/test/py:1" py-int --store "$STORE"
	check "the next pull of that name succeeds" test "$RC" = 0 -a -f "$STORE/py-int/image.json"
	assert_match "... and says it removes the leftover" "removing stale .*\.py-int\.tmp\." "$ERR"
	check "... and nothing is left beside the image" no_tmp_dirs "$STORE" py-int
else
	kill -KILL "$PULL"
	not_ok "the second pull through the stalling proxy reached the blobs"
fi

# ---------------------------------------------------------------- the registry goes away

kill -TERM "$REGISTRY_PID" && wait "$REGISTRY_PID" 2>/dev/null
check "the registry is stopped" wait_until 10 eval '! http_ok "http://$REG/v2/"'

done_testing
