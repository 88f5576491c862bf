#!/bin/bash
# Importing an image is bounded (issue 23, kind 5): bytes (a gzip layer and a
# gzipped docker-archive that expand past --max-size), files (--max-files),
# the interpreter lookup (an Env PATH of 3000 entries), time (--timeout) and
# registries that stall (a loopback test registry that never answers a
# manifest, or never finishes a blob: --network-timeout). Each refusal is one
# line naming the bound and the option that raises it, and leaves no image,
# no temporary directory and no process; each has its control, the same image
# imported and run with the bound raised. Also: two imports of one name at
# once both succeed (the name lock is taken before any temporary directory).
# Needs: skopeo umoci jq bwrap bsdtar python3. Missing tools are a failure.
# shellcheck disable=SC2016
. "$(dirname "$0")/../lib.sh"

image_import_setup gzip

# nothing of NAME: no image, no temp dir, no sandbox process left
nothing_left() {
	[ ! -e "$STORE/$1" ] && ! compgen -G "$STORE/.$1.tmp.*" >/dev/null &&
		! pgrep -f -- "$STORE/\.$1\.tmp\." >/dev/null
}
IMPORT=("$TOOL" import --quiet --interpreter /bin/hello)
# bounded WHAT NAME SOURCE OPTION TIGHT LOOSE MESSAGE CMD... — CMD OPTION TIGHT SOURCE
# NAME (an import or a pull into STORE) fails, with one line matching the ERE
# MESSAGE, and leaves nothing; the control: with OPTION LOOSE it makes NAME, which runs
bounded() {
	local what=$1 name=$2 src=$3 opt=$4 tight=$5 loose=$6 msg=$7
	shift 7
	run_cmd "$@" "$opt" "$tight" "$src" "$name" --store "$STORE"
	assert_eq "$what, $opt $tight: fails" 1 "$RC"
	assert_match "... with one line naming the bound" "$msg" "$ERR"
	check "... leaving nothing" nothing_left "$name"
	run_cmd "$@" "$opt" "$loose" "$src" "$name" --store "$STORE"
	assert_eq "control: with $opt $loose it succeeds" "0 " "$RC $ERR"
	check "... and runs" runs "$name"
}

# ---------------------------------------------------------------- bytes

SIZE_MB=40 mk oci "$T/big" big
bounded "a 40 MiB file from a small gzip layer" big "oci:$T/big:test" --max-size 8m 64m \
	'^nsrun-image: import "big": (a file of )?the image (is|has) larger than 8\.0M \(--max-size SIZE raises the bound\)$' \
	"${IMPORT[@]}"

SIZE_MB=40 RAW_LAYER=1 mk docker-archive "$T/bigd.tar" big
gzip -9 "$T/bigd.tar"
bounded "a gzipped docker-archive of $(($(stat -c %s "$T/bigd.tar.gz") / 1024)) KiB expanding to 40 MiB" bigd \
	"$T/bigd.tar.gz" --max-size 8m 200m 'larger than 8\.0M \(--max-size SIZE raises the bound\)$' "${IMPORT[@]}"

# ---------------------------------------------------------------- files

# its layer's directories 0555 holding the files: the refusal (during the
# unpack, or after it on a fast machine) ends the unpacker and every process of
# its sandbox before removing the tree, whatever its modes (the tree once
# stayed, "cannot remove", when umoci outlived bwrap and still wrote into it)
N_FILES=3000 mk oci "$T/many" many-locked
bounded "3000 files in 0555 directories" many "oci:$T/many:test" --max-files 1000 5000 \
	'^nsrun-image: import "many": the image has more than 1000 files \(--max-files N raises the bound\)$' "${IMPORT[@]}"

# ---------------------------------------------------------------- the interpreter lookup

mk oci "$T/longpath" longpath
SECONDS=0
run_cmd "$TOOL" import --quiet "oci:$T/longpath:test" longpath --store "$STORE"
took=$SECONDS
assert_eq "an Env PATH of 3000 entries: the import ends" 0 "$RC"
check "... in a bounded time (${took}s < 60s)" test "$took" -lt 60
assert_match "... saying no interpreter was found" 'no interpreter' "$ERR"
check "... and the image runs" runs longpath

