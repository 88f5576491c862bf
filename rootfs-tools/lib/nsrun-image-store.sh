# shellcheck shell=bash disable=SC2034 # (variables used by the other parts of the tool)
# nsrun-image-store.sh - the image store: where it is, the name lock, landing a finished
# tree, deleting old ones; the list, inspect and rm subcommands.
# (sourced by nsrun-image, which defines PROG, the constants, die, warn, info
# and usage_error; see its header)

# ------------------------------------------------------------------ store --

# Prints the store directory: --store DIR, $NSRUN_IMAGES, XDG/HOME default.
store_dir() {  # CMD [DIR]
	local cmd=$1 dir=${2:-}
	if [[ -z $dir ]]; then
		dir=${NSRUN_IMAGES:-}
	fi
	if [[ -z $dir ]]; then
		if [[ -n ${XDG_DATA_HOME:-} ]]; then
			dir=$XDG_DATA_HOME/nsrun/images
		elif [[ -n ${HOME:-} ]]; then
			dir=$HOME/.local/share/nsrun/images
		else
			die "$cmd: cannot find the image store: HOME is not set (set NSRUN_IMAGES or use --store)"
		fi
	fi
	printf '%s\n' "$dir"
}

# Deletes a tree without crossing into other file systems. Returns 1 if it
# could not (typically: a tree owned by root, removed as another user).
remove_tree() {  # PATH
	local p=$1
	[[ -e $p || -L $p ]] || return 0
	rm -rf --one-file-system -- "$p" 2>/dev/null && return 0
	# Our own tree may hold directories without write permission.
	chmod -R u+rwX -- "$p" 2>/dev/null || true
	rm -rf --one-file-system -- "$p" 2>/dev/null
}

