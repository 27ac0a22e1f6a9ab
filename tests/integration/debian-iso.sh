#!/bin/sh
# debian-iso.sh — an installer-style ISO: Debian's xorriso and ISOLINUX make
# an isohybrid El Torito image holding Debian's packaged kernel and a small
# busybox initramfs with that kernel's ata_piix, sr_mod, cdrom and isofs
# modules (scripts/lib/debian-kernel.sh), booted as `vmm -m 512 -cdrom
# x.iso -boot d`. SeaBIOS boots ISOLINUX from the ATAPI drive, ISOLINUX
# loads the kernel and initramfs from the ISO 9660 file system, and the
# guest mounts its own medium (/dev/sr0) to read a marker file that only
# the ISO holds, then powers off (ACPI S5: vmm exits 0). QEMU boots the same
# ISO first, as the reference. (cdrom-boot.sh covers ISOLINUX alone,
# linux-cdrom.sh a directly booted kernel reading a CD; this is Linux
# booted from the CD it reads.)
# needs: native ring 0 (Linux guest; scripts/nested-kvm/place.sh)
set -u
VMM=${VMM:-build/vmm}
limit=${DEBIAN_ISO_TIMEOUT:-900}
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
for t in xorriso busybox cpio qemu-system-x86_64; do
	command -v $t >/dev/null || { echo "FAIL: $t missing (scripts/install-deps.sh check)"; exit 1; }
done
isolinux=/usr/lib/ISOLINUX
mods=/usr/lib/syslinux/modules/bios
[ -r $isolinux/isolinux.bin ] && [ -r $isolinux/isohdpfx.bin ] && [ -r $mods/ldlinux.c32 ] ||
	{ echo "FAIL: isolinux missing (scripts/install-deps.sh check)"; exit 1; }
say() { echo "debian-iso: $*"; }
die() { echo "FAIL: $*"; exit 1; }
. scripts/lib/debian-kernel.sh
. tests/integration/wait-output.inc.sh
kver=$(debian_kver) || exit 1
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$work"' EXIT

# The initramfs: load the CD-ROM drivers, mount the boot medium, print the
# marker, power off.
root=$work/initramfs
mkdir -p "$root/bin" "$root/proc" "$root/sys" "$root/dev" "$root/mnt"
debian_modules "$kver" "$root" ata_piix sr_mod cdrom isofs
cp "$(command -v busybox)" "$root/bin/busybox"
cat >"$root/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in $(cat /modules.order); do insmod "/lib/modules/$m.ko"; done
n=0
while [ ! -b /dev/sr0 ] && [ $n -lt 60 ]; do sleep 1; n=$((n + 1)); done
if mount -t iso9660 -o ro /dev/sr0 /mnt; then
	echo "ISO-MARKER: $(cat /mnt/marker.txt)"
	umount /mnt
else
	echo "ISO-MOUNT-FAILED"
fi
poweroff -f
EOF
chmod 755 "$root/init"
mkdir -p "$work/iso/isolinux" "$work/iso/boot"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$work/iso/boot/initrd.gz" || exit 1
cp "/boot/vmlinuz-$kver" "$work/iso/boot/vmlinuz"
cp $isolinux/isolinux.bin $mods/ldlinux.c32 "$work/iso/isolinux/"
printf 'SERIAL 0 115200\nDEFAULT live\nPROMPT 0\nTIMEOUT 0\nLABEL live\n  KERNEL /boot/vmlinuz\n  INITRD /boot/initrd.gz\n  APPEND console=ttyS0 panic=-1\n' \
	>"$work/iso/isolinux/isolinux.cfg"
mark="VMM-ISO-$$-$(date +%s)"
echo "$mark" >"$work/iso/marker.txt"
xorriso -as mkisofs -quiet -o "$work/x.iso" -isohybrid-mbr $isolinux/isohdpfx.bin \
	-b isolinux/isolinux.bin -c isolinux/boot.cat -no-emul-boot -boot-load-size 4 \
	-boot-info-table -V VMM_DEBIAN_ISO "$work/iso" 2>"$work/xorriso.log" || {
	cat "$work/xorriso.log"; exit 1
}

# run SIDE COMMAND...: boot the ISO; the marker must come from the medium
# and the guest's power-off end the process with status 0.
run() {
	side=$1
	shift
	t0=$(date +%s)
	"$@" -m 512 -cdrom "$work/x.iso" -boot d -nographic -serial file:"$work/out" -monitor none \
		</dev/null >/dev/null 2>"$work/err" &
	pid=$!
	wait_exit "$pid" "$limit" || {
		echo "FAIL: $side: no power-off in ${limit}s"; tail -c 3000 "$work/out" | cat -v; exit 1
	}
	wait $pid
	status=$?
	pid=
	grep -aq "^ISO-MARKER: $mark" "$work/out" || {
		echo "FAIL: $side: the guest did not read the marker from its medium"
		tail -c 3000 "$work/out" | cat -v; cat "$work/err"; exit 1
	}
	[ $status -eq 0 ] || { echo "FAIL: $side exited with status $status"; cat "$work/err"; exit 1; }
	secs=$(($(date +%s) - t0))
	say "$side: booted from the ISO, read its marker, powered off in $secs s"
}

cpu=
# KVMs that emulate guest ring 0 (kvm_pvm) need the conservative CPU model.
[ ! -d /sys/module/kvm_pvm ] || cpu="-cpu qemu64,-smap,-smep,-xsave,-popcnt"
# shellcheck disable=SC2086
run qemu qemu-system-x86_64 -enable-kvm $cpu
qemu_s=$secs
run vmm "$VMM"
if grep -v '^vmm: guest \(read\|wrote\) unclaimed io address \|probing guessed' "$work/err" | grep -q .; then
	echo "FAIL: vmm complained on stderr:"; cat "$work/err"; exit 1
fi
say "vmm $secs s, QEMU $qemu_s s"
say ok
