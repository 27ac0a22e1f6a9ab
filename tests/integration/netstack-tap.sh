#!/bin/sh
# netstack-tap.sh — netstack-host on a TAP device in the root namespace;
# Linux pings it (also with fragmented echoes at MTU 576 and 9000) and
# does UDP echo round trips through bash's /dev/udp. Then IPv6 (fd21::/64):
# ping -6 (plain and fragmented both ways), UDP and TCP echo over IPv6, and
# the same dual-stack listeners still answering IPv4.
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
	for _ in $(seq 600); do ip link show "$TAP" >/dev/null 2>&1 && break; sleep 0.1; done
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

echo_check() { # proto host size
	msg=$(head -c "$3" /dev/zero | tr '\0' 'y')
	got=$(bash -c "exec 3<>/dev/$1/$2/7; printf %s '$msg' >&3; timeout 3 head -c $3 <&3")
	[ "$got" = "$msg" ]
}

run_v6() {
	"$HOST" --tap "$TAP" --addr 10.211.0.2/24 --addr6 fd21::2/64 &
	pid=$!
	for _ in $(seq 600); do ip link show "$TAP" >/dev/null 2>&1 && break; sleep 0.1; done
	ip link set "$TAP" up || return 1
	ip addr add 10.211.0.1/24 dev "$TAP" || return 1
	ip -6 addr add fd21::1/64 dev "$TAP" nodad || return 1
	# netstack's addresses pass DAD (1 s) before they answer.
	for _ in $(seq 30); do ping -6 -c 1 -W 1 fd21::2 >/dev/null 2>&1 && break; sleep 0.2; done
	ping -6 -c 3 -i 0.2 -W 2 fd21::2 || { echo "FAIL: ping -6"; return 1; }
	ping -6 -c 2 -i 0.2 -W 2 -s 4000 fd21::2 || { echo "FAIL: fragmented ping -6"; return 1; }
	ip -6 neigh show dev "$TAP" | grep -q "fd21::2 .*lladdr" ||
		{ echo "FAIL: the kernel has no neighbour entry for netstack"; return 1; }
	for size in 1 1400 4000; do
		echo_check udp fd21::2 "$size" || { echo "FAIL: UDP echo over IPv6, $size bytes"; return 1; }
	done
	for size in 1 100000; do
		echo_check tcp fd21::2 "$size" || { echo "FAIL: TCP echo over IPv6, $size bytes"; return 1; }
	done
	echo_check tcp 10.211.0.2 1000 || { echo "FAIL: TCP echo over IPv4 (dual stack)"; return 1; }
	kill "$pid"; wait "$pid" 2>/dev/null; pid=""
	echo "ok: ipv6"
}

run_mtu 1500 && run_mtu 576 && run_mtu 9000 && run_v6
