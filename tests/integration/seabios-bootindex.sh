#!/bin/sh
# seabios-bootindex.sh — bootindex= decides which disk SeaBIOS boots, as
# libvirt's <boot order='N'/> asks: two disks whose boot sectors print
# which they are, a virtio-blk-pci (A) and an ide-hd (B), each case run
# once with A first and once with B first: on the PC (B on PIIX3's IDE),
# on q35 (A behind a pcie-root-port, B on the ich9-ahci's port 2 as
# libvirt's sata0-0-2), and with B on an -device ahci controller's port.
# vmm must boot the disk with the lower bootindex each time; QEMU boots
# the same disks in the same test as the reference. Then -boot order=dc,
# order=cd and once=d with a CD beside a disk, on the PC and on q35.
set -u
VMM=${VMM:-build/vmm}
[ -e /dev/kvm ] || { echo "SKIP: no /dev/kvm"; exit 77; }
command -v qemu-system-x86_64 >/dev/null || { echo "FAIL: no qemu-system-x86_64"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

. tests/integration/boot-sector.inc.sh
mbr "boot from A" "$work/A.img" && mbr "boot from B" "$work/B.img" || exit 1

fail=0
# the disks every check gets: A and B for -device to place
drives="-drive file=$work/A.img,format=raw,if=none,id=a -drive file=$work/B.img,format=raw,if=none,id=b"
# check WHAT WANT EMULATOR ARGS...: the emulator boots the disk WANT
check() {
	what=$1 want=$2
	shift 2
	# shellcheck disable=SC2086
	timeout 120 "$@" -m 256 -nographic -device isa-debug-exit,iobase=0xf4,iosize=4 \
		$drives </dev/null >"$work/out" 2>&1
	rc=$?
	if [ $rc -ne 33 ] || ! grep -q "boot from $want" "$work/out"; then
		echo "FAIL: $what: exit $rc, not 'boot from $want':"
		tail -c 1500 "$work/out" | cat -v
		fail=1
	else
		echo "ok   $what: boot from $want"
	fi
}
# bootcase NAME ARGS_A_FIRST ARGS_B_FIRST: each order under both emulators
bootcase() {
	for emu in vmm qemu; do
		if [ $emu = vmm ]; then set -- "$VMM"; else set -- qemu-system-x86_64 -enable-kvm -nic none; fi
		# shellcheck disable=SC2086
		check "$name $emu, A first" A "$@" $a_first
		# shellcheck disable=SC2086
		check "$name $emu, B first" B "$@" $b_first
	done
}

name=pc
a_first="-device virtio-blk-pci,drive=a,bootindex=1 -device ide-hd,drive=b,bus=ide.1,unit=0,bootindex=2"
b_first="-device virtio-blk-pci,drive=a,bootindex=2 -device ide-hd,drive=b,bus=ide.1,unit=0,bootindex=1"
bootcase

name=q35
port="-device pcie-root-port,id=pci.1,chassis=1,port=16,bus=pcie.0,addr=0x2"
a_first="-M q35 $port -device virtio-blk-pci,drive=a,bus=pci.1,bootindex=1 -device ide-hd,drive=b,bus=ide.2,bootindex=2"
b_first="-M q35 $port -device virtio-blk-pci,drive=a,bus=pci.1,bootindex=2 -device ide-hd,drive=b,bus=ide.2,bootindex=1"
bootcase

name=ahci
a_first="-device ahci,id=sata1,addr=0x6 -device virtio-blk-pci,drive=a,bootindex=1 -device ide-hd,drive=b,bus=sata1.3,bootindex=2"
b_first="-device ahci,id=sata1,addr=0x6 -device virtio-blk-pci,drive=a,bootindex=2 -device ide-hd,drive=b,bus=sata1.3,bootindex=1"
bootcase

# -boot order= and once= with a CD: disk A on IDE index 0 (q35: the
# ich9-ahci's port 0) and an El Torito CD (no emulation; its boot image
# prints "boot from C") on index 2 (q35: port 2), no bootindex: order=dc
# and once=d must boot the CD, order=cd the disk.
command -v xorriso >/dev/null || { echo "FAIL: xorriso missing (scripts/install-deps.sh check)"; exit 1; }
mbr "boot from C" "$work/C.img" || exit 1
mkdir -p "$work/iso" && cp "$work/mbr.bin" "$work/iso/boot.bin" && truncate -s 2048 "$work/iso/boot.bin"
xorriso -as mkisofs -quiet -o "$work/C.iso" -b boot.bin -no-emul-boot -boot-load-size 4 \
	"$work/iso" 2>"$work/xorriso.log" || { cat "$work/xorriso.log"; exit 1; }
# ordercase NAME WANT ARGS: under both emulators, with A and the CD as drives
drives="-drive file=$work/A.img,format=raw,if=ide,index=0 -drive file=$work/C.iso,format=raw,if=ide,index=2,media=cdrom"
ordercase() {
	name=$1 want=$2
	shift 2
	check "$name vmm" "$want" "$VMM" "$@"
	check "$name qemu" "$want" qemu-system-x86_64 -enable-kvm -nic none "$@"
}
for m in pc q35; do
	ordercase "$m -boot order=dc" C -M $m -boot order=dc
	ordercase "$m -boot order=cd" A -M $m -boot order=cd
	ordercase "$m -boot once=d" C -M $m -boot once=d
done

[ $fail -eq 0 ] && echo "seabios-bootindex: ok"
exit $fail
