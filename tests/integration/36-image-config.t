#!/bin/bash
# Docker's run semantics for an image's config (issue 18), through nsrun api and
# the docker CLI, and nsrun's own --user: the image's User by name, looked up in
# the image's own /etc/passwd and /etc/group (an unknown name: Docker's error; a
# link of the image to the host's /etc/passwd is not followed out of it); each
# image Volume a tmpfs the image's user writes, holding what the image has at its
# path (as Docker fills a new volume), unless the request mounts that path itself; PublishAllPorts (docker run -P) publishing the image's
# ExposedPorts on free loopback ports.  The image is made here, in a store of
# the test's own: a shell, perl and libc from the python test image with an /etc
# of the test's (docs/docker-api.md).
# shellcheck disable=SC2016
. "$(dirname "$0")/../lib.sh"
require_nsrun
require_userns
require_image python
SRC=$(cd "${NSRUN_IMAGES:-/var/tmp/nsrun-check/images}/python" && pwd -P)
DOCKER=${NSRUN_DOCKER_CLI:-$(dirname "$NSRUN")/tools/docker}
[ -x "$DOCKER" ] || DOCKER=/usr/bin/docker
[ -x "$DOCKER" ] || skip_all "no docker CLI at $DOCKER (make docker-cli takes it out of Debian's docker.io)"
command -v jq >/dev/null || skip_all "no jq (make deps)"

T=$TESTTMP
export NSRUN_IMAGES=$T/store DOCKER_CONFIG=$T/docker-config
U=$NSRUN_IMAGES/users/rootfs
mkdir -p "$U/etc" "$U/data" "$U/tmp" "$U/usr/share" "$NSRUN_IMAGES/novol"
L=usr/lib/x86_64-linux-gnu
(cd "$SRC/rootfs" && tar -cf - bin lib lib64 usr/bin/dash usr/bin/sh usr/bin/cat usr/bin/perl usr/lib64 $L/libc.so.6 \
	$L/ld-linux-x86-64.so.2 $L/libm.so.6 $L/libcrypt.so.1* $L/perl-base) | tar -C "$U" -xf -
printf 'svc:x:4321:4322::/data:/bin/sh\n' >"$U/usr/share/passwd"
ln -s ../usr/share/passwd "$U/etc/passwd"
printf 'svcgrp:x:4322:\nextra:x:4400:svc\n' >"$U/etc/group"
# what the image has at its Volume's path: the container's tmpfs there starts with it
echo seeded >"$U/data/seed"
PROBE='while read -r k v _; do case $k in Uid:|Gid:) echo "$k $v";; esac; done </proc/self/status'
jq -n --arg p "$PROBE" '{schema: 1, env: ["PATH=/usr/bin:/bin"], user: "svc", volumes: ["/data"],
	exposed_ports: ["8000/tcp", "53/udp"],
	cmd: ["sh", "-c", ($p + "; echo x >/data/f && cat /data/f; cat /data/seed; while read -r _ m t _; do [ \"$m\" = /data ] && echo \"$t\"; done </proc/self/mounts; true")]}' \
	>"$NSRUN_IMAGES/users/image.json"
# the same tree without the Volume (the control): a rootfs of its own (a store
# entry's rootfs is no link), its files linked
cp -al "$U" "$NSRUN_IMAGES/novol/rootfs"
jq 'del(.volumes)' "$NSRUN_IMAGES/users/image.json" >"$NSRUN_IMAGES/novol/image.json"

api_env
api_start
dk() { run_cmd timeout -s KILL 120 "$DOCKER" "$@"; }
# args NAME — the nsrun options a created container stands for, one a line
args() { jq -r '.args[]' "$STATE/$1/config.json"; }

# ---- User by name, Volumes as tmpfs
dk run --rm --read-only users
assert_eq "docker run: the image's User \"svc\" is its uid and gid of the image's /etc/passwd (a link inside the image)" \
	$'0 Uid: 4321\nGid: 4322' "$RC $(head -2 <<<"$OUT")"
assert_eq "  ... its Volume /data: a tmpfs that user writes, with --read-only, holding what the image has there" \
	$'x\nseeded\ntmpfs' "$(tail -n +3 <<<"$OUT")"
