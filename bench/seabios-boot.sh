#!/bin/sh
# seabios-boot.sh — time from exec to the boot sector's first instruction
# (its first `out`, to isa-debug-exit, ends the process): SeaBIOS from
# Debian on an IDE disk, vmm vs QEMU on the same image, side by side.
set -u
VMM=${VMM:-build/vmm}
RUNS=${RUNS:-5}
QEMU=${QEMU:-qemu-system-x86_64}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/mbr.S" <<'ASM'
	.code16
	.globl _start
_start:	movw $0xf4, %dx
	movb $0x10, %al
	outb %al, %dx
	hlt
	.org 510
	.byte 0x55, 0xaa
ASM
as --32 -o "$work/mbr.o" "$work/mbr.S" &&
	ld -m elf_i386 -Ttext 0 --oformat binary -o "$work/mbr.bin" "$work/mbr.o" || exit 1
dd if=/dev/zero of="$work/disk.img" bs=1M count=4 status=none
dd if="$work/mbr.bin" of="$work/disk.img" conv=notrunc status=none

# median wall time in ms of RUNS runs of "$@"; each must exit 33
median_ms() {
	i=0
	: >"$work/t"
	while [ $i -lt "$RUNS" ]; do
		s=$(date +%s%N)
		timeout 120 "$@" </dev/null >/dev/null 2>&1
		rc=$?
		e=$(date +%s%N)
		[ $rc -eq 33 ] || { echo "run failed (exit $rc): $*" >&2; return 1; }
		echo $(((e - s) / 1000000)) >>"$work/t"
		i=$((i + 1))
	done
	sort -n "$work/t" | sed -n "$(((RUNS + 1) / 2))p"
}

common="-m 512 -nographic -device isa-debug-exit,iobase=0xf4,iosize=4"
# shellcheck disable=SC2086
q=$(median_ms "$QEMU" -enable-kvm $common -drive file="$work/disk.img",format=raw,if=ide) || exit 1
# shellcheck disable=SC2086
v=$(median_ms "$VMM" $common -hda "$work/disk.img") || exit 1
echo "seabios-boot: vmm ${v} ms, qemu ${q} ms (median of $RUNS)"
awk -v v="$v" -v q="$q" 'BEGIN { printf "seabios-boot: ratio vmm/qemu = %.2f (goal <= 0.80)\n", v / q }'
