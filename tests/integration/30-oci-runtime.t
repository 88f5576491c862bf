#!/bin/bash
# nsrun as an OCI runtime (issue 19, docs/oci-runtime.md): runc's command line over
# a bundle made here (runc spec --rootless as the template, an image of the static
# probe alone as its rootfs: it starts at once), then podman --runtime nsrun with
# the same image, as whoever runs the suite (root, or the unprivileged user of the
# rootless suite).
#
# The two-phase model: the payload writes a marker into a bind-mounted directory;
# it must not be there after create (probe), and must be after start (control).
. "$(dirname "$0")/../lib.sh"
require_all

T=$TESTTMP/oci
IMG=$TESTTMP/image
oci_probe_bundle "$T" "$IMG"
mkdir "$T/out" "$IMG/out" "$IMG/secret" && echo 'the secret' >"$IMG/secret/key" && chmod -R a+rX "$IMG"
chmod 777 "$T/out" # the payload is the container's root, another id on the host as root
# bundle_with ARGS-AS-JSON [PYTHON EDIT OF c]: config.json made anew, $T/out bound at /out
bundle_with() {
	oci_config "$T" "$1" 'c["mounts"].append({"destination": "/out", "type": "bind", "source": argv[0], "options": ["rbind", "rw"]})' "${2:-}" "$T/out"
}
alive() { kill -0 "$1" 2>/dev/null; }
# gone PID: no such process, or a zombie (its parent, which create left, may not
# reap), within 30 s (the lock is free once its files are closed, a moment
# before it is a zombie)
gone() {
	local end=$((SECONDS + 30))
	until ! alive "$1" || grep -q '^State:	Z' "/proc/$1/status" 2>/dev/null; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.1
	done
}
# wait_status ID STATUS: up to 60 s (a loaded machine); at once if there is no such container
wait_status() {
	local end=$((SECONDS + 60))
	while [ "$SECONDS" -lt "$end" ]; do
		oci state "$1"
		[ "$RC" = 0 ] || return 1
		[[ $OUT =~ \"status\":\ \"$2\" ]] && return 0
		sleep 0.1
	done
	return 1
}
at_exit oci_cleanup

# ---- version and features
run_nsrun --version
assert_match "--version: runc's three lines" '^nsrun version [^
]+
commit: [^
]+
spec: 1\.2\.0$' "$OUT"
oci features
assert_match "features: a runtime-spec features document" '"ociVersionMax": "1\.2\.0"' "$OUT"

# ---- create: the container is made, its payload has not run
bundle_with '["/nsrun-probe", "write", "/out/ran"]'
oci create --bundle "$T/bundle" --pid-file "$T/pid" c1
assert_eq "create: exit 0" 0 "$RC"
oci state c1
assert_match "state after create: created" '"status": "created"' "$OUT"
pid=$(cat "$T/pid" 2>/dev/null)
# the state's pid is the container's process (its init, the pid file's child), in the
# container's namespaces: a hook's nsenter -t PID must never reach ours
spid=$(sed -n 's/.*"pid": \([0-9]*\),.*/\1/p' <<<"$OUT")
assert_eq "  ... its pid, the container's init, a child of the pid file's process" "$pid" \
	"$(awk '{print $4}' "/proc/${spid:-0}/stat" 2>/dev/null)"
check "  ... in the container's pid namespace, not ours (control: the pid file's is ours)" \
	test "$(readlink "/proc/${spid:-0}/ns/pid" 2>/dev/null || echo unreadable)" != "$(readlink /proc/self/ns/pid)" -a \
	"$(readlink "/proc/$pid/ns/pid" 2>/dev/null)" = "$(readlink /proc/self/ns/pid)"
assert_match "  ... and the bundle" "\"bundle\": \"$T/bundle\"" "$OUT"
check "  ... that process is alive" alive "$pid"
sleep 0.2
check "  ... the payload has not run (no marker)" test ! -e "$T/out/ran"
oci list --format json
assert_match "list --format json: c1 is there" '"id":"c1"' "$OUT"

# ---- start: it runs
oci start c1
assert_eq "start: exit 0" 0 "$RC"
wait_status c1 stopped
assert_match "  ... then stopped" '"status": "stopped"' "$OUT"
check "  ... the payload ran (the marker is there)" test -e "$T/out/ran"
oci start c1
assert_ne "start again: refused" 0 "$RC"
oci delete c1
assert_eq "delete: exit 0" 0 "$RC"
oci state c1
assert_match "state after delete: no such container" '^nsrun: container "c1" does not exist' "$ERR"
check "  ... the monitor is gone" gone "$pid"

# ---- run: create and start in the foreground, the payload's output and status
bundle_with '["/nsrun-probe", "hostname"]' 'c["hostname"] = "oci-test"'
oci run --bundle "$T/bundle" c2
assert_eq "run: exit 0" 0 "$RC"
assert_eq "  ... its stdout passed through: the config's hostname" "hostname: ok oci-test" "$OUT"
check "  ... and nothing kept under --root" test ! -e "$ROOT/c2"
bundle_with '["/nsrun-probe", "exit", "3"]'
oci run --bundle "$T/bundle" c2
assert_eq "run: the payload's exit status" 3 "$RC"

# ---- root.readonly: true (runc spec's) keeps the root read-only; false, or absent
# (config.md "Root": defaults to false), makes root.path itself the writable root, as
# runc and crun do (runtime-tools' killsig, start, poststart... look there for what
# the payload wrote), owned by the caller (as root through an idmapped mount: host
# root's files are the container root's, host 65534)
bundle_with '["/nsrun-probe", "write", "/written"]'
oci run --bundle "$T/bundle" c2
assert_match "root.readonly true: a write to / fails EROFS" '^write: denied EROFS' "$OUT"
check "  ... and nothing reaches root.path (control of the next)" test ! -e "$IMG/written"
bundle_with '["/nsrun-probe", "write", "/written"]' 'c["root"]["readonly"] = False'
oci run --bundle "$T/bundle" c2
assert_match "root.readonly false: the payload writes to /" '^write: ok' "$OUT"
assert_eq "  ... into root.path itself, the file the caller's" "$(id -u)" "$(stat -c %u "$IMG/written" 2>&1)"
rm -f "$IMG/written"
bundle_with '["/nsrun-probe", "write", "/proc/sys/kernel/hostname"]' 'c["root"]["readonly"] = False'
oci run --bundle "$T/bundle" c2
assert_match "  ... nothing else becomes writable (/proc/sys)" '^write: denied' "$OUT"
bundle_with '["/nsrun-probe", "write", "/made/x"]' 'c["mounts"].append({"destination": "/made", "type": "tmpfs", "source": "tmpfs"})'
oci run --bundle "$T/bundle" c2
assert_match "root.readonly true: a mount point the rootfs lacks is made (in a layer)" '^write: ok' "$OUT"
check "  ... not in root.path (control of the next)" test ! -e "$IMG/made"
bundle_with '["/nsrun-probe", "write", "/made/x"]' 'c["mounts"].append({"destination": "/made", "type": "tmpfs", "source": "tmpfs"}); c["root"]["readonly"] = False'
oci run --bundle "$T/bundle" c2
assert_match "root.readonly false: a mount point the rootfs lacks" '^write: ok' "$OUT"
check "  ... is made in root.path, by the caller (as runc), the tmpfs's write not there" \
	test -d "$IMG/made" -a ! -e "$IMG/made/x"
rmdir "$IMG/made"
bundle_with '["/nsrun-probe", "write", "/written"]' 'c["root"].pop("readonly")'
oci run --bundle "$T/bundle" c2
assert_match "root.readonly absent: writable too" '^write: ok' "$OUT"
check "  ... root.path written" test -e "$IMG/written"
rm -f "$IMG/written"
bundle_with '["true"]' 'c["root"]["readonly"] = True'

# ---- --preserve-fds and LISTEN_FDS: the caller's fds from 3 reach the payload, no others
bundle_with '["/nsrun-probe", "fds"]'
oci run --bundle "$T/bundle" c2 3</dev/null 4</dev/null
assert_eq "without --preserve-fds: the payload has only 0, 1, 2" "fds: ok 0 1 2" "$OUT"
oci run --bundle "$T/bundle" --preserve-fds 2 c2 3</dev/null 4</dev/null
assert_eq "--preserve-fds 2: 3 and 4 too" "fds: ok 0 1 2 3 4" "$OUT"
bundle_with '["/nsrun-probe", "env"]'
# shellcheck disable=SC2016 # expanded by that sh
run_cmd sh -c 'LISTEN_PID=$$ LISTEN_FDS=1 exec "$0" --root "$1" run --bundle "$2" c2 3</dev/null' "$NSRUN" "$ROOT" \
	"$T/bundle"
assert_match "LISTEN_FDS for nsrun: the payload gets LISTEN_FDS and its own pid (2) as LISTEN_PID" \
	'(^|
)LISTEN_FDS=1
LISTEN_PID=2$' "$OUT"

