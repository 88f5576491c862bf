#!/bin/bash
# nsrun api's archive endpoints (GET, HEAD, PUT /containers/{id}/archive): docker cp
# both ways with the real docker CLI, docker-py's get_archive/put_archive, and the
# probes: a payload's symlinks (planted, and raced) to a host file and directory
# never bring the host file out, nor does ".." in the path, nor links to
# /proc/self/fd/N (no host fd is open in the archive process); a PUT's absolute and
# ".." members and device nodes are refused, a setuid bit is not kept, a read-only
# root refuses Docker's way; each with its control (a file of the container's own
# comes out; a plain member goes in; the tmpfs and the volume take writes).  Into a
# created container: kept, extracted at start (owner, mode), the same probes,
# and a small compressed archive declaring a 10 GiB member refused from its
# header, nothing of it decompressed.
. "$(dirname "$0")/../lib.sh"
require_nsrun
require_userns
require_image python
/usr/bin/python3 -c 'import docker' 2>/dev/null || skip_all "no docker-py (Debian python3-docker; make deps)"
DOCKER=${NSRUN_DOCKER_CLI:-$(dirname "$NSRUN")/tools/docker}
[ -x "$DOCKER" ] || DOCKER=/usr/bin/docker
[ -x "$DOCKER" ] || skip_all "no docker CLI at $DOCKER (make docker-cli)"

export XDG_RUNTIME_DIR="$TESTTMP/run"
mkdir -m 700 "$XDG_RUNTIME_DIR"
SOCK="$TESTTMP/d.sock"
export DOCKER_HOST="unix://$SOCK" DOCKER_CONFIG="$TESTTMP/docker-config"
# archive_procs — nsrun exec --archive-* processes of this test, alive
archive_procs() {
	local p
	for p in $(grep -lz "^XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR\$" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3); do
		tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | grep -qE -- ' --archive-(get|put|stat) ' && echo "$p"
	done
}

# nsrun exec --archive-*'s bad input: refused before anything is joined
run_nsrun exec --archive-get relative/path some-service
assert_eq "nsrun exec --archive-get with a relative path: nsrun's error (125)" 125 "$RC"
assert_match "  ... saying why" "expected an absolute path" "$ERR"
assert_nsrun_error "  ... in one line"
run_nsrun exec --archive-put /tmp some-service -- ls
assert_match "--archive-* with a command: refused" "takes no command" "$ERR"

# the host's secret, which the payload's links point at
MARKER="HOSTSECRET-$$-$RANDOM"
SECRET="$TESTTMP/hostdir/secret"
mkdir -p "$TESTTMP/hostdir" "$TESTTMP/vol"
echo "$MARKER" >"$SECRET"
chmod 755 "$TESTTMP/hostdir"
chmod 644 "$SECRET"
chmod 777 "$TESTTMP/vol"

# the reaper's peer check by /proc/net/tcp, as where sock_diag is denied (the
# sock_diag way is 32-docker-io's)
NSRUN_RYUK_PEER=proc "$NSRUN" api --socket "$SOCK" --idle-timeout 0 2>"$TESTTMP/api.err" &
API_PID=$!
at_exit "kill $API_PID 2>/dev/null"
check "nsrun api listens" wait_socket "$SOCK"
CTR="cp-$$"
# the payload plants its links, then swaps /tmp/race between a directory and a link
# to the host's directory for as long as it runs
run_nsrun -d --name "$CTR" --image python -v "$TESTTMP/vol:/data:rw" -- /bin/sh -c "
	echo INSIDE-$$ >/tmp/inside.txt; mkdir /tmp/innerdir
	ln -s '$SECRET' /tmp/link; ln -s '$TESTTMP/hostdir' /tmp/dirlink; ln -s /tmp/inside.txt /tmp/innerlink
	echo INNERFILE >/tmp/innerdir/f; ln -s /tmp/innerdir /tmp/innerdirlink; ln -s /proc/self/root /tmp/selfroot
	for n in 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do ln -s /proc/self/fd/\$n /tmp/fd\$n; done
	touch /tmp/ready
	while :; do mkdir /tmp/race; echo RACE >/tmp/race/secret; sleep 0.02; rm -rf /tmp/race; ln -s '$TESTTMP/hostdir' /tmp/race; sleep 0.02; rm -f /tmp/race; done"
