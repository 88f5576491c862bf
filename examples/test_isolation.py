"""Escape probes through the nsrun Python client: each test asserts that the escape fails
inside the container, and a control that the same probe works where it should (on the host,
or inside for something allowed), so a broken probe cannot pass as "isolated".

Run:  NSRUN=build/nsrun NSRUN_IMAGES=... PYTHONPATH=bindings/python python3 -m pytest examples/test_isolation.py
(Debian: python3-pytest). From the source tree, NSRUN and PYTHONPATH default to the checkout's.

NSRUN_ISOLATION=reduced|minimal runs every probe in that tier (docs/isolation.md, "Isolation tiers")
and asserts what that tier promises: a probe of a property the tier lacks is skipped,
naming the tier (tests/integration/26-agent-sandboxes-tiers.t runs it so in agent
sandboxes). Unset: full isolation, every probe.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parent.parent
if str(_ROOT / "bindings" / "python") not in sys.path:
    sys.path.insert(0, str(_ROOT / "bindings" / "python"))
if not os.environ.get("NSRUN") and (_ROOT / "build" / "nsrun").is_file():
    os.environ["NSRUN"] = str(_ROOT / "build" / "nsrun")
if not os.environ.get("NSRUN_IMAGES") and Path("/var/tmp/nsrun-check/images").is_dir():
    os.environ["NSRUN_IMAGES"] = "/var/tmp/nsrun-check/images"

import nsrun  # noqa: E402

TIER = os.environ.get("NSRUN_ISOLATION", "full")
ROOT = os.geteuid() == 0


def promised_by(*tiers: str) -> pytest.MarkDecorator:
    """The test checks a property only these tiers promise (docs/isolation.md, "Isolation tiers")."""
    return pytest.mark.skipif(TIER not in tiers, reason=f"the {TIER} tier does not promise this")


@pytest.fixture(scope="module", autouse=True)
def _nsrun_ready() -> None:
    try:
        binary = nsrun.find_nsrun()
        p = subprocess.run([binary, "images"], capture_output=True, text=True)
        if "python" not in p.stdout.split():
            raise nsrun.NsrunError(f"image 'python' not installed: {p.stdout}{p.stderr}")
    except nsrun.NsrunError as e:
        if os.environ.get("NSRUN_TESTS_MUST_WORK") == "1":
            pytest.fail(f"cannot run (NSRUN_TESTS_MUST_WORK=1): {e}")
        pytest.skip(str(e))


# NSRUN_POOL=1: every probe runs as a request of a warm pool (nsrun pool, docs/pool.md)
# instead of a cold run, one pool per set of limits (a slot's limits are the pool's)
POOLED = os.environ.get("NSRUN_POOL") == "1"
_pools: dict[tuple, nsrun.Pool] = {}


@pytest.fixture(scope="session", autouse=True)
def _close_pools() -> Iterator[None]:
    yield
    for p in _pools.values():
        p.close()


def run_code(code: str, tier: str = TIER, *, timeout: float = 20, memory: str | None = None,
             pids_limit: int | None = None, args: list[str] | None = None,
             env: dict[str, str] | None = None) -> nsrun.Result:
    """nsrun.run(code) in tier, or a request of a pool with the same limits (NSRUN_POOL=1)."""
    if POOLED:
        if tier != "full":
            pytest.skip("a pool's requests have full isolation only")
        key = (memory, pids_limit)
        if key not in _pools:
            opts = (["--memory", memory] if memory else []) + (["--pids-limit", str(pids_limit)] if pids_limit else [])
            _pools[key] = nsrun.Pool("python", size=1, options=opts)
        return _pools[key].run(code, timeout=timeout, args=args or [], env=env)
    kw: dict = {k: v for k, v in (("memory", memory), ("pids_limit", pids_limit), ("args", args), ("env", env))
                if v is not None}
    return nsrun.run(code, timeout=timeout, isolation=None if tier == "full" else tier, **kw)


def inside(code: str, tier: str = TIER, **kw: object) -> dict:
    """Run code in the container (in tier); it prints one JSON value as its last line."""
    r = run_code(code, tier, **kw)  # type: ignore[arg-type]
    assert r.status == "exited" and r.exit_code == 0, r
    assert r.isolation in (tier, None), r
    assert r.stdout, r
    return json.loads(r.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- network

@pytest.fixture
def host_server() -> Iterator[int]:
    """A TCP server on the host's 127.0.0.1 that answers b"pong" to every connection."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    srv.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                c, _ = srv.accept()
            except OSError:
                continue
            with c:
                c.sendall(b"pong")

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield srv.getsockname()[1]
    stop.set()
    t.join(2)
    srv.close()


