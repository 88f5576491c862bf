#!/bin/bash
# The tree being imported or built is nobody else's (issue 23, kind 3). As
# root: a second local user, made here, swaps every entry it can reach in the
# store for symlinks to a root-only victim directory and plants symlinks in
# every directory it can write, in a loop, while root imports an image with
# 0777 and 1777 directories and builds a Debian-like tree (a fake mmdebstrap
# making a 1777 var/tmp and a setuid file, slowly); nothing of the victim
# changes mode or content, and the racer never reached a temporary tree. Its
# controls: the racer does plant in a directory of its own and in a 0777
# directory under a 0755 root directory (the old temporary tree's shape).
# As any user: while imports run, their temporary directory is never open to
# others (0700; as root 0710 for the sandbox's group 65534 only).
# Needs: skopeo umoci jq bwrap bsdtar python3; root for the racer part.
# shellcheck disable=SC2016
. "$(dirname "$0")/../lib.sh"

image_import_setup
mkdir -p "$STORE"
python3 "$MK" oci "$T/shared" shared || not_ok "mkimage.py oci shared"
IMPORT=("$TOOL" import --quiet --interpreter /bin/hello)

# ---------------------------------------------------------------- the temp dir's mode, as anyone

# watch_modes NAME — records "MODE GROUP" of NAME's temp dirs, plus
# "finished" once image.json is in (the finished tree is opened just before
# its rename), until $T/stop-watch exists
watch_modes() {
	local d f m
	while [ ! -e "$T/stop-watch" ]; do
		for d in "$STORE/.$1.tmp."*; do
			[ -d "$d" ] || continue
			# image.json first: it is written before the tree is opened, and
			# the tree may be renamed away between the two looks
			f=$([ -e "$d/image.json" ] && echo ' finished')
			m=$(stat -c '%a %g' "$d" 2>/dev/null) && printf '%s%s\n' "$m" "$f"
		done
		sleep 0.05
	done >"$T/modes" 2>/dev/null
}
rm -f "$T/stop-watch"
watch_modes shared &
w=$!
for i in 1 2; do
	run_cmd "${IMPORT[@]}" --force "oci:$T/shared:test" shared --store "$STORE"
	assert_eq "import $i of an image with 0777 and 1777 directories succeeds" "0 " "$RC $ERR"
done
touch "$T/stop-watch"
wait "$w"
if [ "$(id -u)" = 0 ]; then want='^(700 (0|65534)|710 65534|755 0 finished)( finished)?$'; else want="^(700 $(id -g)|755 $(id -g) finished)( finished)?\$"; fi
check "the watcher saw the temporary directory" test -s "$T/modes"
assert_eq "... never open to others (modes seen: $(sort -u "$T/modes" | tr '\n' ' '))" "" \
	"$(sort -u "$T/modes" | grep -vE "$want")"

if [ "$(id -u)" != 0 ]; then
	done_testing
	exit
fi

# ---------------------------------------------------------------- root: a racing second user

RACER=nsrun-race-$$
if ! useradd --system --no-create-home --shell /usr/sbin/nologin "$RACER" 2>"$T/useradd.err"; then
	not_ok "create the racing user $RACER" "$(cat "$T/useradd.err")"
	done_testing
	exit
fi
at_exit "pkill -KILL -u '$RACER'; userdel '$RACER'"

VICTIM=$T/victim
mkdir -p "$VICTIM/sub"
echo secret >"$VICTIM/secret"
echo public >"$VICTIM/sub/public"
chmod 0700 "$VICTIM"
chmod 0600 "$VICTIM/secret"
chmod 0755 "$VICTIM/sub"
chmod 0644 "$VICTIM/sub/public"
victim_state() {
	find "$VICTIM" -printf '%p %m %u:%g %s %l\n' | sort
	find "$VICTIM" -type f -exec sha256sum {} + | sort
}
BEFORE=$(victim_state)

# controls: a directory of the racer's, and the old temporary tree's shape
mkdir -p "$T/racer-own" "$T/old-shape/rootfs/var/tmp" "$T/racer-log"
chown "$RACER" "$T/racer-own" "$T/racer-log"
chmod 1777 "$T/old-shape/rootfs/var/tmp"

