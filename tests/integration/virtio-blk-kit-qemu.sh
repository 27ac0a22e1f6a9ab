#!/bin/sh
# virtio-blk-kit-qemu.sh — the kit's virtio-blk payload under
# qemu-system-x86_64 -enable-kvm with virtio-blk-pci (transitional, QEMU's
# default on a PCI bus), the same checks as virtio-blk-kit.sh under vmm
# (see virtio-blk-kit.inc.sh): the kit driver is written to the spec, not
# to vmm. discard=unmap: QEMU ignores discards otherwise. Broken chains 1, 3
# and 4 (QEMU serves a buffer outside RAM through a bounce buffer instead of
# failing it, so not 2). Skips (77) without /dev/kvm or QEMU.
command -v qemu-system-x86_64 >/dev/null || { echo "skipped: no qemu-system-x86_64"; exit 77; }
. "$(dirname "$0")/virtio-blk-kit.inc.sh"
BROKEN_KINDS="1 3 4"

vm() {
	timeout 120 qemu-system-x86_64 -enable-kvm -m 64 -nographic \
		-device isa-debug-exit,iobase=0xf4,iosize=4 \
		-drive "file=$1,if=none,id=d0,format=raw,discard=unmap${3:-}" \
		-device virtio-blk-pci,drive=d0,serial=kit-serial-1 \
		-kernel "$PAYLOAD" -append "$2"
}

kit_main qemu