dk run --rm --read-only --tmpfs /data users
assert_eq "  control: a request's own tmpfs there starts empty (Docker's --tmpfs)" $'x\ntmpfs' "$(tail -n +3 <<<"$OUT")"
dk run --rm --read-only --user svc:extra novol
assert_eq "  control: without the Volume, /data is read-only; User NAME:GROUP from /etc/group" \
	$'Uid: 4321\nGid: 4400' "$(head -2 <<<"$OUT")"
# (one stream: the service's log holds stdout and stderr together)
assert_match "  ... (the write refused)" '/data/f: (Read-only file system|Permission denied)' "$OUT$ERR"
dk create --name covered --tmpfs /data:size=1m users
assert_eq "a request's own tmpfs at the Volume's path is the only mount there" \
	"--tmpfs /data:size=1m" "$(args covered | grep -A1 -x -- --tmpfs | tr '\n' ' ' | sed 's/ $//')"
dk create --name user-nosuch --user nosuch users
dk start user-nosuch
assert_eq "a name the image's /etc/passwd lacks: start fails with Docker's message" \
	"1 Error response from daemon: unable to find user nosuch: no matching entries in passwd file" \
	"$RC $(head -1 <<<"$ERR")"
dk inspect -f '{{.State.Status}}' user-nosuch
assert_eq "  ... and the container stays created" "created" "$OUT"
dk rm covered user-nosuch
run_nsrun --image users --user nosuch -- true
assert_eq "nsrun --user NAME looks in the image the same way: 125, Docker's words" \
	"125 nsrun: unable to find user nosuch: no matching entries in passwd file" "$RC $(head -1 <<<"$ERR")"
run_nsrun --image users --user svc -- sh -c "$PROBE"
assert_eq "  control: a name it has" $'0 Uid: 4321\nGid: 4322' "$RC $OUT"

# ---- a hostile image: /etc/passwd a link climbing out to the host's, with a user
# (daemon) that the image does not have
check "  (the host's /etc/passwd has daemon)" grep -q '^daemon:' /etc/passwd
ln -sfn ../../../../../../../../../../../../../etc/passwd "$U/etc/passwd"
run_nsrun --image users --user daemon -- sh -c "$PROBE"
assert_eq "a link of the image to the host's /etc/passwd is not read: refused" \
	"125 nsrun: unable to find user daemon: read /etc/passwd of the image: Too many levels of symbolic links" \
	"$RC $(head -1 <<<"$ERR")"
# (nsrun api's start runs this very lookup: nsrun -d --user NAME, above)
ln -sfn ../usr/share/passwd "$U/etc/passwd"

# ---- PublishAllPorts: -P publishes the image's ExposedPorts on loopback
SERVE=(perl -MIO::Socket::INET -e '$s = IO::Socket::INET->new(LocalPort => 8000, Listen => 5, ReuseAddr => 1) or die "$!";
	while ($c = $s->accept) { print $c "hello\n"; close $c }')
dk run -d --name web -P users "${SERVE[@]}"
assert_eq "docker run -d -P: started" 0 "$RC"
[ "$RC" = 0 ] || diag "$ERR"
dk port web
assert_match "docker port: the image's 8000/tcp on a free port of 127.0.0.1" '^8000/tcp -> 127\.0\.0\.1:[0-9]+$' "$OUT"
HP=${OUT##*:}
dk inspect -f '{{json .NetworkSettings.Ports}}' web
assert_eq "  ... inspect's NetworkSettings.Ports says the same" "{\"8000/tcp\":[{\"HostIp\":\"127.0.0.1\",\"HostPort\":\"$HP\"}]}" "$OUT"
run_cmd python3 -c 'import socket, sys, time
for _ in range(300):
    try:
        c = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
        d = c.recv(100)
        if d:
            print(d.decode().strip()); break
    except OSError: pass
    time.sleep(0.1)' "$HP"
assert_eq "  ... and the port answers (the container's server)" "hello" "$OUT"
dk create --name web0 users true
check "  control: without -P, nothing is published" test -z "$(args web0 | grep -x -- -p)"
dk create --name web-udp -P users true
assert_match "  ... a udp port of ExposedPorts is said not published (create's warnings)" \
	'PublishAllPorts: 53/udp not published: nsrun publishes TCP ports only' "$ERR"
dk rm -f web web0 web-udp
assert_eq "  ... removed" 0 "$RC"
dk ps -aq
assert_eq "nothing is left" "" "$OUT$(state_entries)"

done_testing
