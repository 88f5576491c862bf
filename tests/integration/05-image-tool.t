#!/usr/bin/env bash
# 05-image-tool.t - rootfs-tools/nsrun-image: argument checks, list, rm, and
# the build pipeline with a fake mmdebstrap (the real one is far too slow for
# the quick suite). TAP output; exits non-zero if any test fails.
#
# NSRUN_IMAGE_TOOL overrides the script under test.
#
# Checks are single-quoted strings run by eval, so their variables look unused
# or unexpanded to shellcheck.
# shellcheck disable=SC2016,SC2034,SC2317

set -uo pipefail

here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
TOOL=${NSRUN_IMAGE_TOOL:-$here/../../rootfs-tools/nsrun-image}

T=$(mktemp -d "${TMPDIR:-/tmp}/nsrun-image-test.XXXXXX")
trap 'chmod -R u+rwX "$T" 2>/dev/null; rm -rf "$T"' EXIT
STORE=$T/store
export HOME=$T/home
unset NSRUN_IMAGES XDG_DATA_HOME SOURCE_DATE_EPOCH
mkdir -p "$HOME"

n=0
failed=0

pass() {
	n=$((n + 1))
	printf 'ok %d - %s\n' "$n" "$1"
}

fail() {
	n=$((n + 1))
	failed=$((failed + 1))
	printf 'not ok %d - %s\n' "$n" "$1"
	shift
	local line
	for line in "$@"; do
		printf '#   %s\n' "$line"
	done
}

# check DESC CMD... : ok when CMD succeeds.
check() {
	local desc=$1
	shift
	if "$@"; then
		pass "$desc"
	else
		fail "$desc" "failed: $*" "rc=$rc" "stdout: $out" "stderr: $err"
	fi
}

# run CMD... : sets rc, out, err.
rc=0 out='' err=''
run() {
	out=$("$@" 2>"$T/stderr")
	rc=$?
	err=$(cat "$T/stderr")
}

# usage_fails DESC ARGS... : exit status 2 and exactly one "nsrun-image: " line.
usage_fails() {
	local desc=$1
	shift
	run "$TOOL" "$@"
	local lines
	lines=$(printf '%s\n' "$err" | grep -c .)
	if [[ $rc -eq 2 && $lines -eq 1 && $err == "nsrun-image: "* && -z $out ]]; then
		pass "$desc"
	else
		fail "$desc" "args: $*" "rc=$rc (want 2)" "stdout: $out" "stderr: $err"
	fi
}

make_image() {  # STORE NAME : a hand-made image
	mkdir -p "$1/$2/rootfs/usr/bin"
	cat >"$1/$2/image.json" <<EOF
{
  "schema": 1,
  "name": "$2",
  "interpreter": ["python3"],
  "env": ["LANG=C.UTF-8"],
  "workdir": "/work",
  "source": {"type": "mmdebstrap", "suite": "bookworm", "include": ["python3"], "mirror": "http://deb.debian.org/debian"},
  "created": "2026-01-01T00:00:00Z"
}
EOF
}

# A fake mmdebstrap: records its arguments, then produces a small tree with
# the things post-processing must fix, as a directory (--mode=root) or as a
# tarball on stdout (target "-", --mode=unshare when not run as root).
FAKE=$T/bin/mmdebstrap
mkdir -p "$T/bin"
cat >"$FAKE" <<'EOF'
#!/bin/sh
set -eu
printf '%s\n' "$@" >"$FAKE_ARGS"
if [ -n "${FAKE_FAIL:-}" ]; then
	echo "fake mmdebstrap: failing as asked" >&2
	exit 1
fi
eval "target=\${$(($# - 1))}"
if [ "$target" = - ]; then out=$(mktemp -d); else out=$target; mkdir -p "$out"; fi
cd "$out"
mkdir -p usr/bin usr/sbin usr/lib/locale/C.utf8 etc/security dev/pts root \
	usr/share/doc/pkg usr/share/man/man1 usr/share/locale/de/LC_MESSAGES \
	var/cache/apt var/cache/debconf var/mail tmp