# ---- linux.seccomp: the config's profile, compiled by nsrun's profile code
bundle_with '["/nsrun-probe", "mkdir", "/tmp/x"]' 'c["linux"]["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW",
    "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}'
oci run --bundle "$T/bundle" c2
assert_eq "a config's seccomp profile denying mkdir: applied" "mkdir: denied EPERM /tmp/x" "$OUT"
bundle_with '["/nsrun-probe", "mkdir", "/tmp/x"]'
oci run --bundle "$T/bundle" c2
assert_eq "  ... without it, mkdir works (nsrun's default profile)" "mkdir: ok /tmp/x" "$OUT"
bundle_with '["true"]' 'c["linux"]["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW",
    "syscalls": [{"names": ["mkdir"], "action": "SCMP_ACT_BOGUS"}]}'
oci create --bundle "$T/bundle" c2
assert_match "  ... a bad one: create fails, naming the field" '(^|
)nsrun: seccomp profile "[^"]*/c2/seccomp.json": syscalls\[0\]\.action: unknown action "SCMP_ACT_BOGUS"' "$ERR"
check "  ... and leaves nothing" test ! -e "$ROOT/c2"

# ---- process.oomScoreAdj: set for the payload (runtime-tools' process_oom_score_adj);
# raising it needs no privilege, so rootless too
bundle_with '["/nsrun-probe", "read", "/proc/self/oom_score_adj"]' 'c["process"]["oomScoreAdj"] = 500'
oci run --bundle "$T/bundle" c2
assert_match "process.oomScoreAdj 500: the payload's oom_score_adj" '^read: ok .*500' "$OUT"
bundle_with '["/nsrun-probe", "read", "/proc/self/oom_score_adj"]'
oci run --bundle "$T/bundle" c2
assert_match "  ... without it, not 500 (control)" '^read: ok ' "$OUT"
check "  ... (the control read another value)" test "$(printf %s "$OUT" | grep -c 500)" = 0
bundle_with '["true"]' 'c["process"]["oomScoreAdj"] = 2000'
oci create --bundle "$T/bundle" c2
assert_match "  ... out of range: create fails, naming the field" \
	'^nsrun: config.json: process.oomScoreAdj: 2000: expected -1000 to 1000' "$ERR"
check "  ... and leaves nothing" test ! -e "$ROOT/c2"

# ---- linux.maskedPaths, readonlyPaths beyond nsrun's own list: applied, over the
# volumes too (runtime-tools' linux_masked_paths, linux_readonly_paths)
bundle_with '["/nsrun-probe", "read", "/secret/key"]'
oci run --bundle "$T/bundle" c2
assert_match "a file of the image: readable (control)" '^read: ok /secret/key 11 bytes' "$OUT"
bundle_with '["/nsrun-probe", "read", "/secret/key"]' 'c["linux"]["maskedPaths"] = ["/secret"]'
oci run --bundle "$T/bundle" c2
assert_match "linux.maskedPaths [/secret], a directory: its file is gone" '^read: denied ENOENT' "$OUT"
bundle_with '["/nsrun-probe", "read", "/etc/passwd"]' 'c["linux"]["maskedPaths"] = ["/etc/passwd", "/no/such"]'
oci run --bundle "$T/bundle" c2
assert_match "  ... a file: reads empty; a path missing from the rootfs: skipped" '^read: ok /etc/passwd 0 bytes' "$OUT"
bundle_with '["/nsrun-probe", "mkdir", "/out/ro"]' 'c["linux"]["maskedPaths"] = []'
oci run --bundle "$T/bundle" c2
assert_match "a writable volume: writable (control)" '^mkdir: ok /out/ro' "$OUT"
bundle_with '["/nsrun-probe", "mkdir", "/out/ro2"]' 'c["linux"]["readonlyPaths"] = ["/out"]'
oci run --bundle "$T/bundle" c2
assert_match "linux.readonlyPaths [/out], over a writable volume: read-only" '^mkdir: denied EROFS' "$OUT"
bundle_with '["true"]' 'c["linux"]["readonlyPaths"] = ["/"]'
oci create --bundle "$T/bundle" c2
assert_match "  ... \"/\": create fails, naming the field" '^nsrun: config.json: linux.readonlyPaths\[0\]: "/"' "$ERR"
check "  ... and leaves nothing" test ! -e "$ROOT/c2"

# ---- kill: a signal by name reaches the payload, whose status run returns
bundle_with '["/nsrun-probe", "sleep", "300.'$$'"]'
timeout 60 "$NSRUN" --root "$ROOT" run --bundle "$T/bundle" c3 >/dev/null 2>&1 &
bg=$!
# (run makes c3 in the background: wait until it is there at all, then running)
end=$((SECONDS + 60))
until "$NSRUN" --root "$ROOT" state c3 >/dev/null 2>&1 || [ "$SECONDS" -ge "$end" ]; do sleep 0.1; done
wait_status c3 running
assert_match "a sleeping payload: running" '"status": "running"' "$OUT"
# (running: its fifo was opened; the SIGTERM below is for the payload, so wait until
# the probe has been exec'd, which on a loaded machine comes a moment later)
end=$((SECONDS + 60))
until pgrep -f "^/nsrun-probe sleep 300\\.$$\$" >/dev/null || [ "$SECONDS" -ge "$end" ]; do sleep 0.1; done
oci delete c3
assert_match "delete of a running container without --force: refused" \
	'^nsrun: container "c3" is running: stop it first' "$ERR"
oci kill c3 SIGTERM
assert_eq "kill c3 SIGTERM: exit 0" 0 "$RC"
wait "$bg"
assert_eq "  ... the payload ended by SIGTERM: run exits 143" 143 "$?"

