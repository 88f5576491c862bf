#!/bin/bash
# The bad input catalogue: malformed and hostile invocations, each with its exact
# exit status and the start of its first stderr line; nsrun's own errors are one
# "nsrun: " line (plus optional "nsrun: hint:" lines), a payload never runs where it
# should not, and nothing is left on the host afterwards.
. "$(dirname "$0")/../lib.sh"
require_nsrun
require_userns
require_image python
require_probe

N=$NSRUN
ME=$(id -u)
T=$TESTTMP
mkdir -p "$T/adir" "$T/emptyroot" "$T/ro-store" "$T/ro-cache"
echo 'print("should not run")' >"$T/ok.py"; chmod 644 "$T/ok.py"
echo 'print("ran")' >"$T/ran.py"; chmod 644 "$T/ran.py"
mkfifo "$T/fifo"
ln -s "$T/missing-target.py" "$T/dangling.py"
echo 'print("secret")' >"$T/secret.py"; chmod 000 "$T/secret.py"
ln -s "$T/secret.py" "$T/link-to-secret.py"
: >"$T/empty.py"

# image stores: broken JSON, an image.json of wrong types, a directory for image.json,
# an image whose rootfs has no interpreter, and a read-only copy of the test store
mkstore() { mkdir -p "$T/$1/python/rootfs"; printf '%s' "$2" >"$T/$1/python/image.json"; chmod -R a+rX "$T/$1"; }
mkstore badjson '{ this is not json'
mkstore wrongtypes '{"interpreter": "python3", "env": [1]}'
mkstore envint '{"interpreter": ["python3"], "env": [1]}'
mkstore workdir5 '{"interpreter": ["python3"], "workdir": 5}'
mkstore array '[1, 2]'
mkstore nointerp '{"interpreter": ["python3"]}'          # rootfs empty: no python3 inside
mkdir -p "$T/dirjson/python/rootfs" "$T/dirjson/python/image.json"
STORE=${NSRUN_IMAGES:-$HOME/.local/share/nsrun/images}
ln -s "$STORE/python" "$T/ro-store/python"; chmod 555 "$T/ro-store"
chmod 555 "$T/ro-cache"
LONGARG=$(head -c 120000 /dev/zero | tr '\0' a)
LONGNAME=$(head -c 65 /dev/zero | tr '\0' h)
MANY=(); for i in $(seq 1 5000); do MANY+=("arg$i"); done
MANYENV=(); for i in $(seq 1 1000); do MANYENV+=(-e "V$i=$i"); done

snapshot_host

# bad DESCRIPTION STATUS MESSAGE-START -- COMMAND...
#   MESSAGE-START: the literal start of stderr's first line; "" = stderr must be empty
bad() {
	local desc=$1 want=$2 msg=$3 first
	shift 4
	run_cmd "$@"
	assert_eq "$desc: exit $want" "$want" "$RC"
	first=$(head -n 1 <<<"$ERR")
	if [ -z "$msg" ]; then
		assert_eq "  ... nothing on stderr" "" "$ERR"
	elif [[ $first == "$msg"* ]]; then
		ok "  ... '$msg...'"
	else
		not_ok "  ... '$msg...'" "first line: '$first'" "$(_ctx)"
	fi
	if [ "$want" = 125 ]; then
		assert_nsrun_error "  ... one nsrun: line"
		assert_not_match "  ... payload did not run" 'should not run' "$OUT"
	fi
}
IMG=(--image python)

