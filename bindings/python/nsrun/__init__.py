"""Python client for nsrun, the rootless container runtime for untrusted code.

``run()`` executes a program in an ``nsrun`` container (``nsrun --json -``) and returns
the result document (schema 1, ``docs/result.schema.json``) as a :class:`Result`.

Errors: :class:`NsrunError` is raised for nsrun's *own* failures only — the binary is
missing, the image does not exist, an option is rejected, the container cannot be set up
(the document's status is ``"error"``), or nsrun itself misbehaves (no document, a hang).
Whatever the payload does — exit non-zero, die of a signal, time out, exceed the output
limit — is a normal :class:`Result`, never an exception.

Units: times in seconds for arguments, milliseconds in results (``*_ms``); sizes in bytes
(or nsrun's size strings such as ``"512m"``); ``max_rss_kib`` in KiB.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["run", "Result", "Limit", "NsrunError", "find_nsrun", "SCHEMA_VERSION",
           "Service", "service", "service_fixture", "redis", "postgres", "Pool", "pool_fixture"]

#: The version of the result document this client understands.
SCHEMA_VERSION = 1

# Extra wall-clock time, in seconds, that nsrun gets beyond the payload's --timeout before
# the client considers nsrun itself hung (set-up, teardown, writing the document).
_GRACE_S = 30.0


class NsrunError(Exception):
    """nsrun itself failed (never raised for the payload's own failures).

    Attributes:
        result: the :class:`Result` with status ``"error"`` when nsrun wrote one, else None.
        stderr: what nsrun printed on its standard error (its ``nsrun: ...`` lines), or "".
    """

    def __init__(self, message: str, *, result: Result | None = None, stderr: str = "") -> None:
        super().__init__(message)
        self.result = result
        self.stderr = stderr


@dataclass(frozen=True)
class Limit:
    """One limit of the run: ``value`` in the unit its name says (bytes, ms, processes)
    or None for no limit, and how it was ``enforced``: "cgroup", "cgroup-v1", "rlimit",
    "supervisor", "tmpfs", "userns" or "none" (docs/json.md)."""

    value: int | None
    enforced: str


@dataclass(frozen=True)
class Result:
    """The result of one run; the fields mirror nsrun's ``--json`` document (schema 1).

    status: "exited", "signaled", "timed_out", "oom_killed", "output_limit" or "error".
    exit_code: what the nsrun command exits with (payload's code; 128+N for signal N;
        124 timeout; 125 nsrun failed; 126/127 command cannot be executed / not found).
    signal: e.g. "SIGSEGV" when status is "signaled", else None.
    error: nsrun's own message (also for 126/127), else None.
    wall_time_ms, cpu_user_ms, cpu_system_ms: milliseconds; max_rss_kib: KiB.
    cpu_time_scope: "container" (every process, from the cgroup) or "waited" (without a
        cgroup: only processes that were waited for, a lower bound).
    stdout, stderr: the kept text (at most the output limit, in bytes, of each stream);
        bytes that are not UTF-8 are U+FFFD here — see ``stdout_raw``/``stderr_raw``.
        None when nothing was captured (nsrun failed before the run).
    stdout_truncated, stderr_truncated: the stream passed the output limit.
    stdout_bytes, stderr_bytes: bytes the payload wrote in all, kept or not.
    stdout_base64, stderr_base64: the exact kept bytes, only when not valid UTF-8.
    memory_peak_bytes, pids_peak: the run's cgroup memory.peak (bytes) and pids.peak,
        None without such a cgroup.
    image: the image name (None with a rootfs); limits: each :class:`Limit` by name
        (memory_bytes, pids, cpus, cpu_time_ms, timeout_ms, tmpfs_bytes, output_bytes).
    isolation: the tier the run got ("full", "reduced", "minimal"; docs/isolation.md,
        "Isolation tiers"), None from an nsrun without tiers or when nsrun failed first.
    cgroup_manager: who made the run's cgroup: "systemd" (a scope of the caller's
        systemd manager), "cgroupfs" (nsrun itself), None (no cgroup).
    raw: the whole document as parsed, for fields newer than this client.
    """

    schema: int
    nsrun_version: str
    status: str
    exit_code: int
    signal: str | None
    timed_out: bool
    oom_killed: bool
    error: str | None
    wall_time_ms: int
    cpu_user_ms: int
    cpu_system_ms: int
    max_rss_kib: int
    stdout: str | None
    stdout_truncated: bool
    stdout_bytes: int
    stderr: str | None
    stderr_truncated: bool
    stderr_bytes: int
    image: str | None
    limits: dict[str, Limit]
    stdout_base64: str | None = None
    stderr_base64: str | None = None
    memory_peak_bytes: int | None = None
    pids_peak: int | None = None
    cpu_time_scope: str | None = None
    isolation: str | None = None
    cgroup_manager: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        """True when the payload exited with status 0."""
        return self.status == "exited" and self.exit_code == 0

    @property
    def stdout_raw(self) -> bytes | None:
        """The kept standard output as the exact bytes the payload wrote."""
        return _raw(self.stdout, self.stdout_base64)

    @property
    def stderr_raw(self) -> bytes | None:
        """The kept standard error as the exact bytes the payload wrote."""
        return _raw(self.stderr, self.stderr_base64)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Result:
        """Build a Result from a parsed ``--json`` document.

        Raises:
            NsrunError: the document is not a schema-1 result (missing or mistyped field).
        """
        if doc.get("schema") != SCHEMA_VERSION:
            raise NsrunError(f"nsrun result schema {doc.get('schema')!r} is not {SCHEMA_VERSION}")
        try:
            limits = {k: Limit(value=v["value"], enforced=v["enforced"]) for k, v in doc["limits"].items()}
            return cls(
                schema=int(doc["schema"]),
                nsrun_version=str(doc["nsrun_version"]),
                status=str(doc["status"]),
                exit_code=int(doc["exit_code"]),
                signal=doc["signal"],
                timed_out=bool(doc["timed_out"]),
                oom_killed=bool(doc["oom_killed"]),
                error=doc["error"],
                wall_time_ms=int(doc["wall_time_ms"]),
                cpu_user_ms=int(doc["cpu_user_ms"]),
                cpu_system_ms=int(doc["cpu_system_ms"]),
                max_rss_kib=int(doc["max_rss_kib"]),
                stdout=doc["stdout"],
                stdout_truncated=bool(doc["stdout_truncated"]),
                stdout_bytes=int(doc["stdout_bytes"]),
                stderr=doc["stderr"],
                stderr_truncated=bool(doc["stderr_truncated"]),
                stderr_bytes=int(doc["stderr_bytes"]),
                image=doc["image"],
                limits=limits,
                stdout_base64=doc.get("stdout_base64"),
                stderr_base64=doc.get("stderr_base64"),
                memory_peak_bytes=doc.get("memory_peak_bytes"),
                pids_peak=doc.get("pids_peak"),
                cpu_time_scope=doc.get("cpu_time_scope"),
                isolation=doc.get("isolation"),
                cgroup_manager=doc.get("cgroup_manager"),
                raw=dict(doc),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise NsrunError(f"malformed nsrun result document: {e!r}") from e


def _raw(text: str | None, b64: str | None) -> bytes | None:
    if b64 is not None:
        return base64.b64decode(b64)
    return None if text is None else text.encode("utf-8")


def find_nsrun() -> str:
    """The nsrun binary: ``$NSRUN`` if set, else ``nsrun`` on ``PATH``.

    Raises:
        NsrunError: neither is an executable file.
    """
    env = os.environ.get("NSRUN")
    if env:
        if os.path.isfile(env) and os.access(env, os.X_OK):
            return env
        raise NsrunError(f"NSRUN={env!r} is not an executable file")
    found = shutil.which("nsrun")
    if found is None:
        raise NsrunError("nsrun not found: set NSRUN to the binary or put nsrun on PATH")
    return found


_HELP_CACHE: dict[str, str] = {}


def _supports(binary: str, option: str) -> bool:
    """Whether ``nsrun --help`` lists ``option`` (cached per binary)."""
    if binary not in _HELP_CACHE:
        try:
            p = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=10)
            _HELP_CACHE[binary] = p.stdout + p.stderr
        except (OSError, subprocess.SubprocessError):
            _HELP_CACHE[binary] = ""
    return option in _HELP_CACHE[binary]


def _size(name: str, v: int | str | None) -> str:
    """An nsrun size argument: int bytes, a string such as "512m", or None/0 for none."""
    if v is None:
        return "0"
    if isinstance(v, bool) or not isinstance(v, (int, str)):
        raise TypeError(f"{name} must be int bytes, a size string like '512m', or None")
    if isinstance(v, int) and v < 0:
        raise ValueError(f"{name} must not be negative")
    return str(v)


def _seconds(name: str, v: float | None) -> str:
    if v is None:
        return "0"
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
        raise ValueError(f"{name} must be a non-negative number of seconds or None")
    return repr(float(v))


def _add_host_args(add_hosts: Mapping[str, str] | Sequence[str] | None) -> list[str]:
    """``--add-host`` options: a mapping name -> IP address, or "NAME:IP" strings (docker's
    ``extra_hosts`` in either form); nsrun checks them (a bad one is an NsrunError)."""
    if add_hosts is None:
        return []
    if isinstance(add_hosts, (str, bytes)):
        raise TypeError("add_hosts must be a mapping name -> IP or a sequence of 'NAME:IP', not a string")
    items = [f"{k}:{v}" for k, v in add_hosts.items()] if isinstance(add_hosts, Mapping) else list(add_hosts)
    out: list[str] = []
    for spec in items:
        if not isinstance(spec, str) or "\0" in spec:
            raise ValueError(f"invalid add_hosts entry: {spec!r}")
        out += ["--add-host", spec]
    return out


def run(
    code: str | None = None,
    *,
    file: str | os.PathLike[str] | None = None,
    image: str = "python",
    args: Sequence[str] = (),
    timeout: float | None = 30.0,
    memory: int | str | None = "512m",
    pids_limit: int | None = 128,
    cpus: float | None = None,
    network: str = "none",
    env: Mapping[str, str] | None = None,
    stdin: bytes | str | None = None,
    output_limit: int = 1 << 20,
    seccomp: str = "default",
    add_hosts: Mapping[str, str] | Sequence[str] | None = None,
    isolation: str | None = None,
) -> Result:
    """Run a program in an nsrun container and return its :class:`Result`.

    Exactly one of ``code`` (program text, run with the image's interpreter) and ``file``
    (a host path, mounted read-only at ``/work/<name>``; it must be readable by the
    container's uid — world-readable, or owned by a non-root caller) is given.

    Args:
        code: the program's source text.
        file: a program file on the host instead of ``code``.
        image: image name in ``$NSRUN_IMAGES`` (default "python").
        args: arguments after the program (``sys.argv[1:]``).
        timeout: wall-clock limit in seconds (fractions allowed); None or 0 for none.
        memory: memory per process, int bytes or "512m"/"1g"; None or 0 for none.
        pids_limit: processes of the container; None or 0 for none.
        cpus: CPU limit in CPUs, passed as ``--cpus`` (a cgroup limit; see ``limits["cpus"]``).
        network: "none" (loopback only) or "pasta" (also eth0: a way out through pasta,
            not to the host's loopback; see docs/network.md).
        env: extra environment variables of the payload (names without "=").
        stdin: the payload's standard input (bytes, or str as UTF-8); None: empty.
        output_limit: bytes kept of each of stdout and stderr (nsrun keeps reading and
            discarding past it, so the payload never blocks); must be at least 1.
        seccomp: "default", "strict", "unconfined" or a profile path.
        add_hosts: more lines of the container's /etc/hosts (``--add-host``): a mapping
            name -> IP address, or "NAME:IP" strings.  Every container has localhost
            (127.0.0.1 and ::1) and its hostname there.
        isolation: the tier, "full", "reduced" or "minimal" (``--isolation``); None: the
            highest that works (``Result.isolation`` says which). Below full there is no
            mount: ``code`` then goes to the interpreter on its standard input, so
            ``file`` and ``stdin`` cannot be given.

    Returns:
        The result; the payload's failures (exit status, signal, timeout, output limit)
        are in it, never raised.

    Raises:
        ValueError, TypeError: an argument is invalid (nothing was run).
        NsrunError: nsrun failed (status "error": missing image, rejected option, set-up
            failure; or no binary, no document, or nsrun hung past timeout + 30 s), or
            ``cpus`` was given and this nsrun has no ``--cpus``.
    """
    if (code is None) == (file is None):
        raise ValueError("give exactly one of code and file")
    if isinstance(output_limit, bool) or not isinstance(output_limit, int) or output_limit < 1:
        raise ValueError("output_limit must be an int number of bytes, at least 1")
    if pids_limit is not None and (isinstance(pids_limit, bool) or not isinstance(pids_limit, int) or pids_limit < 0):
        raise ValueError("pids_limit must be a non-negative int or None")
    if isinstance(args, (str, bytes)):
        raise TypeError("args must be a sequence of strings, not a string")

    below_full = isolation in ("reduced", "minimal", "chroot")
    if below_full and (file is not None or stdin is not None):
        raise ValueError(f"isolation={isolation!r}: no mount, so give code, without stdin")

    binary = find_nsrun()
    argv = [
        binary,
        "--json", "-",
        "--image", image,
        "--timeout", _seconds("timeout", timeout),
        "--memory", _size("memory", memory),
        "--pids-limit", str(pids_limit or 0),
        "--network", network,
        "--output-limit", str(output_limit),
        "--security-opt", f"seccomp={seccomp}",
    ]
    if isolation is not None:
        argv += ["--isolation", isolation]
    if cpus is not None:
        if not _supports(binary, "--cpus"):
            raise NsrunError(f"cpus={cpus!r}: this nsrun ({binary}) has no --cpus option yet (see nsrun --help)")
        argv += ["--cpus", repr(float(cpus))]
    for k, v in (env or {}).items():
        if not k or "=" in k or "\0" in k or "\0" in str(v):
            raise ValueError(f"invalid environment variable name or value: {k!r}")
        argv += ["--env", f"{k}={v}"]
    argv += _add_host_args(add_hosts)

    # A private directory: mkdtemp makes it 0700, so no other host user can reach the code
    # or stdin inside it. The code file itself is 0644 because nsrun bind-mounts the file
    # alone into the container, where it is read by the payload's uid 65534: when the caller
    # is root that uid is not the file's owner (root's container maps to 65534 on the host),
    # so a 0600 file is unreadable ("Permission denied"); for a non-root caller the payload
    # maps to the caller and either mode works. The 0700 directory is what keeps it private.
    tmp = tempfile.mkdtemp(prefix="nsrun-py-")
    try:
        if code is not None:
            path = os.path.join(tmp, "main.py")
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(code)
            os.chmod(path, 0o644)  # the umask may have removed bits
        else:
            path = os.fspath(file)  # type: ignore[arg-type]
        if stdin is not None:
            # read by nsrun on the host, so 0600 is enough
            spath = os.path.join(tmp, "stdin")
            data = stdin.encode("utf-8") if isinstance(stdin, str) else bytes(stdin)
            sfd = os.open(spath, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(sfd, "wb") as f:
                f.write(data)
            argv += ["--stdin", spath]
        if below_full:
            # no mount for the file: the interpreter reads the program on its stdin
            argv += ["--stdin", path, "-"]
        else:
            argv.append(os.path.abspath(path))  # never taken for an option, even if it starts with "-"
        argv += [str(a) for a in args]
        return _execute(argv, timeout)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _execute(argv: list[str], timeout: float | None) -> Result:
    guard = None if not timeout else float(timeout) + _GRACE_S
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=guard)
    except subprocess.TimeoutExpired as e:
        raise NsrunError(f"nsrun did not finish within {guard:.0f} s (timeout + {_GRACE_S:.0f} s); killed it",
                         stderr=_text(e.stderr)) from e
    except OSError as e:
        raise NsrunError(f"cannot execute {argv[0]}: {e.strerror}") from e
    stderr = _text(p.stderr)
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        msg = nsrun_cause(stderr) or f"exit status {p.returncode}"
        raise NsrunError(f"nsrun wrote no result document: {msg}", stderr=stderr) from None
    if not isinstance(doc, dict):
        raise NsrunError("nsrun's result is not a JSON object", stderr=stderr)
    result = Result.from_json(doc)
    if result.status == "error":
        raise NsrunError(nsrun_cause(stderr, result.error) or "nsrun failed", result=result, stderr=stderr)
    return result


_NOT_CAUSE = ("warning: ", "debug: ", "hint: ", "published ", "the service's last log lines")


def nsrun_cause(stderr: str, cause: str | None = None) -> str:
    """nsrun's own reason for a failure, for an exception's message: the first of its
    ``nsrun: <what failed>: <why>`` lines (or ``cause``, the result document's
    ``error``, which is that line), then its ``hint:`` if it printed one.  "" when
    nsrun said nothing."""
    lines = [ln[len("nsrun: "):] for ln in stderr.splitlines() if ln.startswith("nsrun: ")]
    cause = cause or next((ln for ln in lines if not ln.startswith(_NOT_CAUSE)), "")
    hint = next((ln[len("hint: "):] for ln in lines if ln.startswith("hint: ")), "")
    return f"{cause} (hint: {hint})" if cause and hint else cause


def _text(b: bytes | str | None) -> str:
    if b is None:
        return ""
    return b if isinstance(b, str) else b.decode("utf-8", "replace")


# services (nsrun -d): after NsrunError and find_nsrun, which service.py imports
from .service import Service, postgres, redis, service, service_fixture  # noqa: E402
from .pool import Pool, pool_fixture  # noqa: E402