# ---- kill KILL (by number) of a created container, delete --force of a running one
oci create --bundle "$T/bundle" --pid-file "$T/pid4" c4
oci kill c4 9
wait_status c4 stopped
assert_match "kill 9 of a created container: stopped" '"status": "stopped"' "$OUT"
oci delete c4
oci create --bundle "$T/bundle" --pid-file "$T/pid5" c5
oci start c5
pid=$(cat "$T/pid5")
oci delete --force c5
assert_eq "delete --force of a running container: exit 0" 0 "$RC"
check "  ... its monitor is gone" gone "$pid"
oci create --bundle "$T/bundle" c5
oci create --bundle "$T/bundle" c5
assert_match "create of an existing id: refused" '(^|
)nsrun: container "c5" exists' "$ERR"
oci delete --force c5

# ---- exec, ps, pause, update on a running container
# cg_file PID FILE: FILE in a cgroup of PID's own (one the test is not in): cgroup v2's,
# else the v1 hierarchy's whose controller PID's cgroup has; fails if there is none
cg_file() {
	local line ctrl rel mine m fs mnt opts
	while IFS= read -r line; do
		ctrl=${line#*:}
		ctrl=${ctrl%%:*}
		rel=${line#*:*:}
		mine=$(grep -F ":$ctrl:" /proc/self/cgroup)
		[ "$rel" != "${mine#*:*:}" ] || continue
		while read -r fs mnt opts; do
			if [ -z "$ctrl" ] && [ "$fs" = cgroup2 ] || [[ $fs = cgroup && ,$opts, = *",$ctrl,"* ]]; then
				[ -e "$mnt$rel/$2" ] && { echo "$mnt$rel/$2"; return 0; }
			fi
		done <<<"$cg_mounts"
	done <"/proc/$1/cgroup"
	return 1
}
cg_mounts=$(findmnt -rn -t cgroup,cgroup2 -o FSTYPE,TARGET,OPTIONS)
bundle_with '["/nsrun-probe", "sleep", "300"]'
oci create --bundle "$T/bundle" c6
oci exec c6 /nsrun-probe status
assert_match "exec into a created container: refused" '^nsrun: exec: container "c6" is created: a process can join only a running one' "$ERR"
oci start c6
# (start returns once the payload exec'd: ps and exec right after it find it)
oci ps --format json c6
assert_match "ps --format json right after start: the container's two pids (nsrun's init, the payload)" \
	'^\[[0-9]+,[0-9]+\]$' "$OUT"
oci ps c6
payload=$(awk '$3 == "nsrun-probe" { print $1 }' <<<"$OUT")
assert_match "ps: a table with the payload" '(^|
)[0-9]+ +[0-9]+ +nsrun-probe$' "$OUT"
oci exec c6 /nsrun-probe status
assert_eq "exec ID CMD: exit 0" 0 "$RC"
assert_match "  ... no capabilities, no_new_privs, the container's seccomp filter" 'CapEff:	0000000000000000
CapBnd:	0000000000000000
CapAmb:	0000000000000000
NoNewPrivs:	1
Seccomp:	2' "$OUT"
oci exec c6 /nsrun-probe exit 7
assert_eq "  ... the process's exit status" 7 "$RC"
cat >"$T/process.json" <<'EOF2'
{"args": ["/nsrun-probe", "sleep", "300"], "env": ["ONLY=1"], "cwd": "/tmp", "user": {"uid": 0, "gid": 0},
 "capabilities": {"bounding": ["CAP_KILL"], "effective": ["CAP_KILL"]}}
EOF2
oci exec --process "$T/process.json" --detach --pid-file "$T/epid" c6
assert_eq "exec --process --detach --pid-file (conmon's): exit 0" 0 "$RC"
assert_match "  ... process.json's capabilities: a warning, none given" 'capabilities\.[a-z]+: not given' "$ERR"
e=$(cat "$T/epid" 2>/dev/null)
same=0
for n in user mnt pid net ipc uts cgroup; do
	[ -n "$e" ] && [ "$(readlink "/proc/$e/ns/$n")" = "$(readlink "/proc/$payload/ns/$n")" ] && same=$((same + 1))
done
assert_eq "  ... it is in each of the payload's 7 namespaces (user, mnt, pid, net, ipc, uts, cgroup)" 7 "$same"
check "  ... (control: the test's own are not the payload's)" \
	test "$(readlink /proc/self/ns/pid)" != "$(readlink "/proc/$payload/ns/pid")" -a \
	"$(readlink /proc/self/ns/mnt)" != "$(readlink "/proc/$payload/ns/mnt")"
assert_eq "  ... and in its cgroups" "$(cat "/proc/$payload/cgroup")" "$(cat "/proc/$e/cgroup" 2>/dev/null)"
assert_match "  ... no capabilities, no_new_privs, seccomp" 'CapEff:	0000000000000000
.*NoNewPrivs:	1
Seccomp:	2' "$(cat "/proc/$e/status" 2>/dev/null)"
assert_eq "  ... process.json's env (the whole environment) and cwd" "ONLY=1 /tmp" \
	"$(tr '\0' ' ' <"/proc/$e/environ" 2>/dev/null)$(readlink "/proc/$e/cwd")"
oci ps --format json c6
assert_match "  ... ps lists it" "[[,]${e}[],]" "$OUT"
# pause: cgroup v2's freezer where the container has a cgroup v2 of its own, else refused
if freeze=$(cg_file "$payload" cgroup.freeze); then
	oci pause c6
	assert_eq "pause (a cgroup v2 of its own): exit 0" 0 "$RC"
	check "  ... its cgroup is frozen" grep -qx 'frozen 1' "${freeze%/*}/cgroup.events"
	oci state c6
	assert_match "  ... state: paused" '"status": "paused"' "$OUT"
	oci resume c6
	check "resume: thawed" grep -qx 'frozen 0' "${freeze%/*}/cgroup.events"
else
	oci pause c6
	assert_eq "pause (no cgroup v2 of its own: $(id -un)): refused, exit 1" 1 "$RC"
	assert_match "  ... saying why, with a hint" '^nsrun: pause c6: no cgroup v2 freezer: [^
]+
nsrun: hint: ' "$ERR"
fi
oci state c6
assert_match "  ... running again (or still)" '"status": "running"' "$OUT"
# update --memory: the container's memory cgroup where it has one (v2 memory.max, v1
# memory.limit_in_bytes), else refused naming why
if mem=$(cg_file "$payload" memory.max) || mem=$(cg_file "$payload" memory.limit_in_bytes); then
	oci update --memory 64m c6
	assert_eq "update --memory 64m: exit 0" 0 "$RC"
	assert_eq "  ... written to ${mem##*/}" 67108864 "$(cat "$mem")"
else
	oci update --memory 64m c6
	assert_match "update --memory (no memory cgroup of its own): refused, saying why" \
		'^nsrun: update c6: --memory: no memory.max to change: ' "$ERR"
fi
oci delete --force c6
check "  ... the detached exec'd process ended with the container" gone "$e"

