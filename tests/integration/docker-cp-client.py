"""docker-py's get_archive/put_archive and the archive endpoint's HEAD against nsrun
api, for 34-docker-cp.t: prints KEY=VALUE lines that the test checks.

Usage: docker-cp-client.py CONTAINER HOST_SECRET MARKER INSIDE (/tmp/inside.txt's line)

Also Ryuk's peer check where the api was started with NSRUN_RYUK_PEER=proc (the
/proc/net/tcp fallback of a sandbox that denies sock_diag): our connection gets its
ACK, another uid's (as root) is closed unanswered.
"""
import base64
import io
import json
import os
import socket
import sys
import tarfile
import time

import docker


def tar_of(*members):
    """An uncompressed tar of (TarInfo keyword dict, data) members."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for kw, data in members:
            ti = tarfile.TarInfo(kw.pop("name"))
            for k, v in kw.items():
                setattr(ti, k, v)
            ti.size = len(data) if ti.type == tarfile.REGTYPE else 0
            tf.addfile(ti, io.BytesIO(data) if ti.type == tarfile.REGTYPE else None)
    return buf.getvalue()


def get_bytes(ctr, path):
    """The tar's bytes, or the HTTP status of the refusal."""
    try:
        bits, stat = ctr.get_archive(path)
        return b"".join(bits), stat
    except docker.errors.APIError as e:
        return e.status_code, str(e)


def put(ctr, path, data):
    try:
        return ctr.put_archive(path, data), ""
    except docker.errors.APIError as e:
        return e.status_code, str(e)


