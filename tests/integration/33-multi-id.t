#!/bin/bash
# More than one id inside (--userns subids), root with Docker's default capabilities
# (--cap-add) and a writable root (--read-only=false), issues 18 and 19: an entrypoint
# that starts as root and switches to a service user with setpriv (as the official
# redis image does with gosu) works, its ids are the subordinate range on the host
# (uid_map, a volume's files), and root inside stays bounded: no host root's file, no
# write to what is read-only, no mount outside its own namespaces, no capability
# beyond Docker's set.  Without subordinate ids: one line naming the fix (nsrun api:
# create's Warnings and the log's first line).
#
# Rootless the caller's own /etc/subuid entry is used.  As root the test gives root
# a range of its own in a mount namespace of the test's (a file bound over
# /etc/subuid and /etc/subgid; the host's files are not touched), and an empty one
# for the refusal.  docs/userns.md.
. "$(dirname "$0")/../lib.sh"
require_nsrun
require_userns
require_probe
require_image services

ME=$(id -u)
if [ "$ME" = 0 ]; then
	[ -f /etc/subuid ] && [ -f /etc/subgid ] || skip_all "no /etc/subuid or /etc/subgid to bind a test range over"
	UBASE=300000 GBASE=300000
	printf 'root:%s:65536\n' "$UBASE" >"$TESTTMP/subid"
	: >"$TESTTMP/nosubid"
	# container id N is host UBASE+N (root's whole range, written directly)
	host_uid() { echo $((UBASE + $1)); }
	host_gid() { echo $((GBASE + $1)); }
	EXPECT_MAP="0 $UBASE 65536"
else
	me=$(id -un)
	UBASE=$(awk -F: -v u="$me" -v n="$ME" '$1 == u || $1 == n { print $2; exit }' /etc/subuid 2>/dev/null)
	GBASE=$(awk -F: -v u="$me" -v n="$ME" '$1 == u || $1 == n { print $2; exit }' /etc/subgid 2>/dev/null)
	[ -n "$UBASE" ] && [ -n "$GBASE" ] || \
		skip_all "$me has no subordinate ids (usermod --add-subuids 100000-165535 --add-subgids 100000-165535 $me)"
	# container 0 is the caller, N >= 1 is UBASE+N-1 (newuidmap)
	host_uid() { echo $((UBASE + $1 - 1)); }
	host_gid() { echo $((GBASE + $1 - 1)); }
	EXPECT_MAP="0 $ME 1|1 $UBASE 65535"
fi

# run_multi SUBID_FILE NSRUN-ARGS...: as root, nsrun with SUBID_FILE over /etc/subuid and
# /etc/subgid (a private mount namespace); rootless, nsrun as it is
run_multi() {
	local file=$1
	shift
	if [ "$ME" = 0 ]; then
		run_cmd unshare -m sh -c 'mount --bind "$1" /etc/subuid && mount --bind "$1" /etc/subgid && shift &&
			exec "$@"' sh "$file" "$NSRUN" "$@"
	else
		run_nsrun "$@"
	fi
}
SUB=(--userns subids --image services)
ROOT=(--user 0 --cap-add ALL)

# ---- root inside with the range and Docker's capabilities, an entrypoint that switches
# user (gosu's pattern) and writes to a volume; it also gives a file of vol2 to 100:102
mkdir "$TESTTMP/vol" "$TESTTMP/vol2"
echo secret >"$TESTTMP/vol2/private"
chmod 600 "$TESTTMP/vol2/private"
# as root the volumes are the container root's (host root is not mapped), as podman's
[ "$ME" = 0 ] && chown "$(host_uid 0):$(host_gid 0)" "$TESTTMP/vol" "$TESTTMP/vol2" "$TESTTMP/vol2/private"
ENTRY='chown 100:102 /data && exec setpriv --reuid 100 --regid 102 --clear-groups sh -c "id -u; id -g; id -G; echo hi >/data/f"'
run_multi "$TESTTMP/subid" "${SUB[@]}" "${ROOT[@]}" -v "$TESTTMP/vol:/data:rw" -v "$TESTTMP/vol2:/data2:rw" -- sh -c \
	'awk "{ printf \"%s %s %s|\", \$1, \$2, \$3 }" /proc/self/uid_map /proc/self/gid_map; echo
	grep -E "^Cap(Eff|Bnd):" /proc/self/status | tr "\n" " "; echo
	chown 100:102 /data2/private; '"$ENTRY"
