"""Tests of the nsrun Python client against the real binary (see conftest.py for NSRUN)."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import pytest

import nsrun
from nsrun import NsrunError, Result

pytestmark = pytest.mark.usefixtures("nsrun_ready")


def test_normal_exit() -> None:
    r = nsrun.run("print('h\\u00e9llo')\nimport sys; print('warn', file=sys.stderr)")
    assert isinstance(r, Result)
    assert (r.status, r.exit_code, r.signal, r.error) == ("exited", 0, None, None)
    assert r.ok
    assert r.stdout == "h\u00e9llo\n" and r.stdout_bytes == 7 and not r.stdout_truncated
    assert r.stderr == "warn\n" and r.stderr_bytes == 5
    assert r.stdout_raw == "h\u00e9llo\n".encode()
    assert r.image == "python" and r.schema == 1
    assert r.wall_time_ms > 0 and r.max_rss_kib > 0
    # the memory limit counts real use: a cgroup (v2, or v1 as root on a hybrid host),
    # else the supervisor's measure; never a per-process rlimit (docs/limits.md)
    assert r.limits["memory_bytes"].value == 512 << 20
    assert r.limits["memory_bytes"].enforced in ("cgroup", "cgroup-v1", "supervisor")
    assert r.limits["pids"] == nsrun.Limit(128, "rlimit")
    assert r.limits["timeout_ms"] == nsrun.Limit(30000, "supervisor")
    assert r.limits["output_bytes"] == nsrun.Limit(1 << 20, "supervisor")
    assert r.raw["status"] == "exited"


def test_nonzero_exit_is_a_result_not_an_exception() -> None:
    r = nsrun.run("import sys; print('partial'); sys.exit(3)")
    assert (r.status, r.exit_code, r.signal, r.stdout) == ("exited", 3, None, "partial\n")
    assert not r.ok


def test_exception_in_payload() -> None:
    r = nsrun.run("raise RuntimeError('boom')")
    assert r.exit_code == 1 and "RuntimeError: boom" in (r.stderr or "")


def test_signal() -> None:
    r = nsrun.run("import os; os.kill(os.getpid(), 11)")
    assert (r.status, r.exit_code, r.signal, r.timed_out) == ("signaled", 139, "SIGSEGV", False)


def test_timeout() -> None:
    r = nsrun.run("print('started', flush=True)\nwhile True: pass", timeout=1)
    assert (r.status, r.exit_code, r.timed_out, r.signal) == ("timed_out", 124, True, None)
    assert r.stdout == "started\n"
    assert 1000 <= r.wall_time_ms < 5000
    assert r.limits["timeout_ms"] == nsrun.Limit(1000, "supervisor")


def test_fractional_and_no_timeout() -> None:
    assert nsrun.run("import time; time.sleep(2)", timeout=0.5).timed_out
    r = nsrun.run("print(1)", timeout=None)
    assert r.ok and r.limits["timeout_ms"] == nsrun.Limit(None, "none")


def test_missing_image_raises_nsrun_error() -> None:
    with pytest.raises(NsrunError) as e:
        nsrun.run("print(1)", image="no-such-image-xyz")
    assert "no-such-image-xyz" in str(e.value)
    assert e.value.result is not None
    assert (e.value.result.status, e.value.result.exit_code) == ("error", 125)
    assert "no-such-image-xyz" in e.value.stderr


def test_rejected_option_raises_nsrun_error() -> None:
    with pytest.raises(NsrunError, match="network"):
        nsrun.run("print(1)", network="host")


def test_missing_binary_raises_nsrun_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NSRUN", "/nonexistent/nsrun")
    with pytest.raises(NsrunError, match="NSRUN"):
        nsrun.run("print(1)")


def test_cpus_is_clear_when_unsupported(nsrun_ready: str) -> None:
    if nsrun._supports(nsrun_ready, "--cpus"):
        assert nsrun.run("print(1)", cpus=1).ok
    else:
        with pytest.raises(NsrunError, match="cpus"):
            nsrun.run("print(1)", cpus=1)


def test_env_passing() -> None:
    r = nsrun.run("import os; print(os.environ['FOO']); print(os.environ.get('NSRUN_SECRET_HOST'))",
                  env={"FOO": "bar baz=qux \u00e9"})
    assert r.stdout == "bar baz=qux \u00e9\nNone\n"


def test_host_environment_not_passed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NSRUN_TEST_HOST_ONLY", "leak")
    r = nsrun.run("import os; print(os.environ.get('NSRUN_TEST_HOST_ONLY'))")
    assert r.stdout == "None\n"


def test_invalid_env_name() -> None:
    with pytest.raises(ValueError):
        nsrun.run("pass", env={"A=B": "x"})


def test_stdin_bytes_and_str() -> None:
    code = "import sys; d = sys.stdin.buffer.read(); print(len(d), d)"
    assert nsrun.run(code, stdin=b"\x00\xffbin").stdout == "5 b'\\x00\\xffbin'\n"
    assert nsrun.run(code, stdin="\u00e9").stdout == "2 b'\\xc3\\xa9'\n"
    assert nsrun.run(code).stdout == "0 b''\n"  # default: empty, never the caller's stdin


def test_output_limit() -> None:
    r = nsrun.run("import sys; sys.stdout.write('x' * 5000); sys.stderr.write('y' * 10)", output_limit=100)
    assert r.ok  # truncation does not end the run
    assert r.stdout == "x" * 100 and r.stdout_truncated and r.stdout_bytes == 5000
    assert r.stderr == "y" * 10 and not r.stderr_truncated
    assert r.limits["output_bytes"] == nsrun.Limit(100, "supervisor")


def test_invalid_utf8_exact_bytes() -> None:
    r = nsrun.run("import sys; sys.stdout.buffer.write(b'a\\xffb')")
    assert r.stdout == "a\ufffdb"
    assert r.stdout_raw == b"a\xffb"


def test_memory_limit() -> None:
    r = nsrun.run("b = bytearray(256 << 20); print('allocated')", memory="64m")
    assert r.exit_code != 0 and "allocated" not in (r.stdout or "")
    # ended as out of memory by whatever enforces the limit here, the peak reported
    assert (r.status, r.exit_code, r.oom_killed) == ("oom_killed", 137, True)
    assert r.memory_peak_bytes is not None and r.memory_peak_bytes >= 64 << 20
    how = r.limits["memory_bytes"].enforced
    assert how in ("cgroup", "cgroup-v1", "supervisor") and r.limits["memory_bytes"].value == 64 << 20
    assert nsrun.run("print(1)", memory=256 << 20).limits["memory_bytes"] == nsrun.Limit(256 << 20, how)


def test_pids_limit() -> None:
    code = """
