#!/usr/bin/python3
"""docker-py against `nsrun api`, for 27-docker-api.t: one scenario a call,
printing what the test compares.  DOCKER_HOST names the socket."""
import json
import os
import socket
import sys
import time
import urllib.parse

import docker

SOCK = os.environ["DOCKER_HOST"][len("unix://"):]


def client():
    return docker.from_env(timeout=60)


def harness(code):
    """The issue's harness, verbatim but for the command."""
    c = client()
    container = c.containers.run(
        image="python",
        command=["python3", "-c", code],
        network_mode="none",
        mem_limit="256m",
        cap_drop=["ALL"],
        security_opt=["no-new-privileges"],
        read_only=True,
        user="65534:65534",
        detach=True,
    )
    result = container.wait()
    logs = container.logs()
    container.remove()
    print("exit=%d" % result["StatusCode"])
    sys.stdout.write(logs.decode())


FORK = """
import json, os, sys, time
n = 0
err = None
try:
    for _ in range(int(sys.argv[1])):
        pid = os.fork()
        if pid == 0:
            time.sleep(3)
            os._exit(0)
        n += 1
except OSError as e:
    err = e.errno
print(json.dumps([n, err]))
"""


def fork(limit, count):
    """examples/test_isolation.py's fork bomb through the harness's flags and
    docker-py's pids_limit: prints "fork LIMIT COUNT [forked, errno]"."""
    c = client()
    container = c.containers.run(
        image="python",
        command=["python3", "-c", FORK, count],
        network_mode="none",
        mem_limit="256m",
        cap_drop=["ALL"],
        security_opt=["no-new-privileges"],
        read_only=True,
        user="65534:65534",
        pids_limit=int(limit),
        detach=True,
    )
    result = container.wait()
    logs = container.logs().decode().strip()
    container.remove()
    print("fork %s %s %s exit=%d" % (limit, count, logs, result["StatusCode"]))


def run_as(user, code):
    c = client()
    out = c.containers.run("python", ["python3", "-c", code], user=user, remove=False, detach=True)
    out.wait()
    sys.stdout.write(out.logs().decode())
    out.remove()


def refuse(kind, arg=None):
    """A create that must be refused: prints the status and Docker's message."""
    kw = {
        "privileged": dict(privileged=True),
        "devices": dict(devices=["/dev/null:/dev/xnull:rwm"]),
        "pid-host": dict(pid_mode="host"),
        "ipc-host": dict(ipc_mode="host"),
        "net-host": dict(network_mode="host"),
        "cap-add": dict(cap_add=["SYS_ADMIN"]),
        "seccomp-unconfined": dict(security_opt=["seccomp=unconfined"]),
        "bind": dict(volumes={arg: {"bind": "/mnt", "mode": "ro"}}),
        "seccomp-path": dict(security_opt=["seccomp=%s" % arg]),
    }[kind]
    try:
        ctr = client().containers.create("python", ["true"], **kw)
    except docker.errors.APIError as e:
        print("refused %d %s" % (e.status_code, e.explanation))
        return
    ctr.remove(force=True)
    print("created")


def bind_read(host_dir):
    """A bind the roots allow: the container reads the file."""
    c = client()
    ctr = c.containers.run("python", ["cat", "/mnt/f"], volumes={host_dir: {"bind": "/mnt", "mode": "ro"}},
                           detach=True)
    ctr.wait()
    sys.stdout.write(ctr.logs().decode())
    ctr.remove()


def raw(request):
    """Sends bytes on the socket and prints the status line and body of the answer."""
    s = socket.socket(socket.AF_UNIX)
    s.connect(SOCK)
    s.sendall(request)
    s.shutdown(socket.SHUT_WR)
    data = b""
    s.settimeout(10)
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    print(head.split(b"\r\n")[0].decode(errors="replace"))
    print(body.decode(errors="replace").strip())


def garbage():
    raw(b"GARBAGE \x00\xff\r\n\r\n")
    body = b"{not json"
    raw(b"POST /v1.41/containers/create HTTP/1.1\r\nHost: d\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
    body = b"[" * 100000
    raw(b"POST /containers/create HTTP/1.1\r\nHost: d\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s"
        % (len(body), body))
    body = b"x" * (2 << 20)
    raw(b"POST /containers/create HTTP/1.1\r\nHost: d\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s"
        % (len(body), body))
    raw(b"GET /v1.41/nothing/here HTTP/1.1\r\nHost: d\r\nConnection: close\r\n\r\n")
    raw(b"GET /containers/nosuch/json HTTP/1.1\r\nHost: d\r\nConnection: close\r\n\r\n")
    print("ping=%s" % client().ping())


def exchange(request):
    """Sends one whole request (Connection: close) and reads the answer to its end:
    (status, body)."""
    s = socket.socket(socket.AF_UNIX)
    s.connect(SOCK)
    s.sendall(request)
    s.settimeout(30)
    data = b""
    while chunk := s.recv(65536):
        data += chunk
    s.close()
    head, _, rest = data.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), rest.decode(errors="replace").strip()


