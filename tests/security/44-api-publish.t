#!/bin/bash
# nsrun api publishes a port on the host's loopback only, whatever HostIp a request
# spells: the unspecified address written another way (::0, 0:0:0:0:0:0:0:0,
# ::ffff:0.0.0.0) once reached -p as given and listened on every interface of the
# host; another host address is refused.  The control: nsrun -d -p with the same
# spelling (the caller's own choice) does listen on every interface, which is what
# the probe (ss) sees.
. "$(dirname "$0")/../lib.sh"
require_nsrun
require_userns
require_image python

api_env
api_start

# api METHOD PATH [BODY] — curl on the socket; OUT the body, then the status on its own line
api() {
	run_cmd timeout 60 curl -s --unix-socket "$SOCK" -X "$1" -H 'Content-Type: application/json' \
		-w '\n%{http_code}' ${3:+-d "$3"} "http://d$2"
}
# listening PORT... — waits (up to 10 s) until the host listens on every PORT; LISTEN: ss's table
listening() {
	local _ p missing
	for _ in $(seq 100); do
		LISTEN=$(ss -Hltn)
		missing=0
		for p in "$@"; do
			grep -Eq "[^ ]:$p " <<<"$LISTEN" || missing=1
		done
		[ "$missing" = 0 ] && return 0
		sleep 0.1
	done
	return 1
}
# listen_addrs PORT — the local addresses of the listeners on PORT in LISTEN, sorted,
# one per line: every one, as a process of a test beside this one may take the same
# port on another address (free_port's port is free on 127.0.0.1 when it is asked;
# CI failed on a 127.0.0.1 listener beside ours on [::1], session 24)
listen_addrs() { awk -v p="$1" '{ n = split($4, a, ":"); if (a[n] == p) { sub(":" p "$", "", $4); print $4 } }' <<<"$LISTEN" | sort -u; }
# loopback_only WANT PORT — "WANT" when WANT is among PORT's listeners and all of
# them are on loopback, else what they are
loopback_only() {
	local addrs
	addrs=$(listen_addrs "$2")
	if grep -qxF -- "$1" <<<"$addrs" && ! grep -qvE '^(127\.[0-9.]+|\[::1\])$' <<<"$addrs"; then
		echo "$1"
	else
		echo "$addrs" | tr '\n' ' '
	fi
}

SPELLINGS=("::0" "0:0:0:0:0:0:0:0" "::ffff:0.0.0.0" "0.0.0.0" "" "127.0.0.1" "::1")
PORTS=()
bindings=""
for i in "${!SPELLINGS[@]}"; do
	PORTS[i]=$(free_port)
	bindings+="${bindings:+,}{\"HostIp\":\"${SPELLINGS[i]}\",\"HostPort\":\"${PORTS[i]}\"}"
done
api POST /containers/create "{\"Image\":\"python\",\"Cmd\":[\"sleep\",\"600\"],\"HostConfig\":{\"PortBindings\":{\"80/tcp\":[$bindings]}}}"
ID=$(sed -n 's/.*"Id":"\([0-9a-f]*\)".*/\1/p' <<<"$OUT")
assert_match "a container publishing port 80 under each spelling of HostIp is created" "^[0-9a-f]{64}$" "$ID"
at_exit "curl -s --unix-socket \"$SOCK\" -X DELETE \"http://d/containers/$ID?force=1\" >/dev/null"
api POST "/containers/$ID/start"
assert_match "  ... and starts" $'\n204$' "$OUT"
check "  ... its ports are published" listening "${PORTS[@]}"
for i in "${!SPELLINGS[@]}"; do
	want=127.0.0.1
	[ "${SPELLINGS[i]}" = "::1" ] && want="[::1]"
	assert_eq "HostIp \"${SPELLINGS[i]}\": the host listens on loopback only" "$want" "$(loopback_only "$want" "${PORTS[i]}")"
done
api DELETE "/containers/$ID?force=1"

for ip in 192.0.2.1 "::ffff:192.0.2.1" 2001:db8::1 "127.0.0.1:9"; do
	api POST /containers/create "{\"Image\":\"python\",\"Cmd\":[\"true\"],\"HostConfig\":{\"PortBindings\":{\"80/tcp\":[{\"HostIp\":\"$ip\",\"HostPort\":\"0\"}]}}}"
	assert_match "HostIp \"$ip\" (no loopback address): refused, 403" \
		"^\\{\"message\":\"HostConfig.PortBindings: HostIp .*refused by nsrun api.*\\}"$'\n403$' "$OUT"
done
assert_eq "  ... nothing was created by a refusal" "" "$(state_entries)"

# control: the caller's own nsrun -d -p [::0]:P:80 listens on every interface, and ss says so
P=$(free_port)
at_exit "\"$NSRUN\" rm -f pub$$"
run_nsrun -d --name "pub$$" -p "[::0]:$P:80" --image python -- sleep 600
assert_eq "control: nsrun -d -p [::0]:PORT:80 starts" 0 "$RC"
check "  ... its port is published" listening "$P"
assert_eq "  ... and the probe sees it listen on every interface" "[::]" "$(listen_addrs "$P" | grep -xF '[::]')"
run_nsrun rm -f "pub$$"
done_testing
