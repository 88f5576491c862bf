#!/bin/bash
# nsrun inside sandboxes that take a kernel feature away: a full run
# (--isolation full; without it nsrun may take a lower tier, 25-tiers.t and
# 26-agent-sandboxes-tiers.t) fails with the cause named and its fix, and `nsrun
# check` run in the same place names the same cause.  Each place is set up by the test itself, as an unprivileged user can:
#   - bubblewrap --unshare-user --disable-userns (an agent sandbox without nesting)
#   - a seccomp filter that denies unshare: nsrun inside nsrun's default profile
#   - /proc over-mounted as container engines leave it (unshare -rm + binds)
# (user.max_user_namespaces=0 is in 20-check.t, rootless podman in 23-check-podman.t)
. "$(dirname "$0")/../lib.sh"
require_all

SNIPPET='import sys; print("python", sys.version_info[0])'
# as root, the user namespaces below are made by nobody: root's own (unshare -r, bwrap --unshare-user)
# map only host root, where nsrun refuses to run at all (25-agent-sandboxes.t)
AGENT=()
[ "$(id -u)" = 0 ] && AGENT=(setpriv --reuid=65534 --regid=65534 --clear-groups)

# check_says_too DESC — $OUT of `nsrun check` in the same place: not 0 (1: only a
# lower tier works, 2: none) and the line for FEATURE carries the first line of the
# run's error ($RUN_ERR) as its cause
check_says_too() {
	local feature=$1 cause
	assert_match "  ... nsrun check there exits 1 or 2 (not full)" '^[12]$' "$RC"
	cause=$(sed -n "s|^$feature: missing: \\(.*\\); fix: .*|\\1|p" <<<"$OUT")
	assert_eq "  ... and its '$feature' line names the same cause as the run" \
		"$(head -n 1 <<<"$RUN_ERR")" "nsrun: $cause"
	assert_eq "  ... and the same fix" "$(sed -n 's/^nsrun: hint: //p' <<<"$RUN_ERR")" \
		"$(sed -n "s|^$feature: missing: .*; fix: ||p" <<<"$OUT")"
}

# ---- bubblewrap with --disable-userns
if ! command -v bwrap >/dev/null; then
	not_ok "bubblewrap is installed (make deps)"
else
	bw=("${AGENT[@]+"${AGENT[@]}"}" bwrap --unshare-user --disable-userns --die-with-parent --ro-bind / / --dev /dev --proc /proc)
	run_cmd "${bw[@]}" -- "$NSRUN" --isolation full --image python -- python3 -c "$SNIPPET"
	assert_eq "in bwrap --disable-userns: the full run fails (125)" 125 "$RC"
	assert_nsrun_error "  ... with one error line and a hint"
	assert_match "  ... naming the outer limit bwrap set" \
		'^nsrun: cannot create a user namespace: an outer user namespace allows no more \(its user\.max_user_namespaces is 0, as bubblewrap --disable-userns sets it' "$ERR"
	assert_match "  ... and the fix" '(^|
)nsrun: hint: .*without --disable-userns' "$ERR"
	RUN_ERR=$ERR
	run_cmd "${bw[@]}" -- "$NSRUN" check
	check_says_too "user namespace"
	# control: the same bubblewrap without --disable-userns lets nsrun create its namespaces
	run_cmd "${AGENT[@]+"${AGENT[@]}"}" bwrap --unshare-user --die-with-parent --ro-bind / / --dev /dev --proc /proc -- \
		"$NSRUN" check
	assert_match "control: without --disable-userns, check finds user namespaces" \
		'(^|
)user namespace: ok' "$OUT"
fi

