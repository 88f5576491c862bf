#!/bin/bash
# Seccomp, on by default (issue 3): each escape probe is denied by the default profile with
# EPERM (the profile's deliberate answer, not the ENOSYS of an unknown call) and, as the
# control, gets further with --security-opt seccomp=unconfined, where capabilities and
# namespaces alone decide. Where the host kernel itself refuses a call (sysctls, no IA32
# emulation), the control is a variant whose unconfined outcome differs from the filter's
# EPERM (an invalid pointer: EFAULT; an invalid flag mix: EINVAL), or, when nothing can
# differ, what the kernel says is asserted and explained with diag.
# Then what must keep working under the default profile, and the strict profile.
. "$(dirname "$0")/../lib.sh"
require_all

# ------------------------------------------------------------ helpers (local to this file)

# Calls the probe lacks, made from Python with ctypes; same one-line result format as the
# probe: "NAME: ok ..." (exit 0) or "NAME: denied ERRNO ..." (exit 1).
PY_DIR="$TESTTMP/py"
mkdir -p "$PY_DIR"
cat >"$PY_DIR/sc.py" <<'EOF'
import ctypes, errno, os, signal, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
CLONE_NEWNS, CLONE_FS, CLONE_NEWUSER = 0x20000, 0x200, 0x10000000
PTRACE_ATTACH, PTRACE_DETACH = 16, 17
NR = {"clone": 56, "mount": 165, "bpf": 321, "userfaultfd": 323}   # x86-64
name = sys.argv[1]

def denied(e, what=""):
    print(f"{name}: denied {errno.errorcode.get(e, e)} {what}".rstrip())
    sys.exit(1)

def check(r, what=""):
    if r < 0:
        denied(ctypes.get_errno(), what)

def done(what=""):
    print(f"{name}: ok {what}".rstrip())
    sys.exit(0)

def clone_wait(flags):
    # raw clone without a new stack: the child is a fork() copy and leaves at once
    pid = libc.syscall(NR["clone"], ctypes.c_ulong(flags | signal.SIGCHLD), None, None, None, None)
    if pid == 0:
        os._exit(0)
    check(pid, "clone")
    os.waitpid(pid, 0)

