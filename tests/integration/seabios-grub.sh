#!/bin/sh
# seabios-grub.sh — a real bootloader from a Debian package on the IDE
# disk: GRUB (grub-pc-bin) in the MBR and the gap after it, the minimal
# Linux guest kernel on a FAT partition, loaded by GRUB through SeaBIOS's
# int 13h. Passes when the kernel prints its early boot text with the
# command line GRUB handed it. Needs the cached guest kernel
# (scripts/guest-kernel.sh), hence LINUX_TESTS; GRUB's LZMA core and file
# loading run in emulated ring 0 here, so this takes one or two minutes.
# seabios-syslinux.sh does the same with SYSLINUX, up to the shell.
set -u
VMM=${VMM:-build/vmm}
limit=${GRUB_TIMEOUT:-400}
[ -e /dev/kvm ] || { echo "SKIP: no /dev/kvm"; exit 77; }
# GUEST_KERNEL_DIR: a folder with a bzImage, instead of the cached build
kdir=${GUEST_KERNEL_DIR:-$(sh scripts/guest-kernel.sh --path)} || {
	echo "SKIP: the guest kernel is not built; run scripts/guest-kernel.sh (make check-linux does)"
	exit 77
}
grubdir=/usr/lib/grub/i386-pc
for t in grub-mkimage sfdisk mkfs.fat mcopy mmd; do
	command -v $t >/dev/null || { echo "FAIL: $t missing (scripts/install-deps.sh check)"; exit 1; }
done
[ -f $grubdir/boot.img ] || { echo "FAIL: $grubdir/boot.img missing (grub-pc-bin)"; exit 1; }
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$work"' EXIT

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
while ! grep -q "Command line: BOOT_IMAGE=/bzImage .*$marker" "$work/out"; do
	if ! kill -0 $pid 2>/dev/null; then
		echo "FAIL: vmm exited before the kernel's command line appeared"
		tail -c 2000 "$work/out" | cat -v; cat "$work/err"; exit 1
	fi
	if [ $(($(date +%s) - t0)) -ge "$limit" ]; then
		echo "FAIL: no kernel boot text in ${limit}s"; tail -c 2000 "$work/out" | cat -v; exit 1
	fi
	sleep 1
done
grep -q "GRUB" "$work/out" && grep -q "Linux version" "$work/out" || {
	echo "FAIL: GRUB banner or Linux version line missing"; cat -v "$work/out"; exit 1
}
echo "seabios-grub: ok, GRUB started Linux in $(($(date +%s) - t0)) s"
