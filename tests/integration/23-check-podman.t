#!/bin/bash
# nsrun inside a rootless podman container: an image made from the python rootfs
# with `podman import`, run as the unprivileged user (nsrun-test when the suite runs
# as root).  With podman's defaults the run fails with the cause named (the masked
# /proc) and `nsrun check` says the same; with the options docs/isolation.md documents it
# runs the python snippet with every property of a default run.
#
# podman's storage, run and config directories all live in this test's temp dir
# (--root/--runroot, HOME, XDG_RUNTIME_DIR, TMPDIR), the image is imported once,
# and the rootless pause process podman leaves is ended at exit.
. "$(dirname "$0")/../lib.sh"
require_all

SNIPPET='import sys; print("python", sys.version_info[0])'
USER_NAME=$(id -un)
[ "$(id -u)" = 0 ] && USER_NAME=${NSRUN_TEST_USER:-nsrun-test}
for tool in podman runc newuidmap; do
	command -v "$tool" >/dev/null || PATH=$PATH:/usr/sbin:/sbin
	command -v "$tool" >/dev/null || skip_all "$tool is not installed (make deps)"
done
id -u "$USER_NAME" >/dev/null 2>&1 || skip_all "no user $USER_NAME (make test-user)"
grep -q "^$USER_NAME:" /etc/subuid || skip_all "$USER_NAME has no subordinate ids in /etc/subuid (rootless podman needs them)"

# This host has hybrid cgroups, where crun (1.8) refuses to start any container
# ("cgroups in hybrid mode not supported"): runc with the cgroupfs manager works,
# and a rootless runc ignores the v1 cgroups it may not create.
podman_private "$(command -v runc)" "$USER_NAME"
mkdir -p "$P/nsrun"
# what the payload of podman needs: nsrun, the libraries the image lacks, the probe
cp "$NSRUN" "$P/nsrun/nsrun"
rootfs=$NSRUN_IMAGES/python/rootfs
for lib in $(ldd "$NSRUN" | awk '$3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
	[ -e "$rootfs$lib" ] || cp -L "$lib" "$P/nsrun/"
done
chmod -R a+rX "$P/nsrun"
[ "$(id -u)" = 0 ] && chown -R "$USER_NAME" "$P/nsrun"
profiles=${NSRUN_SECCOMP_PROFILES:-$TESTS_DIR/../seccomp-profiles}

podman_import "$rootfs" localhost/nsrun-python
[ "$RC" = 0 ] || { not_ok "podman import of the python rootfs" "$(_ctx)"; done_testing; exit 1; }

in_podman() {   # in_podman PODMAN-RUN-OPTIONS... -- SHELL-SCRIPT (its $0 is the snippet)
	local opts=()
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	run_cmd "${as_me[@]}" "${podman[@]}" run --rm --network none \
		-v "$P/nsrun:/opt/nsrun:ro" -v "$NSRUN_IMAGES:/images:ro" -v "$profiles:/profiles:ro" \
		-v "$PROBE_DIR:/probe:ro" -e LD_LIBRARY_PATH=/opt/nsrun -e NSRUN_IMAGES=/images \
		-e NSRUN_SECCOMP_PROFILES=/profiles -e ASAN_OPTIONS=detect_leaks=0 \
		"${opts[@]+"${opts[@]}"}" localhost/nsrun-python sh -c "$1" "$SNIPPET"
}
# one podman run per case: the run's stderr and status, then check's output
both='/opt/nsrun/nsrun --isolation full --image python -- python3 -c "$0" 2>&1; echo "run status $?"; /opt/nsrun/nsrun check; echo "check status $?"'

# ---- podman's defaults: /proc is masked, so the run must fail and say why
in_podman -- "$both"
run_part=$(sed -n '1,/^run status /p' <<<"$OUT")
assert_match "podman defaults: the run fails (125)" '(^|
)run status 125$' "$run_part"
assert_match "  ... naming the masked /proc" \
	'^nsrun: mount a fresh /proc: the outer /proc has paths mounted over \(/proc/' "$run_part"
