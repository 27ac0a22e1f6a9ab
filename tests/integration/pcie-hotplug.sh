#!/bin/sh
# pcie-hotplug.sh — native PCIe hot-plug on -M q35 with Debian's own kernel
# (make demo's image, booted directly): three pcie-root-ports as libvirt
# writes them (pci.3 holds a virtio-rng-pci), pciehp on each (the DSDT's
# _OSC grants native hot-plug: no pcie_ports=native); QMP
# blockdev-add + device_add of a virtio-blk-pci into an empty port, the
# guest reads and writes it (sha256 against the image), device_del with
# the guest's cooperation and DEVICE_DELETED; the refusals (unknown bus,
# root bus, busy port, wrong device model, unknown id); then HMP
# drive_add/device_add/device_del; netdev_add and a virtio-net-pci in and
# out; the rng out, object-add and a virtio-rng-pci on it in and out
# (tests/integration/pcie_hotplug.py).
# QEMU (-enable-kvm -M q35, ACPI hot-plug off so its ports do native
# hot-plug) runs the same as the reference.
# needs: native ring 0 (Linux guest; scripts/nested-kvm/place.sh)
. "$(dirname "$0")/demo-py.inc.sh"
guest=$GUEST

# run SIDE EMULATOR ARGS...
run() {
	side=$1
	shift
	rm -f "$work/qmp.sock"
	truncate -s 0 "$work/disk1.raw" "$work/disk2.raw"
	truncate -s 16M "$work/disk1.raw" "$work/disk2.raw"
	port='{"driver":"pcie-root-port","port":16,"chassis":1,"id":"pci.1","bus":"pcie.0","multifunction":true,"addr":"0x2"}'
	PYTHONPATH=tests/integration python3 tests/integration/pcie_hotplug.py "$side" \
		"$work/qmp.sock" "$work/disk1.raw" "$work/disk2.raw" \
		"$@" -M q35 -m 512 -smp 2 -nographic -serial stdio -monitor none -no-reboot -net none \
		-qmp "unix:$work/qmp.sock,server=on,wait=off" \
		-kernel "$guest/kernel" -initrd "$guest/initrd.cpio.gz" \
		-append "$(cat tests/guest/linux/cmdline)" \
		-device "$port" \
		-device '{"driver":"pcie-root-port","port":17,"chassis":2,"id":"pci.2","bus":"pcie.0","addr":"0x2.0x1"}' \
		-device '{"driver":"pcie-root-port","port":18,"chassis":3,"id":"pci.3","bus":"pcie.0","addr":"0x2.0x2"}' \
		-device '{"driver":"virtio-rng-pci","id":"rng1","bus":"pci.3","addr":"0x0"}' || exit 1
}

# shellcheck disable=SC2086
run vmm "$VMM" $cpu
# shellcheck disable=SC2086
run qemu $qemu_ref -global ICH9-LPC.acpi-pci-hotplug-with-bridge-support=off
echo "pcie-hotplug: ok"