CONNECT = """
import json, socket, sys
res = {}
for host in sys.argv[2:]:
    s = socket.socket(socket.AF_INET)
    s.settimeout(3)
    try:
        s.connect((host, int(sys.argv[1])))
        res[host] = "connected:" + s.recv(4).decode()
    except OSError as e:
        res[host] = type(e).__name__ + ":" + str(e.errno)
    finally:
        s.close()
print(json.dumps(res))
"""


def _host_addresses() -> list[str]:
    """The host's non-loopback IPv4 addresses (may be none)."""
    out = subprocess.run(["hostname", "-I"], capture_output=True, text=True).stdout.split()
    return [a for a in out if ":" not in a and not a.startswith("127.")]


@promised_by("full", "reduced")
def test_network_host_loopback_unreachable(host_server: int) -> None:
    # control: the server answers on the host
    with socket.create_connection(("127.0.0.1", host_server), timeout=3) as c:
        assert c.recv(4) == b"pong"
    addrs = _host_addresses()
    res = inside(CONNECT, args=[str(host_server), "127.0.0.1", *addrs])
    # the container's 127.0.0.1 is its own loopback: nothing listens there
    assert res["127.0.0.1"] in ("ConnectionRefusedError:111",), res
    for a in addrs:  # no route out of the container at all
        assert not res[a].startswith("connected"), res
        assert res[a].split(":")[1] in ("101", "113", "111"), res  # ENETUNREACH / EHOSTUNREACH


@promised_by("full", "reduced")
def test_network_loopback_inside_works() -> None:
    # control: sockets work inside, on the container's own loopback
    code = """
import json, socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
c = socket.create_connection(s.getsockname(), timeout=3); a, _ = s.accept(); a.sendall(b"ok")
print(json.dumps(c.recv(2).decode()))
"""
    assert inside(code) == "ok"


@promised_by("full", "reduced")
def test_network_no_interfaces_but_lo() -> None:
    code = "import json, socket; print(json.dumps(sorted(n for _, n in socket.if_nameindex())))"
    assert inside(code) == ["lo"]
    assert len(socket.if_nameindex()) >= 1  # control: the host lists its interfaces


# ---------------------------------------------------------------- host files

READ = """
import json, os, sys
res = {}
for p in sys.argv[1:]:
    try:
        with open(p) as f:
            res[p] = "read:" + f.read()
    except OSError as e:
        res[p] = type(e).__name__
found = []
for top in ("/home", "/root", "/tmp", "/var/tmp", "/work", "/mnt", "/srv"):
    for d, _, files in os.walk(top, onerror=lambda e: None):
        found += [os.path.join(d, f) for f in files if "nsrun-isolation-secret" in f]
res["found"] = found
print(json.dumps(res))
"""


@pytest.fixture
def secrets(tmp_path: Path) -> Iterator[list[Path]]:
    """A secret file in the test's temp dir and one in its home (world-readable: only the
    mount namespace may hide them, not permissions)."""
    token = f"nsrun-isolation-secret-{os.getpid()}"
    files = [tmp_path / f"{token}.txt"]
    home = Path.home()
    if home.is_dir() and os.access(home, os.W_OK):
        files.append(home / f".{token}")
    for f in list(files):
        try:
            f.write_text(token)
        except PermissionError:  # an outer sandbox (Landlock) keeps the home read-only
            files.remove(f)
            continue
        f.chmod(0o644)
    tmp_path.chmod(0o755)
    yield files
    for f in files:
        f.unlink(missing_ok=True)


@pytest.mark.skipif(TIER == "minimal" and not ROOT, reason="the minimal tier has no chroot unprivileged")
def test_host_files_not_visible(secrets: list[Path]) -> None:
    for f in secrets:  # control: readable on the host
        assert f.read_text().startswith("nsrun-isolation-secret")
    paths = [str(f) for f in secrets] + ["/etc/shadow", str(Path(nsrun.find_nsrun()).resolve())]
    res = inside(READ, args=paths)
    for f in secrets:
        assert res[str(f)] in ("FileNotFoundError", "PermissionError"), res
    assert not res["/etc/shadow"].startswith("read:"), res
    assert res["found"] == [], res


@promised_by("full")
def test_own_code_readable() -> None:
    # control: the probe can read files the container does have
    res = inside(READ, args=["/etc/hostname"])
    assert res["/etc/hostname"].startswith("read:"), res


# ---------------------------------------------------------------- processes

FORK = """
import json, os, sys, time
n = 0
err = None
try:
    for _ in range(int(sys.argv[1])):
        pid = os.fork()
        if pid == 0:
            time.sleep(3)
            os._exit(0)
        n += 1
except OSError as e:
    err = e.errno
print(json.dumps([n, err]))
"""