assert_match "  ... and the podman option that fixes it" \
	'(^|
)nsrun: hint: .*systempaths=unconfined' "$run_part"
assert_match "  ... nsrun check says the same and exits 1 (a lower tier works: below)" \
	"(^|
)fresh /proc: missing: $(sed -n 's/^nsrun: \(mount a fresh \/proc: [^(]*\).*/\1/p' <<<"$run_part").*
check status 1$" "$OUT"

# ---- podman's defaults without --isolation: the highest tier there (docs/isolation.md,
# "Isolation tiers"), named by the run and predicted by check (issue 16, the fourth
# place of 26-agent-sandboxes-tiers.t)
# shellcheck disable=SC2016
in_podman -- 'N=/opt/nsrun/nsrun
$N --json - --image python -- python3 -c "import os; print(\"uid\", os.getuid())"; echo "run status $?"
$N check; echo "check status $?"'
tier=$(sed -n 's/.*"isolation":"\([a-z]*\)".*/\1/p' <<<"$OUT")
diag "podman defaults: isolation $tier"
assert_match "podman defaults, no --isolation: the run works in a lower tier" '^(reduced|minimal)$' "$tier"
assert_match "  ... printing uid 65534" '"stdout":"uid 65534\\n"' "$OUT"
assert_match "  ... exit 0" '(^|
)run status 0(
|$)' "$OUT"
assert_match "  ... and check names the same tier and exits 1" "(^|
)isolation: missing: not full; a run takes the $tier tier.*
check status 1\$" "$OUT"

# ---- the probe battery (examples/test_isolation.py) at podman's defaults, asserting
# what that tier promises (issue 16): its harness runs outside podman, as the user, and
# every nsrun it starts runs inside one long-lived container through `podman exec`,
# which sees the harness's temporary files at the same path
B=$P/battery
mkdir -p "$B/lib" "$B/tmp"
cp "$TESTS_DIR/../examples/test_isolation.py" "$B/lib/" && cp -r "$TESTS_DIR/../bindings/python/nsrun" "$B/lib/"
[ "$(id -u)" = 0 ] && chown -R "$USER_NAME" "$B"
chmod -R a+rX "$B"
run_cmd "${as_me[@]}" "${podman[@]}" run -d --name nsrun-battery --network none \
	-v "$P/nsrun:/opt/nsrun:ro" -v "$NSRUN_IMAGES:/images:ro" -v "$B/tmp:$B/tmp" \
	localhost/nsrun-python sleep 600
if [ "$RC" != 0 ]; then
	not_ok "podman run -d of the battery's container" "$(_ctx)"
else
	{
		echo '#!/bin/sh'
		printf 'exec'
		printf ' %q' "${podman[@]}" exec -i -e LD_LIBRARY_PATH=/opt/nsrun -e NSRUN_IMAGES=/images \
			-e ASAN_OPTIONS=detect_leaks=0 -e XDG_CACHE_HOME="$B/tmp/cache" nsrun-battery /opt/nsrun/nsrun
		printf ' "$@"\n'
	} >"$B/nsrun"
	chmod 755 "$B/nsrun"
	deselect=()
	# (a sanitizer build cannot run the minimal tier: its RLIMIT_DATA backstop is below
	# ASan's shadow reservation)
	[ -n "${NSRUN_TEST_SANITIZER:-}" ] && deselect=(-k "not minimal")
	NSRUN_TEST_GUARD=300 run_cmd "${as_me[@]}" NSRUN="$B/nsrun" NSRUN_ISOLATION="$tier" TMPDIR="$B/tmp" \
		PYTHONPATH="$B/lib" /usr/bin/python3 -m pytest -q -p no:cacheprovider -rs "${deselect[@]+"${deselect[@]}"}" \
		--basetemp "$B/tmp/pytest" "$B/lib/test_isolation.py"
	diag "the battery in podman ($tier tier): $(grep -E '[0-9]+ (passed|failed)' <<<"$OUT" | tail -n 1)"
	assert_match "podman defaults: examples/test_isolation.py passes for the $tier tier's properties" \
		'(^|
)[0-9]+ passed, [0-9]+ skipped' "$OUT"
	assert_eq "  ... skipping only what the tier does not promise" "" \
		"$(grep '^SKIPPED' <<<"$OUT" | grep -Ev ": (the $tier tier does not promise this|the minimal tier has no chroot unprivileged)\$" || true)"
	"${as_me[@]}" "${podman[@]}" rm -f -t 0 nsrun-battery >/dev/null 2>&1 || true