# Is a tree moved aside (.NAME.old.XXXXXX) still the source of a mount, i.e.
# the root of a run that started before it was replaced? Looks for its unique
# name in every mount table this user can read (the kernel shows the current
# path of a bind mount's root). Best effort: a run whose rootfs sits under an
# overlay in a mount namespace we cannot read is not seen.
tree_in_use() {  # DIR
	local base=${1##*/}
	# a run holds a shared flock(2) on the tree's rootfs while it lasts (its overlay,
	# if it has one, names the tree in no mount table); older runs are found by their
	# mounts, with one grep over all tables (a process per table took seconds on a
	# busy host)
	if [[ -d $1/rootfs ]] && ! flock -n -x "$1/rootfs" true 2>/dev/null; then
		return 0
	fi
	grep -qsF -- "/$base/" /proc/[0-9]*/mountinfo
}

# Removes leftovers of interrupted builds/removals of NAME. A temp dir that is
# still flock'ed belongs to a build in progress and is left alone; an old tree
# still mounted by a run is left for later.
remove_stale() {  # STORE NAME
	local store=$1 name=$2 d fd
	shopt -s nullglob dotglob
	local stale=("$store/.$name.tmp."?????? "$store/.$name.old."??????)
	shopt -u nullglob dotglob
	for d in "${stale[@]}"; do
		[[ -d $d && ! -L $d ]] || continue
		if [[ $d == */."$name".old.* ]] && tree_in_use "$d"; then
			continue
		fi
		exec {fd}<"$d" || continue
		if flock -n "$fd"; then
			info "removing stale $d"
			remove_tree "$d" || warn "cannot remove stale $d (permission denied?)"
		fi
		exec {fd}<&-
	done
}


# ---------------------------------------------------------------- landing --

# The nsrun whose rules an image must pass before it lands: $NSRUN, else
# ../build/nsrun beside this tool in a checkout, else nsrun beside it once
# installed, else nsrun on PATH. Sets NSRUN_BIN, or dies saying how to point
# at one.
NSRUN_BIN=
find_nsrun() {  # CMD NAME
	local c cands=()
	if [[ -n ${NSRUN:-} ]]; then
		[[ -f $NSRUN && -x $NSRUN ]] ||
			die "$1 \"$2\": NSRUN=$NSRUN is not an executable file: point NSRUN at nsrun (build/nsrun in a checkout)"
		cands=("$NSRUN")
	else
		cands=("$TOOL_DIR/../build/nsrun" "$TOOL_DIR/nsrun")
		c=$(command -v nsrun 2>/dev/null) && cands+=("$c")
	fi
	for c in "${cands[@]}"; do
		[[ -f $c && -x $c ]] || continue
		if "$c" image check --help >/dev/null 2>&1; then
			NSRUN_BIN=$c
			return 0
		fi
		[[ -z ${NSRUN:-} ]] ||
			die "$1 \"$2\": $NSRUN has no \"image check\" (an older nsrun?): point NSRUN at a current one"
	done
	die "$1 \"$2\": cannot find nsrun, whose checks an image must pass before it is stored: set NSRUN=/path/to/nsrun or put nsrun on PATH"
}

# Runs the runtime's own checks on the image directory DIR (nsrun image
# check, the code a run uses): what a run would refuse is refused here, with
# nsrun's message (control characters cleaned) and hint. With QUIET, only the
# exit status says it.
check_image() {  # CMD NAME DIR [QUIET]
	local out rc=0 line msg='' hint=''
	out=$("$NSRUN_BIN" image check --name "$2" "$3" 2>&1 >/dev/null) || rc=$?
	((rc != 0)) || return 0
	[[ -z ${4:-} ]] || return 1
	while IFS= read -r line; do
		line=${line//[^[:print:]]/?}
		case $line in
		'nsrun: hint: '*) hint=${line#nsrun: hint: } ;;
		'nsrun: '*) [[ -n $msg ]] || msg=${line#nsrun: } ;;
		esac
	done <<<"$out"
	printf '%s: %s\n' "$PROG" "$1 \"$2\": nsrun would refuse the image: ${msg:-nsrun image check failed (exit $rc)}" >&2
	[[ -z $hint ]] || printf '%s: hint: %s\n' "$PROG" "$hint" >&2
	exit 1
}

# Moves the finished $BUILD_TMP to STORE/NAME: the image is visible under its
# name only when complete. An image it replaces is renamed aside first and
# deleted unless a run still has it mounted (then a later build/pull/rm of
# NAME deletes it, see remove_stale). Between the two renames the name is
# briefly missing: a run starting at that instant fails with "not found".
land_image() {  # CMD NAME STORE FORCE
	local cmd=$1 name=$2 store=$3 force=$4 dest=$3/$2 old=''
	if [[ -e $dest || -L $dest ]]; then
		[[ -n $force ]] || die "image \"$name\" already exists in $store (use --force to replace it)"
		old=$(mktemp -d -- "$store/.$name.old.XXXXXX") ||
			die "$cmd \"$name\": cannot create a directory in $store"
		mv -T -- "$dest" "$old" || die "$cmd \"$name\": cannot move the old image aside"
	fi
	if ! mv -T -- "$BUILD_TMP" "$dest"; then
		[[ -z $old ]] || mv -T -- "$old" "$dest" || true
		die "$cmd \"$name\": cannot rename $BUILD_TMP to $dest"
	fi
	BUILD_TMP=
	if [[ -n $old ]]; then
		if tree_in_use "$old"; then
			info "the old image is still in use by a run: kept in $old until a later $cmd or rm of \"$name\""
		else
			remove_tree "$old" || warn "cannot delete the old image in $old (permission denied?)"
		fi
	fi
}

# Runs CMD in the background and waits for it, so that a signal to this script
# is handled at once (bash runs traps only between foreground commands); the
# EXIT trap then stops CMD. CMD inherits stdout/stderr; stdin is /dev/null.
run_child() {  # CMD...
	local rc=0
	"$@" </dev/null &
	CHILD_PID=$!
	wait "$CHILD_PID" || rc=$?
	CHILD_PID=
	return "$rc"
}

build_cleanup() {
	local rc=$?
	if [[ -n $CHILD_PID ]]; then
		kill -TERM "$CHILD_PID" 2>/dev/null || true
		wait "$CHILD_PID" 2>/dev/null || true
		sandbox_gone
		CHILD_PID=
	fi
	if [[ -n $BUILD_TMP ]]; then
		remove_tree "$BUILD_TMP" ||
			printf '%s: cannot remove %s (permission denied?)\n' "$PROG" "$BUILD_TMP" >&2
		BUILD_TMP=
	fi
	exit "$rc"
}



# Takes the lock of NAME in STORE (STORE/.lock/NAME, kept), waiting up to
# SECONDS for another build/pull/import of that name: before any temporary
# directory, so that a second import waits instead of failing. The fd stays
# open (and locked) until the script exits.
lock_name() {  # CMD NAME STORE SECONDS
	local fd
	mkdir -p -- "$3/.lock" || die "$1 \"$2\": cannot create $3/.lock"
	exec {fd}>>"$3/.lock/$2" || die "$1 \"$2\": cannot open the lock $3/.lock/$2"
	if ! flock -n "$fd"; then
		info "waiting for another build or import of \"$2\""
		flock -w "$4" "$fd" || die "$1 \"$2\": another build or import of \"$2\" still runs after $4 s"
	fi
}

# ------------------------------------------------------ list, inspect, rm --

# One word describing where an image came from, e.g. mmdebstrap:bookworm+python3.
image_source() {  # IMAGE.JSON
	local f=$1 s
	if command -v jq >/dev/null; then
		s=$(jq -r '(.source // {}) as $s
			| if ($s | type) != "object" then "-"
			  elif $s.type == "mmdebstrap" then
			    "mmdebstrap:" + ($s.suite // "?" | tostring)
			    + ([($s.include // [])[] | tostring | "+" + .] | join(""))
			  elif $s.type == "oci" then ($s.ref // "oci" | tostring)
			  else ($s.type // "-" | tostring) end' -- "$f" 2>/dev/null) || s='-'
	else
		s=$(sed -n 's/^ *"source": *{"type": *"\([^"]*\)", *"suite": *"\([^"]*\)", *"include": *\[\([^]]*\)\].*/\1:\2 \3/p' -- "$f" | head -n1)
		s=${s//\"/}
		s=${s//, /+}
		s=${s/ /+}
		s=${s%+}
	fi
	s=${s//[[:space:]]/_}
	printf '%s\n' "${s:--}"
}

cmd_list() {
	local store_opt=''
	while (($#)); do
		if [[ $1 == --?*=* ]]; then
			set -- "${1%%=*}" "${1#*=}" "${@:2}"
		fi
		case $1 in
		--store)
			(($# >= 2)) || usage_error "list: option $1: requires an argument"
			store_opt=$2
			shift 2
			;;
		-h | --help) cmd_help; exit 0 ;;
		-*) usage_error "list: unknown option \"$1\" (see $PROG --help)" ;;
		*) usage_error "list: unexpected argument \"$1\": list takes no NAME" ;;
		esac
	done
	local store d name size
	store=$(store_dir list "$store_opt")
	[[ -d $store ]] || return 0
	shopt -s nullglob
	local dirs=("$store"/*/)
	shopt -u nullglob
	for d in "${dirs[@]}"; do
		d=${d%/}
		name=${d##*/}
		[[ $name =~ $NAME_RE && -f $d/image.json ]] || continue
		size=$(du -sh -- "$d" 2>/dev/null | cut -f1) || true
		printf '%-20s  %6s  %s\n' "$name" "${size:-?}" "$(image_source "$d/image.json")"
	done
}

cmd_inspect() {
	local name='' have_name='' store_opt=''
	while (($#)); do
		if [[ $1 == --?*=* ]]; then
			set -- "${1%%=*}" "${1#*=}" "${@:2}"
		fi
		case $1 in
		--store)
			(($# >= 2)) || usage_error "inspect: option $1: requires an argument"
			store_opt=$2
			shift 2
			;;
		-h | --help) cmd_help; exit 0 ;;
		--) shift; break ;;
		-*) usage_error "inspect: unknown option \"$1\" (see $PROG --help)" ;;
		*)
			[[ -z $have_name ]] || usage_error "inspect: unexpected argument \"$1\": only one NAME"
			name=$1 have_name=1
			shift
			;;
		esac
	done
	if (($#)); then
		[[ -z $have_name && $# -eq 1 ]] || usage_error "inspect: unexpected argument \"${*: -1}\": only one NAME"
		name=$1 have_name=1
	fi
	[[ -n $have_name ]] || usage_error "inspect: missing image NAME (see $PROG --help)"
	validate_name inspect "$name"
	local store dir size
	store=$(store_dir inspect "$store_opt")
	dir=$store/$name
	[[ -d $dir && ! -L $dir && -f $dir/image.json ]] || die "inspect \"$name\": no such image in $store"
	command -v jq >/dev/null || die "inspect \"$name\": jq not found: install it (apt-get install jq)"
	size=$(du -s --block-size=1 -- "$dir" 2>/dev/null | cut -f1) || true
	jq --arg path "$dir" --argjson size "${size:-null}" '. + {path: $path, size: $size}' -- "$dir/image.json" ||
		die "inspect \"$name\": $dir/image.json is not valid JSON"
}

cmd_rm() {
	local name='' have_name='' store_opt=''
	while (($#)); do
		if [[ $1 == --?*=* ]]; then
			set -- "${1%%=*}" "${1#*=}" "${@:2}"
		fi
		case $1 in
		--store)
			(($# >= 2)) || usage_error "rm: option $1: requires an argument"
			store_opt=$2
			shift 2
			;;
		-h | --help) cmd_help; exit 0 ;;
		--) shift; break ;;
		-*) usage_error "rm: unknown option \"$1\" (see $PROG --help)" ;;
		*)
			[[ -z $have_name ]] || usage_error "rm: unexpected argument \"$1\": only one NAME"
			name=$1 have_name=1
			shift
			;;
		esac
	done
	if (($#)); then
		[[ -z $have_name && $# -eq 1 ]] || usage_error "rm: unexpected argument \"${*: -1}\": only one NAME"
		name=$1 have_name=1
	fi
	[[ -n $have_name ]] || usage_error "rm: missing image NAME (see $PROG --help)"
	validate_name rm "$name"
	local store dest aside
	store=$(store_dir rm "$store_opt")
	dest=$store/$name
	if [[ ! -d $dest || -L $dest ]]; then
		die "rm \"$name\": no such image in $store"
	fi
	# old trees of NAME that runs no longer use (left by a replace during a run)
	remove_stale "$store" "$name"
	aside=$(mktemp -d -- "$store/.$name.old.XXXXXX" 2>/dev/null) ||
		die "rm \"$name\": cannot write to the store $store (permission denied?)"
	if ! mv -T -- "$dest" "$aside" 2>/dev/null; then
		rmdir -- "$aside" 2>/dev/null || true
		die "rm \"$name\": cannot move $dest aside (permission denied?)"
	fi
	if tree_in_use "$aside"; then
		info "removed image \"$name\" from $store (its files stay in $aside while a run uses them; a later build/pull/rm of \"$name\" deletes them)"
		return 0
	fi
	if ! remove_tree "$aside"; then
		die "rm \"$name\": the image is gone from the store, but deleting its files in $aside failed: permission denied (was it built by root? delete it as root)"
	fi
	info "removed image \"$name\" from $store"
}

