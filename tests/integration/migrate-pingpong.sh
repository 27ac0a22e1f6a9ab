#!/bin/sh
# migrate-pingpong.sh — live migrations back and forth between two
# processes on one host with a busy 2-vCPU Linux guest (make demo's
# kernel): a counter on the console, a disk writer on a qcow2 virtio-blk
# disk both processes open (handed over at the end of each migration:
# flushed, qcow2 written out, the locks passed), virtio-net on user
# networking with a DHCP lease and a 16 MiB TCP transfer through hostfwd
# held open through every migration, then a save and restore through a
# file. 20 migrations with kernel_irqchip=on, 3 each with split and off
# (vmm's own PIC, I/O APIC, PIT and, off, local APICs), and QEMU doing 3
# as the reference. tests/integration/migrate_pingpong.py checks that
# every migration completes, the counter never goes back, the shell
# answers, the transfer ends with the guest's sha256 (vmm; QEMU's slirp
# drops it, reported), and every block the guest wrote reads back from
# the image with the sha256 it printed (qemu-img, the oracle); qemu-img
# check is clean.
# needs: native ring 0 (Linux guest; scripts/nested-kvm/place.sh)
tools=qemu-img
. "$(dirname "$0")/demo-py.inc.sh"

# pingpong SIDE COUNT EMULATOR...: a fresh disk, then the migrations
pingpong() {
	rm -rf "${work:?}"/*
	qemu-img create -q -f qcow2 "$work/disk.qcow2" 64M || exit 1
	python3 tests/integration/migrate_pingpong.py "$work" "$@" || exit 1
}

# shellcheck disable=SC2086
pingpong vmm 20 "$VMM" $cpu
# shellcheck disable=SC2086
pingpong vmm-split 3 "$VMM" $cpu -machine kernel_irqchip=split
# shellcheck disable=SC2086
pingpong vmm-off 3 "$VMM" $cpu -machine kernel_irqchip=off
# shellcheck disable=SC2086
pingpong qemu 3 $qemu_ref
echo "migrate-pingpong: ok"