# ---- an outer seccomp filter: nsrun inside nsrun's default profile (no --allow-nested)
# The inner nsrun and the libraries it needs that the image lacks go in one directory.
stage=$TESTTMP/nested
mkdir -p "$stage" && cp "$NSRUN" "$stage/nsrun"
rootfs=$NSRUN_IMAGES/python/rootfs
for lib in $(ldd "$NSRUN" | awk '$3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
	[ -e "$rootfs$lib" ] || cp -L "$lib" "$stage/"
done
chmod -R a+rX "$stage"
profiles=${NSRUN_SECCOMP_PROFILES:-$TESTS_DIR/../seccomp-profiles}
nested=(--image python -v "$stage:/opt/nsrun:ro" -v "$NSRUN_IMAGES:/images:ro" -v "$profiles:/profiles:ro"
	-e LD_LIBRARY_PATH=/opt/nsrun -e NSRUN_IMAGES=/images -e NSRUN_SECCOMP_PROFILES=/profiles
	-e ASAN_OPTIONS=detect_leaks=0)   # LeakSanitizer's ptrace is denied in there
# an ASan inner nsrun reserves terabytes of shadow memory: no RLIMIT_DATA for it
[ -n "${NSRUN_TEST_SANITIZER:-}" ] && nested+=(--memory 0)
run_nsrun "${nested[@]}" -- /opt/nsrun/nsrun --isolation full --image python -- python3 -c "$SNIPPET"
assert_eq "inside nsrun (default seccomp): the inner full run fails (125)" 125 "$RC"
assert_nsrun_error "  ... with one error line and a hint"
assert_match "  ... naming the outer seccomp filter" \
	'^nsrun: cannot create a user namespace: this process runs under [0-9]+ seccomp filter\(s\) \(Seccomp: 2' "$ERR"
assert_match "  ... and the fix" '(^|
)nsrun: hint: .*--allow-nested' "$ERR"
RUN_ERR=$ERR
run_nsrun "${nested[@]}" -- /opt/nsrun/nsrun check
check_says_too "user namespace"
assert_match "  ... and its seccomp line sees the outer filter" \
	'(^|
)seccomp: ok \(.*this process already runs under [0-9]+ filter' "$OUT"
# control: without the outer filter the inner nsrun makes its user namespace (what
# stops it next is nsrun's masked /proc, named as such)
run_nsrun "${nested[@]}" --security-opt seccomp=unconfined --security-opt landlock=unconfined -- /opt/nsrun/nsrun check
assert_match "control: outer seccomp=unconfined, the inner check makes a user namespace" \
	'(^|
)user namespace: ok' "$OUT"
assert_match "  ... and names the masked /proc of the outer run" \
	'(^|
)fresh /proc: missing: mount a fresh /proc: the outer /proc has paths mounted over' "$OUT"

# ---- nested as deep as the kernel allows (32 levels): a run needs two more levels, the
# container's and the payload's; check says how many can be made below a first one
run_nsrun check
levels=$(sed -n 's/^user namespace: ok (\([0-9]*\) more levels.*/\1/p' <<<"$OUT")
deep=()
[ ${#AGENT[@]} -gt 0 ] && deep=("${AGENT[@]}")
for _ in $(seq $((${levels:-32} - 1))); do deep+=(unshare -r); done
run_cmd "${deep[@]}" unshare -r "$NSRUN" --image python -- python3 -c "$SNIPPET"
assert_eq "at the nesting limit: the run fails (125)" 125 "$RC"
assert_nsrun_error "  ... with one error line and a hint"
assert_match "  ... naming the nesting limit" \
	"^nsrun: create the payload's user namespace: the container's is nested 32 deep" "$ERR"
RUN_HINT=$(sed -n 's/^nsrun: hint: //p' <<<"$ERR")
run_cmd "${deep[@]}" unshare -r "$NSRUN" check
assert_eq "  ... nsrun check there exits 2 (no tier works: uid 65534 is not mapped there)" 2 "$RC"
assert_match "  ... and says no second level is left, with the same fix" \
	"(^|
)user namespace: missing: one can be made, but no second one inside it.*; fix: $(sed 's/[][\\.*^$()|?+{}]/\\&/g' <<<"$RUN_HINT")" "$OUT"
run_cmd "${deep[@]}" "$NSRUN" --image python -- python3 -c "$SNIPPET"
assert_eq "control: one level less deep, the run works" "0 python 3" "$RC $OUT"

# ---- /proc over-mounted as Docker, Podman and Kubernetes leave it
if unshare -rm true 2>/dev/null; then
	# masked files get /dev/null, directories a read-only bind of themselves
	# shellcheck disable=SC2016
	mask='for f in kcore keys timer_list sched_debug uptime; do [ -e /proc/$f ] && mount --bind /dev/null /proc/$f; done
	for d in bus fs irq sys; do [ -d /proc/$d ] && mount -o bind,ro /proc/$d /proc/$d; done; exec "$@"'
	run_cmd "${AGENT[@]+"${AGENT[@]}"}" unshare -rm sh -c "$mask" sh "$NSRUN" --isolation full --image python -- python3 -c "$SNIPPET"
	if [ "$RC" = 0 ]; then
		not_ok "with a masked /proc the run fails unless a safe fallback exists (none yet)" "$(_ctx)"
	else
		assert_eq "masked /proc: the run fails (125)" 125 "$RC"
		assert_nsrun_error "  ... with one error line and a hint"
		assert_match "  ... naming the masked paths" \
			'^nsrun: mount a fresh /proc: the outer /proc has paths mounted over \(/proc/[a-z_]+' "$ERR"
		assert_match "  ... and the fix" '(^|
)nsrun: hint: .*systempaths=unconfined' "$ERR"
		RUN_ERR=$ERR
		run_cmd "${AGENT[@]+"${AGENT[@]}"}" unshare -rm sh -c "$mask" sh "$NSRUN" check
		check_says_too "fresh /proc"
	fi
	run_cmd "${AGENT[@]+"${AGENT[@]}"}" unshare -rm sh -c 'exec "$@"' sh "$NSRUN" check
	assert_match "control: the same namespace without the masks mounts a fresh /proc" \
		'(^|
)fresh /proc: ok' "$OUT"
else
	not_ok "unshare -rm works here (needed to mask /proc as container engines do)"
fi

done_testing
