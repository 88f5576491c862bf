#!/bin/bash
# Landlock, defence in depth: the payload's ruleset repeats the read-only root in the
# LSM layer (so mount(2) is refused even where seccomp would let it through: see
# 18-seccomp.t), keeps /tmp, /dev/shm and rw volumes writable, and with
# --security-opt landlock=strict refuses TCP altogether.
. "$(dirname "$0")/../lib.sh"
require_all

abi=$("$PROBE" landlock-exec true >/dev/null 2>&1 && echo yes || echo no)
[ "$abi" = yes ] || skip_all "this kernel has no Landlock (landlock_create_ruleset failed)"

run_probe --debug -- exit 0
assert_match "the ruleset is applied (debug)" 'debug: landlock applied \(ABI [1-9]' "$ERR"
run_probe --debug --security-opt landlock=unconfined -- exit 0
assert_match "landlock=unconfined: none" 'debug: landlock off' "$ERR"

V="$TESTTMP/vol"; mkdir -m 777 "$V"
run_probe -v "$V:/out:rw" -- write /out/f
assert_match "a rw volume stays writable" '^write: ok /out/f' "$OUT"
run_probe -- write /tmp/f
assert_match "/tmp stays writable" '^write: ok' "$OUT"
run_probe -- write /dev/shm/f
assert_match "/dev/shm stays writable" '^write: ok' "$OUT"
run_probe -- write /dev/null
assert_match "device nodes stay usable" '^write: ok' "$OUT"

# TCP: loopback is the payload's own (default), none at all with landlock=strict
run_probe -- loopback 127.0.0.1
assert_eq "control: loopback TCP works by default" "loopback: ok 127.0.0.1" "$OUT"
run_probe --security-opt landlock=strict -- loopback 127.0.0.1
if grep -q 'ABI [4-9]' <<<"$(run_probe --debug -- exit 0; echo "$ERR")"; then
	assert_match "landlock=strict: no TCP bind or connect, loopback included" '^loopback: denied EACCES' "$OUT"
else
	assert_match "landlock=strict: (ABI < 4, no network rules) loopback still works" '^loopback: ok' "$OUT"
fi

# landlock=strict with a published port: that one port may be bound, no other
BIND='import socket
for p in (8080, 8081):
    s = socket.socket()
    try: s.bind(("127.0.0.1", p)); print(p, "ok")
    except OSError as e: print(p, e.errno)'
run_nsrun --security-opt landlock=strict -p 127.0.0.1:0:8080 --image python -- python3 -c "$BIND"
if grep -q 'ABI [4-9]' <<<"$(run_probe --debug -- exit 0; echo "$ERR")"; then
	assert_eq "landlock=strict -p 0:8080: port 8080 may be bound, 8081 not (EACCES)" "8080 ok
8081 13" "$OUT"
else
	assert_eq "landlock=strict -p 0:8080 (ABI < 4): both may be bound" "8080 ok
8081 ok" "$OUT"
fi

# --read-only=false: / holds what a writable root needs (a new file, a FIFO), not
# device nodes, which stay /dev's.  The root is the test's own tiny image (a caller
# owns its image's /, as a rootless pull or build does).  Control: without Landlock
# the same mknod gets as far as the kernel's own CAP_MKNOD check (EPERM), so the
# EACCES is Landlock's
BARE="$TESTTMP/bare"
mkdir -p "$BARE/bin" "$BARE/etc" && cp "$PROBE" "$BARE/bin/nsrun-probe" && chmod -R a+rX "$BARE"
run_nsrun --rootfs "$BARE" --read-only=false -- /bin/nsrun-probe write /new 1
assert_eq "--read-only=false: a new file in / is written" "write: ok /new 1 bytes" "$OUT"
run_nsrun --rootfs "$BARE" --read-only=false -- /bin/nsrun-probe mknod /fifo fifo
assert_eq "  ... a FIFO is made in /" "mknod: ok fifo /fifo" "$OUT"
run_nsrun --rootfs "$BARE" --read-only=false -- /bin/nsrun-probe mknod /null char
assert_eq "  ... a device node is not: Landlock refuses it (EACCES)" "mknod: denied EACCES char /null" "$OUT"
run_nsrun --rootfs "$BARE" --read-only=false --security-opt landlock=unconfined -- /bin/nsrun-probe mknod /null char
assert_eq "  ... control: without Landlock the kernel's CAP_MKNOD check refuses it (EPERM)" \
	"mknod: denied EPERM char /null" "$OUT"

# the other writable places the same: /tmp (nsrun's tmpfs) and a rw volume
mkdir -p "$TESTTMP/vol" && chmod 777 "$TESTTMP/vol"
for place in /tmp /v; do
	run_nsrun --rootfs "$BARE" -v "$TESTTMP/vol:/v:rw" -- /bin/nsrun-probe mknod "$place/fifo" fifo
	assert_eq "$place: a FIFO is made" "mknod: ok fifo $place/fifo" "$OUT"
	run_nsrun --rootfs "$BARE" -v "$TESTTMP/vol:/v:rw" -- /bin/nsrun-probe mknod "$place/null" char
	assert_eq "  ... a device node is not: Landlock refuses it (EACCES)" "mknod: denied EACCES char $place/null" "$OUT"
	run_nsrun --rootfs "$BARE" -v "$TESTTMP/vol:/v:rw" --security-opt landlock=unconfined -- /bin/nsrun-probe mknod "$place/null" char
	assert_eq "  ... control: without Landlock the kernel's CAP_MKNOD check refuses it (EPERM)" \
		"mknod: denied EPERM char $place/null" "$OUT"
	rm -f "$TESTTMP/vol/fifo"
done

run_nsrun --security-opt landlock=maybe --image python -- true
assert_eq "a bad landlock= value: 125" 125 "$RC"
assert_match "  ... naming the values" 'landlock= takes default, strict or unconfined' "$ERR"

done_testing
