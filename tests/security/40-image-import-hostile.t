#!/bin/bash
# Importing a hostile image is as contained as running one (issue 23, kinds 1,
# 2 and 4, and the checks of what the runtime would refuse). Each image is
# built here (image/mkimage.py: OCI layouts, oci-archives, docker-archives
# written with python's tarfile) around a harmless static program, the probe,
# at /bin/hello: every refusal or stripping has its control, the same image's
# harmless part imported and run by nsrun.
#   1  archives: a symlink member to a victim directory and files written
#      through it, "../" names, a blob that is a symlink: nothing outside the
#      store changes, nothing lands in /var/tmp, a linked blob is refused
#   2  privileged metadata: security.capability / trusted.* xattrs, set-id
#      files and directories are gone after a root (and a user) import;
#      user.* xattrs stay
#   4  FIFOs, world- or group-writable and sticky directories are gone
#   +  an Env entry with NUL, of 200 KiB, or not KEY=VALUE (with a terminal
#      escape) fails the import with nsrun image check's words, cleaned (an
#      escape in a value is kept); a WorkingDir with ".." fails it too; an
#      image.json nested 400,000 deep is one error line from nsrun; a local
#      source's digest is the manifest that was unpacked.
# Needs: skopeo umoci jq bwrap bsdtar python3 (Debian: skopeo umoci jq
# bubblewrap libarchive-tools python3). Missing tools are a failure.
# shellcheck disable=SC2016
. "$(dirname "$0")/../lib.sh"

image_import_setup getfattr setfattr
VICTIM=$T/victim
mkdir -p "$VICTIM/sub"
echo victim >"$VICTIM/file"
victim_state() { find "$VICTIM" -printf '%p %M %s\n' | sort; cat "$VICTIM/file"; }
vartmp_mine() { find /var/tmp -maxdepth 1 -mindepth 1 -user "$(id -u)" -newer "$T/start" -print 2>/dev/null; }
touch "$T/start"
BEFORE=$(victim_state)

no_leftovers() { ! compgen -G "$STORE/.$1.tmp.*" >/dev/null; }

# ---------------------------------------------------------------- 1: archives

for fmt in oci-archive docker-archive; do
	mk "$fmt" "$T/link-$fmt.tar" archive-link "$VICTIM"
	run_cmd "$TOOL" import --quiet --interpreter /bin/hello "$fmt:$T/link-$fmt.tar" "link-$fmt" --store "$STORE"
	assert_eq "$fmt with a symlink member to the host and files through it: imported, links ignored" "0 " "$RC $ERR"
	check "... its harmless part runs" runs "link-$fmt"
	assert_eq "... nothing outside the store changed" "$BEFORE" "$(victim_state)"
	assert_eq "... nothing written through the link exists anywhere" "" \
		"$(find "$T" /tmp -maxdepth 3 -name 'pwned*' -print 2>/dev/null)"
done
mk oci-archive "$T/link-blob.tar" link-blob "$VICTIM/file"
run_cmd "$TOOL" import --interpreter /bin/hello "$T/link-blob.tar" link-blob --store "$STORE"
assert_eq "an oci-archive whose blob is a symlink is refused" 1 "$RC"
assert_match "... naming the member" "blobs/sha256/0{64}.*type l.*refused" "$ERR"
check "... leaving nothing" eval '[ ! -e "$STORE/link-blob" ] && no_leftovers link-blob'
assert_eq "no import left anything of this user in /var/tmp" "" "$(vartmp_mine)"

# ---------------------------------------------------------------- 2: privileged metadata

mk oci "$T/priv" privileged
# the probe is real: the layer carries the attributes, which a plain tar keeps
mkdir "$T/plain"
blob=$(find "$T/priv/blobs/sha256" -size +100k | head -1)
bsdtar -x --xattrs -f "$blob" -C "$T/plain" 2>/dev/null
if [ "$(id -u)" = 0 ]; then
	assert_match "control: bsdtar as root restores the file capability" 'security\.capability' \
		"$(getfattr -h -d -m - "$T/plain/bin/capped" 2>/dev/null)"
else
	assert_match "control: the layer carries a file capability" 'security\.capability' \
		"$(bsdtar -t -v --xattrs -f "$blob" 2>/dev/null; python3 -c 'import sys, tarfile; t = tarfile.open(sys.argv[1]); print(t.getmember("bin/capped").pax_headers)' "$blob")"
fi
run_cmd "$TOOL" import --quiet --interpreter /bin/hello "oci:$T/priv:test" priv --store "$STORE"
assert_eq "an image with file capabilities, trusted.* xattrs and set-id files imports" "0 " "$RC $ERR"
R=$STORE/priv/rootfs
assert_eq "... no xattr but user.* is left on any file" "" \
	"$(cd "$R" && find . -xdev ! -type l -exec getfattr -h --absolute-names -d -m - {} + 2>/dev/null | grep -E '^(security|trusted|system)\.')"
