# shellcheck shell=bash disable=SC2034 # (variables used by the other parts of the tool)
# nsrun-image-confine.sh - the contained half of nsrun-image (sourced by it):
# every program that reads an image's bytes (bsdtar, skopeo, umoci) runs in a
# bwrap sandbox, and the tree it leaves is finished before anyone else sees it.
#
# Why bwrap and not nsrun: the fetch must reach registries on the host's
# loopback (local registries, the tests' registry), which nsrun's network
# deliberately hides, and it needs the host's skopeo/umoci/bsdtar, not an
# image's. bwrap gives exactly: a user namespace of the caller's id only (as
# root: uid 65534, so nothing it writes can be host-root-owned or carry a
# capability that means anything on the host), no capabilities, a mount
# namespace holding a read-only /usr, the few /etc files the tools need and
# the build directory (the only writable place, also /tmp and /var/tmp), and
# the network only for registry requests.
#
# Registry pulls are nsrun's own (nsrun pull, runtime/image_fetch.c and
# image_confine.c build this same sandbox in C); what is left here is the
# import of local sources, which never has the network.
#
# Layout while importing: STORE/.NAME.tmp.XXXXXX (0700, the importer's) holds
# work/ (the sandbox's /build: in/ a source read through the allowlist, oci/
# the verified layout, rootfs/ the unpacked tree, tmp/ the tools' scratch),
# the tools' logs, and at the end rootfs/ and image.json. Only the finished
# tree is opened (0755) and renamed into place.

readonly DEFAULT_MAX_SIZE=8G
readonly DEFAULT_MAX_FILES=500000
readonly DEFAULT_IMPORT_TIMEOUT=1800
readonly DEFAULT_NETWORK_TIMEOUT=60
readonly UNPACK_UID=65534        # who a root import unpacks as (nsrun's mapped id)

# Bounds of the running import (set by bounds_init).
B_MAX_BYTES=0 B_MAX_FILES=0 B_TIMEOUT=0 B_DEADLINE=0 B_NET_TIMEOUT=0
B_REASON='' B_HINT=''
WORK_FD=''
REACH=''   # as root: where each sandbox's own mount namespace binds the work dir

# ----------------------------------------------------------------- bounds --

# Prints SIZE ("512m", "8G", "1048576") in bytes, or returns 1.
size_bytes() {  # SIZE
	[[ $1 =~ ^[0-9]+[kKmMgGtT]?$ ]] || return 1
	numfmt --from=iec -- "${1^^}" 2>/dev/null
}

bounds_init() {  # MAX_SIZE MAX_FILES TIMEOUT NET_TIMEOUT
	B_MAX_BYTES=$1 B_MAX_FILES=$2 B_TIMEOUT=$3 B_NET_TIMEOUT=$4
	B_DEADLINE=$((SECONDS + B_TIMEOUT))
	B_REASON=''
}

# Prints "FILES BYTES" of a tree (apparent sizes: a sparse file counts whole).
tree_usage() {  # DIR
	find "$1" -xdev -printf '%s\n' 2>/dev/null | awk '{ n++; s += $1 } END { printf "%d %d\n", n, s }'
}

# Sets B_REASON if a bound is exceeded. NET: stall detection applies.
bounds_check() {  # FILES BYTES
	if (($1 > B_MAX_FILES)); then
		B_REASON="the image has more than $B_MAX_FILES files (--max-files N raises the bound)"
	elif (($2 > B_MAX_BYTES)); then
		B_REASON="the image is larger than $(numfmt --to=iec "$B_MAX_BYTES") (--max-size SIZE raises the bound)"
	elif ((SECONDS > B_DEADLINE)); then
		B_REASON="the import took longer than $B_TIMEOUT s (--timeout SECONDS raises the bound)"
	fi
	[[ -z $B_REASON ]]
}

# ---------------------------------------------------------------- sandbox --