import os, time
n = 0
try:
    for _ in range(200):
        if os.fork() == 0:
            time.sleep(2); os._exit(0)
        n += 1
    print('all', n)
except OSError:
    print('refused', n)
"""
    r = nsrun.run(code, pids_limit=8)
    assert r.stdout is not None and r.stdout.startswith("refused"), r
    assert int(r.stdout.split()[1]) <= 8
    assert r.limits["pids"] == nsrun.Limit(8, "rlimit")


def test_args_and_file(tmp_path: Path) -> None:
    prog = tmp_path / "prog.py"
    prog.write_text("import sys; print(sys.argv[1:])")
    prog.chmod(0o644)
    tmp_path.chmod(0o755)
    r = nsrun.run(file=prog, args=["a b", "-x", "--"])
    assert r.stdout == "['a b', '-x', '--']\n", r


def test_code_xor_file() -> None:
    with pytest.raises(ValueError):
        nsrun.run()
    with pytest.raises(ValueError):
        nsrun.run("pass", file="/x.py")


def _private_tmp(monkeypatch: pytest.MonkeyPatch) -> Path:
    d = Path(tempfile.mkdtemp(prefix="nsrun-client-test-"))
    os.chmod(d, 0o755)
    monkeypatch.setattr(tempfile, "tempdir", str(d))
    return d


def test_code_file_private_and_deleted(monkeypatch: pytest.MonkeyPatch) -> None:
    d = _private_tmp(monkeypatch)
    try:
        code = "import os; print(os.path.basename(__file__)); print(open(__file__).read().count('MARKER'))"
        r = nsrun.run(code, stdin="in")
        assert r.stdout == "main.py\n1\n", r  # the payload could read its code
        assert list(d.iterdir()) == []       # code and stdin are gone afterwards
        # while it runs: a 0700 directory (no other host user gets in), the code 0644
        seen: list[tuple[int, int]] = []
        real = nsrun._execute

        def spy(argv: list[str], timeout: float | None) -> Result:
            path = Path(argv[-1])
            seen.append((stat.S_IMODE(path.parent.stat().st_mode), stat.S_IMODE(path.stat().st_mode)))
            return real(argv, timeout)

        monkeypatch.setattr(nsrun, "_execute", spy)
        assert nsrun.run("print(1)").ok
        assert seen == [(0o700, 0o644)]
        assert list(d.iterdir()) == []
    finally:
        os.rmdir(d)


def test_code_file_deleted_on_nsrun_error(monkeypatch: pytest.MonkeyPatch) -> None:
    d = _private_tmp(monkeypatch)
    try:
        with pytest.raises(NsrunError):
            nsrun.run("print(1)", image="no-such-image-xyz", stdin=b"x")
        assert list(d.iterdir()) == []
    finally:
        os.rmdir(d)


def test_result_from_json_rejects_other_schema() -> None:
    with pytest.raises(NsrunError, match="schema"):
        Result.from_json({"schema": 2})


def test_nsrun_error_carries_the_cause_and_hint(tmp_path, monkeypatch: pytest.MonkeyPatch,
                                                 nsrun_ready: str) -> None:
    # nsrun where user namespaces are refused (max_user_namespaces 0 in a namespace of
    # our own): the exception pytest shows says why, with nsrun's fix
    wrapper = tmp_path / "nsrun"
    wrapper.write_text("#!/bin/sh\nexec unshare -Ur sh -c 'echo 0 > /proc/sys/user/max_user_namespaces && "
                       f"exec \"$@\"' sh {nsrun_ready} \"$@\"\n")
    wrapper.chmod(0o755)
    monkeypatch.setenv("NSRUN", str(wrapper))
    with pytest.raises(NsrunError) as e:
        nsrun.run("print(1)")
    if os.geteuid() == 0:
        # root's own namespace (unshare -r) maps only host root: nsrun refuses that first
        assert str(e.value).startswith("the payload's host uid: uid 0 here is host root"), e.value
        assert "(hint: run nsrun as an unprivileged user" in str(e.value)
    else:
        assert str(e.value).startswith("cannot create a user namespace: user.max_user_namespaces is 0")
        assert "(hint: allow them" in str(e.value)
    assert e.value.result is not None and e.value.result.exit_code == 125


def test_nsrun_cause_picks_the_cause_line() -> None:
    err = ("nsrun: warning: --cpus is not enforced: no cgroup\n"
           "nsrun: write /proc/3/setgroups: Permission denied\n"
           "nsrun: hint: mount a /proc of nsrun's own pid namespace there\n")
    assert nsrun.nsrun_cause(err) == ("write /proc/3/setgroups: Permission denied "
                                      "(hint: mount a /proc of nsrun's own pid namespace there)")
    assert nsrun.nsrun_cause("python: traceback\n") == ""
    assert nsrun.nsrun_cause("nsrun: hint: h\n", "from the document") == "from the document (hint: h)"
def test_localhost_hostname_and_add_hosts_resolve() -> None:
    code = ("import socket\n"
            "print(sorted({a[4][0] for a in socket.getaddrinfo('localhost', 80, type=socket.SOCK_STREAM)}))\n"
            "print(socket.gethostbyname(socket.gethostname()), socket.gethostbyname('db'), "
            "socket.getaddrinfo('v6', 80)[0][4][0])")
    r = nsrun.run(code, add_hosts={"db": "10.0.0.5", "v6": "2001:db8::1"})
    assert r.ok, r.stderr
    assert r.stdout == "['127.0.0.1', '::1']\n127.0.1.1 10.0.0.5 2001:db8::1\n"
    r = nsrun.run("import socket; print(socket.gethostbyname('db'))", add_hosts=["db:10.0.0.6"])
    assert r.stdout == "10.0.0.6\n"


def test_bad_add_hosts() -> None:
    with pytest.raises(TypeError):
        nsrun.run("pass", add_hosts="db:10.0.0.1")
    with pytest.raises(NsrunError, match="--add-host"):
        nsrun.run("pass", add_hosts={"db": "host-gateway"})
    with pytest.raises(NsrunError, match="not a numeric IP address"):
        nsrun.run("pass", add_hosts=["db:example.org"])
