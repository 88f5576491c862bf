#!/bin/bash
# nsrun inside the sandboxes agents already run in: bubblewrap, nsrun itself
# (--allow-nested), a Landlock domain (the reduced tier), a seccomp filter that
# allows only AF_UNIX sockets, and a /proc with masked paths.  Each run either has
# every property of a default run or fails with the cause named.
. "$(dirname "$0")/../lib.sh"
require_all
command -v bwrap >/dev/null || skip_all "bwrap not installed (Debian: bubblewrap)"

SNIPPET='import os, socket; print("py", os.getuid(), socket.gethostname())'
ROOTFS="$NSRUN_IMAGES/python/rootfs"

# assert_default_props LABEL — the probes of a default run, through the run_* function in $RUNNER
assert_default_props() {
	local label=$1 st
	$RUNNER -- status
	st=$OUT
	assert_match "$label: uid 65534" $'Uid:\t65534\t65534\t65534\t65534' "$st"
	assert_match "$label: no capability" $'CapEff:\t0000000000000000' "$st"
	assert_match "$label: empty bounding set" $'CapBnd:\t0000000000000000' "$st"
	assert_match "$label: no_new_privs" $'NoNewPrivs:\t1' "$st"
	assert_match "$label: seccomp filter" $'Seccomp:\t2' "$st"
	$RUNNER -- pids
	assert_eq "$label: a pid namespace of its own (pids 1 and 2)" "1 2 " \
		"$(tr ' ' '\n' <<<"$OUT" | grep -E '^[0-9]+:' | cut -d: -f1 | tr '\n' ' ')"
	$RUNNER -- netdev
	assert_eq "$label: only lo" "netdev: ok lo" "$OUT"
	$RUNNER -- hostname
	assert_eq "$label: hostname" "hostname: ok nsrun" "$OUT"
	$RUNNER -- write /usr/escape
	assert_match "$label: read-only root" '^write: denied (EROFS|EACCES)' "$OUT"
	$RUNNER -- write /tmp/f
	assert_match "$label: /tmp writable" '^write: ok' "$OUT"
	$RUNNER -- unshare user
	assert_match "$label: no namespaces for the payload" '^unshare: denied EPERM' "$OUT"
}

# ------------------------------------------------ inside bubblewrap (an agent sandbox)
# as an unprivileged agent: root's bwrap maps only host root, where nsrun refuses to
# run (25-agent-sandboxes.t), so root tests as nobody
AGENT=()
[ "$(id -u)" = 0 ] && AGENT=(setpriv --reuid=65534 --regid=65534 --clear-groups)
# what the sandboxes' tmpfs on /tmp would hide: the test's files, nsrun and its profiles
# (a checkout may live under /tmp)
KEEP=(--bind "$TESTTMP" "$TESTTMP" --ro-bind "$(dirname "$NSRUN")" "$(dirname "$NSRUN")")
PROFILES=${NSRUN_SECCOMP_PROFILES:-$TESTS_DIR/../seccomp-profiles}
KEEP+=(--ro-bind "$PROFILES" "$PROFILES")
BWRAP=("${AGENT[@]+"${AGENT[@]}"}" bwrap --unshare-all --die-with-parent --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp
	"${KEEP[@]}" --)
run_cmd "${BWRAP[@]}" "$PROBE" netdev
assert_eq "control: bwrap's own sandbox has only lo" "netdev: ok lo" "$OUT"
run_cmd "${BWRAP[@]}" "$NSRUN" --image python - <<<"$SNIPPET"
assert_eq "in bwrap: the python snippet runs" "py 65534 nsrun" "$OUT"
assert_eq "  ... exit 0" 0 "$RC"
bwrap_probe() { run_cmd "${BWRAP[@]}" "$NSRUN" --image python -v "$PROBE_DIR:/mnt:ro" -- /mnt/nsrun-probe "${@:2}"; }
RUNNER=bwrap_probe assert_default_props "in bwrap"

# ------------------------------------------------ inside nsrun (--allow-nested)
LIBS="$TESTTMP/libs"
mkdir -p "$LIBS"
ldd "$NSRUN" | awk '/=> \//{ print $3 }' | xargs -r cp -L -t "$LIBS"
chmod -R a+rX "$LIBS"
OUTER=(--image python -v "$(dirname "$NSRUN"):/opt/nsrun:ro" -v "$LIBS:/opt/nsrun-libs:ro"
	-v "$PROFILES:/opt/nsrun-profiles:ro" -v "$ROOTFS:/images/python:ro"
	-v "$PROBE_DIR:/mnt:ro" -e LD_LIBRARY_PATH=/opt/nsrun-libs -e NSRUN_SECCOMP_PROFILES=/opt/nsrun-profiles)
