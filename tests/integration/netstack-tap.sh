#!/bin/sh
# netstack-tap.sh — netstack-host on a TAP device in the root namespace;
# Linux pings it (also with fragmented echoes at MTU 576 and 9000) and
# does UDP echo round trips through bash's /dev/udp.
set -u
B=${B:-build}
HOST=$B/netstack-host
[ "$(id -u)" -eq 0 ] || { echo "needs root (TAP device)"; exit 77; }
[ -c /dev/net/tun ] || { echo "no /dev/net/tun"; exit 77; }
command -v ping >/dev/null || { echo "no ping (iputils-ping)"; exit 77; }
TAP=nstap$$
pid=""
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
}
trap cleanup EXIT

run_mtu() {
	mtu=$1
	"$HOST" --tap "$TAP" --addr 10.211.0.2/24 --mtu "$mtu" &
	pid=$!
	for _ in $(seq 50); do ip link show "$TAP" >/dev/null 2>&1 && break; sleep 0.1; done
	ip link set "$TAP" mtu "$mtu" up || return 1
	ip addr add 10.211.0.1/24 dev "$TAP" || return 1
	ping -c 3 -i 0.2 -W 2 10.211.0.2 || { echo "FAIL: ping at mtu $mtu"; return 1; }
	# Bigger than the MTU: both directions fragment, netstack reassembles.
	ping -c 2 -i 0.2 -W 2 -s $((mtu * 2 + 100)) 10.211.0.2 ||
		{ echo "FAIL: fragmented ping at mtu $mtu"; return 1; }
	for size in 1 100 1400 4000; do
		msg=$(head -c "$size" /dev/zero | tr '\0' 'x')
		got=$(bash -c "exec 3<>/dev/udp/10.211.0.2/7; printf %s '$msg' >&3; timeout 2 head -c $size <&3")
		[ "$got" = "$msg" ] || { echo "FAIL: UDP echo of $size bytes at mtu $mtu"; return 1; }
	done
	kill "$pid"; wait "$pid" 2>/dev/null; pid=""
	echo "ok: mtu $mtu"
}

run_mtu 1500 && run_mtu 576 && run_mtu 9000
