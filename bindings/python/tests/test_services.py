"""nsrun.service(): Redis and PostgreSQL started by fixtures, used through redis-py and
psycopg2 (Debian's python3-redis, python3-psycopg2), also from inside a bwrap sandbox.

Needs the ``services`` image (``make service-image``: redis-server and postgresql).
PostgreSQL is started once per module (initdb is the slow part); Redis is cheap.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

import nsrun
from conftest import _cannot_run

IMAGE = "services"


@pytest.fixture(scope="module", autouse=True)
def _private_state(tmp_path_factory: pytest.TempPathFactory):
    """The services' state directories go to a private runtime directory of this module."""
    run = tmp_path_factory.mktemp("xdg-run")
    run.chmod(0o700)
    old = os.environ.get("XDG_RUNTIME_DIR")
    os.environ["XDG_RUNTIME_DIR"] = str(run)
    p = subprocess.run([nsrun.find_nsrun(), "images"], capture_output=True, text=True)
    if IMAGE not in p.stdout.split():
        _cannot_run(f"image {IMAGE!r} not installed (make service-image): {p.stdout}{p.stderr}")
    yield run
    if old is None:
        del os.environ["XDG_RUNTIME_DIR"]
    else:
        os.environ["XDG_RUNTIME_DIR"] = old


# The Testcontainers fixture of a suite, as a two-line change:
redis_server = nsrun.service_fixture(IMAGE, ["redis-server", "--save", "", "--dir", "/data"], port=6379,
                                     tmpfs=["/data"])


@pytest.fixture(scope="module")
def pg_server():
    with nsrun.postgres(image=IMAGE) as s:
        yield s


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(2)
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_redis_set_and_get(redis_server: nsrun.Service) -> None:
    import redis

    assert redis_server.host == "127.0.0.1" and redis_server.port > 0
    r = redis.Redis(host=redis_server.host, port=redis_server.port)
    for i in range(100):
        r.set(f"key:{i}", f"value {i}")
    assert r.get("key:42") == b"value 42"
    assert r.dbsize() == 100
    assert r.incr("counter") == 1 and r.incr("counter") == 2


def test_postgres_table_round_trip(pg_server: nsrun.Service) -> None:
    import psycopg2

    conn = psycopg2.connect(host=pg_server.host, port=pg_server.port, user="postgres", dbname="postgres",
                            connect_timeout=10)
    try:
        with conn, conn.cursor() as cur:
            cur.execute("CREATE TABLE fruit (id serial PRIMARY KEY, name text NOT NULL)")
            cur.executemany("INSERT INTO fruit (name) VALUES (%s)", [("apple",), ("pear",), ("fig",)])
        with conn.cursor() as cur:
            cur.execute("SELECT name FROM fruit ORDER BY id")
            assert [r[0] for r in cur.fetchall()] == ["apple", "pear", "fig"]
            cur.execute("SELECT current_user, inet_server_addr()::text")
            assert cur.fetchone() == ("postgres", "127.0.0.1/32")
    finally:
        conn.close()


def test_postgres_runs_as_65534_on_a_read_only_root(pg_server: nsrun.Service) -> None:
    import psycopg2

    conn = psycopg2.connect(host=pg_server.host, port=pg_server.port, user="postgres", dbname="postgres")
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT pg_read_file('/proc/self/status')")
            status = cur.fetchone()[0]
            uid = next(line.split()[1] for line in status.splitlines() if line.startswith("Uid:"))
            assert uid == "65534"
            cur.execute("SELECT pg_read_file('/proc/self/mounts')")
            mounts = [m.split() for m in cur.fetchone()[0].splitlines()]
            root = [m for m in mounts if m[1] == "/"][-1]
            assert "ro" in root[3].split(",")
            assert any(m[1] == "/var/lib/postgresql" and m[2] == "tmpfs" for m in mounts)
    finally:
        conn.close()


def test_stopped_on_exit_nothing_left() -> None:
    with nsrun.redis(image=IMAGE) as s:
        assert _listening(s.port)
        listed = subprocess.run([nsrun.find_nsrun(), "ps"], capture_output=True, text=True).stdout
        assert s.name in listed
    assert not _listening(s.port)
    listed = subprocess.run([nsrun.find_nsrun(), "ps"], capture_output=True, text=True).stdout
    assert s.name not in listed
    assert not (Path(os.environ["XDG_RUNTIME_DIR"]) / "nsrun" / s.name).exists()


def test_add_hosts_in_the_service() -> None:
    cmd = ["sh", "-c", "getent hosts db; exec redis-server --save '' --appendonly no --dir /tmp"]
    with nsrun.service(IMAGE, cmd, port=6379, add_hosts={"db": "10.0.0.9"}) as s:
        assert s.logs().split()[:2] == ["10.0.0.9", "db"]


def _pasta_procs(port: int) -> list[str]:
    """This user's pasta processes that forward host port PORT (its "-t ADDR/PORT:..."):
    other suites run beside this one (CI's sanitizer suite, as the same user), and their
    pastas are not this test's (CI of 551cfc2 failed on one)."""
    p = subprocess.run(["pgrep", "-u", str(os.getuid()), "-f", f"^pasta .*-t [^ ]*/{port}:"],
                       capture_output=True, text=True)
    return p.stdout.split()