# an ASan inner nsrun reserves terabytes of shadow (more than the outer run's
# rlimit), and LeakSanitizer needs ptrace, which the outer filter denies
[ "${NSRUN_TEST_SANITIZER:-0}" = 1 ] && OUTER+=(--memory 0 -e ASAN_OPTIONS=detect_leaks=0)
INNER=(/opt/nsrun/nsrun --rootfs /images/python)
run_nsrun --allow-nested "${OUTER[@]}" -- "${INNER[@]}" -- python3 -c "$SNIPPET"
assert_eq "nsrun in nsrun --allow-nested: the python snippet runs" "py 65534 nsrun" "$OUT"
# where nsrun measures --memory (no memory cgroup) a tmpfs of the payload's own
# namespaces is not seen: said, never silent (breaker, session 18); with a cgroup
# the kernel charges it and nothing is said
run_nsrun --json - --memory 256m --allow-nested --image python -- true
how=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["limits"]["memory_bytes"]["enforced"])' "$OUT" 2>/dev/null)
if [ "$how" = supervisor ]; then
	assert_match "--allow-nested, --memory measured by nsrun: a warning says what it does not count" \
		'^nsrun: warning: --allow-nested: --memory does not count a tmpfs the payload mounts in namespaces of its own' "$ERR"
	run_nsrun --json - --memory 256m --image python -- true
	assert_eq "  control: no warning without --allow-nested" "" "$ERR"
else
	assert_eq "--allow-nested, --memory a cgroup's ($how): nothing to warn of" "" "$ERR"
fi
run_nsrun --allow-nested "${OUTER[@]}" --hostname outer -- "${INNER[@]}" --hostname inner --add-host db:10.0.0.7 -- \
	sh -c 'getent hosts inner db localhost | tr -s " " | tr "\n" "|"; cat /etc/hostname'
assert_eq "  ... the inner run has its own /etc/hosts and /etc/hostname (over the outer's)" \
	"127.0.1.1 inner|10.0.0.7 db|::1 localhost ip6-localhost ip6-loopback|inner" "$OUT"
nested_probe() { run_nsrun --allow-nested "${OUTER[@]}" -- "${INNER[@]}" -v /mnt:/mnt:ro -- /mnt/nsrun-probe "${@:2}"; }
RUNNER=nested_probe assert_default_props "nested"
nested_probe -- read /proc/1/environ
assert_match "nested: the inner /proc is the inner pid namespace's" '^read: (ok|denied)' "$OUT"

# the outer run: its proc for the inner one is out of the payload's reach
run_probe --allow-nested -- read /dev/.nsrun/proc/1/status
assert_match "--allow-nested: the unmasked proc is unreachable" '^read: denied (EACCES|ENOENT)' "$OUT"
run_probe --allow-nested -- read /proc/kcore
assert_match "--allow-nested: /proc stays masked" '^read: (ok 0 bytes|denied)' "$OUT"
run_probe --allow-nested -- pids
assert_eq "--allow-nested: still only pids 1 and 2" "1 2 " \
	"$(tr ' ' '\n' <<<"$OUT" | grep -E '^[0-9]+:' | cut -d: -f1 | tr '\n' ' ')"
run_probe --allow-nested -- ptrace-attach child
assert_match "--allow-nested: ptrace still denied" '^ptrace-attach: denied' "$OUT"

run_nsrun "${OUTER[@]}" -- /opt/nsrun/nsrun --isolation full --rootfs /images/python -- true
assert_eq "nsrun in nsrun without --allow-nested: full isolation refused (125)" 125 "$RC"
assert_match "  ... the cause is named: the outer seccomp filter" 'seccomp filter' "$ERR"

# ------------------------------------------------ inside a Landlock domain
run_cmd "$PROBE" landlock-exec "$PROBE" mount-tmpfs "$TESTTMP"
assert_match "control: the probe's Landlock domain refuses mounts (outside nsrun too)" \
	'^mount-tmpfs: denied (EPERM|EACCES)' "$OUT"