assert_eq "--userns subids, root, --cap-add ALL, an entrypoint switching user: exit 0" 0 "$RC"
assert_eq "  ... uid_map and gid_map: the subordinate range ($EXPECT_MAP)" \
	"$EXPECT_MAP|${EXPECT_MAP//$UBASE/$GBASE}|" "$(sed -n 1p <<<"$OUT")"
assert_eq "  ... effective and bounding sets: Docker's default (a80425fb)" \
	"CapEff:	00000000a80425fb CapBnd:	00000000a80425fb " "$(sed -n 2p <<<"$OUT")"
assert_eq "  ... the service runs as 100:102, no other group" "100|102|102" "$(sed -n 3,5p <<<"$OUT" | tr '\n' '|' | sed 's/|$//')"
assert_eq "  ... its file in the volume is owned by the subordinate ids on the host" \
	"$(host_uid 100):$(host_gid 102)" "$(stat -c %u:%g "$TESTTMP/vol/f" 2>&1)"
assert_eq "  ... and so is the directory it chowned" "$(host_uid 100):$(host_gid 102)" \
	"$(stat -c %u:%g "$TESTTMP/vol" 2>&1)"

# ---- root inside stays bounded by its user namespace.  Landlock off and the seccomp
# filter of --allow-nested, so only the capabilities and the mounts decide:
# mount(2) is denied; host root's 0600 file is unmapped, so CAP_DAC_OVERRIDE does not
# apply; the image and a :ro volume are read-only.  Controls: a subordinate id's 0600
# file is read; /tmp is written; in a user namespace of its own the same mount works;
# without the capabilities (next run) the same file is refused.
HOSTROOT=/etc/shadow
[ "$ME" = 0 ] && { echo root-secret >"$TESTTMP/rootfile"; chmod 600 "$TESTTMP/rootfile"; HOSTROOT=$TESTTMP/rootfile; }
NEST=(--security-opt landlock=unconfined --allow-nested -v "$PROBE_DIR:/mnt:ro" -v "$TESTTMP/vol2:/data:rw")
P=/mnt/nsrun-probe
run_multi "$TESTTMP/subid" "${SUB[@]}" "${ROOT[@]}" "${NEST[@]}" -v "$HOSTROOT:/hostroot:ro" -v "$TESTTMP/vol:/ro:ro" -- \
	sh -c "$P mount-tmpfs /tmp; $P read /hostroot; $P read /data/private; $P write /etc/x 1; $P write /ro/x 1;
	$P write /tmp/x 1; unshare -Urm $P mount-tmpfs /tmp"
assert_eq "root inside cannot mount in the container's mount namespace" "mount-tmpfs: denied EPERM /tmp" \
	"$(sed -n 1p <<<"$OUT")"
assert_eq "  ... nor read host root's 0600 file (DAC_OVERRIDE held)" "read: denied EACCES open /hostroot" \
	"$(sed -n 2p <<<"$OUT")"
assert_match "  ... control: it reads a subordinate id's 0600 file" '^read: ok /data/private 7 bytes' \
	"$(sed -n 3p <<<"$OUT")"
assert_eq "  ... the image (read-only by default) refuses a write" "write: denied EROFS open /etc/x" \
	"$(sed -n 4p <<<"$OUT")"
assert_eq "  ... so does a :ro volume" "write: denied EROFS open /ro/x" "$(sed -n 5p <<<"$OUT")"
assert_eq "  ... control: /tmp takes it" "write: ok /tmp/x 1 bytes" "$(sed -n 6p <<<"$OUT")"
assert_eq "  ... control: the mount probe works in a user and mount namespace of its own" "mount-tmpfs: ok /tmp" \
	"$(sed -n 7p <<<"$OUT")"
