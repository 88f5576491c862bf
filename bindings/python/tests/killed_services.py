"""A suite that tests/integration/28-services-lifetime.t SIGKILLs at a random moment: Redis
and PostgreSQL from the fixtures, as a user's suite has them.  With the fixtures'
default (``--stop-with-parent``) nothing of them may be left afterwards.

Not collected by a plain ``pytest`` run (not ``test_*.py``): it waits to be killed.
NSRUN_SVC_MARK goes into the services' environment (so the caller finds their
processes); the host ports are appended to the file NSRUN_SVC_PORTS once known;
NSRUN_SVC_STOP_WITH_PARENT=0 starts them without --stop-with-parent (the control).
"""

from __future__ import annotations

import os
import time

import pytest

import nsrun

IMAGE = "services"
MARK = {"NSRUN_SVC_MARK": os.environ.get("NSRUN_SVC_MARK", "unset")}
# the test's control turns the fixtures' default off (NSRUN_SVC_STOP_WITH_PARENT=0)
WITH_PARENT = os.environ.get("NSRUN_SVC_STOP_WITH_PARENT", "1") != "0"


def _note(s: nsrun.Service) -> None:
    with open(os.environ["NSRUN_SVC_PORTS"], "a", encoding="ascii") as f:
        f.write(f"{s.port}\n")


redis_server = nsrun.service_fixture(IMAGE, ["redis-server", "--save", "", "--dir", "/data"], port=6379,
                                     tmpfs=["/data"], env=MARK, stop_with_parent=WITH_PARENT)


@pytest.fixture(scope="module")
def pg_server():
    with nsrun.postgres(image=IMAGE, env=MARK, stop_with_parent=WITH_PARENT) as s:
        yield s


def test_redis(redis_server: nsrun.Service) -> None:
    _note(redis_server)


def test_postgres_then_wait(redis_server: nsrun.Service, pg_server: nsrun.Service) -> None:
    _note(pg_server)
    time.sleep(60)  # killed meanwhile