# Cleans a tool's messages: control characters (terminal escapes from names
# in a layer or a registry's answer) become '?', at most 40 lines are shown.
show_log() {  # FILE
	[[ -s $1 ]] || return 0
	head -n 40 -- "$1" | cut -c1-400 | LC_ALL=C sed 's/[^[:print:]]/?/g' >&2
}

# The bwrap command line around CMD: a private, empty network.
sandbox_argv() {  # [EXTRA-BWRAP-ARGS...]
	local d
	SANDBOX=(bwrap --unshare-all --die-with-parent --new-session
		--ro-bind /usr /usr --proc /proc --dev /dev --dir /var --dir /etc
		--bind-fd "$WORK_FD" /build --symlink build/tmp /tmp --symlink ../build/tmp /var/tmp
		--setenv TMPDIR /build/tmp --setenv HOME /build/home --setenv XDG_RUNTIME_DIR /build/run
		--setenv PATH /usr/bin:/bin --setenv LC_ALL C --chdir /build)
	for d in bin sbin lib lib32 lib64 libx32; do
		[[ ! -L /$d ]] || SANDBOX+=(--symlink "$(readlink "/$d")" "/$d")
	done
	# skopeo's signature policy and registries configuration
	SANDBOX+=(--ro-bind-try /etc/containers /etc/containers)
	SANDBOX+=("$@")
}

# Run in the sandbox before CMD: closes every fd but 0-2. bwrap passes on what
# it inherits (the build directory's fd it binds, this script's locks, any fd
# of the caller's), and a directory fd from outside the sandbox's root is a
# way out of it (openat(fd, "..")).
# shellcheck disable=SC2016 # expanded by the sandbox's bash
# (No 2>/dev/null on the loop: bash would save stderr in an fd the loop closes.)
# First it writes a byte to the fd $0 (the sandbox is set up: what fails from
# here on is the tool's).
readonly CLOSE_FDS='printf . >&"$0"; for f in /proc/self/fd/*; do n=${f##*/}; if ((n > 2)) && [[ -e $f ]]; then eval "exec $n>&-"; fi; done; exec "$@"'

# As root (REACH set): before setpriv, in a mount namespace of the sandbox's
# own (unshare(1), a slave of the host's: nothing mounted in it is seen outside
# and it ends with the sandbox, also when the import is killed), binds the work
# directory $1 onto $2, a directory every user may traverse, and reopens the
# fd $3 (bwrap's --bind-fd) there: bwrap re-resolves that fd's path as uid
# UNPACK_UID, which a store under a 0700 directory (root's default, under
# /root) would forbid.
# shellcheck disable=SC2016 # expanded by that bash
readonly REACH_SH='mount --bind -- "$1" "$2" || exit 125; eval "exec $3<\"\$2\"" || exit 125; shift 3; exec "$@"'

# After bwrap has ended (killed for a bound or a signal, or done): its own
# child, pid 1 of the sandbox's pid namespace ("child-pid" of bwrap --info-fd,
# in SANDBOX_INFO), can outlive it a moment, and the tool in that namespace
# still write into the build directory.  Kills it (while it is still a bwrap)
# and waits, 10 s at most, until it is gone or a zombie, which it becomes only
# once every process of its pid namespace has exited: then the tree may be
# removed.
sandbox_gone() {
	local pid comm state _ i
	[[ -n ${SANDBOX_INFO:-} ]] || return 0
	pid=$(sed -n 's/.*"child-pid": *\([0-9][0-9]*\).*/\1/p' -- "$SANDBOX_INFO" 2>/dev/null)
	rm -f -- "$SANDBOX_INFO"
	SANDBOX_INFO=
	for ((i = 0; i < 200 && ${pid:-0} > 0; i++)); do
		state=''
		{ read -r _ comm state _ <"/proc/$pid/stat"; } 2>/dev/null || true
		[[ -n $state && $state != Z && $comm == "(bwrap)" ]] || return 0
		kill -KILL "$pid" 2>/dev/null || true
		sleep 0.05
	done
}