assert_eq "a service to copy with (nsrun -d: the API sees it)" 0 "$RC"
at_exit "$NSRUN rm -f $CTR >/dev/null 2>&1"
for _ in $(seq 100); do "$NSRUN" exec "$CTR" -- test -e /tmp/ready 2>/dev/null && break; sleep 0.2; done
check "  control: the host's secret is there, readable by this user" grep -q "$MARKER" "$SECRET"

# ---- the docker CLI, both ways
echo "FROM HOST $$" >"$TESTTMP/up.txt"
run_cmd "$DOCKER" cp "$TESTTMP/up.txt" "$CTR:/tmp/"
assert_eq "docker cp FILE CTR:/tmp/ (HEAD, then PUT)" 0 "$RC"
run_cmd "$DOCKER" cp "$CTR:/tmp/up.txt" "$TESTTMP/down.txt"
assert_eq "docker cp CTR:FILE FILE (GET)" 0 "$RC"
assert_eq "  ... the same bytes came back" "FROM HOST $$" "$(cat "$TESTTMP/down.txt" 2>/dev/null)"
run_cmd "$DOCKER" cp "$TESTTMP/up.txt" "$CTR:/data/renamed.txt"
assert_eq "docker cp FILE CTR:/data/NEW (a new name, into the volume)" "FROM HOST $$" \
	"$(cat "$TESTTMP/vol/renamed.txt" 2>/dev/null)"
run_cmd "$DOCKER" cp "$CTR:/tmp/innerdir" "$TESTTMP/dirdown"
check "docker cp CTR:DIR DIR (a directory)" test -d "$TESTTMP/dirdown"
run_cmd "$DOCKER" cp -L "$CTR:/tmp/innerlink" "$TESTTMP/followed.txt"
assert_eq "control: docker cp -L follows a link to the container's own file" "INSIDE-$$" \
	"$(cat "$TESTTMP/followed.txt" 2>/dev/null)"
run_cmd "$DOCKER" cp -L "$CTR:/tmp/link" -
assert_ne "docker cp -L of the payload's link to a host file: refused" 0 "$RC"
no_marker() { ! grep -q "$MARKER" <<<"$OUT"; }
check "  ... and the host file's content never comes out" no_marker
run_cmd "$DOCKER" cp "$CTR:/nope" -
assert_match "docker cp of a missing path: Docker's not-found" "No such container:path" "$ERR"
run_cmd "$DOCKER" cp "$TESTTMP/up.txt" "$CTR:/etc/"
assert_ne "docker cp into a read-only root: refused" 0 "$RC"
assert_match "  ... Docker's words" "container rootfs is marked read-only" "$ERR"
# the payload races a directory against a link to the host's directory
leak=0
got=0
for _ in $(seq 3); do
	"$DOCKER" cp "$CTR:/tmp/race/secret" - >"$TESTTMP/race.tar" 2>/dev/null && got=$((got + 1))
	grep -q "$MARKER" "$TESTTMP/race.tar" && leak=1
done
assert_eq "GETs through a path the payload races to a link to the host: the host file never comes out" 0 "$leak"
diag "  (the race's own file came out $got times of 3)"

# ---- docker-py and the probes
run_cmd timeout 180 /usr/bin/python3 "$TESTS_DIR/integration/docker-cp-client.py" "$CTR" "$SECRET" "$MARKER" "INSIDE-$$"
[ "$RC" = 0 ] || diag "$ERR"
has() { check "$1" grep -Fqx -- "$2" <<<"$OUT" || diag "$OUT"; }
has "docker-py get_archive: the tar of a file, named by its last component; the stat" "get_ok=True stat=inside.txt,$((${#$} + 8))"
has "HEAD: X-Docker-Container-Path-Stat, base64 JSON; a directory's mode has Go's ModeDir" \
	"head=200 name=inside.txt size=$((${#$} + 8)) dir_mode=True"
has "  ... a missing path: 404" "head_missing=404"
has "the payload's links (file, directory, with / and ..) and .. in the path: the host file never comes out" \
	"host_file_leaked=False"
has "  ... a link comes out as a link (not followed)" "link_as_link=True"
has "  ... .. above the root stays in the container's root (not found there)" "dotdot_missing=404"
has "  control: .. inside the container resolves as it should" "inner_dotdot_ok=True"
has "the payload's links to /proc/self/fd/N (3..20): missing for HEAD, GET and PUT (no host fd open)" \
	"magic_fd_open=none"
