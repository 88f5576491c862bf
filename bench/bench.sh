#!/bin/bash
# bench/bench.sh - nsrun's start-up beside the kernel floor, bubblewrap, crun and
# podman, all on the same image rootfs, as the unprivileged user (`make bench`).
#
# One hyperfine invocation per payload (/bin/true, python3 -c pass,
# examples/hello.py) holds every tool, so their ratios share the machine's load.
# Then: nsrun's per-phase timing against its measured wall time, throughput of
# back-to-back and parallel runs, peak RSS of the supervisor and of pid 1, a
# syscall summary.  bench/report.py turns it all into bench/RESULTS.md.
#
# Environment: BENCH_RUNS=N runs per command (default 60), BENCH_QUICK=1 (10
# runs, fewer throughput runs), TEST_IMAGES (the image store, default
# /var/tmp/nsrun-check/images), TEST_USER (default nsrun-test, used when run as
# root), BUILD (default build), BENCH_KEEP=1 keeps the staging directory.
#
# Run as root, the measurements run in a private mount namespace of their own
# (unshare -m): on a hybrid cgroup host crun (and podman, which runs crun)
# refuses to start while the cgroup2 hierarchy has a controller, so there
# /dev/null is bound over /sys/fs/cgroup/unified/cgroup.controllers.  The host's
# mounts are never changed; nsrun does not read that file unless its cgroup is
# delegated, which it is not here.  A peer that still cannot run is reported as
# such, with its error, instead of failing the bench.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
IMAGES=${TEST_IMAGES:-/var/tmp/nsrun-check/images}
BENCH_USER=${TEST_USER:-nsrun-test}
QUICK=${BENCH_QUICK:-0}
if [ "$QUICK" = 1 ]; then RUNS=${BENCH_RUNS:-10}; else RUNS=${BENCH_RUNS:-60}; fi
if [ "$QUICK" = 1 ]; then TPUT_RUNS=60; else TPUT_RUNS=300; fi
WARMUP=3
IMAGE=python
ROOTFS=$IMAGES/$IMAGE/rootfs
PODMAN_IMAGE=localhost/nsrun-bench-$IMAGE:latest
PRIO=   # nice value for as_user (root only), empty: unchanged

log() { printf '== %s\n' "$*" >&2; }
die() { printf 'bench: %s\n' "$*" >&2; exit 1; }

# ---- the measurements, in the namespace prepared below: bench.sh --measure STAGE ----

# runs "$@" as the bench user with a clean environment
as_user() {
	local envs=(PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 HOME="$STAGE/home"
		XDG_RUNTIME_DIR="$STAGE/xdg" NSRUN_IMAGES="$IMAGES"
		NSRUN_SECCOMP_PROFILES="$STAGE/seccomp-profiles")
	if [ "$(id -u)" = 0 ]; then
		(cd "$STAGE" && ${PRIO:+nice -n "$PRIO"} runuser -u "$BENCH_USER" -- env -i "${envs[@]}" "$@")
	else
		(cd "$STAGE" && env -i "${envs[@]}" "$@")
	fi
}

# the first line of a failed probe's error output, for the table
first_error() { grep -v '^time=.*level=warning' "$1" | grep -m1 . || echo "exit status $2"; }

# probe NAME CMD...: runs CMD once as the user; records ok or why not in peers.tsv
probe() {
	local name=$1 rc=0
	shift
	as_user "$@" >/dev/null 2>"$STAGE/probe.err" || rc=$?
	if [ "$rc" = 0 ]; then
		printf '%s\tok\t\n' "$name" >>"$STAGE/peers.tsv"
		return 0
	fi
	printf '%s\tfailed\t%s\n' "$name" "$(first_error "$STAGE/probe.err" "$rc")" >>"$STAGE/peers.tsv"
	log "$name cannot run here: $(first_error "$STAGE/probe.err" "$rc")"
	return 1
}

peer_ok() { grep -q "^$1	ok" "$STAGE/peers.tsv"; }

# group NAME: one hyperfine over the commands in CMDS/NAMES
group() {
	local name=$1 args=()
	for i in "${!CMDS[@]}"; do
		args+=(-n "${NAMES[$i]}" "${CMDS[$i]}")
	done
	log "hyperfine: $name (${#CMDS[@]} commands, $RUNS runs each)"
	if ! as_user hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --style basic \
		--export-json "$STAGE/group-$name.json" "${args[@]}" >&2; then
		# a command failed in the timed runs (a peer under load): run the group again
		# counting failures, and say so in the results rather than lose the group
		log "hyperfine: a command of group $name failed; again with --ignore-failure"
		echo "$name: a command failed during the timed runs; the group was run again with hyperfine --ignore-failure" \
			>>"$STAGE/failures.txt"
		as_user hyperfine -N -i --warmup "$WARMUP" --runs "$RUNS" --style basic \
			--export-json "$STAGE/group-$name.json" "${args[@]}" >&2
	fi
}