# Runs CMD... in the sandbox, as the caller (root: as UNPACK_UID), stdin from
# IN, stdout to OUT, stderr to LOG (shown cleaned on failure), no file larger
# than the size bound; polls the bounds every second and kills it when one is
# exceeded (B_REASON says which). When the sandbox itself fails (before CMD
# runs), B_REASON says so with its first message and B_HINT what to check.
# Returns CMD's status (137 when killed for a bound).
run_confined() {  # IN OUT LOG [--bwrap ARGS... --] CMD...
	local in=$1 out=$2 log=$3 extra=() started=$BUILD_TMP/started mark info
	shift 3
	if [[ ${1:-} == --bwrap ]]; then
		shift
		while [[ $1 != -- ]]; do extra+=("$1"); shift; done
		shift
	fi
	local pre=(setpriv --pdeathsig=KILL)
	((EUID != 0)) || pre+=(--reuid="$UNPACK_UID" --regid="$UNPACK_UID" --clear-groups)
	[[ -z $REACH ]] ||
		pre=(unshare --mount --propagation slave -- bash -c "$REACH_SH" reach "$BUILD_TMP/work" "$REACH" "$WORK_FD" "${pre[@]}")
	sandbox_argv "${extra[@]}"
	: >"$started"
	exec {mark}>>"$started"
	SANDBOX_INFO=$BUILD_TMP/info
	: >"$SANDBOX_INFO"
	exec {info}>>"$SANDBOX_INFO"
	"${pre[@]}" -- prlimit --fsize="$B_MAX_BYTES" --core=0 -- \
		env -i "${SANDBOX[@]}" --info-fd "$info" -- /usr/bin/bash -c "$CLOSE_FDS" "$mark" "$@" <"$in" >"$out" 2>"$log" &
	CHILD_PID=$!
	exec {mark}>&- {info}>&-
	# Polls with a foreground sleep (a signal's trap runs within 0.25 s), not
	# wait -n: that loses track of reaped children in bash 5.2.
	local rc=0 state usage n=0
	while :; do
		state=''
		{ read -r _ _ state _ <"/proc/$CHILD_PID/stat"; } 2>/dev/null || true
		[[ -n $state && $state != Z ]] || break
		sleep 0.25
		((++n % 4 == 0)) || continue
		usage=$(tree_usage "$BUILD_TMP/work")
		# shellcheck disable=SC2086 # "FILES BYTES"
		if ! bounds_check $usage; then
			kill -KILL "$CHILD_PID" 2>/dev/null || true
			break
		fi
	done
	wait "$CHILD_PID" 2>/dev/null || rc=$?   # (and no "Killed" notice from bash)
	[[ -z $B_REASON ]] || rc=137
	sandbox_gone
	CHILD_PID=
	# the sandbox failed before the tool ran: its own first message
	if ((rc != 0)) && [[ -z $B_REASON && ! -s $started ]]; then
		local first
		first=$(grep -m1 -v '^$' -- "$log" | cut -c1-200 | LC_ALL=C sed 's/[^[:print:]]/?/g')
		B_REASON="the image tool's sandbox could not be set up: ${first:-no message}"
		B_HINT="the import runs bsdtar, skopeo and umoci under setpriv, prlimit and bwrap (as root: as uid $UNPACK_UID); \`nsrun check\` shows whether user namespaces work here, and docs/images.md what the sandbox needs"
	fi
	rm -f -- "$started"
	# a file over the size bound: SIGXFSZ or EFBIG from the tool
	if [[ -z $B_REASON ]] && { ((rc == 128 + 25)) || grep -qs 'file too large' -- "$log"; }; then
		B_REASON="a file of the image is larger than $(numfmt --to=iec "$B_MAX_BYTES") (--max-size SIZE raises the bound)"
	fi
	return "$rc"
}