run_cmd "$PROBE" landlock-exec "$NSRUN" --isolation full --image python -- true
assert_eq "in a Landlock domain: a full run fails (125)" 125 "$RC"
assert_match "  ... naming Landlock" 'Landlock ruleset' "$(head -1 <<<"$ERR")"
assert_match "  ... and the reduced tier as the fix" 'hint: .*--isolation reduced' "$ERR"
assert_nsrun_error "  ... one error line and a hint"

run_cmd "$PROBE" landlock-exec "$NSRUN" --image python - <<<"$SNIPPET"
assert_eq "in a Landlock domain, a default run takes the reduced tier: the snippet runs" "py 65534 nsrun" "$OUT"
assert_match "  ... and says so, and what it lacks" \
	'^nsrun: warning: isolation reduced \(full: cannot mount.*Landlock.*\): no mount namespace of its own: no fresh /proc, no /dev, no tmpfs' "$ERR"
run_cmd "$PROBE" landlock-exec "$NSRUN" --isolation chroot --image python - <<<"$SNIPPET"
assert_eq "--isolation chroot (the old name of reduced): the snippet runs" "py 65534 nsrun" "$OUT"
assert_match "  ... and says what it lacks" '^nsrun: warning: isolation reduced: no mount namespace of its own' "$ERR"

# a rootfs of our own with the probe in it (chroot mode has no volumes), owned by the
# caller: only Landlock keeps the payload (the caller's uid on the host) from writing it
CR="$TESTTMP/chroot"
mkdir -p "$CR/bin" "$CR/tmp" "$CR/proc"
cp "$PROBE" "$CR/bin/probe"
chroot_probe() { run_cmd "$PROBE" landlock-exec "$NSRUN" --isolation chroot --rootfs "$CR" -- /bin/probe "${@:2}"; }
chroot_probe -- ids
assert_eq "chroot mode: uid/gid 65534" "ids: ok uid=65534 gid=65534 euid=65534 egid=65534 groups=65534" \
	"$(sed 's/groups=[0-9,]*/groups=65534/' <<<"$OUT")"
chroot_probe -- hostname
assert_eq "chroot mode: its own hostname" "hostname: ok nsrun" "$OUT"
chroot_probe -- write /tmp/x
assert_match "chroot mode: the image is read-only (Landlock)" '^write: denied EACCES' "$OUT"
run_host_probe write "$CR/tmp/x"
assert_match "  control: the caller can write that directory" '^write: ok' "$OUT"
chroot_probe -- unshare user
assert_match "chroot mode: no namespaces for the payload" '^unshare: denied EPERM' "$OUT"
chroot_probe -- setuid0
assert_match "chroot mode: no way back to uid 0" '^setuid0: denied' "$OUT"
chroot_probe -- chroot-escape /tmp
assert_match "chroot mode: no chroot escape" '^chroot-escape: denied' "$OUT"
chroot_probe -- loopback 127.0.0.1
assert_eq "chroot mode: lo is up in its own network namespace" "loopback: ok 127.0.0.1" "$OUT"
chroot_probe -- forkbomb 2 100000
assert_match "chroot mode: the pids limit holds" '^forkbomb: (ok|denied)' "$OUT"
assert_not_match "  ... the fork bomb did not reach 100000 processes" 'forked=100000' "$OUT"
run_cmd "$PROBE" landlock-exec "$NSRUN" --isolation chroot --strict --image python -- true
assert_eq "chroot mode is weaker than the default: refused with --strict" 125 "$RC"

# ------------------------------------------------ a seccomp filter allowing only AF_UNIX sockets
run_cmd "$PROBE" deny-sockets-exec "$PROBE" loopback 127.0.0.1
assert_match "control: the outer filter refuses AF_INET" '^loopback: denied EAFNOSUPPORT' "$OUT"
run_cmd "$PROBE" deny-sockets-exec "$NSRUN" --image python -v "$PROBE_DIR:/mnt:ro" -- /mnt/nsrun-probe netdev
assert_eq "no netlink, no AF_INET: the run works, lo is brought up" "netdev: ok lo" "$OUT"
assert_eq "  ... exit 0" 0 "$RC"

# ------------------------------------------------ an outer /dev without some nodes
NODEV=("${AGENT[@]+"${AGENT[@]}"}" bwrap --unshare-all --die-with-parent --ro-bind / / --tmpfs /dev
	--dev-bind /dev/null /dev/null --dev-bind /dev/zero /dev/zero --dev-bind /dev/random /dev/random
	--proc /proc --tmpfs /tmp "${KEEP[@]}")