if name == "userns-mount-tmpfs":      # the escape path: new user+mount namespace, mount
    check(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare")
    check(libc.mount(b"nsrun-sc", b"/tmp", b"tmpfs", 0, b"size=1m"), "mount")
    done("mounted" if "nsrun-sc /tmp tmpfs" in open("/proc/self/mounts").read() else "not-visible")
elif name == "mount-badptr":          # allowed: EFAULT (type pointer 1); filtered: EPERM
    check(libc.syscall(NR["mount"], b"x", b"/tmp", ctypes.c_void_p(1), 0, None), "mount")
    done()
elif name == "userns-clone-newns":    # a new user namespace, then clone(CLONE_NEWNS) in it
    check(libc.unshare(CLONE_NEWUSER), "unshare")
    clone_wait(CLONE_NEWNS)
    done()
elif name == "clone-newns-fs":        # allowed: EINVAL (NEWNS with FS); filtered: EPERM
    clone_wait(CLONE_NEWNS | CLONE_FS)
    done()
elif name == "ptrace-sibling":        # process C attaches to its sibling B
    r, w = os.pipe()
    b = os.fork()
    if b == 0:
        os.close(r); os.close(w)
        time.sleep(30)
        os._exit(0)
    c = os.fork()
    if c == 0:
        os.close(r)
        e = 0
        if libc.ptrace(PTRACE_ATTACH, b, None, None) < 0:
            e = ctypes.get_errno()
        else:
            os.waitpid(b, 0)
            libc.ptrace(PTRACE_DETACH, b, None, None)
        os.write(w, str(e).encode())
        os._exit(0)
    os.close(w)
    e = int(os.read(r, 16) or b"5")
    os.waitpid(c, 0); os.kill(b, signal.SIGKILL); os.waitpid(b, 0)
    if e:
        denied(e, "sibling")
    done("sibling")
elif name == "bpf-efault":            # allowed: EFAULT (NULL attr); filtered: EPERM
    check(libc.syscall(NR["bpf"], 0, None, 64), "map-create NULL attr")
    done()
elif name == "userfaultfd-user-mode": # UFFD_USER_MODE_ONLY: allowed unprivileged since 5.11
    fd = libc.syscall(NR["userfaultfd"], os.O_CLOEXEC | 1)
    check(fd, "UFFD_USER_MODE_ONLY")
    os.close(fd)
    done("UFFD_USER_MODE_ONLY")
else:
    print(f"sc.py: unknown subcommand {name}", file=sys.stderr)
    sys.exit(2)
EOF
chmod -R a+rX "$PY_DIR"

# run_sc [NSRUN-OPTIONS...] -- SUBCOMMAND
run_sc() {
	local opts=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	run_nsrun --image python -v "$PY_DIR:/sc:ro" "${opts[@]+"${opts[@]}"}" -- python3 /sc/sc.py "$@"
}

sysctl_val() { cat "/proc/sys/$1" 2>/dev/null || echo '?'; }

# Why the host kernel refuses NAME to an unprivileged process on its own, or nothing.
kernel_refusal() {
	local v
	case $1 in
	bpf | bpf-efault)
		v=$(sysctl_val kernel/unprivileged_bpf_disabled)
		[ "$v" != 0 ] && echo "kernel.unprivileged_bpf_disabled=$v: bpf(2) is EPERM without CAP_BPF in the initial namespace" ;;
	userfaultfd)
		v=$(sysctl_val vm/unprivileged_userfaultfd)
		[ "$v" = 0 ] && echo "vm.unprivileged_userfaultfd=0: userfaultfd(2) without UFFD_USER_MODE_ONLY is EPERM without CAP_SYS_PTRACE" ;;
	io-uring-setup)
		v=$(sysctl_val kernel/io_uring_disabled)
		[ "$v" != 0 ] && [ "$v" != '?' ] && echo "kernel.io_uring_disabled=$v: io_uring_setup(2) is EPERM for this user" ;;
	perf-event-open)
		v=$(sysctl_val kernel/perf_event_paranoid)
		[ "$v" != '?' ] && [ "$v" -gt 2 ] && echo "kernel.perf_event_paranoid=$v: perf_event_open(2) is refused to unprivileged users" ;;
	tiocsti)
		v=$(sysctl_val dev/tty/legacy_tiocsti)
		[ "$v" = 0 ] && echo "dev.tty.legacy_tiocsti=0: TIOCSTI needs CAP_SYS_ADMIN" ;;
	esac
	return 0
}

# escape NAME DEFAULT_OUTCOME UNCONF_OUTCOME — judge one escape attempt and its control:
# the default profile must answer EPERM; unconfined must get further (ok), or fail
# differently (the kernel's own errno), or, only when the kernel refuses with EPERM too for
# an explained reason, say so.
escape() {
	local name=$1 def=$2 unc=$3 why
	assert_match "$name: denied with EPERM under the default profile" "^[a-z0-9-]+: denied EPERM( |$)" "$def"
	if [[ $unc =~ ^[a-z0-9-]+:\ ok( |$) ]]; then
		ok "control: $name allowed with seccomp=unconfined ($unc)"
		return
	fi
	why=$(kernel_refusal "$name")
	if [ "$unc" != "$def" ]; then
		ok "control: $name with seccomp=unconfined fails differently (the kernel's answer): $unc"
		diag "$name: unconfined '$unc' vs default '$def'${why:+ ($why)}"
	elif [ -n "$why" ]; then
		ok "control: $name refused by the host kernel itself, as unconfined shows: $unc"
		diag "$name: no control possible on this host: $why"
	else
		not_ok "control: $name allowed with seccomp=unconfined" "unconfined: '$unc'" "default: '$def'" "$(_ctx)"
	fi
}

# ------------------------------------------------------------ the escape probes (nsrun-probe)

# the default profile is on without any option; an explicit seccomp=default is the same
run_probe -- unshare user; def=$(probe_outcome)
run_probe --security-opt seccomp=default -- unshare user
assert_eq "seccomp=default answers like no option: unshare(CLONE_NEWUSER)" "$def" "$(probe_outcome)"
run_probe --security-opt seccomp=unconfined -- unshare user; unc=$(probe_outcome)
escape unshare-user "$def" "$unc"
assert_eq "control: unshare(CLONE_NEWUSER) works unconfined" "unshare: ok user" "$unc"

