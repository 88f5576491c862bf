#!/bin/bash
# Issue 17, kind 8 (CVE-2019-10063's class): a rule of a user's profile on an argument the
# kernel reads as 32 bits (ioctl's request, socket's family) must not be bypassed by
# setting the upper 32 bits.  A default-allow profile in Docker's style denies ioctl
# TIOCSTI (SCMP_CMP_EQ) with EDOM, an answer the kernel never gives TIOCSTI, so the test
# tells the rule's answer from the kernel's.  Probe: TIOCSTI | 1 << 32 on the payload's own
# pty.  Controls: on the host the same wide request is TIOCSTI to the kernel (it succeeds,
# or fails as TIOCSTI does); unconfined inside, it reaches the kernel too.
. "$(dirname "$0")/../lib.sh"
require_all

P="$TESTTMP/deny-tiocsti.json"
cat >"$P" <<'JSON'
{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
 {"names": ["ioctl"], "action": "SCMP_ACT_ERRNO", "errnoRet": 33,
  "args": [{"index": 1, "value": 21522, "op": "SCMP_CMP_EQ"}]},
 {"names": ["socket"], "action": "SCMP_ACT_ERRNO", "errnoRet": 33,
  "args": [{"index": 0, "value": 17, "op": "SCMP_CMP_EQ"}]}]}
JSON
chmod 644 "$P"

run_host_probe tiocsti pty wide
assert_match "control: on the host the wide request is TIOCSTI to the kernel (not EDOM)" \
	'^tiocsti: (ok pty wide|denied (EIO|EPERM) pty wide)$' "$OUT"
host_wide=$OUT
run_host_probe tiocsti pty
assert_eq "control: ... the same answer as the plain request" "${host_wide% wide}" "$OUT"

run_probe --security-opt "seccomp=$P" -- tiocsti pty
assert_eq "the profile's rule meets TIOCSTI" "tiocsti: denied EDOM pty" "$OUT"
run_probe --security-opt "seccomp=$P" -- tiocsti pty wide
assert_eq "the rule meets TIOCSTI with the upper 32 bits set too" "tiocsti: denied EDOM pty wide" "$OUT"
run_probe --security-opt seccomp=unconfined -- tiocsti pty wide
assert_match "control: unconfined, the wide request reaches the kernel" '^tiocsti: (ok|denied (EIO|EPERM)) pty wide$' "$OUT"

# socket's family, from Python: AF_PACKET (17) with the upper bits set
run_nsrun --image python --security-opt "seccomp=$P" -- python3 -c '
import ctypes
l = ctypes.CDLL(None, use_errno=True)
for fam in (17, 17 | 1 << 32, 2 | 1 << 32):
    r = l.syscall(41, ctypes.c_ulong(fam), 2, 0)
    print(hex(fam), "ok" if r >= 0 else ctypes.get_errno())'
assert_eq "socket AF_PACKET, plain and with the upper bits set: the rule's EDOM; AF_INET wide: allowed" \
	"0x11 33
0x100000011 33
0x100000002 ok" "$OUT"

# our own profiles: TIOCSTI wide gets the default profile's EPERM
run_probe -- tiocsti pty wide
assert_eq "default profile: TIOCSTI with the upper bits set is EPERM" "tiocsti: denied EPERM pty wide" "$OUT"

done_testing
