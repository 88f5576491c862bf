#!/bin/bash
# docker-entrypoint.sh of the postgres:16 test image (tests/images), as the official
# image's, shortened: started as root for postgres, it makes $PGDATA and the socket
# directory the postgres user's and runs itself again as that user (setpriv in
# gosu's place), which makes the cluster on the first start (initdb with
# POSTGRES_USER and POSTGRES_PASSWORD, POSTGRES_DB created, connections from
# anywhere with a password: POSTGRES_HOST_AUTH_METHOD) and execs the server; any
# other command runs as it is
set -Eeo pipefail
if [ "${1:0:1}" = - ]; then
	set -- postgres "$@"
fi
if [ "$1" = postgres ] && [ "$(id -u)" = 0 ]; then
	mkdir -p "$PGDATA" /var/run/postgresql
	find "$PGDATA" \! -user postgres -exec chown postgres: '{}' +
	chmod 700 "$PGDATA"
	chown postgres: /var/run/postgresql
	# as the official's, allowed to fail: nsrun's seccomp profile refuses set-id bits
	chmod 3777 /var/run/postgresql || :
	exec setpriv --reuid postgres --regid postgres --init-groups "${BASH_SOURCE[0]}" "$@"
fi
if [ "$1" = postgres ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
	: "${POSTGRES_USER:=postgres}" "${POSTGRES_DB:=$POSTGRES_USER}" "${POSTGRES_HOST_AUTH_METHOD:=scram-sha-256}"
	if [ -z "$POSTGRES_PASSWORD" ] && [ "$POSTGRES_HOST_AUTH_METHOD" != trust ]; then
		echo "error: the database is uninitialized and POSTGRES_PASSWORD is not set" >&2
		exit 1
	fi
	# shellcheck disable=SC2086
	initdb --username="$POSTGRES_USER" --pwfile=<(printf '%s\n' "$POSTGRES_PASSWORD") $POSTGRES_INITDB_ARGS
	printf "listen_addresses = '*'\n" >>"$PGDATA/postgresql.conf"
	printf 'host all all all %s\n' "$POSTGRES_HOST_AUTH_METHOD" >>"$PGDATA/pg_hba.conf"
	if [ "$POSTGRES_DB" != postgres ]; then
		# single-user mode (no listening server): its session is the bootstrap superuser
		printf 'CREATE DATABASE "%s";\n' "${POSTGRES_DB//\"/\"\"}" | postgres --single -D "$PGDATA" -j postgres >/dev/null
	fi
	echo "PostgreSQL init process complete; ready for start up."
fi
exec "$@"