assert_eq "... no set-id file or directory" "" "$(find "$R" -xdev -perm /6000 -print)"
if [ "$(id -u)" = 0 ]; then
	assert_eq "... everything is root's" "" "$(find "$R" -xdev ! -user 0 -print | head -3)"
fi
check "... its harmless part runs" runs priv
NSRUN_IMAGES=$STORE run_nsrun --image priv -- /bin/capped status
assert_match "... and the stripped file runs in a container" 'CapEff:[[:space:]]*0{16}' "$OUT"
# the attack: another host user runs the stored file to gain its capabilities
if [ "$(id -u)" = 0 ]; then
	other=nsrun-i23-$$
	if useradd --system --no-create-home --shell /usr/sbin/nologin "$other" 2>"$T/useradd.err"; then
		at_exit "userdel '$other'"
		chmod 755 "$T/plain" "$T/plain/bin"
		run_cmd runuser -u "$other" -- "$T/plain/bin/capped" status
		assert_match "control: $other running a file with the capability gets it" 'CapPrm:[[:space:]]*0*82' "$OUT"
		run_cmd runuser -u "$other" -- "$STORE/priv/rootfs/bin/capped" status
		assert_match "$other running the imported file gets no capability" 'CapPrm:[[:space:]]*0{16}' "$OUT"
	else
		not_ok "a second user to run the imported file: useradd $other" "$(cat "$T/useradd.err")"
	fi
fi

# ---------------------------------------------------------------- 4: shared objects

for fmt in oci oci-archive docker-archive; do
	src=$T/shared-$fmt
	[ "$fmt" = oci ] || src=$src.tar
	mk "$fmt" "$src" shared
	run_cmd "$TOOL" import --quiet --interpreter /bin/hello "$fmt:$src" "shared-$fmt" --store "$STORE"
	assert_eq "$fmt with a FIFO, 0777 and 1777 directories, a 0664 file imports" "0 " "$RC $ERR"
	R=$STORE/shared-$fmt/rootfs
	assert_eq "... no FIFO, socket or device, nothing group/other-writable or sticky" "" \
		"$(find "$R" -xdev \( -type p -o -type s -o -type b -o -type c -o \( ! -type l -perm /1022 \) \) -print)"
	check "... the directories and the file are still there" test -d "$R/open" -a -d "$R/var/tmp" -a -f "$R/group-writable"
	check "... its harmless part runs" runs "shared-$fmt"
done
# ---------------------------------------------------------------- 2 and 4 through a registry

# A registry pull is nsrun's own (nsrun pull: runtime/image_fetch.c, whose
# finishing is image_finish.c): the privileged and shared images above, served
# by the test registry, come out the same (the controls above show what their
# layers carry).
for img in priv shared-oci; do
	serve_layout "$T/$img"
	run_cmd "$NSRUN" pull --quiet --interpreter /bin/hello --tls-verify=false "docker://127.0.0.1:$RPORT/test/img:1" \
		"r-$img" --store "$STORE"
	assert_eq "nsrun pull of $img from a registry succeeds" "0 " "$RC $ERR"
	R=$STORE/r-$img/rootfs
	assert_eq "... no xattr but user.* is left on any file" "" \
		"$(cd "$R" && find . -xdev ! -type l -exec getfattr -h --absolute-names -d -m - {} + 2>/dev/null | grep -E '^(security|trusted|system)\.')"
	assert_eq "... no set-id file, FIFO, socket or device, nothing group/other-writable or sticky" "" \
		"$(find "$R" -xdev \( -type p -o -type s -o -type b -o -type c -o \( ! -type l -perm /7022 \) \) -print)"
	if [ "$(id -u)" = 0 ]; then
		assert_eq "... everything is root's" "" "$(find "$R" -xdev ! -user 0 -print | head -3)"
	fi
	check "... its harmless part runs" runs "r-$img"
done

assert_eq "the store itself: nothing group/other-writable" "" \
	"$(find "$STORE" -xdev ! -type l -perm /022 -print | head -3)"

# ---------------------------------------------------------------- what the runtime refuses