@promised_by("full", "reduced")
def test_fork_bomb_contained() -> None:
    n, err = inside(FORK, args=["500"], pids_limit=16)
    assert err == 11 and n <= 16, (n, err)  # EAGAIN at the limit


def test_fork_control_under_limit() -> None:
    assert inside(FORK, args=["20"], pids_limit=64) == [20, None]


@promised_by("full")
def test_host_processes_invisible() -> None:
    host = [p for p in os.listdir("/proc") if p.isdigit()]
    assert str(os.getpid()) in host  # control
    pids = inside("import json, os; print(json.dumps([p for p in os.listdir('/proc') if p.isdigit()]))")
    assert len(pids) <= 3, pids  # init, the payload (and maybe a thread of nothing else)


# ---------------------------------------------------------------- environment

def test_environment_secret_absent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NSRUN_ISOLATION_SECRET", "hunter2")
    assert os.environ["NSRUN_ISOLATION_SECRET"] == "hunter2"  # control: set on the host
    env = inside("import json, os; print(json.dumps(dict(os.environ)))")
    assert "NSRUN_ISOLATION_SECRET" not in env
    assert "hunter2" not in json.dumps(env)
    # control: the same probe sees a variable passed on purpose
    env = inside("import json, os; print(json.dumps(dict(os.environ)))", env={"NSRUN_ISOLATION_SECRET": "given"})
    assert env["NSRUN_ISOLATION_SECRET"] == "given"


# ---------------------------------------------------------------- memory

ALLOC = """
import json, sys
try:
    b = b"x" * (int(sys.argv[1]) << 20)
    print(json.dumps("allocated"))
except MemoryError:
    print(json.dumps("MemoryError"))
"""


def test_memory_over_limit_fails() -> None:
    r = run_code(ALLOC, args=["256"], memory="64m")
    assert "allocated" not in (r.stdout or ""), r
    assert r.stdout == '"MemoryError"\n' or r.status in ("signaled", "oom_killed"), r


def test_memory_under_limit_works() -> None:
    assert inside(ALLOC, args=["16"], memory="128m") == "allocated"


# ---------------------------------------------------------------- filesystem writes

WRITE = """
import json, os, sys
res = {}
for d in sys.argv[1:]:
    p = os.path.join(d, "nsrun-isolation-write")
    try:
        with open(p, "w") as f:
            f.write("x")
        os.unlink(p)
        res[d] = "written"
    except OSError as e:
        res[d] = e.errno
print(json.dumps(res))
"""


@promised_by("full")
def test_filesystem_writes() -> None:
    targets = ["/", "/usr", "/usr/bin", "/etc", "/work", "/tmp"]
    res = inside(WRITE, args=targets)
    for d in targets[:-1]:
        assert res[d] in (13, 30), res  # EACCES or EROFS
    assert res["/tmp"] == "written", res  # control: /tmp is writable


@promised_by("full")
def test_tmp_is_private_to_the_run() -> None:
    inside("import json; open('/tmp/nsrun-isolation-mark', 'w').write('x'); print(json.dumps(1))")
    assert inside("import json, os; print(json.dumps(os.path.exists('/tmp/nsrun-isolation-mark')))") is False
    assert not Path("/tmp/nsrun-isolation-mark").exists()


# ---------------------------------------------------------------- the tiers below full

# with full isolation (the default) these ask for their tier themselves

@promised_by("full", "minimal")
def test_minimal_no_network_sockets(host_server: int) -> None:
    with socket.create_connection(("127.0.0.1", host_server), timeout=3) as c:  # control: the host's
        assert c.recv(4) == b"pong"
    code = """
import json, socket, sys
res = {}
for fam in (socket.AF_INET, socket.AF_INET6, socket.AF_NETLINK):
    try:
        socket.socket(fam, socket.SOCK_DGRAM if fam == socket.AF_NETLINK else socket.SOCK_STREAM).close()
        res[fam.name] = "made"
    except OSError as e:
        res[fam.name] = e.errno
a, b = socket.socketpair(); a.send(b"x"); res["AF_UNIX"] = b.recv(1).decode()
print(json.dumps(res))
"""
    res = inside(code, tier="minimal")
    assert res == {"AF_INET": 97, "AF_INET6": 97, "AF_NETLINK": 97, "AF_UNIX": "x"}, res  # EAFNOSUPPORT


def test_lower_tier_file_system_read_only(tmp_path: Path) -> None:
    (tmp_path / "control").write_text("x")  # control: the caller writes there
    targets = ["/", "/usr", "/etc", "/tmp", str(tmp_path)]
    res = inside(WRITE, tier="reduced" if TIER == "full" else TIER, args=targets)
    for d in targets:
        assert res[d] in (2, 13, 30), res  # ENOENT (not in the image), EACCES, EROFS
