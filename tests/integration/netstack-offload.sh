#!/bin/sh
# netstack-offload.sh — netstack-host --offload (TAP with virtio-net
# headers) in the root namespace: Linux pings it, and 4 MB go through its
# TCP echo service both ways byte-exact. The offloads must really be in
# use: the kernel's TSO hands over segments far bigger than the MTU (fewer
# frames received than 1500-byte frames would need), and netstack's
# coalesced GSO frames reach the kernel as fewer frames than segments.
# The same over IPv6 (TSO6 in, GSO TCPV6 out).
set -u
B=${B:-build}
HOST=$B/netstack-host
[ "$(id -u)" -eq 0 ] || { echo "needs root (TAP device)"; exit 77; }
[ -c /dev/net/tun ] || { echo "no /dev/net/tun"; exit 77; }
command -v ping >/dev/null || { echo "no ping (iputils-ping)"; exit 77; }
command -v python3 >/dev/null || { echo "no python3"; exit 77; }
TAP=nsoff$$
TMP=$(mktemp -d /tmp/netstack-offload.XXXXXX)
pid=""
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

# run_case ADDR PING: netstack-host (both families), ping, 4 MB echo over
# ADDR, then the frame counts of that run.
run_case() {
"$HOST" --tap "$TAP" --addr 10.212.0.2/24 --addr6 fd21:212::2/64 --offload -v 2>"$TMP/err" &
pid=$!
for _ in $(seq 600); do ip link show "$TAP" >/dev/null 2>&1 && break; sleep 0.1; done
ip link set "$TAP" mtu 1500 up || exit 1
ip addr add 10.212.0.1/24 dev "$TAP" || exit 1
ip -6 addr add fd21:212::1/64 dev "$TAP" nodad || exit 1
# "up": services listening and the IPv6 address past DAD.
for _ in $(seq 600); do grep -q " up," "$TMP/err" && break; sleep 0.1; done
$2 -c 3 -i 0.2 -W 2 "$1" >/dev/null || { echo "FAIL: $2 $1"; cat "$TMP/err"; exit 1; }
echo "ok: $2 $1"

SIZE=4194304
rx0=$(cat /sys/class/net/$TAP/statistics/rx_packets)
python3 - "$1" $SIZE <<'EOF' || { echo "FAIL: TCP echo"; cat "$TMP/err"; exit 1; }
import hashlib, os, socket, sys, threading
host, size = sys.argv[1], int(sys.argv[2])
data = os.urandom(size)
s = socket.create_connection((host, 7), timeout=20)
def send():
    s.sendall(data)
    s.shutdown(socket.SHUT_WR)
t = threading.Thread(target=send)
t.start()
got = bytearray()
while len(got) < size:
    b = s.recv(1 << 20)
    if not b:
        break
    got += b
t.join()
if bytes(got) != data:
    sys.exit("echo: %d of %d bytes, %s" % (len(got), size,
             "equal prefix" if data.startswith(bytes(got)) else "different"))
EOF
rx1=$(cat /sys/class/net/$TAP/statistics/rx_packets)
echo "ok: 4 MB echoed byte-exact over $1"
kill "$pid"; wait "$pid" 2>/dev/null; pid=""

# netstack-host -v: "rx N frames ..." counts what it read from the TAP.
frames=$(sed -n 's/^netstack-host: rx \([0-9]*\) frames.*/\1/p' "$TMP/err")
segs=$((SIZE / 1448))
[ -n "$frames" ] || { echo "FAIL: no statistics"; cat "$TMP/err"; exit 1; }
[ "$frames" -lt $((segs / 2)) ] ||
	{ echo "FAIL: $frames frames received for $segs MSS-sized segments (no TSO?)"; exit 1; }
echo "ok: TSO from the kernel: $frames frames received for $segs segments' worth"
# The kernel counts what netstack wrote as received on the TAP.
written=$((rx1 - rx0))
[ "$written" -lt $((segs / 2)) ] ||
	{ echo "FAIL: $written frames written for $segs segments (no GSO coalescing?)"; exit 1; }
echo "ok: GSO toward the kernel: $written frames written for $segs segments' worth"
}
run_case 10.212.0.2 "ping"
run_case fd21:212::2 "ping -6"
echo PASS
