#!/bin/bash
# run-vm.sh - boot an initramfs from build-initramfs.sh under QEMU and return the
# status its test script reported on the serial console.
#
# usage: run-vm.sh -i INITRAMFS [-k KERNEL] [-m MB] [-c CPUS] [-t SECONDS] [-l LOG] [-q]
#                  [-- GUEST-ARG...]
#   -i FILE     the initramfs (required)
#   -k FILE     the kernel (default: Debian's linux-image-cloud-amd64, fetched once by
#               fetch-deb.sh into the cache; NSRUN_VM_KERNEL also names one)
#   -m MB       guest memory (default 512)
#   -c N        guest CPUs (default 2)
#   -t SECONDS  host-side time limit for the whole boot (default 600)
#   -l FILE     keep the console log in FILE (default: a temporary file, removed on success)
#   -q          quiet: do not stream the console; it is printed if the run fails
#   GUEST-ARG   arguments of the guest's test script (one word each, no spaces)
#
# Acceleration, best first, each tried only when the one before could not start the
# guest (QEMU exited at once, with an error, before the guest booted):
#   1. KVM with CPU model host, where /dev/kvm is usable;
#   2. KVM with host,-arch-capabilities: a nested hypervisor that refuses the
#      IA32_ARCH_CAPABILITIES MSR makes QEMU abort at once on 1 ("failed to set MSR
#      0x10a", kvm_buf_set_msrs assertion);
#   3. TCG with CPU model ${NSRUN_VM_CPU:-max,-cx16} (hiding CMPXCHG16B keeps newer
#      Debian kernels from crashing under bookworm's QEMU 7.2 TCG).
# A guest that prints nothing for ${NSRUN_VM_STALL:-180} seconds (longer than any one
# guest test may take) has stalled in the emulator (seen under TCG on a loaded host:
# both vCPUs busy, no output, until the time limit): it is stopped and booted once
# more, and the line "run-vm: the guest stalled ..." says so.
# The line "run-vm: accelerator ACCEL, CPU MODEL" says which one ran, and why an
# earlier one was passed over.  NSRUN_VM_ACCEL=tcg starts with TCG; NSRUN_VM_QEMU and
# NSRUN_VM_KVM_DEV name another QEMU and KVM device (the tests' stand-ins).
# Exit status: the guest's NSRUN-VM-STATUS; 124 time limit hit; 125 the guest never
# reported a status (boot failure, kernel panic, /init died); 2 usage or set-up error.
# The last lines on stderr give the boot time (QEMU start to /init running) and the
# total time (QEMU start to power-off).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# the comment block at the top is the usage text
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit "${1:-2}"; }

initrd="" kernel=${NSRUN_VM_KERNEL:-} mem=512 cpus=2 tmo=600 log="" quiet=0
while getopts "i:k:m:c:t:l:qh" opt; do
	case $opt in
	i) initrd=$OPTARG ;;
	k) kernel=$OPTARG ;;
	m) mem=$OPTARG ;;
	c) cpus=$OPTARG ;;
	t) tmo=$OPTARG ;;
	l) log=$OPTARG ;;
	q) quiet=1 ;;
	h) usage 0 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ -n "$initrd" ] || { echo "run-vm: -i INITRAMFS is required" >&2; usage; }
[ -r "$initrd" ] || { echo "run-vm: $initrd: not readable" >&2; exit 2; }
append=""
for a in "$@"; do
	case $a in
	""|*[[:space:]]*|*\"*) echo "run-vm: guest argument '$a': must be one word" >&2; exit 2 ;;
	esac
	append="$append nsrunvm.arg=$a"
done

qemu=${NSRUN_VM_QEMU:-$(command -v qemu-system-x86_64 || true)}
[ -n "$qemu" ] || { echo "run-vm: qemu-system-x86_64 is missing (apt-get install --no-install-recommends qemu-system-x86)" >&2; exit 2; }
[ -n "$kernel" ] || kernel=$("$here/fetch-deb.sh" kernel) || exit 2
[ -r "$kernel" ] || { echo "run-vm: kernel $kernel: not readable" >&2; exit 2; }

# "ACCEL CPU-MODEL" pairs, best first (see the comment at the top)
kvm_dev=${NSRUN_VM_KVM_DEV:-/dev/kvm}
accels=()
if [ "${NSRUN_VM_ACCEL:-}" != tcg ] && [ -r "$kvm_dev" ] && [ -w "$kvm_dev" ]; then
	accels+=("kvm host" "kvm host,-arch-capabilities")
fi
accels+=("tcg ${NSRUN_VM_CPU:-max,-cx16}")

keep_log=1
if [ -z "$log" ]; then log=$(mktemp "${TMPDIR:-/tmp}/nsrun-vm-log.XXXXXX"); keep_log=0; fi

cmdline="console=ttyS0 quiet loglevel=4 panic=-1 cgroup_no_v1=all$append"