def post_create(doc, name):
    """POST /containers/create of doc as it is (docker-py would convert its types):
    (status, body)."""
    body = json.dumps(doc).encode()
    return exchange(b"POST /v1.41/containers/create?name=%s HTTP/1.1\r\nHost: d\r\n"
                    b"Content-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s"
                    % (name.encode(), len(body), body))


def types(prefix):
    """Fields as Docker's decoder reads them: a strslice as one string, keys in any
    case; a field of another type is a 400, never left out (and its isolation
    with it).  Each container runs as uid 0 and says its capabilities and
    whether / is writable."""
    probe = ("import os\nprint('capeff', open('/proc/self/status').read().split('CapEff:')[1].split()[0])\n"
             "try:\n open('/x', 'w'); print('root writable')\nexcept OSError as e:\n print('root', e.strerror)\n")
    c = client()
    cases = [("control", {}), ("capdrop-string", {"HostConfig": {"CapDrop": "ALL"}}),
             ("capdrop-beyond", {"HostConfig": {"CapDrop": ["SYS_ADMIN", "cap_net_raw"]}}),
             ("capdrop-lower", {"hostconfig": {"capdrop": ["ALL"]}}),
             ("readonly-lower", {"HostConfig": {"readonlyrootfs": True}}),
             ("dup-last-wins", {"HostConfig": {"CapDrop": [], "CAPDROP": ["ALL"]}})]
    for i, (what, extra) in enumerate(cases):
        doc = {"Image": "python", "User": "0", "Cmd": ["python3", "-c", probe]}
        doc.update(extra)
        status, body = post_create(doc, "%s-t%d" % (prefix, i))
        if status != 201:
            print(what, status, body)
            continue
        ctr = c.containers.get("%s-t%d" % (prefix, i))
        ctr.start()
        ctr.wait(timeout=60)
        print(what, " ".join(ctr.logs().decode().split()))
        ctr.remove(force=True)
    bad = [("ReadonlyRootfs", "true"), ("ReadonlyRootfs", 1), ("Privileged", "yes"), ("CapAdd", 5),
           ("CapDrop", [1]), ("Memory", "1g"), ("Binds", "/x:/y"), ("SecurityOpt", "no-new-privileges")]
    for field, value in bad:
        status, body = post_create({"Image": "python", "HostConfig": {field: value}}, prefix + "-bad")
        print("bad", field, status, body)
    for doc in ({"Image": "python", "Env": "A=1"},
                {"Image": "python", "HostConfig": {"Mounts": [{"Type": "tmpfs", "Target": "/m", "ReadOnly": "yes"}]}},
                {"Image": "python", "HostConfig": {"Mounts": [{"Type": "bind", "Source": "/tmp", "Target": "/m",
                                                               "BindOptions": {"Propagation": "rshared"}}]}},
                {"Image": "python", "HostConfig": {"CapAdd": ["ALL"]}},
                {"Image": "python", "HostConfig": {"CapDrop": ["NET_RAWW"]}},
                {"Image": "python", "HostConfig": {"CapAdd": ["CHOWNN"]}},
                {"Image": "python", "HostConfig": {"Memory": 1}}):
        status, body = post_create(doc, prefix + "-bad")
        print("bad", status, body)
    for filters in ('{"label":5}', '{"label":[1]}', '5', '{"label":["suite=none"]}'):
        status, body = exchange(b"GET /v1.41/containers/json?all=1&filters=%s HTTP/1.1\r\nHost: d\r\n"
                                b"Connection: close\r\n\r\n" % urllib.parse.quote(filters).encode())
        print("filters", filters, status, body)
    # an exec with Privileged would have every capability in Docker
    ctr = c.containers.run("python", ["sleep", "60"], name=prefix + "-ex", detach=True)
    for priv in (True, "yes", False):
        try:
            r = c.api.exec_create(ctr.id, ["true"], privileged=priv)
            print("exec privileged", priv, "created" if r.get("Id") else r)
        except docker.errors.APIError as e:
            print("exec privileged", priv, e.response.status_code, e.explanation)
    ctr.remove(force=True)


def plain_exec(name, seconds):
    """A container, and an exec of sleep SECONDS started without an upgrade (a plain
    POST body, as a client that does not hijack sends): its output streams in the
    response.  Says "streaming", then waits on the response until the server ends."""
    c = client()
    ctr = c.containers.run("python", ["sleep", "600"], name=name, detach=True)
    r = c.api.exec_create(ctr.id, ["sleep", seconds], stdout=True, stderr=True)
    s = socket.socket(socket.AF_UNIX)
    s.connect(SOCK)
    s.sendall(b"POST /v1.41/exec/%s/start HTTP/1.1\r\nHost: d\r\nContent-Type: application/json\r\n"
              b"Content-Length: 2\r\n\r\n{}" % r["Id"].encode())
    print("streaming", flush=True)
    while s.recv(65536):
        pass
    print("ended")