# options
bad "unknown long option" 125 'nsrun: --no-such-option: unknown option' -- "$N" "${IMG[@]}" --no-such-option -- true
bad "unknown short option" 125 'nsrun: -z: unknown option' -- "$N" -z "${IMG[@]}" -- true
bad "long option with a value it does not take" 125 'nsrun: --strict=yes: unknown option' -- "$N" --strict=yes "${IMG[@]}" -- true
bad "option missing its value" 125 'nsrun: --timeout: needs a value' -- "$N" "${IMG[@]}" --timeout
bad "nothing to run" 125 'nsrun: no command: give FILE' -- "$N" "${IMG[@]}"
bad "-- without a command" 125 'nsrun: no command: give FILE' -- "$N" "${IMG[@]}" --
bad "no image and no rootfs" 125 'nsrun: no image: use --image NAME or --rootfs DIR' -- "$N" -- true
bad "--image and --rootfs" 125 'nsrun: --image and --rootfs: give one of them' -- "$N" "${IMG[@]}" --rootfs / -- true
# sizes and durations
bad "--memory with an unknown suffix" 125 'nsrun: --memory: "12x": unknown suffix' -- "$N" "${IMG[@]}" --memory 12x -- true
bad "--memory empty" 125 'nsrun: --memory: "": not a size' -- "$N" "${IMG[@]}" --memory= -- true
bad "--memory negative" 125 'nsrun: --memory: "-5": not a size' -- "$N" "${IMG[@]}" --memory -5 -- true
bad "--memory overflowing 64 bits" 125 'nsrun: --memory: "99999999999999999999": too large' -- "$N" "${IMG[@]}" --memory 99999999999999999999 -- true
bad "--memory overflowing with its suffix" 125 'nsrun: --memory: "17179869184g": too large' -- "$N" "${IMG[@]}" --memory 17179869184g -- true
bad "--tmpfs-size 1q" 125 'nsrun: --tmpfs-size: "1q": unknown suffix' -- "$N" "${IMG[@]}" --tmpfs-size 1q -- true
bad "--output-limit past 1g (kept in memory)" 125 'nsrun: --output-limit: "2g": at most 1g' -- "$N" "${IMG[@]}" --output-limit 2g -- true
bad "--output-limit overflowing" 125 'nsrun: --output-limit: "18446744073709551616": too large' -- "$N" "${IMG[@]}" --output-limit 18446744073709551616 -- true
bad "--timeout abc" 125 'nsrun: --timeout: "abc": not a duration' -- "$N" "${IMG[@]}" --timeout abc -- true
bad "--timeout negative" 125 'nsrun: --timeout: "-1": not a duration' -- "$N" "${IMG[@]}" --timeout -1 -- true
bad "--timeout with an exponent" 125 'nsrun: --timeout: "1e3": not a duration' -- "$N" "${IMG[@]}" --timeout 1e3 -- true
bad "--timeout nan" 125 'nsrun: --timeout: "nan": not a duration' -- "$N" "${IMG[@]}" --timeout nan -- true
bad "--timeout overflowing" 125 'nsrun: --timeout: "99999999999999999999": too large' -- "$N" "${IMG[@]}" --timeout 99999999999999999999 -- true
bad "--stop-timeout abc" 125 'nsrun: --stop-timeout: "abc": not a duration' -- "$N" "${IMG[@]}" --stop-timeout abc -- true
bad "--cpu-time 1.2.3" 125 'nsrun: --cpu-time: "1.2.3": not a duration' -- "$N" "${IMG[@]}" --cpu-time 1.2.3 -- true
bad "--cpus too many" 125 'nsrun: --cpus: "5000": too large' -- "$N" "${IMG[@]}" --cpus 5000 -- true
bad "--cpus too few" 125 'nsrun: --cpus: "0.0001": at least 0.001' -- "$N" "${IMG[@]}" --cpus 0.0001 -- true
# it said "not a duration in seconds", the timeout parser's words (breaker, session 20)
bad "--cpus not a number" 125 'nsrun: --cpus: "abc": not a number of CPUs' -- "$N" "${IMG[@]}" --cpus abc -- true
# a duration's units are not CPUs: "1s" was taken for 1 CPU (breaker, session 20)
bad "--cpus with a unit" 125 'nsrun: --cpus: "1s": not a number of CPUs' -- "$N" "${IMG[@]}" --cpus 1s -- true
bad "--cpus 500ms" 125 'nsrun: --cpus: "500ms": not a number of CPUs' -- "$N" "${IMG[@]}" --cpus 500ms -- true
bad "--pids-limit over the maximum" 125 'nsrun: --pids-limit: "99999999": ' -- "$N" "${IMG[@]}" --pids-limit 99999999 -- true
bad "--pids-limit negative" 125 'nsrun: --pids-limit: "-1": ' -- "$N" "${IMG[@]}" --pids-limit -1 -- true
# names, users, paths
bad "--network host" 125 'nsrun: --network: "host": refused: nsrun gives a container no network of the host' -- "$N" "${IMG[@]}" --network host -- true
bad "--user abc (a name the image lacks)" 125 'nsrun: unable to find user abc: no matching entries in passwd file' -- "$N" "${IMG[@]}" --user abc -- true
bad "--user a/b" 125 'nsrun: --user: "a/b": expected USER[:GROUP]' -- "$N" "${IMG[@]}" --user a/b -- true
bad "--user 1:2:3" 125 'nsrun: --user: "1:2:3": expected UID[:GID]' -- "$N" "${IMG[@]}" --user 1:2:3 -- true
bad "--user past 32 bits" 125 'nsrun: --user: "4294967296": expected UID[:GID]' -- "$N" "${IMG[@]}" --user 4294967296 -- true
bad "-e with a bad name" 125 'nsrun: --env: "1BAD=x": expected KEY=VALUE' -- "$N" "${IMG[@]}" -e 1BAD=x -- true
bad "-e empty" 125 'nsrun: --env: "": expected KEY=VALUE' -- "$N" "${IMG[@]}" -e '' -- true
bad "-e with a newline in the name" 125 'nsrun: --env: "A?B=1": expected KEY=VALUE' -- "$N" "${IMG[@]}" -e $'A\nB=1' -- true
bad "-v without a container path" 125 'nsrun: --volume' -- "$N" "${IMG[@]}" -v "$T" -- true
bad "-v from a missing host path" 125 "nsrun: " -- "$N" "${IMG[@]}" -v "$T/nope:/x" -- true
bad "-v to a relative container path" 125 'nsrun: --volume' -- "$N" "${IMG[@]}" -v "$T:rel" -- true
bad "-v with an unknown mode" 125 'nsrun: --volume' -- "$N" "${IMG[@]}" -v "$T:/x:rx" -- true
bad "-w relative" 125 'nsrun: --workdir: "rel"' -- "$N" "${IMG[@]}" -w rel -- true
bad "-w with .." 125 'nsrun: --workdir: "/a/../b"' -- "$N" "${IMG[@]}" -w /a/../b -- true
bad "--hostname empty" 125 'nsrun: --hostname: "": must be 1 to 64' -- "$N" "${IMG[@]}" --hostname '' -- true
bad "--hostname of 65 characters" 125 "nsrun: --hostname: \"$LONGNAME\": must be 1 to 64" -- "$N" "${IMG[@]}" --hostname "$LONGNAME" -- true
bad "--add-host without an address" 125 'nsrun: --add-host: "db": expected NAME:IP' -- "$N" "${IMG[@]}" --add-host db -- true
bad "--add-host without a name" 125 'nsrun: --add-host: ":10.0.0.1": expected NAME:IP' -- "$N" "${IMG[@]}" --add-host :10.0.0.1 -- true
bad "--add-host with a name, not an address" 125 'nsrun: --add-host: "db:example.org": "example.org" is not a numeric IP address' -- "$N" "${IMG[@]}" --add-host db:example.org -- true
bad "--add-host with a bad IPv4 address" 125 'nsrun: --add-host: "db:10.0.0.256": "10.0.0.256" is not a numeric IP address' -- "$N" "${IMG[@]}" --add-host db:10.0.0.256 -- true
bad "--add-host with an unclosed bracket" 125 'nsrun: --add-host: "db:[::1": "[::1" is not a numeric IP address' -- "$N" "${IMG[@]}" --add-host 'db:[::1' -- true
bad "--add-host with a newline in the name" 125 'nsrun: --add-host: "db' -- "$N" "${IMG[@]}" --add-host $'db\n10.9.9.9 evil:10.0.0.1' -- true
bad "--add-host with a space in the name" 125 'nsrun: --add-host: "d b:10.0.0.1": the name must be' -- "$N" "${IMG[@]}" --add-host 'd b:10.0.0.1' -- true
bad "--add-host with a name starting with -" 125 'nsrun: --add-host: "-db:10.0.0.1": the name must be' -- "$N" "${IMG[@]}" --add-host -db:10.0.0.1 -- true
bad "--add-host host-gateway (no address of the host)" 125 'nsrun: --add-host: "db:host-gateway": host-gateway: nsrun gives the container no address of the host' -- "$N" "${IMG[@]}" --add-host db:host-gateway -- true
bad "--add-host with --isolation chroot" 125 'nsrun: isolation reduced: --add-host needs' -- "$N" "${IMG[@]}" --isolation chroot --add-host db:10.0.0.1 - </dev/null
mkdir -p "$T/hostsdir/etc/hosts"; chmod -R a+rX "$T/hostsdir"
bad "an image whose /etc/hosts is a directory" 125 'nsrun: mount point "/etc/hosts" in the image: Is a directory' -- "$N" --rootfs "$T/hostsdir" -- /bin/true
bad "--image empty" 125 'nsrun: --image: "": not a valid image name' -- "$N" --image '' -- true
bad "--image not UTF-8 (each byte printed as ?)" 125 'nsrun: --image: "??": not a valid image name' -- "$N" --image $'\xff\xfe' -- true
bad "--image a path out of the store" 125 'nsrun: --image: "../python": not a valid image name' -- "$N" --image ../python -- true
bad "--image unknown" 125 'nsrun: image "no-such-image" not found in' -- "$N" --image no-such-image -- true
assert_match "  ... the hint says what to do: image ls, pull or build" \
	'^nsrun: hint: nsrun image ls .*nsrun pull NAME.*nsrun-image build' "$(sed -n 2p <<<"$ERR")"
