#!/bin/sh
# demo.sh — `make demo`: boot the bundled guest (the minimal Linux kernel and
# busybox initramfs from scripts/guest-kernel.sh, built the first time) to a
# shell on the console. Ctrl-A c switches to the monitor, Ctrl-A x quits;
# `poweroff -f` in the guest ends the VM with status 0.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
vmm=${VMM:-$top/build/vmm}
dir=$(sh "$top/scripts/guest-kernel.sh")
[ -x "$vmm" ] || { echo "demo: $vmm missing: run make" >&2; exit 1; }
echo "demo: booting $dir/bzImage (guest ring 0 is emulated on nested hosts: ~1 min)" >&2
exec "$vmm" -m 256 -smp 2 -nographic -serial mon:stdio -no-reboot \
	-kernel "$dir/bzImage" -initrd "$dir/initramfs.cpio" \
	-append "$(cat "$top/tests/guest/linux/cmdline")"