def ryuk_answer(port, line):
    """What the reaper answers line with (b"" when it closes unanswered)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=60)
    got = b""
    try:
        s.sendall(line)
        while not got.endswith(b"\n"):
            b = s.recv(64)
            if not b:
                break
            got += b
    except (ConnectionResetError, BrokenPipeError):
        pass
    finally:
        s.close()
    return got


def ryuk_fallback(api):
    r = api.create_container("testcontainers/ryuk:0.11.0", environment=["RYUK_RECONNECTION_TIMEOUT=1s"],
                             host_config=api.create_host_config(port_bindings={8080: None}, auto_remove=True),
                             ports=[8080], name="ryuk-cp-%d" % os.getpid())["Id"]
    api.start(r)
    end = time.monotonic() + 60
    while b"Started!" not in api.logs(r) and time.monotonic() < end:
        time.sleep(0.1)
    port = int(api.inspect_container(r)["NetworkSettings"]["Ports"]["8080/tcp"][0]["HostPort"])
    line = b"label=nsrun-test-cp=none\n"
    other = "n/a"
    if os.getuid() == 0:
        rd, wr = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(rd)
                os.setgroups([])
                os.setgid(65534)
                os.setuid(65534)
                os.write(wr, repr(ryuk_answer(port, line)).encode())
            finally:
                os._exit(0)
        os.close(wr)
        other = os.read(rd, 64).decode()
        os.close(rd)
        os.waitpid(pid, 0)
    mine = ryuk_answer(port, line)
    return "ryuk_proc_mine=%r ryuk_proc_other=%s" % (mine, other)


def main():
    name, secret, marker, inside = sys.argv[1], sys.argv[2], sys.argv[3].encode(), sys.argv[4].encode()
    client = docker.from_env(timeout=120)
    ctr = client.containers.get(name)
    out = []

    # GET, and its stat: a file the container has (the control for the probes)
    data, stat = get_bytes(ctr, "/tmp/inside.txt")
    names = tarfile.open(fileobj=io.BytesIO(data)).getnames() if isinstance(data, bytes) else data
    out.append("get_ok=%s stat=%s,%s" % (isinstance(data, bytes) and inside in data and names == ["inside.txt"],
                                         stat.get("name") if isinstance(stat, dict) else stat,
                                         stat.get("size") if isinstance(stat, dict) else ""))
    # HEAD: Docker's header, base64 of the JSON stat
    api = client.api
    r = api.head(api._url("/containers/{0}/archive", ctr.id), params={"path": "/tmp/inside.txt"})
    head = json.loads(base64.b64decode(r.headers.get("X-Docker-Container-Path-Stat", "e30=")))
    out.append("head=%d name=%s size=%s dir_mode=%s" % (
        r.status_code, head.get("name"), head.get("size"),
        bool(json.loads(base64.b64decode(api.head(api._url("/containers/{0}/archive", ctr.id),
                                                  params={"path": "/tmp"}).headers.get(
            "X-Docker-Container-Path-Stat", "e30="))).get("mode", 0) & (1 << 31))))
    r = api.head(api._url("/containers/{0}/archive", ctr.id), params={"path": "/nope"})
    out.append("head_missing=%d" % r.status_code)

    # the payload's symlinks to the host's file and directory: followed, if at all,
    # inside the container's root, where that path does not exist
    leaked = False
    for p in ("/tmp/link/", "/tmp/dirlink/secret", "/tmp/../../.." + secret):
        d, _ = get_bytes(ctr, p)
        if isinstance(d, bytes) and marker in d:
            leaked = True
            out.append("leak_from=%s" % p)
    d, _ = get_bytes(ctr, "/tmp/link")
    leaked = leaked or (isinstance(d, bytes) and marker in d)
    members = tarfile.open(fileobj=io.BytesIO(d)).getmembers() if isinstance(d, bytes) else []
    out.append("link_as_link=%s" % (len(members) == 1 and members[0].issym() and members[0].linkname == secret))
    d, _ = get_bytes(ctr, "/../../../../.." + secret)
    leaked = leaked or (isinstance(d, bytes) and marker in d)
    out.append("dotdot_missing=%s" % (d if not isinstance(d, bytes) else "sent"))
    out.append("host_file_leaked=%s" % leaked)
    # control: a symlink to the container's own file, followed inside (trailing /. is a dir's)
    d, _ = get_bytes(ctr, "/tmp/innerdir/../inside.txt")
    out.append("inner_dotdot_ok=%s" % (isinstance(d, bytes) and inside in d))

    # the payload's links to the archive process's own fds (/proc/self/fd/N, N 3..20,
    # as CVE-2024-21626): none of nsrun's host fds is open there, so each is missing
    # for HEAD, GET and PUT; /proc/self/root is the container's own root
    url = api._url("/containers/{0}/archive", ctr.id)
    opened = []
    for n in range(3, 21):
        h = api.head(url, params={"path": "/tmp/fd%d/." % n}).status_code
        d, _ = get_bytes(ctr, "/tmp/fd%d/." % n)
        s, _ = put(ctr, "/tmp/fd%d/" % n, tar_of(({"name": "magic-%d.txt" % n}, b"MAGIC")))
        if h != 404 or d != 404 or s != 404:
            opened.append("%d:%s,%s,%s" % (n, h, d if not isinstance(d, bytes) else "sent", s))
    out.append("magic_fd_open=%s" % (",".join(opened) or "none"))
    d, _ = get_bytes(ctr, "/tmp/selfroot/tmp/inside.txt")
    out.append("magic_root_ok=%s" % (inside in d if isinstance(d, bytes) else d == 404))
    # control: an ordinary link to a directory of the container's is followed
    d, _ = get_bytes(ctr, "/tmp/innerdirlink/.")
    out.append("inner_dirlink_ok=%s" % (isinstance(d, bytes) and b"INNERFILE" in d))

    # PUT: a plain member (control), then absolute, "..", a device node, setuid
    status, _ = put(ctr, "/data", tar_of(({"name": "plain.txt"}, b"PLAIN")))
    out.append("put_plain=%s" % status)
    status, msg = put(ctr, "/data", tar_of(({"name": secret + ".abs"}, b"ABS")))
    out.append("put_abs=%s" % status)
    status, msg = put(ctr, "/data", tar_of(({"name": "../dotdot.txt"}, b"DOTDOT")))
    out.append("put_dotdot=%s" % status)
    status, msg = put(ctr, "/data", tar_of(({"name": "null", "type": tarfile.CHRTYPE, "devmajor": 1,
                                             "devminor": 3}, b"")))
    out.append("put_dev=%s dev_msg=%s" % (status, "device node" in msg))
    status, _ = put(ctr, "/data", tar_of(({"name": "fifo", "type": tarfile.FIFOTYPE}, b"")))
    out.append("put_fifo=%s" % status)
    status, _ = put(ctr, "/data", tar_of(({"name": "suid", "mode": 0o4755}, b"#!/bin/sh\n")))
    out.append("put_suid=%s" % status)
    # a read-only root refuses, Docker's way; the container's tmpfs takes it
    status, msg = put(ctr, "/etc", tar_of(({"name": "x.txt"}, b"X")))
    out.append("put_ro=%s ro_msg=%s" % (status, "read-only" in msg))
    status, _ = put(ctr, "/tmp", tar_of(({"name": "tmp.txt"}, b"TMP")))
    out.append("put_tmp=%s" % status)
    status, _ = put(ctr, "/tmp/inside.txt", tar_of(({"name": "x"}, b"X")))
    out.append("put_notdir=%s" % status)
    status, _ = put(ctr, "/nope", tar_of(({"name": "x"}, b"X")))
    out.append("put_missing=%s" % status)
    # a PUT whose URL only ends like one (/images/x/containers/ID/archive): route's
    # refusal (4xx/5xx), and
    # nothing extracted (the control: put_tmp above, the same body by the real URL)
    r = api._put(api._url("/images/x/containers/{0}/archive", ctr.id), params={"path": "/tmp"},
                 data=tar_of(({"name": "wrongurl.txt"}, b"WRONG")))
    d, _ = get_bytes(ctr, "/tmp/wrongurl.txt")
    out.append("put_wrong_url_refused=%s extracted=%s" % (r.status_code >= 400, d != 404))
    out.append(ryuk_fallback(api))
    print("\n".join(out))


if __name__ == "__main__":
    main()
