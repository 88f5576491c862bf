#!/bin/bash
# The tests' own branch logic, on canned outcomes: verdicts that depend on what the
# kernel offers are judged for every kind of kernel here, whichever kind this machine
# is, so a branch that the machine cannot take is still tested (lib.sh).
. "$(dirname "$0")/../lib.sh"

verdict() { foreign_abi_verdict int80 "$1" "$2" >/dev/null; echo $?; }

# probe_outcome: a probe's line, or how the run died (a killing filter prints nothing)
RC=0 OUT=$'int80: ok getpid 5\nmore'
assert_eq "probe_outcome: the first line of a finished probe" "int80: ok getpid 5" "$(probe_outcome)"
RC=159 OUT=""
assert_eq "probe_outcome: exit 159 is signal 31 (SIGSYS)" "killed by signal 31 " "$(probe_outcome)"
UNC_OK="int80: ok getpid 2"
UNC_REFUSED="int80: denied ENOSYS int \$0x80 raised signal 11"

# IA-32 emulation on: the control works, the filter must kill or answer EPERM
assert_eq "emulation on: the filter kills (SIGSYS): ok" 0 "$(verdict "$UNC_OK" "killed by signal 31 ")"
assert_eq "emulation on: the filter answers EPERM: ok" 0 "$(verdict "$UNC_OK" "int80: denied EPERM int \$0x80 returned -1")"
assert_eq "emulation on: the call works under the profile: not ok" 1 "$(verdict "$UNC_OK" "int80: ok getpid 2")"
assert_eq "emulation on: another signal than SIGSYS: not ok" 1 "$(verdict "$UNC_OK" "killed by signal 11 ")"
assert_eq "emulation on: ENOSYS (not the profile's answer for a foreign ABI): not ok" 1 \
	"$(verdict "$UNC_OK" "int80: denied ENOSYS int \$0x80 returned -38")"
# emulation off: the kernel refuses first; the default run must end as the unconfined one
assert_eq "emulation off: refused alike with and without the filter: ok" 0 "$(verdict "$UNC_REFUSED" "$UNC_REFUSED")"
assert_eq "emulation off: the default run ends otherwise: not ok" 1 "$(verdict "$UNC_REFUSED" "killed by signal 31 ")"
assert_eq "emulation off: works under the profile only: not ok" 1 "$(verdict "$UNC_REFUSED" "int80: ok getpid 2")"

done_testing
