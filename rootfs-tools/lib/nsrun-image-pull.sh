# shellcheck shell=bash disable=SC2034 # (variables used by the other parts of the tool)
# nsrun-image-pull.sh - the pull and import subcommands: an OCI or Docker image fetched
# and unpacked in the sandbox of nsrun-image-confine.sh, its config turned into
# image.json.
# (sourced by nsrun-image, which defines PROG, the constants, die, warn, info
# and usage_error; see its header)

# ------------------------------------------------------------------- pull --

# The skopeo reference of a local source: a transport reference as is, else
# a path: a directory with an OCI layout, or a tar with one (oci-archive) or
# with a docker save manifest (docker-archive). Only names are read here: the
# contents are read through the allowlist, in the sandbox (intake_local).
local_ref() {  # CMD SOURCE
	local cmd=$1 src=$2 members
	case $src in
	oci:* | oci-archive:* | docker-archive:*) printf '%s\n' "$src"; return ;;
	docker://*) usage_error "$cmd: \"$src\" is a registry: use $PROG pull" ;;
	*:*) [[ -e $src ]] || usage_error "$cmd: unsupported source \"$src\": expected oci:DIR[:TAG], oci-archive:FILE, docker-archive:FILE or a path" ;;
	esac
	if [[ -d $src ]]; then
		[[ -f $src/oci-layout && -f $src/index.json ]] ||
			die "$cmd: $src is not an OCI layout (no oci-layout and index.json)"
		printf 'oci:%s\n' "$src"
	elif [[ -f $src ]]; then
		command -v bsdtar >/dev/null || die "$cmd: bsdtar not found: install it (apt-get install libarchive-tools)"
		members=$(bsdtar -tf "$src" 2>/dev/null) || die "$cmd: $src is not a tar archive"
		if grep -qxE '(\./)?oci-layout' <<<"$members"; then
			printf 'oci-archive:%s\n' "$src"
		elif grep -qxE '(\./)?manifest\.json' <<<"$members"; then
			printf 'docker-archive:%s\n' "$src"
		else
			die "$cmd: $src holds neither an OCI layout nor a docker save archive"
		fi
	else
		die "$cmd: no such file or directory: $src"
	fi
}

blob_path() {  # LAYOUT DIGEST
	[[ $2 =~ $DIGEST_RE ]] || die "pull: invalid digest \"$2\" in the OCI layout"
	printf '%s/blobs/sha256/%s\n' "$1" "${2#sha256:}"
}

