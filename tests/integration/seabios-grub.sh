#!/bin/sh
# seabios-grub.sh — a real bootloader from a Debian package on the IDE
# disk: GRUB (grub-pc-bin) in the MBR and the gap after it, the minimal
# Linux guest kernel on a FAT partition, loaded by GRUB through SeaBIOS's
# int 13h. Passes when the kernel prints its early boot text with the
# command line GRUB handed it. Needs the guest kernel (scripts/guest-kernel.sh
# builds it), hence LINUX_TESTS; GRUB's LZMA core and file loading run in
# emulated ring 0 here, so this takes one or two minutes.
# seabios-syslinux.sh does the same with SYSLINUX, up to the shell.
set -u
VMM=${VMM:-build/vmm}
limit=${GRUB_TIMEOUT:-400}
. tests/integration/seabios-guest.inc.sh
grubdir=/usr/lib/grub/i386-pc
for t in grub-mkimage sfdisk mkfs.fat mcopy mmd; do
	command -v $t >/dev/null || { echo "FAIL: $t missing (scripts/install-deps.sh check)"; exit 1; }
done
[ -f $grubdir/boot.img ] || { echo "FAIL: $grubdir/boot.img missing (grub-pc-bin)"; exit 1; }
# GRUB's embedded config: only disk, partition and FAT support are in the
# (LZMA-compressed, slow to unpack here) core; `linux` and what it needs
# come from the partition.
marker=vmm.grubtest=$$
cat >"$work/early.cfg" <<CFG
set root=(hd0,msdos1)
set prefix=(hd0,msdos1)/grub
insmod linux
linux /bzImage console=ttyS0 earlyprintk=serial,ttyS0,115200 noxsave clearcpuid=smap,popcnt hpet=disable mitigations=off panic=-1 $marker
boot
CFG
img=$work/disk.img
part=$work/part.img
grub-mkimage -O i386-pc -o "$work/core.img" -p '(hd0,msdos1)/grub' -c "$work/early.cfg" \
	biosdisk part_msdos fat || exit 1
truncate -s 32M "$img" && printf 'start=2048, type=06, bootable\n' | sfdisk -q "$img" || exit 1
mkfs.fat -C -n VMMBOOT "$part" $((31 * 1024)) >/dev/null &&
	mmd -i "$part" ::grub ::grub/i386-pc &&
	mcopy -i "$part" $grubdir/*.mod $grubdir/*.lst ::grub/i386-pc/ &&
	mcopy -i "$part" "$kdir/bzImage" ::bzImage || exit 1
# partition at LBA 2048; GRUB's boot.img (440 bytes, the partition table
# stays) loads core.img from LBA 1, where its blocklist expects it
dd if="$part" of="$img" bs=512 seek=2048 conv=notrunc status=none &&
	dd if=$grubdir/boot.img of="$img" bs=440 count=1 conv=notrunc status=none &&
	dd if="$work/core.img" of="$img" bs=512 seek=1 conv=notrunc status=none || exit 1

t0=$(date +%s)
"$VMM" -m 256 -nographic -no-reboot -hda "$img" </dev/null >"$work/out" 2>"$work/err" &
pid=$!
wait_for "Command line: BOOT_IMAGE=/bzImage .*$marker"
grep -q "GRUB" "$work/out" && grep -q "Linux version" "$work/out" || {
	echo "FAIL: GRUB banner or Linux version line missing"; cat -v "$work/out"; exit 1
}
# -hda probes the image, which QEMU warns about too: that line only
if grep -v "probing guessed raw" "$work/err" | grep -q .; then
	echo "FAIL: vmm complained on stderr:"; cat "$work/err"; exit 1
fi
echo "seabios-grub: ok, GRUB started Linux in $(($(date +%s) - t0)) s"