# Dies with the bound that stopped a step, else with MESSAGE after the tool's
# cleaned messages.
step_failed() {  # CMD NAME LOG MESSAGE
	[[ -z $B_HINT ]] || { printf '%s: %s\n%s: hint: %s\n' "$PROG" "$1 \"$2\": $B_REASON" "$PROG" "$B_HINT" >&2; exit 1; }
	[[ -z $B_REASON ]] || die "$1 \"$2\": $B_REASON"
	show_log "$3"
	die "$1 \"$2\": $4"
}

# Is DIR (absolute) a directory that every user may look up (it and each
# directory above it searchable by others)?
world_reachable() {  # DIR
	local p=$1 m
	while :; do
		m=$(stat -L -c %A -- "${p:-/}" 2>/dev/null) || return 1
		[[ ${m:0:1} == d && ${m:9:1} == [xt] ]] || return 1
		[[ -n $p ]] || return 0
		p=${p%/*}
	done
}

# Makes $BUILD_TMP/work, the sandbox's /build, owned by whoever unpacks. As
# root, the sandbox (uid UNPACK_UID) must reach work/ by path (bwrap's
# --bind-fd re-resolves the fd's path): each sandbox binds it onto REACH in a
# mount namespace of its own (REACH_SH), whatever the store's parents' modes.
# Where no mount namespace can be made (an outer sandbox) $BUILD_TMP becomes
# 0710 with the group UNPACK_UID instead, which works when UNPACK_UID can look
# the store up. work_close ends that before finishing.
work_init() {
	local w=$BUILD_TMP/work r
	mkdir -- "$w" "$w/tmp" "$w/home" "$w/run" "$w/in"
	chmod 0700 -- "$w" "$w/run"
	REACH=''
	if ((EUID == 0)); then
		chown -R -- "$UNPACK_UID:$UNPACK_UID" "$w"
		# an existing directory every user may traverse, whose contents nothing
		# here needs (the sandbox has a /dev of its own)
		for r in /dev/shm /mnt; do
			if world_reachable "$r"; then
				unshare --mount --propagation slave -- true 2>/dev/null && REACH=$r
				break
			fi
		done
		if [[ -z $REACH ]]; then
			chgrp -- "$UNPACK_UID" "$BUILD_TMP"
			chmod 0710 -- "$BUILD_TMP"
		fi
	fi
	exec {WORK_FD}<"$w"
}

# After the last sandbox: $BUILD_TMP is the importer's alone again, and so is
# everything in work/ (as root: chowned without following links).
work_close() {
	exec {WORK_FD}<&-
	REACH=''
	if ((EUID == 0)); then
		chmod 0700 -- "$BUILD_TMP"
		chgrp -- 0 "$BUILD_TMP"
		chown -R -P -h -- 0:0 "$BUILD_TMP/work"
	fi
}

# ----------------------------------------------------------- local sources --

# What may be read from an archive or a layout directory: an OCI layout's own
# files and blobs, and docker save's manifest, configs and layers. Anything
# else in the source is not extracted; a link, device or FIFO under one of
# these names fails the import.
readonly HEX='[0-9a-f]{64}'
readonly OCI_NAMES="oci-layout|index\\.json|blobs/sha256/$HEX"
readonly DOCKER_NAMES="$OCI_NAMES|manifest\\.json|repositories|$HEX\\.(json|tar)|$HEX/(layer\\.tar|json|VERSION)"
readonly OCI_ALLOWED="^(d blobs|d blobs/sha256|f ($OCI_NAMES))\$"
readonly DOCKER_ALLOWED="^(d blobs|d blobs/sha256|d $HEX|f ($DOCKER_NAMES))\$"

# Extracts the allowlisted members of the tar on stdin into /build/in.
readonly BSDTAR_X=(bsdtar -x -f - -C /build/in --no-same-owner --no-same-permissions
	--no-xattrs --no-acls --no-fflags)
# Extracts from the archive FILE only the members whose names match NAMES
# (a regular expression): one sandboxed bsdtar lists them, another extracts
# exactly those.
intake_archive() {  # CMD NAME FILE NAMES
	local log=$BUILD_TMP/intake.log members=()
	[[ -f $3 ]] || die "$1 \"$2\": $3 is not a file"
	run_confined "$3" "$BUILD_TMP/members" "$log" bsdtar -t -f - ||
		step_failed "$1" "$2" "$log" "cannot read the archive $3"
	# (files, not process substitutions: those confuse wait -n in run_confined)
	grep -E "^(\./)?($4)\$" -- "$BUILD_TMP/members" >"$BUILD_TMP/members.ok" || true
	mapfile -t members <"$BUILD_TMP/members.ok"
	rm -f -- "$BUILD_TMP/members.ok"
	rm -f -- "$BUILD_TMP/members"
	((${#members[@]})) || die "$1 \"$2\": $3 holds no image layout or docker save files"
	run_confined "$3" /dev/null "$log" "${BSDTAR_X[@]}" -- "${members[@]}" ||
		step_failed "$1" "$2" "$log" "cannot read the archive $3"
}

# Checks what bsdtar left in work/in against the allowlist RE. The one link
# allowed is docker save's legacy ID/layer.tar -> ../DIGEST.tar, which is
# deleted (skopeo reads the manifest's layer paths).
check_intake() {  # CMD NAME RE
	local line bad='' legacy="^l $HEX/layer\\.tar\$"
	while IFS= read -r line; do
		[[ -n $line ]] || continue
		if [[ $line =~ $legacy ]]; then
			rm -f -- "$BUILD_TMP/work/in/${line#l }"
			continue
		fi
		[[ $line =~ $3 ]] || { bad=$line; break; }
	done <<<"$(find "$BUILD_TMP/work/in" -mindepth 1 -printf '%y %P\n')"
	bad=${bad//[[:cntrl:]]/?}
	[[ -z $bad ]] ||
		die "$1 \"$2\": the source holds \"${bad#* }\" (type ${bad%% *}), which is not part of an image layout: refused"
}

# Reads a local source through the allowlist into the build directory and
# prints the reference skopeo copies from inside the sandbox.
intake_local() {  # CMD NAME REF
	local cmd=$1 name=$2 ref=$3 body path suffix='' log=$BUILD_TMP/intake.log
	case $ref in
	oci:*) body=${ref#oci:} ;;
	oci-archive:*) body=${ref#oci-archive:} ;;
	docker-archive:*) body=${ref#docker-archive:} ;;
	esac
	path=${body%%:*}
	[[ $body != *:* ]] || suffix=:${body#*:}
	case $ref in
	oci:*)
		# The caller reads (a root import: root's 0600 layout files) into a
		# tar in the build directory, under the size bound; bsdtar archives
		# links as links, never following them. The sandbox parses it.
		[[ -d $path ]] || die "$cmd \"$name\": $path is not a directory"
		local tar=$BUILD_TMP/work/tmp/source.tar
		if ! (cd -- "$path" && prlimit --fsize="$B_MAX_BYTES" -- \
			bsdtar -c -f "$tar" -- oci-layout index.json blobs) 2>"$log"; then
			B_REASON=''
			[[ $(stat -c %s -- "$tar" 2>/dev/null || echo 0) -lt $B_MAX_BYTES ]] ||
				B_REASON="the image is larger than $(numfmt --to=iec "$B_MAX_BYTES") (--max-size SIZE raises the bound)"
			step_failed "$cmd" "$name" "$log" "cannot read the OCI layout $path"
		fi
		run_confined "$tar" /dev/null "$log" "${BSDTAR_X[@]}" ||
			step_failed "$cmd" "$name" "$log" "cannot read the OCI layout $path"
		rm -f -- "$tar"
		check_intake "$cmd" "$name" "$OCI_ALLOWED"
		printf 'oci:/build/in%s\n' "$suffix"
		;;
	oci-archive:*)
		intake_archive "$cmd" "$name" "$path" "$OCI_NAMES"
		check_intake "$cmd" "$name" "$OCI_ALLOWED"
		printf 'oci:/build/in%s\n' "$suffix"
		;;
	docker-archive:*)
		intake_archive "$cmd" "$name" "$path" "$DOCKER_NAMES"
		check_intake "$cmd" "$name" "$DOCKER_ALLOWED"
		# skopeo reads docker-archive from a tar: one of regular files only
		run_confined /dev/null /dev/null "$log" bsdtar -c -f /build/tmp/source.tar -C /build/in . ||
			step_failed "$cmd" "$name" "$log" "cannot repack the archive $path"
		printf 'docker-archive:/build/tmp/source.tar%s\n' "$suffix"
		;;
	esac
}

# ------------------------------------------------------------------ finish --

# Makes the unpacked tree safe to share, in one pass that never follows a
# link (the tree is reachable by the importer alone, so paths cannot be
# swapped meanwhile): FIFOs, sockets and device nodes are deleted; every
# extended attribute but user.* (security.capability, trusted.*, ACLs) is
# removed; set-id, sticky and group/other write bits are cleared; files
# become readable (executables searchable) by all, except password hashes
# and private keys (no access for others); as root, everything becomes
# root's. Also the last check of the file and byte bounds. Exit status 3
# with the bound on stdout when one is exceeded.
finish_tree() {  # ROOTFS MAX_FILES MAX_BYTES
	local py=python3
	[[ ! -x /usr/bin/python3 ]] || py=/usr/bin/python3   # the system's, not a shim's
	"$py" -I -S - "$@" <<'EOF'
import fnmatch, os, stat, sys
root, max_files, max_bytes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
secrets = ["etc/shadow", "etc/shadow-", "etc/gshadow", "etc/gshadow-", "etc/security/opasswd",
           "etc/sudoers", "etc/sudoers.d", "etc/ssl/private", "etc/ssh/ssh_host_*_key",
           "var/cache/debconf/passwords.dat"]
as_root = os.geteuid() == 0
files = size = 0
stack = [("", False)]
while stack:
    rel, secret = stack.pop()
    path = os.path.join(root, rel) if rel else root
    st = os.lstat(path)
    files += 1
    size += st.st_size
    if files > max_files or size > max_bytes:
        print("files" if files > max_files else "bytes")
        sys.exit(3)
    if stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode) or stat.S_ISBLK(st.st_mode) or stat.S_ISCHR(st.st_mode):
        os.unlink(path)
        continue
    if as_root:
        os.chown(path, 0, 0, follow_symlinks=False)
    for x in os.listxattr(path, follow_symlinks=False):
        if not x.startswith("user."):
            os.removexattr(path, x, follow_symlinks=False)
    if stat.S_ISLNK(st.st_mode):
        continue
    secret = secret or any(fnmatch.fnmatchcase(rel, p) for p in secrets)
    mode = stat.S_IMODE(st.st_mode) & ~0o7022
    if stat.S_ISDIR(st.st_mode):
        mode |= 0o700
    if secret:
        mode &= ~0o007
    else:
        mode |= 0o444
        if mode & 0o111 or stat.S_ISDIR(st.st_mode):
            mode |= 0o111
    os.chmod(path, mode)
    if stat.S_ISDIR(st.st_mode):
        with os.scandir(path) as it:
            for e in it:
                stack.append((os.path.join(rel, e.name), secret))
EOF
}

# Runs finish_tree and dies with the bound it reports.
finish_or_die() {  # CMD NAME ROOTFS
	local out rc=0
	out=$(finish_tree "$3" "$B_MAX_FILES" "$B_MAX_BYTES") || rc=$?
	case $rc:$out in
	0:*) ;;
	3:files) die "$1 \"$2\": the image has more than $B_MAX_FILES files (--max-files N raises the bound)" ;;
	3:bytes) die "$1 \"$2\": the image is larger than $(numfmt --to=iec "$B_MAX_BYTES") (--max-size SIZE raises the bound)" ;;
	*) die "$1 \"$2\": cannot finish the rootfs (strip privileges, set modes): see the message above" ;;
	esac
}
