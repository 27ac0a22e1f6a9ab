#!/bin/sh
# virtio-net-kit-qemu.sh — the same kit virtio-net payload under
# qemu-system-x86_64 -enable-kvm -netdev user -device virtio-net-pci: proves
# the kit driver (DHCP, ARP, UDP through NAT, the broken chain) against the
# reference device. See virtio-net-kit.inc.sh.
command -v qemu-system-x86_64 >/dev/null || { echo "skipped: no qemu-system-x86_64"; exit 77; }
. "$(dirname "$0")/virtio-net-kit.inc.sh"

vm() {
	timeout 120 qemu-system-x86_64 -enable-kvm -m 64 -nographic -monitor none \
		-device isa-debug-exit,iobase=0xf4,iosize=4 \
		-netdev user,id=n0 -device virtio-net-pci,netdev=n0 \
		-kernel "$PAYLOAD" -append "$1"
}

net_extra_cases() {
	:
}

net_main qemu
