#!/bin/sh
# irqchip-latency.sh [RUNS] — interrupt delivery latency per
# -machine kernel_irqchip mode (on, split, off): irq.elf measures in the
# guest, with the TSC, a self IPI (ICR write -> handler, median of 15) and
# a device interrupt (COM1 raising its level-triggered I/O APIC line ->
# handler); smp.elf ipi=20 -smp 2 the IPI round trip between two vCPUs
# (BSP's fixed IPI -> the AP's handler answers with one -> the BSP's
# handler, median of 20). vmm and qemu-system-x86_64 -accel kvm alternate
# run by run in the same mode (RUNS each, default 5); prints the medians
# and vmm/QEMU (0 where a side printed no figure).
# Goal: each mode within 1.1x QEMU's latency. QEMU's kernel_irqchip=off
# needs kvm-asyncpf-int=off on hosts whose KVM advertises it (as vmm does
# by itself).
set -u
B=${B:-build}
VMM=${VMM:-$B/vmm}
ELF=$B/tests/guest/irq.elf
SMP=$B/tests/guest/smp.elf
RUNS=${1:-5}
[ -e /dev/kvm ] || { echo "skipped: no /dev/kvm"; exit 77; }
command -v qemu-system-x86_64 >/dev/null || { echo "skipped: no qemu-system-x86_64"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# guest KIND MODE LIMIT ARGS...: irq.elf or smp.elf under vmm or QEMU for
# at most LIMIT seconds, output in $tmp/out
guest() {
	kind=$1 mode=$2 limit=$3
	shift 3
	if [ "$kind" = vmm ]; then
		timeout -k 5 $limit "$VMM" -machine kernel_irqchip=$mode -m 64 -nographic \
			-device isa-debug-exit,iobase=0xf4,iosize=4 "$@" </dev/null >"$tmp/out" 2>&1
	else
		cpu=host
		[ "$mode" = off ] && cpu=host,kvm-asyncpf-int=off
		timeout -k 5 $limit qemu-system-x86_64 -accel kvm -machine pc,kernel_irqchip=$mode -cpu $cpu \
			-m 64 -nographic -no-reboot -device isa-debug-exit,iobase=0xf4,iosize=4 \
			"$@" </dev/null >"$tmp/out" 2>&1
	fi
}

# one KIND MODE: run once, append "ipi dev roundtrip" (cycles) to $tmp/KIND-MODE
one() {
	kind=$1 mode=$2
	guest "$kind" "$mode" 120 -kernel "$ELF"
	lat=$(sed -n 's/^irq: latency self-IPI \([0-9]*\) cycles, device line \([0-9]*\) cycles.*/\1 \2/p' \
		"$tmp/out")
	grep -q 'irq: all interrupts as expected' "$tmp/out" || echo "  ($kind $mode: a check failed)"
	# QEMU 7.2's kernel_irqchip=off hangs with -smp 2 on some hosts
	# (kvm_pvm): after one such run, no more
	rt=
	if [ ! -e "$tmp/no-rt-$kind-$mode" ]; then
		guest "$kind" "$mode" 60 -smp 2 -kernel "$SMP" -append ipi=20
		rt=$(sed -n 's/^smp: ipi round trips: 20 answered, 0 missing, median \([0-9]*\) cycles.*/\1/p' \
			"$tmp/out")
		[ -n "$rt" ] || { echo "  ($kind $mode: no IPI round trip figure)"; : >"$tmp/no-rt-$kind-$mode"; }
	fi
	echo "${lat:-0 0} ${rt:-0}" >>"$tmp/$kind-$mode"
}

median() { # FILE COLUMN (zeros: no figure)
	cut -d' ' -f"$2" "$1" | grep -vx 0 | sort -n | awk '{v[NR]=$1} END {print NR ? v[int((NR+1)/2)] : 0}'
}
ratio() { awk "BEGIN {printf \"%.2f\", $2 ? $1 / $2 : 0}"; }

printf '%-6s %10s %10s %6s %10s %10s %6s %10s %10s %6s\n' mode "vmm IPI" "QEMU IPI" ratio \
	"vmm dev" "QEMU dev" ratio "vmm RT" "QEMU RT" ratio
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
	vr=$(median "$tmp/vmm-$mode" 3) qr=$(median "$tmp/qemu-$mode" 3)
	printf '%-6s %10s %10s %6s %10s %10s %6s %10s %10s %6s\n' $mode "$vi" "$qi" "$(ratio "$vi" "$qi")" \
		"$vd" "$qd" "$(ratio "$vd" "$qd")" "$vr" "$qr" "$(ratio "$vr" "$qr")"
done
