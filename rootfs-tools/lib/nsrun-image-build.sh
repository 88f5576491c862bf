# shellcheck shell=bash disable=SC2034 # (variables used by the other parts of the tool)
# nsrun-image-build.sh - the build subcommand: a Debian rootfs bootstrapped with
# mmdebstrap, slimmed, and the mount points the runtime needs (also used by pull).
# (sourced by nsrun-image, which defines PROG, the constants, die, warn, info
# and usage_error; see its header)

# ---------------------------------------------------------- mirror, setup --

# The first http(s) URI of the first enabled "deb" stanza of the host's
# deb822 sources that has a suite other than *-security; else the default.
host_mirror() {
	local f=${NSRUN_IMAGE_HOST_SOURCES:-/etc/apt/sources.list.d/debian.sources}
	local line key val uris='' suites='' types='' enabled=yes
	pick() {
		local u s ok='' list
		[[ ${enabled,,} != no ]] || return 1
		read -ra list <<<"$types"
		[[ " ${list[*]} " == *" deb "* ]] || return 1
		read -ra list <<<"$suites"
		for s in "${list[@]}"; do
			[[ $s == *-security || $s == */* ]] || ok=1
		done
		[[ -n $ok ]] || return 1
		read -ra list <<<"$uris"
		for u in "${list[@]}"; do
			if [[ $u =~ $MIRROR_RE ]]; then
				printf '%s\n' "${u%/}"
				return 0
			fi
		done
		return 1
	}
	if [[ -r $f ]]; then
		while IFS= read -r line || [[ -n $line ]]; do
			if [[ -z ${line//[[:space:]]/} ]]; then
				pick && return 0
				uris='' suites='' types='' enabled=yes
				continue
			fi
			[[ $line != \#* && $line != [[:space:]]* && $line == *:* ]] || continue
			key=${line%%:*}
			val=${line#*:}
			case ${key,,} in
			uris) uris=$val ;;
			suites) suites=$val ;;
			types) types=$val ;;
			enabled) enabled=${val//[[:space:]]/} ;;
			esac
		done <"$f"
		pick && return 0
	fi
	printf '%s\n' "$DEFAULT_MIRROR"
}

unshare_hint() {
	local user
	user=$(id -un 2>/dev/null || id -u)
	printf '%s' "unprivileged builds use mmdebstrap --mode=unshare, which needs subordinate ids: add \"$user:100000:65536\" to /etc/subuid and /etc/subgid, install the uidmap package (newuidmap/newgidmap) and allow unprivileged user namespaces, or build as root"
}

# Debian-only size reduction, in the rootfs (the current directory).
slim_debian_rootfs() {
	local d
	# Size: documentation (license files stay), man, info, message catalogs
	# (C.UTF-8 lives in /usr/lib/locale), apt/dpkg caches and backups.
	if [[ -d usr/share/doc ]]; then
		find usr/share/doc -xdev -mindepth 1 ! -type d ! -name copyright -delete
		find usr/share/doc -xdev -mindepth 1 -depth -type d -empty -delete
	fi
	for d in usr/share/man usr/share/info usr/share/locale usr/share/lintian \
		usr/share/linda var/cache/man; do
		if [[ -d $d && ! -L $d ]]; then
			find "$d" -xdev -mindepth 1 -delete
		fi
	done
	for d in var/cache/apt var/lib/apt/lists; do
		if [[ -d $d && ! -L $d ]]; then
			find "$d" -xdev ! -type d -delete
		fi
	done
	rm -f -- var/cache/debconf/*-old var/lib/dpkg/*-old
	# Host data mmdebstrap copied in; keep the files as bind-mount targets.
	rm -f -- etc/resolv.conf etc/hostname
	: >etc/resolv.conf
	printf 'nsrun\n' >etc/hostname
}

# Post-processes a fresh rootfs (before finish_tree, which makes it safe to
# share): device nodes and /dev's contents go, the runtime's mount points
# become real directories. KIND "debian" (build) also slims the tree and
# replaces host files that mmdebstrap copied in; "oci" (pull) leaves the
# image's own files alone. Runs while the tree is reachable by its owner
# alone; still never writes through a path that could be a symlink out of the
# tree: only top-level mount points (replaced if they are symlinks) and find
# without -L.
finalize_rootfs() {  # CMD ROOTFS KIND (run in a subshell: it changes directory)
	local cmd=$1 kind=$3
	# shellcheck disable=SC2016 # expanded when the trap runs
	trap 'printf "%s: %s: post-processing the rootfs failed (line %s)\n" "$PROG" "$cmd" "$LINENO" >&2' ERR
	cd "$2" || exit
	# Directories the owner cannot list or write (a layer may ship them) would
	# stop find below and the deletion of the image later. Pre-order, one by
	# one, so that find can descend after the chmod.
	find . -xdev -type d ! -perm -u=rwx -exec chmod u+rwx -- {} \;
	# Device nodes: the runtime mounts its own /dev.
	find . -xdev \( -type b -o -type c \) -delete
	if [[ -d dev && ! -L dev ]]; then
		find dev -xdev -mindepth 1 -delete
	fi
	# Mount points used by the runtime: real, empty-or-not directories (0755:
	# the runtime mounts /tmp's tmpfs over it; nothing in the store is
	# writable by others).
	local d
	for d in "${MOUNT_POINTS[@]}"; do
		if [[ -L $d || (-e $d && ! -d $d) ]]; then
			rm -f -- "$d"
		fi
		mkdir -p -- "$d"
		chmod 0755 -- "$d"
	done
	[[ $kind != debian ]] || slim_debian_rootfs
}

# -------------------------------------------------------------- subcommands --

cmd_build() {
	local name='' store_opt='' suite=$DEFAULT_SUITE mirror='' force='' have_name=''
	local include=() interp=() env_add=() arg p i k
	while (($#)); do
		if [[ $1 == --?*=* ]]; then
			set -- "${1%%=*}" "${1#*=}" "${@:2}"
		fi
		case $1 in
		--suite | --include | --mirror | --store | --interpreter | --env)
			(($# >= 2)) || usage_error "build: option $1: requires an argument"
			case $1 in
			--suite) suite=$2 ;;
			--include)
				IFS=, read -ra arg <<<"$2"
				for p in "${arg[@]}"; do
					[[ $p =~ $PKG_RE ]] || usage_error "build: invalid package name \"$p\": must match $PKG_RE"
					[[ " ${include[*]} " == *" $p "* ]] || include+=("$p")
				done
				;;
			--mirror) mirror=$2 ;;
			--store) store_opt=$2 ;;
			--interpreter)
				validate_text build interpreter "$2"
				[[ -n $2 ]] || usage_error "build: invalid interpreter \"\": must not be empty"
				IFS=, read -ra interp <<<"$2"
				for p in "${interp[@]}"; do
					[[ -n $p ]] || usage_error "build: invalid interpreter \"$2\": empty element"
				done
				;;
			--env)
				validate_text build "environment entry" "$2"
				[[ $2 =~ $ENV_RE ]] || usage_error "build: invalid environment entry \"$2\": must be KEY=VALUE"
				env_add+=("$2")
				;;
			esac
			shift 2
			;;
		--force) force=1; shift ;;
		--quiet | -q) QUIET=1; shift ;;
		-h | --help) cmd_help; exit 0 ;;
		--) shift; break ;;
		-*) usage_error "build: unknown option \"$1\" (see $PROG --help)" ;;
		*)
			[[ -z $have_name ]] || usage_error "build: unexpected argument \"$1\": only one NAME"
			name=$1 have_name=1
			shift
			;;
		esac
	done
	if (($#)); then
		[[ -z $have_name && $# -eq 1 ]] || usage_error "build: unexpected argument \"${*: -1}\": only one NAME"
		name=$1 have_name=1
	fi
	[[ -n $have_name ]] || usage_error "build: missing image NAME (see $PROG --help)"
	validate_name build "$name"
	[[ $suite =~ $SUITE_RE ]] || usage_error "build: invalid suite \"$suite\": must match $SUITE_RE"
	if [[ -z $mirror ]]; then
		mirror=$(host_mirror)
	fi
	mirror=${mirror%/}
	[[ $mirror =~ $MIRROR_RE ]] || usage_error "build: invalid mirror \"$mirror\": must be an http(s)://, ftp:// or file:/ URL"

	# Interpreter and environment of the image.
	if ((${#interp[@]} == 0)); then
		if [[ " ${include[*]} " == *" python3 "* ]]; then
			interp=(python3)
		elif [[ " ${include[*]} " == *" nodejs "* ]]; then
			interp=(node)
		else
			interp=(sh)
		fi
	fi
	local env=("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" "LANG=C.UTF-8")
	if [[ ${interp[0]##*/} == python* || " ${include[*]} " == *" python3 "* ]]; then
		env+=("PYTHONDONTWRITEBYTECODE=1")
	fi
	for p in "${env_add[@]}"; do
		k=${p%%=*}
		for i in "${!env[@]}"; do
			if [[ ${env[i]%%=*} == "$k" ]]; then
				unset 'env[i]'
			fi
		done
		env=("${env[@]}" "$p")
	done

	local store dest
	store=$(store_dir build "$store_opt")
	if [[ -z $force && ( -e $store/$name || -L $store/$name ) ]]; then
		die "image \"$name\" already exists in $store (use --force to rebuild)"
	fi

	local mmdebstrap=${NSRUN_IMAGE_MMDEBSTRAP:-mmdebstrap}
	command -v "$mmdebstrap" >/dev/null ||
		die "build \"$name\": mmdebstrap not found: install it (apt-get install mmdebstrap)"
	find_nsrun build "$name"
	command -v jq >/dev/null || die "build \"$name\": jq not found: install it (apt-get install jq)"
	local mode=root
	if (($(id -u) != 0)); then
		mode=unshare
		if ! command -v newuidmap >/dev/null || ! command -v newgidmap >/dev/null; then
			die "build \"$name\": newuidmap/newgidmap not found: $(unshare_hint)"
		fi
		command -v tar >/dev/null || die "build \"$name\": tar not found: install it"
	fi

	if [[ ! -d $store ]]; then
		mkdir -p -- "$store" || die "build \"$name\": cannot create the store $store"
		chmod 0755 -- "$store"
	fi
	store=$(cd -- "$store" && pwd) || die "build \"$name\": cannot enter the store $store"
	dest=$store/$name
	lock_name build "$name" "$store" "$DEFAULT_IMPORT_TIMEOUT"
	remove_stale "$store" "$name"

	# 0700 (mktemp's mode) until finished: a Debian tree has a 1777 var/tmp
	# and setuid files while it is built.
	BUILD_TMP=$(mktemp -d -- "$store/.$name.tmp.XXXXXX") ||
		die "build \"$name\": cannot create a temporary directory in $store"
	trap build_cleanup EXIT
	trap 'exit 129' HUP
	trap 'exit 130' INT
	trap 'exit 143' TERM
	local lockfd
	exec {lockfd}<"$BUILD_TMP"
	flock -n "$lockfd" || die "build \"$name\": cannot lock $BUILD_TMP"

	local rootfs=$BUILD_TMP/rootfs include_csv
	include_csv=$(IFS=,; printf '%s' "${include[*]}")
	local mmargs=(--mode="$mode" --variant="$VARIANT"
		--dpkgopt='path-exclude=/usr/share/doc/*'
		--dpkgopt='path-include=/usr/share/doc/*/copyright'
		--dpkgopt='path-exclude=/usr/share/man/*'
		--dpkgopt='path-exclude=/usr/share/info/*'
		--dpkgopt='path-exclude=/usr/share/locale/*'
		--dpkgopt='path-exclude=/usr/share/lintian/*'
		# man pages are left out, but some maintainer scripts (OpenJDK's
		# update-alternatives slave links) need the directory to exist ($1 is
		# mmdebstrap's, expanded by the hook's shell)
		--setup-hook="mkdir -p \"\$1/usr/share/man/man1\"")
	# Bookworm's init-system-helpers pulls in usrmerge, and with it perl
	# (~50 MB): this hook sets merged /usr up itself and installs the
	# tiny usr-is-merged instead (when the suite has it).
	local hooks=/usr/share/mmdebstrap/hooks/maybe-merged-usr
	[[ ! -d $hooks ]] || mmargs+=(--hook-dir="$hooks")
	# netbase: /etc/services and /etc/protocols, which getservbyname(3) and
	# getprotobyname(3) read (Docker's Debian images have them; mmdebstrap's
	# essential variant does not)
	mmargs+=(--include=netbase)
	[[ -z $include_csv ]] || mmargs+=(--include="$include_csv")
	[[ -z $QUIET ]] || mmargs+=(--quiet)

	info "building image \"$name\" ($suite, variant $VARIANT${include_csv:+, include $include_csv}) from $mirror with mmdebstrap --mode=$mode"
	local start=$SECONDS
	if [[ $mode == root ]]; then
		"$mmdebstrap" "${mmargs[@]}" --format=directory "$suite" "$rootfs" "$mirror" ||
			die "build \"$name\": mmdebstrap failed (see its messages above)"
	else
		# A directory made in unshare mode would be owned by subordinate ids,
		# which this user can neither modify nor delete. Stream a tarball
		# instead and unpack it as this user (device nodes left out).
		mkdir -- "$rootfs"
		"$mmdebstrap" "${mmargs[@]}" --format=tar --skip=output/dev "$suite" - "$mirror" |
			tar -C "$rootfs" -x -f - --no-same-owner --no-same-permissions \
				--exclude='./dev/*' ||
			die "build \"$name\": mmdebstrap --mode=unshare failed: $(unshare_hint)"
	fi

	info "post-processing $rootfs"
	# Not in an || list: that would switch off set -e inside.
	(finalize_rootfs build "$rootfs" debian)
	finish_tree "$rootfs" 100000000 "$(size_bytes 1T)" >/dev/null ||
		die "build \"$name\": cannot finish the rootfs (strip privileges, set modes): see the message above"

	local created
	if [[ -n ${SOURCE_DATE_EPOCH:-} ]]; then
		created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
	else
		created=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	fi
	# lists travel as NUL-separated files, as in pull: jq writes the JSON
	printf '%s\0' "${interp[@]}" >"$BUILD_TMP/interp"
	printf '%s\0' "${env[@]}" >"$BUILD_TMP/env"
	printf '%s\0' "${include[@]}" >"$BUILD_TMP/include"
	jq -n --argjson schema "$SCHEMA" --arg name "$name" --arg suite "$suite" --arg mirror "$mirror" \
		--arg created "$created" --rawfile interp "$BUILD_TMP/interp" --rawfile env "$BUILD_TMP/env" \
		--rawfile incl "$BUILD_TMP/include" '
		def list: split("\u0000") | map(select(. != ""));
		{
			schema: $schema,
			name: $name,
			interpreter: ($interp | list),
			env: ($env | list),
			workdir: "/work",
			source: {type: "mmdebstrap", suite: $suite, "include": ($incl | list), mirror: $mirror},
			created: $created
		}' >"$BUILD_TMP/image.json" || die "build \"$name\": cannot write image.json"
	rm -f -- "$BUILD_TMP/interp" "$BUILD_TMP/env" "$BUILD_TMP/include"
	chmod 0644 -- "$BUILD_TMP/image.json"
	# what a run would refuse (an interpreter not in the image: a missing
	# --include?) fails the build, in nsrun's words
	check_image build "$name" "$BUILD_TMP"

	chmod 0755 -- "$BUILD_TMP"
	land_image build "$name" "$store" "$force"
	exec {lockfd}<&-

	local size
	size=$(du -sh -- "$dest" | cut -f1)
	info "built image \"$name\" in $dest: $size, $((SECONDS - start)) s"
}
