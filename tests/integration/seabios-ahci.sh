#!/bin/sh
# seabios-ahci.sh — SeaBIOS boots from a disk on the ICH9 AHCI controller
# (-device ahci + ide-hd on the PC, no IDE disk; and -M q35 -hda, the
# disk on port 0 of q35's own AHCI at 00:1f.2, and on its ports 5 and 4
# through index=5 and bus=ide.4): the boot sector reads its second
# sector through INT 13h (SeaBIOS's AHCI driver: IDENTIFY, READ DMA EXT
# through a PRDT), prints the text there to COM1 and exits through
# isa-debug-exit. SeaBIOS's own log must show it found the disk on AHCI.
# QEMU boots the same image the same way, as the reference: same output,
# same exit status.
set -u
VMM=${VMM:-build/vmm}
[ -e /dev/kvm ] || { echo "SKIP: no /dev/kvm"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/mbr.S" <<'ASM'
	.code16
	.globl _start
_start:
	cli
	xorw %ax, %ax
	movw %ax, %ds
	movw %ax, %es
	movw $0x8000, %bx	/* INT 13h AH=02: 1 sector, C0 H0 S2, to 0:8000 */
	movw $0x0201, %ax
	movw $0x0002, %cx
	movb $0x00, %dh
	int $0x13
	jc 3f
	movw $0x8000, %si
1:	lodsb
	testb %al, %al
	jz 2f
	movw $0x3f8, %dx
	outb %al, %dx
	jmp 1b
2:	movw $0xf4, %dx
	movb $0x10, %al
	outb %al, %dx
	hlt
3:	movw $0xf4, %dx
	movb $0x20, %al
	outb %al, %dx
	hlt
	.org 510
	.byte 0x55, 0xaa
	.asciz "sector 1 read over AHCI\n"
	.org 1024
ASM
as --32 -o "$work/mbr.o" "$work/mbr.S" &&
	ld -m elf_i386 -Ttext 0 --oformat binary -o "$work/mbr.bin" "$work/mbr.o" || exit 1
img=$work/disk.img
dd if=/dev/zero of="$img" bs=1M count=4 status=none
dd if="$work/mbr.bin" of="$img" conv=notrunc status=none
. tests/integration/seabios-serial.inc.sh
fail=0

# boot NAME PORT ARGS...: SeaBIOS must find the disk on AHCI port PORT;
# QEMU with the same arguments gives the same output and exit status.
boot() {
	name=$1 port=$2
	shift 2
	out=$(timeout 60 "$VMM" -m 512 -nographic -device isa-debug-exit,iobase=0xf4,iosize=4 \
		-debugcon file:"$work/dbg.log" "$@" </dev/null 2>"$work/err"); rc=$?
	case "$(unflushed "$out")" in *"Booting from Hard Disk..sector 1 read over AHCI") ok=1 ;; *) ok=0 ;; esac
	if [ $ok -ne 1 ] || [ $rc -ne 33 ]; then
		echo "FAIL: $name: AHCI boot: exit $rc, output '$out'"; cat "$work/err"
		tail -20 "$work/dbg.log"; fail=1
	fi
	grep -q "AHCI/$port: registering" "$work/dbg.log" ||
		{ echo "FAIL: $name: SeaBIOS did not register the disk on AHCI port $port:"
		grep -i ahci "$work/dbg.log"; fail=1; }
	command -v qemu-system-x86_64 >/dev/null ||
		{ echo "FAIL: no qemu-system-x86_64 for the reference run (scripts/install-deps.sh check)"; exit 1; }
	timeout 120 qemu-system-x86_64 -enable-kvm -nic none -m 512 -nographic \
		-device isa-debug-exit,iobase=0xf4,iosize=4 "$@" </dev/null >"$work/qemu.out" 2>/dev/null
	qrc=$?
	if [ $qrc -ne $rc ] || [ "$(unflushed "$(cat "$work/qemu.out")")" != "$(unflushed "$out")" ]; then
		echo "FAIL: $name: QEMU exit $qrc, serial output differs:"; cat -v "$work/qemu.out"
		echo "vmm's:"; printf '%s\n' "$out" | cat -v; fail=1
	fi
	[ $fail -eq 0 ] && echo "seabios-ahci: $name ok"
}

boot pc 2 -device ahci,id=sata0 -drive if=none,id=d0,format=raw,file="$img" \
	-device ide-hd,drive=d0,bus=sata0.2
boot q35 0 -M q35 -drive file="$img",format=raw,if=ide,index=0
# q35's AHCI has six ports: index 5 is the last, and libvirt's sata0-0-4
# is bus=ide.4 (the PC's IDE stops at index 3)
boot q35-index5 5 -M q35 -drive file="$img",format=raw,if=ide,index=5
boot q35-ide4 4 -M q35 -drive if=none,id=d0,format=raw,file="$img" -device ide-hd,drive=d0,bus=ide.4
[ $fail -eq 0 ] && echo "seabios-ahci: ok"
exit $fail
