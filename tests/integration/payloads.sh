#!/bin/sh
# payloads.sh — run every guest payload under $VMM and check output and exit
# status (isa-debug-exit: status = (code << 1) | 1, so 1 means success).
# Skips (77) only when /dev/kvm is absent.
set -u
B=${B:-build}
VMM=${VMM:-$B/vmm}
G=$B/tests/guest
if [ ! -e /dev/kvm ]; then
	echo "no /dev/kvm on this host"
	exit 77
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fails=0

# run NAME EXPECTED_STATUS PATTERN ARGS...: PATTERN is an extended regexp
# every line of which must appear in the output.
run() {
	name=$1 want=$2 pattern=$3
	shift 3
	timeout 120 "$VMM" -m 64 -nographic -device isa-debug-exit,iobase=0xf4,iosize=4 "$@" \
		>"$out" 2>&1 </dev/null
	rc=$?
	if [ "$rc" -ne "$want" ] || ! grep -Eq "$pattern" "$out"; then
		echo "FAIL $name: status $rc (want $want), output:"
		tail -n 20 "$out"
		fails=$((fails + 1))
	else
		echo "ok   $name"
	fi
}

run hello 1 'hello from guest' -kernel "$G/hello.elf"
run pio-loop 1 'pio-loop: done 1000 exits' -kernel "$G/pio-loop.elf" -append n=1000
run mmio-loop 1 'mmio-loop: done 1000 exits' -kernel "$G/mmio-loop.elf" -append n=1000
run smp 1 'smp: 4 of 4 cpus checked in' -smp 4 -kernel "$G/smp.elf"
run irq 1 'irq: all interrupts as expected' -kernel "$G/irq.elf"
run irq-x2apic 1 'irq: all interrupts as expected' -kernel "$G/irq.elf" -append x2apic=1
run smp-ipi 1 'smp: ipi round trips: 15 answered, 0 missing' -smp 4 -kernel "$G/smp.elf" -append ipi=5

# A guest hammering unclaimed ports and MMIO: reads are all-ones, the VMM
# keeps running, and each address is logged once however often it is hit.
run unclaimed 1 'unclaimed: 100 rounds, all reads as expected' -kernel "$G/unclaimed.elf"
for a in 'io address 0x100 ' 'io address 0x240 ' 'io address 0x2f0 ' 'io address 0x3e0 ' \
	'memory address 0xd0000000 ' 'memory address 0xd0001000 ' 'memory address 0xdffffffc '; do
	c=$(grep -c "unclaimed $a" "$out")
	[ "$c" -eq 1 ] || { echo "FAIL unclaimed: '$a' logged $c times, want once"; fails=$((fails + 1)); }
done
[ "$fails" -eq 0 ]
