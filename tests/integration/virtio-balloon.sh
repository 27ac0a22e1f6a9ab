#!/bin/sh
# virtio-balloon.sh — virtio-balloon-pci with Debian's own kernel and its
# virtio_balloon module (make demo's image, booted directly, -m 512), the
# device given in libvirt 9.0's JSON form at slot 6. The guest touches its
# free memory, QMP `balloon` asks for 256 MiB: query-balloon reaches it,
# BALLOON_CHANGE says so, the emulator's RSS falls by >= 90 % of the
# 256 MiB, the guest's MemTotal shrinks, guest-stats (after setting
# guest-stats-polling-interval) are fresh and plausible, and `balloon`
# back to 512 MiB deflates (tests/integration/virtio_balloon.py). A second
# boot with free-page-reporting=on: memory the guest frees leaves the RSS
# by itself. QEMU (-enable-kvm) runs the same cases as the reference, its
# RSS drops too.
set -u
VMM=${VMM:-build/vmm}
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
command -v python3 >/dev/null || { echo "FAIL: no python3"; exit 1; }
guest=$(sh scripts/demo/image.sh) || { echo "FAIL: no Debian guest image (scripts/demo/image.sh)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run MODE SIDE EMULATOR... (MODE: balloon, or reporting with free-page-reporting=on)
run() {
	mode=$1 side=$2
	shift 2
	rm -f "$work/qmp.sock"
	fpr=false
	[ "$mode" = balloon ] || fpr=true
	PYTHONPATH=tests/integration python3 tests/integration/virtio_balloon.py "$mode" "$side" \
		"$work/qmp.sock" "$@" -m 512 -smp 2 -nographic -serial stdio -monitor none \
		-no-reboot -net none -qmp "unix:$work/qmp.sock,server=on,wait=off" \
		-kernel "$guest/kernel" -initrd "$guest/initrd.cpio.gz" \
		-append "$(cat tests/guest/linux/cmdline)" \
		-device '{"driver":"virtio-balloon-pci","id":"balloon0","bus":"pci.0","addr":"0x6","deflate-on-oom":false,"free-page-reporting":'$fpr'}' ||
		exit 1
}

cpu=
# KVMs that emulate guest ring 0 (kvm_pvm) need the conservative CPU model.
[ ! -d /sys/module/kvm_pvm ] || cpu="-cpu baseline"
# shellcheck disable=SC2086
run balloon vmm "$VMM" $cpu
# shellcheck disable=SC2086
run reporting vmm "$VMM" $cpu
command -v qemu-system-x86_64 >/dev/null ||
	{ echo "FAIL: no qemu-system-x86_64 for the reference run (scripts/install-deps.sh check)"; exit 1; }
qemu="qemu-system-x86_64 -enable-kvm -cpu qemu64,-smap,-smep,-xsave,-popcnt -vga none"
# shellcheck disable=SC2086
run balloon qemu $qemu
# shellcheck disable=SC2086
run reporting qemu $qemu
echo "virtio-balloon: ok"