cat >"$T/racer.sh" <<'EOF'
#!/bin/bash
# racer.sh STORE VICTIM LOG DIRS... — swap and plant until LOG/stop exists
store=$1 victim=$2 log=$3
shift 3
while [ ! -e "$log/stop" ]; do
	for d in "$@" "$store"/.[!.]* "$store"/*; do
		[ -d "$d" ] || continue
		# a temporary tree is opened (0755) only once finished, just before
		# its rename, and its image.json is written before that: a listing
		# without image.json, of a tree still there, is one reached while
		# still being made (a finished one may be renamed away between)
		if ls -- "$d" >/dev/null 2>&1; then
			case $d in *.tmp.*) [ -e "$d/image.json" ] || [ ! -e "$d" ] || echo "listed $d" ;; esac
		fi
		for e in "$d" "$d"/* "$d"/*/* "$d"/rootfs/*/* "$d"/work/rootfs/*/*; do
			[ -e "$e" ] || [ -L "$e" ] || continue
			if [ -d "$e" ] && ln -s "$victim" "$e/planted" 2>/dev/null; then
				echo "planted $e/planted"
			fi
			case $e in "$d") continue ;; esac
			if mv -T -- "$e" "$e.swapped" 2>/dev/null; then
				ln -s "$victim" "$e" 2>/dev/null
				echo "swapped $e"
			fi
		done
	done
done >>"$log/racer.log" 2>/dev/null
EOF
chmod 755 "$T/racer.sh" "$T"
runuser -u "$RACER" -- "$T/racer.sh" "$STORE" "$VICTIM" "$T/racer-log" "$T/racer-own" "$T/old-shape/rootfs/var" &
racer=$!

# a fake mmdebstrap: a Debian-like tree with a 1777 var/tmp, a 0777
# directory and a setuid file, made slowly
cat >"$T/mmdebstrap" <<'EOF'
#!/bin/sh
set -eu
eval "out=\${$(($# - 1))}"
mkdir -p "$out" && cd "$out"
mkdir -p usr/bin etc var/tmp open
chmod 1777 var/tmp
chmod 0777 open
ln -s usr/bin bin
printf '#!/bin/sh\n' >usr/bin/sh
printf 'x\n' >usr/bin/su
chmod 0755 usr/bin/sh
chmod 4755 usr/bin/su
i=0
while [ $i -lt 20 ]; do : >"var/tmp/f$i"; : >"open/f$i"; sleep 0.1; i=$((i + 1)); done
EOF
chmod 755 "$T/mmdebstrap"

for i in 1 2; do
	run_cmd "${IMPORT[@]}" --force "oci:$T/shared:test" raced --store "$STORE"
	assert_eq "root import $i while $RACER races succeeds" "0 " "$RC $ERR"
	run_cmd env NSRUN_IMAGE_MMDEBSTRAP="$T/mmdebstrap" "$TOOL" build --quiet --force raced-build --store "$STORE"
	assert_eq "root build $i while $RACER races succeeds" "0 " "$RC $ERR"
done
sleep 1
touch "$T/racer-log/stop"
wait "$racer"

assert_match "control: the racer plants in its own directory" "planted $T/racer-own/planted" \
	"$(cat "$T/racer-log/racer.log")"
assert_match "control: the racer plants in a 1777 directory under a 0755 root tree" \
	"planted $T/old-shape/rootfs/var/tmp/planted" "$(cat "$T/racer-log/racer.log")"
assert_eq "the racer never listed, swapped or planted anything in the store" "" \
	"$(grep -F "$STORE" "$T/racer-log/racer.log" | head -5)"
assert_eq "nothing of the victim changed mode, owner or content" "$BEFORE" "$(victim_state)"
assert_eq "the images are root's, with nothing writable by others" "" \
	"$(find "$STORE/raced" "$STORE/raced-build" -xdev \( ! -user 0 -o \( ! -type l -perm /7022 \) \) -print | head -5)"
check "the images run" eval 'NSRUN_IMAGES=$STORE "$NSRUN" --image raced -- /bin/hello ids >/dev/null 2>&1'

done_testing
