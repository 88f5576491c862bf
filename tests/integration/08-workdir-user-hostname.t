#!/bin/bash
# -w/--workdir, -u/--user, --hostname.
. "$(dirname "$0")/../lib.sh"
require_all

run_probe -w /tmp -- cwd
assert_eq "-w /tmp" "cwd: ok /tmp getcwd=/tmp" "$OUT"
run_probe --workdir /usr/lib -- cwd
assert_eq "--workdir /usr/lib" "cwd: ok /usr/lib getcwd=/usr/lib" "$OUT"
V="$TESTTMP/wd"; mkdir -m 777 "$V"
run_probe -v "$V:/data:rw" -w /data -- write rel.txt
assert_eq "-w a volume: relative paths resolve there" "write: ok rel.txt" "$OUT"
check "  ... file on the host" test -f "$V/rel.txt"
run_probe -w /no/such/dir -- cwd
if [ "$RC" = 125 ]; then
	ok "-w nonexistent directory: refused (125)"
	assert_match "  ... nsrun: message" '^nsrun: ' "$ERR"
else
	assert_eq "-w nonexistent directory: created inside the container" "cwd: ok /no/such/dir getcwd=/no/such/dir" "$OUT"
	store=${NSRUN_IMAGES:-$HOME/.local/share/nsrun/images}
	check "  ... but not in the image on the host ($store/python/rootfs/no)" test ! -e "$store/python/rootfs/no"
fi

# ids with the group list normalised (sorted, unique): see expected_groups in lib.sh
ids_norm() { sed -E 's/groups=(.*)$//' <<<"$OUT"; }
groups_of() { norm_groups "$(sed -nE 's/.*groups=(.*)$/\1/p' <<<"$OUT")" ,; }
run_probe --user 1000:1000 -- ids
assert_eq "--user 1000:1000" "ids: ok uid=1000 gid=1000 euid=1000 egid=1000 " "$(ids_norm)"
assert_eq "--user 1000:1000: groups" "$(expected_groups 1000 ,)" "$(groups_of)"
run_probe -u 4242:4343 -- ids
assert_eq "-u 4242:4343" "ids: ok uid=4242 gid=4343 euid=4242 egid=4343 " "$(ids_norm)"
assert_eq "-u 4242:4343: groups" "$(expected_groups 4343 ,)" "$(groups_of)"
run_probe --user 1234 -- ids
assert_match "--user 1234 (uid only)" '^ids: ok uid=1234 gid=1234 euid=1234 egid=1234 groups=' "$OUT"
run_probe -- ids
assert_eq "default user 65534:65534" "ids: ok uid=65534 gid=65534 euid=65534 egid=65534 " "$(ids_norm)"
assert_eq "default user: groups" "$(expected_groups 65534 ,)" "$(groups_of)"
run_probe --user 1000:1000 -- write /tmp/x
assert_eq "--user 1000: /tmp writable" "write: ok /tmp/x" "$OUT"

run_probe --hostname box1 -- hostname
assert_eq "--hostname box1" "hostname: ok box1" "$OUT"
run_nsrun --image python --hostname box2 -- python3 -c 'import socket; print(socket.gethostname())'
assert_eq "--hostname seen by python" box2 "$OUT"
run_probe -- hostname
assert_eq "default hostname nsrun" "hostname: ok nsrun" "$OUT"

done_testing