stall=${NSRUN_VM_STALL:-180}

# boot ACCEL CPU: one QEMU run; sets qrc (QEMU's status), boot_at (empty if /init
# never said NSRUN-VM-BOOTED) and stalled (1: no output for $stall s, QEMU stopped);
# the console goes to $log
boot() {
	local fifo qpid r
	: >"$log"
	boot_at=""
	stalled=0
	fifo=$(mktemp -u "${TMPDIR:-/tmp}/nsrun-vm-fifo.XXXXXX")
	mkfifo -m 600 "$fifo"
	set +e
	# -no-reboot turns a guest reboot or panic into QEMU exiting
	timeout -k 5 "$tmo" "$qemu" -accel "$1" -cpu "$2" -m "$mem" -smp "$cpus" \
		-nodefaults -no-user-config -display none -no-reboot \
		-serial stdio -monitor none \
		-kernel "$kernel" -initrd "$initrd" -append "$cmdline" </dev/null >"$fifo" 2>&1 &
	qpid=$!
	while :; do
		IFS= read -r -t "$stall" line
		r=$?
		if [ "$r" -gt 128 ]; then
			stalled=1
			kill -TERM "$qpid" 2>/dev/null
			cat >/dev/null # the rest, until QEMU has gone
			break
		fi
		[ "$r" = 0 ] || [ -n "$line" ] || break
		line=${line%$'\r'}
		printf '%s\n' "$line" >>"$log"
		[ "$quiet" = 1 ] || printf '%s\n' "$line"
		case $line in *NSRUN-VM-BOOTED*) [ -n "$boot_at" ] || boot_at=$EPOCHREALTIME ;; esac
		[ "$r" = 0 ] || break
	done <"$fifo"
	wait "$qpid"
	qrc=$?
	rm -f "$fifo"
	set -e
}

passed_over=""
for ((i = 0; i < ${#accels[@]}; i++)); do
	read -r acc cpu <<<"${accels[i]}"
	echo "run-vm: kernel $(basename "$kernel"), accelerator $acc, CPU $cpu, ${mem} MiB, $cpus CPUs, limit ${tmo}s${passed_over:+ ($passed_over)}" >&2
	t0=$EPOCHREALTIME
	boot "$acc" "$cpu"
	if [ "$stalled" = 1 ]; then
		echo "run-vm: the guest stalled (no console output for ${stall}s, QEMU stopped): booting it once more" >&2
		t0=$EPOCHREALTIME
		boot "$acc" "$cpu"
		[ "$stalled" = 0 ] || echo "run-vm: the guest stalled again (no console output for ${stall}s)" >&2
	fi
	# QEMU could not start the guest with this accelerator: it failed, not by the time
	# limit, before /init ran; a guest that booted and failed is the result, not this
	if [ "$qrc" != 0 ] && [ "$qrc" != 124 ] && [ "$qrc" != 137 ] && [ -z "$boot_at" ] && \
		[ $((i + 1)) -lt ${#accels[@]} ]; then
		why=$(grep -v '^[[:space:]]*$' "$log" | tail -n 1 | cut -c 1-200)
		passed_over="$acc -cpu $cpu could not start the guest: QEMU exit $qrc${why:+: $why}"
		echo "run-vm: $passed_over; trying the next accelerator" >&2
		continue
	fi
	break
done
echo "run-vm: ran with accelerator $acc, CPU $cpu" | tee -a "$log" >&2
t1=$EPOCHREALTIME

secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
total=$(secs "$t0" "$t1")
boot="-"
[ -z "$boot_at" ] || boot=$(secs "$t0" "$boot_at")

status=$(sed -n 's/.*NSRUN-VM-STATUS=\([0-9][0-9]*\).*/\1/p' "$log" | tail -1)
rc=$status
if [ "$stalled" = 1 ]; then
	echo "run-vm: the guest stalled twice" >&2
	rc=124
elif [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
	echo "run-vm: TIME LIMIT of ${tmo}s hit" >&2
	rc=124
elif [ -z "$status" ]; then
	echo "run-vm: the guest reported no status (qemu exit status $qrc)" >&2
	rc=125
fi
if [ "$rc" != 0 ] && [ "$quiet" = 1 ]; then
	echo "run-vm: ---- console log ($log) ----" >&2
	cat "$log" >&2
	echo "run-vm: ---- end of console log ----" >&2
fi
if grep -qE 'Kernel panic|Oops|BUG:|general protection fault|double fault' "$log"; then
	echo "run-vm: WARNING: the guest kernel crashed or oopsed (see the log): suspect the emulator before the code under test" >&2
fi
echo "run-vm: guest status ${status:-none}; boot ${boot}s, total ${total}s (QEMU start to power-off)" >&2
if [ "$keep_log" = 0 ]; then
	if [ "$rc" = 0 ]; then rm -f "$log"; else echo "run-vm: console log kept in $log" >&2; fi
fi
exit "$rc"