# ---- hooks: each kind at its step of the lifecycle, the state on its stdin
H=$T/hooks.log
# shellcheck disable=SC2016 # expanded by the hook
printf '#!/bin/sh\necho "$1 $HOOK_ENV $(cat)" >>"%s"\n' "$H" >"$T/hook"
printf '#!/bin/sh\nexit 3\n' >"$T/hook-fails"
printf '#!/bin/sh\nexec sleep 30\n' >"$T/hook-hangs"
chmod +x "$T/hook" "$T/hook-fails" "$T/hook-hangs"
all_hooks="c['hooks'] = {k: [{'path': '$T/hook', 'args': ['hook', k], 'env': ['HOOK_ENV=e-' + k]}]
    for k in ['prestart', 'createRuntime', 'poststart', 'poststop']}
c['annotations'] = {'org.example.test': 'hook stdin'}"
bundle_with '["/nsrun-probe", "sleep", "300"]' "$all_hooks"
oci create --bundle "$T/bundle" c8
check "hooks: after create, prestart then createRuntime ran, with their env" \
	test "$(cut -d' ' -f1,2 "$H" 2>/dev/null | tr '\n' ,)" = "prestart e-prestart,createRuntime e-createRuntime,"
assert_match "  ... the state on stdin: creating (as runc gives it), the container's pid" \
	'^createRuntime e-createRuntime \{"ociVersion":"1\.2\.0","id":"c8","status":"creating","pid":[1-9]' "$(tail -1 "$H")"
oci state c8
assert_match "  ... once create has returned: created" '"status": "created"' "$OUT"
oci start c8
assert_match "  ... start: then poststart, the state running" '^poststart e-poststart \{[^}]*"status":"running"' \
	"$(tail -1 "$H")"
# (start returned once the payload exec'd: a signal right after it is the payload's)
oci kill c8 TERM
wait_status c8 stopped
assert_match "kill TERM right after start: the payload's status is SIGTERM's (143)" '"exit_code": 143' \
	"$(cat "$ROOT/c8/state.json")"
oci delete c8
assert_match "  ... delete: then poststop, the state stopped" '^poststop e-poststop \{[^}]*"status":"stopped"' \
	"$(tail -1 "$H")"
assert_eq "  ... each ran once" 4 "$(wc -l <"$H")"
assert_eq "  ... each state carries config.json's annotations (runtime-tools' hooks_stdin)" 4 \
	"$(grep -c '"annotations":{"org.example.test":"hook stdin"}' "$H")"
bundle_with '["/nsrun-probe", "sleep", "300"]' "c['hooks'] = {'createRuntime': [{'path': '$T/hook-fails'}]}"
oci create --bundle "$T/bundle" c9
assert_match "a createRuntime hook that fails: create fails, naming it" \
	"(^|
)nsrun: hooks\.createRuntime\[0\] $T/hook-fails: exit status 3" "$ERR"
check "  ... and the container is removed" test ! -e "$ROOT/c9"
bundle_with '["/nsrun-probe", "sleep", "300"]' "c['hooks'] = {'prestart': [{'path': '$T/hook-hangs', 'timeout': 1}]}"
oci create --bundle "$T/bundle" c9
assert_match "a prestart hook past its timeout: killed, create fails" \
	"(^|
)nsrun: hooks\.prestart\[0\] $T/hook-hangs: timed out after 1 s" "$ERR"
check "  ... nothing left" test ! -e "$ROOT/c9"
bundle_with '["/nsrun-probe", "sleep", "300"]' "c['hooks'] = {'prestart': [{'path': '$T/hook-hangs', 'timeout': 4294968}]}"
oci create --bundle "$T/bundle" c9
assert_eq "a hook timeout past the int of ms (4294968 s): create refuses it, one line, naming the bound" \
	"1|nsrun: config.json: hooks.prestart[0].timeout: 4294968: expected whole seconds, 1 to 2147483" \
	"$RC|$(head -1 <<<"$ERR")"
check "  ... nothing left" test ! -e "$ROOT/c9"
bundle_with '["/nsrun-probe", "exit", "0"]' "c['hooks'] = {k: [{'path': '$T/hook-fails'}, {'path': '$T/hook', 'args': ['hook', k + '-next']}]
    for k in ['poststart', 'poststop']}"
: >"$H"
oci run --bundle "$T/bundle" c9
assert_eq "a poststart hook that fails: a warning, the run goes on (exit 0)" 0 "$RC"
assert_match "  ... the warning names it" "nsrun: warning: hooks\.poststart\[0\] $T/hook-fails: exit status 3" "$ERR"
assert_eq "  ... the next poststart hook runs all the same, and so for poststop (runtime-tools' poststop_fail)" \
	"poststart-next,poststop-next," "$(cut -d' ' -f1 "$H" | tr '\n' ,)"

# ---- create is not over until its hooks are: "creating" meanwhile, which start and
# delete refuse (a payload started early would run before its prestart hook, or
# though the hook failed); delete --force ends it, and that create fails
# shellcheck disable=SC2016 # expanded by the hook
printf '#!/bin/sh\ntouch "%s/held"\nuntil [ -e "%s/release" ]; do sleep 0.05; done\nexit "$1"\n' \
	"$T/out" "$T/out" >"$T/hook-held"
chmod +x "$T/hook-held"
# create_held ID KIND EXIT: create ID in the background (held_bg), its one hook of KIND
# held until $T/out/release, then exiting EXIT; returns once the hook is held
create_held() {
	rm -f "$T/out/held" "$T/out/release" "$T/out/ran-early"
	bundle_with '["/nsrun-probe", "write", "/out/ran-early"]' \
		"c['hooks'] = {'$2': [{'path': '$T/hook-held', 'args': ['hook-held', '$3']}]}"
	timeout 120 "$NSRUN" --root "$ROOT" create --bundle "$T/bundle" "$1" >/dev/null 2>"$T/create.err" &
	held_bg=$!
	local end=$((SECONDS + 60))
	until [ -e "$T/out/held" ] || [ "$SECONDS" -ge "$end" ]; do sleep 0.05; done
	check "$2 hook of $1 held (control: the container is being created)" test -e "$T/out/held"
}
create_held c11 prestart 1
oci state c11
assert_match "  ... state: creating" '"status": "creating"' "$OUT"
oci start c11
assert_eq "  ... start refuses it, saying why" \
	"1|nsrun: container \"c11\" is still being created: start it once its create has returned" "$RC|$(head -1 <<<"$ERR")"
oci delete c11
assert_match "  ... delete without --force refuses it" '^nsrun: container "c11" is being created' "$ERR"
touch "$T/out/release"
wait "$held_bg"
assert_eq "  ... the hook fails (exit 1): create fails" 1 "$?"
check "  ... the payload never ran" test ! -e "$T/out/ran-early"
check "  ... nothing left" test ! -e "$ROOT/c11"
create_held c11 prestart 0
oci start c11
assert_eq "  ... start refused while it is held" 1 "$RC"
touch "$T/out/release"
wait "$held_bg"
assert_eq "  ... the hook passes: create exits 0 (control)" 0 "$?"
oci state c11
assert_match "  ... created" '"status": "created"' "$OUT"
check "  ... the payload has not run (the refused start started nothing)" test ! -e "$T/out/ran-early"
oci start c11
wait_status c11 stopped
check "  ... start now runs it (control of the probes above)" test -e "$T/out/ran-early"
oci delete c11
for kind in prestart createContainer; do
	create_held c12 $kind 0
	oci start c12
	assert_match "  ... start refuses it, saying why" '^nsrun: container "c12" is still being created' "$ERR"
	oci delete --force c12
	assert_eq "  ... delete --force meanwhile: exit 0, no error" "0|" "$RC|$ERR"
	touch "$T/out/release"
	wait "$held_bg"
	assert_eq "  ... that create fails (exit 1)" 1 "$?"
	[ $kind = createContainer ] || assert_match "  ... saying why" \
		'(^|
)nsrun: container "c12" was deleted while it was being created' "$(cat "$T/create.err")"
	check "  ... the payload never ran" test ! -e "$T/out/ran-early"
	check "  ... nothing left" test ! -e "$ROOT/c12"