run_multi "$TESTTMP/subid" "${SUB[@]}" --user 0 "${NEST[@]}" -- \
	sh -c "grep -E '^Cap(Eff|Bnd):' /proc/self/status | tr '\n' ' '; echo; $P read /data/private"
assert_eq "control: root without --cap-add has no capability" \
	"CapEff:	0000000000000000 CapBnd:	0000000000000000 " "$(sed -n 1p <<<"$OUT")"
assert_eq "  ... the subordinate id's 0600 file is refused without CAP_DAC_OVERRIDE" \
	"read: denied EACCES open /data/private" "$(sed -n 2p <<<"$OUT")"

run_nsrun --image services --cap-add SYS_ADMIN -- true
assert_eq "--cap-add SYS_ADMIN (beyond Docker's set): exit 125" 125 "$RC"
assert_match "  ... says which and why" '^nsrun: --cap-add: "SYS_ADMIN": not one of Docker.s default capabilities' "$ERR"
assert_nsrun_error "  ... one error line and a hint"
run_nsrun --image services --cap-add sys_module -- true
assert_eq "--cap-add sys_module: exit 125" 125 "$RC"

# ---- the writable root: an overlay with a tmpfs upper layer of --tmpfs-size, over an
# image of the caller's own (rootless pulls and builds are; root's is idmapped onto the
# range): a tiny one of the test's
BARE=$TESTTMP/bare
mkdir -p "$BARE/bin" "$BARE/etc" && cp "$PROBE" "$BARE/bin/nsrun-probe" && echo old >"$BARE/etc/existing"
chmod -R a+rX "$BARE"
run_multi "$TESTTMP/subid" --userns subids --rootfs "$BARE" "${ROOT[@]}" --read-only=false --tmpfs-size 8m -- \
	/bin/nsrun-probe write /etc/x 1000
assert_eq "--read-only=false: root writes to the image's /etc" "write: ok /etc/x 1000 bytes" "$OUT"
run_multi "$TESTTMP/subid" --userns subids --rootfs "$BARE" "${ROOT[@]}" --read-only=false --tmpfs-size 8m -- \
	/bin/nsrun-probe write /etc/existing 3
assert_eq "  ... and to a file of the image (copied up)" "write: ok /etc/existing 3 bytes" "$OUT"
run_multi "$TESTTMP/subid" --userns subids --rootfs "$BARE" "${ROOT[@]}" --read-only=false --tmpfs-size 8m -- \
	/bin/nsrun-probe write /big 16777216
assert_match "  ... the writes stop at --tmpfs-size (8m)" '^write: denied ENOSPC /big after [0-9]+ bytes$' "$OUT"
n=$(sed -n 's/.* after \([0-9]*\) bytes$/\1/p' <<<"$OUT")
check "  ... between 7m and 8m of them" test "${n:-0}" -gt 7340032 -a "${n:-0}" -le 8388608
check "  ... the image is untouched" test ! -e "$BARE/etc/x" -a ! -e "$BARE/big"
assert_eq "  ... its file too" old "$(cat "$BARE/etc/existing")"
# empty files count against nr_inodes (one a page of --tmpfs-size, at least 1024), not the
# size: in the writable root's upper layer, /tmp and /dev/shm alike.  The image is the
# caller's own (a rootless caller cannot copy up a root-owned image's directory):
# the host's dash and its libraries
SHIMG=$TESTTMP/shimg
mkdir -p "$SHIMG/bin" "$SHIMG/etc" && cp /bin/dash "$SHIMG/bin/sh" &&
	for lib in $(ldd /bin/dash | grep -o '/[^ ]*'); do mkdir -p "$SHIMG$(dirname "$lib")" && cp -L "$lib" "$SHIMG$lib"; done
