#!/bin/sh
# mkinitramfs.sh INIT OUT.cpio GEN_INIT_CPIO [EXTRA_LIST] — an uncompressed
# newc initramfs from Debian's busybox-static, written by the kernel's own
# usr/gen_init_cpio (device nodes without root). Uncompressed: the guest's
# ring 0 is emulated on the CI hosts, and unpacking plain cpio is far cheaper
# than inflating. EXTRA_LIST: more entries in gen_init_cpio's list format
# (e.g. the WLAN tools of scripts/guest-wlan-initramfs.sh), appended.
# GEN_INIT_CPIO "-": no kernel build tree (Debian's packaged kernel); the
# list is staged in a folder and written by cpio(1), without the device
# nodes (that kernel's built-in initramfs has /dev/console, and the init
# mounts devtmpfs).
set -eu
init=$1 out=$2 gen=$3 extra=${4:-}
bb=/bin/busybox
file -L "$bb" 2>/dev/null | grep -q 'statically linked' ||
	{ echo "mkinitramfs: $bb is not static: apt-get install busybox-static" >&2; exit 1; }
list=$(mktemp)
trap 'rm -f "$list"' EXIT
{
	for d in /bin /sbin /usr /usr/bin /usr/sbin /proc /sys /dev /tmp /etc /root; do echo "dir $d 755 0 0"; done
	echo "nod /dev/console 600 0 0 c 5 1"
	echo "nod /dev/ttyS0 600 0 0 c 4 64"
	echo "nod /dev/null 666 0 0 c 1 3"
	echo "file /bin/busybox $bb 755 0 0"
	echo "file /init $init 755 0 0"
	# Only /bin/sh: Debian's static busybox runs its applets from the shell
	# without links (standalone shell), and each of the ~270 links would
	# cost the guest's emulated ring 0 milliseconds to unpack.
	echo "slink /bin/sh /bin/busybox 777 0 0"
	[ -z "$extra" ] || cat "$extra"
} >"$list"
if [ "$gen" != - ]; then
	"$gen" "$list" >"$out"
	exit 0
fi
stage=$(mktemp -d)
trap 'rm -rf "$list" "$stage"' EXIT
while read -r kind dst a b _; do
	case $kind in
	dir) mkdir -p "$stage$dst" && chmod "$b" "$stage$dst" ;;
	file) mkdir -p "$stage${dst%/*}" && cp "$a" "$stage$dst" && chmod "$b" "$stage$dst" ;;
	slink) ln -s "$a" "$stage$dst" ;;
	esac
done <"$list"
(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$out"
