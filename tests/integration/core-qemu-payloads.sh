#!/bin/sh
# core-qemu-payloads.sh — the guest payloads are plain multiboot kernels:
# each must also run under qemu-system-x86_64 -enable-kvm -kernel with the
# same output and exit status as under build/vmm (payloads.sh). Skips (77)
# only without /dev/kvm or without QEMU.
set -u
B=${B:-build}
G=$B/tests/guest
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
command -v qemu-system-x86_64 >/dev/null || { echo "skipped: no qemu-system-x86_64"; exit 77; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fails=0

# run NAME PATTERN ARGS...: status 1 and PATTERN (extended regexp) in the output.
run() {
	name=$1 pattern=$2
	shift 2
	timeout 120 qemu-system-x86_64 -enable-kvm -m 64 -nographic \
		-device isa-debug-exit,iobase=0xf4,iosize=4 "$@" >"$out" 2>&1 </dev/null
	rc=$?
	if [ "$rc" -ne 1 ] || ! grep -Eq "$pattern" "$out"; then
		echo "FAIL $name under QEMU: status $rc (want 1), output:"
		tail -n 20 "$out"
		fails=$((fails + 1))
	else
		echo "ok   $name"
	fi
}

run hello 'hello from guest' -kernel "$G/hello.elf"
run pio-loop 'pio-loop: done 100 exits' -kernel "$G/pio-loop.elf" -append n=100
run mmio-loop 'mmio-loop: done 100 exits' -kernel "$G/mmio-loop.elf" -append n=100
run smp 'smp: 4 of 4 cpus checked in' -smp 4 -kernel "$G/smp.elf"
run unclaimed 'unclaimed: 10 rounds, all reads as expected' -kernel "$G/unclaimed.elf" \
	-append "n=10 qemu=1"
[ "$fails" -eq 0 ]