# podman: the same rootfs imported into a store of the bench's own (overlay, so
# a run does not copy the rootfs), removed at the end.  In the measurement's
# namespace: podman's pause process keeps the mount namespace it started in.
podman_import() {
	echo "podman is not installed" >"$STAGE/podman.why"
	command -v podman >/dev/null || return 0
	log "podman import of the rootfs"
	# as a user, files only root may read (etc/shadow) stay out: no run here reads them
	tar --ignore-failed-read -C "$ROOTFS" -cf "$STAGE/rootfs.tar" . 2>"$STAGE/tar.err" ||
		die "tar of $ROOTFS: $(head -1 "$STAGE/tar.err")"
	chmod a+r "$STAGE/rootfs.tar"
	if as_user podman --root "$STAGE/podman/root" --runroot "$STAGE/podman/runroot" --storage-driver overlay \
		import -q "$STAGE/rootfs.tar" "$PODMAN_IMAGE" >/dev/null 2>"$STAGE/podman.err"; then
		touch "$STAGE/podman.ok"
	else
		first_error "$STAGE/podman.err" 1 >"$STAGE/podman.why"
	fi
	rm -f "$STAGE/rootfs.tar"
}

measure() {
	local nsrun=$STAGE/nsrun bwrap_opts crun podman py=/usr/bin/python3
	local ldso=$ROOTFS/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
	local libs=$ROOTFS/usr/lib/x86_64-linux-gnu
	bwrap_opts="--unshare-all --die-with-parent --new-session --ro-bind $ROOTFS / --proc /proc --dev /dev"
	bwrap_opts+=" --tmpfs /tmp --uid 65534 --gid 65534 --cap-drop ALL"
	crun="crun --root $STAGE/xdg/crun"
	podman="podman --root $STAGE/podman/root --runroot $STAGE/podman/runroot --storage-driver overlay"
	podman+=" --cgroup-manager cgroupfs --events-backend none"
	: >"$STAGE/peers.tsv"
	podman_import

	log "probes"
	probe nsrun "$nsrun" --image "$IMAGE" -- /bin/true || die "nsrun itself cannot run (see above)"
	probe floor "$STAGE/floor-run" "$ROOTFS" /bin/true || true
	# shellcheck disable=SC2086  # word splitting of the option strings is meant
	probe bwrap bwrap $bwrap_opts /bin/true || true
	if command -v crun >/dev/null; then
		# shellcheck disable=SC2086
		probe crun $crun run --bundle "$STAGE/crun-true" nsrun-bench-probe || true
	else
		printf 'crun\tfailed\tcrun is not installed\n' >>"$STAGE/peers.tsv"
	fi
	if [ -f "$STAGE/podman.ok" ]; then
		# shellcheck disable=SC2086
		probe podman $podman run --rm --network none "$PODMAN_IMAGE" /bin/true || true
	else
		printf 'podman\tfailed\t%s\n' "$(cat "$STAGE/podman.why")" >>"$STAGE/peers.tsv"
	fi

	# payload: NAME, then the argv inside, then the bare host argv
	local payloads=(true python hello)
	for p in "${payloads[@]}"; do
		local inner bare_host bare_image nsrun_cmd bw_extra="" pm_extra=""
		case $p in
		true)
			inner="/bin/true"; bare_host="/bin/true"
			bare_image="$ldso --library-path $libs $ROOTFS/usr/bin/true"
			nsrun_cmd="$nsrun --image $IMAGE -- /bin/true" ;;
		python)
			inner="python3 -c pass"; bare_host="$py -c pass"
			bare_image="$ldso --library-path $libs $ROOTFS/usr/bin/python3 -c pass"
			nsrun_cmd="$nsrun --image $IMAGE -- python3 -c pass" ;;
		hello)
			inner="python3 /tmp/hello.py"; bare_host="$py $STAGE/hello.py"
			bare_image="$ldso --library-path $libs $ROOTFS/usr/bin/python3 $STAGE/hello.py"
			nsrun_cmd="$nsrun --image $IMAGE $STAGE/hello.py"
			bw_extra="--ro-bind $STAGE/hello.py /tmp/hello.py"
			pm_extra="-v $STAGE/hello.py:/tmp/hello.py:ro" ;;
		esac
		CMDS=("$bare_host" "$bare_image"); NAMES=("bare (host)" "bare (image rootfs)")
		if [ "$p" = true ]; then
			CMDS+=("$STAGE/floor-clone"); NAMES+=("floor: clone only")
		fi
		# (the floor binds nothing of the host into the rootfs: no hello.py)
		if peer_ok floor && [ "$p" != hello ]; then
			CMDS+=("$STAGE/floor-run $ROOTFS $inner")
			NAMES+=("floor: clone+maps+mounts+pivot+exec")
		fi
		CMDS+=("$nsrun_cmd"); NAMES+=("nsrun")
		if [ "$p" = true ]; then
			CMDS+=("$nsrun --security-opt seccomp=unconfined --image $IMAGE -- /bin/true")
			NAMES+=("nsrun (seccomp=unconfined)")
			# no choice of tier at all: a default run must cost the same (issue 16)
			CMDS+=("$nsrun --isolation full --image $IMAGE -- /bin/true")
			NAMES+=("nsrun (--isolation full)")
		fi
		if peer_ok bwrap; then
			CMDS+=("bwrap $bwrap_opts $bw_extra $inner"); NAMES+=("bwrap")
		fi
		if peer_ok crun; then
			CMDS+=("$crun run --bundle $STAGE/crun-$p nsrun-bench-$p"); NAMES+=("crun")
		fi
		if peer_ok podman; then
			CMDS+=("$podman run --rm --network none $pm_extra $PODMAN_IMAGE $inner"); NAMES+=("podman")
		fi
		group "$p"
	done

	# as root, at a higher priority (nice -10): this check is about what nsrun's clock
	# covers, so the machine's other jobs should delay the runs and the harness less
	log "per-phase timing against the wall time of the same runs"
	if [ "$(id -u)" = 0 ]; then PRIO=-10; fi
	as_user "$py" "$STAGE/measure.py" phases --runs "$RUNS" --out "$STAGE/phases.json" -- \
		"$nsrun" --debug-timing --image "$IMAGE" -- /bin/true || log "phases: FAILED (see above)"
	PRIO=
	log "throughput: $TPUT_RUNS runs of /bin/true, back to back and at parallelism $((2 * $(nproc)))"
	as_user "$py" "$STAGE/measure.py" throughput --runs "$TPUT_RUNS" --parallel "$((2 * $(nproc)))" \
		--out "$STAGE/throughput.json" -- "$nsrun" --image "$IMAGE" -- /bin/true || log "throughput: FAILED (see above)"
	log "memory: peak RSS of the supervisor and of pid 1"
	as_user "$py" "$STAGE/measure.py" memory --out "$STAGE/memory.json" -- \
		"$nsrun" --image "$IMAGE" -- sleep 1 || log "memory: FAILED (see above)"
	if command -v strace >/dev/null; then
		log "strace -f -c of one run"
		as_user strace -f -c -o "$STAGE/strace.txt" "$nsrun" --image "$IMAGE" -- /bin/true ||
			echo "strace failed" >"$STAGE/strace.txt"
	fi
}

