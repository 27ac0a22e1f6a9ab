#!/bin/sh
# virtio-serial-hotplug.sh — a virtserialport added and removed while
# Debian's kernel runs (make demo's image, booted directly), as libvirt's
# attach-device and detach-device of a <channel> do: chardev-add of a unix
# socket, device_add virtserialport name=org.test.0 (the port appears in
# the guest), 64 KiB each way with sha256 checked, device_del (gone in the
# guest, DEVICE_DELETED), chardev-remove (refused while in use).
# tests/integration/virtio_serial_hotplug.py runs the guest; QEMU
# (-enable-kvm) runs the same steps as the reference.
# needs: native ring 0 (Linux guest; scripts/nested-kvm/place.sh)
set -u
VMM=${VMM:-build/vmm}
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
guest=$(sh scripts/demo/image.sh) || { echo "FAIL: no Debian guest image (scripts/demo/image.sh)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
command -v qemu-system-x86_64 >/dev/null ||
	{ echo "FAIL: no qemu-system-x86_64 for the reference run (scripts/install-deps.sh check)"; exit 1; }

cpu=
# KVMs that emulate guest ring 0 (kvm_pvm) need the conservative CPU model.
[ ! -d /sys/module/kvm_pvm ] || cpu="-cpu baseline"
# shellcheck disable=SC2086
python3 tests/integration/virtio_serial_hotplug.py vmm "$guest" "$work" "$VMM" $cpu || exit 1
rm -rf "$work" && mkdir -p "$work"
python3 tests/integration/virtio_serial_hotplug.py qemu "$guest" "$work" \
	qemu-system-x86_64 -enable-kvm -cpu qemu64,-smap,-smep,-xsave,-popcnt -vga none || exit 1
echo "virtio-serial-hotplug: ok"
