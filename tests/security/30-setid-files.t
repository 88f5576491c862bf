#!/bin/bash
# Issue 17, kind 2: a file made through a rw volume outlives the run with the caller's
# uid (rootless) or 65534 (root), so the payload must not give it a set-user-ID or
# set-group-ID bit (a setuid copy of a shell any local user could run) or a file
# capability.  The default profile answers EPERM to a set-id bit in the mode of the chmod
# family and of the calls that create files (open/openat/creat/mknod); the kernel drops
# the bits from mkdir's mode and refuses security.capability without CAP_SETFCAP; the
# volume is nosuid inside.  Controls: chmod 0755 works, and with the filter off
# (seccomp=unconfined) the same chmod 4755 does make a setuid file on the host, so the
# probe would see one.
. "$(dirname "$0")/../lib.sh"
require_all

V="$TESTTMP/vol"
mkdir -p "$V"
chmod 777 "$V"   # as root the payload is host uid 65534

# mode_of FILE — the host's view of FILE's permission bits (octal)
mode_of() { stat -c %a "$1" 2>/dev/null || echo missing; }

PY='
import os, stat, sys
os.umask(0)
def show(what, fn):
    try:
        fn(); print(what, "ok")
    except OSError as e:
        print(what, "denied", e.errno)
show("copy", lambda: os.system("cp /bin/sh /v/sh"))
show("chmod0755", lambda: os.chmod("/v/sh", 0o755))
show("chmod4755", lambda: os.chmod("/v/sh", 0o4755))
show("chmod2755", lambda: os.chmod("/v/sh", 0o2755))
show("fchmod4755", lambda: os.fchmod(os.open("/v/sh", os.O_RDONLY), 0o4755))
show("fchmodat4755", lambda: os.chmod("sh", 0o4755, dir_fd=os.open("/v", os.O_RDONLY)))
show("open-creat4755", lambda: os.close(os.open("/v/created", os.O_CREAT | os.O_WRONLY, 0o4755)))
show("open-creat0644", lambda: os.close(os.open("/v/plain", os.O_CREAT | os.O_WRONLY, 0o644)))
show("mknod4755", lambda: os.mknod("/v/node", stat.S_IFREG | 0o4755))
show("mkdir2755", lambda: os.mkdir("/v/dir", 0o2755))
show("setcap", lambda: os.setxattr("/v/sh", "security.capability",
     bytes.fromhex("01000002" "00200000" "00000000" "00000000" "00000000")))
'

run_nsrun --image python -v "$V:/v:rw" -- python3 -c "$PY"
diag "$(tr '\n' ' ' <<<"$OUT")"
assert_match "control: the copy of a shell is made in the rw volume" '(^|
)copy ok' "$OUT"
assert_match "control: chmod 0755 works" '(^|
)chmod0755 ok' "$OUT"
for c in chmod4755 chmod2755 fchmod4755 fchmodat4755 open-creat4755 mknod4755; do
	assert_eq "$c: EPERM" "$c denied 1" "$(grep "^$c " <<<"$OUT")"
done
assert_match "control: open(O_CREAT, 0644) works" '(^|
)open-creat0644 ok' "$OUT"
assert_eq "security.capability on the file: refused (EPERM, no CAP_SETFCAP)" "setcap denied 1" \
	"$(grep "^setcap " <<<"$OUT")"
assert_eq "on the host the shell copy has no set-id bit" 755 "$(mode_of "$V/sh")"
check "on the host no file created with a set-id mode exists" test ! -e "$V/created" -a ! -e "$V/node"
assert_eq "mkdir with 02755: the kernel drops S_ISGID (the directory is 755 on the host)" 755 "$(mode_of "$V/dir")"
if getfattr -n security.capability "$V/sh" >/dev/null 2>&1; then
	not_ok "no file capability on the host" "$(getfattr -d -m - "$V/sh" 2>&1)"
else
	ok "no file capability on the host"
fi
found=$(find "$V" -perm /6000 2>/dev/null)
assert_eq "no set-id file at all in the volume on the host" "" "$found"

# the volume is nosuid inside: a set-id file already there would not raise privileges
run_nsrun --image python -v "$V:/v:rw" -- sh -c 'grep " /v " /proc/self/mountinfo'
assert_match "the rw volume is mounted nosuid inside" ' /v [^ ]*nosuid' "$OUT"

# control: with the filter off, the same chmod does set the bit on the host (so the
# checks above can see one); the file is removed at once
rm -f "$V/sh"
run_nsrun --image python --security-opt seccomp=unconfined -v "$V:/v:rw" -- \
	python3 -c 'import os, shutil; shutil.copy("/bin/sh", "/v/sh"); os.chmod("/v/sh", 0o4755); print("set")'
assert_eq "control: seccomp=unconfined, chmod 4755 works" "set" "$OUT"
assert_eq "control: ... and the host sees the setuid bit" 4755 "$(mode_of "$V/sh")"
rm -f "$V/sh"

# root inside with Docker's capabilities (--user 0 --cap-add ALL) holds CAP_FSETID in
# its user namespace only: the kernel keeps a set-id bit through a write only for
# CAP_FSETID in the initial one (fs/attr.c setattr_should_drop_suidgid, capable()), so
# a set-id file made through openat2 (whose mode no filter reads) still loses the bit
# once written.  Control: left empty, the same file has it on the host.
O2='import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
how = struct.pack("QQQ", os.O_CREAT | os.O_WRONLY, 0o4755, 0)
fd = libc.syscall(437, -100, sys.argv[1].encode(), how, 24)
if fd < 0:
    print("openat2 denied", ctypes.get_errno()); sys.exit()
if len(sys.argv) > 2:
    os.write(fd, b"#!/bin/sh\n")
os.close(fd)
print("openat2 ok")'
run_nsrun --image python --user 0 --cap-add ALL -v "$V:/v:rw" -- sh -c \
	"grep ^CapEff /proc/self/status; python3 -c '$O2' /v/o2 write; python3 -c '$O2' /v/o2-empty"
assert_eq "root with --cap-add ALL (CAP_FSETID): openat2 with 04755, then a write" \
	"CapEff:	00000000a80425fb|openat2 ok|openat2 ok" "$(tr '\n' '|' <<<"$OUT" | sed 's/|$//')"
assert_eq "  ... the write cleared the setuid bit on the host" 755 "$(mode_of "$V/o2")"
assert_eq "  ... control: the file left empty has it" 4755 "$(mode_of "$V/o2-empty")"
rm -f "$V/o2" "$V/o2-empty"

# the --strict profile denies the same
run_nsrun --image python --security-opt seccomp=strict -v "$V:/v:rw" -- \
	python3 -c 'import os; open("/v/s", "w").close(); os.chmod("/v/s", 0o4755)'
assert_ne "strict profile: chmod 4755 fails" 0 "$RC"
assert_eq "strict profile: no set-id bit on the host" 644 "$(mode_of "$V/s")"

done_testing