for c in ptrace-traceme "ptrace-attach child" keyctl bpf perf-event-open userfaultfd io-uring-setup "tiocsti pty" personality-linux32; do
	# shellcheck disable=SC2086  # word splitting of "subcommand arg" is intended
	run_probe -- $c; def=$(probe_outcome)
	# shellcheck disable=SC2086
	run_probe --security-opt seccomp=unconfined -- $c; unc=$(probe_outcome)
	escape "${c%% *}" "$def" "$unc"
done

# clone(CLONE_NEWNS) and mount(2) need CAP_SYS_ADMIN in a user namespace the payload owns:
# the bare probe is EPERM unconfined too (capabilities), so the controls are below.
run_probe -- clone-newns
assert_eq "clone(CLONE_NEWNS) denied with EPERM under the default profile" "clone-newns: denied EPERM" "$(probe_outcome)"
run_probe -- mount-tmpfs /tmp
assert_eq "mount(tmpfs) denied with EPERM under the default profile" "mount-tmpfs: denied EPERM /tmp" "$(probe_outcome)"

# ------------------------------------------------------------ escapes the probe lacks (ctypes)

declare -A SC_DEF SC_UNC
for c in userns-mount-tmpfs userns-clone-newns ptrace-sibling clone-newns-fs mount-badptr bpf-efault userfaultfd-user-mode; do
	run_sc -- $c; SC_DEF[$c]=$(probe_outcome)
	# the controls isolate the filter: Landlock (which refuses every mount) is off there too
	run_sc --security-opt seccomp=unconfined --security-opt landlock=unconfined -- $c; SC_UNC[$c]=$(probe_outcome)
	escape "$c" "${SC_DEF[$c]}" "${SC_UNC[$c]}"
done
# the full escape paths, exactly
assert_eq "default: unshare(user+mount) for a mount is EPERM" \
	"userns-mount-tmpfs: denied EPERM unshare" "${SC_DEF[userns-mount-tmpfs]}"
assert_eq "control: unconfined, unshare(user+mount) + mount tmpfs works" \
	"userns-mount-tmpfs: ok mounted" "${SC_UNC[userns-mount-tmpfs]}"
run_sc --security-opt seccomp=unconfined -- userns-mount-tmpfs
assert_eq "defence in depth: seccomp unconfined, Landlock still refuses the mount" \
	"userns-mount-tmpfs: denied EPERM mount" "$(probe_outcome)"
assert_eq "control: unconfined, clone(CLONE_NEWNS) in a new user namespace works" \
	"userns-clone-newns: ok" "${SC_UNC[userns-clone-newns]}"
# these two isolate the filter from capabilities: the kernel's own answer is not EPERM
assert_eq "default: clone(CLONE_NEWNS|CLONE_FS) is EPERM (the filter, before the kernel's check)" \
	"clone-newns-fs: denied EPERM clone" "${SC_DEF[clone-newns-fs]}"
assert_eq "control: unconfined clone(CLONE_NEWNS|CLONE_FS) reaches the kernel (EINVAL)" \
	"clone-newns-fs: denied EINVAL clone" "${SC_UNC[clone-newns-fs]}"
assert_eq "default: mount(2) with a bad type pointer is EPERM (the filter)" \
	"mount-badptr: denied EPERM mount" "${SC_DEF[mount-badptr]}"
assert_eq "control: unconfined mount(2) reaches the kernel (EFAULT)" \
	"mount-badptr: denied EFAULT mount" "${SC_UNC[mount-badptr]}"

# ------------------------------------------------------------ int 0x80 (the i386 ABI)

# The profile lists only SCMP_ARCH_X86_64: a call through int 0x80 has another ABI, and the
# profile's answer is to kill the process (SIGSYS), or EPERM. Unconfined it returns getpid.
run_probe --security-opt seccomp=unconfined -- int80; unc=$(probe_outcome)
run_probe -- int80; def=$(probe_outcome)
if [[ $unc == "int80: ok"* ]]; then
	ok "control: int 0x80 getpid works with seccomp=unconfined ($unc)"
