#!/bin/bash
# Sourced first (before lib.sh) by the suites that stand a network namespace of
# their own in for the host (24-network-pasta.t, 32-service-networks.t): re-execs
# the test in a new network namespace (unprivileged: in a user namespace too, with
# the capabilities the set-up needs), makes there the "host" 203.0.113.10/24 with
# a default route via 203.0.113.1, which answers at once with "prohibited" (no
# timeout), and the "remote" 198.51.100.7 at the other end of a veth pair, where a
# test's server may answer; then, unprivileged, drops every capability, so that
# the tests and nsrun run without any, as the rootless suite does.  No packet
# leaves that namespace.
PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH # ip, unshare, setpriv before lib.sh
if [ -z "${NSRUN_TEST_NETNS:-}" ]; then
	export NSRUN_TEST_NETNS=setup
	if [ "$(id -u)" = 0 ]; then
		exec unshare --net -- "$0" "$@"
	fi
	# --keep-caps: the set-up below needs CAP_NET_ADMIN here; it is dropped before the tests
	exec unshare --user --map-current-user --net --keep-caps -- "$0" "$@"
fi
if [ "$NSRUN_TEST_NETNS" = setup ]; then
	export NSRUN_TEST_NETNS=ready
	set -e
	ip link set lo up
	ip link add host0 type veth peer name remote0
	ip addr add 203.0.113.10/24 dev host0
	ip addr add 198.51.100.7/32 dev remote0
	ip link set host0 up
	ip link set remote0 up
	ip route add default via 203.0.113.1 dev host0
	ip route add prohibit 203.0.113.1/32
	set +e
	if [ "$(id -u)" != 0 ]; then
		exec setpriv --inh-caps=-all --ambient-caps=-all -- "$0" "$@"
	fi
fi