fi

# ---- docs/isolation.md's options: a default run with every property
opts=(--security-opt systempaths=unconfined --cap-add SYS_ADMIN)
in_podman "${opts[@]}" -- 'cd /; N=/opt/nsrun/nsrun
$N check; echo "check status $?"
$N --image python -- python3 -c "$0"; echo "run status $?"
$N --image python -v /probe:/mnt:ro -- /mnt/nsrun-probe status
for p in pids hostname netdev "unshare user" "mount-tmpfs /tmp" "write /etc/x"; do
	$N --image python -v /probe:/mnt:ro -- /mnt/nsrun-probe $p 2>&1
done'
assert_match "podman ${opts[*]}: nsrun check passes" '(^|
)check status 0(
|$)' "$OUT"
assert_match "  ... the python snippet runs" '(^|
)python 3
run status 0(
|$)' "$OUT"
assert_match "  ... as uid 65534" '(^|
)Uid:	65534	65534	65534	65534' "$OUT"
assert_match "  ... with no capabilities" '(^|
)CapEff:	0000000000000000
CapBnd:	0000000000000000' "$OUT"
assert_match "  ... no_new_privs and seccomp" '(^|
)NoNewPrivs:	1
Seccomp:	2' "$OUT"
assert_match "  ... in its own pid namespace (init and itself only)" '(^|
)pids: ok self=2 1:nsrun 2:nsrun-probe(
|$)' "$OUT"
assert_match "  ... its own hostname" '(^|
)hostname: ok nsrun(
|$)' "$OUT"
assert_match "  ... no network but lo" '(^|
)netdev: ok lo(
|$)' "$OUT"
assert_match "  ... no nested user namespace" '(^|
)unshare: denied E[A-Z]+ user' "$OUT"
assert_match "  ... no mount" '(^|
)mount-tmpfs: denied E[A-Z]+' "$OUT"
assert_match "  ... a read-only root" '(^|
)write: denied EROFS' "$OUT"

# ---- each option is needed: without --cap-add SYS_ADMIN podman's seccomp profile
# refuses sethostname (it allows it only with that capability), and both say so
in_podman --security-opt systempaths=unconfined -- "$both"
run_part=$(sed -n '1,/^run status /p' <<<"$OUT")
assert_match "without --cap-add SYS_ADMIN: the run fails (125)" '(^|
)run status 125$' "$run_part"
assert_match "  ... naming the hostname and podman's seccomp filter" \
	'^nsrun: set the hostname "nsrun": denied by the [0-9]+ seccomp filter\(s\) this process runs under' "$run_part"
assert_match "  ... and the fix" '(^|
)nsrun: hint: .*--cap-add SYS_ADMIN' "$run_part"
assert_match "  ... nsrun check's uts line says it is podman's filter, and check exits 1 (a lower tier works)" \
	'(^|
)uts namespace: missing: set the hostname in a new uts namespace: denied by the [0-9]+ seccomp filter\(s\) this process runs under.*--cap-add SYS_ADMIN.*
check status 1$' "$OUT"

done_testing
