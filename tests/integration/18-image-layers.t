#!/bin/bash
# nsrun-image import of hostile layers (known bugs B09, B10): OCI layouts written
# by hand here (python3's tarfile; blobs/sha256, manifest, config, index.json)
# whose layers hold "../../" and absolute member names, symlinks to host
# directories followed by files written through them (in the same and in a
# later layer), hard links to host files and to files inside, device nodes,
# a FIFO, setuid/setgid files and directories, unreadable directories, and
# whiteouts / opaque directories across two layers. Nothing may be written
# outside the image, no device node or setuid bit may remain, and the
# whiteouts must give the right tree. umoci does the unpacking; the tool's
# post-processing drops setuid/setgid bits and makes the tree readable.
#
# Needs (Debian packages): skopeo umoci jq python3. Missing tools are a failure.
# NSRUN_IMAGE_TOOL overrides the tool.
# Checks run by eval are single-quoted on purpose.
# shellcheck disable=SC2016,SC2012
. "$(dirname "$0")/../lib.sh"

TOOL=${NSRUN_IMAGE_TOOL:-$TESTS_DIR/../rootfs-tools/nsrun-image}
missing=()
for t in skopeo umoci jq python3; do
	command -v "$t" >/dev/null 2>&1 || missing+=("$t")
done
[ -x "$TOOL" ] || missing+=("$TOOL")
if [ ${#missing[@]} -gt 0 ]; then
	echo "1..1"
	echo "not ok 1 - $TEST_NAME needs: ${missing[*]} (Debian: apt-get install skopeo umoci jq python3)"
	_T_DONE=1 _T_PLANNED=1 _T_FAILED=1
	exit 1
fi

T=$TESTTMP
STORE=$T/a/b/store   # deep enough that "../../" from the rootfs lands inside $T
VICTIM=$T/victim
export HOME=$T/home XDG_RUNTIME_DIR=$T/run
mkdir -p "$HOME" "$XDG_RUNTIME_DIR" "$VICTIM/dir" "$STORE" && chmod 700 "$XDG_RUNTIME_DIR"
echo host-file >"$VICTIM/hard"
echo host-file >"$VICTIM/dir/hard"
unset XDG_DATA_HOME SOURCE_DATE_EPOCH

# victim_state — everything about the host targets that a write could change
victim_state() {
	find "$VICTIM" "$T/a" -path "$STORE" -prune -o -printf '%p %M %n %s\n' | sort
	cat "$VICTIM/hard" "$VICTIM/dir/hard"
	find /tmp -maxdepth 1 -name 'nsrun-escape*' -print
}
BEFORE=$(victim_state)

# mkoci.py OUT TAG VICTIM LAYERSET — an OCI layout with the layers of LAYERSET
cat >"$T/mkoci.py" <<'EOF'
import gzip, hashlib, io, json, os, sys, tarfile
out, tag, victim, which = sys.argv[1:5]

def reg(t, name, data=b"x\n", mode=0o644):
    ti = tarfile.TarInfo(name); ti.size = len(data); ti.mode = mode
    t.addfile(ti, io.BytesIO(data))
def mkdir(t, name, mode=0o755):
    ti = tarfile.TarInfo(name); ti.type = tarfile.DIRTYPE; ti.mode = mode; t.addfile(ti)
def sym(t, name, target):
    ti = tarfile.TarInfo(name); ti.type = tarfile.SYMTYPE; ti.linkname = target; t.addfile(ti)
def hard(t, name, target):
    ti = tarfile.TarInfo(name); ti.type = tarfile.LNKTYPE; ti.linkname = target; t.addfile(ti)
def dev(t, name, kind, major, minor):
    ti = tarfile.TarInfo(name); ti.type = kind; ti.devmajor = major; ti.devminor = minor
    ti.mode = 0o666; t.addfile(ti)

def evil1(t):
    mkdir(t, "bin"); reg(t, "bin/sh", b"the real sh\n", 0o755)
    reg(t, "../../escape-rel", b"pwned\n")                      # climbs out of rootfs/
    reg(t, "../../../../../../../../tmp/nsrun-escape-dotdot", b"pwned\n")
    reg(t, "/tmp/nsrun-escape-abs", b"pwned\n")                  # absolute member name
    reg(t, victim + "/abs-file", b"pwned\n")
    sym(t, "esc", victim)                                        # absolute symlink to the host
    reg(t, "esc/through-abs", b"pwned\n")                        # ... written through
    reg(t, "esc/hard", b"pwned\n")                               # ... overwriting a host file
    sym(t, "up", "../../../../../../../../.." + victim)          # climbing symlink
    reg(t, "up/through-rel", b"pwned\n")
    sym(t, "escdir", victim + "/dir")
    mkdir(t, "escdir/newdir")
    hard(t, "hl-abs-in", "/bin/sh")                              # hard links inside: fine
    hard(t, "hl-rel-in", "../../bin/sh")
    dev(t, "dev-mem", tarfile.CHRTYPE, 1, 1)
    dev(t, "dev/null", tarfile.CHRTYPE, 1, 3)
    dev(t, "blk", tarfile.BLKTYPE, 7, 0)
    dev(t, "fifo", tarfile.FIFOTYPE, 0, 0)
    reg(t, "suid", b"#!/bin/sh\n", 0o4755)
    reg(t, "sgid", b"#!/bin/sh\n", 0o2755)
    mkdir(t, "sgiddir", 0o2775)
    mkdir(t, "locked", 0o000); reg(t, "locked/secret", b"s\n", 0o600)
    mkdir(t, "wo", 0o300); reg(t, "wo/f", b"f\n", 0o200)
    # for the whiteouts of layer 2
    mkdir(t, "a"); reg(t, "a/keep"); reg(t, "a/gone"); mkdir(t, "a/gonedir"); reg(t, "a/gonedir/f")
    mkdir(t, "o"); reg(t, "o/old1"); mkdir(t, "o/sub"); reg(t, "o/sub/old2")
    mkdir(t, "p"); reg(t, "p/old")
def evil2(t):
    reg(t, "a/.wh.gone", b"")                                    # whiteout of a file
    reg(t, "a/.wh.gonedir", b"")                                 # ... of a directory
    reg(t, "a/.wh.never-existed", b"")
    reg(t, "o/.wh..wh..opq", b""); reg(t, "o/new")               # opaque: only new stays
    mkdir(t, "p"); reg(t, "p/.wh..wh..opq", b"")                 # opaque, emptied
    reg(t, "esc/later", b"pwned\n")                              # the host link, a layer later
    reg(t, "hl-abs-in", b"replaced\n")                           # replaces the link, not bin/sh
    sym(t, "esc2", victim); reg(t, "esc2/l2", b"pwned\n")
def hardout(t):
    mkdir(t, "bin"); reg(t, "bin/sh", b"sh\n", 0o755)
    hard(t, "hl-abs-out", victim + "/hard")                      # a host file, absolute
def hardout_rel(t):
    mkdir(t, "bin"); reg(t, "bin/sh", b"sh\n", 0o755)
    hard(t, "hl-rel-out", "../../../../../../../../.." + victim + "/hard")

layers_of = {"evil": [evil1, evil2], "hardout": [hardout], "hardout-rel": [hardout_rel]}
os.makedirs(out + "/blobs/sha256", exist_ok=True)
def blob(data):
    h = hashlib.sha256(data).hexdigest()
    with open(f"{out}/blobs/sha256/{h}", "wb") as f:
        f.write(data)
    return "sha256:" + h, len(data)
layers, diffs = [], []
for fn in layers_of[which]:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        fn(t)
    raw = buf.getvalue()
    diffs.append("sha256:" + hashlib.sha256(raw).hexdigest())
    d, n = blob(gzip.compress(raw, mtime=0))
    layers.append({"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": d, "size": n})
cfg = {"architecture": "amd64", "os": "linux",
       "config": {"Env": ["PATH=/bin"], "Cmd": ["/bin/sh"], "WorkingDir": "relative"},
       "rootfs": {"type": "layers", "diff_ids": diffs}}
cd, cn = blob(json.dumps(cfg).encode())
man = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
       "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cd, "size": cn},
       "layers": layers}
md, mn = blob(json.dumps(man).encode())
with open(out + "/index.json", "w") as f:
    json.dump({"schemaVersion": 2, "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
               "digest": md, "size": mn, "annotations": {"org.opencontainers.image.ref.name": tag}}]}, f)
