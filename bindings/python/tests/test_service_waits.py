"""nsrun.service()'s waits (wait_for_log, wait_for_http, health_cmd), a fixed host_port,
labels, nsrun.postgres(user=, password=, dbname=, version=), connection_url(), and the
ready fixtures of nsrun.pytest_plugin (issue 21).

Needs the ``services`` image (redis-server, postgresql) and the ``python`` image.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess

import pytest

import nsrun
from conftest import _cannot_run
from nsrun.pytest_plugin import postgres_service, redis_service  # noqa: F401  (the fixtures)

IMAGE = "services"
# the ready fixtures take their images from here (or the ini options)
os.environ.setdefault("NSRUN_REDIS_IMAGE", IMAGE)
os.environ.setdefault("NSRUN_POSTGRES_IMAGE", IMAGE)


@pytest.fixture(scope="module", autouse=True)
def _images(nsrun_ready: str) -> None:
    p = subprocess.run([nsrun_ready, "images"], capture_output=True, text=True)
    if IMAGE not in p.stdout.split():
        _cannot_run(f"image {IMAGE!r} not installed (make service-image): {p.stdout}{p.stderr}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_ready_fixtures_and_connection_urls(redis_service: nsrun.Service, postgres_service: nsrun.Service) -> None:
    import psycopg2
    import redis

    assert redis_service.connection_url() == f"redis://127.0.0.1:{redis_service.port}/0"
    r = redis.Redis.from_url(redis_service.connection_url())
    r.set("k", "v")
    assert r.save() is True  # the data directory is writable: SAVE works
    assert postgres_service.connection_url() == f"postgresql://postgres@127.0.0.1:{postgres_service.port}/postgres"
    conn = psycopg2.connect(postgres_service.connection_url(), connect_timeout=10)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT current_user, current_database()")
            assert cur.fetchone() == ("postgres", "postgres")
    finally:
        conn.close()


def test_postgres_user_password_dbname_and_version() -> None:
    import psycopg2

    with nsrun.postgres(IMAGE, user="app", password="s3cret pw/@", dbname="appdb", version="15") as pg:
        assert pg.connection_url() == f"postgresql://app:s3cret%20pw%2F%40@127.0.0.1:{pg.port}/appdb"
        conn = psycopg2.connect(pg.connection_url(), connect_timeout=10)
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT current_user, current_database()")
                assert cur.fetchone() == ("app", "appdb")
        finally:
            conn.close()
        # control: the password is checked
        with pytest.raises(psycopg2.OperationalError, match="password authentication failed"):
            psycopg2.connect(host=pg.host, port=pg.port, user="app", password="wrong", dbname="appdb",
                             connect_timeout=10)


def test_postgres_version_not_in_the_image() -> None:
    with pytest.raises(nsrun.NsrunError) as e:
        with nsrun.postgres(IMAGE, version="99", ready_timeout=20):
            pass
    assert "no PostgreSQL 99 in the image" in e.value.stderr


def test_postgres_names_are_checked() -> None:
    with pytest.raises(ValueError):
        with nsrun.postgres(IMAGE, dbname='x"; DROP'):
            pass


def test_fixed_host_port_and_labels() -> None:
    port = _free_port()
    with nsrun.redis(IMAGE, host_port=port, labels={"suite": "waits"}) as r:
        assert r.port == port and r.ports == {6379: port}
        p = subprocess.run([nsrun.find_nsrun(), "ps", "--json", "--filter", "label=suite=waits"],
                           capture_output=True, text=True, check=True)
        assert [s["name"] for s in json.loads(p.stdout)] == [r.name]


# Redis on its port at once, "warm" (a line in its log, a file) a moment later
_LATE = ["sh", "-c", "redis-server --save '' --dir /tmp & sleep 0.5; touch /tmp/warm; echo cache warmed; wait"]


def test_wait_for_log_late_and_never() -> None:
    with nsrun.service(IMAGE, _LATE, port=6379, wait_for_log="^cache warmed$", ready_timeout=30) as s:
        assert "cache warmed" in s.logs()  # returned once the line was there
    with pytest.raises(nsrun.NsrunError) as e:
        with nsrun.service(IMAGE, _LATE, port=6379, wait_for_log="never said", ready_timeout=3):
            pass
    assert "--wait-log" in str(e.value) and "cache warmed" in e.value.stderr


def test_health_cmd_late_and_never() -> None:
    with nsrun.service(IMAGE, _LATE, port=6379, health_cmd="test -e /tmp/warm && redis-cli ping",
                       health_interval=0.2, ready_timeout=30) as s:
        assert "cache warmed" in s.logs()
        p = subprocess.run([nsrun.find_nsrun(), "ps", "--json"], capture_output=True, text=True, check=True)
        health = next(x["health"] for x in json.loads(p.stdout) if x["name"] == s.name)
        assert (health["status"], health["output"]) == ("healthy", "PONG\n")
    with pytest.raises(nsrun.NsrunError) as e:
        with nsrun.service(IMAGE, _LATE, port=6379, health_cmd="redis-cli -p 1 ping", health_interval=0.2,
                           health_retries=2, health_start_period=0, ready_timeout=30):
            pass
    assert "health check failed 2 times in a row" in str(e.value)


_HTTP = """import http.server, time
time.sleep(0.5)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(204 if self.path == "/health" else 503); self.end_headers()
http.server.HTTPServer(("127.0.0.1", 8080), H).serve_forever()"""


def test_wait_for_http_late_and_never() -> None:
    with nsrun.service("python", ["python3", "-c", _HTTP], port=8080, wait_for_http="/health", ready_timeout=30) as s:
        with socket.create_connection((s.host, s.port), timeout=10) as c:
            c.sendall(b"GET /health HTTP/1.0\r\n\r\n")
            assert c.recv(64).startswith(b"HTTP/1.0 204")
    with pytest.raises(nsrun.NsrunError) as e:
        with nsrun.service("python", ["python3", "-c", _HTTP], port=8080, wait_for_http="/other", ready_timeout=3):
            pass
    assert "answered 503" in str(e.value)