check "  ... nothing written on the host by those PUTs" \
	test -z "$(find "$TESTTMP" "$XDG_RUNTIME_DIR" -name 'magic-*' 2>/dev/null)"
has "  ... a link to /proc/self/root: the container's own root, or refused" "magic_root_ok=True"
has "  control: an ordinary link to the container's directory is followed" "inner_dirlink_ok=True"
has "PUT control: a plain member is extracted" "put_plain=True"
check "  ... into the volume, seen from the host" grep -qx PLAIN "$TESTTMP/vol/plain.txt"
has "PUT with an absolute member: refused (400)" "put_abs=400"
check "  ... nothing written on the host at that path" test ! -e "$SECRET.abs"
has "PUT with a .. member: refused (400)" "put_dotdot=400"
check "  ... nothing written beside the volume" test ! -e "$TESTTMP/dotdot.txt"
has "PUT with a device node: refused (403), saying why" "put_dev=403 dev_msg=True"
check "  ... no node made" test ! -e "$TESTTMP/vol/null"
has "  control: a FIFO (no device) is extracted" "put_fifo=True"
check "  ... as a FIFO" test -p "$TESTTMP/vol/fifo"
has "PUT of a setuid file: extracted" "put_suid=True"
assert_eq "  ... without its setuid bit, the rest of its mode kept" 755 "$(stat -c %a "$TESTTMP/vol/suid" 2>/dev/null)"
has "PUT into the read-only root: 403, Docker's words" "put_ro=403 ro_msg=True"
has "  control: the container's tmpfs takes it" "put_tmp=True"
has "PUT onto a file: 400 (not a directory)" "put_notdir=400"
has "PUT to /images/x/containers/ID/archive (not the archive's URL): refused, nothing extracted" \
	"put_wrong_url_refused=True extracted=False"
has "PUT into a missing directory: 404" "put_missing=404"

check "Ryuk, its peer found by /proc/net/tcp (NSRUN_RYUK_PEER=proc): our connection gets its ACK" \
	grep -qF "ryuk_proc_mine=b'ACK\\n'" <<<"$OUT"
# the control needs another user's connection, which only root can make here
[ "$(id -u)" != 0 ] ||
	check "  control: another user's connection is closed unanswered" grep -q "ryuk_proc_other=b''" <<<"$OUT"
ryuk_gone() {
	local _
	for _ in $(seq 300); do
		[ -z "$("$DOCKER" ps -aq --filter name=ryuk-cp 2>/dev/null)" ] && return 0
		sleep 0.2
	done
	return 1
}
check "  ... its clients gone, the reaper ends and is removed (AutoRemove)" ryuk_gone
check "no nsrun exec --archive-* is left" test -z "$(archive_procs)"

# a job held still (the payload can SIGSTOP it where Landlock does not scope
# signals, or hold its open(2) on a FIFO swapped in; here the test stops it) ends
# after --archive-timeout: the GET is cut, the API goes on, nothing is left
SOCK2="$TESTTMP/d2.sock"
"$NSRUN" api --socket "$SOCK2" --idle-timeout 0 --archive-timeout 2 2>"$TESTTMP/api2.err" &
API2=$!
at_exit "kill $API2 2>/dev/null"
check "a second nsrun api, --archive-timeout 2" wait_socket "$SOCK2"
run_nsrun exec "$CTR" -- sh -c 'head -c 20000000 /dev/zero >/tmp/big'
timeout 90 curl -s -o /dev/null --unix-socket "$SOCK2" --limit-rate 100k \
	"http://x/containers/$CTR/archive?path=/tmp/big" &
CURL=$!
for _ in $(seq 100); do [ -n "$(archive_procs)" ] && break; sleep 0.1; done
sleep 1
held=$(archive_procs)
# shellcheck disable=SC2086 # one pid a word
[ -n "$held" ] && kill -STOP $held
# whatever the checks below find, a stopped job must not outlive the test and hold
# prove's pipe (it did once, on a machine at load 25)
[ -n "$held" ] && at_exit "kill -KILL $held 2>/dev/null"
T0=$SECONDS
wait "$CURL"
check "  ... a GET whose job is stopped ends (within 30 s, not the client's 90)" test $((SECONDS - T0)) -lt 30
no_archive_procs() {
	local _
	for _ in $(seq 100); do
		[ -z "$(archive_procs)" ] && return 0
		sleep 0.1
	done
	return 1
}
check "  ... its processes, stopped, are gone (SIGKILL after SIGTERM)" no_archive_procs
run_cmd curl -s --unix-socket "$SOCK2" http://x/_ping
assert_eq "  ... the API still answers" "OK" "$OUT"
kill "$API2"

