"""Shared set-up for the client's tests and examples/test_isolation.py: find nsrun and the
``python`` image, and make ``import nsrun`` work from the source tree.

NSRUN (binary), NSRUN_IMAGES (image store) as for nsrun; NSRUN_TESTS_MUST_WORK=1 turns
"cannot run here" into a failure instead of a skip.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent
_PKG = _HERE.parent  # bindings/python
if str(_PKG) not in sys.path:
    sys.path.insert(0, str(_PKG))

# the checkout's build when NSRUN is not set (bindings/python/tests -> repo root)
_BUILT = _PKG.parent.parent / "build" / "nsrun"
if not os.environ.get("NSRUN") and _BUILT.is_file():
    os.environ["NSRUN"] = str(_BUILT)
if not os.environ.get("NSRUN_IMAGES") and Path("/var/tmp/nsrun-check/images").is_dir():
    os.environ["NSRUN_IMAGES"] = "/var/tmp/nsrun-check/images"


def _cannot_run(why: str) -> None:
    if os.environ.get("NSRUN_TESTS_MUST_WORK") == "1":
        pytest.fail(f"cannot run (skip forbidden by NSRUN_TESTS_MUST_WORK=1): {why}")
    pytest.skip(why)


@pytest.fixture(scope="session")
def nsrun_ready() -> str:
    """The nsrun binary, after checking that it can list the python image."""
    import nsrun

    try:
        binary = nsrun.find_nsrun()
    except nsrun.NsrunError as e:
        _cannot_run(str(e))
    p = subprocess.run([binary, "images"], capture_output=True, text=True)
    if p.returncode != 0 or "python" not in p.stdout.split():
        _cannot_run(f"image 'python' not installed (NSRUN_IMAGES={os.environ.get('NSRUN_IMAGES')}): {p.stdout}{p.stderr}")
    return binary