if [ "${1:-}" = --measure ]; then
	STAGE=$2
	# (cgroupfs files report size 0: test the content)
	if [ "$(id -u)" = 0 ] && [ -n "$(cat /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null)" ]; then
		# only in this private mount namespace (see the top): crun's hybrid check passes
		mount --bind /dev/null /sys/fs/cgroup/unified/cgroup.controllers
		echo "bound /dev/null over /sys/fs/cgroup/unified/cgroup.controllers (controllers: $(cat "$STAGE/controllers")) in the bench's private mount namespace" >"$STAGE/how.txt"
	fi
	cat /proc/loadavg >"$STAGE/load-start"
	measure
	exit 0
fi

# ---- preparation, on the host ----

[ -x "$ROOT/$BUILD/nsrun" ] || die "$BUILD/nsrun is missing: run make first"
[ -d "$ROOTFS" ] || die "no image rootfs at $ROOTFS: run make test-image"
command -v hyperfine >/dev/null || die "hyperfine is missing: make deps"
if [ "$(id -u)" = 0 ]; then
	id -u "$BENCH_USER" >/dev/null 2>&1 || die "user $BENCH_USER is missing: make test-user"
else
	BENCH_USER=$(id -un)
fi

STAGE=$(mktemp -d /tmp/nsrun-bench.XXXXXX)
cleanup() {
	local pidfile
	if [ "$(id -u)" != 0 ] && [ -d "$STAGE/podman" ] && [ "${BENCH_KEEP:-0}" != 1 ]; then
		# podman's layers belong to subordinate ids: remove them from its user namespace
		# (with the bench's XDG_RUNTIME_DIR, so its pause process is the one ended below)
		XDG_RUNTIME_DIR="$STAGE/xdg" podman --root "$STAGE/podman/root" --runroot "$STAGE/podman/runroot" \
			unshare rm -rf "$STAGE/podman" 2>/dev/null || true
	fi
	# podman's pause process for our XDG_RUNTIME_DIR is ours: end it by its pid
	for pidfile in "$STAGE"/xdg/libpod/tmp/pause.pid "$STAGE"/podman/runroot/libpod/tmp/pause.pid; do
		if [ -f "$pidfile" ]; then kill "$(cat "$pidfile")" 2>/dev/null || true; fi
	done
	if [ "${BENCH_KEEP:-0}" = 1 ]; then
		log "kept $STAGE"
	else
		rm -rf "$STAGE" 2>/dev/null || true
	fi
}
trap cleanup EXIT
chmod 755 "$STAGE"
mkdir -p "$STAGE/home" "$STAGE/xdg" "$STAGE/podman"
chmod 700 "$STAGE/xdg"
log "staging in $STAGE"
cp "$ROOT/$BUILD/nsrun" "$STAGE/"
cp -r "$ROOT/seccomp-profiles" "$STAGE/"
cp "$ROOT/examples/hello.py" "$ROOT/bench/measure.py" "$STAGE/"
for f in floor-clone floor-run; do
	${CC:-cc} -std=gnu11 -O2 -Wall -Wextra -static -o "$STAGE/$f" "$ROOT/bench/$f.c"