# ---------------------------------------------------------------- registries that stall

mk oci "$T/reg" plain
for stall in manifest blob; do
	rm -f "$T/stalled"
	serve_layout "$T/reg" "$stall"
	SECONDS=0
	run_cmd timeout 60 "$TOOL" pull --quiet --interpreter /bin/hello --tls-verify=false --network-timeout 3 \
		"docker://127.0.0.1:$RPORT/test/img:1" "st-$stall" --store "$STORE"
	took=$SECONDS
	assert_eq "a registry that stalls on the $stall: pull fails (not killed by the guard)" 1 "$RC"
	check "... and it did stall there" test -e "$T/stalled"
	check "... within its time-out (${took}s < 20s)" test "$took" -lt 20
	assert_match "... with one line naming --network-timeout" \
		"^nsrun: pull \"st-$stall\": the registry sent nothing for 3 s \\(--network-timeout SECONDS raises the bound\\)\$" "$ERR"
	check "... leaving nothing" nothing_left "st-$stall"
	kill "$RPID" 2>/dev/null
	wait "$RPID" 2>/dev/null
done
serve_layout "$T/reg"
run_cmd "$TOOL" pull --quiet --interpreter /bin/hello --tls-verify=false --network-timeout 3 \
	"docker://127.0.0.1:$RPORT/test/img:1" st-none --store "$STORE"
assert_eq "control: the same registry without a stall serves the pull" "0 " "$RC $ERR"
check "... and the image runs" runs st-none

# the whole import's time: --timeout, on a registry stalling longer than that
serve_layout "$T/reg" blob
run_cmd timeout 60 "$TOOL" pull --quiet --tls-verify=false --timeout 3 \
	"docker://127.0.0.1:$RPORT/test/img:1" st-time --store "$STORE"
assert_match "--timeout 3 on a stalled pull: one line naming --timeout" \
	'^nsrun: pull "st-time": the import took longer than 3 s \(--timeout SECONDS raises the bound\)$' "$ERR"
check "... leaving nothing" nothing_left st-time

# ---------------------------------------------------------------- a registry pull's bounds

# The same bounds on a registry pull, which is nsrun's own (nsrun pull,
# runtime/image_fetch.c; nsrun-image pull calls it): the layouts above served
# by the test registry.
PULL=("$NSRUN" pull --quiet --interpreter /bin/hello --tls-verify=false)
serve_layout "$T/big"
bounded "nsrun pull of the 40 MiB file from a registry" rbig "docker://127.0.0.1:$RPORT/test/img:1" --max-size 8m 64m \
	'^nsrun: pull "rbig": (a file of )?the image (is|has) larger than 8\.0M \(--max-size SIZE raises the bound\)$' "${PULL[@]}"
# (the layer of 0555 directories above)
serve_layout "$T/many"
bounded "nsrun pull of 3000 files in 0555 directories from a registry" rmany "docker://127.0.0.1:$RPORT/test/img:1" --max-files 1000 5000 \
	'^nsrun: pull "rmany": the image has more than 1000 files \(--max-files N raises the bound\)$' "${PULL[@]}"

# ---------------------------------------------------------------- one name at once

"${IMPORT[@]}" --force "oci:$T/reg:test" same --store "$STORE" >"$T/a.out" 2>&1 &
a=$!
"${IMPORT[@]}" --force "oci:$T/reg:test" same --store "$STORE" >"$T/b.out" 2>&1 &
b=$!
wait "$a"
ra=$?
wait "$b"
rb=$?
assert_eq "two imports of one name at once both succeed" "0 0" "$ra $rb"
check "... the image runs" runs same
check "... nothing is left beside it" eval '! compgen -G "$STORE/.same.tmp.*" >/dev/null && ! compgen -G "$STORE/.same.old.*" >/dev/null'

done_testing
