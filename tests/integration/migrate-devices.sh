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
set -u
VMM=${VMM:-build/vmm}
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
command -v python3 >/dev/null || { echo "FAIL: no python3"; exit 1; }
guest=$(sh scripts/demo/image.sh) || { echo "FAIL: no Debian guest image (scripts/demo/image.sh)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cpu=
# KVMs that emulate guest ring 0 (kvm_pvm) need the conservative CPU model.
[ ! -d /sys/module/kvm_pvm ] || cpu="-cpu baseline"
# shellcheck disable=SC2086
python3 tests/integration/migrate_devices.py vmm "$guest" "$work" "$VMM" $cpu || exit 1
command -v qemu-system-x86_64 >/dev/null ||
	{ echo "FAIL: no qemu-system-x86_64 for the reference run (scripts/install-deps.sh check)"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
python3 tests/integration/migrate_devices.py qemu "$guest" "$work" \
	qemu-system-x86_64 -enable-kvm -cpu qemu64,-smap,-smep,-xsave,-popcnt -vga none || exit 1
echo "migrate-devices: ok"