chmod -R a+rX "$SHIMG"
FILL='for d in /etc /tmp /dev/shm; do i=0; while [ $i -lt 5000 ] && true 2>/dev/null >"$d/n$i"; do i=$((i+1)); done; echo $i; done'
run_multi "$TESTTMP/subid" --userns subids --rootfs "$SHIMG" "${ROOT[@]}" --read-only=false --tmpfs-size 4m -- /bin/sh -c "$FILL"
for k in 1 2 3; do
	n=$(sed -n ${k}p <<<"$OUT")
	check "  ... empty files stop near nr_inodes 1024 ($(sed -n ${k}p <<<'/etc (the upper layer)
/tmp
/dev/shm'): ${n:-none} made)" test "${n:-0}" -gt 900 -a "${n:-0}" -le 1024
done
run_multi "$TESTTMP/subid" --userns subids --rootfs "$BARE" --read-only=false -- /bin/nsrun-probe read /etc/x
assert_eq "  ... and the next run does not see them" "read: denied ENOENT open /etc/x" "$OUT"
run_nsrun --rootfs "$BARE" --read-only=false -- /bin/nsrun-probe write /etc/x 1
assert_eq "--read-only=false without --userns subids (65534 inside)" "write: ok /etc/x 1 bytes" "$OUT"
run_nsrun --rootfs "$BARE" -- /bin/nsrun-probe write /etc/x 1
assert_eq "  ... control: the default root is read-only" "write: denied EROFS open /etc/x" "$OUT"
# Landlock under a writable root gives every right on / (mounts beneath included), so a
# :ro volume rests on its read-only flag, which Landlock keeps: no mount(2) at all, not
# even with the capability of a user namespace of the payload's own and no seccomp
# filter (--allow-nested turns Landlock off, so it is not used here).  Controls: a rw volume is written; without Landlock the
# same mount works.
mkdir -p "$TESTTMP/rov" "$TESTTMP/rwv" && echo keep >"$TESTTMP/rov/f" && chmod -R a+rwX "$TESTTMP/rov" "$TESTTMP/rwv"
LLV=(--read-only=false --security-opt seccomp=unconfined -v "$PROBE_DIR:/mnt:ro" -v "$TESTTMP/rov:/ro:ro" -v "$TESTTMP/rwv:/rw:rw")
LLP='p=/mnt/nsrun-probe; $p write /ro/f 1; $p write /rw/x 1; $p mount-tmpfs /ro; unshare -Urm --propagation unchanged $p mount-tmpfs /ro'
run_multi "$TESTTMP/subid" "${SUB[@]}" "${ROOT[@]}" "${LLV[@]}" -- sh -c "$LLP"
assert_eq "--read-only=false, root, --cap-add ALL: a :ro volume stays read-only" "write: denied EROFS open /ro/f" \
	"$(sed -n 1p <<<"$OUT")"
assert_eq "  ... control: a rw volume is written" "write: ok /rw/x 1 bytes" "$(sed -n 2p <<<"$OUT")"
assert_eq "  ... no mount over it" "mount-tmpfs: denied EPERM /ro" "$(sed -n 3p <<<"$OUT")"
assert_eq "  ... not even in a user and mount namespace of its own (Landlock)" "mount-tmpfs: denied EPERM /ro" \
	"$(sed -n 4p <<<"$OUT")"
check "  ... the volume's file is untouched" test "$(cat "$TESTTMP/rov/f")" = keep
run_multi "$TESTTMP/subid" "${SUB[@]}" "${ROOT[@]}" "${LLV[@]}" --security-opt landlock=unconfined -- sh -c "$LLP"
assert_eq "  ... control: without Landlock that mount works" "mount-tmpfs: ok /ro" "$(sed -n 4p <<<"$OUT")"
run_nsrun --image services --read-only=false --isolation minimal -- true
assert_eq "--read-only=false needs the full tier: exit 125" 125 "$RC"

