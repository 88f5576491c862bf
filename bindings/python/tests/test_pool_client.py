"""nsrun.Pool's own side, against a stand-in for `nsrun pool` (no nsrun needed)."""

from __future__ import annotations

import os
import sys
import textwrap
import time
from pathlib import Path

import nsrun

# prints its --socket once "ready", then writes 1 MiB on stderr, then says so in DONE
FAKE_POOL = textwrap.dedent("""\
    import os, sys
    sock = sys.argv[sys.argv.index("--socket") + 1]
    print(sock, flush=True)
    for i in range(16384):
        sys.stderr.write("nsrun: pool: line %05d of a pool that writes a lot\\n" % i)
    sys.stderr.flush()
    open(os.environ["DONE"], "w").close()
    sys.stderr.write("nsrun: pool: the last line\\n")
    sys.stderr.flush()
    sys.stdin.read()
""")


def test_pool_stderr_is_read_while_it_runs(tmp_path: Path, monkeypatch) -> None:
    """The pool's stderr is read while it runs: a pipe no one read stopped the pool
    (its next write blocked) once 64 KiB were written, e.g. by slots failing to start."""
    fake = tmp_path / "nsrun"
    fake.write_text(f"#!{sys.executable}\n" + FAKE_POOL)
    fake.chmod(0o755)
    done = tmp_path / "done"
    monkeypatch.setenv("DONE", str(done))
    pool = nsrun.Pool("python", size=1, nsrun=str(fake), start_timeout=60)
    try:
        for _ in range(600):
            if done.exists():
                break
            time.sleep(0.1)
        assert done.exists(), "the pool was stopped by its full stderr pipe"
    finally:
        pool.close()
    assert pool.stderr_tail[-1] == "nsrun: pool: the last line\n"
    assert os.path.exists(pool.socket_path) is False
