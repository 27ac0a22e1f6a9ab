#!/bin/sh
# seabios-syslinux.sh — Debian's SYSLINUX on the IDE disk loads the minimal
# Linux guest kernel and its initramfs from a FAT file system (made and
# filled with mtools, no mount) through SeaBIOS's int 13h; the guest must
# reach its shell and answer a command on the serial console. Needs the
# guest kernel (scripts/guest-kernel.sh builds it), hence LINUX_TESTS; a
# minute or two here, where guest ring 0 is emulated. (SYSLINUX's
# protected-mode interrupt reflectors end in IRET, which the host's KVM
# cannot emulate: vmm completes it itself, vmm/kvm_pvm_iret.c; QEMU stops there.)
set -u
VMM=${VMM:-build/vmm}
limit=${SYSLINUX_TIMEOUT:-600}
. tests/integration/seabios-guest.inc.sh
for t in syslinux mkfs.fat mcopy; do
	command -v $t >/dev/null || { echo "FAIL: $t missing (scripts/install-deps.sh check)"; exit 1; }
done
# the whole disk is one FAT file system; SYSLINUX's boot sector is its
# first sector, which SeaBIOS boots like an MBR
img=$work/disk.img
# the guest command line every Linux test shares (the host's missing
# instructions are hidden there)
append=$(cat tests/guest/linux/cmdline) || exit 1
cat >"$work/syslinux.cfg" <<CFG
SERIAL 0 115200
DEFAULT linux
PROMPT 0
TIMEOUT 0
LABEL linux
  KERNEL bzImage
  INITRD initrd
  APPEND $append
CFG
mkfs.fat -C -n VMMBOOT "$img" 16384 >/dev/null &&
	syslinux --install "$img" &&
	mcopy -i "$img" "$work/syslinux.cfg" ::syslinux.cfg &&
	mcopy -i "$img" "$kdir/bzImage" ::bzImage &&
	mcopy -i "$img" "$kdir/initramfs.cpio" ::initrd || exit 1

mkfifo "$work/in"
t0=$(date +%s)
"$VMM" -m 256 -nographic -serial stdio -monitor none -no-reboot -hda "$img" \
	<"$work/in" >"$work/out" 2>"$work/err" &
pid=$!
exec 3>"$work/in"
wait_for "SYSLINUX 6"
wait_for VMM-GUEST-READY
echo 'echo ANSWER=$((6 * 7)) $(uname -s)' >&3
wait_for "ANSWER=42 Linux"
# -hda probes the image, which QEMU warns about too: that line only
if grep -v "probing guessed raw" "$work/err" | grep -q .; then
	echo "FAIL: vmm complained on stderr:"; cat "$work/err"; exit 1
fi
echo "seabios-syslinux: ok, SYSLINUX booted Linux to its shell in $(($(date +%s) - t0)) s"
