#!/bin/bash
# tests/vm/run-vm.sh picks the accelerator the host really offers: KVM with -cpu host,
# then KVM without IA32_ARCH_CAPABILITIES (nested virtualisation that refuses that MSR
# makes QEMU abort at once), then TCG; and says which one ran.  The host's
# virtualisation is built here, not assumed: a QEMU stand-in refuses the accelerator and
# CPU models a test names, with the error the real one prints, and a regular file stands
# in for /dev/kvm.  (The real QEMU boots the real guest in make check-vm.)
. "$(dirname "$0")/../lib.sh"

RUNVM=$TESTS_DIR/vm/run-vm.sh
F=$TESTTMP/vm
mkdir -p "$F"
: >"$F/kernel"; : >"$F/initrd"; : >"$F/kvm"
cat >"$F/qemu" <<'QEMU'
#!/bin/bash
# stand-in for qemu-system-x86_64: logs "-accel A -cpu C", then refuses the pairs in
# $FAKE_QEMU_REFUSE ("A C" lines) as QEMU does, or boots a guest that reports
# $FAKE_QEMU_STATUS
while [ $# -gt 0 ]; do
	case $1 in -accel) a=$2; shift ;; -cpu) c=$2; shift ;; esac
	shift
done
echo "$a $c" >>"$FAKE_QEMU_LOG"
if grep -qxF "$a $c" <<<"${FAKE_QEMU_REFUSE:-}"; then
	echo "qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69"
	echo "qemu-system-x86_64: ../target/i386/kvm/kvm.c:3197: kvm_buf_set_msrs: Assertion \`ret == cpu->kvm_msr_buf->nmsrs' failed."
	exit 134
fi
echo "NSRUN-VM-BOOTED"
echo "1 passed, 0 failed"
echo "NSRUN-VM-STATUS=${FAKE_QEMU_STATUS:-0}"
QEMU
chmod +x "$F/qemu"

# vm KVM-DEVICE REFUSED-PAIRS [GUEST-STATUS]: run-vm.sh against the stand-ins; RC, ERR
# and TRIED (the pairs QEMU was started with, one per line)
vm() {
	: >"$F/tried"
	run_cmd env NSRUN_VM_QEMU="$F/qemu" NSRUN_VM_KVM_DEV="$1" FAKE_QEMU_REFUSE="$2" \
		FAKE_QEMU_STATUS="${3:-0}" FAKE_QEMU_LOG="$F/tried" NSRUN_VM_ACCEL= NSRUN_VM_CPU= \
		"$RUNVM" -q -k "$F/kernel" -i "$F/initrd" -t 30
	TRIED=$(cat "$F/tried")
}

vm "$F/kvm" ""
assert_eq "KVM that takes -cpu host: one start, exit 0" "0 kvm host" "$RC $TRIED"
assert_match "  ... and says so" "run-vm: ran with accelerator kvm, CPU host" "$ERR"

vm "$F/kvm" "kvm host"
assert_eq "KVM that refuses -cpu host: the next start is host,-arch-capabilities, exit 0" \
	"0 kvm host|kvm host,-arch-capabilities" "$RC $(paste -sd'|' <<<"$TRIED")"
assert_match "  ... the reason it passed over -cpu host is QEMU's own" \
	"kvm -cpu host could not start the guest: QEMU exit 134: .*kvm_buf_set_msrs" "$ERR"
assert_match "  ... and which one ran" "run-vm: ran with accelerator kvm, CPU host,-arch-capabilities" "$ERR"

vm "$F/kvm" "$(printf 'kvm host\nkvm host,-arch-capabilities')"
assert_eq "KVM that refuses both CPU models: TCG last, exit 0" \
	"0 kvm host|kvm host,-arch-capabilities|tcg max,-cx16" "$RC $(paste -sd'|' <<<"$TRIED")"
assert_match "  ... and says so" "run-vm: ran with accelerator tcg, CPU max,-cx16" "$ERR"

vm "$F/no-such-kvm" ""
assert_eq "no /dev/kvm: TCG at once, exit 0" "0 tcg max,-cx16" "$RC $TRIED"

# a device this user may not write (root may write any file: the rootless suite covers it)
if [ "$(id -u)" != 0 ]; then
	chmod 0444 "$F/kvm"
	vm "$F/kvm" ""
	assert_eq "a /dev/kvm this user cannot write: TCG at once" "0 tcg max,-cx16" "$RC $TRIED"
	chmod 0644 "$F/kvm"
fi

# a guest that booted and failed is a result, not an accelerator problem: no second start
vm "$F/kvm" "" 3
assert_eq "a guest that boots under KVM and reports status 3: exit 3, no other accelerator tried" \
	"3 kvm host" "$RC $TRIED"

# the last resort fails too: its error is the result (status 125, QEMU's words kept)
vm "$F/no-such-kvm" "tcg max,-cx16"
assert_eq "TCG refused as well: 125 (no status), tried once" "125 tcg max,-cx16" "$RC $TRIED"
assert_match "  ... QEMU's error is shown" "failed to set MSR" "$ERR"

done_testing
