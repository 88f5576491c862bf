#!/bin/bash
# nsrun's /etc/hosts and /etc/hostname (issue 24) are read-only to the payload, are
# nsrun's own (not the host's, not written through a symlink of the image), and do
# not give the payload a way to the host: a name pointed at the host's loopback or
# its address still reaches nothing.  Controls: the same write through a volume
# the caller made writable works; the host reaches its own servers.
. "$(dirname "$0")/../lib.sh"
require_all

# ---- read-only to the payload, whatever its uid
for f in /etc/hosts /etc/hostname; do
	run_probe -- write "$f"
	assert_match "the payload cannot write $f: a read-only mount (EROFS)" "^write: denied EROFS " "$OUT"
	run_probe -u 0 -- write "$f"
	assert_match "  ... not as uid 0 of its namespace either" "^write: denied EROFS " "$OUT"
done
run_probe --security-opt seccomp=unconfined -- mount-tmpfs /etc/hosts
assert_match "without seccomp, mounting over /etc/hosts is still refused (no capability over the mounts)" \
	'^mount-tmpfs: denied (EPERM|EACCES) ' "$OUT"
run_nsrun --image python -- sh -c 'grep -E " /etc/(hosts|hostname) " /proc/self/mountinfo'
assert_eq "both are separate mounts" 2 "$(grep -c . <<<"$OUT")"
assert_eq "  ... read-only, nosuid, nodev, noexec" 2 "$(grep -cE ' /etc/host(s|name) ro,nosuid,nodev,noexec' <<<"$OUT")"
assert_eq "  ... of nsrun's private staging tmpfs, not a file of the host or the image" 2 \
	"$(grep -cE ' - tmpfs nsrun-staging ' <<<"$OUT")"

# control: the same write works where the caller gave a writable /etc/hosts
printf '127.0.0.1 localhost\n' >"$TESTTMP/hosts"; chmod 666 "$TESTTMP/hosts"
run_probe -v "$TESTTMP/hosts:/etc/hosts:rw" -- write /etc/hosts
assert_eq "control: a volume -v HOST:/etc/hosts:rw is written by the same probe" "write: ok /etc/hosts" "$OUT"
check "  ... and the host file changed" grep -q written-by-nsrun-probe "$TESTTMP/hosts"

# ---- an image's symlinks at /etc/hosts and /etc/hostname are replaced, never followed
R="$TESTTMP/linkroot"
mkdir -p "$R/etc" "$R/data" "$R/bin"
cp "$PROBE" "$R/bin/nsrun-probe"
echo image-target >"$R/data/target"
ln -s /data/target "$R/etc/hosts"
ln -s ../../../../../../../../etc/passwd "$R/etc/hostname"
chmod -R a+rX "$R"
run_nsrun --rootfs "$R" --hostname linkbox -- /bin/nsrun-probe read /etc/hosts
assert_match "an image whose /etc/hosts is a symlink: the payload reads nsrun's file" '^read: ok /etc/hosts .*bytes: # the container' "$OUT"
run_nsrun --rootfs "$R" --hostname linkbox -- /bin/nsrun-probe read /data/target
assert_match "  ... the link's target is untouched, not covered" '^read: ok /data/target 13 bytes: image-target' "$OUT"
run_nsrun --rootfs "$R" --hostname linkbox -- /bin/nsrun-probe read /etc/hostname
assert_match "an /etc/hostname symlink out of the image: nsrun's file, not the host's /etc/passwd" \
	'^read: ok /etc/hostname 8 bytes: linkbox' "$OUT"
check "  ... the image is unchanged" eval '[ -L "$R/etc/hosts" ] && [ -L "$R/etc/hostname" ] && [ "$(cat "$R/data/target")" = image-target ]'

# ---- names do not open a way to the host
SERVERS='import socket, threading
def serve(addr):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind((addr, 0)); s.listen()
    def loop():
        while True:
            c, _ = s.accept(); c.sendall(b"host-secret\n"); c.close()
    threading.Thread(target=loop, daemon=True).start()
    return s.getsockname()[1]
print(serve("127.0.0.1"), serve("0.0.0.0"), flush=True)
threading.Event().wait()'
python3 -c "$SERVERS" >"$TESTTMP/servers" 2>&1 &
at_exit "kill $!"
for _ in $(seq 50); do [ -s "$TESTTMP/servers" ] && break; sleep 0.1; done
read -r LO_PORT ANY_PORT <"$TESTTMP/servers"
# the host's own address, if it has one beside loopback
HOST_IP=$(ip -4 -o addr show scope global 2>/dev/null | awk '{ sub("/.*", "", $4); print $4; exit }')
CLIENT='import socket, sys
for host, port in zip(sys.argv[1::2], sys.argv[2::2]):
    try:
        print(host, socket.gethostbyname(host), socket.create_connection((host, int(port)), timeout=3).recv(20).decode().strip())
    except OSError as e:
        print(host, type(e).__name__)'
run_cmd python3 -c "$CLIENT" 127.0.0.1 "$LO_PORT" ${HOST_IP:+"$HOST_IP" "$ANY_PORT"}
assert_match "control: the host reaches its loopback server" '^127\.0\.0\.1 127\.0\.0\.1 host-secret' "$OUT"
ADD=(--add-host "hostlo:127.0.0.1")
ARGS=(hostlo "$LO_PORT")
if [ -n "$HOST_IP" ]; then
	assert_match "control: the host reaches its server on $HOST_IP" "$HOST_IP $HOST_IP host-secret" "$OUT"
	ADD+=(--add-host "hostaddr:$HOST_IP")
	ARGS+=(hostaddr "$ANY_PORT")
fi
run_nsrun --image python "${ADD[@]}" -- python3 -c "$CLIENT" "${ARGS[@]}"
assert_match "--add-host NAME:127.0.0.1 is the container's own loopback: the host's server is not reached" \
	'^hostlo ConnectionRefusedError' "$(sed -n 1p <<<"$OUT")"
if [ -n "$HOST_IP" ]; then
	assert_match "--add-host NAME:<the host's address>: unreachable (loopback only)" '^hostaddr OSError' "$(sed -n 2p <<<"$OUT")"
fi
assert_not_match "  ... no byte of the host's servers" 'secret' "$OUT"
run_nsrun --image python --add-host db:host-gateway -- true
assert_match "--add-host host-gateway is refused: nsrun gives no address of the host" \
	'^nsrun: --add-host: "db:host-gateway": host-gateway' "$ERR"

done_testing
