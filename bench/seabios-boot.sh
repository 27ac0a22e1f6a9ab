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

# wall time in ms of one run of "$@", which must exit 33
run_ms() {
	s=$(date +%s%N)
	timeout 120 "$@" </dev/null >/dev/null 2>&1
	rc=$?
	e=$(date +%s%N)
	[ $rc -eq 33 ] || { echo "run failed (exit $rc): $*" >&2; return 1; }
	echo $(((e - s) / 1000000))
}

median() {
	sort -n "$1" | sed -n "$(((RUNS + 1) / 2))p"
}

# QEMU and vmm alternate, so both see the same host load
common="-m 512 -nographic -device isa-debug-exit,iobase=0xf4,iosize=4"
: >"$work/q"
: >"$work/v"
i=0
while [ $i -lt "$RUNS" ]; do
	# shellcheck disable=SC2086
	run_ms "$QEMU" -enable-kvm $common -drive file="$work/disk.img",format=raw,if=ide >>"$work/q" ||
		exit 1
	# shellcheck disable=SC2086
	run_ms "$VMM" $common -hda "$work/disk.img" >>"$work/v" || exit 1
	i=$((i + 1))
done
q=$(median "$work/q")
v=$(median "$work/v")
echo "seabios-boot: vmm runs (ms): $(tr '\n' ' ' <"$work/v")"
echo "seabios-boot: qemu runs (ms): $(tr '\n' ' ' <"$work/q")"
echo "seabios-boot: vmm ${v} ms, qemu ${q} ms (median of $RUNS, interleaved)"
awk -v v="$v" -v q="$q" 'BEGIN { printf "seabios-boot: ratio vmm/qemu = %.2f (goal <= 0.80)\n", v / q }'
