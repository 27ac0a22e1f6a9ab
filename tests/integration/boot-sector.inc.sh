# boot-sector.inc.sh — sourced by the SeaBIOS boot tests: mbr MESSAGE
# IMAGE writes a 4 MiB IMAGE whose boot sector prints MESSAGE on COM1,
# then exits through isa-debug-exit (iobase 0xf4) with 0x10 (status 33).
# Needs $work (a scratch folder) and binutils.
mbr() {
	cat >"$work/mbr.S" <<ASM
	.code16
	.globl _start
_start:
	cli
	xorw %ax, %ax
	movw %ax, %ds
	movw \$msg - _start + 0x7c00, %si
1:	lodsb
	testb %al, %al
	jz 2f
	movw \$0x3f8, %dx
	outb %al, %dx
	jmp 1b
2:	movw \$0xf4, %dx
	movb \$0x10, %al
	outb %al, %dx
	hlt
msg:	.asciz "$1\n"
	.org 510
	.byte 0x55, 0xaa
ASM
	as --32 -o "$work/mbr.o" "$work/mbr.S" &&
		ld -m elf_i386 -Ttext 0 --oformat binary -o "$work/mbr.bin" "$work/mbr.o" || exit 1
	dd if=/dev/zero of="$2" bs=1M count=4 status=none
	dd if="$work/mbr.bin" of="$2" conv=notrunc status=none
}
