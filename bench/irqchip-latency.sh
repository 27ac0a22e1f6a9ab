#!/bin/sh
# irqchip-latency.sh [RUNS] — interrupt delivery latency per
# -machine kernel_irqchip mode (on, split, off): irq.elf measures in the
# guest, with the TSC, a self IPI (ICR write -> handler, median of 15) and
# a device interrupt (COM1 raising its level-triggered I/O APIC line ->
# handler). vmm and qemu-system-x86_64 -accel kvm alternate run by run in
# the same mode (RUNS each, default 5); prints the medians and vmm/QEMU.
# Goal: each mode within 1.1x QEMU's latency. QEMU's kernel_irqchip=off
# needs kvm-asyncpf-int=off on hosts whose KVM advertises it (as vmm does
# by itself).
set -u
B=${B:-build}
VMM=${VMM:-$B/vmm}
ELF=$B/tests/guest/irq.elf
RUNS=${1:-5}
[ -e /dev/kvm ] || { echo "skipped: no /dev/kvm"; exit 77; }
command -v qemu-system-x86_64 >/dev/null || { echo "skipped: no qemu-system-x86_64"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# one KIND MODE: run once, append "ipi dev" (cycles) to $tmp/KIND-MODE
one() {
	kind=$1 mode=$2
	if [ "$kind" = vmm ]; then
		timeout 120 "$VMM" -machine kernel_irqchip=$mode -m 64 -nographic \
			-device isa-debug-exit,iobase=0xf4,iosize=4 -kernel "$ELF" </dev/null >"$tmp/out" 2>&1
	else
		cpu=host
		[ "$mode" = off ] && cpu=host,kvm-asyncpf-int=off
		timeout 120 qemu-system-x86_64 -accel kvm -machine pc,kernel_irqchip=$mode -cpu $cpu \
			-m 64 -nographic -no-reboot -device isa-debug-exit,iobase=0xf4,iosize=4 \
			-kernel "$ELF" </dev/null >"$tmp/out" 2>&1
	fi
	sed -n 's/^irq: latency self-IPI \([0-9]*\) cycles, device line \([0-9]*\) cycles.*/\1 \2/p' \
		"$tmp/out" >>"$tmp/$kind-$mode"
	grep -q 'irq: all interrupts as expected' "$tmp/out" || echo "  ($kind $mode: a check failed)"
}

median() { # FILE COLUMN
	cut -d' ' -f"$2" "$1" | sort -n | awk '{v[NR]=$1} END {print NR ? v[int((NR+1)/2)] : 0}'
}

printf '%-6s %14s %14s %7s %14s %14s %7s\n' mode "vmm IPI" "QEMU IPI" ratio "vmm device" \
	"QEMU device" ratio
for mode in on split off; do
	: >"$tmp/vmm-$mode"
	: >"$tmp/qemu-$mode"
	i=0
	while [ "$i" -lt "$RUNS" ]; do
		one vmm $mode
		one qemu $mode
		i=$((i + 1))
	done
	vi=$(median "$tmp/vmm-$mode" 1) qi=$(median "$tmp/qemu-$mode" 1)
	vd=$(median "$tmp/vmm-$mode" 2) qd=$(median "$tmp/qemu-$mode" 2)
	printf '%-6s %14s %14s %7s %14s %14s %7s\n' $mode "$vi" "$qi" \
		"$(awk "BEGIN {printf \"%.2f\", $qi ? $vi / $qi : 0}")" "$vd" "$qd" \
		"$(awk "BEGIN {printf \"%.2f\", $qd ? $vd / $qd : 0}")"
done
