#!/bin/sh
# virtio-net-kit.sh — the kit's virtio-net payload under build/vmm: the
# default NIC (no network option at all: virtio-net on user networking),
# -netdev user,impl=slirp + -device virtio-net-pci, -nic user with a MAC,
# -nic none (no NIC), restrict=on (DHCP and ARP but no way out), a frame with a header the guest never negotiated
# (dropped with one stderr line, the device carries on), and a descriptor
# loop (DEVICE_NEEDS_RESET, one stderr line, recovered by a reset). See
# virtio-net-kit.inc.sh.
VMM=${VMM:-${B:-build}/vmm}
. "$(dirname "$0")/virtio-net-kit.inc.sh"

# No network option: the default NIC (QEMU's behaviour).
vm() {
	append=$1
	shift
	timeout 120 "$VMM" -m 64 -nographic -device isa-debug-exit,iobase=0xf4,iosize=4 "$@" \
		-kernel "$PAYLOAD" -append "$append"
}

net_extra_cases() {
	run_case "$1: impl=slirp (libslirp)" 1 "echo_port=$PORT count=20" \
		-netdev user,id=n0,impl=slirp -device virtio-net-pci,netdev=n0 -- \
		"$CHECKS" "$ARP" 'virtio-net: all checks passed'
	run_case "$1: -nic user with a MAC" 1 "echo_port=$PORT count=5" \
		-nic user,model=virtio-net-pci,mac=52:54:00:aa:bb:cc -- \
		'virtio-net: MAC 52:54:0:aa:bb:cc' "$CHECKS" 'virtio-net: all checks passed'
	run_case "$1: a header asking for an offload never negotiated" 1 \
		"echo_port=$PORT count=5 badhdr=1" -- 'virtio-net: all checks passed'
	grep -q 'dropping a bad frame from the guest: partial checksum without VIRTIO_NET_F_CSUM' \
		"$tmp/err" || fail "$1: no stderr line for the bad header"
	run_case "$1: -nic none" 3 "" -nic none -- 'virtio-net: FAIL no usable virtio-net device'
	# restrict=on: the LAN works (DHCP, ARP), the host behind 10.0.2.2 does not
	run_case "$1: restrict=on" 3 "echo_port=$PORT count=1" -nic user,restrict=on -- \
		"$CHECKS" "$ARP" 'virtio-net: FAIL no UDP echo for datagram'
}

net_main vmm
