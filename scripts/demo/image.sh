#!/bin/sh
# image.sh — make demo's guest: Debian's packaged kernel (linux-image-amd64)
# and a busybox initramfs with that kernel's virtio (net, blk, rng, console,
# balloon), USB host controller (UHCI, xHCI), AHCI (disk, CD-ROM, iso9660)
# and ACPI button modules; with Debian's qemu-guest-agent installed on the
# host, its qemu-ga and the libraries ldd names too (tests/integration/
# virtio-serial.sh talks to it), and the host's /etc/os-release.
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

qga=$(command -v qemu-ga || ls /usr/sbin/qemu-ga 2>/dev/null || true)
key=$({ echo "$kver"; dpkg-query -W -f '${Version}' busybox-static;
	[ -z "$qga" ] || dpkg-query -W -f '${Version}' qemu-guest-agent;
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
debian_modules "$kver" "$tmp/root" virtio_pci virtio_net virtio_blk virtio_rng virtio_console \
	virtio_balloon button evdev uhci_hcd xhci_pci ahci sd_mod sr_mod isofs
cp "$(command -v busybox)" "$tmp/root/bin/busybox"
[ ! -f /etc/os-release ] || cp /etc/os-release "$tmp/root/etc/os-release"
# qemu-ga is glibc-linked: the binary, then each library at the path the
# dynamic loader looks for it.
if [ -n "$qga" ]; then
	cp "$qga" "$tmp/root/bin/qemu-ga"
	for lib in $(ldd "$qga" | sed -n 's/.*=> \(\/[^ ]*\).*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) .*/\1/p'); do
		mkdir -p "$tmp/root$(dirname "$lib")"
		cp -L "$lib" "$tmp/root$lib"
	done
fi
cp "$here/init" "$tmp/root/init"
chmod 755 "$tmp/root/init"
(cd "$tmp/root" && find . | cpio -o -H newc --quiet | gzip -1) >"$tmp/initrd.cpio.gz"
cp "/boot/vmlinuz-$kver" "$tmp/kernel"
rm -rf "$tmp/root" "$out"
mv "$tmp" "$out"
say "guest image (Debian's $kver) in $out"
echo "$out"
