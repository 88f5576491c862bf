#!/usr/bin/python3
"""docker-py and the docker CLI against `nsrun api`, for 32-docker-io.t: the
interactive streams (exec and attach with stdin and a TTY, resize, exec
detach), and the log's streams and times.  One scenario a call, printing
KEY=VALUE lines the test compares.  DOCKER_HOST names the socket; DOCKER_CLI the docker client (may be absent)."""
import calendar
import os
import pty
import re
import select
import socket
import struct
import subprocess
import sys
import time

import docker

WAIT_S = 60  # generous: the machine may be loaded


def api():
    return docker.APIClient(base_url=os.environ["DOCKER_HOST"], timeout=WAIT_S)


def raw_sock(s):
    """The socket under docker-py's SocketIO."""
    return getattr(s, "_sock", s)


def read_all(sock):
    """Everything until the server closes (WAIT_S at most)."""
    sock.settimeout(WAIT_S)
    data = b""
    while True:
        b = sock.recv(65536)
        if not b:
            return data
        data += b


def demux(data):
    """Docker's 8-byte frames into (stdout, stderr)."""
    out, err = b"", b""
    while len(data) >= 8:
        kind, n = data[0], struct.unpack(">I", data[4:8])[0]
        chunk, data = data[8:8 + n], data[8 + n:]
        if kind == 1:
            out += chunk
        elif kind == 2:
            err += chunk
    return out, err


def until(sock, want, send=None):
    """Reads a TTY's raw stream until want is in it, writing send now and then
    (once a second).  Returns what was read."""
    sock.settimeout(0.2)
    data, end, sent = b"", time.monotonic() + WAIT_S, 0
    while want not in data and time.monotonic() < end:
        if send and time.monotonic() >= sent + 1:
            sock.sendall(send)
            sent = time.monotonic()
        try:
            b = sock.recv(65536)
        except socket.timeout:
            continue
        if not b:
            break
        data += b
    return data


def exec_id(a, ctr, cmd, **kw):
    return a.exec_create(ctr, cmd, **kw)["Id"]


def exec_end(a, eid):
    """The exit code once the instance ended (None if it still runs after WAIT_S)."""
    end = time.monotonic() + WAIT_S
    while time.monotonic() < end:
        i = a.exec_inspect(eid)
        if not i["Running"] and i["ExitCode"] is not None:
            return i["ExitCode"]
        time.sleep(0.1)
    return None


def exec_streams(ctr):
    a = api()
    # stdin: what the client sends, then its half-close as EOF
    eid = exec_id(a, ctr, ["sh", "-c", "cat; echo done; test -t 0 || echo notty"], stdin=True)
    s = raw_sock(a.exec_start(eid, socket=True))
    s.sendall(b"hello from stdin\n")
    s.shutdown(socket.SHUT_WR)
    out, err = demux(read_all(s))
    s.close()
    print("stdin=%r exit=%s" % (out.decode(), exec_end(a, eid)))
    # control: without AttachStdin, stdin is /dev/null: cat ends at once,
    # though the client keeps its side open
    eid = exec_id(a, ctr, ["sh", "-c", "cat; echo done"])
    s = raw_sock(a.exec_start(eid, socket=True))
    out, err = demux(read_all(s))
    s.close()
    print("no_stdin=%r" % out.decode())
    # a TTY: a terminal inside, at the size given before the start
    eid = exec_id(a, ctr, ["sh", "-c", "test -t 0 && echo istty; stty size; read x; echo got=$x; exit 7"],
                  stdin=True, tty=True)
    a.exec_resize(eid, height=33, width=77)
    s = raw_sock(a.exec_start(eid, socket=True, tty=True))
    data = until(s, b"33 77")
    s.sendall(b"typed\r")
    data += read_all(s)
    s.close()
    text = data.decode(errors="replace")
    print("tty=%s size=%s echo=%s got=%s exit=%s" % (
        "istty" in text, "33 77" in text, "typed\r\n" in text, "got=typed\r\n" in text, exec_end(a, eid)))
    # resize while it runs: the size reaches the container's pty
    eid = exec_id(a, ctr, ["sh", "-c", "while read x; do stty size; done"], stdin=True, tty=True)
    s = raw_sock(a.exec_start(eid, socket=True, tty=True))
    a.exec_resize(eid, height=41, width=101)
    data = until(s, b"41 101", send=b"\r")
    s.sendall(b"\x04")
    read_all(s)
    s.close()
    print("resized=%s exit=%s" % (b"41 101" in data, exec_end(a, eid)))
    # Detach: it runs on its own; its end is seen by inspect
    eid = exec_id(a, ctr, ["sh", "-c", "sleep 1; echo hi >/tmp/detached"])
    r = a.exec_start(eid, detach=True)
    print("detach_reply=%r running=%s" % (r, a.exec_inspect(eid)["Running"]))
    code = exec_end(a, eid)
    print("detached_exit=%s file=%r" % (code, a.exec_start(exec_id(a, ctr, ["cat", "/tmp/detached"])).decode()))
    # a start without an upgrade (dockerode's): a -w whose value is "-t" stays -w's
    plain = []
    for wd in ("-t", "/tmp"):
        eid = exec_id(a, ctr, ["pwd"], workdir=wd, tty=True)
        r = a._post_json(a._url("/exec/{0}/start", eid), data={"Detach": False, "Tty": False})
        plain.append(demux(r.content))
    print("plain_wd=%s plain_wd_ok=%r" % (b'"-t": must be an absolute path' in plain[0][1], plain[1][0]))