ln -s usr/bin bin
printf '#!/bin/sh\n' >usr/bin/python3
chmod 0755 usr/bin/python3
printf '#!/bin/sh\n' >usr/bin/sh
chmod 0755 usr/bin/sh
printf 'x\n' >usr/bin/su
chmod 4755 usr/bin/su
chmod 2775 var/mail
printf 'root:*:19000::::::\n' >etc/shadow
chmod 0640 etc/shadow
: >var/cache/debconf/passwords.dat
chmod 0600 var/cache/debconf/passwords.dat
printf 'private\n' >etc/private
chmod 0600 etc/private
chmod 0700 root
printf 'x\n' >usr/share/doc/pkg/copyright
printf 'x\n' >usr/share/doc/pkg/changelog.gz
printf 'x\n' >usr/share/man/man1/x.1.gz
printf 'x\n' >usr/share/locale/de/LC_MESSAGES/x.mo
printf 'x\n' >var/cache/apt/pkgcache.bin
printf 'nameserver 192.0.2.1\n' >etc/resolv.conf
printf 'buildhost\n' >etc/hostname
ln -s "$FAKE_OUTSIDE" etc/outside
ln -s /proc/self/fd dev/fd
mknod dev/null c 1 3 2>/dev/null || true
if [ "$target" = - ]; then tar -C "$out" -cf - .; rm -rf "$out"; fi
EOF
chmod 0755 "$FAKE"
export FAKE_ARGS=$T/fake-args FAKE_OUTSIDE=$T/outside
printf 'secret\n' >"$FAKE_OUTSIDE"
chmod 0600 "$FAKE_OUTSIDE"
cat >"$T/debian.sources" <<'EOF'
Types: deb
URIs: http://security.example.org/debian-security
Suites: bookworm-security
Components: main

Types: deb
# a comment
URIs: http://mirror.example.org/debian/ http://other.example.org/debian
Suites: bookworm bookworm-updates
Components: main
EOF

fake_build() {  # ARGS... : nsrun-image build with the fake mmdebstrap
	run env NSRUN_IMAGE_MMDEBSTRAP="$FAKE" NSRUN_IMAGE_HOST_SOURCES="$T/debian.sources" \
		"$TOOL" build "$@"
}

mode_of() { stat -c %a "$1"; }

# --------------------------------------------------------------- arguments --

check "the tool exists and is executable" test -x "$TOOL"

run "$TOOL" --help
check "--help exits 0 and prints usage" \
	eval '[[ $rc -eq 0 && $out == *"usage: nsrun-image build NAME"* && -z $err ]]'

usage_fails "no subcommand is a usage error" 
usage_fails "unknown subcommand is a usage error" frobnicate
check "unknown subcommand names it" eval '[[ $err == "nsrun-image: frobnicate: unknown subcommand"* ]]'
usage_fails "unknown top-level option is a usage error" --frob
usage_fails "unknown build option is a usage error" build python --frob --store "$STORE"
usage_fails "build option without its argument is a usage error" build python --store
usage_fails "build without NAME is a usage error" build --store "$STORE"
usage_fails "build with two names is a usage error" build a b --store "$STORE"
for bad in ../x a/b '' .x x/ '-' 'a b' 'a$b' "$(printf 'a%.0s' {1..129})"; do
	usage_fails "build rejects image name \"${bad:0:20}\"" build --store "$STORE" -- "$bad"
done
check "bad name message says why" eval '[[ $err == "nsrun-image: build: invalid image name "* ]]'
usage_fails "rm rejects image name \"../x\"" rm ../x --store "$STORE"
usage_fails "build rejects a bad package name" build py --include 'python3;rm' --store "$STORE"
usage_fails "build rejects a bad suite" build py --suite '../x' --store "$STORE"
usage_fails "build rejects a bad mirror" build py --mirror 'not a url' --store "$STORE"
usage_fails "build rejects a bad --env" build py --env 'NOEQUALS' --store "$STORE"
usage_fails "build rejects an empty --interpreter element" build py --interpreter 'python3,,x' --store "$STORE"
usage_fails "list takes no NAME" list python --store "$STORE"
usage_fails "unknown list option is a usage error" list --frob
check "nothing was created by rejected commands" test ! -e "$STORE"

