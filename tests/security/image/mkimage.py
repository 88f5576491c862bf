#!/usr/bin/env python3
"""mkimage.py - hostile images for tests/security/40-42-image-*.t, built here as
an OCI layout, an oci-archive or a docker-archive (python's tarfile; no tool
that could fix what the test wants broken).

usage: mkimage.py FORMAT OUT KIND [VICTIM]
  FORMAT  oci (a layout directory), oci-archive, docker-archive (tar files)
  KIND    what the image holds, besides a harmless static program /bin/hello
          (the test's probe, copied from $PROBE) that the controls run:
    plain        nothing else
    archive-link the archive itself holds a symlink member "a -> VICTIM" and a
                 file "a/pwned" written through it, and "../pwned-dotdot"
    privileged   /bin/capped with security.capability (cap_setuid, cap_dac_override)
                 and trusted.x xattrs, setuid/setgid root files, a user.keep xattr
    shared       a 0666 FIFO, 0777 and 1777 directories, a group-writable file
    big          one file of SIZE_MB (env) zeros, in a gzip layer (small on disk;
                 RAW_LAYER=1: uncompressed, for an archive gzipped whole)
    many         N_FILES (env) empty files
    many-locked  N_FILES (env) files in directories of mode 0555 (owner
                 write permission off, as a hostile layer may set them)
    longpath     Env PATH with 3000 entries, /bin/sh absent (the interpreter
                 lookup must stay bounded)
    env          Env entries: one with NUL, one of 200 KiB, one not KEY=VALUE
                 with a terminal escape, and a good one
    env-nul, env-big, env-noeq   one of those Env entries each, between good ones
    env-escape   a good Env entry whose value holds a terminal escape (execve
                 takes it)
    workdir-dotdot  WorkingDir "/../etc"
    link-blob    the archive holds blobs/sha256/000... as a symlink to VICTIM
    escape-name  docker-archive only: manifest.json names a layer with a
                 terminal escape, which does not exist
"""
import gzip, hashlib, io, json, os, sys, tarfile

fmt, out, kind = sys.argv[1:4]
victim = sys.argv[4] if len(sys.argv) > 4 else "/nonexistent"
probe = os.environ["PROBE"]


def add(t, name, data=b"", mode=0o644, kind=tarfile.REGTYPE, link="", pax=None):
    ti = tarfile.TarInfo(name)
    ti.type, ti.mode, ti.linkname = kind, mode, link
    ti.uid = ti.gid = 0
    if pax:
        ti.pax_headers = pax
    if kind == tarfile.REGTYPE:
        ti.size = len(data)
        t.addfile(ti, io.BytesIO(data))
    else:
        t.addfile(ti)


def layer_bytes(kind):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        add(t, "bin", kind=tarfile.DIRTYPE, mode=0o755)
        with open(probe, "rb") as f:
            add(t, "bin/hello", f.read(), 0o755)
        if kind == "privileged":
            # VFS_CAP_REVISION_2, effective; permitted = CAP_DAC_OVERRIDE(1) | CAP_SETUID(7)
            cap = (0x02000001).to_bytes(4, "little") + ((1 << 1) | (1 << 7)).to_bytes(4, "little") + bytes(12)
            pax = {"SCHILY.xattr.security.capability": cap.decode("utf-8", "surrogateescape"),
                   "SCHILY.xattr.trusted.x": "1", "SCHILY.xattr.user.keep": "yes"}
            with open(probe, "rb") as f:
                data = f.read()
            add(t, "bin/capped", data, 0o755, pax=pax)
            add(t, "bin/suid", data, 0o4755)
            add(t, "bin/sgid", data, 0o2755)
            add(t, "sgid-dir", kind=tarfile.DIRTYPE, mode=0o2777)
        elif kind == "shared":
            add(t, "fifo", kind=tarfile.FIFOTYPE, mode=0o666)
            add(t, "open", kind=tarfile.DIRTYPE, mode=0o777)
            add(t, "var", kind=tarfile.DIRTYPE, mode=0o755)
            add(t, "var/tmp", kind=tarfile.DIRTYPE, mode=0o1777)
            add(t, "group-writable", b"x\n", 0o664)
        elif kind == "big":
            add(t, "zeros", bytes(int(os.environ.get("SIZE_MB", "64")) << 20))
        elif kind == "many":
            add(t, "many", kind=tarfile.DIRTYPE, mode=0o755)
            for i in range(int(os.environ.get("N_FILES", "3000"))):
                add(t, "many/%d" % i)
        elif kind == "many-locked":
            add(t, "many", kind=tarfile.DIRTYPE, mode=0o555)
            n = int(os.environ.get("N_FILES", "3000"))
            for d in range(0, n, 100):
                add(t, "many/d%d" % d, kind=tarfile.DIRTYPE, mode=0o555)
                for i in range(d, min(d + 100, n)):
                    add(t, "many/d%d/%d" % (d, i), b"x\n", 0o444)
    raw = buf.getvalue()
    if kind == "big" and not os.environ.get("RAW_LAYER"):
        return gzip.compress(raw, 9, mtime=0), "application/vnd.oci.image.layer.v1.tar+gzip", raw
    return raw, "application/vnd.oci.image.layer.v1.tar", raw


