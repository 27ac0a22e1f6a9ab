#!/bin/sh
# seabios-q35.sh — SeaBIOS boots -M q35 (and pc-q35-7.2, virt-install's
# name) from a virtio-blk disk. The boot sector prints the chipset
# registers SeaBIOS programmed, through 0xcf8/0xcfc: the MCH's PCIEXBAR
# (the ECAM window at 0xb0000000, enabled), the ICH9 LPC bridge's PMBASE,
# ACPI_CNTL, PIRQA-D and PIRQE-H routing and RCBA, and the SMBus
# controller's SMB_BASE and HOSTC; then whether the ACPI PM timer at
# PMBASE + 8 runs. Once with the disk on pcie.0, once behind a
# pcie-root-port (SeaBIOS numbers its bus and boots through it). QEMU
# boots the same disk the same ways as the reference: the same lines.
set -u
VMM=${VMM:-build/vmm}
[ -e /dev/kvm ] || { echo "skipped: no /dev/kvm"; exit 77; }
work=$(mktemp -d /var/tmp/seabios-q35.XXXXXX)
trap 'rm -rf "$work"' EXIT

. tests/integration/seabios-serial.inc.sh

cat >"$work/mbr.S" <<'ASM'
	.code16
	.globl _start
_start:
	cli
	xorw %ax, %ax
	movw %ax, %ds
	movw $regs - _start + 0x7c00, %si
1:	lodsl
	testl %eax, %eax
	jz 2f
	movw $0xcf8, %dx
	outl %eax, %dx
	movw $0xcfc, %dx
	inl %dx, %eax
	call hex32
	movb $' ', %al
	call putc
	jmp 1b
2:	movw $0x608, %dx	/* the PM timer, where SeaBIOS put PMBASE */
	inl %dx, %eax
	movl %eax, %ebx
	movw $0x2000, %cx
3:	inl %dx, %eax
	cmpl %eax, %ebx
	jne 4f
	loop 3b
	movb $'=', %al		/* stopped */
	jmp 5f
4:	movb $'+', %al		/* running */
5:	call putc
	movb $'\n', %al
	call putc
	movw $0xf4, %dx
	movb $0x10, %al
	outb %al, %dx
	hlt
putc:	movw $0x3f8, %dx
	outb %al, %dx
	ret
hex32:	movl %eax, %ebx
	movw $8, %cx
6:	roll $4, %ebx
	movb %bl, %al
	andb $0xf, %al
	addb $'0', %al
	cmpb $'9', %al
	jbe 7f
	addb $'a' - '9' - 1, %al
7:	call putc
	loop 6b
	ret
regs:	.long 0x80000060	/* MCH PCIEXBAR */
	.long 0x8000f840	/* LPC PMBASE */
	.long 0x8000f844	/* LPC ACPI_CNTL */
	.long 0x8000f860	/* LPC PIRQA-D */
	.long 0x8000f868	/* LPC PIRQE-H */
	.long 0x8000f8f0	/* LPC RCBA */
	.long 0x8000fb20	/* SMBus SMB_BASE */
	.long 0x8000fb40	/* SMBus HOSTC */
	.long 0x80001018	/* 00:02.0 bus numbers (a root port) */
	.long 0
	.org 510
	.byte 0x55, 0xaa
ASM
as --32 -o "$work/mbr.o" "$work/mbr.S" &&
	ld -m elf_i386 -Ttext 0 --oformat binary -o "$work/mbr.bin" "$work/mbr.o" || exit 1
dd if=/dev/zero of="$work/disk.img" bs=1M count=4 status=none
dd if="$work/mbr.bin" of="$work/disk.img" conv=notrunc status=none

# Without a root port 00:02.0 is the disk (the first free slot, in QEMU
# as in vmm; its BAR2 reads 0); behind one (as libvirt writes it) SeaBIOS
# numbers the port's buses: primary 0, secondary and subordinate 1.
common="b0000001 00000601 00000080 0b0b0a0a 0b0b0a0a fed1c001 00000701 00000001"
port='{"driver":"pcie-root-port","port":16,"chassis":1,"id":"pci.1","bus":"pcie.0","multifunction":true,"addr":"0x2"}'
fail=0
# boot NAME WANT EMULATOR ARGS...: the boot sector's last line must end in WANT
boot() {
	name=$1 want=$2
	shift 2
	out=$(timeout 120 "$@" -m 512 -nographic -device isa-debug-exit,iobase=0xf4,iosize=4 \
		</dev/null 2>"$work/err")
	rc=$?
	case "$(unflushed "$out")" in
	*"$want") ;;
	*) echo "FAIL: $name: exit $rc, output:"; printf '%s\n' "$out" | cat -v
	   cat "$work/err"; fail=1; return 1 ;;
	esac
	[ $rc -eq 33 ] || { echo "FAIL: $name: exit $rc"; fail=1; return 1; }
	echo "ok   $name: $(printf '%s' "$out" | tail -n 1)"
}
command -v qemu-system-x86_64 >/dev/null ||
	{ echo "FAIL: no qemu-system-x86_64 for the reference run"; exit 1; }
qemu="qemu-system-x86_64 -enable-kvm -nic none"
for emu in vmm qemu; do
	[ $emu = vmm ] && e=$VMM || e=$qemu
	# shellcheck disable=SC2086
	boot "$emu -M q35, disk on pcie.0" "$common 00000000 +" $e -M q35 \
		-drive file="$work/disk.img",format=raw,if=virtio
	# shellcheck disable=SC2086
	boot "$emu -M pc-q35-7.2, disk behind a root port" "$common 00010100 +" $e -M pc-q35-7.2 \
		-device "$port" -drive file="$work/disk.img",format=raw,if=none,id=d0 \
		-device '{"driver":"virtio-blk-pci","bus":"pci.1","addr":"0x0","drive":"d0"}'
done
[ $fail -eq 0 ]
