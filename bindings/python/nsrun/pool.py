"""A warm pool (``nsrun pool``, docs/pool.md): snippets run in a fresh sandbox each,
forked from a zygote that already imported the preloaded modules::

    with nsrun.Pool("python", size=4, preload=["json"]) as p:
        r = p.run("print(sum(range(1000)))")
        assert r.stdout == "499500\\n"

The pool is this process's child: it ends with :meth:`Pool.close`, at the end of the
``with`` block, or when this process ends (its stdin is a pipe only we hold).
:meth:`Pool.run` is thread-safe (one connection per call).  ``pool_fixture()`` wraps a
pool as a pytest fixture.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import tempfile
import threading
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from . import NsrunError, Result, find_nsrun

__all__ = ["Pool", "pool_fixture", "request"]


def _recv_exact(s: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise NsrunError("nsrun pool closed the connection before its answer")
        buf += chunk
    return buf


def request(socket_path: str, doc: Mapping[str, Any], timeout: float | None = None) -> dict:
    """Sends one request document to a pool's socket and returns the answer document."""
    body = json.dumps(doc).encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(socket_path)
        s.sendall(struct.pack(">I", len(body)) + body)
        (n,) = struct.unpack(">I", _recv_exact(s, 4))
        return json.loads(_recv_exact(s, n))


class Pool:
    """``nsrun pool --image IMAGE --size SIZE`` as a child of this process.

    ``options``: more nsrun run options (``["--memory", "256m"]``); ``timeout`` the
    default per request, in seconds."""

    def __init__(self, image: str = "python", size: int = 2, *, preload: Sequence[str] = (),
                 timeout: float | None = None, queue: int | None = None,
                 options: Sequence[str] = (), nsrun: str | None = None,
                 start_timeout: float = 120.0) -> None:
        binary = nsrun or find_nsrun()
        self._dir = tempfile.mkdtemp(prefix="nsrun-pool-client-")
        self.socket_path = os.path.join(self._dir, "pool.sock")
        argv = [binary, "pool", "--image", image, "--size", str(size), "--socket", self.socket_path]
        if preload:
            argv += ["--preload", ",".join(preload)]
        if timeout is not None:
            argv += ["--timeout", repr(float(timeout))]
        if queue is not None:
            argv += ["--queue", str(queue)]
        argv += list(options)
        self._proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True)
        self._timeout = timeout
        line = ""
        try:
            import selectors
            with selectors.DefaultSelector() as sel:
                sel.register(self._proc.stdout, selectors.EVENT_READ)
                if sel.select(start_timeout):
                    line = self._proc.stdout.readline().strip()
        finally:
            if line != self.socket_path:
                self._proc.kill()
                _, err = self._proc.communicate()
                os.rmdir(self._dir) if os.path.isdir(self._dir) and not os.listdir(self._dir) else None
                raise NsrunError(f"nsrun pool did not start: {err.strip() or 'no answer'}", stderr=err)
        # the pool's stderr read for as long as it runs, its last lines kept
        # (stderr_tail): a pipe no one reads would stop the pool once full
        self.stderr_tail: deque[str] = deque(maxlen=200)
        self._drain = threading.Thread(target=self._drain_stderr, name="nsrun-pool-stderr", daemon=True)
        self._drain.start()

    def _drain_stderr(self) -> None:
        for line in self._proc.stderr:
            self.stderr_tail.append(line)

    def run(self, code: str, *, stdin: str | None = None, args: Sequence[str] = (),
            env: Mapping[str, str] | None = None, timeout: float | None = None,
            output_limit: int | None = None, memory: int | None = None,
            pids_limit: int | None = None) -> Result:
        """Runs ``code`` (python source) in a fresh sandbox of the pool.  ``memory``
        (bytes) and ``pids_limit`` lower the pool's limits for this request (a value
        above the pool's is refused, an :class:`NsrunError`); ``timeout`` and
        ``output_limit`` above the pool's are capped at the pool's.  A request
        the pool refuses (busy: more waiting than ``queue``) or cannot run is a
        :class:`NsrunError`; whatever the code does is a normal :class:`Result`."""
        doc: dict[str, Any] = {"code": code, "args": list(args)}
        if stdin is not None:
            doc["stdin"] = stdin
        if env:
            doc["env"] = [f"{k}={v}" for k, v in env.items()]
        if timeout is not None:
            doc["timeout"] = float(timeout)
        if output_limit is not None:
            doc["output_limit"] = int(output_limit)
        if memory is not None:
            doc["memory"] = int(memory)
        if pids_limit is not None:
            doc["pids_limit"] = int(pids_limit)
        limit = timeout if timeout is not None else self._timeout
        answer = request(self.socket_path, doc, None if limit is None else limit + 60.0)
        result = Result.from_json(answer)
        # the pool's timings (slot, queued_us, run_us) beside the run's fields
        object.__setattr__(result, "pool", answer.get("pool"))
        if result.status == "error":
            raise NsrunError(f"nsrun pool: {result.error}", result=result)
        return result

    def close(self) -> None:
        """Ends the pool (its sandboxes and zygote with it) and waits for it."""
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._drain.join(timeout=30)
        for f in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
            try:
                f.close()
            except OSError:
                pass
        if os.path.isdir(self._dir):
            try:
                os.rmdir(self._dir)
            except OSError:
                pass

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def pool_fixture(image: str = "python", *, scope: str = "session", **kwargs):
    """A pytest fixture (default scope "session") yielding a :class:`Pool`."""
    import pytest

    @pytest.fixture(scope=scope)
    def _pool() -> Iterator[Pool]:
        with Pool(image, **kwargs) as p:
            yield p

    return _pool