# nsrun image check, the code a run uses, judges what lands (43-image-check.t
# compares its words with a run's)
declare -A refusal=(
	[env]='image\.json ".*/image\.json": a string holds a NUL character'
	[env-nul]='image\.json ".*/image\.json": a string holds a NUL character'
	[env-big]='image\.json ".*/image\.json": env\[1\] is longer than 131071 bytes'
	[env-noeq]='image\.json ".*/image\.json": env\[1\] is not KEY=VALUE'
)
for k in env env-nul env-big env-noeq; do
	mk oci "$T/$k" "$k"
	run_cmd "$TOOL" import --quiet --interpreter /bin/hello "oci:$T/$k:test" "$k" --store "$STORE"
	assert_eq "Env with ${k#env-}: the import fails" 1 "$RC"
	assert_match "... with nsrun's refusal" "^nsrun-image: import \"$k\": nsrun would refuse the image: ${refusal[$k]}" "$ERR"
	assert_not_match "... and no raw control character in the messages" $'[\x01-\x08\x0b-\x1f\x7f]' "$ERR"
	check "... leaving nothing" eval '[ ! -e "$STORE/$k" ] && no_leftovers "$k"'
done
mk oci "$T/env-escape" env-escape
run_cmd "$TOOL" import --quiet --interpreter /bin/hello "oci:$T/env-escape:test" env-escape --store "$STORE"
assert_eq "control: an Env value with a terminal escape (execve takes it) imports" "0 " "$RC $ERR"
assert_eq "... keeping the entries" '["PATH=/bin","ESC=\u001b[2Jx","GOOD=1"]' "$(jq -c .env "$STORE/env-escape/image.json")"
check "... and nsrun runs it" runs env-escape

mk oci "$T/wd" workdir-dotdot
run_cmd "$TOOL" import "oci:$T/wd:test" wd --store "$STORE"
assert_eq "a WorkingDir with \"..\" fails the import" 1 "$RC"
assert_match "... saying nsrun would refuse it" 'nsrun would refuse the image: image workdir: "/\.\./etc": "\.\." is not allowed' "$ERR"
check "... leaving nothing" eval '[ ! -e "$STORE/wd" ] && no_leftovers wd'

mk docker-archive "$T/esc.tar" escape-name
run_cmd "$TOOL" import "docker-archive:$T/esc.tar" esc --store "$STORE"
assert_eq "a docker-archive naming a layer with terminal escapes fails" 1 "$RC"
assert_not_match "... and no escape reaches the terminal" $'[\x01-\x08\x0b-\x1f\x7f]' "$ERR"

# the digest of a local source is the manifest that was unpacked
mk oci "$T/plainimg" plain
run_cmd "$TOOL" import --quiet --interpreter /bin/hello "oci:$T/plainimg:test" plainimg --store "$STORE"
want=$(jq -r '.manifests[0].digest' "$T/plainimg/index.json")
assert_eq "a local source's recorded digest is its unpacked manifest" "$want $want" \
	"$(jq -r '"\(.source.digest) \(.source.manifest)"' "$STORE/plainimg/image.json")"

# nsrun itself: a deeply nested image.json is one error, not a crash
cp -a "$STORE/plainimg" "$STORE/deep"
python3 -c 'import sys; sys.stdout.write("{\"env\": " + "[" * 400000 + "]" * 400000 + "}")' >"$STORE/deep/image.json"
NSRUN_IMAGES=$STORE run_nsrun --image deep -- /bin/hello
assert_eq "nsrun with an image.json nested 400,000 deep exits 125" 125 "$RC"
assert_match "... with one line naming the depth" '^nsrun: image.json ".*": nested deeper than 32 levels' "$ERR"

# the sandbox keeps no fd but 0-2: a directory fd from outside its root (the
# build directory bwrap binds, the script's locks, the caller's) is a way out
LIB=$TESTS_DIR/../rootfs-tools/lib/nsrun-image-confine.sh
mkdir -p "$T/fdt"
sandbox_fds() {  # CLOSE(1|0) — the fds ls sees in the sandbox, with fd 7 a dir outside
	bash -c '. "$1"; die() { echo "$*"; exit 1; }
		BUILD_TMP=$(mktemp -d "$2/b.XXXXXX"); work_init; bounds_init 100000000 1000 60 10
		exec 7<"$2"
		if [ "$3" = 1 ]; then
			run_confined /dev/null "$BUILD_TMP/out" "$BUILD_TMP/log" ls /proc/self/fd
			cat "$BUILD_TMP/out"
		else
			sandbox_argv; env -i "${SANDBOX[@]}" --chdir / -- ls /proc/self/fd
		fi' _ "$LIB" "$T/fdt" "$1" 2>&1 | tr '\n' ' '
}
assert_match "control: bwrap alone passes an outside directory fd (7) on" '(^| )7 ' "$(sandbox_fds 0)"
assert_eq "the sandbox's program has only 0-2 (and ls's own 3)" "0 1 2 3 " "$(sandbox_fds 1)"

assert_eq "at the end, nothing outside the store changed" "$BEFORE" "$(victim_state)"
done_testing