# ---- without subordinate ids (as root: an unprivileged caller cannot hide its own entry)
if [ "$ME" = 0 ]; then
	run_multi "$TESTTMP/nosubid" "${SUB[@]}" -- true
	assert_eq "no subordinate ids for root: exit 125" 125 "$RC"
	assert_eq "  ... the one line" "nsrun: --userns subids: /etc/subuid has no subordinate ids for root (uid 0)" \
		"$(head -n 1 <<<"$ERR")"
	assert_match "  ... the hint names the fix" '^nsrun: hint: .*usermod --add-subuids [0-9]+-[0-9]+ --add-subgids' \
		"$(sed -n 2p <<<"$ERR")"
	assert_nsrun_error "  ... nothing else"
	printf 'root:0:65536\n' >"$TESTTMP/badsubid"
	run_multi "$TESTTMP/badsubid" "${SUB[@]}" -- true
	assert_eq "a range holding host root: refused (exit 125)" 125 "$RC"
	assert_match "  ... says so" 'holds host root' "$ERR"
	# root's maps are written directly (no newuidmap to vet them): a range holding
	# another entry's ids, or a user's of /etc/passwd, is refused; the good file of
	# the runs above is the control
	printf 'root:%s:65536\nalice:%s:65536\n' "$UBASE" $((UBASE + 65000)) >"$TESTTMP/sharedsubid"
	run_multi "$TESTTMP/sharedsubid" "${SUB[@]}" -- true
	assert_eq "root's range overlapping another entry's: refused (exit 125)" 125 "$RC"
	assert_eq "  ... the one line names it" "nsrun: --userns subids: the range $UBASE-$((UBASE + 65535)) of root in \
/etc/subuid holds alice's range $((UBASE + 65000))-$((UBASE + 130535))" "$(head -n 1 <<<"$ERR")"
	assert_nsrun_error "  ... and a hint"
	{ cat /etc/passwd; echo "svc:x:$((UBASE + 70)):$((UBASE + 70))::/:/bin/false"; } >"$TESTTMP/passwd"
	run_cmd unshare -m sh -c 'mount --bind "$1" /etc/subuid && mount --bind "$1" /etc/subgid &&
		mount --bind "$2" /etc/passwd && shift 2 && exec "$@"' sh "$TESTTMP/subid" "$TESTTMP/passwd" "$NSRUN" "${SUB[@]}" -- true
	assert_eq "root's range holding a user of /etc/passwd: refused (exit 125)" 125 "$RC"
	assert_match "  ... naming the user" "holds user svc \\(uid $((UBASE + 70)) of /etc/passwd\\)" "$ERR"
	assert_nsrun_error "  ... one line and a hint"
fi

# ---- a service (-d) and nsrun exec into it: the command joins the container's one
# user namespace, with the payload's capabilities, as any id of the range
export XDG_RUNTIME_DIR="$TESTTMP/run"
mkdir -m 700 "$XDG_RUNTIME_DIR"
SVC=multi-id-$$
at_exit "\"$NSRUN\" rm -f $SVC >/dev/null 2>&1"
run_multi "$TESTTMP/subid" -d --name "$SVC" "${SUB[@]}" "${ROOT[@]}" -- sleep 60
assert_eq "-d --userns subids: the service starts" 0 "$RC"
run_nsrun exec "$SVC" -- sh -c 'id -u; grep -E "^CapEff:" /proc/self/status; awk "{ print \$1, \$2, \$3 }" /proc/self/uid_map'
assert_eq "  ... exec: root with the payload's capabilities, in the container's namespace" \
	"0|CapEff:	00000000a80425fb|${EXPECT_MAP}" "$(tr '\n' '|' <<<"$OUT" | sed 's/|$//')"
run_nsrun exec -u 100:102 "$SVC" -- sh -c 'id -u; id -G; grep -E "^Cap(Eff|Bnd):" /proc/self/status'
assert_eq "  ... exec -u 100:102: that id, no capability but in the bounding set" \
	"100|102|CapEff:	0000000000000000|CapBnd:	00000000a80425fb" "$(tr '\n' '|' <<<"$OUT" | sed 's/|$//')"
run_nsrun rm -f "$SVC"

