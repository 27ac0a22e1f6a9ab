#!/bin/sh
# core-startup.sh [N] — exec to exit of hello.elf (isa-debug-exit): build/vmm
# against qemu-system-x86_64 -enable-kvm on the same file, side by side.
set -u
N=${1:-3}
VMM=${VMM:-build/vmm}
B=${B:-build}
HELLO=$B/tests/guest/hello.elf
ARGS="-m 64 -nographic -device isa-debug-exit,iobase=0xf4,iosize=4 -kernel $HELLO"
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
command -v qemu-system-x86_64 >/dev/null || { echo "skipped: no qemu-system-x86_64"; exit 77; }

now_ms() { date +%s%N | cut -c1-13; }
# run_ms CMD...: wall time of one run in ms; the payload must greet and exit 1.
run_ms() {
	t0=$(now_ms)
	out=$(timeout 120 "$@" </dev/null 2>&1)
	rc=$?
	t1=$(now_ms)
	echo "$out" | grep -q 'hello from guest' && [ $rc -eq 1 ] || { echo "bad run ($rc): $*" >&2; exit 1; }
	echo $((t1 - t0))
}

vmm_total=0 qemu_total=0
for i in $(seq "$N"); do
	v=$(run_ms $VMM $ARGS) || exit 1
	q=$(run_ms qemu-system-x86_64 -enable-kvm $ARGS) || exit 1
	echo "run $i: vmm ${v} ms, qemu ${q} ms"
	vmm_total=$((vmm_total + v))
	qemu_total=$((qemu_total + q))
done
awk -v v="$vmm_total" -v q="$qemu_total" -v n="$N" 'BEGIN {
	printf "startup (exec to exit, hello.elf, mean of %d): vmm %.1f ms, qemu %.1f ms, qemu/vmm = %.1fx\n",
		n, v / n, q / n, (v > 0 ? q / v : 0) }'
