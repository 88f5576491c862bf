#!/bin/sh
# docker-entrypoint.sh of the redis:7 test image (tests/images), as the official
# image's: started as root for redis-server, it gives the working directory (/data)
# to the redis user and runs the server as that user, setpriv in gosu's place; any
# other command runs as it is
set -e
# a first argument that is an option or a .conf file is redis-server's
if [ "${1#-}" != "$1" ] || [ "${1%.conf}" != "$1" ]; then
	set -- redis-server "$@"
fi
if [ "$1" = redis-server ] && [ "$(id -u)" = 0 ]; then
	find . \! -user redis -exec chown redis '{}' +
	exec setpriv --reuid redis --regid redis --init-groups "$0" "$@"
fi
exec "$@"
