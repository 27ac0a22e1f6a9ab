#!/bin/sh
# migrate-devices.sh — save and restore a Linux guest (make demo's Debian
# kernel) with the virtio devices every libvirt domain has: a
# virtio-balloon-pci (target set, stats polling on) and a virtio-serial-pci
# whose named port the guest holds open with data flowing both ways
# (tests/integration/migrate_devices.py). After the restore the port is
# still open and carries data both ways (the line sent while the machine
# was stopped too), the balloon keeps its target, its stats keep
# updating and a new target is reached. QEMU runs the same as the
# reference.
# needs: native ring 0 (Linux guest; scripts/nested-kvm/place.sh)
. "$(dirname "$0")/demo-py.inc.sh"
guest=$GUEST

# shellcheck disable=SC2086
python3 tests/integration/migrate_devices.py vmm "$guest" "$work" "$VMM" $cpu || exit 1
rm -rf "$work" && mkdir -p "$work"
# shellcheck disable=SC2086
python3 tests/integration/migrate_devices.py qemu "$guest" "$work" $qemu_ref || exit 1
echo "migrate-devices: ok"