# Writes $BUILD_TMP/image.json from the image's configuration (jq arguments
# in IMAGE_JSON_ARGS) with the interpreter INTERP...: the image's env (PATH
# added if it has none, PYTHONDONTWRITEBYTECODE for a python interpreter,
# --env entries replacing the image's of the same key), its WorkingDir (not
# absolute: "/"), entrypoint, cmd, user, and the source. Nothing is judged
# here: nsrun image check does that (check_image).
IMAGE_JSON_ARGS=()
write_oci_image_json() {  # CMD NAME INTERP...
	local cmd=$1 name=$2
	shift 2
	# lists travel as NUL-separated files, not arguments: an image's Env
	# value may be longer than one argument may hold
	printf '%s\0' "$@" >"$BUILD_TMP/interp"
	jq -n '
		def list: split("\u0000") | map(select(. != ""));
		def setenv($kv): ($kv | split("=")[0] + "=") as $k
			| map(select((type == "string" and startswith($k)) | not)) + [$kv];
		($cfg[0].config // {}) as $c
		| ($interp | list) as $interp
		| ($c.Env // []) as $env0
		| (if ($env0 | type) != "array" then $env0
		   else
			(if any($env0[]; type == "string" and startswith("PATH=")) then $env0
			 else ["PATH=" + $defpath] + $env0 end) as $env1
			| (if ($interp | length) > 0 and ($interp[0] | split("/") | last | startswith("python"))
				and (any($env1[]; type == "string" and startswith("PYTHONDONTWRITEBYTECODE=")) | not)
			   then $env1 + ["PYTHONDONTWRITEBYTECODE=1"] else $env1 end) as $env2
			| reduce ($envadd | list)[] as $kv ($env2; setenv($kv))
		   end) as $env
		| {
			schema: $schema,
			name: $name,
			interpreter: $interp,
			env: $env,
			workdir: (if ($c.WorkingDir | type) == "string" and ($c.WorkingDir | startswith("/"))
				then $c.WorkingDir else "/" end),
			entrypoint: ([($c.Entrypoint // [])[] | strings]),
			cmd: ([($c.Cmd // [])[] | strings]),
			user: (if ($c.User | type) == "string" then $c.User else "" end),
			exposed_ports: (if ($c.ExposedPorts | type) == "object" then ($c.ExposedPorts | keys) else [] end),
			volumes: (if ($c.Volumes | type) == "object" then ($c.Volumes | keys) else [] end),
			source: {type: "oci", ref: $ref, digest: $digest, manifest: $manifest},
			created: $created
		}' "${IMAGE_JSON_ARGS[@]}" --rawfile interp "$BUILD_TMP/interp" \
		>"$BUILD_TMP/image.json" || die "$cmd \"$name\": cannot write image.json"
	chmod 0644 -- "$BUILD_TMP/image.json"
	rm -f -- "$BUILD_TMP/interp"
}

cmd_pull() {  # CMD ARGS... (CMD is pull or import)
	local cmd=$1 all=("${@:2}")
	shift
	local ref='' name='' store_opt='' force='' tls='' nargs=0
	local max_size=$DEFAULT_MAX_SIZE max_files=$DEFAULT_MAX_FILES
	local timeout=$DEFAULT_IMPORT_TIMEOUT net_timeout=$DEFAULT_NETWORK_TIMEOUT
	local interp=() env_add=() pos=() p
	while (($#)); do
		if [[ $1 == --?*=* ]]; then
			set -- "${1%%=*}" "${1#*=}" "${@:2}"
		fi
		case $1 in
		--store | --interpreter | --env | --tls-verify | --max-size | --max-files | --timeout | --network-timeout)
			(($# >= 2)) || usage_error "$cmd: option $1: requires an argument"
			case $1 in
			--store) store_opt=$2 ;;
			--tls-verify)
				[[ $2 == true || $2 == false ]] ||
					usage_error "$cmd: invalid --tls-verify \"$2\": must be true or false"
				tls=$2
				;;
			--interpreter)
				validate_text "$cmd" interpreter "$2"
				[[ -n $2 ]] || usage_error "$cmd: invalid interpreter \"\": must not be empty"
				IFS=, read -ra interp <<<"$2"
				for p in "${interp[@]}"; do
					[[ -n $p ]] || usage_error "$cmd: invalid interpreter \"$2\": empty element"
				done
				;;
			--env)
				validate_text "$cmd" "environment entry" "$2"
				[[ $2 =~ $ENV_RE ]] || usage_error "$cmd: invalid environment entry \"$2\": must be KEY=VALUE"
				env_add+=("$2")
				;;
			--max-size)
				max_size=$2
				if ! p=$(size_bytes "$2") || ((p == 0)); then
					usage_error "$cmd: invalid --max-size \"$2\": expected a size such as 512m or 8g"
				fi
				;;
			--max-files | --timeout | --network-timeout)
				[[ $2 =~ ^[1-9][0-9]{0,9}$ ]] ||
					usage_error "$cmd: invalid $1 \"$2\": expected a positive whole number"
				case $1 in
				--max-files) max_files=$2 ;;
				--timeout) timeout=$2 ;;
				--network-timeout) net_timeout=$2 ;;
				esac
				;;
			esac
			shift 2
			;;
		--force) force=1; shift ;;
		--quiet | -q) QUIET=1; shift ;;
		-h | --help) cmd_help; exit 0 ;;
		--) shift; pos+=("$@"); break ;;
		-*) usage_error "$cmd: unknown option \"$1\" (see $PROG --help)" ;;
		*) pos+=("$1"); shift ;;
		esac
	done
	nargs=${#pos[@]}
	# a Docker reference alone (redis:7): nsrun pull, the one front door for
	# registry images, which pulls into the reference's store name
	if [[ $cmd == pull && $nargs == 1 && ${pos[0]} != *://* && ${pos[0]} != oci:* &&
		${pos[0]} != oci-archive:* && ${pos[0]} != docker-archive:* ]]; then
		[[ -z $store_opt ]] || export NSRUN_IMAGES=$store_opt
		find_nsrun "$cmd" "${pos[0]}"
		exec "$NSRUN_BIN" pull ${QUIET:+--quiet} -- "${pos[0]}"
	fi
	((nargs >= 1)) || usage_error "$cmd: missing REF and NAME (see $PROG --help)"
	((nargs >= 2)) || usage_error "$cmd: missing image NAME after \"${pos[0]}\" (see $PROG --help)"
	((nargs == 2)) || usage_error "$cmd: unexpected argument \"${pos[2]}\": expected REF NAME"
	ref=${pos[0]} name=${pos[1]}
	validate_name "$cmd" "$name"
	validate_text "$cmd" reference "$ref"
	[[ -n $ref ]] || usage_error "$cmd: empty reference"
	if [[ $cmd == import ]]; then
		ref=$(local_ref import "$ref")
	else
		case $ref in
		docker://?* | oci:?* | oci-archive:?* | docker-archive:?*) ;;
		*) usage_error "pull: unsupported reference \"$ref\": expected docker://, oci:, oci-archive: or docker-archive: (or use import PATH)" ;;
		esac
	fi

	# a registry: nsrun pull (runtime/image_fetch.c), with the same options
	if [[ $ref == docker://* ]]; then
		find_nsrun "$cmd" "$name"
		exec "$NSRUN_BIN" pull "${all[@]}"
	fi

	local tool
	for tool in skopeo umoci jq bwrap setpriv prlimit python3; do
		command -v "$tool" >/dev/null ||
			die "$cmd \"$name\": $tool not found: install it (apt-get install $tool)"
	done
	command -v bsdtar >/dev/null ||
		die "$cmd \"$name\": bsdtar not found: install it (apt-get install libarchive-tools)"
	find_nsrun "$cmd" "$name"

	local store dest
	store=$(store_dir "$cmd" "$store_opt")
	if [[ -z $force && ( -e $store/$name || -L $store/$name ) ]]; then
		die "image \"$name\" already exists in $store (use --force to replace it)"
	fi
	if [[ ! -d $store ]]; then
		mkdir -p -- "$store" || die "$cmd \"$name\": cannot create the store $store"
		chmod 0755 -- "$store"
	fi
	store=$(cd -- "$store" && pwd) || die "$cmd \"$name\": cannot enter the store $store"
	dest=$store/$name
	bounds_init "$(size_bytes "$max_size")" "$max_files" "$timeout" "$net_timeout"
	lock_name "$cmd" "$name" "$store" "$timeout"
	if [[ -z $force && ( -e $dest || -L $dest ) ]]; then
		die "image \"$name\" already exists in $store (use --force to replace it)"
	fi
	remove_stale "$store" "$name"

	# 0700 (mktemp's mode) until finished: nobody else reaches the tree while
	# the image's own modes and files are live in it.
	BUILD_TMP=$(mktemp -d -- "$store/.$name.tmp.XXXXXX") ||
		die "$cmd \"$name\": cannot create a temporary directory in $store"
	trap build_cleanup EXIT
	trap 'exit 129' HUP
	trap 'exit 130' INT
	trap 'exit 143' TERM
	local lockfd
	exec {lockfd}<"$BUILD_TMP"
	flock -n "$lockfd" || die "$cmd \"$name\": cannot lock $BUILD_TMP"
	work_init
	local work=$BUILD_TMP/work start=$SECONDS log=$BUILD_TMP/tool.log
	local layout=$BUILD_TMP/work/oci rootfs=$BUILD_TMP/work/rootfs
	local digest='' src=$ref opts=()

	info "reading $ref"
	src=$(intake_local "$cmd" "$name" "$ref")
	# an OCI source is copied as it is: the digest recorded (the
	# unpacked manifest's) is then the source's too
	[[ $src != oci:* ]] || opts+=(--preserve-digests --dest-oci-accept-uncompressed-layers)
	info "fetching $src"
	run_confined /dev/null /dev/null "$log" skopeo copy --quiet "${opts[@]}" \
		-- "$src" "oci:/build/oci:$OCI_TAG" ||
		step_failed "$cmd" "$name" "$log" "skopeo copy $src failed"
	remove_tree "$work/in"

	info "unpacking the layers with umoci"
	run_confined /dev/null /dev/null "$log" umoci --log=error raw unpack --rootless \
		--image "/build/oci:$OCI_TAG" /build/rootfs ||
		step_failed "$cmd" "$name" "$log" "umoci could not unpack the image"

	# The image configuration: index -> manifest -> config, from the layout
	# that was unpacked; a local source's digest is that manifest's.
	local mdigest cdigest config
	mdigest=$(jq -r --arg tag "$OCI_TAG" '[.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $tag)][0].digest // empty' \
		-- "$layout/index.json") || die "$cmd \"$name\": cannot read the OCI layout's index.json"
	cdigest=$(jq -r '.config.digest // empty' -- "$(blob_path "$layout" "$mdigest")") ||
		die "$cmd \"$name\": cannot read the image manifest"
	config=$(blob_path "$layout" "$cdigest")
	jq -e 'type == "object"' -- "$config" >/dev/null 2>&1 ||
		die "$cmd \"$name\": the image configuration is not a JSON object"
	[[ -n $digest ]] || digest=$mdigest

	info "finishing $rootfs"
	work_close
	finish_or_die "$cmd" "$name" "$rootfs"
	(finalize_rootfs "$cmd" "$rootfs" oci)

	cp -- "$config" "$BUILD_TMP/config.json" || die "$cmd \"$name\": cannot read the image configuration"
	config=$BUILD_TMP/config.json
	mv -T -- "$rootfs" "$BUILD_TMP/rootfs" || die "$cmd \"$name\": cannot move the rootfs into place"
	remove_tree "$work" || die "$cmd \"$name\": cannot remove the OCI layout in $work"
	rm -f -- "$BUILD_TMP/manifest" "$log" "$BUILD_TMP/intake.log"

	# image.json, checked by the runtime itself (nsrun image check): what a
	# run would refuse (a working directory, an environment entry, an
	# interpreter not in the image) fails the import, in nsrun's words.
	local created
	if [[ -n ${SOURCE_DATE_EPOCH:-} ]]; then
		created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
	else
		created=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	fi
	printf '%s\0' "${env_add[@]}" >"$BUILD_TMP/env-add"
	IMAGE_JSON_ARGS=(--argjson schema "$SCHEMA" --arg name "$name" --arg ref "$ref" --arg digest "$digest"
		--arg manifest "$mdigest" --arg created "$created" --arg defpath "$DEFAULT_PATH"
		--slurpfile cfg "$config" --rawfile envadd "$BUILD_TMP/env-add")
	if ((${#interp[@]})); then
		write_oci_image_json "$cmd" "$name" "${interp[@]}"
		check_image "$cmd" "$name" "$BUILD_TMP"
	else
		# no --interpreter: the first of GUESS_INTERPRETERS the runtime finds,
		# preferring the program the image's entrypoint/cmd starts
		write_oci_image_json "$cmd" "$name"
		check_image "$cmd" "$name" "$BUILD_TMP"
		local guess=() c first
		first=$(jq -r '((.config.Entrypoint // []) + (.config.Cmd // []))[0] // "" | strings' -- "$config")
		first=${first##*/}
		for c in "${GUESS_INTERPRETERS[@]}"; do
			[[ $first != "$c"* ]] || guess+=("$c")
		done
		guess+=("${GUESS_INTERPRETERS[@]}")
		for c in "${guess[@]}"; do
			write_oci_image_json "$cmd" "$name" "$c"
			if check_image "$cmd" "$name" "$BUILD_TMP" quiet; then
				interp=("$c")
				break
			fi
		done
		if ! ((${#interp[@]})); then
			warn "no interpreter (${GUESS_INTERPRETERS[*]}) on the image's PATH: FILE mode needs --interpreter; -- CMD works"
			write_oci_image_json "$cmd" "$name"
		fi
	fi
	rm -f -- "$BUILD_TMP/env-add" "$config"

	chmod 0755 -- "$BUILD_TMP"
	land_image "$cmd" "$name" "$store" "$force"
	exec {lockfd}<&-
	local size
	size=$(du -sh -- "$dest" | cut -f1)
	info "${cmd}ed image \"$name\" from $ref ($digest) in $dest: $size, $((SECONDS - start)) s"
}
