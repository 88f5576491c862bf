#!/bin/bash
# tests/oci-validation.sh - opencontainers/runtime-tools' validation suite against nsrun.
#
#   tests/oci-validation.sh [--user USER] [--timeout SECONDS] [PROGRAM...]
#
# Runs each validation program (`make runtime-tools` builds them into
# build/runtime-tools/validation/NAME.t; default: all of them) with
# RUNTIME=$NSRUN (default build/nsrun), in a directory holding runtimetest and the
# suite's rootfs tarball, as the programs expect.  Prints one line a program,
#   NAME  PASSED/TESTS  (S skipped)  [exit status, timeout]  (no test line: passed|failed)
# (a skipped test is one of the passed, as TAP counts it: "ok N # SKIP"; a program
# that prints no test line passed when it exited 0 with no "error" diagnostic)
# and the total.  --user USER runs them as USER (rootless) from a staged copy that
# USER can read.  Each program's TAP output is kept in $OCI_VALIDATION_LOGS (default
# a temp dir, printed at the end).  Exit status: 0 when every program was run.
# docs/oci-runtime.md has the table of what passes and why the rest does not apply.
set -u

here=$(cd "$(dirname "$0")/.." && pwd)
NSRUN=${NSRUN:-$here/build/nsrun}
TOOLS=${RUNTIME_TOOLS:-$here/build/runtime-tools}
user=""
timeout=120
while [ $# -gt 0 ]; do
	case $1 in
	--user) user=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	-h|--help) sed -n '2,16p' "$0"; exit 0 ;;
	--) shift; break ;;
	-*) echo "oci-validation.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ -x "$TOOLS/runtimetest" ] || { echo "oci-validation.sh: no $TOOLS/runtimetest (run make runtime-tools)" >&2; exit 2; }
[ -x "$NSRUN" ] || { echo "oci-validation.sh: no $NSRUN (run make)" >&2; exit 2; }

if [ -n "$user" ]; then
	# the user's own copy: it cannot read a root's worktree, and the programs write
	# their bundles under TMPDIR
	stage=$(mktemp -d /tmp/nsrun-ocival.XXXXXX)
	mkdir -p "$stage/build" "$stage/tests"
	cp "$NSRUN" "$stage/build/nsrun" && cp -r "$TOOLS" "$stage/tools" && cp "$0" "$stage/tests/oci-validation.sh"
	chmod -R a+rX "$stage"; chmod 1777 "$stage"
	logs=${OCI_VALIDATION_LOGS:-$stage/logs}
	mkdir -p "$logs" && chmod 1777 "$logs"
	uhome=$(getent passwd "$user" | cut -d: -f6)
	# the programs cannot pass --root: nsrun's rootless default is under XDG_RUNTIME_DIR
	install -d -m 700 -o "$user" "$stage/run"
	runuser -u "$user" -- env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME="$uhome" \
		LANG=C.UTF-8 USER="$user" XDG_RUNTIME_DIR="$stage/run" XDG_CACHE_HOME="${OCI_VALIDATION_CACHE:-/tmp/cache-ocival-$user}" \
		NSRUN="$stage/build/nsrun" RUNTIME_TOOLS="$stage/tools" OCI_VALIDATION_LOGS="$logs" \
		bash "$stage/tests/oci-validation.sh" --timeout "$timeout" "$@"
	rc=$?
	if [ -n "${OCI_VALIDATION_LOGS:-}" ]; then rm -rf "$stage"
	else echo "logs: $logs (the staged copy $stage is kept for them)"; fi
	exit $rc
fi

if [ $# -eq 0 ]; then
	for f in "$TOOLS"/validation/*.t; do set -- "$@" "$(basename "$f" .t)"; done
fi
logs=${OCI_VALIDATION_LOGS:-$(mktemp -d /tmp/nsrun-ocival-logs.XXXXXX)}
work=$(mktemp -d /tmp/nsrun-ocival-work.XXXXXX)
# a program that fails or runs out of time may leave its container (created, or
# stopped and not deleted): remove those whose bundle is ours, and no other
cleanup_containers() {
	"$NSRUN" list --format json 2>/dev/null | jq -r --arg w "$work/" '.[] | select(.bundle | startswith($w)) | .id' |
		while read -r id; do "$NSRUN" delete --force "$id" >/dev/null 2>&1; done
}
trap 'cleanup_containers; rm -rf "$work"' EXIT
cp "$TOOLS/runtimetest" "$TOOLS"/rootfs-*.tar.gz "$work/"
cd "$work" || exit 2
# the programs make their bundles under TMPDIR and the containers' state under
# nsrun's default --root
export TMPDIR=$work RUNTIME=$NSRUN

total=0; passed=0; skipped=0
printf '%-36s %s\n' "program ($(id -un))" "passed/tests"
for name in "$@"; do
	prog=$TOOLS/validation/$name.t
	[ -x "$prog" ] || { echo "oci-validation.sh: no program $name" >&2; continue; }
	timeout -k 10 "$timeout" "$prog" > "$logs/$name.tap" 2>&1
	rc=$?
	cleanup_containers
	n=$(grep -cE '^(not )?ok ' "$logs/$name.tap")
	p=$(grep -cE '^ok ' "$logs/$name.tap")
	s=$(grep -ciE '^ok [0-9]+ # skip' "$logs/$name.tap")
	note=""
	[ "$s" = 0 ] || note="  ($s skipped)"
	[ $rc = 0 ] || note="$note  [exit $rc$([ $rc = 124 ] && echo ': timeout')]"
	# the hook programs and the *_fail ones print no test line: they pass when they
	# exit 0 with no diagnostic
	if [ "$n" = 0 ]; then
		if [ $rc = 0 ] && ! grep -q '"error"' "$logs/$name.tap"; then note="$note  (no test line: passed)"
		else note="$note  (no test line: failed)"; fi
	fi
	printf '%-36s %s/%s%s\n' "$name" "$p" "$n" "$note"
	total=$((total + n)); passed=$((passed + p)); skipped=$((skipped + s))
done
printf '%-36s %s/%s  (%s skipped)\n' "total" "$passed" "$total" "$skipped"
[ -n "${OCI_VALIDATION_LOGS:-}" ] || echo "logs: $logs"
