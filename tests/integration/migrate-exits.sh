#!/bin/sh
# migrate-exits.sh — a guest in a tight loop of port writes that a device
# counts (tests/guest/exit-count.c), stopped, saved to a file and restored
# in a new process, round after round (tests/integration/migrate_exits.py):
# in the end the device has counted each write once. KVM finishes an I/O
# exit's instruction only on the next KVM_RUN, so a VMM must enter it once
# more (immediate_exit) before it saves the vCPU (vmm/vcpu.c). Every
# kernel_irqchip mode: with off the APIC's MSR exits owe completion too.
# QEMU is not run beside it: its pci-testdev has no migration state.
set -u
B=${B:-build}
VMM=${VMM:-$B/vmm}
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
command -v python3 >/dev/null || { echo "FAIL: no python3"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for mode in on split off; do
	rm -f "$work"/*
	echo "kernel_irqchip=$mode:"
	# shellcheck disable=SC2086
	B=$B python3 tests/integration/migrate_exits.py "$work" 5 $VMM \
		-machine kernel_irqchip=$mode || exit 1
done
