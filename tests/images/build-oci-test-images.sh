#!/bin/bash
# build-oci-test-images.sh SERVICES_ROOTFS OUT: the test images redis:7 and
# postgres:16 for the Docker clients' tests (issue 18), as OCI image layouts
# OUT/redis (tag 7) and OUT/postgres (tag 16), made with umoci from the files of the
# test store's `services` image (Debian's redis-server and PostgreSQL 15: no new
# mmdebstrap run) that the servers need: their binaries and libraries (found by the
# image's own loader, as ldd would), a shell, bash, setpriv, a few tools, and
# /etc/passwd and /etc/group with the redis and postgres users.  As the official
# images: no User (root), an entrypoint that prepares the data directory and runs
# the server as its user (setpriv in gosu's place; tests/images/*-entrypoint.sh),
# their Env, Cmd, WorkingDir, Volumes and ExposedPorts.  make oci-test-images.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 SERVICES_ROOTFS OUT" >&2; exit 2; }
src=$(cd "$1" && pwd)
out=$2
here=$(cd "$(dirname "$0")" && pwd)
pg=usr/lib/postgresql/15
arch=usr/lib/x86_64-linux-gnu
if [ ! -x "$src/usr/bin/redis-server" ] || [ ! -x "$src/$pg/bin/postgres" ]; then
	echo "$0: $src: not the services image's rootfs (make service-image)" >&2
	exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
umoci_opts=()
[ "$(id -u)" = 0 ] || umoci_opts=(--rootless)

# needs FILE...: FILE and the libraries it loads, as paths relative to the rootfs
# (a library's symbolic link and its target alike)
needs() {
	local f lib
	for f in "$@"; do
		echo "$f"
		"$src/$arch/ld-linux-x86-64.so.2" --library-path "$src/$arch" --list "$src/$f" |
			sed -n "s|.* => $src/\\([^ ]*\\) .*|\\1|p"
	done | sort -u | while read -r lib; do
		echo "$lib"
		[ -L "$src/$lib" ] && realpath --relative-to="$src" "$src/$lib"
	done | sort -u
}
# what both images hold: the merged-/usr links, the loader, sh (dash), bash, the
# tools an entrypoint and Testcontainers' port check use, setpriv, the users
common() {
	printf '%s\n' bin lib lib64 sbin usr/lib64/ld-linux-x86-64.so.2 usr/bin/sh usr/bin/awk etc/alternatives/awk \
		etc/passwd etc/group etc/nsswitch.conf
	needs $arch/ld-linux-x86-64.so.2 usr/bin/dash usr/bin/bash usr/bin/mawk usr/bin/setpriv usr/bin/find \
		usr/bin/cat usr/bin/chown usr/bin/chmod usr/bin/mkdir usr/bin/id usr/bin/ls usr/bin/rm usr/bin/env \
		usr/bin/sleep usr/bin/grep usr/bin/sort "$@"
}
# image NAME TAG ENTRYPOINT FILE-LIST VOLUME UMOCI-CONFIG-ARGS...: OUT/NAME:TAG
image() {
	local name=$1 tag=$2 entry=$3 list=$4 volume=$5
	shift 5
	mkdir -p "$tmp/$name/usr/local/bin" "$tmp/$name/tmp" "$tmp/$name/run" "$tmp/$name/var" "$tmp/$name$volume"
	tar -C "$src" --no-recursion -cf - -T "$list" | tar -C "$tmp/$name" -xf -
	install -m 0755 "$here/$entry" "$tmp/$name/usr/local/bin/docker-entrypoint.sh"
	chmod 1777 "$tmp/$name/tmp"
	ln -s /run "$tmp/$name/var/run"
	umoci init --layout "$tmp/oci-$name"
	umoci new --image "$tmp/oci-$name:$tag"
	umoci insert "${umoci_opts[@]}" --image "$tmp/oci-$name:$tag" "$tmp/$name" /
	umoci config --image "$tmp/oci-$name:$tag" --author "nsrun tests (tests/images)" \
		--config.entrypoint docker-entrypoint.sh --config.volume "$volume" "$@"
	umoci gc --layout "$tmp/oci-$name"
	rm -rf "${out:?}/$name.new"
	mkdir -p "$out"
	mv "$tmp/oci-$name" "$out/$name.new"
	rm -rf "${out:?}/$name"
	mv "$out/$name.new" "$out/$name"
	chmod -R a+rX "$out/$name"
	echo "  OCI     $out/$name:$tag ($(du -sh "$out/$name" | cut -f1))"
}

# ---- redis:7 (the official: Cmd redis-server, /data a volume and the working directory)
common usr/bin/redis-server usr/bin/redis-cli >"$tmp/redis.list"
image redis 7 redis-entrypoint.sh "$tmp/redis.list" /data \
	--config.cmd redis-server --config.workingdir /data --config.exposedports 6379/tcp \
	--config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# ---- postgres:16 (PostgreSQL 15, Debian's: the name is the tests' clients' one).  The
# server's programs, its modules but the JIT's (LLVM), its share directory, the
# time zones it needs (UTC), the C.UTF-8 locale
(
	cd "$src"
	find $pg/lib -name '*.so' ! -name 'llvmjit*' >"$tmp/pgmods"
	find usr/share/postgresql/15 usr/share/zoneinfo/Etc usr/lib/locale/C.utf8 $pg/lib $pg/bin -type d
	find usr/share/postgresql/15 usr/lib/locale/C.utf8 ! -type d
	printf '%s\n' usr/share/zoneinfo usr/share/zoneinfo/UTC usr/share/zoneinfo/GMT
	find usr/share/zoneinfo/Etc ! -type d
) | grep -v '/bitcode' >"$tmp/pg.list"
# shellcheck disable=SC2046
common usr/bin/locale $pg/bin/postgres $pg/bin/initdb $pg/bin/pg_ctl $pg/bin/psql $pg/bin/pg_isready $pg/bin/createdb \
	$(cat "$tmp/pgmods") >>"$tmp/pg.list"
image postgres 16 postgres-entrypoint.sh "$tmp/pg.list" /var/lib/postgresql/data \
	--config.cmd postgres --config.exposedports 5432/tcp \
	--config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/$pg/bin \
	--config.env LANG=C.UTF-8 --config.env PGDATA=/var/lib/postgresql/data --config.stopsignal SIGINT