# ---- --network container: of a service of --userns subids (root inside, a writable root:
# the API's defaults).  Its payload is in the container's one user namespace, not a child of
# it: the join once took that for the reduced tier and refused (the API's 500 "ended before
# it was ready"), and a joiner of --userns subids had its maps written twice.  Now a joiner
# of one id shares the network, and one of --userns subids has the service's own ids
mkdir -m 777 "$TESTTMP/jvol"
run_multi "$TESTTMP/subid" -d --name "$SVC-r" "${SUB[@]}" --user 0 --read-only=false -- \
	redis-server --save '' --appendonly no --dir /
at_exit "\"$NSRUN\" rm -f $SVC-r >/dev/null 2>&1"
PING='for i in $(seq 100); do redis-cli ping 2>/dev/null | grep PONG && break; sleep 0.1; done'
run_nsrun --network "container:$SVC-r" --image services -- sh -c "$PING"
assert_eq "a joiner of one id reaches the Redis of a root service of --userns subids" PONG "$OUT"
run_multi "$TESTTMP/subid" --network "container:$SVC-r" "${SUB[@]}" "${ROOT[@]}" -v "$TESTTMP/jvol:/data:rw" -- sh -c \
	"$PING"'; setpriv --reuid 100 --regid 102 --clear-groups sh -c "echo x >/data/f"'
assert_eq "  ... and so does one of --userns subids, root inside" PONG "$OUT"
assert_eq "  ... whose id 100 is the service's (host $(host_uid 100))" "$(host_uid 100):$(host_gid 102)" \
	"$(stat -c %u:%g "$TESTTMP/jvol/f" 2>&1)"
run_nsrun rm -f "$SVC-r"
run_nsrun -d --name "$SVC-one" --image services -- sleep 60
at_exit "\"$NSRUN\" rm -f $SVC-one >/dev/null 2>&1"
run_multi "$TESTTMP/subid" --network "container:$SVC-one" "${SUB[@]}" -- true
assert_eq "--userns subids joining a service of one id: exit 125" 125 "$RC"
assert_match "  ... it has no range to give" 'not of --userns subids, its user namespace has no range to share$' \
	"$(head -n1 <<<"$ERR")"
assert_nsrun_error "  ... one line and a hint"
run_nsrun rm -f "$SVC-one"

# ---- nested in a user namespace that maps the caller alone (32-service-networks.t runs so):
# the range is no id there, and no helper can give it.  --userns subids says so before
# anything is made, and nsrun api (which asks for the range where the caller has one) runs
# its container with one id instead of failing to start it (a 500)
if [ "$ME" != 0 ]; then
	run_cmd unshare --user --map-current-user -- "$NSRUN" "${SUB[@]}" --user 0 -- true
	assert_eq "nested in a user namespace of one id: --userns subids, exit 125" 125 "$RC"
	assert_match "  ... the range is not of that namespace" \
		"subordinate ids of .* are not ids of the user namespace nsrun runs in" "$(head -n1 <<<"$ERR")"
	assert_nsrun_error "  ... one line and a hint"
	run_nsrun "${SUB[@]}" --user 0 -- true
	assert_eq "  ... control: outside it, the range works" 0 "$RC"
fi

# ---- nsrun api: Docker's run semantics by default (no User: root, Docker's default
# capabilities, the range, a writable root); ReadonlyRootfs and CapDrop as asked
if /usr/bin/python3 -c 'import docker' 2>/dev/null; then
	SOCK="$TESTTMP/d.sock"
	if [ "$ME" = 0 ]; then
		unshare -m sh -c 'mount --bind "$1" /etc/subuid && mount --bind "$1" /etc/subgid && shift && exec "$@"' \
			sh "$TESTTMP/subid" "$NSRUN" api --socket "$SOCK" --idle-timeout 0 --volume-root "$TESTTMP" \
			2>"$TESTTMP/api.err" &
	else
		"$NSRUN" api --socket "$SOCK" --idle-timeout 0 --volume-root "$TESTTMP" 2>"$TESTTMP/api.err" &
	fi
	at_exit "kill $!"
	for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.1; done
	# the API binds only the caller's own directories (as root, not the range's): one
	# all may write to, in which the entrypoint makes the service's
	mkdir -m 777 "$TESTTMP/apivol"
	APIENTRY='mkdir /data/d && chown 100:102 /data/d && exec setpriv --reuid 100 --regid 102 --clear-groups sh -c "id -u; id -g; id -G; echo hi >/data/d/f"'
	run_cmd /usr/bin/python3 - "$SOCK" "$TESTTMP/apivol" "$APIENTRY" <<'PY'
