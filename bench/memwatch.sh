#!/bin/bash
# bench/memwatch.sh - the memory limit without a cgroup (runtime/memwatch.h): the CPU
# the supervisor spends measuring, and how far past the limit a fast allocator gets
# before the container is ended.  Run it as the user whose runs it measures (rootless:
# no cgroup, so --memory is the supervisor's); it prints a Markdown section for
# bench/RESULTS.md.
#   NSRUN=build/nsrun PROBE=build/nsrun-probe NSRUN_IMAGES=... bench/memwatch.sh [RUNS]
set -eu
NSRUN=${NSRUN:-build/nsrun}
PROBE=${PROBE:-build/nsrun-probe}
RUNS=${1:-10}
HOLD=10
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp "$PROBE" "$dir/probe"
chmod -R a+rX "$dir"
tck=$(getconf CLK_TCK)

run() { "$NSRUN" --image python -v "$dir/probe:/probe:ro" --timeout 60 "$@"; }

# cost LABEL NSRUN-ARGS...: the supervisor's own CPU (utime+stime of the nsrun process,
# not of its children, /proc/PID/stat) over a run that holds memory for HOLD s, in % of
# one CPU, with --memory 0 (no measure) beside it; and what --debug says of the samples
# (how many, how many read page tables, the time spent in them)
cost() {
	local label=$1 pid ut st out=() dbg
	shift
	for mem in 0 512m; do
		# nsrun itself in the background (not a function: that would be a subshell)
		"$NSRUN" --image python -v "$dir/probe:/probe:ro" --timeout 60 --debug --memory "$mem" "$@" >/dev/null 2>"$dir/err" &
		pid=$!
		sleep $((HOLD - 1))
		read -r ut st < <(awk '{ print $14, $15 }' "/proc/$pid/stat")
		wait "$pid" || true
		out+=("$(awk -v u="$ut" -v s="$st" -v t="$tck" -v h=$((HOLD - 1)) 'BEGIN { printf "%.2f", (u + s) / t / h * 100 }')")
	done
	dbg=$(sed -n 's/^nsrun: debug: --memory: \([0-9]*\) samples (\([0-9]*\) of them by page tables), \([0-9]*\) us in all.*/\1 \2 \3/p' "$dir/err")
	read -r n precise us <<<"${dbg:-0 0 0}"
	echo "| $label | ${out[0]} % | ${out[1]} % | $n ($precise) | $(awk -v n="$n" -v us="$us" 'BEGIN { printf "%.0f", n ? us / n : 0 }') us |"
}

# overshoot KIND MIB: --memory 256m, RUNS runs; the peak the supervisor saw past the limit
overshoot() {
	local kind=$1 mib=$2 peaks=() i
	for ((i = 0; i < RUNS; i++)); do
		peaks+=("$(run --json - --memory 256m -- /probe memhog-via "$kind" "$mib" 2>/dev/null |
			python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["status"], d["memory_peak_bytes"] or 0)')")
	done
	printf '%s\n' "${peaks[@]}" | python3 -c '
import statistics, sys
rows = [l.split() for l in sys.stdin if l.strip()]
over = [(int(p) - (256 << 20)) / (1 << 20) for s, p in rows]
killed = sum(s == "oom_killed" for s, p in rows)
print(f"| {sys.argv[1]} | {killed}/{len(rows)} | {statistics.median(over):.1f} MiB | {max(over):.1f} MiB |")' "$kind $mib MiB"
}

how=$(run --json - -- true 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["limits"]["memory_bytes"]["enforced"])')
echo "## Memory limit without a cgroup (bench/memwatch.sh)"
echo
echo "Recorded by bench/memwatch.sh on $(date -u '+%Y-%m-%d %H:%M UTC'), as $(id -un) (--memory enforced by: $how),"
echo "$(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start, nsrun at commit ${NSRUN_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo '?')}."
echo
echo "The supervisor's own CPU while the container holds memory for ${HOLD} s (nsrun's utime+stime, % of one CPU, in"
echo "clock ticks of $((1000 / tck)) ms: 0.00 is less than one tick), and its samples with their wall time each:"
echo
echo "| container | --memory 0 (no measure) | --memory 512m | samples (by page tables) | per sample |"
echo "|---|---:|---:|---:|---:|"
cost "1 process, idle" -- /probe sleep "$HOLD"
cost "1 process holding 400 MiB" -- /probe memhog-via malloc 400 "$HOLD"
cost "1 process holding 480 MiB (near the limit: sampled every ~8 ms)" -- /probe memhog-via malloc 480 "$HOLD"
cost "64 processes of 4 MiB" -- /probe memhog-via procs:64 4 "$HOLD"
cost "32 children sharing 100 MiB (resident sum past the limit: page tables read)" -- /probe memhog-via forked:32 100 "$HOLD"
echo
echo "Reaction: 2 GiB used as fast as the probe can under --memory 256m, $RUNS runs; how far past the limit the last sample before the kill was:"
echo
echo "| how | ended as oom_killed | median past the limit | largest |"
echo "|---|---:|---:|---:|"
overshoot malloc 2048
overshoot memfd 2048
overshoot shared 2048
