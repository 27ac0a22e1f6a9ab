#!/bin/sh
# virtio-blk-kit.sh — the kit's virtio-blk payload under build/vmm with
# `-drive if=none,id=d0 -device virtio-blk-pci,drive=d0,serial=...`: read,
# write, flush, discard, write-zeroes, GET_ID, requests past the end, 32 in
# flight, then the image's sha256 on the host; and four malformed chains
# (loop, buffer outside RAM, bad indirect table, avail index a ring ahead),
# each of which must set DEVICE_NEEDS_RESET, leave vmm running, make it say
# why in one stderr line, and be cured by a device reset. See virtio-blk-kit.inc.sh.
VMM=${VMM:-${B:-build}/vmm}
. "$(dirname "$0")/virtio-blk-kit.inc.sh"
BROKEN_KINDS="1 2 3 4"
BROKEN_STDERR='virtio-blk-pci .* queue 0: .*; device needs reset$'

vm() {
	timeout 120 "$VMM" -m 64 -nographic -device isa-debug-exit,iobase=0xf4,iosize=4 \
		-drive "file=$1,if=none,id=d0,format=raw${3:-}" \
		-device virtio-blk-pci,drive=d0,serial=kit-serial-1 \
		-kernel "$PAYLOAD" -append "$2"
}

kit_main vmm
