#!/bin/sh
# migrate-iommu.sh — save and restore a Linux guest (make demo's Debian
# kernel with intel_iommu=on, -M q35,kernel_irqchip=split) whose VT-d
# unit (intel-iommu,intremap=on) translates its SATA disk's DMA and
# remaps its interrupts (tests/integration/migrate_iommu.py): after the
# restore the guest reads back what it wrote and writes again, with no
# DMAR fault. QEMU runs the same as the reference.
# needs: native ring 0 (Linux guest; scripts/nested-kvm/place.sh)
. "$(dirname "$0")/demo-py.inc.sh"
guest=$GUEST

# shellcheck disable=SC2086
python3 tests/integration/migrate_iommu.py vmm "$guest" "$work" "$VMM" $cpu || exit 1
rm -rf "$work" && mkdir -p "$work"
# shellcheck disable=SC2086
python3 tests/integration/migrate_iommu.py qemu "$guest" "$work" $qemu_ref || exit 1
echo "migrate-iommu: ok"
