#!/bin/sh
# migrate-hotplug.sh — save and restore a Linux guest (make demo's Debian
# kernel, -M q35) after a disk, a NIC and an rng were hot-plugged into its
# pcie-root-ports, the destination's command line holding them in another
# order than the source had them (tests/integration/migrate_hotplug.py):
# the guest reads back both disks, writes again, leases an address
# through the NIC and reads /dev/hwrng from both rngs. QEMU runs the same
# as the reference.
# needs: native ring 0 (Linux guest; scripts/nested-kvm/place.sh)
. "$(dirname "$0")/demo-py.inc.sh"
guest=$GUEST

# shellcheck disable=SC2086
python3 tests/integration/migrate_hotplug.py vmm "$guest" "$work" "$VMM" $cpu || exit 1
rm -rf "$work" && mkdir -p "$work"
# shellcheck disable=SC2086
python3 tests/integration/migrate_hotplug.py qemu "$guest" "$work" $qemu_ref \
	-global ICH9-LPC.acpi-pci-hotplug-with-bridge-support=off || exit 1
echo "migrate-hotplug: ok"