def attach_streams():
    a = api()
    # docker run -i's way: OpenStdin (docker-py adds StdinOnce), attach with stdin before start
    c = a.create_container("python", ["sh", "-c", "cat; echo end; test -t 0 || echo notty; echo to-stderr >&2"],
                           stdin_open=True)["Id"]
    s = raw_sock(a.attach_socket(c, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}))
    a.start(c)
    s.sendall(b"to the container\n")
    s.shutdown(socket.SHUT_WR)
    out, err = demux(read_all(s))
    s.close()
    code = a.wait(c, timeout=WAIT_S)["StatusCode"]
    print("attach_stdin=%r exit=%d" % (out.decode(), code))
    print("attach_stderr=%r" % err.decode())
    a.remove_container(c)
    # control: without OpenStdin its stdin is /dev/null, whatever the client attaches
    c = a.create_container("python", ["sh", "-c", "cat; echo end"])["Id"]
    s = raw_sock(a.attach_socket(c, params={"stdin": 1, "stdout": 1, "stream": 1}))
    a.start(c)
    out, _ = demux(read_all(s))
    s.close()
    print("attach_no_stdin=%r exit=%d" % (out.decode(), a.wait(c, timeout=WAIT_S)["StatusCode"]))
    a.remove_container(c)
    # docker run -it's way: a TTY, raw output, resize while it runs, ^D ends it
    c = a.create_container("python", ["sh", "-c", "test -t 0 && echo istty; while read x; do stty size; done; exit 4"],
                           stdin_open=True, tty=True)["Id"]
    s = raw_sock(a.attach_socket(c, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}))
    a.start(c)
    a.resize(c, height=27, width=88)
    data = until(s, b"27 88", send=b"\r")
    s.sendall(b"\x04")
    data += read_all(s)
    s.close()
    code = a.wait(c, timeout=WAIT_S)["StatusCode"]
    logs = a.logs(c)
    print("attach_tty=%s resized=%s raw=%s exit=%d logs_raw=%s inspect_tty=%s" % (
        b"istty\r\n" in data, b"27 88" in data, data.count(b"\x01\x00\x00\x00") == 0, code,
        logs.startswith(b"istty\r\n"), a.inspect_container(c)["Config"]["Tty"]))
    first = TS_LINE.match(a.logs(c, timestamps=True).decode().split("\n")[0])
    print("tty_logs_ts=%s" % bool(first and first.group(3) == "istty\r"))
    a.remove_container(c)


def ryuk_refused(port, line):
    """True if the reaper closes a connection that sent line, with no ACK."""
    s = socket.create_connection(("127.0.0.1", port), timeout=WAIT_S)
    got = b""
    try:
        s.sendall(line)
        while True:
            b = s.recv(64)
            if not b:
                break
            got += b
    except (ConnectionResetError, BrokenPipeError):
        pass
    finally:
        s.close()
    return got == b""