# ---- a created container: docker create, cp, start (Testcontainers' copy to a
# container, docker-py's put_archive before start): the archives are kept and
# extracted at start, before the command, as the payload, confined as above
# tars — the probes' archives: a control, and ".." / a symlink of its own then a
# file through it / a hard link to a host file, each beside the control's member
/usr/bin/python3 - "$TESTTMP" "$SECRET" <<'PY'
import io, sys, tarfile
d, secret = sys.argv[1], sys.argv[2]
def tar(name, *members):
    with tarfile.open(f"{d}/{name}.tar", "w", format=tarfile.PAX_FORMAT) as tf:
        for m, data in members:
            m = dict(m)
            ti = tarfile.TarInfo(m.pop("name"))
            for k, v in m.items():
                setattr(ti, k, v)
            ti.size = len(data) if ti.type == tarfile.REGTYPE else 0
            tf.addfile(ti, io.BytesIO(data) if ti.type == tarfile.REGTYPE else None)
plain = ({"name": "kept/owned", "uid": 123, "gid": 456, "mode": 0o640}, b"OWNED\n")
tar("plain", ({"name": "kept", "type": tarfile.DIRTYPE, "mode": 0o755}, b""), plain)
tar("dotdot", plain, ({"name": "../../../../../../../../escape-dotdot"}, b"ESCAPED\n"))
tar("symlink", plain, ({"name": "kept/etc", "type": tarfile.SYMTYPE, "linkname": "/etc"}, b""),
    ({"name": "kept/etc/escape-link"}, b"ESCAPED\n"))
tar("hardlink", plain, ({"name": "kept/hl", "type": tarfile.LNKTYPE, "linkname": secret}, b""))
# links to the host's file and directory, and a control to the image's own file
tar("links", ({"name": "peek", "type": tarfile.DIRTYPE, "mode": 0o755}, b""),
    ({"name": "peek/hostlink", "type": tarfile.SYMTYPE, "linkname": secret}, b""),
    ({"name": "peek/dirlink", "type": tarfile.SYMTYPE, "linkname": secret.rsplit("/", 1)[0]}, b""),
    ({"name": "peek/ownlink", "type": tarfile.SYMTYPE, "linkname": "/etc/os-release"}, b""))
PY
assert_eq "the probes' archives are made" 0 "$?"
echo created >"$TESTTMP/created.txt"
chmod 640 "$TESTTMP/created.txt"
run_cmd timeout -s KILL 60 "$DOCKER" create --name "$CTR-c" python sh -c \
	'cat /tmp/created.txt /tmp/todir.txt /tmp/stdin.txt; stat -c "%a %u:%g" /tmp/created.txt /tmp/kept/owned; cat /tmp/kept/owned;
	 ls /etc/escape-link /escape-dotdot /tmp/kept/hl 2>&1; echo maps=$(wc -l </proc/self/uid_map)'
assert_eq "docker create" 0 "$RC"
run_cmd timeout -s KILL 60 "$DOCKER" cp "$TESTTMP/created.txt" "$CTR-c:/tmp/created.txt"
assert_eq "docker cp FILE into a created container: kept for its start" 0 "$RC"
echo todir >"$TESTTMP/todir.txt"
echo stdin >"$TESTTMP/stdin.txt"
run_cmd timeout -s KILL 60 "$DOCKER" cp "$TESTTMP/todir.txt" "$CTR-c:/tmp"
assert_eq "docker cp FILE CTR:DIR (the CLI's HEAD finds the image's directory)" 0 "$RC"
run_cmd timeout -s KILL 60 bash -c "tar -C '$TESTTMP' -cf - stdin.txt | '$DOCKER' cp - '$CTR-c:/tmp'"
assert_eq "docker cp - CTR:DIR (a tar on stdin: the CLI needs the HEAD)" 0 "$RC"
run_cmd timeout -s KILL 60 "$DOCKER" cp "$TESTTMP/todir.txt" "$CTR-c:/nonexistent/"
assert_match "  control: into a directory the image lacks: the CLI's own refusal, from the HEAD's 404" \
	"^1 .*no such directory" "$RC $ERR"
