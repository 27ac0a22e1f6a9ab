#!/bin/sh
# balloon-kit.sh — virtio-balloon's host side, vmm vs qemu-system-x86_64
# (-enable-kvm): the kit's balloon payload (1 GiB, 512 MiB filled, its
# virtio-balloon driver polled in ring 3, so it runs natively where guest
# ring 0 is emulated) is asked through QMP `balloon` to give back 256 MiB,
# then to take it again. tests/integration/balloon_kit.py boots each side
# afresh per round and alternates them for ROUNDS rounds (default 5); it
# prints per round and then each figure's median per side with the ratio
# vmm/QEMU (below 1: vmm is faster):
#   inflate: RSS -90%         QMP `balloon` to the VMM's RSS 90 % of 256 MiB lower
#   inflate: guest            the driver's own time (TSC): num_pages seen to the
#                             last `actual` written (256 buffers of 256 PFNs)
#   inflate: guest's line     QMP `balloon` to its serial line on the host
#   inflate: RSS drop MiB, %  how far the RSS fell, 200 ms after the line
#   deflate: guest, line      the same for `balloon` back to 1 GiB
# SCATTER=1 (default) gives the device the PFNs in a scattered order (one
# discard per page, as a real guest's mostly are); SCATTER=0 in order
# (vmm coalesces each buffer's run into one madvise). Env: VMM (default
# build/vmm; tests/vmm-cpu.sh adds the CPU model this host needs),
# ROUNDS, SCATTER, BALLOON_KIT_LIMIT (s, 30).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
vmm=$(readlink -f "${VMM:-build/vmm}")
payload=$(readlink -f "${B:-build}/tests/guest/balloon.elf")
[ -f "$payload" ] || { echo "balloon-kit: $payload is not built (make)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 tests/integration/balloon_kit.py "$tmp" "$payload" "mb=512 scatter=${SCATTER:-1}" \
	"${ROUNDS:-5}" --side vmm sh tests/vmm-cpu.sh "$vmm" \
	--side qemu qemu-system-x86_64 -enable-kvm -vga none \
	-device isa-debug-exit,iobase=0xf4,iosize=4
