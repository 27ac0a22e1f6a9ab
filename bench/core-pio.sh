#!/bin/sh
# core-pio.sh [N] — cost per port-I/O exit: pio-loop.elf with n=N and n=0
# under build/vmm and qemu-system-x86_64 -enable-kvm, side by side; the
# difference over N is the per-exit cost. (The raw KVM_RUN loop peer,
# bench/raw-kvm-loop.c, is not written yet.)
set -u
N=${1:-20000}
VMM=${VMM:-build/vmm}
B=${B:-build}
PIO=$B/tests/guest/pio-loop.elf
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
command -v qemu-system-x86_64 >/dev/null || { echo "skipped: no qemu-system-x86_64"; exit 77; }
now_ns() { date +%s%N; }
run_ns() { # run_ns N CMD...
	n=$1; shift
	t0=$(now_ns)
	timeout 300 "$@" -m 64 -nographic -device isa-debug-exit,iobase=0xf4,iosize=4 \
		-kernel "$PIO" -append "n=$n" </dev/null >/dev/null 2>&1
	rc=$?
	t1=$(now_ns)
	[ $rc -eq 1 ] || { echo "bad run ($rc): $*" >&2; exit 1; }
	echo $((t1 - t0))
}
v0=$(run_ns 0 $VMM) && vn=$(run_ns "$N" $VMM) || exit 1
q0=$(run_ns 0 qemu-system-x86_64 -enable-kvm) && qn=$(run_ns "$N" qemu-system-x86_64 -enable-kvm) || exit 1
awk -v v0="$v0" -v vn="$vn" -v q0="$q0" -v qn="$qn" -v n="$N" 'BEGIN {
	v = (vn - v0) / n / 1000; q = (qn - q0) / n / 1000
	printf "PIO exit (pio-loop n=%d minus n=0): vmm %.2f us, qemu %.2f us, vmm/qemu = %.2f\n",
		n, v, q, (q > 0 ? v / q : 0) }'