# put_created NAME PATH: PUT $TESTTMP/NAME.tar (else $TESTTMP/NAME) to PATH
put_created() {
	local f=$TESTTMP/$1.tar
	[ -e "$f" ] || f=$TESTTMP/$1
	curl -s -o "$TESTTMP/put.out" -w '%{http_code}' --unix-socket "$SOCK" -X PUT \
		--data-binary "@$f" "http://x/containers/$CTR-c/archive?path=$2"
}
assert_eq "PUT of a plain archive (a member with uid 123, gid 456, mode 0640)" 200 "$(put_created plain /tmp)"
assert_eq "PUT with a .. member (beside a plain one): refused (400)" 400 "$(put_created dotdot /tmp)"
assert_match "  ... saying why" "may not be absolute, hold" "$(cat "$TESTTMP/put.out")"
assert_eq "PUT with a symlink to /etc, then a member through it: refused (400)" 400 "$(put_created symlink /tmp)"
assert_match "  ... saying why" "through symlink" "$(cat "$TESTTMP/put.out")"
assert_eq "PUT with a hard link to a host file: refused (400)" 400 "$(put_created hardlink /tmp)"
assert_match "  ... saying why" "hard link out" "$(cat "$TESTTMP/put.out")"
# a small compressed archive declaring a 10 GiB member: refused from its header
# (413, Docker's {"message"}), before any of it is decompressed: bomb-short holds
# 1 MiB of the member (reading it would end in a 400, "truncated"), bomb-real all
# of it, as 160 gzip members of 64 MiB of zeros (10 MiB to send); the control, a
# gzip archive of a 1 MiB member, is kept
/usr/bin/python3 - "$TESTTMP" <<'PY'
import gzip, io, sys, tarfile
d = sys.argv[1]
ti = tarfile.TarInfo("huge")
ti.size = 10 << 30
head = ti.tobuf(tarfile.PAX_FORMAT)
with open(f"{d}/bomb-short.tar.gz", "wb") as f:
    f.write(gzip.compress(head + bytes(1 << 20), 9, mtime=0))
member = gzip.compress(bytes(64 << 20), 9, mtime=0)
with open(f"{d}/bomb-real.tar.gz", "wb") as f:
    f.write(gzip.compress(head, 9, mtime=0))
    for _ in range(160):
        f.write(member)
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
    ti = tarfile.TarInfo("gz-kept")
    ti.size = 1 << 20
    tf.addfile(ti, io.BytesIO(bytes(1 << 20)))
with open(f"{d}/small.tar.gz", "wb") as f:
    f.write(gzip.compress(buf.getvalue(), 9, mtime=0))
PY
for bomb in bomb-short bomb-real; do
	SECONDS=0
	code=$(put_created "$bomb.tar.gz" /tmp)
	took=$SECONDS
	assert_eq "PUT of $bomb.tar.gz ($(($(stat -c %s "$TESTTMP/$bomb.tar.gz") / 1024)) KiB declaring a 10 GiB member): refused (413)" \
		413 "$code"
	assert_match "  ... in Docker's shape, saying why" \
		'^\{"message":"extract into /tmp: more than the container.s writable layer takes \(--tmpfs-size\)"\}' \
		"$(cat "$TESTTMP/put.out")"
	check "  ... at once, nothing decompressed (${took}s < 30s)" test "$took" -lt 30
done
assert_eq "  control: PUT of a gzip archive of a 1 MiB member: kept (200)" 200 "$(put_created small.tar.gz /tmp)"
# GET before start: the image's files and what was put, read by a run of the
# container's own (its kept archives extracted first), confined as its payload
peek() { timeout -s KILL 60 "$DOCKER" cp "$@" | tar -xOf - 2>/dev/null; }
OSREL=$(peek -L "$CTR-c:/etc/os-release" -)
assert_eq "GET before start: docker cp CTR:/etc/os-release - (the image's file, through its link)" \
	"$(cat "$NSRUN_IMAGES/python/rootfs/usr/lib/os-release" 2>/dev/null || echo none)" "$OSREL"
assert_eq "  ... docker cp CTR:FILE - of the file docker cp just put (kept for the start)" created \
	"$(peek "$CTR-c:/tmp/created.txt" -)"
assert_eq "  ... a member of an archive just PUT, its content" OWNED "$(peek "$CTR-c:/tmp/kept/owned" -)"
assert_eq "PUT of an archive with links to the host's file and directory (and one to the image's)" 200 \
	"$(put_created links /tmp)"
