#!/bin/sh
# mkimage.sh — the L1 guest of the nested runner: Debian's own kernel
# (linux-image-amd64, booted uncompressed through PVH) and a busybox
# initramfs holding kvm, kvm-amd and the 9p/virtio modules.
#
#   scripts/nested-kvm/mkimage.sh      build what is missing; print the folder
#
# Cached outside the checkout, keyed by the kernel and busybox versions and
# this folder's scripts: a second run with nothing changed costs nothing.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/vmm/nested
say() { printf 'nested-kvm: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 125; }

. "$here/../lib/debian-kernel.sh"
kver=$(debian_kver) || exit 125
command -v busybox >/dev/null || die "busybox-static is not installed"

key=$({ echo "$kver"; dpkg-query -W -f '${Version}' busybox-static;
	cat "$here/init" "$here/mkimage.sh" "$here/tsc-khz.c" "$here/../lib/debian-kernel.sh"; } | sha256sum | cut -c1-16)
out=$cache/l1-$key
built() { [ -f "$out/initrd.cpio.gz" ] && [ -f "$out/kernel" ] && [ -x "$out/tsc-khz" ]; }
if built; then
	echo "$out"
	exit 0
fi
# tests/run.sh boots its L1s side by side: the first one builds, the others
# wait for it (without the lock they removed each other's half-built tree)
mkdir -p "$cache"
exec 9>"$cache/l1-$key.lock"
flock 9
if built; then
	echo "$out"
	exit 0
fi

tmp=$cache/l1-$key.tmp
rm -rf "$tmp"
mkdir -p "$tmp/root/bin" "$tmp/root/lib/modules" "$tmp/root/proc" "$tmp/root/sys" \
	"$tmp/root/dev" "$tmp/root/host" "$tmp/root/rundir"

# An ELF vmlinux boots through QEMU's PVH entry and skips the compressed
# kernel's self-extraction, ~3 s of emulated CPU. The payload follows one of
# these magics inside the bzImage; the first offset that yields an ELF wins.
extract_elf() { # magic decompressor
	for off in $(LC_ALL=C grep -obUaP "$1" "/boot/vmlinuz-$kver" | cut -d: -f1); do
		tail -c +$((off + 1)) "/boot/vmlinuz-$kver" | $2 >"$tmp/vmlinux" 2>/dev/null || true
		if [ "$(head -c 4 "$tmp/vmlinux" | od -An -c | tr -d ' ')" = "177ELF" ]; then
			mv "$tmp/vmlinux" "$tmp/kernel"
			return 0
		fi
	done
	return 1
}
if ! { extract_elf '\xfd7zXZ\x00' 'xz -dc' || extract_elf '\x28\xb5\x2f\xfd' 'zstd -dc' ||
	extract_elf '\x1f\x8b\x08' 'gzip -dc'; }; then
	say "no ELF kernel inside the bzImage; booting the bzImage (slower)"
	cp "/boot/vmlinuz-$kver" "$tmp/kernel"
fi
rm -f "$tmp/vmlinux"

# tun: the tests that put a guest NIC on a TAP device
debian_modules "$kver" "$tmp/root" kvm kvm_amd virtio_pci 9pnet_virtio 9p tun

cc -O2 -o "$tmp/tsc-khz" "$here/tsc-khz.c" || die "cannot build tsc-khz (build-essential)"
cp "$(command -v busybox)" "$tmp/root/bin/busybox"
cp "$here/init" "$tmp/root/init"
chmod 755 "$tmp/root/init"
(cd "$tmp/root" && find . | cpio -o -H newc --quiet | gzip -1) >"$tmp/initrd.cpio.gz"
rm -rf "$tmp/root" "$out"
mv "$tmp" "$out"
say "L1 image for $kver in $out"
echo "$out"
