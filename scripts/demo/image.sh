#!/bin/sh
# image.sh — make demo's guest: Debian's packaged kernel (linux-image-amd64)
# and a busybox initramfs with that kernel's virtio (net, blk, rng), ACPI
# button and AHCI (disk, CD-ROM, iso9660) modules.
# Nothing to compile: the first demo boots in seconds, not after a kernel
# build. Cached outside the checkout, keyed by the kernel, busybox and these
# scripts; prints the folder.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/vmm
say() { printf 'demo: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }
. "$here/../lib/debian-kernel.sh"
kver=$(debian_kver) || exit 1
command -v busybox >/dev/null || die "busybox-static is not installed"

key=$({ echo "$kver"; dpkg-query -W -f '${Version}' busybox-static;
	cat "$here/init" "$here/image.sh" "$here/../lib/debian-kernel.sh"; } | sha256sum | cut -c1-16)
out=$cache/demo-$key
if [ -f "$out/initrd.cpio.gz" ] && [ -f "$out/kernel" ]; then
	echo "$out"
	exit 0
fi
tmp=$out.tmp
rm -rf "$tmp"
mkdir -p "$tmp/root/bin" "$tmp/root/proc" "$tmp/root/sys" "$tmp/root/dev" \
	"$tmp/root/tmp" "$tmp/root/etc" "$tmp/root/root"
debian_modules "$kver" "$tmp/root" virtio_pci virtio_net virtio_blk virtio_rng button evdev \
	ahci sd_mod sr_mod isofs
cp "$(command -v busybox)" "$tmp/root/bin/busybox"
cp "$here/init" "$tmp/root/init"
chmod 755 "$tmp/root/init"
(cd "$tmp/root" && find . | cpio -o -H newc --quiet | gzip -1) >"$tmp/initrd.cpio.gz"
cp "/boot/vmlinuz-$kver" "$tmp/kernel"
rm -rf "$tmp/root" "$out"
mv "$tmp" "$out"
say "guest image (Debian's $kver) in $out"
echo "$out"