# ------------------------------------------------------------------- list --

make_image "$STORE" python
make_image "$STORE" alpha
mkdir -p "$STORE/.x.tmp.123/rootfs" "$STORE/noimage/rootfs"
cp "$STORE/python/image.json" "$STORE/.x.tmp.123/image.json"
run "$TOOL" list --store "$STORE"
check "list exits 0" eval '[[ $rc -eq 0 && -z $err ]]'
check "list prints one line per image, sorted" \
	eval '[[ $(printf "%s\n" "$out" | awk "{print \$1}" | tr "\n" " ") == "alpha python " ]]'
check "list shows NAME SIZE SOURCE" \
	eval '[[ $(printf "%s\n" "$out" | grep "^python ") =~ ^python\ +[0-9.]+[KMG]?\ +mmdebstrap:bookworm\+python3$ ]]'
check "list ignores .tmp dirs and dirs without image.json" \
	eval '[[ $out != *".x.tmp"* && $out != *noimage* ]]'
run env NSRUN_IMAGES="$STORE" "$TOOL" list
check "list uses \$NSRUN_IMAGES" eval '[[ $rc -eq 0 && $out == *python* ]]'
run env XDG_DATA_HOME="$T/nothing" "$TOOL" list
check "list of a missing store is empty" eval '[[ $rc -eq 0 && -z $out && -z $err ]]'

# --------------------------------------------------- build: existing image --

run "$TOOL" build python --include python3 --store "$STORE"
check "build of an existing image without --force fails" \
	eval '[[ $rc -eq 1 && $err == "nsrun-image: image \"python\" already exists in $STORE (use --force to rebuild)" ]]'
check "the existing image is untouched" test -f "$STORE/python/image.json"

# --------------------------------------------------------------------- rm --

run "$TOOL" rm python --store "$STORE"
check "rm exits 0" eval '[[ $rc -eq 0 ]]'
check "rm removes the image" test ! -e "$STORE/python"
check "rm leaves nothing aside" eval '! compgen -G "$STORE/.python.*" >/dev/null'
run "$TOOL" list --store "$STORE"
check "list no longer shows it" \
	eval '[[ $(printf "%s\n" "$out" | awk "{print \$1}" | tr "\n" " ") == "alpha " ]]'
run "$TOOL" rm python --store "$STORE"
check "rm of a missing image fails" \
	eval '[[ $rc -eq 1 && $err == "nsrun-image: rm \"python\": no such image in $STORE" ]]'

# -------------------------------------------- build with a fake mmdebstrap --

mkdir -p "$STORE/.py.tmp.ABCDEF/rootfs"  # stale, from an "interrupted" build
fake_build py --include python3 --include python3,libc6 --env FOO=a\"b --store "$STORE" --quiet
R=$STORE/py/rootfs
check "fake build succeeds" eval '[[ $rc -eq 0 && -z $err && -z $out ]]'
check "image has rootfs/ and image.json" eval '[[ -d $R && -f $STORE/py/image.json ]]'
check "no temporary directories are left" eval '! compgen -G "$STORE/.py.*" >/dev/null'
check "mmdebstrap got variant, include (and netbase: /etc/services) and the host's mirror" \
	eval 'grep -qx -- --variant=essential "$FAKE_ARGS" &&
		grep -qx -- --include=python3,libc6 "$FAKE_ARGS" && grep -qx -- --include=netbase "$FAKE_ARGS" &&
		[[ $(tail -n 1 "$FAKE_ARGS") == http://mirror.example.org/debian ]]'
want='{"schema":1,"name":"py","interpreter":["python3"],"env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","LANG=C.UTF-8","PYTHONDONTWRITEBYTECODE=1","FOO=a\"b"],"workdir":"/work","source":{"type":"mmdebstrap","suite":"bookworm","include":["python3","libc6"],"mirror":"http://mirror.example.org/debian"}}'
check "image.json has the expected content (written by jq)" \
	eval '[[ $(jq -c "del(.created)" "$STORE/py/image.json") == "$want" ]] &&
		jq -e ".created | test(\"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$\")" "$STORE/py/image.json" >/dev/null'
check "setuid/setgid bits are dropped" \
	eval '[[ -z $(find "$R" -perm /6000) && $(mode_of "$R/usr/bin/su") == 755 ]]'
check "no device nodes; /dev is empty" \
	eval '[[ -z $(find "$R" -type b -o -type c) && -z $(ls -A "$R/dev") ]]'
check "mount points exist, 0755 (nothing in the store is writable by others; /tmp is a tmpfs at run time)" \
	eval '[[ $(mode_of "$R/work") == 755 && $(mode_of "$R/proc") == 755 &&
		$(mode_of "$R/sys") == 755 && $(mode_of "$R/dev") == 755 && $(mode_of "$R/tmp") == 755 ]]'
