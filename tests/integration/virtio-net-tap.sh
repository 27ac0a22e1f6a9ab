#!/bin/sh
# virtio-net-tap.sh — -netdev tap: the kit's virtio-net payload on a TAP
# device inside a private network namespace (nothing touches the host's
# network), where the kernel side holds 10.0.2.2/24, dnsmasq serves DHCP
# and a UDP echo server listens on 10.0.2.2: DHCP, ARP for the kernel's
# MAC, 20 UDP round trips; with vnet_hdr=on (the default: the virtio-net
# header passes through) and vnet_hdr=off. Needs root and /dev/net/tun.
set -u
B=${B:-build}
VMM=${VMM:-$B/vmm}
PAYLOAD=$B/tests/guest/virtio-net.elf
export PATH="$PATH:/sbin:/usr/sbin"
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "skipped: needs root (network namespace, TAP)"; exit 77; }
[ -e /dev/net/tun ] || { echo "skipped: no /dev/net/tun"; exit 77; }
command -v dnsmasq >/dev/null || { echo "skipped: no dnsmasq"; exit 77; }
[ -f "$PAYLOAD" ] || { echo "FAIL: $PAYLOAD not built"; exit 1; }
ns=vmm-net-tap-$$
ip netns add "$ns" 2>/dev/null || { echo "skipped: cannot create a network namespace"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/virtio-net-tap.XXXXXX")
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	ip netns delete "$ns" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
in_ns() {
	ip netns exec "$ns" "$@"
}
in_ns ip link set lo up
in_ns ip tuntap add dev vtap0 mode tap || { echo "FAIL: cannot create the TAP"; exit 1; }
in_ns ip addr add 10.0.2.2/24 dev vtap0
in_ns ip link set vtap0 up
mac=$(in_ns cat /sys/class/net/vtap0/address | sed 's/:0\([0-9a-f]\)/:\1/g; s/^0\([0-9a-f]\)/\1/')
# `ip netns exec` execs the server: $! is its pid, for the clean-up
ip netns exec "$ns" dnsmasq -k --conf-file=/dev/null --interface=vtap0 --bind-interfaces --port=0 \
	--dhcp-range=10.0.2.15,10.0.2.30,1h --dhcp-option=3,10.0.2.2 --dhcp-option=6,10.0.2.3 \
	--dhcp-leasefile="$tmp/leases" --pid-file= 2>"$tmp/dnsmasq.log" &
pids="$pids $!"
ip netns exec "$ns" python3 "$(dirname "$0")/udp-echo.py" "$tmp/port" 10.0.2.2 &
pids="$pids $!"
for _ in $(seq 600); do
	[ -s "$tmp/port" ] && break
	sleep 0.1
done
port=$(cat "$tmp/port") || { echo "FAIL: the echo server did not start"; exit 1; }
fails=0
for vh in on off; do
	in_ns timeout 120 "$VMM" -m 64 -nographic -device isa-debug-exit,iobase=0xf4,iosize=4 \
		-netdev "tap,id=t0,ifname=vtap0,script=no,downscript=no,vnet_hdr=$vh" \
		-device virtio-net-pci,netdev=t0 -kernel "$PAYLOAD" \
		-append "echo_port=$port count=20" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	ok=1
	[ $rc -eq 1 ] || ok=0
	for p in 'virtio-net: DHCPACK lease 10\.0\.2\.[0-9]+ router 10\.0\.2\.2 dns 10\.0\.2\.3' \
		"virtio-net: ARP gateway is $mac" \
		"UDP echo via 10\.0\.2\.2:$port: 20 round trips ok" 'virtio-net: all checks passed'; do
		grep -Eq "$p" "$tmp/out" || { ok=0; echo "missing: $p"; }
	done
	if [ $ok = 1 ]; then
		echo "ok   tap vnet_hdr=$vh: DHCP from dnsmasq, ARP, 20 UDP round trips"
	else
		echo "FAIL tap vnet_hdr=$vh: status $rc (want 1)"
		tail -n 10 "$tmp/out"
		sed 's/^/stderr: /' "$tmp/err" | tail -n 5
		fails=$((fails + 1))
	fi
done
[ $fails -eq 0 ]
