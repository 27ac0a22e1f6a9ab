#!/bin/sh
# debian-disk.sh — a Debian 12 (bookworm) system disk, built from Debian's
# packages with mmdebstrap: minbase plus Debian's kernel (linux-image-amd64),
# systemd as init (systemd-sysv, udev, dbus for logind's power button),
# systemd-networkd taking DHCP on the first Ethernet NIC, and a getty on
# ttyS0 that logs root in. Once the network is online a unit prints
# "DEBIAN-READY <address/prefix>" on ttyS0: the line the tests wait for.
#
# The disk: an MBR (syslinux's mbr.bin), partition 1 FAT with SYSLINUX, the
# kernel and its initramfs (what SeaBIOS boots from an IDE disk), partition
# 2 ext4 labelled debian-root. Nothing is mounted and no loop device is
# used: mkfs.fat, syslinux, mtools and mke2fs -d write into the image file
# at the partitions' offsets. Needs root: mke2fs -d copies a tree with its
# owners, and only mmdebstrap's root mode leaves one on disk.
#
# Cached outside the checkout as ~/.cache/vmm/debian-disk-<hash>.img, keyed
# by this script's code (not its comments); prints the image's path. Built into a temporary name and
# renamed, so an interrupted build leaves no half image under the real name.
# Measured: 504 s on a busy 2-core host (most of it dpkg unpacking and
# update-initramfs), 643 MiB used of the 2 GiB sparse image; the initramfs
# (MODULES=list) is 7 MB.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/vmm
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
say() { printf 'debian-disk: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

key=$(grep -v '^[[:space:]]*#' "$here/debian-disk.sh" | sha256sum | cut -c1-16)
out=$cache/debian-disk-$key.img
if [ -f "$out" ]; then
	echo "$out"
	exit 0
fi
for t in mmdebstrap mke2fs mkfs.fat syslinux mcopy sfdisk; do
	command -v $t >/dev/null || die "$t is missing (scripts/install-deps.sh check)"
done
mbr=/usr/lib/syslinux/mbr/mbr.bin
[ -r "$mbr" ] || die "$mbr is missing (syslinux-common)"
[ "$(id -u)" -eq 0 ] || die "building the image needs root (mmdebstrap's root mode); run once as root"
mkdir -p "$cache"
tmp=$(mktemp -d "$cache/debian-disk-$key.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The files the image carries beyond its packages, handed to mmdebstrap's
# customize hook as a tree copied over the root.
files=$tmp/files
mkdir -p "$files/etc/systemd/network" "$files/etc/systemd/system/serial-getty@ttyS0.service.d" \
	"$files/etc/initramfs-tools/conf.d" "$files/usr/local/sbin"
echo debian-vmm >"$files/etc/hostname"
cat >"$files/etc/fstab" <<'EOF'
LABEL=debian-root / ext4 rw,errors=remount-ro 0 0
EOF
cat >"$files/etc/systemd/network/20-ethernet.network" <<'EOF'
[Match]
Type=ether

[Network]
DHCP=ipv4
EOF
cat >"$files/etc/systemd/system/serial-getty@ttyS0.service.d/autologin.conf" <<'EOF'
[Service]
ExecStart=
ExecStart=-/sbin/agetty --autologin root --noclear --keep-baud 115200,38400,9600 %I $TERM
EOF
cat >"$files/usr/local/sbin/debian-ready" <<'EOF'
#!/bin/sh
# The first global IPv4 address, for whoever watches the serial console.
addr=$(ip -4 -o addr show scope global | sed -n 's/.* inet \([0-9.\/]*\).*/\1/p' | head -n 1)
echo "DEBIAN-READY ${addr:-none}" >/dev/ttyS0
EOF
chmod 755 "$files/usr/local/sbin/debian-ready"
cat >"$files/etc/systemd/system/debian-ready.service" <<'EOF'
[Unit]
Description=Say on ttyS0 that the system is up, with its address
Wants=network-online.target
After=network-online.target

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/debian-ready

[Install]
WantedBy=multi-user.target
EOF
# The initramfs needs the IDE disk and ext4 only (virtio-blk too, for
# -drive if=virtio): a few MB for SeaBIOS to read, not most of the modules.
echo MODULES=list >"$files/etc/initramfs-tools/conf.d/vmm-disk"
printf '%s\n' ata_piix sd_mod ext4 virtio_pci virtio_blk >"$tmp/initramfs-modules"

say "mmdebstrap bookworm from $mirror (a few minutes)"
t0=$(date +%s)
mmdebstrap --variant=minbase --aptopt='APT::Install-Recommends "false"' \
	--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-include=/usr/share/doc/*/copyright' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	--include=linux-image-amd64,systemd-sysv,udev,dbus,iproute2,kmod,initramfs-tools \
	--essential-hook="mkdir -p \"\$1/etc/initramfs-tools/conf.d\" && cp $files/etc/initramfs-tools/conf.d/vmm-disk \"\$1/etc/initramfs-tools/conf.d/\"" \
	--customize-hook="cp -a $files/. \"\$1/\"" \
	--customize-hook="cat $tmp/initramfs-modules >>\"\$1/etc/initramfs-tools/modules\"" \
	--customize-hook='chroot "$1" systemctl enable systemd-networkd.service debian-ready.service' \
	--customize-hook='chroot "$1" update-initramfs -u -k all' \
	--customize-hook="mkdir -p $tmp/boot && cp \"\$1\"/boot/vmlinuz-* $tmp/boot/vmlinuz && cp \"\$1\"/boot/initrd.img-* $tmp/boot/initrd" \
	bookworm "$tmp/root" "deb $mirror bookworm main" >&2 ||
	die "mmdebstrap failed"

# 2 GiB, sparse: partition 1 (FAT, 128 MiB from 1 MiB) boots, partition 2
# (ext4) is the root.
img=$tmp/disk.img
truncate -s 2G "$img"
printf '%s\n' 'label: dos' 'start=2048, size=262144, type=c, bootable' 'start=264192, type=83' |
	sfdisk -q "$img" >/dev/null
dd if="$mbr" of="$img" bs=440 count=1 conv=notrunc status=none
mkfs.fat -F 16 -n DEBIANBOOT --offset=2048 "$img" $((262144 / 2)) >/dev/null
syslinux --offset $((2048 * 512)) --install "$img"
cat >"$tmp/syslinux.cfg" <<'EOF'
SERIAL 0 115200
DEFAULT debian
PROMPT 0
TIMEOUT 0
LABEL debian
  KERNEL vmlinuz
  INITRD initrd
  APPEND root=LABEL=debian-root rw console=ttyS0,115200 net.ifnames=1
EOF
boot="$img@@$((2048 * 512))"
mcopy -i "$boot" "$tmp/syslinux.cfg" ::syslinux.cfg
mcopy -i "$boot" "$tmp/boot/vmlinuz" ::vmlinuz
mcopy -i "$boot" "$tmp/boot/initrd" ::initrd
root_blocks=$(((2 * 1024 * 1024 * 1024 - 264192 * 512) / 4096))
mke2fs -q -F -t ext4 -b 4096 -L debian-root -E offset=$((264192 * 512)) -d "$tmp/root" \
	"$img" $root_blocks
mv "$img" "$out"
say "built in $(($(date +%s) - t0)) s: $out ($(du -k "$out" | cut -f1) KiB used of 2 GiB)"
echo "$out"