done

# STRACE ARGS... — strace, quiet, of a command whose exit status is asserted: an
# ASan build's leak check cannot run under ptrace and would make any exit 1
STRACE=(env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -o /dev/null)
# ---- "creating" is made before the exec fifo, whose opening lets the payload run: a
# start that finds the fifo while create has not gone further (held there by
# strace, which delays each of create's fchmodat(2), the fifo's among them) is
# refused, and a failing prestart hook then keeps the payload from running
bundle_with '["/nsrun-probe", "write", "/out/ran-early"]' \
	"c['hooks'] = {'prestart': [{'path': '$T/hook-fails'}]}"
rm -f "$T/out/ran-early"
"${STRACE[@]}" -e trace=fchmodat -e inject=fchmodat:delay_exit=3000000 \
	"$NSRUN" --root "$ROOT" create --bundle "$T/bundle" c13 >/dev/null 2>"$T/create.err" &
held_bg=$!
end=$((SECONDS + 60))
until [ -p "$ROOT/c13/exec.fifo" ] || [ "$SECONDS" -ge "$end" ]; do sleep 0.02; done
check "create of c13 held with its exec fifo made (control: strace can delay it)" test -p "$ROOT/c13/exec.fifo"
oci start c13
assert_match "  ... start refuses it, saying why" '^nsrun: container "c13" is still being created' "$ERR"
wait "$held_bg"
assert_eq "  ... the prestart hook fails (exit 3): create fails" 1 "$?"
check "  ... the payload never ran" test ! -e "$T/out/ran-early"
check "  ... nothing left" test ! -e "$ROOT/c13"
# create_straced ID SYSCALL — create ID in the background (held_bg), each of its
# SYSCALL calls held 3 s on its way out by strace, then its prestart hook held until
# $T/out/release
create_straced() {
	rm -f "$T/out/held" "$T/out/release" "$T/out/ran-early"
	bundle_with '["/nsrun-probe", "write", "/out/ran-early"]' \
		"c['hooks'] = {'prestart': [{'path': '$T/hook-held', 'args': ['hook-held', '0']}]}"
	"${STRACE[@]}" -e trace="$2" -e inject="$2":delay_exit=3000000 \
		"$NSRUN" --root "$ROOT" create --bundle "$T/bundle" "$1" >/dev/null 2>"$T/create.err" &
	held_bg=$!
}
# state and delete --force there, before the monitor has written state.json: each
# waits for it (before, both failed with "read the state")
for verb in state delete; do
	create_straced c15 fchmodat
	end=$((SECONDS + 60))
	until [ -p "$ROOT/c15/exec.fifo" ] || [ "$SECONDS" -ge "$end" ]; do sleep 0.02; done
	check "create of c15 held before its monitor (control: no state.json yet)" \
		test -p "$ROOT/c15/exec.fifo" -a ! -e "$ROOT/c15/state.json"
	if [ $verb = state ]; then
		oci state c15
		assert_match "  ... state waits for it: creating" '"status": "creating"' "$OUT"
		oci delete --force c15
	else
		oci delete --force c15
		assert_eq "  ... delete --force waits for it: exit 0, no error" "0|" "$RC|$ERR"
	fi
	touch "$T/out/release"
	wait "$held_bg"
	assert_eq "  ... that create fails (exit 1)" 1 "$?"
	check "  ... nothing left" test ! -e "$ROOT/c15"
done

# state, kill and delete --force right after the state directory is made (create
# held by strace just after its rename, then by its prestart hook): "creating" is in
# it from the start, so each waits for the state (before, "creating" came a moment
# later, and each failed there, the container then left "created"; a breaker's)
for verb in state kill delete; do
	create_straced c16 renameat2
	end=$((SECONDS + 60))
	until [ -d "$ROOT/c16" ] || [ "$SECONDS" -ge "$end" ]; do sleep 0.02; done
	check "create of c16 held right after its state directory's rename (control: no exec fifo yet)" \
		test -d "$ROOT/c16" -a ! -e "$ROOT/c16/exec.fifo"
	case $verb in
	state)
		oci state c16
		assert_match "  ... state waits for it: creating" '"status": "creating"' "$OUT"
		oci delete --force c16 ;;
	kill)
		oci kill c16 KILL
		assert_eq "  ... kill waits for it: exit 0, no error" "0|" "$RC|$ERR" ;;
	delete)
		oci delete --force c16
		assert_eq "  ... delete --force waits for it: exit 0, no error" "0|" "$RC|$ERR" ;;
	esac
	touch "$T/out/release"
	wait "$held_bg"
	assert_eq "  ... and that create fails (exit 1)" 1 "$?"
	check "  ... nothing left, the payload never ran" test ! -e "$ROOT/c16" -a ! -e "$T/out/ran-early"
done

# a start right after create has removed "creating" (create held there by strace)
# runs the payload, which ends at once: create then succeeds, the container is
# stopped, not removed (before, create asked whether it lived only after, saw it
# ended, failed, and removed its state though the payload had run; a breaker's)
bundle_with '["/nsrun-probe", "write", "/out/ran-early"]'
rm -f "$T/out/ran-early"
"${STRACE[@]}" -e trace=unlinkat -e inject=unlinkat:delay_exit=3000000 \
	"$NSRUN" --root "$ROOT" create --bundle "$T/bundle" c17 >/dev/null 2>"$T/create.err" &
held_bg=$!
end=$((SECONDS + 60))
until [ -p "$ROOT/c17/exec.fifo" ] && [ ! -e "$ROOT/c17/creating" ] || [ "$SECONDS" -ge "$end" ]; do sleep 0.02; done
check "create of c17 held right after removing creating (control: its fifo there)" \
	test -p "$ROOT/c17/exec.fifo" -a ! -e "$ROOT/c17/creating"
oci start c17
assert_eq "  ... start runs it" "0|" "$RC|$ERR"
wait_status c17 stopped
wait "$held_bg"
assert_eq "  ... that create succeeds all the same" 0 "$?"
check "  ... the payload ran" test -e "$T/out/ran-early"
oci state c17
assert_match "  ... and the container is there, stopped" '"status": "stopped"' "$OUT"
oci delete c17

# a pid file that cannot be written fails create, with nothing left (before, the
# container stayed, listed as stopped)
bundle_with '["/nsrun-probe", "write", "/out/ran-early"]'
rm -f "$T/out/ran-early"
oci create --bundle "$T/bundle" --pid-file "$T/no-such-dir/pid" c18
assert_match "create --pid-file in a missing directory: exit 1, saying why" \
	"^1\|nsrun: .*$T/no-such-dir/pid.*No such file or directory" "$RC|$(grep -v '^nsrun: warning' <<<"$ERR" | head -1)"
check "  ... nothing left" test ! -e "$ROOT/c18"
oci list
assert_not_match "  ... list does not show it" 'c18' "$OUT"

