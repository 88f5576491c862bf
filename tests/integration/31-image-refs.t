#!/bin/bash
# Docker image references (docs/images.md): malformed ones refused in one line;
# `nsrun pull redis:7` from a loopback registry (Debian's docker-registry, its
# storage in this test's directory) that a containers-registries.conf(5) entry
# puts in docker.io's place; the image lands under the reference's store name;
# its progress as docker pull's lines, on stderr and through nsrun api to the
# docker CLI and docker-py (as the pull runs); `nsrun-image pull REF` is nsrun pull;
# `nsrun --image redis:7` with no command runs its Entrypoint and Cmd with its
# Env and WorkingDir, -- CMD under its Entrypoint, --entrypoint in its place;
# its User said not applied; `nsrun image ls|inspect|rm`;
# and `docker pull`, `docker images`, `docker run`, `docker rmi` through
# `nsrun api`. The image is made here (umoci) from a few files of the python
# test image: a shell and libc, 2.4 MB, so each pull takes seconds.  Then the
# tests' redis:7 (make oci-test-images) under the same name, whose entrypoint
# switches user: with --userns subids, and the refusal without a range.
# shellcheck disable=SC2016
. "$(dirname "$0")/../lib.sh"

REGISTRY_BIN=${NSRUN_TEST_REGISTRY:-/usr/bin/docker-registry}
SRC_IMAGES=${NSRUN_IMAGES:-/var/tmp/nsrun-check/images}
missing=()
for t in skopeo umoci jq bwrap; do
	command -v "$t" >/dev/null 2>&1 || missing+=("$t")
