#!/bin/bash
# Issue 23: everything a run refuses in an image is refused by `nsrun image check`
# (what nsrun-image runs before an image lands), with the same words, because both
# are the same code (image.c).  Each hostile image.json or rootfs below (a bad
# working directory, env entries with NUL, without '=', too long for execve, an
# interpreter that is a link out of the tree to a host program, JSON nested 400,000
# deep) is refused by the checker and by a run with the same first line; the
# controls: the same image with that one thing right passes the check and runs,
# a link that climbs past the root but stays inside passes, and -- CMD (which does
# not use the interpreter) still runs the image with the bad link.
. "$(dirname "$0")/../lib.sh"
require_nsrun
require_userns
require_probe

T=$TESTTMP
S=$T/store
mkdir -p "$S"
printf 'from the file\n' >"$T/prog.txt"
chmod 644 "$T/prog.txt"
GOOD='{"interpreter": ["/bin/hello", "read"], "env": ["PATH=/bin", "GOOD=1"], "workdir": "/work"}'

# mkimg (tests/lib.sh): a store image around the static probe at /bin/hello ("read
# FILE" prints FILE: the interpreter of FILE mode)
first_line() { head -n 1 <<<"$1"; }

# refused NAME REGEX DESC: the checker and a FILE-mode run both exit 125 with the
# same first line, which matches REGEX
refused() {
	local name=$1 want=$2 desc=$3 checker
	run_nsrun image check "$S/$name"
	assert_eq "$desc: nsrun image check exits 125" 125 "$RC"
	assert_nsrun_error "... with one nsrun: line (and a hint)"
	checker=$(first_line "$ERR")
	assert_match "... saying why" "^nsrun: $want" "$checker"
	NSRUN_IMAGES=$S run_nsrun --image "$name" "$T/prog.txt"
	assert_eq "... a run of it exits 125" 125 "$RC"
	assert_eq "... with the same words as the checker" "$checker" "$(first_line "$ERR")"
	assert_not_match "... and the payload never ran" 'from the file' "$OUT"
}

# ---------------------------------------------------------------- the control
mkimg good "$GOOD"
run_nsrun image check "$S/good"
assert_eq "control: a good image passes the check" "0 " "$RC $ERR"
assert_match "... saying which interpreter a run will start" '/bin/hello' "$OUT"
run_nsrun image check --json "$S/good"
assert_eq "... --json: ok, the interpreter found and the workdir" 'true /bin/hello /work' \
	"$(jq -r '"\(.ok) \(.interpreter_path) \(.workdir)"' <<<"$OUT")"
NSRUN_IMAGES=$S run_nsrun --image good "$T/prog.txt"
assert_match "... and a FILE-mode run of it works" "^0 read: ok /work/prog.txt 14 bytes: from the file" "$RC $OUT"

# ---------------------------------------------------------------- working directory
mkimg wd-dotdot '{"interpreter": ["/bin/hello", "read"], "workdir": "/a/../etc"}'
refused wd-dotdot 'image workdir: "/a/\.\./etc": "\.\." is not allowed' 'a workdir with ".."'
mkimg wd-relative '{"interpreter": ["/bin/hello", "read"], "workdir": "etc"}'
refused wd-relative 'image workdir: "etc": must be an absolute path' 'a relative workdir'
mkimg wd-long "{\"interpreter\": [\"/bin/hello\", \"read\"], \"workdir\": \"/$(head -c 5000 /dev/zero | tr '\0' a)\"}"
refused wd-long 'image workdir: path too long' 'a workdir longer than PATH_MAX'

# ---------------------------------------------------------------- env
mkimg env-nul '{"interpreter": ["/bin/hello", "read"], "env": ["PATH=/bin", "A=1\u0000B=2"]}'
refused env-nul "image\\.json \"$S/env-nul/image\\.json\": a string holds a NUL character" 'an env entry with NUL'
mkimg env-noeq '{"interpreter": ["/bin/hello", "read"], "env": ["PATH=/bin", "NOEQUALS"]}'
refused env-noeq "image\\.json \"$S/env-noeq/image\\.json\": env\\[1\\] is not KEY=VALUE" "an env entry without '='"
mkimg env-big "{\"interpreter\": [\"/bin/hello\", \"read\"], \"env\": [\"BIG=$(head -c 140000 /dev/zero | tr '\0' x)\"]}"
refused env-big "image\\.json \"$S/env-big/image\\.json\": env\\[0\\] is longer than 131071 bytes" 'an env entry longer than execve takes'

# ---------------------------------------------------------------- interpreter
# links whose targets exist on the host (/bin/sh, /usr/bin/env) but not in the image
check "control: the links' targets exist on the host" test -x /bin/sh -a -x /usr/bin/env
mkimg link-up '{"interpreter": ["/bin/py", "read"]}'
ln -s ../../../../../../../../../../bin/sh "$S/link-up/rootfs/bin/py"
refused link-up 'image "link-up": interpreter "/bin/py" is not an executable file inside the image' \
	'an interpreter linked out of the tree with ".."'
mkimg link-abs '{"interpreter": ["env", "read"], "env": ["PATH=/usr/bin:/bin"]}'
mkdir -p "$S/link-abs/rootfs/usr/bin"
ln -s /bin/sh "$S/link-abs/rootfs/usr/bin/env"
refused link-abs "image \"link-abs\": interpreter \"env\" is not an executable file on the image's PATH" \
	'an interpreter on PATH linked to an absolute host path'
NSRUN_IMAGES=$S run_nsrun --image link-up -- /bin/hello ids
assert_eq "control: -- CMD, which does not use the interpreter, runs that image" 0 "$RC"
mkimg link-in '{"interpreter": ["/bin/ok", "read"]}'
ln -s ../../../../../../../../../../bin/hello "$S/link-in/rootfs/bin/ok"
run_nsrun image check "$S/link-in"
assert_eq "control: a link climbing past the root to the image's own program passes" "0 " "$RC $ERR"
NSRUN_IMAGES=$S run_nsrun --image link-in "$T/prog.txt"
assert_match "... and runs, as the check said" "^0 read: ok /work/prog.txt 14 bytes: from the file" "$RC $OUT"

# ---------------------------------------------------------------- absurd JSON
mkimg deep '{}'
python3 -c 'import sys; sys.stdout.write("{\"env\": " + "[" * 400000 + "]" * 400000 + "}")' >"$S/deep/image.json"
refused deep "image\\.json \"$S/deep/image\\.json\": nested deeper than 32 levels" 'image.json nested 400,000 deep'

# ---------------------------------------------------------------- the command line
run_nsrun image check --json "$S/env-noeq"
assert_eq "--json of a refused image: ok false, the error, exit 125" \
	"125 false image.json \"$S/env-noeq/image.json\": env[1] is not KEY=VALUE" \
	"$RC $(jq -r '"\(.ok) \(.error)"' <<<"$OUT")"
run_nsrun image check "$T/nowhere"
assert_eq "a directory that is no image: 125" 125 "$RC"
assert_match "... naming the rootfs it lacks" "^nsrun: image \"nowhere\": rootfs \"$T/nowhere/rootfs\": No such file" "$ERR"
run_nsrun image check
assert_eq "no DIR: 125 and the usage" "125 yes" "$RC $(grep -q 'usage: nsrun image check' <<<"$ERR" && echo yes)"
run_nsrun image frob "$S/good"
assert_eq "an unknown image subcommand: 125" 125 "$RC"
done_testing