bad "--image an unknown reference" 125 'nsrun: image "no-such-image:1" not found in' -- "$N" --image no-such-image:1 -- true
assert_match "  ... the hint: pull it" '^nsrun: hint: pull it first: nsrun pull REFERENCE' "$(sed -n 2p <<<"$ERR")"
bad "--rootfs missing" 125 "nsrun: --rootfs \"$T/nope\": No such file" -- "$N" --rootfs "$T/nope" -- true
bad "--rootfs with FILE" 125 'nsrun: FILE and - need an image with an interpreter' -- "$N" --rootfs / "$T/ok.py"
bad "--cgroup-parent with .." 125 'nsrun: --cgroup-parent: "../x"' -- "$N" "${IMG[@]}" --cgroup-parent ../x -- true
bad "--security-opt seccomp of a missing file" 125 'nsrun: ' -- "$N" "${IMG[@]}" --security-opt seccomp="$T/nope.json" -- true
bad "--security-opt unknown" 125 'nsrun: --security-opt: "label=x": unknown' -- "$N" "${IMG[@]}" --security-opt label=x -- true
bad "--json into a missing directory" 125 "nsrun: --json \"$T/nope/r.json\": No such file" -- "$N" "${IMG[@]}" --json "$T/nope/r.json" -- true
bad "--stdin missing" 125 "nsrun: --stdin \"$T/nope\": No such file" -- "$N" "${IMG[@]}" --stdin "$T/nope" -- true
# FILE
bad "FILE missing" 125 "nsrun: file \"$T/missing.py\": No such file" -- "$N" "${IMG[@]}" "$T/missing.py"
assert_match "  ... its hint: FILE is the host's; a program of the image's goes after --" \
	'nsrun: hint: FILE is a script on the host, .*put it after --' "$ERR"