done
[ -x "$REGISTRY_BIN" ] || missing+=("$REGISTRY_BIN (package docker-registry)")
[ -x "$NSRUN" ] || missing+=("$NSRUN (run make)")
[ -f "$SRC_IMAGES/python/image.json" ] || missing+=("the python test image in $SRC_IMAGES (make test-image)")
[ ${#missing[@]} -eq 0 ] || skip_all "needs: ${missing[*]} (make deps)"

T=$TESTTMP
# a pull runs skopeo and umoci in a sandbox: seconds, more on a loaded machine
export NSRUN_TEST_GUARD=$((${NSRUN_TEST_GUARD:-60} * 5))
export HOME=$T/home XDG_RUNTIME_DIR=$T/run NSRUN_IMAGES=$T/store
mkdir -p "$HOME" "$XDG_RUNTIME_DIR" "$NSRUN_IMAGES" && chmod 700 "$XDG_RUNTIME_DIR"
unset XDG_DATA_HOME XDG_CONFIG_HOME SOURCE_DATE_EPOCH
# what the store holds, but the name locks nsrun-image keeps
store_entries() { find "$NSRUN_IMAGES" -mindepth 1 -maxdepth 1 ! -name .lock -printf '%f\n'; }

# ---- malformed references, and one not pulled yet
run_nsrun --image 'Redis:7' -- true
assert_eq "--image with a malformed reference: exit 125" 125 "$RC"
assert_nsrun_error "  ... one error line and a hint"
assert_match "  ... saying what is wrong" '^nsrun: --image: "Redis:7": not a valid image name or reference: the repository name must be lower case' "$ERR"
run_nsrun pull 'redis@sha256:abc'
assert_eq "nsrun pull with a short digest: 125, saying so" \
	'125 nsrun: invalid image reference "redis@sha256:abc": a sha256 digest is 64 hex digits' "$RC $(head -1 <<<"$ERR")"
run_cmd "$TESTS_DIR/../rootfs-tools/nsrun-image" pull 'redis@sha256:abc'
assert_eq "nsrun-image pull of a reference is nsrun pull: the same error line, the same status" \
	'125 nsrun: invalid image reference "redis@sha256:abc": a sha256 digest is 64 hex digits' "$RC $(head -1 <<<"$ERR")"
run_nsrun --image redis:7 -- true
assert_eq "--image redis:7 before a pull: 125" 125 "$RC"
assert_match "  ... not found, with the pull as hint" 'image "redis:7" not found in .*nsrun: hint: pull it first: nsrun pull' "$(tr '\n' ' ' <<<"$ERR")"

# ---- the registry, as docker.io through registries.conf
check "a loopback registry as docker.io" start_registry "$T"
PORT=${REGISTRY#*:}

# ---- the image: a shell and libc, with Docker's config
R=$SRC_IMAGES/python/rootfs
mkdir -p "$T/src"
tar -C "$R" -cf - bin lib lib64 usr/bin/dash usr/bin/sh usr/bin/cat usr/bin/env usr/lib64 \
	usr/lib/x86_64-linux-gnu/libc.so.6 usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 | tar -C "$T/src" -xf -
mkdir -p "$T/src/srv" "$T/src/tmp"
run_cmd sh -c "umoci init --layout '$T/oci' && umoci new --image '$T/oci:r' &&
	umoci insert --rootless --image '$T/oci:r' '$T/src' / &&
	umoci config --image '$T/oci:r' --config.entrypoint /usr/bin/env --config.cmd sh --config.cmd=-c \
		--config.cmd 'echo from-cmd \$GREETING; pwd' --config.env PATH=/usr/bin:/bin --config.env GREETING=hello-ref \
		--config.workingdir /srv --config.exposedports 6379/tcp --config.volume /data --config.user 1000 &&
	skopeo copy --quiet --dest-tls-verify=false 'oci:$T/oci:r' 'docker://127.0.0.1:$PORT/library/redis:7'"
assert_eq "an OCI image made and pushed to the loopback registry as library/redis:7" 0 "$RC"
[ "$RC" = 0 ] || diag "$ERR"

# ---- nsrun pull
run_nsrun pull redis:7
assert_eq "nsrun pull redis:7 (docker.io mirrored by registries.conf): the reference pulled" \
	"0 docker.io/library/redis:7" "$RC $OUT"
[ "$RC" = 0 ] || diag "$ERR"
check "  ... stored under the reference's store name" test -f "$NSRUN_IMAGES/docker.io+library+redis=7/image.json"
# the image's one layer, by its short id as docker shows it, and the digest pulled
LAYER=$(skopeo inspect --raw "oci:$T/oci:r" | jq -r '.layers[0].digest' | cut -c8-19)
DIGEST=$(jq -r .source.digest "$NSRUN_IMAGES/docker.io+library+redis=7/image.json")
assert_eq "  ... a line per step on stderr, as docker pull's" \
	"7: Pulling from library/redis
$LAYER: Pulling fs layer
$LAYER: Downloading
$LAYER: Download complete
$LAYER: Extracting
$LAYER: Pull complete
Digest: $DIGEST
Status: Downloaded newer image for redis:7" "$ERR"
assert_eq "  ... and nothing else in the store" "docker.io+library+redis=7" "$(store_entries)"

run_nsrun --image redis:7
assert_eq "--image redis:7 without a command: Entrypoint+Cmd, Env, WorkingDir" $'0 from-cmd hello-ref\n/srv' "$RC $OUT"
assert_eq "  ... its User said not applied" \
	'nsrun: note: image "redis:7" names user "1000": not applied, the payload runs as uid 65534 (docs/images.md)' "$ERR"
run_nsrun --image docker.io/library/redis:7 -w / -- sh -c 'echo "$GREETING $(pwd)"; while read -r k v _; do [ "$k" = Uid: ] && echo "$v"; done </proc/self/status; exit 0'
assert_eq "the same image by its full reference, with a command (under its Entrypoint, env): -w wins, uid 65534" \
	$'0 hello-ref /\n65534' "$RC $OUT"
# docker run's rule: -- CMD runs under the image's Entrypoint (/usr/bin/env here, whose
# -i only env takes); --entrypoint replaces it, "" clears it
run_nsrun --image redis:7 -- -i A=b sh -c 'echo "$A-${GREETING:-}"'
assert_eq "-- CMD after the image's Entrypoint: env -i A=b sh -c ..." "0 b-" "$RC $OUT"
run_nsrun --image redis:7 --entrypoint '' -- -i A=b sh -c 'echo "$A"'
assert_eq "  control: --entrypoint '' runs -- CMD alone (no command -i: 127)" 127 "$RC"
run_nsrun --image redis:7 --entrypoint '' -- sh -c 'echo "$GREETING"'
assert_eq "  ... and a whole command runs as it is" "0 hello-ref" "$RC $OUT"
run_nsrun --image redis:7 --entrypoint sh -- -c 'echo x y'
assert_eq "--entrypoint CMD in the image's Entrypoint's place" "0 x y" "$RC $OUT"
run_nsrun --image redis:7 --entrypoint /usr/bin/env
assert_eq "  ... without a command: not the image's Cmd (docker run's rule), env alone" \
	"0 GREETING=hello-ref" "$RC $(grep -e ^GREETING= -e from-cmd <<<"$OUT")"
run_nsrun --image redis:7 --entrypoint ''
assert_eq "--entrypoint '' and no command: 125" 125 "$RC"
assert_match "  ... saying so" '^nsrun: no command: .*--entrypoint "" clears its entrypoint' "$ERR"

# ---- image ls, inspect
run_nsrun image ls
assert_match "nsrun image ls: Docker's table" '^REPOSITORY +TAG +IMAGE ID +CREATED +SIZE'$'\n''redis +7 +[0-9a-f]{12} ' "$OUT"
run_nsrun image inspect library/redis:7
assert_eq "nsrun image inspect: Docker's shape, with the image's config" \
	'0 ["redis:7"] ["/usr/bin/env"] ["sh","-c","echo from-cmd $GREETING; pwd"] "/srv" "1000" {"6379/tcp":{}} {"/data":{}}' \
	"$RC $(jq -c '.[0] | .RepoTags, .Config.Entrypoint, .Config.Cmd, .Config.WorkingDir, .Config.User, .Config.ExposedPorts, .Config.Volumes' <<<"$OUT" | tr '\n' ' ' | sed 's/ $//')"
run_nsrun image inspect nosuch:1
assert_eq "nsrun image inspect of an image not there: 1, saying so" '1 nsrun: no such image: nosuch:1' "$RC $ERR"

# ---- the docker CLI through nsrun api: rmi, pull, images, run
DOCKER=${NSRUN_DOCKER_CLI:-$(dirname "$NSRUN")/tools/docker}
[ -x "$DOCKER" ] || DOCKER=/usr/bin/docker
if [ -x "$DOCKER" ]; then
	export DOCKER_CONFIG=$T/docker-config DOCKER_HOST=unix://$T/api.sock
	"$NSRUN" api --socket "$T/api.sock" --idle-timeout 0 2>"$T/api.err" &
	API_PID=$!
	at_exit "kill $API_PID"
	for _ in $(seq 100); do [ -S "$T/api.sock" ] && break; sleep 0.1; done
	dk() { run_cmd timeout -s KILL 120 "$DOCKER" "$@"; }
	dk rmi redis:7
	assert_eq "docker rmi redis:7" "0 Untagged: redis:7" "$RC $(head -1 <<<"$OUT")"
	check "  ... its store entry is gone" test ! -e "$NSRUN_IMAGES/docker.io+library+redis=7"
	dk pull redis:7
	assert_eq "docker pull redis:7 through nsrun api" 0 "$RC"
	assert_match "  ... Docker's progress lines" 'Pulling from library/redis.*Status: Downloaded newer image for redis:7.*docker.io/library/redis:7' "$(tr '\n' ' ' <<<"$OUT")"
	assert_match "  ... with the layer's own lines and the digest" \
		"$LAYER: Pulling fs layer.*$LAYER: Download complete.*$LAYER: Pull complete.*Digest: sha256:[0-9a-f]{64}" \
		"$(tr '\n' ' ' <<<"$OUT")"
	dk images
	assert_match "docker images lists it" 'redis +7 +[0-9a-f]{12} ' "$OUT"
	dk run --rm redis:7
	assert_eq "docker run --rm redis:7: the image's Entrypoint and Cmd" $'0 from-cmd hello-ref\n/srv' "$RC $OUT"
	REG_PID=$(pgrep -f -- "$T/registry.yml")
	# a client that leaves mid-pull (the registry stopped: the pull cannot end on its
	# own before skopeo's 60 s timeout) stops it: its partial image is removed at once
	dk rmi redis:7
	kill -STOP "$REG_PID"
	run_cmd timeout -s KILL 150 python3 - "$T/api.sock" <<'PY'
import os, sys, time
import docker
c = docker.APIClient(base_url="unix://" + sys.argv[1], timeout=120)
s = c.pull("redis", tag="7", stream=True, decode=True)  # kept: its end closes the connection
next(s)
store = os.environ["NSRUN_IMAGES"]
for _ in range(600):
    if any(n.startswith(".docker.io+library+redis=7.tmp.") for n in os.listdir(store)):
        break
    time.sleep(0.1)
print("under way" if _ < 599 else "not under way", flush=True)
os._exit(0)  # the connection closed mid-stream
PY
	pulling() { compgen -G "$NSRUN_IMAGES/.docker.io+library+redis=7.tmp.*" >/dev/null; }
	gone=1
	for _ in $(seq 300); do pulling || { gone=0; break; }; sleep 0.1; done
	kill -CONT "$REG_PID"
	assert_eq "a docker-py client gone mid-pull: the pull stopped and its partial image removed within 30 s" \
		"0 under way 0 " "$RC $OUT $gone $(store_entries | tr '\n' ' ')"
	# docker-py's pull stream, read as it comes: the registry stopped (SIGSTOP), the
	# pull cannot end, yet its first line is there while the pull is under way (the
	# old stream came when the pull had ended); then the rest, parsed
	dk rmi redis:7
	kill -STOP "$REG_PID"
	run_cmd timeout -s KILL 150 python3 - "$T/api.sock" "$REG_PID" <<'PY'
import json, os, signal, sys, time
import docker
c = docker.APIClient(base_url="unix://" + sys.argv[1], timeout=120)
s = c.pull("redis", tag="7", stream=True, decode=True)
print(json.dumps(next(s)))
store = os.environ["NSRUN_IMAGES"]
for _ in range(600):  # the pull's own directory in the store: it is under way
    if any(n.startswith(".docker.io+library+redis=7.tmp.") for n in os.listdir(store)):
        break
    time.sleep(0.1)
print("under way" if _ < 599 else "not under way")
os.kill(int(sys.argv[2]), signal.SIGCONT)
bytes = {}
for m in s:
    if m.get("status") == "Downloading" and m.get("progressDetail"):
        bytes.setdefault(m["id"], []).append((m["progressDetail"].get("current"), m["progressDetail"].get("total")))
        continue
    print(m.get("id", "") + " " + (m.get("status") or "error: " + m.get("error", "")))
# each layer's byte counts: never past the total, the last one whole
for i, b in bytes.items():
    print("bytes %s %d %s %s" % (i, len(b), all(c is not None and t and c <= t for c, t in b),
                                 "%d/%d" % b[-1]), file=sys.stderr)
PY
	kill -CONT "$REG_PID"
	assert_eq "docker-py's pull stream: its first line while the registry is stopped and the pull under way" \
		'0 {"status": "Pulling from library/redis", "id": "7"} under way' "$RC $(head -2 <<<"$OUT" | tr '\n' ' ' | sed 's/ $//')"
	assert_match "  ... then the layer's steps and the end, each a JSON object" \
		"^$LAYER Pulling fs layer .*$LAYER Pull complete  Digest: sha256:[0-9a-f]{64}  Status: Downloaded newer image for redis:7 $" \
		"$(tail -n +3 <<<"$OUT" | tr '\n' ' ')"
	[ "$RC" = 0 ] || diag "$ERR"
	LAYER_SIZE=$(skopeo inspect --raw "oci:$T/oci:r" | jq -r '.layers[0].size')
	assert_match "  ... Downloading with the layer's bytes: current <= total, the last current = total = the manifest's size" \
		"^bytes $LAYER [0-9]+ True $LAYER_SIZE/$LAYER_SIZE\$" "$ERR"
	dk pull nosuch:1
	assert_eq "docker pull of an image the registry lacks: 1" 1 "$RC"
	assert_match "  ... with the pull's error" 'cannot read the manifest of docker://docker.io/library/nosuch:1' "$ERR"
else
	skip "no docker CLI at $DOCKER (make docker-cli takes it out of Debian's docker.io)" "docker pull/images/run/rmi through nsrun api"
fi

# ---- rm
run_nsrun image rm redis:7
assert_eq "nsrun image rm redis:7" "0 Untagged: redis:7" "$RC $(head -1 <<<"$OUT")"
assert_eq "  ... the store is empty again" "" "$(store_entries)"
run_nsrun --image redis:7 -- true
assert_eq "  ... and --image redis:7 is not found" 125 "$RC"

# ---- the tests' redis:7 (make oci-test-images: Debian's redis-server, an entrypoint
# that starts as root and runs the server as the redis user, as the official image's
# does): pushed over the tag, pulled by the reference, run with more than one id.  As
# root, a range of the test's own over /etc/subuid and /etc/subgid in a mount
# namespace of the test's (as 33-multi-id does), and an empty one for the refusal
if [ -f "$NSRUN_OCI_IMAGES/redis/index.json" ]; then
	if [ "$(id -u)" = 0 ]; then
		printf 'root:300000:65536\n' >"$T/subid"
		: >"$T/nosubid"
		with_subids() {
			local f=$1
			shift
			run_cmd unshare -m sh -c 'mount --bind "$1" /etc/subuid && mount --bind "$1" /etc/subgid && shift &&
				exec "$@"' sh "$f" "$NSRUN" "$@"
		}
	else
		with_subids() { shift; run_nsrun "$@"; }
	fi
	run_cmd skopeo copy --quiet --dest-tls-verify=false "oci:$NSRUN_OCI_IMAGES/redis:7" "docker://$REGISTRY/library/redis:7"
	[ "$RC" = 0 ] && run_nsrun pull -q redis:7
	assert_eq "the tests' redis:7 pushed and pulled as redis:7, -q: nothing on stderr" \
		"0 docker.io/library/redis:7 " "$RC $OUT $ERR"
	RED=(--image redis:7 --user 0 --cap-add ALL --read-only=false)
	with_subids "$T/subid" "${RED[@]}" --userns subids -- redis-server --version
	assert_match "  ... --userns subids, root: its entrypoint gives /data to redis and runs redis-server as redis" \
		'^0 Redis server v=7' "$RC $OUT"
	run_nsrun "${RED[@]}" -- redis-server --version
	assert_eq "  control: with one id its entrypoint cannot give /data to redis" \
		"1 chown: changing ownership of '.': Invalid argument" "$RC $ERR"
	if [ "$(id -u)" = 0 ]; then
		with_subids "$T/nosubid" "${RED[@]}" --userns subids -- redis-server --version
		assert_eq "  ... --userns subids without subordinate ids: 125, the one line" \
			"125 nsrun: --userns subids: /etc/subuid has no subordinate ids for root (uid 0)" "$RC $(head -n 1 <<<"$ERR")"
		assert_match "  ... its hint names the fix" '^nsrun: hint: .*usermod --add-subuids' "$(sed -n 2p <<<"$ERR")"
	elif [ -x "$DOCKER" ]; then
		dk run --rm redis:7 redis-server --version
		assert_match "  ... docker run --rm redis:7 through nsrun api (its default: the caller's range)" \
			'^0 Redis server v=7' "$RC $OUT"
	fi
	run_nsrun image rm redis:7
else
	skip "no redis:7 test image in $NSRUN_OCI_IMAGES (make oci-test-images)" "the tests' redis:7"
fi

done_testing
