#!/bin/bash
# A hostile image's strings in nsrun's own lines on the caller's terminal.  The
# exec failure ("exec \"CMD\": ...") was written with snprintf, not error_set, and
# the note on an image's User printed it as it came: an Entrypoint or a User with
# an escape sequence (ESC ] 0; ... BEL sets the terminal's title, ESC [ 31m its
# colour, U+009B is CSI to an 8-bit terminal; others rewrite the screen) or a
# newline (a forged "nsrun:" line) reached the terminal raw.  Now every error
# line is made one line of printable text where it is printed (error_print), as
# a peer's (init's, the OCI monitor's) message is taken, and the note does the
# same; C1 controls and bytes that are not UTF-8 go too.
# Probe: an image whose Entrypoint and User hold ESC, BEL, CSI and a newline:
# nsrun's stderr holds no control character but the line ends, each line an
# "nsrun:" one, and exactly three (the note, the exec error, its hint).  Control:
# the lines do name the image's strings (the bytes in them shown as '?'), and the
# same run with a plain Entrypoint names it as it is.  Warnings likewise (an OCI
# config's mount option), with their control.
. "$(dirname "$0")/../lib.sh"
require_nsrun
require_userns
require_probe

plan 12

S=$TESTTMP/store
# mkimg (tests/lib.sh) makes its images there
mkimg evil '{"env": ["PATH=/bin"], "workdir": "/work", "user": "\u001b[32mGREEN\nnsrun: forged user",
  "entrypoint": ["/bin/\u001b]0;PWNED\u0007x\u001b[31mRED\u009b32m\nnsrun: forged"]}'
mkimg plain '{"env": ["PATH=/bin"], "workdir": "/work", "entrypoint": ["/bin/nothere"]}'

NSRUN_IMAGES=$S run_nsrun --image evil
assert_eq "an Entrypoint that is not there: 127" 127 "$RC"
bad=$(printf '%s' "$ERR" | tr -d '\n' | LC_ALL=C tr -d '\040-\176' | od -An -c | tr -s ' ')
assert_eq "no control character (nor any byte past ASCII) in nsrun's lines but their ends" "" "$bad"
assert_eq "three lines, each an nsrun: one (no forged line)" "3 3" \
	"$(grep -c '' <<<"$ERR") $(grep -c '^nsrun: ' <<<"$ERR")"
assert_match "the exec error names the Entrypoint, its bytes as '?'" \
	'^nsrun: exec "/bin/\?\]0;PWNED\?x\?\[31mRED\?\?32m\?nsrun: forged": No such file' "$(sed -n 2p <<<"$ERR")"
assert_match "the note names the User, its bytes as '?'" \
	'^nsrun: note: image "evil" names user "\?\[32mGREEN\?nsrun: forged user"' "$(sed -n 1p <<<"$ERR")"

NSRUN_IMAGES=$S run_nsrun --image plain
assert_eq "control: a plain Entrypoint that is not there: 127" 127 "$RC"
assert_match "... named as it is" '^nsrun: exec "/bin/nothere": No such file or directory' "$ERR"
assert_eq "... two lines (the error, its hint)" 2 "$(grep -c '^nsrun: ' <<<"$ERR")"

# ---- warnings: an OCI config's strings (a mount option here) in a warning line were
# printed raw.  Probe: an unknown option holding ESC, BEL, CSI and a newline: the warning
# is one printable "nsrun:" line.  Control: a plain unknown option is named as it is.
T=$TESTTMP/oci
oci_probe_bundle "$T" "$TESTTMP/image"
at_exit oci_cleanup
evil_opt="c['mounts'].append({'destination': '/mnt', 'type': 'tmpfs', 'source': 'tmpfs',
    'options': [argv[0]]})"
oci_config "$T" '["/nsrun-probe", "sleep", "0"]' "" "$evil_opt" $'x\e]0;PWNED\ax\e[31mRED\xc2\x9b32m\nnsrun: forged'
oci run --bundle "$T/bundle" w1
warned=$(grep 'not applied (unknown to nsrun)' <<<"$ERR")
assert_match "a config's unknown mount option is warned of, its bytes as '?'" \
	'^nsrun: warning: mounts\[[0-9]+\]\.options: "x\?\]0;PWNED\?x\?\[31mRED\?\?32m\?nsrun: forged" not applied' "$warned"
bad=$(printf '%s' "$ERR" | tr -d '\n' | LC_ALL=C tr -d '\040-\176' | od -An -c | tr -s ' ')
assert_eq "... no control character (nor any byte past ASCII) in nsrun's lines but their ends" "" "$bad"
assert_eq "... no forged line (the option's \"nsrun: forged\" stays inside the warning)" "" "$(grep '^nsrun: forged' <<<"$ERR")"
oci_config "$T" '["/nsrun-probe", "sleep", "0"]' "" "$evil_opt" plainoption
oci run --bundle "$T/bundle" w1
assert_match "control: a plain unknown option is named as it is" \
	'^nsrun: warning: mounts\[[0-9]+\]\.options: "plainoption" not applied \(unknown to nsrun\)' \
	"$(grep 'not applied (unknown' <<<"$ERR")"
