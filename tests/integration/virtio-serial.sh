#!/bin/sh
# virtio-serial.sh — virtio-serial-pci with Debian's own kernel and its
# virtio_console module (make demo's image, booted directly), the ports
# as libvirt 9.0 writes them: a named virtserialport on a unix socket, the
# guest agent's port on an inherited listening socket (fd=N), and a
# virtconsole. tests/integration/virtio_serial.py runs the guest: 1 MiB
# each way with sha256 checked, VSERPORT_CHANGE on open and close, hvc0
# both ways, Debian's qemu-ga answering guest-ping and guest-get-osinfo.
# QEMU (-enable-kvm) runs the same case as the reference.
# needs: native ring 0 (Linux guest; scripts/nested-kvm/place.sh)
set -u
VMM=${VMM:-build/vmm}
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
guest=$(sh scripts/demo/image.sh) || { echo "FAIL: no Debian guest image (scripts/demo/image.sh)"; exit 1; }
zcat "$guest/initrd.cpio.gz" | cpio -t 2>/dev/null | grep -qx bin/qemu-ga ||
	{ echo "FAIL: no qemu-ga in the guest image (apt-get install qemu-guest-agent)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cpu=
# KVMs that emulate guest ring 0 (kvm_pvm) need the conservative CPU model.
[ ! -d /sys/module/kvm_pvm ] || cpu="-cpu baseline"
# shellcheck disable=SC2086
python3 tests/integration/virtio_serial.py vmm "$guest" "$work" "$VMM" $cpu || exit 1
# vmm notes each unclaimed port once (Debian's kernel probes the Super I/O
# ports); anything else on stderr is a complaint.
if grep -v '^vmm: guest \(read\|wrote\) unclaimed io address ' "$work/err" | grep -q .; then
	echo "FAIL: vmm complained on stderr:"; cat "$work/err"; exit 1
fi
command -v qemu-system-x86_64 >/dev/null ||
	{ echo "FAIL: no qemu-system-x86_64 for the reference run (scripts/install-deps.sh check)"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
python3 tests/integration/virtio_serial.py qemu "$guest" "$work" \
	qemu-system-x86_64 -enable-kvm -cpu qemu64,-smap,-smep,-xsave,-popcnt -vga none || exit 1
echo "virtio-serial: ok"
