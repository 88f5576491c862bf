"""podman with nsrun, crun and runc as its OCI runtime (issue 19).

``podman --runtime R run --rm --network none IMAGE /bin/true`` for R in nsrun,
crun and runc (and crun with ``--cgroups disabled``, tried because crun refuses
hybrid cgroups; a runtime that fails is a row saying why), on the same image (a store image's rootfs, imported once into a
podman storage of the bench's own, removed at the end).  The runs are
interleaved, in an order that turns each round, so drift of a shared machine's
load affects every runtime alike; the clock is bench/measure.py's (posix_spawn to
waitpid of podman).  Prints a Markdown table: medians, quartiles, and nsrun's
median against each.  `--network none` for all three: nsrun does not join a
network namespace by path yet, which podman's other networks need.

Usage (as the user whose runs it measures; rootless, run it as that user with an
nsrun it can read):
  NSRUN_IMAGES=... python3 bench/oci-runtimes.py [-n 20] [--image python] build/nsrun
Needs podman, crun and runc (Debian: podman crun runc).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import RunFailed, interleaved, table_row  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=20, help="runs of each runtime (default 20)")
    ap.add_argument("--image", default="python", help="an image of NSRUN_IMAGES with /bin/true (default python)")
    ap.add_argument("nsrun", help="the nsrun binary")
    opts = ap.parse_args()

    store = os.environ.get("NSRUN_IMAGES", "/var/lib/nsrun/images")
    rootfs = Path(store) / opts.image / "rootfs"
    if not rootfs.is_dir():
        print(f"no image {opts.image} in {store} (set NSRUN_IMAGES)", file=sys.stderr)
        return 1
    runtimes = {"nsrun": os.path.abspath(opts.nsrun)}
    for r in ("crun", "runc"):
        path = shutil.which(r) or shutil.which(r, path="/usr/sbin:/sbin")
        if not path:
            print(f"{r} is not installed (apt-get install {r})", file=sys.stderr)
            return 1
        runtimes[r] = path
    podman = shutil.which("podman")
    if not podman:
        print("podman is not installed (apt-get install podman)", file=sys.stderr)
        return 1

    tmp = Path(tempfile.mkdtemp(prefix="oci-runtimes."))
    for d in ("home", "xdg", "tmp"):
        (tmp / d).mkdir(mode=0o700)
    os.environ.clear()
    os.environ.update({"PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "LANG": "C.UTF-8",
                       "HOME": str(tmp / "home"), "XDG_RUNTIME_DIR": str(tmp / "xdg"),
                       "XDG_CONFIG_HOME": str(tmp / "home/.config"), "TMPDIR": str(tmp / "tmp")})
    base = [podman, "--root", str(tmp / "root"), "--runroot", str(tmp / "runroot"), "--storage-driver", "overlay",
            "--cgroup-manager", "cgroupfs", "--events-backend", "none"]
    had_run_nsrun = os.path.exists("/run/nsrun")
    image = "localhost/bench-oci-runtimes"
    # podman asks for more open files and processes (1048576, 4194304) than a caller without
    # CAP_SYS_RESOURCE (root in another sandbox) may set: crun and runc then fail (nsrun sets
    # its own).  Modest limits for all three
    ulimit = ["--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096"]
    cmds = {r: base + ["--runtime", p, "run", "--rm", "--network", "none"] + ulimit + [image, "/bin/true"]
            for r, p in runtimes.items()}
    # crun refuses hybrid cgroups (v1 controllers and a cgroup2 mount): tried also with podman
    # leaving cgroups alone (which podman allows crun only); here it refuses that too
    cmds["crun --cgroups disabled"] = base + ["--runtime", runtimes["crun"], "run", "--rm", "--network", "none",
                                              "--cgroups", "disabled"] + ulimit + [image, "/bin/true"]
    version = subprocess.run([podman, "--version"], capture_output=True, text=True).stdout.strip()
    load_start = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    try:
        # (rootless: files of the image only root may read are left out, as they would be of its view)
        tar = subprocess.Popen(["tar", "--ignore-failed-read", "--warning=no-failed-read", "-C", str(rootfs), "-c",
                                "."], stdout=subprocess.PIPE)
        subprocess.run(base + ["import", "-q", "-", image], stdin=tar.stdout, stdout=subprocess.DEVNULL, check=True)
        tar.wait()
        # (warm-up: page cache, podman's own caches, nsrun's seccomp cache; crun as root on
        # hybrid cgroups fails it: "cgroups in hybrid mode not supported", a row saying so)
        times, failed = interleaved(cmds, opts.n, warmup=2)
        if "nsrun" in failed:
            print(f"nsrun: failed: {failed['nsrun']}", file=sys.stderr)
            return 1
    except RunFailed as e:
        print(e, file=sys.stderr)
        return 1
    finally:
        subprocess.run(base + ["rm", "-af", "-t", "0"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if os.getuid() == 0:
            # podman's overlay storage is a mount of the host's: not left behind
            mounts = [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()]
            for m in sorted((m for m in mounts if m.startswith(str(tmp) + "/")), reverse=True):
                subprocess.run(["umount", "-l", m], stderr=subprocess.DEVNULL)
            if not had_run_nsrun and os.path.isdir("/run/nsrun"):
                shutil.rmtree("/run/nsrun", ignore_errors=True)
        else:
            subprocess.run(base + ["unshare", "rm", "-rf", str(tmp / "root"), str(tmp / "runroot")],
                           stderr=subprocess.DEVNULL)
            pause = tmp / "xdg/libpod/tmp/pause.pid"
            if pause.exists():
                try:
                    os.kill(int(pause.read_text()), 9)
                except (ValueError, OSError):
                    pass
        shutil.rmtree(tmp, ignore_errors=True)

    ref = statistics.median(times["nsrun"])
    load_end = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"`podman run --rm --network none {opts.image} /bin/true`, {opts.n} runs of each runtime, interleaved, "
          f"as uid {os.getuid()} ({version}); load average {load_start} at the start, {load_end} at the end")
    print()
    print("| runtime | median (ms) | 25 % | 75 % | nsrun / this |")
    print("|---|---:|---:|---:|---:|")
    for n, why in failed.items():
        print(f"| {n} | fails here: {why} | | | |")
    for n, xs in times.items():
        print(table_row(n, xs, ref / statistics.median(xs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
