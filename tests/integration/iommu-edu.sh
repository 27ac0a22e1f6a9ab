#!/bin/sh
# iommu-edu.sh — tests/guest/iommu.elf under build/vmm: VT-d
# queued invalidation, DMA remapping of the edu device's DMA (4 KiB and
# 2 MiB pages, a fault for an unmapped IOVA) and interrupt remapping of its
# MSI and of a remappable I/O APIC entry, with the I/O APIC in vmm
# (kernel_irqchip=split, then off). Also: intremap with kernel_irqchip=on
# and IDE disks on q35 (no AHCI yet) are refused with a clear error.
set -u
B=${B:-build}
VMM=${VMM:-$B/vmm}
G=$B/tests/guest
[ -e /dev/kvm ] || { echo "skipped: no /dev/kvm on this host"; exit 77; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fails=0

for mode in split off; do
	timeout 120 "$VMM" -m 64 -nographic -device isa-debug-exit,iobase=0xf4,iosize=4 \
		-M "q35,kernel_irqchip=$mode" -device intel-iommu,intremap=on -device edu \
		-kernel "$G/iommu.elf" >"$out" 2>&1 </dev/null
	rc=$?
	if [ "$rc" -ne 1 ] || ! grep -q 'iommu: all checks passed' "$out"; then
		echo "FAIL iommu kernel_irqchip=$mode: status $rc (want 1), output:"
		tail -n 20 "$out"
		fails=$((fails + 1))
	else
		echo "ok   iommu kernel_irqchip=$mode"
	fi
done

# refused(PATTERN ARGS...): exit status 1 and PATTERN on stderr
refused() {
	pattern=$1
	shift
	timeout 20 "$VMM" -m 64 -nographic "$@" >"$out" 2>&1 </dev/null
	rc=$?
	if [ "$rc" -ne 1 ] || ! grep -q "$pattern" "$out"; then
		echo "FAIL refused '$pattern': status $rc, output:"
		tail -n 5 "$out"
		fails=$((fails + 1))
	else
		echo "ok   refused: $(head -n 1 "$out")"
	fi
}
refused 'kernel_irqchip=split' -M q35 -device intel-iommu,intremap=on -kernel "$G/iommu.elf"
refused 'needs -machine q35' -device intel-iommu -kernel "$G/iommu.elf"
[ "$fails" -eq 0 ]