bad "FILE a directory" 125 "nsrun: file \"$T/adir\": Is a directory" -- "$N" "${IMG[@]}" "$T/adir"
bad "FILE a fifo" 125 "nsrun: file \"$T/fifo\": not a regular file" -- "$N" "${IMG[@]}" "$T/fifo"
bad "FILE a dangling symlink" 125 "nsrun: file \"$T/dangling.py\": No such file" -- "$N" "${IMG[@]}" "$T/dangling.py"
bad "FILE a symlink to a file nobody may read" 125 "nsrun: file \"$T/link-to-secret.py\": " -- "$N" "${IMG[@]}" "$T/link-to-secret.py"
bad "FILE /dev/null (a device)" 125 'nsrun: file "/dev/null": not a regular file' -- "$N" "${IMG[@]}" /dev/null
bad "FILE empty: runs, nothing happens" 0 "" -- "$N" "${IMG[@]}" "$T/empty.py"
# big argv and environment: they reach the payload whole
bad "an argument of 120000 bytes" 0 "" -- "$N" "${IMG[@]}" -- sh -c '[ ${#1} = 120000 ]' sh "$LONGARG"
bad "5000 arguments" 0 "" -- "$N" "${IMG[@]}" -- sh -c '[ $# = 5000 ]' sh "${MANY[@]}"
bad "1000 -e variables" 0 "" -- "$N" "${IMG[@]}" "${MANYENV[@]}" -- sh -c '[ "$V1000" = 1000 ]'
bad "a variable of 120000 bytes" 0 "" -- "$N" "${IMG[@]}" -e "BIG=$LONGARG" -- sh -c '[ ${#BIG} = 120000 ]'
# images and stores
bad "a rootfs without the command" 127 'nsrun: ' -- "$N" --rootfs "$T/emptyroot" -- /bin/sh -c true
bad "an image without its interpreter: refused before anything is made" 125 'nsrun: image "python": interpreter "python3" is not an executable file on the image'"'"'s PATH' -- env NSRUN_IMAGES="$T/nointerp" "$N" "${IMG[@]}" "$T/ok.py"
bad "image.json not JSON" 125 "nsrun: image.json \"$T/badjson/python/image.json\": " -- env NSRUN_IMAGES="$T/badjson" "$N" "${IMG[@]}" -- true
bad "image.json interpreter a string" 125 "nsrun: $T/wrongtypes/python/image.json: \"interpreter\" must be an array" -- env NSRUN_IMAGES="$T/wrongtypes" "$N" "${IMG[@]}" -- true
bad "image.json env of numbers" 125 "nsrun: $T/envint/python/image.json: env[0] must be a string" -- env NSRUN_IMAGES="$T/envint" "$N" "${IMG[@]}" -- true
bad "image.json workdir a number" 125 "nsrun: image.json \"$T/workdir5/python/image.json\": \"workdir\" must be a string" -- env NSRUN_IMAGES="$T/workdir5" "$N" "${IMG[@]}" -- true
bad "image.json an array" 125 "nsrun: image.json \"$T/array/python/image.json\": must be a JSON object" -- env NSRUN_IMAGES="$T/array" "$N" "${IMG[@]}" -- true
bad "image.json a directory" 125 "nsrun: read image.json \"$T/dirjson/python/image.json\": Is a directory" -- env NSRUN_IMAGES="$T/dirjson" "$N" "${IMG[@]}" -- true
bad "an empty store" 125 "nsrun: image \"python\" not found in $T/emptyroot" -- env NSRUN_IMAGES="$T/emptyroot" "$N" "${IMG[@]}" -- true
assert_match "  ... the hint: the README's python image is built (make image), not pulled" \
	'^nsrun: hint: build it: make image .*NSRUN_IMAGES' "$(sed -n 2p <<<"$ERR")"