with open(out + "/oci-layout", "w") as f:
    f.write('{"imageLayoutVersion": "1.0.0"}')
EOF

for set in evil hardout hardout-rel; do
	python3 "$T/mkoci.py" "$T/oci-$set" "$set" "$VICTIM" "$set" ||
		{ not_ok "python3 writes the OCI layout $set"; exit 1; }
done
ok "python3 writes three hand-made OCI layouts"

# ---------------------------------------------------------------- the hostile image

run_cmd "$TOOL" import "oci:$T/oci-evil:evil" evil --store "$STORE"
assert_eq "import of the hostile layers succeeds" 0 "$RC"
R=$STORE/evil/rootfs
assert_eq "nothing outside the image changed (victim dir, store parents, /tmp)" "$BEFORE" "$(victim_state)"
check "the host file behind the symlink keeps its content" test "$(cat "$VICTIM/hard")" = host-file
check "no file escaped through ../ next to the store" test ! -e "$T/a/escape-rel" -a ! -e "$STORE/escape-rel"

# where the entries went instead: clamped into the rootfs
check "../../escape-rel landed in the rootfs root" test -f "$R/escape-rel"
check "/tmp/nsrun-escape-abs landed in the rootfs" test -f "$R/tmp/nsrun-escape-abs"
check "files written through the absolute symlink stay inside" \
	test -f "$R$VICTIM/through-abs" -a -f "$R$VICTIM/later" -a -f "$R$VICTIM/hard" -a -f "$R$VICTIM/l2"