def ryuk():
    """Testcontainers' reaper as testcontainers-node starts it, and its protocol."""
    a = api()
    session = "sess-%d" % os.getpid()
    r = a.create_container("testcontainers/ryuk:0.11.0", environment=["RYUK_RECONNECTION_TIMEOUT=1s"],
                           labels={"org.testcontainers.ryuk": "true"},
                           host_config=a.create_host_config(binds=["/var/run/docker.sock:/var/run/docker.sock"],
                                                            privileged=True, port_bindings={8080: None},
                                                            auto_remove=True),
                           ports=[8080], name="ryuk-%d" % os.getpid())["Id"]
    a.start(r)
    end = time.monotonic() + WAIT_S
    while b"Started!" not in a.logs(r) and time.monotonic() < end:
        time.sleep(0.1)
    port = int(a.inspect_container(r)["NetworkSettings"]["Ports"]["8080/tcp"][0]["HostPort"])
    print("ryuk_started=%s" % (b" Started!" in a.logs(r)))
    # one running container of the session; another session's only created (for CI's time)
    mine = [a.create_container("python", ["sleep", "300"], labels={"org.testcontainers.session-id": session})["Id"]]
    other = a.create_container("python", ["sleep", "300"], labels={"org.testcontainers.session-id": "another"})["Id"]
    a.start(mine[0])
    s = socket.create_connection(("127.0.0.1", port), timeout=WAIT_S)
    s.sendall(b"label=org.testcontainers.session-id=%s&label=org.testcontainers=true\n" % session.encode())
    s.sendall(b"label=org.testcontainers.session-id=%s\n" % session.encode())
    acks = b""
    while acks.count(b"ACK\n") < 2:
        b = s.recv(64)
        if not b:
            break
        acks += b
    print("ryuk_acks=%r" % acks)
    print("refused=%s" % [ryuk_refused(port, line) for line in (
        b"label=a=b&name=x\n",                     # a kind it does not serve
        b"label=a=b&&label=c\n",                   # an empty term
        b"&".join(b"label=k%d" % i for i in range(17)) + b"\n",  # more labels than it holds
        b"label=a=" + b"x" * 5000 + b"\n")])      # a line too long to hold
    if os.getuid() == 0:
        # another user's connection (its filter would reap the other session)
        rd, wr = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(rd)
                os.setgroups([])
                os.setgid(65534)
                os.setuid(65534)
                os.write(wr, str(ryuk_refused(port, b"label=org.testcontainers.session-id=another\n")).encode())
            finally:
                os._exit(0)
        os.close(wr)
        print("other_uid_refused=%s" % os.read(rd, 16).decode())
        os.close(rd)
        os.waitpid(pid, 0)
    time.sleep(1.5)  # longer than the reconnection timeout: still connected, nothing is removed
    names = lambda: sorted(c["Id"] for c in a.containers(all=True))
    print("kept_while_connected=%s" % all(c in names() for c in mine))
    s.close()
    end = time.monotonic() + WAIT_S
    while any(c in names() for c in mine) and time.monotonic() < end:
        time.sleep(0.2)
    left = names()
    print("reaped=%s other_kept=%s" % (not any(c in left for c in mine), other in left))
    end = time.monotonic() + WAIT_S
    while r in names() and time.monotonic() < end:
        time.sleep(0.2)
    print("ryuk_gone=%s" % (r not in names()))
    a.remove_container(other, force=True)