# "stopped" is said once the monitor has ended, not before: strace holds each
# exit_group(2) 3 s, as an ASan build's leak check holds the monitor's exit (the
# monitor had let go of its lock before its exit, and state said "stopped", and
# delete removed the state, while it ran).  Through a script, so that strace's own
# command line does not name the container.
bundle_with '["/nsrun-probe", "write", "/out/ran"]'
printf '%s\n' "exec \"\$NSRUN\" --root \"$ROOT\" create --bundle \"$T/bundle\" c19" >"$T/create-c19"
"${STRACE[@]}" -f -e trace=exit_group -e inject=exit_group:delay_enter=3000000 \
	bash "$T/create-c19" >/dev/null 2>"$T/create.err" &
held_bg=$!
end=$((SECONDS + 60))
until [ -e "$ROOT/c19/state.json" ] || [ "$SECONDS" -ge "$end" ]; do sleep 0.1; done
check "create of c19 under strace (control: it is created)" wait_status c19 created
check "  ... its monitor has the container's id in its command line (control)" pgrep -f -- "create --bundle $T/bundle c19\$"
oci start c19
check "  ... started, it ends" wait_status c19 stopped
check "  ... no process of it left once it is stopped" bash -c "! pgrep -f -- 'create --bundle $T/bundle c19\$'"
oci delete c19
assert_eq "  ... delete: exit 0" "0|" "$RC|$ERR"
wait "$held_bg"

# ---- a create killed during its hooks leaves a "creating" that nothing will finish:
# start says so, and delete removes it without --force (the control, delete of c11
# above, refuses while its create lives)
create_held c14 prestart 0
pkill -KILL -P "$held_bg" -x nsrun
wait "$held_bg" 2>/dev/null # (bash says "Killed")
oci start c14
assert_eq "  ... its create killed: start refuses it, saying why" \
	"1|nsrun: container \"c14\": its create ended before its hooks did: delete it" "$RC|$(head -1 <<<"$ERR")"
oci delete c14
assert_eq "  ... delete removes it, no --force needed" "0|" "$RC|$ERR"
check "  ... nothing left" test ! -e "$ROOT/c14"
touch "$T/out/release"
check "  ... the payload never ran" test ! -e "$T/out/ran-early"

# ---- hooks inside: createContainer by the container's pid 1 before pivot_root (its
# path the runtime's), startContainer by the payload's process as confined as it (its
# path the container's); the control of "in the container's namespaces" is prestart's
# line, in ours
L=$T/out/inside.log
# shellcheck disable=SC2016 # expanded by the hook
printf '#!/bin/sh\n{ echo "$1 $(cat)"; readlink /proc/self/ns/net; test -e "%s" && echo host-tree; } >>"%s"\n' \
	"$T/bundle/config.json" "$L" >"$T/hook-in"
chmod +x "$T/hook-in"
probe_hook() { printf "{'path': '/nsrun-probe', 'args': ['nsrun-probe', %s]}" "$1"; }
bundle_with '["/nsrun-probe", "status"]' "c['hooks'] = {
    'prestart': [{'path': '$T/hook-in', 'args': ['hook-in', 'prestart']}],
    'createContainer': [{'path': '$T/hook-in', 'args': ['hook-in', 'createContainer']}],
    'startContainer': [$(probe_hook "'stdin'"), $(probe_hook "'status'"), $(probe_hook "'write', '/out/started'")]}"
rm -f "$L" "$T/out/started"
oci run --bundle "$T/bundle" c10
assert_eq "createContainer and startContainer hooks: the container runs (exit 0)" 0 "$RC"
mapfile -t in_log <"$L" 2>/dev/null
assert_match "  ... createContainer ran first, by pid 1, the state creating" \
	'^createContainer \{"ociVersion":"1\.2\.0","id":"c10","status":"creating","pid":1,"bundle":' "${in_log[0]:-}"
check "  ... in the container's network namespace (control: prestart's is ours)" \
	test "${in_log[1]:-none}" != "$(readlink /proc/self/ns/net)" -a "${in_log[4]:-none}" = "$(readlink /proc/self/ns/net)"
assert_eq "  ... its path and the host's tree seen as the runtime's (before pivot_root)" host-tree "${in_log[2]:-}"
assert_match "  ... then prestart (the spec has it before)" '^prestart \{' "${in_log[3]:-}"
assert_match "startContainer: the state created on its stdin, init's pid" \
	'(^|
)\{"ociVersion":"1\.2\.0","id":"c10","status":"created","pid":1,"bundle":' "$ERR"
status_of() { grep -E '^(Uid|Gid|CapEff|CapBnd|NoNewPrivs|Seccomp):' <<<"$1"; }
assert_eq "  ... run as confined as the payload: the same ids, capabilities, no_new_privs, seccomp" \
	"$(status_of "$OUT")" "$(status_of "$ERR")"
check "  ... its path the container's (/nsrun-probe is in the image only), and it ran" test -e "$T/out/started"
bundle_with '["/nsrun-probe", "write", "/out/ran-after"]' "c['hooks'] = {'startContainer': [$(probe_hook "'exit', '3'")]}"
oci run --bundle "$T/bundle" c10
assert_match "a startContainer hook that fails: the start fails, naming it" \
	"(^|
)nsrun: hooks\.startContainer\[0\] /nsrun-probe: exit status 3" "$ERR"
check "  ... the payload never ran (control: it did above, with its hooks passing)" test ! -e "$T/out/ran-after"
check "  ... nothing left" test ! -e "$ROOT/c10"
bundle_with '["/no-such-command"]'
oci run --bundle "$T/bundle" c10
assert_match "run of a command the image lacks: the exec's own error said (the monitor wrote it to create's closed pipe)" \
	'(^|
)nsrun: exec "/no-such-command": No such file or directory' "$ERR"
check "  ... nothing left (run is create, start and delete)" test ! -e "$ROOT/c10"
bundle_with '["/nsrun-probe", "write", "/out/ran-after"]' "c['hooks'] = {'startContainer': [$(probe_hook "'exit', '4'")]}"
oci create --bundle "$T/bundle" c10
oci start c10
assert_match "start of a container whose startContainer hook fails: start itself names the hook (not only create's stderr)" \
	'^nsrun: hooks\.startContainer\[0\] /nsrun-probe: exit status 4' "$ERR"
assert_eq "  ... start's exit status 1" 1 "$RC"
wait_status c10 stopped
assert_match "  ... the container is stopped, for delete" '"status": "stopped"' "$OUT"
oci delete c10
bundle_with '["/no-such-command"]'
oci create --bundle "$T/bundle" c10
assert_match "create of a command the container lacks: create fails, saying so (as runc's and crun's)" \
	'(^|
)nsrun: exec "/no-such-command": No such file or directory' "$ERR"
check "  ... nothing left" test ! -e "$ROOT/c10"
bundle_with '["/nsrun-probe", "sleep", "300"]' "c['hooks'] = {'createContainer': [{'path': '$T/hook-fails'}]}"
oci create --bundle "$T/bundle" c9
assert_match "a createContainer hook that fails: create fails, naming it" \
	"(^|
)nsrun: hooks\.createContainer\[0\] $T/hook-fails: exit status 3" "$ERR"
check "  ... and the container is removed" test ! -e "$ROOT/c9"

