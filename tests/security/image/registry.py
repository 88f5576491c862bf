#!/usr/bin/env python3
"""registry.py - a loopback registry (the v2 API's GETs and HEADs) serving one
OCI layout as test/img:1, that stalls where asked: STALL=manifest never
answers a manifest request; STALL=blob sends the headers and half of the
largest blob, then nothing, forever. Touches FLAG when it stalls.

usage: registry.py PORT LAYOUT STALL FLAG"""
import http.server, json, os, socketserver, sys, time

port, layout, stall, flag = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
index = json.load(open(os.path.join(layout, "index.json")))
mdesc = index["manifests"][0]
blobs = os.path.join(layout, "blobs", "sha256")
largest = max(os.listdir(blobs), key=lambda b: os.path.getsize(os.path.join(blobs, b)))


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def stalled(self):
        open(flag, "w").close()
        time.sleep(3600)

    def send(self, body, ctype, head, partial=False):
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Docker-Content-Digest", "sha256:" + self.digest)
        self.end_headers()
        if head:
            return
        if partial:
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.stalled()
        self.wfile.write(body)

    def handle_any(self, head):
        p = self.path.split("?")[0]
        if p == "/v2/":
            self.digest = ""
            return self.send(b"{}", "application/json", head)
        if p.startswith("/v2/test/img/manifests/"):
            if stall == "manifest":
                self.stalled()
            self.digest = mdesc["digest"].split(":")[1]
            body = open(os.path.join(blobs, self.digest), "rb").read()
            return self.send(body, mdesc["mediaType"], head)
        if p.startswith("/v2/test/img/blobs/sha256:"):
            self.digest = p.rsplit(":", 1)[1]
            if "/" in self.digest or not os.path.exists(os.path.join(blobs, self.digest)):
                self.send_error(404)
                return
            body = open(os.path.join(blobs, self.digest), "rb").read()
            return self.send(body, "application/octet-stream", head,
                             partial=(stall == "blob" and self.digest == largest and not head))
        self.send_error(404)

    def do_GET(self):
        self.handle_any(False)

    def do_HEAD(self):
        self.handle_any(True)


class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


S(("127.0.0.1", port), H).serve_forever()