run_cmd timeout -s KILL 60 "$DOCKER" cp -L "$CTR-c:/tmp/peek/hostlink" -
assert_ne "GET before start, -L through a kept link to a host file: refused" 0 "$RC"
check "  ... and the host file's content never comes out" no_marker
run_cmd timeout -s KILL 60 "$DOCKER" cp "$CTR-c:/tmp/peek/dirlink/secret" -
assert_match "  ... a path through a kept link to a host directory: not found (the container's root)" \
	"No such container:path" "$ERR"
check "  ... and the host file's content never comes out" no_marker
assert_eq "  control: -L through a kept link to the image's own file is followed" \
	"$OSREL" "$(peek -L "$CTR-c:/tmp/peek/ownlink" -)"
run_cmd timeout -s KILL 60 "$DOCKER" cp "$CTR-c:/nope" -
assert_match "  ... a missing path: Docker's not-found" "No such container:path" "$ERR"
check "  ... the runs that copied are gone" no_archive_procs
assert_eq "PUT into a missing container: 404" 404 \
	"$(curl -s -o /dev/null -w '%{http_code}' --unix-socket "$SOCK" -X PUT --data-binary "@$TESTTMP/plain.tar" \
		"http://x/containers/nope-$$/archive?path=/tmp")"
run_cmd timeout -s KILL 60 "$DOCKER" start -a "$CTR-c"
assert_eq "docker start -a: the command ran" 0 "$RC"
diag "$OUT"
assert_match "  ... it sees the files docker cp put there, before the command" "^created todir stdin" \
	"$(tr '\n' ' ' <<<"$OUT")"
# the members' ids as Docker keeps them (the archive's) where the container has
# them (subordinate ids); with one id inside, its root's
if grep -q "maps=1" <<<"$OUT"; then own="0:0" cli="0:0"; else own="123:456" cli="$(id -u):$(id -g)"; fi
assert_match "  ... the CLI's file: its mode, its owner ($cli)" "640 $cli" "$OUT"
assert_match "  ... the archive's member: its content, mode and owner ($own)" "640 $own.*OWNED" "$(tr '\n' ' ' <<<"$OUT")"
assert_match "  ... the refused archives' harmless members did not land either: nothing through a link, above /, nor a hard link" \
	"escape-link.: No such file.*escape-dotdot.: No such file.*kept/hl.: No such file" "$(tr '\n' ' ' <<<"$OUT")"
check "  ... nothing written on the host" test -z "$(find "$TESTTMP" / -xdev -maxdepth 1 -name 'escape-*' 2>/dev/null)"
check "  ... the host file kept its one link" test "$(stat -c %h "$SECRET")" = 1
# a read-only root: Docker's words; into its tmpfs: taken
run_cmd timeout -s KILL 60 "$DOCKER" create --read-only --name "$CTR-r" python cat /etc/created.txt
run_cmd timeout -s KILL 60 "$DOCKER" cp "$TESTTMP/created.txt" "$CTR-r:/etc/created.txt"
assert_match "docker cp into a created container with a read-only root: refused, Docker's words" \
	"^1 .*container rootfs is marked read-only" "$RC $ERR"
run_cmd timeout -s KILL 60 "$DOCKER" cp "$TESTTMP/created.txt" "$CTR-r:/tmp/created.txt"
assert_eq "  control: its /tmp (a tmpfs) takes it" 0 "$RC"
run_cmd timeout -s KILL 60 "$DOCKER" rm -f "$CTR-r"
run_cmd timeout -s KILL 60 "$DOCKER" cp "$CTR-c:/etc/hostname" "$TESTTMP/"
assert_match "docker cp from an exited container: 1, saying its files went with it" \
	"^1 Error response from daemon: Container [0-9a-f]+ is not running: nsrun api copies from a container only while it runs .*gone when it ends" \
	"$RC $ERR"
run_cmd timeout -s KILL 60 "$DOCKER" rm -f "$CTR-c"

run_nsrun rm -f "$CTR"
kill "$API_PID"
wait "$API_PID"
assert_eq "SIGTERM: nsrun api exits 0" 0 "$?"
assert_eq "  ... having said only where it served (no sanitizer report either)" \
	"nsrun: api: serving on unix://$SOCK" "$(cat "$TESTTMP/api.err")"
done_testing