# ---- a bad config.json: the JSON path named, nothing made
bundle_with '["true"]' 'c.pop("hooks", None); c["annotations"] = {"org.example.n": 1}'
oci create --bundle "$T/bundle" bad0
assert_match "annotations with a value not a string: refused, naming it" \
	'^nsrun: config.json: annotations\.org\.example\.n: expected a string' "$ERR"
check "  ... nothing left under --root" test ! -e "$ROOT/bad0"
bundle_with '["true"]' 'c.pop("annotations", None); c["process"]["capabilities"] = {"bounding": ["CAP_CHOWN", "CAP_TEST"]}'
oci create --bundle "$T/bundle" bad0
assert_match "a capability name that is none (CAP_TEST): refused, naming it (runtime-tools' process_capabilities_fail)" \
	'^nsrun: config.json: process.capabilities.bounding\[1\]: "CAP_TEST": not a capability' "$ERR"
bundle_with '["/nsrun-probe", "exit", "0"]' 'c.pop("annotations", None); c["process"]["capabilities"] = {"bounding": ["CAP_CHOWN"]}'
oci run --bundle "$T/bundle" bad0
assert_match "  ... control: a known one is a warning (not granted), the run goes on" \
	'^0 .*nsrun: warning: process.capabilities: not granted' "$RC $(tr '\n' ' ' <<<"$ERR")"
bundle_with '["true"]' 'c["process"]["args"] = "true"'
oci create --bundle "$T/bundle" bad1
assert_eq "config.json with process.args a string: exit 1" 1 "$RC"
assert_match "  ... naming the JSON path, with a hint" '^nsrun: config.json: process.args: expected an array of strings
nsrun: hint: ' "$ERR"
check "  ... nothing left under --root" test ! -e "$ROOT/bad1"
bundle_with '["true"]' 'c["linux"]["namespaces"] = [n for n in c["linux"]["namespaces"] if n["type"] != "mount"] + [{"type": "mount", "path": "/proc/1/ns/mnt"}]'
oci create --bundle "$T/bundle" bad2
assert_match "joining a mount namespace by path: refused, naming the entry (network, ipc, uts, pid, user: 35-oci-namespaces.t)" \
	'^nsrun: config.json: linux\.namespaces\[[0-9]+\]\.path: joining an existing mount namespace is not supported' "$ERR"
bundle_with '["true"]' 'c["linux"]["uidMappings"][0]["size"] = 1000; del c["linux"]["gidMappings"]'
oci create --bundle "$T/bundle" bad3
assert_match "a uid range without a gid map: refused, naming the entry (ranges: 35-oci-namespaces.t)" \
	'^nsrun: config.json: linux\.gidMappings: missing, while linux\.uidMappings maps a range' "$ERR"

# ---- podman --runtime nsrun, with the probe's image
command -v podman >/dev/null || skip_all "podman is not installed (make deps)"
podman_private "$NSRUN"
podman_import "$IMG" localhost/nsrun-probe
[ "$RC" = 0 ] || { not_ok "podman import of the probe image" "$(_ctx)"; done_testing; exit 1; }
who=$([ "$(id -u)" = 0 ] && echo root || echo rootless)
# nsrun's default --root (podman passes its --runtime-flag to create and start, not
# to the delete of its cleanup): as root /run/nsrun, else under XDG_RUNTIME_DIR
state_root=$([ "$(id -u)" = 0 ] && echo /run/nsrun || echo "$P/xdg/nsrun/oci")

pod run --rm --network none localhost/nsrun-probe /nsrun-probe status
assert_eq "podman ($who) run --rm: exit 0" 0 "$RC"
assert_match "  ... the payload ran as uid 0 of its user namespace" '^Uid:	0	0	0	0' "$OUT"
assert_match "  ... with no capabilities" 'CapEff:	0000000000000000' "$OUT"
assert_match "  ... no_new_privs and nsrun's seccomp filter" 'NoNewPrivs:	1
Seccomp:	2' "$OUT"
pod run --rm -t --network none localhost/nsrun-probe /nsrun-probe status
assert_match "podman run -t: the payload's output comes through a terminal (--console-socket: CR LF)" \
	$'NoNewPrivs:\t1\r\n' "$OUT"
pod run --rm --network none localhost/nsrun-probe /nsrun-probe exit 5
assert_eq "podman run --rm: the payload's exit status" 5 "$RC"
pod run --rm --network none localhost/nsrun-probe /no-such-command
assert_eq "podman run of a command the image lacks: 127, as with runc and crun (nsrun's create says so)" \
	"127|1" "$RC|$(grep -c 'exec "/no-such-command": No such file or directory' <<<"$ERR")"
pod run --rm --network none localhost/nsrun-probe /etc/passwd
assert_eq "  ... of a file not executable: 126 (start says permission denied)" \
	"126|1" "$RC|$(grep -c 'exec "/etc/passwd": Permission denied' <<<"$ERR")"
# podman's multi-id maps (linux.uidMappings ranges: 35-oci-namespaces.t); rootless
# keep-id maps the user's id onto itself inside podman's user namespace
if [ "$(id -u)" = 0 ]; then
	pod run --rm --network none --uidmap 0:200000:1000 --gidmap 0:200000:1000 localhost/nsrun-probe \
		/nsrun-probe read /proc/self/uid_map
	assert_match "podman run --uidmap 0:200000:1000: the container's map as podman asked" \
		'^read: ok /proc/self/uid_map [0-9]+ bytes: +0 +200000 +1000.x0a$' "$OUT"
else
	pod run --rm --network none --userns=keep-id localhost/nsrun-probe /nsrun-probe ids
	assert_eq "podman run --userns=keep-id: the payload is the user's own id" \
		"ids: ok uid=$(id -u) gid=$(id -g) euid=$(id -u) egid=$(id -g) groups=$(id -g)" "$OUT"
fi

# -it: what is typed reaches the payload's stdin through podman's terminal (sent once
# the payload says it reads: the terminal is set up by then), and ^D ends it
# (the typing side watches run_cmd's own output file while the run goes on)
rm -f "$TESTTMP/.out"
type_into_tty() {
	local end=$((SECONDS + 60))
	until grep -qs 'stdin: reading' "$TESTTMP/.out" || [ "$SECONDS" -ge "$end" ]; do sleep 0.1; done
	printf 'typed-into-the-tty\r\004'
}
run_cmd script -qec "$(printf '%q ' "${as_me[@]}" "${podman[@]}") run --rm -it --network none \
	localhost/nsrun-probe /nsrun-probe stdin" /dev/null < <(type_into_tty)
assert_match "podman run -it: typed input is echoed by the terminal and reaches the payload's stdin (CR LF: a tty)" \
	$'typed-into-the-tty\r\ntyped-into-the-tty\r\n' "$OUT"
assert_eq "  ... ^D at the terminal ends its stdin: exit 0" 0 "$RC"

