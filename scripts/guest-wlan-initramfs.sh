#!/bin/sh
# guest-wlan-initramfs.sh — the WLAN test guest's initramfs: the busybox one
# of scripts/guest-kernel.sh plus Debian's hostapd, wpa_supplicant, iw and
# iproute2's ip with the shared libraries they load, wireless-regdb's
# regulatory.db (cfg80211 reads it through the firmware loader) and the
# configuration files in tests/guest/linux/wlan/. Prints the cpio's path.
# With the argument `debian`, for Debian's packaged kernel instead of the
# project's: its mac80211_hwsim and virtio_pci modules with their
# dependencies (the init loads them) and regulatory.db's signature, which
# Debian's cfg80211 checks.
#
# Cached next to the guest kernel, keyed by the contents of every file that
# goes in (so a new Debian package version or config builds a new one). No
# compression and no debug sections: the guest's ring 0 is emulated on the CI
# hosts and each unpacked byte costs it.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
flavour=${1:-}
gl=$top/tests/guest/linux
cache=${XDG_CACHE_HOME:-$HOME/.cache}/vmm
tools="/usr/sbin/hostapd /usr/sbin/wpa_supplicant /usr/sbin/iw /usr/bin/ip"
regdb=/lib/firmware/regulatory.db

say() { printf 'guest-wlan-initramfs: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }
[ -z "$flavour" ] || [ "$flavour" = debian ] || die "usage: $0 [debian]"
[ -z "$flavour" ] || regdb="$regdb $regdb.p7s"
for f in $tools $regdb; do
	[ -e "$f" ] || die "$f missing: sh scripts/install-deps.sh linux"
done
if [ -n "$flavour" ]; then
	gen=- # no kernel build: cpio(1) (mkinitramfs.sh)
else
	kdir=$(sh "$top/scripts/guest-kernel.sh")
	gen=$cache/kbuild/usr/gen_init_cpio
	[ -x "$gen" ] || die "$gen missing (the guest kernel's build tree)"
fi

# The libraries (and the dynamic loader) each tool loads, as ldd finds them.
libs=$(for t in $tools; do ldd "$t"; done | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | sort -u)

list=$(mktemp)
mods=$(mktemp -d)
trap 'rm -rf "$list" "$list.cpio" "$mods"' EXIT
if [ -n "$flavour" ]; then
	. "$top/scripts/lib/debian-kernel.sh"
	debian_modules "$(debian_kver)" "$mods" virtio_pci mac80211_hwsim
fi
{
	for d in /lib /lib64 /lib/x86_64-linux-gnu /lib/firmware /var /var/run; do
		echo "dir $d 755 0 0"
	done
	for t in $tools; do echo "file /sbin/${t##*/} $t 755 0 0"; done
	# Libraries under the names ldd printed (the loader's default paths),
	# with the contents of what those names link to.
	for l in $libs; do echo "file $l $(readlink -f "$l") 755 0 0"; done
	for r in $regdb; do echo "file /lib/firmware/${r##*/} $(readlink -f "$r") 644 0 0"; done
	if [ -n "$flavour" ]; then
		echo "dir /lib/modules 755 0 0"
		for m in $(cat "$mods/modules.order"); do
			echo "file /lib/modules/$m.ko $mods/lib/modules/$m.ko 644 0 0"
		done
		echo "file /modules.order $mods/modules.order 644 0 0"
	fi
	for c in "$gl"/wlan/*.conf; do echo "file /etc/${c##*/} $c 644 0 0"; done
} >"$list"

key=$(awk '$1 == "file" { print $3 }' "$list" | xargs cat "$list" "$0" "$gl/mkinitramfs.sh" "$gl/init" |
	sha256sum | cut -c1-16)
out=$cache/wlan-initramfs${flavour:+-$flavour}-$key.cpio
if [ ! -f "$out" ]; then
	say "building $out"
	sh "$gl/mkinitramfs.sh" "$gl/init" "$list.cpio" "$gen" "$list"
	mv "$list.cpio" "$out"
fi
echo "$out"