import sys, docker
c = docker.DockerClient(base_url="unix://" + sys.argv[1])
def run(cmd, **kw):
    k = c.containers.run("services", ["sh", "-c", cmd], detach=True, **kw)
    k.wait(timeout=60)
    out = k.logs().decode().strip().replace("\n", "|")
    k.remove(force=True)
    return out
print(run("id -u; grep ^CapEff /proc/self/status | cut -f2; awk '{ print $1, $2, $3 }' /proc/self/uid_map; "
          "echo w >/new && cat /new; " + sys.argv[3], volumes={sys.argv[2]: {"bind": "/data", "mode": "rw"}}))
print(run("{ echo w >/new; } 2>/dev/null || echo read-only; grep ^CapEff /proc/self/status | cut -f2", read_only=True,
          cap_drop=["NET_RAW", "MKNOD"], cap_add=["CAP_KILL"]))
PY
	assert_eq "nsrun api, no User: root, Docker's capabilities, the range, a writable root; an entrypoint switching user works" \
		"0|00000000a80425fb|${EXPECT_MAP}|w|100|102|102" "$(sed -n 1p <<<"$OUT")"
	assert_eq "  ... its file is the subordinate id's" "$(host_uid 100):$(host_gid 102)" \
		"$(stat -c %u:%g "$TESTTMP/apivol/d/f" 2>&1)"
	assert_eq "  ... ReadonlyRootfs, CapDrop NET_RAW and MKNOD as asked (CapAdd KILL, in the set, changes nothing)" \
		"read-only|00000000a00405fb" "$(sed -n 2p <<<"$OUT")"
	[ "$RC" = 0 ] || diag "$ERR"
	if [ "$ME" != 0 ]; then
		run_nsrun "${SUB[@]}" "${ROOT[@]}" -v "$TESTTMP/apivol:/data:rw" -- rm -rf /data/d
	fi
	# without subordinate ids the fallback to one id is said: create's Warnings (the
	# docker CLI prints them), with the fix, and the log's first line where an entrypoint
	# that switched user failed with EINVAL for it (else the log is the payload's alone).  As root: an empty /etc/subuid in
	# a mount namespace of the test's; the control is the server above, with the range
	WARNPY='import sys, docker
c = docker.APIClient(base_url="unix://" + sys.argv[1])
k = c.create_container("services", sys.argv[2:])
c.start(k)
code = c.wait(k, timeout=60)["StatusCode"]
print(code, "|".join(k["Warnings"] or ["none"]))
print(c.logs(k, stdout=True, stderr=True).decode().strip())
c.remove_container(k, force=True)'
	if [ "$ME" = 0 ]; then
		unshare -m sh -c 'mount --bind "$1" /etc/subuid && mount --bind "$1" /etc/subgid && shift && exec "$@"' \
			sh "$TESTTMP/nosubid" "$NSRUN" api --socket "$TESTTMP/n.sock" --idle-timeout 0 2>"$TESTTMP/api-n.err" &
		at_exit "kill $!"
		for _ in $(seq 100); do [ -S "$TESTTMP/n.sock" ] && break; sleep 0.1; done
		SWITCH=(setpriv --reuid 100 --regid 102 --clear-groups true)
		run_cmd /usr/bin/python3 -c "$WARNPY" "$TESTTMP/n.sock" "${SWITCH[@]}"
		FIX='fix: usermod --add-subuids 100000-165535 --add-subgids 100000-165535 root'
		assert_match "nsrun api without subordinate ids: create's Warnings say one id, why and the fix (setpriv: 127)" \
			"^127 nsrun: one id inside this container \\(/etc/subuid has no subordinate ids for root \\(uid 0\\)\\): an entrypoint that switches user \\(setpriv, gosu, su\\) fails with \"Invalid argument\"; $FIX" \
			"$(sed -n 1p <<<"$OUT")"
		assert_match "  ... the log's first line says it, before the entrypoint's EINVAL" \
			"^nsrun: one id inside this container .*; $FIX .*"$'\n'"setpriv: .*Invalid argument" "$(sed -n '2,$p' <<<"$OUT")"
		[ "$RC" = 0 ] || diag "$ERR"
		run_cmd /usr/bin/python3 -c "$WARNPY" "$TESTTMP/n.sock" sh -c 'echo fine'
		assert_match "  control: a container that works on one id: the Warnings, but its log is its own" \
			"^0 nsrun: one id inside this container .*"$'\n'"fine\$" "$OUT"
	fi
	run_cmd /usr/bin/python3 -c "$WARNPY" "$SOCK" setpriv --reuid 100 --regid 102 --clear-groups true
	assert_eq "  control: with the range, no warning, and the entrypoint switches user" "0 0 none" "$RC $OUT"