# a published port (slirp4netns: podman's own network, no bridge or firewall rule
# left on the host, as root too): the payload's server answers on the host's loopback
port=$(free_port)
pod run -d --network slirp4netns -p "127.0.0.1:$port:8080" localhost/nsrun-probe /nsrun-probe serve 8080
id=$OUT
reply=
for _ in $(seq 100); do
	reply=$(timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port && cat <&3" 2>/dev/null) && [ -n "$reply" ] && break
	sleep 0.1
done
assert_eq "podman run -p 127.0.0.1:$port:8080: the payload's server answers on the host's loopback" \
	served-by-nsrun-probe "$reply"
pod rm -f "$id"

# linux.resources from podman's --pids-limit and --memory, held by nsrun (a cgroup where
# it has one, else RLIMIT_NPROC and its own measure), each with its control
pod run --rm --network none --pids-limit 16 localhost/nsrun-probe /nsrun-probe forkbomb 10 64
if [ "$(id -u)" != 0 ] && [[ $ERR == *"Resource limits are not supported and ignored on cgroups V1 rootless"* ]]; then
	# podman 4 leaves linux.resources out of config.json rootless on a cgroup v1 or
	# hybrid host (its warning): there is no limit for the runtime to hold
	diag "podman --pids-limit and --memory rootless: podman drops them itself on this cgroup v1 host; the root suite runs these"
	assert_match "podman --pids-limit rootless on a cgroup v1 host: podman says it drops the limit" \
		'Resource limits are not supported and ignored on cgroups V1 rootless systems' "$ERR"
else
	assert_match "podman run --pids-limit 16: a fork bomb fails within the limit" \
		'^forkbomb: denied EAGAIN fork failed after (1[0-5]|[0-9]) processes' "$OUT"
	pod run --rm --network none --pids-limit 64 localhost/nsrun-probe /nsrun-probe forkbomb 10 20
	assert_match "  ... control: with --pids-limit 64, 20 processes" '^forkbomb: ok reached 20 processes' "$OUT"
	pod run --rm --network none --memory 64m localhost/nsrun-probe /nsrun-probe memhog-via malloc 200 30
	assert_eq "podman run --memory 64m: 200 MiB held is killed (137)" 137 "$RC"
	pod run --rm --network none --memory 64m localhost/nsrun-probe /nsrun-probe memhog-via malloc 16 0
	assert_eq "  ... control: 16 MiB runs (0)" "0|memhog-via: ok malloc 16 MiB" "$RC|$OUT"
fi

pod run -d --network none localhost/nsrun-probe /nsrun-probe pids
id=$OUT
assert_eq "podman run -d: exit 0" 0 "$RC"
pod wait "$id"
assert_eq "  ... podman wait: its exit status" 0 "$OUT"
pod logs "$id"
assert_match "  ... podman logs: its output, from its own pid namespace (nsrun's init and itself)" \
	'^pids: ok self=2 1:nsrun 2:nsrun-probe$' "$OUT"
pod rm "$id"

pod run -d --network none localhost/nsrun-probe /nsrun-probe sleep 300
id=$OUT
pod exec "$id" /nsrun-probe status
assert_eq "podman exec: exit 0" 0 "$RC"
assert_match "  ... no capabilities, no_new_privs and nsrun's seccomp filter" 'CapEff:	0000000000000000
.*NoNewPrivs:	1
Seccomp:	2' "$OUT"
pod exec -t "$id" /nsrun-probe status
assert_match "podman exec -t: through a terminal (--console-socket: CR LF)" $'NoNewPrivs:\t1\r\n' "$OUT"
pod stop -t 30 "$id"
assert_eq "  ... podman stop: exit 0" 0 "$RC"
pod inspect --format '{{.State.Status}} {{.State.ExitCode}}' "$id"
assert_eq "  ... ended by its SIGTERM (143), not by SIGKILL after the timeout" "exited 143" "$OUT"
pod rm "$id"
assert_eq "  ... podman rm: exit 0" 0 "$RC"
check "  ... nothing left in nsrun's state" test ! -e "$state_root/$id"

# ---- containerd (as root: containerd runs as root): its own containerd, started
# here with a private root, state and socket, runs the probe's image through the
# runc shim with --runc-binary nsrun: a process, a signal, a clean delete
if [ "$(id -u)" != 0 ]; then
	diag "containerd: not as $(id -un) (containerd runs as root; the root suite covers it)"
	done_testing
	exit 0
fi
if ! command -v containerd >/dev/null || ! command -v ctr >/dev/null; then
	not_ok "containerd and ctr are installed (make deps)"
	done_testing
	exit 1
fi
C=$TESTTMP/containerd
mkdir -p "$C"
cat >"$C/config.toml" <<EOF
version = 2
root = "$C/root"
state = "$C/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$C/sock"
[ttrpc]
  address = "$C/sock.ttrpc"
EOF
# the shim keeps its sockets and the runtime's --root under /run/containerd
had_run_containerd=$([ -e /run/containerd ] && echo 1)
ns=nsrun-test-$$
containerd --config "$C/config.toml" >"$C/log" 2>&1 &
cd_pid=$!
cleanup_containerd() {
	ctr -a "$C/sock" -n "$ns" task kill -s SIGKILL c1
	ctr -a "$C/sock" -n "$ns" task delete -f c1
	ctr -a "$C/sock" -n "$ns" container delete c1
	kill "$cd_pid"
	wait "$cd_pid"
	rm -rf "/run/containerd/runc/$ns"
	[ -n "$had_run_containerd" ] || rm -rf /run/containerd
}
at_exit cleanup_containerd
ctr=(ctr -a "$C/sock" -n "$ns")
end=$((SECONDS + 60))
until "${ctr[@]}" version >/dev/null 2>&1 || [ "$SECONDS" -ge "$end" ]; do sleep 0.2; done
run_cmd "${ctr[@]}" run --rm --runc-binary "$NSRUN" --rootfs "$IMG" c0 /nsrun-probe status
assert_eq "containerd (ctr run --rm --runc-binary nsrun): exit 0" 0 "$RC"
assert_match "  ... the payload has no capabilities, no_new_privs and seccomp" 'CapEff:	0000000000000000
.*NoNewPrivs:	1
Seccomp:	2' "$OUT"
run_cmd "${ctr[@]}" run -d --runc-binary "$NSRUN" --rootfs "$IMG" c1 /nsrun-probe sleep 300
assert_eq "ctr run -d: exit 0" 0 "$RC"
run_cmd "${ctr[@]}" task exec --exec-id e1 c1 /nsrun-probe status
assert_eq "  ... ctr task exec (the shim's exec --process --detach): exit 0" 0 "$RC"
assert_match "  ... with nsrun's isolation" 'CapEff:	0000000000000000
.*NoNewPrivs:	1
Seccomp:	2' "$OUT"
run_cmd "${ctr[@]}" task ps c1
assert_match "  ... ctr task ps (ps --format json): its pids" '^PID +INFO
[0-9]+ +-
[0-9]+ +-' "$OUT"
run_cmd "${ctr[@]}" task kill -s SIGTERM c1
assert_eq "  ... ctr task kill -s SIGTERM: exit 0" 0 "$RC"
end=$((SECONDS + 60))
while [ "$SECONDS" -lt "$end" ]; do
	run_cmd "${ctr[@]}" task ls
	[[ $OUT =~ c1\ +[0-9]+\ +STOPPED ]] && break
	sleep 0.2
done
assert_match "  ... the task stopped" 'c1 +[0-9]+ +STOPPED' "$OUT"
run_cmd "${ctr[@]}" task delete c1
assert_eq "  ... ctr task delete: exit 0" 0 "$RC"
assert_match "  ... its status: SIGTERM's (143)" '143' "$OUT$ERR"
run_cmd "${ctr[@]}" container delete c1
check "  ... nothing left of it in nsrun's state" test -z "$(ls -A "/run/containerd/runc/$ns" 2>/dev/null)"

done_testing
