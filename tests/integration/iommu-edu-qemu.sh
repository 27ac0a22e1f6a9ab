#!/bin/sh
# iommu-edu-qemu.sh — tests/guest/iommu.elf under QEMU's q35 with its
# intel-iommu and edu (the peer), kernel-irqchip=split: the payload that
# iommu-edu.sh runs under vmm must pass there too, so what it checks of
# vmm's VT-d and edu (fault reason, remapped vectors, DMA through 2 MiB
# pages) is what QEMU does. Skips (77) only without /dev/kvm or QEMU.
set -u
B=${B:-build}
G=$B/tests/guest
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
command -v qemu-system-x86_64 >/dev/null || { echo "skipped: no qemu-system-x86_64"; exit 77; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
timeout 120 qemu-system-x86_64 -enable-kvm -m 64 -nographic -no-reboot \
	-device isa-debug-exit,iobase=0xf4,iosize=4 -M q35,kernel-irqchip=split \
	-device intel-iommu,intremap=on -device edu -kernel "$G/iommu.elf" >"$out" 2>&1 </dev/null
rc=$?
if [ "$rc" -ne 1 ] || ! grep -q 'iommu: all checks passed' "$out"; then
	echo "FAIL iommu.elf under QEMU: status $rc (want 1), output:"
	tail -n 20 "$out"
	exit 1
fi
echo "ok   iommu.elf under QEMU q35 + intel-iommu + edu"
