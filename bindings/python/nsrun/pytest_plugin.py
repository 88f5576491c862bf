"""Ready pytest fixtures: ``redis_service`` and ``postgres_service``, one server each per
test session (per worker under pytest-xdist), stopped after the last test, and stopped
by nsrun if the test run is killed, even by SIGKILL.

Enable them in one of these ways:

* installed with pip (``pip install ./bindings/python``), the plugin is registered
  (entry point ``pytest11``): the fixtures are there, nothing to add;
* ``pytest -p nsrun.pytest_plugin``, or ``pytest_plugins = ["nsrun.pytest_plugin"]`` in the
  top-level ``conftest.py``;
* ``from nsrun.pytest_plugin import redis_service, postgres_service`` in a conftest or
  test module.

The images default to ``redis`` and ``postgres``; set others with the ini options
``nsrun_redis_image`` / ``nsrun_postgres_image`` or the variables NSRUN_REDIS_IMAGE /
NSRUN_POSTGRES_IMAGE.  A test uses ``redis_service.connection_url()``
(``redis://127.0.0.1:PORT/0``) or ``postgres_service.connection_url()``
(``postgresql://postgres@127.0.0.1:PORT/postgres``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from .service import Service, postgres, redis


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("nsrun_redis_image", "image of the redis_service fixture (default: redis)", default="")
    parser.addini("nsrun_postgres_image", "image of the postgres_service fixture (default: postgres)", default="")


def _image(config: pytest.Config, ini: str, env: str, default: str) -> str:
    try:
        from_ini = config.getini(ini)
    except ValueError:  # the plugin imported, not registered: no ini option
        from_ini = ""
    return os.environ.get(env) or from_ini or default


@pytest.fixture(scope="session")
def redis_service(pytestconfig: pytest.Config) -> Iterator[Service]:
    """A Redis server for the session (``nsrun.redis()``)."""
    with redis(_image(pytestconfig, "nsrun_redis_image", "NSRUN_REDIS_IMAGE", "redis")) as s:
        yield s


@pytest.fixture(scope="session")
def postgres_service(pytestconfig: pytest.Config) -> Iterator[Service]:
    """A PostgreSQL server for the session (``nsrun.postgres()``: user and database
    ``postgres``, trust authentication)."""
    with postgres(_image(pytestconfig, "nsrun_postgres_image", "NSRUN_POSTGRES_IMAGE", "postgres")) as s:
        yield s