def test_redis_with_network_pasta_published_through_pasta() -> None:
    """network="pasta": pasta forwards the published port (only loopback traffic here)."""
    import redis

    if not os.access("/dev/net/tun", os.R_OK | os.W_OK):
        _cannot_run("/dev/net/tun is not open to this user (make check makes it 0666, as udev does)")
    with nsrun.redis(image=IMAGE, network="pasta") as s:
        assert len(_pasta_procs(s.port)) == 1
        r = redis.Redis(host=s.host, port=s.port)
        assert r.set("k", "through pasta") and r.get("k") == b"through pasta"
    assert not _listening(s.port)
    assert _pasta_procs(s.port) == []


def test_stopped_when_the_body_raises() -> None:
    with pytest.raises(KeyError):
        with nsrun.redis(image=IMAGE) as s:
            raise KeyError("boom")
    assert not _listening(s.port)


def test_a_server_that_never_listens_is_an_error() -> None:
    with pytest.raises(nsrun.NsrunError) as e:
        with nsrun.service(IMAGE, ["sh", "-c", "echo no listening here; sleep 30"], port=7000, ready_timeout=1):
            pass
    assert "not ready within 1s" in str(e.value)
    assert "no listening here" in e.value.stderr


def _stage_for() -> tuple[Path, str, str | None]:
    """A world-readable copy of the client, the nsrun binary and the profiles for a
    caller that cannot read the checkout: returns (package dir, nsrun, profiles)."""
    stage = Path(tempfile.mkdtemp(prefix="nsrun-bwrap-", dir="/tmp"))
    stage.chmod(0o755)
    shutil.copytree(Path(nsrun.__file__).resolve().parent, stage / "py" / "nsrun")
    shutil.copy2(nsrun.find_nsrun(), stage / "nsrun")
    profiles = os.environ.get("NSRUN_SECCOMP_PROFILES")
    if profiles:
        shutil.copytree(profiles, stage / "profiles")
        profiles = str(stage / "profiles")
    for root, dirs, files in os.walk(stage):
        for d in dirs:
            os.chmod(os.path.join(root, d), 0o755)
        for f in files:
            os.chmod(os.path.join(root, f), 0o755)
    return stage, str(stage / "nsrun"), profiles


def test_redis_and_postgres_inside_bwrap(tmp_path: Path) -> None:
    """An agent sandbox (bwrap --unshare-all --share-net) starts both through the fixtures.

    Run by root, the sandbox is entered as uid 65534 (setpriv): bwrap run by root mounts
    /proc with read-only overmounts (/proc/irq, /proc/bus), which forbid the fresh /proc
    of a nested container (the kernel's mnt_already_visible), and an agent's sandbox is
    an unprivileged user's anyway."""
    bwrap = shutil.which("bwrap")
    if not bwrap:
        _cannot_run("bwrap not installed (Debian: bubblewrap)")
    pkg = Path(nsrun.__file__).resolve().parent.parent
    binary, profiles = nsrun.find_nsrun(), os.environ.get("NSRUN_SECCOMP_PROFILES")
    prefix: list[str] = []
    stage = None
    if os.geteuid() == 0:
        stage, binary, profiles = _stage_for()
        pkg = stage / "py"
        prefix = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]
        workdir = stage
    else:
        workdir = tmp_path
    script = workdir / "agent.py"
    script.write_text(textwrap.dedent(f"""
        import nsrun, psycopg2, redis
        with nsrun.redis(image={IMAGE!r}) as r:
            c = redis.Redis(host=r.host, port=r.port)
            c.set("from", "bwrap")
            assert c.get("from") == b"bwrap"
        with nsrun.postgres(image={IMAGE!r}) as p:
            conn = psycopg2.connect(host=p.host, port=p.port, user="postgres", dbname="postgres")
            with conn, conn.cursor() as cur:
                cur.execute("CREATE TABLE t (v text)")
                cur.execute("INSERT INTO t VALUES ('inside bwrap')")
                cur.execute("SELECT v FROM t")
                assert cur.fetchone()[0] == "inside bwrap"
            conn.close()
        print("agent ok")
    """))
    script.chmod(0o644)
    workdir.chmod(0o755)
    binds: list[str] = []
    for p in {str(pkg), str(Path(binary).resolve().parent), str(workdir), profiles or ""}:
        if p:
            binds += ["--ro-bind", p, p]
    env = dict(os.environ, PYTHONPATH=str(pkg), XDG_RUNTIME_DIR="/tmp/run", NSRUN=binary, HOME="/tmp")
    if profiles:
        env["NSRUN_SECCOMP_PROFILES"] = profiles
    argv = [*prefix, bwrap, "--unshare-all", "--share-net", "--die-with-parent", "--ro-bind", "/", "/",
            "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--dir", "/tmp/run", "--chmod", "0700", "/tmp/run",
            *binds, sys.executable, str(script)]
    try:
        p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=180)
    finally:
        if stage:
            shutil.rmtree(stage, ignore_errors=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.strip() == "agent ok"


def test_a_service_that_cannot_start_says_why(tmp_path: Path) -> None:
    # the first nsrun line (what failed and why) is in the message, not only the verdict
    missing = tmp_path / "no-such-volume"
    with pytest.raises(nsrun.NsrunError) as e:
        with nsrun.service(IMAGE, ["sleep", "30"], port=7000, ready_timeout=5,
                           options=["-v", f"{missing}:/data"]):
            pass
    assert f'volume: "{missing}": No such file or directory' in str(e.value)