def sha(b):
    return hashlib.sha256(b).hexdigest()


layer, media, diff = layer_bytes(kind)
cfg = {"Env": ["PATH=/bin", "GOOD=1"], "Cmd": ["/bin/hello"]}
if kind == "longpath":
    cfg["Env"] = ["PATH=" + ":".join("/p%d/../../p%d" % (i, i) for i in range(3000))]
elif kind == "env":
    cfg["Env"] = ["PATH=/bin", "NUL=a\u0000b", "BIG=" + "x" * (200 << 10),
                  "\u001b[2Jnot-an-assignment", "GOOD=1"]
elif kind in ("env-nul", "env-big", "env-noeq"):
    bad = {"env-nul": "NUL=a\u0000b", "env-big": "BIG=" + "x" * (200 << 10),
           "env-noeq": "\u001b[2Jnot-an-assignment"}[kind]
    cfg["Env"] = ["PATH=/bin", bad, "GOOD=1"]
elif kind == "env-escape":
    cfg["Env"] = ["PATH=/bin", "ESC=\u001b[2Jx", "GOOD=1"]
elif kind == "workdir-dotdot":
    cfg["WorkingDir"] = "/../etc"
config = json.dumps({"architecture": "amd64", "os": "linux", "config": cfg,
                     "rootfs": {"type": "layers", "diff_ids": ["sha256:" + sha(diff)]}}).encode()
manifest = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                       "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                                  "digest": "sha256:" + sha(config), "size": len(config)},
                       "layers": [{"mediaType": media, "digest": "sha256:" + sha(layer),
                                   "size": len(layer)}]}).encode()
index = json.dumps({"schemaVersion": 2, "manifests": [{
    "mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": "sha256:" + sha(manifest),
    "size": len(manifest), "annotations": {"org.opencontainers.image.ref.name": "test"}}]}).encode()
layout = {"oci-layout": b'{"imageLayoutVersion": "1.0.0"}', "index.json": index,
          "blobs/sha256/" + sha(config): config, "blobs/sha256/" + sha(manifest): manifest,
          "blobs/sha256/" + sha(layer): layer}

if fmt == "oci":
    for name, data in layout.items():
        os.makedirs(os.path.dirname(os.path.join(out, name)) or out, exist_ok=True)
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    sys.exit(0)

if fmt == "docker-archive":
    layers = [sha(layer) + ".tar"]
    if kind == "escape-name":
        layers = ["\u001b[2J\u001b]0;pwned\u0007" + sha(layer) + ".tar"]
    members = {"manifest.json": json.dumps([{"Config": sha(config) + ".json", "RepoTags": ["test/x:1"],
                                             "Layers": layers}]).encode(),
               sha(config) + ".json": config, sha(layer) + ".tar": layer}
else:
    members = layout

with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as t:
    if kind == "archive-link":
        add(t, "a", kind=tarfile.SYMTYPE, link=victim)
        add(t, "a/pwned", b"pwned\n")
        add(t, "../pwned-dotdot", b"pwned\n")
        add(t, "blobs", kind=tarfile.DIRTYPE, mode=0o755)
    for name, data in members.items():
        add(t, name, data)
    if kind == "archive-link":
        add(t, "a/pwned-late", b"pwned\n")
    if kind == "link-blob":
        add(t, "blobs/sha256/" + "0" * 64, kind=tarfile.SYMTYPE, link=victim)
