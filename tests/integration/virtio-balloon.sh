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
# needs: native ring 0 (Linux guest; scripts/nested-kvm/place.sh)
. "$(dirname "$0")/demo-py.inc.sh"
guest=$GUEST

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

# shellcheck disable=SC2086
run balloon vmm "$VMM" $cpu
# shellcheck disable=SC2086
run reporting vmm "$VMM" $cpu
# shellcheck disable=SC2086
run balloon qemu $qemu_ref
# shellcheck disable=SC2086
run reporting qemu $qemu_ref
echo "virtio-balloon: ok"