run_cmd "${NODEV[@]}" --dev-bind /dev/urandom /dev/urandom -- "$NSRUN" --image python -- ls /dev
assert_eq "no /dev/full, /dev/tty outside: the run works without them" "fd null ptmx pts random shm stderr stdin stdout urandom zero" "$(tr '\n' ' ' <<<"$OUT" | sed 's/ $//')"
assert_match "  ... and says so" 'warning: the container has no /dev/full: .*No such file' "$ERR"
run_cmd "${NODEV[@]}" --dev-bind /dev/urandom /dev/urandom -- "$NSRUN" --strict --memory 0 --pids-limit 0 --image python -- true
assert_eq "  ... refused with --strict" 125 "$RC"
run_cmd "${NODEV[@]}" -- "$NSRUN" --image python -- true
assert_eq "no /dev/urandom outside: refused (125)" 125 "$RC"
assert_match "  ... naming the node" "^nsrun: bind the host's /dev/urandom into the container: it is missing" "$ERR"
assert_match "  ... and the fix" 'hint: .*bwrap: --dev /dev' "$ERR"

# ------------------------------------------------ a /proc with masked paths (B20, B21)
# a user and mount namespace of the test's own, with a tmpfs over /proc/acpi
MASKED=("${AGENT[@]+"${AGENT[@]}"}" unshare -rm sh -c 'mount -t tmpfs none /proc/acpi 2>/dev/null || mount --bind /dev/null /proc/kcore; exec "$0" "$@"')
run_cmd "${MASKED[@]}" "$NSRUN" --image python - <<<"$SNIPPET"
assert_eq "masked /proc: a default run takes the reduced tier" "0 py 65534 nsrun" "$RC $OUT"
assert_match "  ... and its warning names the masked /proc" \
	'^nsrun: warning: isolation reduced \(full: mount a fresh /proc: the outer /proc has paths mounted over' "$ERR"
run_cmd "${MASKED[@]}" "$NSRUN" --isolation full --image python - <<<"$SNIPPET"
assert_eq "masked /proc, --isolation full: refused (125), never a full run without /proc" 125 "$RC"
assert_match "  ... naming the /proc mount and its cause" "^nsrun: mount a fresh /proc: the outer /proc has paths mounted over \(/proc/(acpi|kcore)\)" "$ERR"
assert_match "  ... and the fix" 'hint: run the outer container with an unmasked /proc' "$ERR"
assert_nsrun_error "  ... one error line and a hint"
# B20 as reported: bubblewrap binding /dev/null over /proc/cmdline
run_cmd "${AGENT[@]+"${AGENT[@]}"}" bwrap --unshare-all --die-with-parent --ro-bind / / --dev /dev --proc /proc \
	--dev-bind /dev/null /proc/cmdline --tmpfs /tmp "${KEEP[@]}" -- "$NSRUN" --isolation full --image python - <<<"$SNIPPET"
assert_eq "B20: bwrap with /proc/cmdline masked, --isolation full: refused (125)" 125 "$RC"
assert_match "  ... naming /proc" "mount a fresh /proc: the outer /proc has paths mounted over" "$ERR"
# B21: an outer container whose filter allows namespaces but whose /proc is masked
run_nsrun --security-opt seccomp=unconfined --security-opt landlock=unconfined "${OUTER[@]}" -- \
	/opt/nsrun/nsrun --isolation full --rootfs /images/python -- true
assert_eq "B21: inside a seccomp-unconfined container with masked /proc, --isolation full: refused (125)" 125 "$RC"
assert_match "  ... naming /proc" "mount a fresh /proc: the outer /proc has paths mounted over" "$ERR"
run_nsrun "${OUTER[@]}" -- /opt/nsrun/nsrun --isolation full --rootfs /images/python -- true
assert_match "B21: inside a default container, --isolation full: refused naming seccomp" 'seccomp filter' "$ERR"
# (no stall: a refusal that hung on a set-up step would run into the test guard;
# 15 s leaves room for a nested start under ASan on a loaded machine)
if elapsed_lt 15; then ok "  ... without a stall: under 15 s ($ELAPSED s)"; else not_ok "  ... without a stall: under 15 s" "took $ELAPSED s"; fi

done_testing