check "private files become readable, secrets do not" \
	eval '[[ $(mode_of "$R/etc/private") == 644 && $(mode_of "$R/root") == 755 &&
		$(mode_of "$R/etc/shadow") == 640 && $(mode_of "$R/var/cache/debconf/passwords.dat") == 600 ]]'
check "chmod never follows a symlink out of the rootfs" eval '[[ $(mode_of "$FAKE_OUTSIDE") == 600 ]]'
check "docs, man pages, locales and apt caches are gone; copyright stays" \
	eval '[[ -f $R/usr/share/doc/pkg/copyright && ! -e $R/usr/share/doc/pkg/changelog.gz &&
		-z $(find "$R/usr/share/man" "$R/usr/share/locale" -mindepth 1) && ! -e $R/var/cache/apt/pkgcache.bin ]]'
check "host resolv.conf and hostname are not kept" \
	eval '[[ ! -s $R/etc/resolv.conf && $(cat "$R/etc/hostname") == nsrun ]]'

ino=$(stat -c %i "$STORE/py")
fake_build py --store "$STORE" --force --quiet --interpreter /bin/sh,-e --suite trixie --mirror http://m.example.org/debian/
check "build --force replaces the image" \
	eval '[[ $rc -eq 0 && $(stat -c %i "$STORE/py") != "$ino" ]] &&
		[[ $(jq -c "[.interpreter, .source]" "$STORE/py/image.json") == "[[\"/bin/sh\",\"-e\"],{\"type\":\"mmdebstrap\",\"suite\":\"trixie\",\"include\":[],\"mirror\":\"http://m.example.org/debian\"}]" ]]'
check "build --force leaves nothing aside" eval '! compgen -G "$STORE/.py.*" >/dev/null'

fake_build sh --store "$STORE" --quiet
check "default interpreter without python3 is sh, no python env" \
	eval '[[ $rc -eq 0 && $(jq -c .interpreter "$STORE/sh/image.json") == "[\"sh\"]" ]] &&
		! grep -q PYTHONDONTWRITEBYTECODE "$STORE/sh/image.json"'

FAKE_FAIL=1 fake_build broken --store "$STORE" --quiet
check "a failed build exits non-zero and says so" \
	eval '[[ $rc -ne 0 && $err == *"nsrun-image: build \"broken\": mmdebstrap"* ]]'
check "a failed build leaves no image and no temp dir" \
	eval '[[ ! -e $STORE/broken ]] && ! compgen -G "$STORE/.broken.*" >/dev/null'

# ------------------------------ the runtime's check before an image lands --

fake_build badinterp --store "$STORE" --quiet --interpreter /usr/bin/nope
check "a build whose interpreter is not in the image fails with nsrun's words" \
	eval '[[ $rc -eq 1 && $err == "nsrun-image: build \"badinterp\": nsrun would refuse the image: image \"badinterp\": interpreter \"/usr/bin/nope\" is not an executable file inside the image"* ]]'
