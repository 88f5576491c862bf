"""Services for tests: a real Redis or PostgreSQL per test module, without a Docker daemon.

``service()`` starts a long-running program with ``nsrun -d``, publishes one container
port on the host's 127.0.0.1 (a free port, picked by the kernel), waits until that port
accepts connections, yields a :class:`Service` (``host``, ``port``) and stops the service
(``nsrun stop``) on exit, whatever happened; if this process dies first, even by SIGKILL,
nsrun stops it (``--stop-with-parent``). ``service_fixture()`` wraps it as a pytest
fixture, so the Testcontainers fixture of a suite becomes::

    import nsrun
    redis_server = nsrun.service_fixture("redis", ["redis-server", "--save", ""], port=6379)

``redis()`` and ``postgres()`` know the commands for the images built with
``nsrun-image build redis --include redis-server`` and ``... postgres --include postgresql``;
their Services have ``connection_url()``.  Ready pytest fixtures (``redis_service``,
``postgres_service``) are in :mod:`nsrun.pytest_plugin`.  Besides the port, a service
can be waited for by a log line (``wait_for_log=``), an HTTP status
(``wait_for_http=``) or a health check run inside (``health_cmd=``).
The service runs as uid 65534 on the image's read-only root; its writable state is in the
tmpfs mounts given (``tmpfs=["/data"]``), gone when it stops.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import socket
import struct
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from . import NsrunError, _add_host_args, find_nsrun, nsrun_cause

__all__ = ["Service", "service", "service_fixture", "redis", "postgres"]

# Extra time, in seconds, for nsrun -d beyond its own --ready-timeout.
_GRACE_S = 30.0


@dataclass(frozen=True)
class Service:
    """A running service.

    Attributes:
        name: its name (``nsrun ps``, ``nsrun logs NAME``).
        host: the host address its port is published on ("127.0.0.1").
        port: the host port that reaches the container's ``port``.
        ports: every published container port -> host port.
        log: the path of its log (the payload's stdout and stderr).
    """

    name: str
    host: str
    port: int
    ports: dict[int, int] = field(default_factory=dict)
    log: str = ""
    url: str = ""

    def connection_url(self) -> str:
        """The URL a client connects with (``redis://...``, ``postgresql://...``) for the
        services of ``redis()`` and ``postgres()``.

        Raises:
            NsrunError: the service is not one whose protocol the client knows.
        """
        if not self.url:
            raise NsrunError(f"service {self.name!r} has no known connection URL (made by service(), "
                             "not redis() or postgres())")
        return self.url

    def logs(self) -> str:
        """What the service wrote so far."""
        try:
            with open(self.log, encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError:
            return ""


def _tmpfs_args(tmpfs: Sequence[str] | Mapping[str, str]) -> list[str]:
    if isinstance(tmpfs, str):
        raise TypeError("tmpfs must be a sequence of paths (or a mapping path -> options), not a string")
    out: list[str] = []
    items = tmpfs.items() if isinstance(tmpfs, Mapping) else ((t, "") for t in tmpfs)
    for path, opts in items:
        out += ["--tmpfs", f"{path}:{opts}" if opts else path]
    return out


@contextlib.contextmanager
def service(
    image: str,
    command: Sequence[str],
    *,
    port: int,
    env: Mapping[str, str] | None = None,
    tmpfs: Sequence[str] | Mapping[str, str] = (),
    extra_ports: Sequence[int] = (),
    name: str | None = None,
    ready_timeout: float = 60.0,
    stop_timeout: float = 5.0,
    memory: int | str | None = None,
    pids_limit: int | None = None,
    network: str = "none",
    add_hosts: Mapping[str, str] | Sequence[str] | None = None,
    stop_with_parent: bool = True,
    host_port: int = 0,
    wait_for_log: str | None = None,
    wait_for_http: str | None = None,
    health_cmd: str | None = None,
    health_interval: float = 0.5,
    health_retries: int = 3,
    health_start_period: float | None = None,
    labels: Mapping[str, str] | None = None,
    options: Sequence[str] = (),
) -> Iterator[Service]:
    """Start ``command`` in ``image`` as a service and yield it once ``port`` accepts.

    Args:
        image: image name in ``$NSRUN_IMAGES``.
        command: the server's argv.
        port: the container port to publish and wait for.
        env: environment variables of the server.
        tmpfs: writable tmpfs mounts: paths, or a mapping path -> "size=64m,mode=0700".
        extra_ports: more container ports to publish (``Service.ports``).
        name: the service's name (default: made up by nsrun).
        ready_timeout: seconds to wait for ``port``; then NsrunError with its last log lines.
        stop_timeout: seconds between SIGTERM and SIGKILL when stopping it.
        memory, pids_limit: as for ``run()`` (default: nsrun's).
        network: "none" (default: nothing but the published ports) or "pasta" (a way
            out for the server; pasta then forwards the published ports).
        add_hosts: more lines of its /etc/hosts, as for ``run()``.
        stop_with_parent: stop the service when this Python process ends, by any
            signal, SIGKILL included (``nsrun -d --stop-with-parent``), so a killed test
            run leaves nothing behind (default). False: it runs until ``nsrun stop``
            when the ``with`` block is not left (a service meant to outlive the process).
        host_port: the host port for ``port`` (default 0: a free one the kernel picks).
        wait_for_log: also wait for a line of its log matching this regular expression
            (POSIX extended, ``nsrun -d --wait-log``).
        wait_for_http: also wait until GET of this path (e.g. "/health") on ``port``
            answers 2xx or 3xx (``--wait-http``).
        health_cmd: a shell command run inside, as ``nsrun exec`` does, every
            ``health_interval`` seconds (``--health-cmd``); the service is waited for until
            it succeeds (``--wait-healthy``), and is unhealthy after ``health_retries``
            failures in a row past ``health_start_period`` (default: ``ready_timeout``).
        labels: labels of the service (``nsrun ps --filter label=KEY=VALUE``).
        options: more nsrun options, as given on the command line.

    Raises:
        NsrunError: it could not be started or did not become ready (nothing is left behind).
    """
    if isinstance(command, str):
        raise TypeError("command must be a sequence of strings (an argv), not a string")
    binary = find_nsrun()
    if not 0 <= int(host_port) <= 65535:
        raise ValueError(f"host_port must be 0 to 65535, not {host_port!r}")
    argv = [binary, "-d", "--json", "-", "--image", image,
            "-p", f"127.0.0.1:{int(host_port)}:{int(port)}", "--wait-port", str(int(port)),
            "--ready-timeout", repr(float(ready_timeout))]
    if wait_for_log is not None:
        argv += ["--wait-log", wait_for_log]
    if wait_for_http is not None:
        if not wait_for_http.startswith("/"):
            raise ValueError(f"wait_for_http must be a path starting with '/', not {wait_for_http!r}")
        argv += ["--wait-http", f"{int(port)}{wait_for_http}"]
    if health_cmd is not None:
        start = float(ready_timeout) if health_start_period is None else float(health_start_period)
        argv += ["--health-cmd", health_cmd, "--health-interval", repr(float(health_interval)),
                 "--health-retries", str(int(health_retries)), "--health-start-period", repr(start),
                 "--wait-healthy"]
    for k, v in (labels or {}).items():
        argv += ["--label", f"{k}={v}"]
    for p in extra_ports:
        argv += ["-p", f"127.0.0.1:0:{int(p)}"]
    if stop_with_parent:
        # this process by its pid, not --stop-with-parent: that reads getppid() after
        # exec, and a process killed in between would leave nsrun watching its reaper
        argv += ["--stop-with-pid", str(os.getpid())]
    if name:
        argv += ["--name", name]
    if network != "none":
        argv += ["--network", network]
    if memory is not None:
        argv += ["--memory", str(memory)]
    if pids_limit is not None:
        argv += ["--pids-limit", str(int(pids_limit))]
    for k, v in (env or {}).items():
        if not k or "=" in k or "\0" in k or "\0" in str(v):
            raise ValueError(f"invalid environment variable name or value: {k!r}")
        argv += ["--env", f"{k}={v}"]
    argv += _tmpfs_args(tmpfs)
    argv += _add_host_args(add_hosts)
    argv += list(options)
    argv += ["--", *[str(a) for a in command]]
    # stop finds the service where start put it, even if XDG_RUNTIME_DIR changes meanwhile
    start_env = dict(os.environ)
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, env=start_env,
                           timeout=float(ready_timeout) + _GRACE_S)
    except subprocess.TimeoutExpired as e:
        raise NsrunError(f"nsrun -d did not return within {ready_timeout + _GRACE_S:.0f} s") from e
    except OSError as e:
        raise NsrunError(f"cannot execute {binary}: {e.strerror}") from e
    if p.returncode != 0:
        # nsrun's cause line first (what failed and why, and its hint), then its verdict
        # on the service when that is another line ("ended before it was ready")
        lines = [ln[len("nsrun: "):] for ln in p.stderr.splitlines() if ln.startswith("nsrun: ")]
        cause = nsrun_cause(p.stderr)
        last = lines[-1] if lines else ""
        msg = (f"{cause}; {last}" if last and not cause.startswith(last) else cause) or f"exit status {p.returncode}"
        raise NsrunError(f"service {image!r} did not start: {msg}", stderr=p.stderr)
    try:
        doc = json.loads(p.stdout)
        ports = {int(x["container_port"]): int(x["host_port"]) for x in doc["ports"]}
        svc = Service(name=doc["name"], host=doc["ports"][0]["host_ip"], port=ports[int(port)], ports=ports,
                      log=doc.get("log", ""))
    except (ValueError, KeyError, IndexError, TypeError) as e:
        raise NsrunError(f"nsrun -d wrote an unexpected document: {p.stdout!r}", stderr=p.stderr) from e
    try:
        yield svc
    finally:
        stop = subprocess.run([binary, "stop", "-t", repr(float(stop_timeout)), svc.name],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, env=start_env)
        if stop.returncode != 0:
            raise NsrunError(f"nsrun stop {svc.name} failed: {stop.stderr.strip()}", stderr=stop.stderr)


def service_fixture(image: str, command: Sequence[str], *, scope: str = "module", **kwargs):
    """A pytest fixture (default scope "module") yielding a :class:`Service` made by
    ``service(image, command, **kwargs)`` and stopping it after the last test of its scope."""
    import pytest

    @pytest.fixture(scope=scope)
    def _service() -> Iterator[Service]:
        with service(image, command, **kwargs) as s:
            yield s

    return _service


@contextlib.contextmanager
def redis(image: str = "redis", **kwargs) -> Iterator[Service]:
    """A Redis server: its working directory a writable tmpfs at /data (so SAVE and
    BGSAVE work; gone with the service), no snapshots of its own; ``connection_url()``
    is ``redis://HOST:PORT/0``.  Keyword arguments as for :func:`service`."""
    kwargs.setdefault("tmpfs", ["/data"])
    with service(image, ["redis-server", "--save", "", "--appendonly", "no", "--dir", "/data"],
                 port=6379, **kwargs) as s:
        yield dataclasses.replace(s, url=f"redis://{s.host}:{s.port}/0")


# PostgreSQL found in the image: /usr/lib/postgresql/VERSION/bin (Debian's layout; the
# highest VERSION unless one is asked for), else the postgres on PATH (the official
# image's); initdb into a tmpfs, no fsync (test data), socket in /tmp; the database
# made in single-user mode before the server starts.  Values come in the environment.
_PG_DATA = "/var/lib/postgresql/data"
POSTGRES_COMMAND = ["sh", "-c", r"""
set -e
bin=
if [ -n "$NSRUN_PG_VERSION" ]; then
    bin=/usr/lib/postgresql/$NSRUN_PG_VERSION/bin
else
    for d in /usr/lib/postgresql/*/bin; do [ -x "$d/postgres" ] && bin=$d; done
    [ -n "$bin" ] || bin=$(dirname "$(command -v postgres || echo /none/postgres)")
fi
if [ ! -x "$bin/postgres" ]; then
    echo "nsrun.postgres: no PostgreSQL ${NSRUN_PG_VERSION:+$NSRUN_PG_VERSION }in the image ($bin)" >&2
    exit 127
fi
auth=trust
if [ -n "$NSRUN_PG_PASSWORD" ]; then
    printf '%s
' "$NSRUN_PG_PASSWORD" >/tmp/.pwfile
    auth=scram-sha-256
fi
"$bin/initdb" --no-sync -D "$PGDATA" -U "$NSRUN_PG_USER" -A "$auth" ${NSRUN_PG_PASSWORD:+--pwfile=/tmp/.pwfile} >/dev/null
rm -f /tmp/.pwfile
if [ "$NSRUN_PG_DB" != postgres ]; then
    echo "CREATE DATABASE \"$NSRUN_PG_DB\"" | "$bin/postgres" --single -D "$PGDATA" -j postgres >/dev/null
fi
exec "$bin/postgres" -D "$PGDATA" -k /tmp -c listen_addresses=127.0.0.1 -c fsync=off \
    -c full_page_writes=off -c synchronous_commit=off -c shared_buffers=32MB
"""]
_PG_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")


def _postgres_ready(host: str, port: int, timeout: float, user: str = "postgres", dbname: str = "postgres") -> None:
    """Waits until PostgreSQL answers a startup message with anything but "starting up":
    it accepts TCP connections (nsrun's --wait-port) before it accepts sessions."""
    startup = b"user\0" + user.encode() + b"\0database\0" + dbname.encode() + b"\0\0"
    packet = struct.pack("!ii", 8 + len(startup), 196608) + startup
    end = time.monotonic() + timeout
    answer = b""
    while time.monotonic() < end:
        try:
            with socket.create_connection((host, port), timeout=2) as s:
                s.sendall(packet)
                answer = s.recv(4096)
        except OSError:
            answer = b""
        if answer[:1] == b"R":  # an authentication request: it takes sessions
            return
        time.sleep(0.05)
    raise NsrunError(f"postgres on {host}:{port} did not accept a session within {timeout:.0f} s: {answer[:200]!r}")


@contextlib.contextmanager
def postgres(image: str = "postgres", *, user: str = "postgres", password: str = "", dbname: str = "postgres",
             version: str | None = None, **kwargs) -> Iterator[Service]:
    """A PostgreSQL server with a superuser ``user`` (password authentication when
    ``password`` is given, else trust) and a database ``dbname``, its data in a tmpfs;
    the yielded Service takes sessions, and ``connection_url()`` is
    ``postgresql://USER[:PASSWORD]@HOST:PORT/DBNAME``.

    Args:
        version: the major version in a Debian image (``/usr/lib/postgresql/VERSION``);
            default the highest there, else ``postgres`` on the image's PATH.
        kwargs: as for :func:`service`.
    """
    from urllib.parse import quote

    for what, v in (("user", user), ("dbname", dbname)):
        if not _PG_NAME.fullmatch(v):
            raise ValueError(f"{what} must be a plain identifier ([A-Za-z_][A-Za-z0-9_]*), not {v!r}")
    if "\0" in password or "\n" in password:
        raise ValueError("password must not hold a NUL or newline")
    if version is not None and not re.fullmatch(r"[0-9]+(\.[0-9]+)?", str(version)):
        raise ValueError(f"version must be a number such as 15 or 9.6, not {version!r}")
    kwargs.setdefault("tmpfs", {"/var/lib/postgresql": "mode=0700,size=256m"})
    kwargs.setdefault("ready_timeout", 60.0)
    kwargs.setdefault("wait_for_log", "database system is ready to accept connections")
    env = dict(kwargs.pop("env", None) or {})
    env.update(PGDATA=_PG_DATA, NSRUN_PG_USER=user, NSRUN_PG_PASSWORD=password, NSRUN_PG_DB=dbname,
               NSRUN_PG_VERSION=str(version or ""))
    with service(image, POSTGRES_COMMAND, port=5432, env=env, **kwargs) as s:
        _postgres_ready(s.host, s.port, float(kwargs["ready_timeout"]), user, dbname)
        cred = quote(user, safe="") + (":" + quote(password, safe="") if password else "")
        yield dataclasses.replace(s, url=f"postgresql://{cred}@{s.host}:{s.port}/{dbname}")