else
	run_host_probe int80
	diag "int 0x80 refused by the kernel itself: unconfined '$unc', on the host '$OUT'; no control possible here"
fi
v=$(foreign_abi_verdict int80 "$unc" "$def")
check "int 0x80 under the default profile: ${v#*: }" test "${v%%:*}" = ok

# ------------------------------------------------------------ must keep working under default

cat >"$PY_DIR/controls.py" <<'EOF'
import asyncio, mmap, multiprocessing, os, signal, subprocess, threading

def sq(x):
    return x * x

async def handle(r, w):
    data = await r.readline()
    w.write(b"echo " + data)
    await w.drain()
    w.close()

async def tcp():
    srv = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = srv.sockets[0].getsockname()[1]
    r, w = await asyncio.open_connection("127.0.0.1", port)
    w.write(b"ping\n")
    await w.drain()
    line = (await r.readline()).decode().strip()
    w.close()
    srv.close()
    await srv.wait_closed()
    return line

def main():
    out = []
    t = threading.Thread(target=lambda: out.append("ok"))
    t.start(); t.join()
    print("threads:", out[0], flush=True)
    p = subprocess.run(["sh", "-c", "echo sub $((6*7))"], capture_output=True, text=True)
    print("subprocess:", p.stdout.strip(), p.returncode, flush=True)
    with multiprocessing.Pool(2) as pool:
        print("pool:", pool.map(sq, range(5)), flush=True)
    print("asyncio:", asyncio.run(tcp()), flush=True)
    pid = os.fork()
    if pid == 0:
        os._exit(7)
    print("fork:", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)
    m = mmap.mmap(-1, 4096)
    m.write(b"mapped"); m.seek(0)
    print("mmap:", m.read(6).decode(), flush=True)
    m.close()
    got = []
    signal.signal(signal.SIGALRM, lambda s, f: got.append(s))
    signal.alarm(1)
    signal.pause()
    print("alarm:", got == [signal.SIGALRM], flush=True)

if __name__ == "__main__":
    main()
EOF
chmod a+r "$PY_DIR/controls.py"
run_nsrun --image python -v "$PY_DIR:/sc:ro" -- python3 /sc/controls.py
assert_eq "default profile: threads, subprocess, Pool(2), asyncio TCP on 127.0.0.1, fork, mmap, alarm" \
"0 threads: ok
subprocess: sub 42 0
pool: [0, 1, 4, 9, 16]
asyncio: echo ping
fork: 7
mmap: mapped
alarm: True" "$RC $OUT"

run_nsrun --image python -- sh -c 'seq 1 1000 | sort -rn | head -1'
assert_eq "default profile: sh -c pipeline seq | sort -rn | head -1" "0 1000" "$RC $OUT"

# ------------------------------------------------------------ strict.json

run_nsrun --image python --security-opt seccomp=strict -- python3 -c '
import os, socket, subprocess, threading
print("sum:", sum(i * i for i in range(1, 101)), flush=True)
t = threading.Thread(target=lambda: print("thread: ok", flush=True)); t.start(); t.join()
for what, f in [("subprocess", lambda: subprocess.run(["true"])), ("fork", os.fork),
                ("inet", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))]:
    try:
        r = f()
        if r == 0:
            os._exit(0)
        print(what + ": ok", flush=True)
    except Exception as e:
        print(what + ":", type(e).__name__, getattr(e, "errno", None), flush=True)
'
assert_eq "strict: computation and threads run; fork, subprocess and AF_INET fail with PermissionError" \
"0 sum: 338350
thread: ok
subprocess: PermissionError 1
fork: PermissionError 1
inet: PermissionError 1" "$RC $OUT"

run_nsrun --image python --security-opt seccomp=strict -- python3 -c 'print(sum(range(10**6)))'
assert_eq "strict: pure computation" "0 499999500000" "$RC $OUT"
run_probe --security-opt seccomp=strict -- unshare user
assert_eq "strict: unshare(CLONE_NEWUSER) denied with EPERM" "unshare: denied EPERM user" "$(probe_outcome)"

done_testing