check "... and nsrun's hint" eval '[[ $err == *"nsrun-image: hint: "*"--interpreter"* ]]'
check "... leaving no image and no temp dir" \
	eval '[[ ! -e $STORE/badinterp ]] && ! compgen -G "$STORE/.badinterp.*" >/dev/null'

# where nsrun is found: $NSRUN, ../build/nsrun in a checkout, beside the tool, PATH
tools=$(cd -- "$(dirname -- "$TOOL")" && pwd)
if [[ -x $tools/../build/nsrun ]]; then
	run env -u NSRUN NSRUN_IMAGE_MMDEBSTRAP="$FAKE" NSRUN_IMAGE_HOST_SOURCES="$T/debian.sources" \
		"$TOOL" build found --store "$STORE" --quiet
	check "without NSRUN, the tool in a checkout uses ../build/nsrun" eval '[[ $rc -eq 0 && -z $err ]]'
	found='found '
else
	found=
	pass "without NSRUN: no checkout around the tool under test ($tools), nothing to find there"
fi
run env NSRUN="$T/nowhere/nsrun" NSRUN_IMAGE_MMDEBSTRAP="$FAKE" "$TOOL" build nonsrun --store "$STORE" --quiet
check "NSRUN naming no program: one line saying so" \
	eval '[[ $rc -eq 1 && $err == "nsrun-image: build \"nonsrun\": NSRUN=$T/nowhere/nsrun is not an executable file: point NSRUN at nsrun"* && $(wc -l <<<"$err") -eq 1 ]]'
mkdir -p "$T/alone" && cp -r "$tools/nsrun-image" "$tools/lib" "$T/alone/"
run env -u NSRUN PATH=/usr/bin:/bin NSRUN_IMAGE_MMDEBSTRAP="$FAKE" "$T/alone/nsrun-image" build alone --store "$STORE" --quiet
if PATH=/usr/bin:/bin command -v nsrun >/dev/null; then
	check "a tool alone finds nsrun on PATH" eval '[[ $rc -eq 0 ]]'
else
	check "a tool with no nsrun beside it, in a checkout or on PATH: one line saying how to point at one" \
		eval '[[ $rc -eq 1 && $err == "nsrun-image: build \"alone\": cannot find nsrun"*"set NSRUN=/path/to/nsrun or put nsrun on PATH" && $(wc -l <<<"$err") -eq 1 ]]'
fi
# installed: nsrun beside nsrun-image (PREFIX/bin), the libraries in PREFIX/lib/nsrun
nsrun_bin=${NSRUN:-$tools/../build/nsrun}
mkdir -p "$T/prefix/bin" "$T/prefix/lib/nsrun"
cp "$tools/nsrun-image" "$nsrun_bin" "$T/prefix/bin/" && cp "$tools"/lib/*.sh "$T/prefix/lib/nsrun/"
[[ ${nsrun_bin##*/} == nsrun ]] || mv "$T/prefix/bin/${nsrun_bin##*/}" "$T/prefix/bin/nsrun"
run env -u NSRUN PATH=/usr/bin:/bin NSRUN_IMAGE_MMDEBSTRAP="$FAKE" "$T/prefix/bin/nsrun-image" build beside --store "$STORE" --quiet
check "an installed tool uses the nsrun beside it" eval '[[ $rc -eq 0 && -z $err ]]'
check "... leaving nothing" eval '[[ ! -e $STORE/alone && ! -e $STORE/nonsrun ]] && ! compgen -G "$STORE/.alone.*" >/dev/null'

run "$TOOL" list --store "$STORE"
check "list shows built images" \
	eval '[[ $(printf "%s\n" "$out" | awk "{print \$1}" | tr "\n" " ") == "alpha beside ${found}py sh " ]]'

printf '1..%d\n' "$n"
if ((failed)); then
	printf '# %d of %d tests failed\n' "$failed" "$n"
	exit 1
fi
exit 0