def cli_pty(argv, rows, cols, send, want):
    """Runs the docker CLI on a pty of rows x cols, writing send every second
    until want shows; then ^D.  Returns (output, exit code)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(argv[0], argv)
    import fcntl
    import termios
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    data, end, sent = b"", time.monotonic() + WAIT_S, 0
    while time.monotonic() < end:
        if want not in data and time.monotonic() >= sent + 1:
            os.write(fd, send)
            sent = time.monotonic()
        elif want in data and sent:
            os.write(fd, b"\x04")
            sent = 0
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                b = os.read(fd, 65536)
            except OSError:
                break
            if not b:
                break
            data += b
    end = time.monotonic() + 10
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > end:
            os.kill(pid, 9)  # it hangs: the test fails, it does not wait forever
            _, status = os.waitpid(pid, 0)
            break
        time.sleep(0.1)
    os.close(fd)
    return data.decode(errors="replace"), os.waitstatus_to_exitcode(status)


def cli(ctr):
    docker_cli = os.environ.get("DOCKER_CLI", "")
    env = dict(os.environ)
    # docker exec -i: stdin through the hijacked connection, EOF as its end
    p = subprocess.run([docker_cli, "exec", "-i", ctr, "sh", "-c", "tr a-z A-Z"], input=b"piped in\n",
                       capture_output=True, timeout=WAIT_S, env=env)
    print("cli_i=%r rc=%d" % (p.stdout.decode(), p.returncode))
    # docker exec -it through a terminal: its size, what is typed, the exit code
    out, rc = cli_pty([docker_cli, "exec", "-it", ctr, "sh", "-c", "while read x; do stty size; done; exit 3"],
                      29, 91, b"\r", b"29 91")
    print("cli_it_size=%s rc=%d" % ("29 91" in out, rc))
    # docker run -i and -it: the container's stdin through attach
    p = subprocess.run([docker_cli, "run", "-i", "--name", "cli-run-i", "python", "sh", "-c", "tr a-z A-Z; exit 2"],
                       input=b"run with stdin\n", capture_output=True, timeout=WAIT_S, env=env)
    print("cli_run_i=%r rc=%d" % (p.stdout.decode(), p.returncode))
    out, rc = cli_pty([docker_cli, "run", "-it", "--name", "cli-run-it", "python", "sh", "-c",
                       "test -t 0 && echo istty; while read x; do stty size; done; exit 6"], 31, 93, b"\r", b"31 93")
    print("cli_run_it=%s size=%s rc=%d" % ("istty" in out, "31 93" in out, rc))
    # (not --rm: AutoRemove keeps the CLI waiting 2 s after the exit; one rm is quicker)
    p = subprocess.run([docker_cli, "rm", "cli-run-i", "cli-run-it"], capture_output=True, timeout=WAIT_S, env=env)
    print("cli_rm=%r" % p.stdout.decode())


TS_LINE = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.(\d{9})Z (.*)$")


def ts_lines(text):
    """Docker's timestamped lines as [(ns since the epoch, line)] (None for a line without)."""
    got = []
    for line in text.splitlines():
        m = TS_LINE.match(line)
        if not m:
            return None
        sec = calendar.timegm(time.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S"))
        got.append((sec * 10**9 + int(m.group(2)), m.group(3)))
    return got


def logs_streams():
    """logs: stdout and stderr apart, timestamps, since and until (docker-py and the CLI)."""
    a = api()
    c = a.create_container("python", ["sh", "-c", "echo out1; echo err1 >&2; sleep 2; echo out2; echo err2 >&2"],
                           name="logs-streams")["Id"]
    a.start(c)
    a.wait(c, timeout=WAIT_S)
    print("logs_both=%r" % a.logs(c, stdout=True, stderr=True).decode())
    print("logs_out=%r" % a.logs(c, stdout=True, stderr=False).decode())
    print("logs_err=%r" % a.logs(c, stdout=False, stderr=True).decode())
    lines = ts_lines(a.logs(c, timestamps=True).decode())
    print("ts_parse=%s" % (lines is not None and [t for _, t in lines] == ["out1", "err1", "out2", "err2"]))
    times = [n for n, _ in lines or []]
    print("ts_monotonic=%s apart=%s" % (times == sorted(times), len(times) == 4 and times[2] - times[1] >= 10**9))
    # docker-py sends whole seconds: the first one after err1's time is before out2's
    between = (times[1] // 10**9 + 1) if len(times) == 4 else 1
    print("since=%r" % a.logs(c, since=between).decode())
    print("until=%r" % a.logs(c, until=between).decode())
    followed = b"".join(a.logs(c, stream=True, follow=True, timestamps=True, since=between))
    print("follow_since=%s" % [t for _, t in ts_lines(followed.decode()) or []])
    r = a._get(a._url("/containers/{0}/logs", c), params={"stdout": 1, "since": "yesterday"})
    print("bad_since=%d %s" % (r.status_code, "yesterday" in r.json().get("message", "")))
    # the last 2 lines of both streams (out2, err2), then stderr's of them
    tail = a.logs(c, tail=2, stdout=False, stderr=True).decode()
    print("tail_err=%r" % tail)
    docker_cli = os.environ.get("DOCKER_CLI", "")
    if docker_cli:
        p = subprocess.run([docker_cli, "logs", "-t", "logs-streams"], capture_output=True, timeout=WAIT_S)
        out, err = ts_lines(p.stdout.decode()), ts_lines(p.stderr.decode())
        print("cli_t_out=%s cli_t_err=%s" % (out and [t for _, t in out], err and [t for _, t in err]))
        print("cli_t_same=%s" % (out is not None and err is not None and sorted(out + err) == sorted(lines)))
        # the CLI's --since in RFC 3339 with nanoseconds: half-way from err1 to out2, sent as "SEC.NANO"
        mid = (times[1] + times[2]) // 2 if len(times) == 4 else 0
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(mid // 10**9)) + ".%09dZ" % (mid % 10**9)
        p = subprocess.run([docker_cli, "logs", "--since", stamp, "logs-streams"], capture_output=True,
                           timeout=WAIT_S)
        print("cli_since=%r %r rc=%d" % (p.stdout.decode(), p.stderr.decode(), p.returncode))
    a.remove_container(c)


def main(argv):
    """SCENARIO [ARGS...] [::: SCENARIO [ARGS...]]...: one process, one import."""
    scenarios = {"exec_streams": exec_streams, "attach_streams": attach_streams, "cli": cli, "ryuk": ryuk,
                 "logs_streams": logs_streams}
    call = []
    for a in argv[1:] + [":::"]:
        if a != ":::":
            call.append(a)
            continue
        if call:
            scenarios[call[0]](*call[1:])
            sys.stdout.flush()
        call = []


if __name__ == "__main__":
    main(sys.argv)