def follow_and_drop(name):
    """A looping container; its logs followed, then the client goes mid-stream."""
    c = client()
    ctr = c.containers.run("python", ["python3", "-c", "import time\nwhile True:\n print('tick', flush=True)\n"
                                      " time.sleep(0.05)"], name=name, detach=True)
    s = socket.socket(socket.AF_UNIX)
    s.connect(SOCK)
    s.sendall(b"GET /v1.41/containers/%s/logs?follow=1&stdout=1&stderr=1 HTTP/1.1\r\nHost: d\r\n\r\n"
              % ctr.id.encode())
    s.settimeout(10)
    got = b""
    while got.count(b"tick") < 3:
        got += s.recv(4096)
    s.close()
    print("followed=%s" % (b"tick" in got))
    time.sleep(0.3)
    print("ping=%s" % c.ping())
    ctr.reload()
    print("status=%s" % ctr.status)


def remove(name):
    client().containers.get(name).remove(force=True)
    print("removed")


def lifecycle():
    """Labels, list filters, stop, ports, auto_remove, inspect, the id and its prefix."""
    c = client()
    a = c.containers.run("python", ["sleep", "60"], labels={"suite": "api", "n": "1"}, detach=True, name="lc-a")
    b = c.containers.create("python", ["true"], labels={"suite": "api", "n": "2"}, name="lc-b")
    print("running=%s" % sorted(x.name for x in c.containers.list(filters={"label": "suite=api"})))
    print("all=%s" % sorted(x.name for x in c.containers.list(all=True, filters={"label": "suite=api"})))
    print("n2=%s" % [x.name for x in c.containers.list(all=True, filters={"label": ["n=2"]})])
    print("created=%s" % c.containers.get("lc-b").status)
    print("prefix=%s" % c.containers.get(a.id[:12]).name)
    # exec: nsrun exec in the running container, its output and exit code
    r = a.exec_run(["sh", "-c", "echo out; echo err >&2; id -u; exit 3"])
    print("exec=%d %s" % (r.exit_code, sorted(r.output.decode().split())))
    r = a.exec_run(["sh", "-c", "cat /proc/[0-9]*/comm"], user="65534")
    print("exec_sees_sleep=%s" % ("sleep" in r.output.decode().split()))
    try:
        b.exec_run(["true"])
        print("exec_created=allowed")
    except docker.errors.APIError as e:
        print("exec_created=%d" % e.status_code)
    a.stop(timeout=2)
    a.reload()
    print("stopped=%s exit=%s" % (a.status, a.attrs["State"]["ExitCode"]))
    a.remove()
    b.remove()
    p = c.containers.run("python", ["python3", "-m", "http.server", "8000", "--bind", "127.0.0.1"],
                         ports={"8000/tcp": None}, detach=True, name="lc-port")
    p.reload()
    binding = p.attrs["NetworkSettings"]["Ports"]["8000/tcp"][0]
    print("bound=%s" % binding["HostIp"])
    ok = False
    deadline = time.monotonic() + 60
    # the published port accepts at once; the server inside answers once it has started
    while not ok and time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", int(binding["HostPort"])), timeout=5) as s:
                s.sendall(b"GET / HTTP/1.0\r\n\r\n")
                ok = s.recv(64).startswith(b"HTTP/1.0 200")
        except OSError:
            pass
        if not ok:
            time.sleep(0.1)
    print("port=%s" % ok)
    p.remove(force=True)
    r = c.containers.run("python", ["true"], auto_remove=True, detach=True, name="lc-rm")
    r.wait()
    gone = False
    for _ in range(50):
        try:
            c.containers.get("lc-rm")
            time.sleep(0.1)
        except docker.errors.NotFound:
            gone = True
            break
    print("auto_removed=%s" % gone)
    # not detached: docker-py reads HostConfig.LogConfig.Type, then the logs, then removes
    out = c.containers.run("python", ["echo", "attached"], remove=True)
    print("run_attached=%s" % out.decode().strip())
    print("images=%s" % sorted(t for i in c.images.list() for t in i.tags if t == "python:latest"))
    print("networks=%s" % sorted(n.name for n in c.networks.list()))


def listed(name):
    print("listed=%s" % [x.name for x in client().containers.list() if x.name == name])


def main(argv):
    """SCENARIO [ARGS...] [::: SCENARIO [ARGS...]]...: one docker-py import for all."""
    while argv:
        n = argv.index(":::") if ":::" in argv else len(argv)
        globals()[argv[0].replace("-", "_")](*argv[1:n])
        sys.stdout.flush()
        argv = argv[n + 1:]


if __name__ == "__main__":
    main(sys.argv[1:])
