#!/bin/sh
# seabios-ide-irqchip.sh — SeaBIOS boots an IDE disk under each
# -machine kernel_irqchip mode (on, split, off; -smp 2, so SeaBIOS's
# INIT/SIPI CPU count runs too). The boot sector SeaBIOS loads from the
# IDE disk (tests/images/ide-irq-mbr.S) proves three things, a line each:
#   int13 ok  SeaBIOS's own IDE driver reads sector 1 (INT 13h) correctly;
#   irq14 ok  the disk's interrupt reaches the guest: it clears nIEN, issues
#             READ SECTORS on the primary channel itself and sleeps (sti;
#             hlt) until its IRQ 14 handler (vector 0x76, through the PIC
#             and the BSP's LINT0 in virtual wire mode) runs, then reads
#             sector 2 from the data port;
#   timer ok  the PIT's IRQ 0 keeps SeaBIOS's tick count (0x46c) going;
# then exits through isa-debug-exit (status 33). A missing IRQ 14 prints
# "irq14 FAIL" after ~3 s of ticks; a missing timer never gets there.
# The same image under QEMU in the same mode, when installed, must print
# the same three lines.
# needs: native ring 0 (kvm_pvm's in-kernel PIC lost IRQ 14 with `on` in 5
# of 6 runs under vmm and 4 of 6 under QEMU, -smp 1 too; the nested runner's is sound)
set -u
VMM=${VMM:-build/vmm}
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

as --32 -o "$work/mbr.o" tests/images/ide-irq-mbr.S &&
	ld -m elf_i386 -Ttext 0x7c00 --oformat binary -o "$work/mbr.bin" "$work/mbr.o" ||
	{ echo "FAIL: cannot assemble the boot sector"; exit 1; }
img=$work/disk.img
dd if=/dev/zero of="$img" bs=1M count=4 status=none
dd if="$work/mbr.bin" of="$img" conv=notrunc status=none
printf 'IDE2' | dd of="$img" bs=512 seek=1 conv=notrunc status=none
printf 'IDE3' | dd of="$img" bs=512 seek=2 conv=notrunc status=none

# the boot sector's three lines, in order, and nothing failed
payload_ok() {
	grep -aoE '(int13|irq14|timer) (ok|FAIL)' "$1" | tr '\n' ' ' |
		grep -qx 'int13 ok irq14 ok timer ok '
}

fail=0
for mode in on split off; do
	timeout -k 5 120 "$VMM" -machine kernel_irqchip=$mode -m 64 -smp 2 -nographic \
		-device isa-debug-exit,iobase=0xf4,iosize=4 -hda "$img" </dev/null >"$work/out" 2>&1
	rc=$?
	if [ $rc -eq 33 ] && payload_ok "$work/out"; then
		echo "ok   SeaBIOS boots the IDE disk, IRQ 14 and IRQ 0 arrive (kernel_irqchip=$mode)"
	else
		echo "FAIL: kernel_irqchip=$mode: exit $rc, output:"
		tail -c 2000 "$work/out" | cat -v
		fail=1
	fi
	command -v qemu-system-x86_64 >/dev/null || continue
	# QEMU 7.2's off aborts without kvm-asyncpf-int=off and hangs with
	# -smp 2 on some hosts (kvm_pvm), so one vCPU there; arch-capabilities:
	# see core-smp.sh
	cpu=host,-arch-capabilities smp=2
	[ $mode = off ] && cpu=host,-arch-capabilities,kvm-asyncpf-int=off smp=1
	timeout -k 5 120 qemu-system-x86_64 -enable-kvm -machine pc,kernel_irqchip=$mode -cpu $cpu \
		-nic none -m 64 -smp $smp -nographic -device isa-debug-exit,iobase=0xf4,iosize=4 \
		-drive file="$img",format=raw,if=ide </dev/null >"$work/qemu.out" 2>&1
	qrc=$?
	if [ $qrc -ne 33 ] || ! payload_ok "$work/qemu.out"; then
		echo "FAIL: the boot sector under QEMU (kernel_irqchip=$mode): exit $qrc"
		tail -c 2000 "$work/qemu.out" | cat -v
		fail=1
	fi
done
exit $fail