done
cat /sys/fs/cgroup/unified/cgroup.controllers >"$STAGE/controllers" 2>/dev/null || : >"$STAGE/controllers"
echo "run directly (no mount namespace of the bench's own)" >"$STAGE/how.txt"

# crun bundles: the rootless spec crun writes, made equivalent to nsrun's
# isolation (user, mount, pid, net, ipc, uts, cgroup namespaces; read-only root;
# /proc, a tmpfs /dev, a tmpfs /tmp; no capabilities; no_new_privs; no /sys),
# without seccomp, like the bwrap line
if command -v crun >/dev/null && command -v jq >/dev/null; then
	for p in true python hello; do
		b=$STAGE/crun-$p
		mkdir -p "$b"
		(cd "$b" && crun spec --rootless)
		case $p in
		true) argv='["/bin/true"]' ;;
		python) argv='["python3","-c","pass"]' ;;
		hello) argv='["python3","/tmp/hello.py"]' ;;
		esac
		jq --arg root "$ROOTFS" --argjson args "$argv" --arg hello "$STAGE/hello.py" '
			.root = {path: $root, readonly: true}
			| .process.terminal = false | .process.args = $args | .process.cwd = "/"
			| .process.user = {uid: 0, gid: 0}
			| .process.capabilities = {bounding: [], effective: [], inheritable: [], permitted: [], ambient: []}
			| .process.noNewPrivileges = true
			| .mounts |= map(select(.destination | startswith("/sys") | not))
			| .mounts += [{destination: "/tmp", type: "tmpfs", source: "tmpfs", options: ["nosuid", "nodev", "mode=1777", "size=65536k"]}]
			| if ($args[1] == "/tmp/hello.py") then .mounts += [{destination: "/tmp/hello.py", type: "bind", source: $hello, options: ["rbind", "ro"]}] else . end
			| .linux.namespaces += [{type: "cgroup"}]
			| del(.linux.resources)' "$b/config.json" >"$b/config.json.new"
		mv "$b/config.json.new" "$b/config.json"
	done
fi

chmod -R a+rX "$STAGE"
if [ "$(id -u)" = 0 ]; then
	# the user writes the results into the staging directory
	chown "$BENCH_USER" "$STAGE"
	chown -R "$BENCH_USER" "$STAGE/home" "$STAGE/xdg" "$STAGE/podman"
fi

if [ "$(id -u)" = 0 ]; then
	unshare -m --propagation private "$0" --measure "$STAGE"
else
	"$0" --measure "$STAGE"
fi

log "report"
/usr/bin/python3 "$ROOT/bench/report.py" --stage "$STAGE" --runs "$RUNS" --results "$ROOT/bench/RESULTS.md" \
	--readme "$ROOT/README.md"
