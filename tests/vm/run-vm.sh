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
# Acceleration: KVM when /dev/kvm is usable, else TCG with CPU model
# ${NSRUN_VM_CPU:-max,-cx16} (hiding CMPXCHG16B keeps newer Debian kernels from
# crashing under bookworm's QEMU 7.2 TCG).
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

qemu=$(command -v qemu-system-x86_64 || true)
[ -n "$qemu" ] || { echo "run-vm: qemu-system-x86_64 is missing (apt-get install --no-install-recommends qemu-system-x86)" >&2; exit 2; }
[ -n "$kernel" ] || kernel=$("$here/fetch-deb.sh" kernel) || exit 2
[ -r "$kernel" ] || { echo "run-vm: kernel $kernel: not readable" >&2; exit 2; }

accel=(-accel tcg -cpu "${NSRUN_VM_CPU:-max,-cx16}")
if [ -r /dev/kvm ] && [ -w /dev/kvm ]; then accel=(-accel kvm -cpu host); fi

keep_log=1
if [ -z "$log" ]; then log=$(mktemp "${TMPDIR:-/tmp}/nsrun-vm-log.XXXXXX"); keep_log=0; fi
: >"$log"

cmdline="console=ttyS0 quiet loglevel=4 panic=-1 cgroup_no_v1=all$append"
echo "run-vm: kernel $(basename "$kernel"), ${accel[1]}, ${mem} MiB, $cpus CPUs, limit ${tmo}s" >&2

t0=$EPOCHREALTIME
boot_at=""
set +e
# -no-reboot turns a guest reboot or panic into QEMU exiting
timeout -k 5 "$tmo" "$qemu" "${accel[@]}" -m "$mem" -smp "$cpus" \
	-nodefaults -no-user-config -display none -no-reboot \
	-serial stdio -monitor none \
	-kernel "$kernel" -initrd "$initrd" -append "$cmdline" </dev/null 2>&1 |
	{
		while IFS= read -r line; do
			line=${line%$'\r'}
			printf '%s\n' "$line" >>"$log"
			[ "$quiet" = 1 ] || printf '%s\n' "$line"
			case $line in *NSRUN-VM-BOOTED*) [ -n "$boot_at" ] || { boot_at=$EPOCHREALTIME; echo "$boot_at" >"$log.booted"; } ;; esac
		done
	}
qrc=${PIPESTATUS[0]}
set -e
t1=$EPOCHREALTIME
[ ! -f "$log.booted" ] || { boot_at=$(cat "$log.booted"); rm -f "$log.booted"; }

secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
total=$(secs "$t0" "$t1")
boot="-"
[ -z "$boot_at" ] || boot=$(secs "$t0" "$boot_at")

status=$(sed -n 's/.*NSRUN-VM-STATUS=\([0-9][0-9]*\).*/\1/p' "$log" | tail -1)
rc=$status
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
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