else
	skip "no docker-py (Debian python3-docker; make deps)" "nsrun api's defaults"
fi

# ---- nsrun check maps a throwaway namespace the same way
run_multi "$TESTTMP/subid" check
assert_match "nsrun check: the newuidmap line is a real map" \
	"(^|"$'\n'")newuidmap: ok \\(--userns subids maps a user namespace: subordinate uids $UBASE\\+" "$OUT"
if [ "$ME" = 0 ]; then
	run_multi "$TESTTMP/nosubid" check
	assert_match "  ... and says why not, with the fix" \
		"(^|"$'\n'")newuidmap: missing: --userns subids: /etc/subuid has no subordinate ids for root.*; fix: .*usermod" "$OUT"
fi

# ---- the default is unchanged: one id, 65534, no capabilities
run_nsrun --image services -- sh -c 'id -u; wc -l </proc/self/uid_map; grep ^CapEff /proc/self/status'
assert_eq "default run: 65534, one id, no capabilities" "65534|1|CapEff:	0000000000000000" \
	"$(tr '\n' '|' <<<"$OUT" | sed 's/|$//')"

# the setuid helpers come from a system directory, never through PATH: a payload with a
# writable volume on the caller's PATH (~/bin) could plant a newuidmap of its own there,
# which the next --userns subids start would run on the host, outside any sandbox
if [ "$ME" != 0 ]; then
	mkdir -p "$TESTTMP/planted"
	for h in newuidmap newgidmap; do
		printf '#!/bin/sh\necho planted-ran >>%q\nexec /usr/bin/%s "$@"\n' "$TESTTMP/planted.log" "$h" >"$TESTTMP/planted/$h"
		chmod 755 "$TESTTMP/planted/$h"
	done
	run_cmd env PATH="$TESTTMP/planted:$PATH" sh -c 'command -v newuidmap'
	assert_eq "control: a newuidmap planted first on PATH is the one PATH finds" "$TESTTMP/planted/newuidmap" "$OUT"
	run_cmd env PATH="$TESTTMP/planted:$PATH" "$NSRUN" "${SUB[@]}" -- true
	assert_eq "--userns subids with a planted newuidmap first on PATH: the run works" 0 "$RC"
	assert_eq "  ... and never runs the planted one" "" "$(cat "$TESTTMP/planted.log" 2>/dev/null)"
fi

# the volume's files belong to subordinate ids: rootless, only the container's root can
# remove them (what a user does with `nsrun --userns subids ... rm`)
if [ "$ME" != 0 ]; then
	run_nsrun "${SUB[@]}" "${ROOT[@]}" -v "$TESTTMP/vol:/data:rw" -v "$TESTTMP/vol2:/data2:rw" -- \
		sh -c 'rm -f /data/* /data2/* && chown 0:0 /data /data2'
	assert_eq "rootless: root inside cleans the volume up" 0 "$RC"
fi
done_testing