check "files written through the climbing symlink stay inside" test -f "$R$VICTIM/through-rel"
check "a directory made through a symlink stays inside" test -d "$R$VICTIM/dir/newdir"
check "the symlinks themselves are kept as symlinks" test -L "$R/esc" -a -L "$R/up" -a -L "$R/escdir"
assert_eq "hard links inside the image work" "the real sh
the real sh" "$(cat "$R/bin/sh" "$R/hl-rel-in")"
assert_eq "replacing a hard link in a later layer does not write through it" "the real sh|replaced" \
	"$(cat "$R/bin/sh")|$(cat "$R/hl-abs-in")"

assert_eq "no device nodes in the result" "" "$(find "$R" -xdev \( -type b -o -type c \) -print)"
assert_eq "/dev is empty" "" "$(ls -A "$R/dev")"
check "device entries became empty regular files, or nothing" \
	eval '[ ! -e "$R/dev-mem" ] || [ -f "$R/dev-mem" -a ! -s "$R/dev-mem" ]'
assert_eq "no setuid/setgid bit anywhere" "" "$(find "$R" -xdev -perm /6000 -print)"
check "the setuid file is still there, executable" test -f "$R/suid" -a -x "$R/suid"
check "locked and write-only directories became readable" \
	test -r "$R/locked/secret" -a -r "$R/wo/f" -a -x "$R/locked"
assert_eq "everything is readable by others" "" "$(find "$R" -xdev ! -type l ! -perm -o=r -print)"
for d in work tmp proc dev; do
	check "mount point /$d exists" test -d "$R/$d" -a ! -L "$R/$d"
done

# B10: whiteouts and opaque directories across the two layers
assert_eq "whiteouts remove a file and a directory of the lower layer" "keep" "$(ls -A "$R/a")"
assert_eq "an opaque directory hides the lower layer's content, keeps its own" "new" "$(ls -A "$R/o")"
assert_eq "an opaque directory with nothing of its own is empty" "" "$(ls -A "$R/p")"
assert_eq "no whiteout files remain" "" "$(find "$R" -xdev -name '.wh.*' -print)"

J=$STORE/evil/image.json
assert_eq "the image's env entries are kept" '["PATH=/bin"]' "$(jq -c .env "$J")"
assert_eq "a relative WorkingDir becomes /" "/" "$(jq -r .workdir "$J")"
assert_eq "the interpreter is guessed only from real programs (sh on PATH)" '["sh"]' "$(jq -c .interpreter "$J")"
check "nothing is left beside the image" eval '! compgen -G "$STORE/.evil.*" >/dev/null'

# ---------------------------------------------------------------- hard links to host files

for set in hardout hardout-rel; do
	run_cmd "$TOOL" import "oci:$T/oci-$set:$set" "$set" --store "$STORE"
	check "import of a layer hard-linking a host file ($set) fails" test "$RC" = 1
	check "... leaves no image and no temp dir" \
		eval '[ ! -e "$STORE/$set" ] && ! compgen -G "$STORE/.$set.*" >/dev/null'
	assert_eq "... and the host file is untouched" "$BEFORE" "$(victim_state)"
done

done_testing