bad "a read-only store: runs (nsrun never writes it)" 0 "" -- env NSRUN_IMAGES="$T/ro-store" "$N" "${IMG[@]}" "$T/ran.py"
# the caller's environment
bad "HOME unset, no NSRUN_IMAGES" 125 'nsrun: cannot find the image store: HOME is not set' -- env -u HOME -u NSRUN_IMAGES -u XDG_DATA_HOME "$N" "${IMG[@]}" -- true
bad "HOME relative, no NSRUN_IMAGES" 125 'nsrun: cannot find the image store: HOME is not set' -- env -u NSRUN_IMAGES -u XDG_DATA_HOME HOME=rel "$N" "${IMG[@]}" -- true
bad "XDG_DATA_HOME pointing nowhere" 125 "nsrun: image \"python\" not found in $T/nowhere/nsrun/images" -- env -u NSRUN_IMAGES XDG_DATA_HOME="$T/nowhere" "$N" "${IMG[@]}" -- true
bad "XDG_CACHE_HOME pointing nowhere: runs without the cache" 0 "" -- env XDG_CACHE_HOME="$T/nowhere" "$N" "${IMG[@]}" "$T/ran.py"
bad "XDG_CACHE_HOME read-only: runs without the cache" 0 "" -- env XDG_CACHE_HOME="$T/ro-cache" "$N" "${IMG[@]}" "$T/ran.py"
bad "HOME unset with NSRUN_IMAGES: runs" 0 "" -- env -u HOME "$N" "${IMG[@]}" "$T/ran.py"
bad "NSRUN_SECCOMP_PROFILES pointing nowhere" 125 'nsrun: ' -- env NSRUN_SECCOMP_PROFILES="$T/nowhere" "$N" "${IMG[@]}" -- true

assert_no_leaks "after the bad input catalogue"
done_testing
