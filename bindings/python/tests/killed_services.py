"""A suite that tests/integration/28-services-lifetime.t SIGKILLs at chosen moments of
its own progress: Redis and PostgreSQL from the fixtures, as a user's suite has them.
With the fixtures' default (stopped with this process) nothing of them may be left
afterwards.

Not collected by a plain ``pytest`` run (not ``test_*.py``): it waits to be killed.
NSRUN_SVC_MARK goes into the services' environment (so the caller finds their
processes); the host ports are appended to the file NSRUN_SVC_PORTS once known; each
step of its progress is appended to NSRUN_SVC_PROGRESS as a line (collected,
redis-starting, redis-up, redis-used, pg-starting, pg-up, pg-used, waiting), so the
caller kills it at a step, not after a time that depends on the machine's speed;
NSRUN_SVC_STOP_WITH_PARENT=0 starts them without stopping them with this process
(the control).
"""

from __future__ import annotations

import os
import socket
import time

import pytest

import nsrun

IMAGE = "services"
MARK = {"NSRUN_SVC_MARK": os.environ.get("NSRUN_SVC_MARK", "unset")}
# the test's control turns the fixtures' default off (NSRUN_SVC_STOP_WITH_PARENT=0)
WITH_PARENT = os.environ.get("NSRUN_SVC_STOP_WITH_PARENT", "1") != "0"


def _append(var: str, line: str) -> None:
    path = os.environ.get(var)
    if path:
        with open(path, "a", encoding="ascii") as f:
            f.write(f"{line}\n")


def _progress(step: str) -> None:
    _append("NSRUN_SVC_PROGRESS", step)


_progress("collected")


@pytest.fixture(scope="module")
def redis_server():
    _progress("redis-starting")
    with nsrun.redis(IMAGE, env=MARK, stop_with_parent=WITH_PARENT) as s:
        _append("NSRUN_SVC_PORTS", str(s.port))
        _progress("redis-up")
        yield s


@pytest.fixture(scope="module")
def pg_server():
    _progress("pg-starting")
    with nsrun.postgres(IMAGE, env=MARK, stop_with_parent=WITH_PARENT) as s:
        _append("NSRUN_SVC_PORTS", str(s.port))
        _progress("pg-up")
        yield s


def test_redis(redis_server: nsrun.Service) -> None:
    with socket.create_connection((redis_server.host, redis_server.port), timeout=10) as c:
        c.sendall(b"PING\r\n")
        assert c.recv(16) == b"+PONG\r\n"
    _progress("redis-used")


def test_postgres_then_wait(redis_server: nsrun.Service, pg_server: nsrun.Service) -> None:
    assert pg_server.connection_url().startswith("postgresql://")
    _progress("pg-used")
    _progress("waiting")
    time.sleep(60)  # killed meanwhile
