#!/bin/sh
# core-smp.sh — smp.elf under build/vmm with -smp 1, 2 and 4: every vCPU
# the ACPI MADT (and, with mp=1, the MP table) lists is started with
# INIT-SIPI-SIPI and checks in; exit status 1 ((0 << 1) | 1) when all did.
# -smp 4 once more under the ASan build.
set -u
B=${B:-build}
VMM=${VMM:-$B/vmm}
VMM_ASAN=${VMM_ASAN:-$B/asan/vmm}
SMP=$B/tests/guest/smp.elf
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
[ -f "$SMP" ] || { echo "FAIL: $SMP not built"; exit 1; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fails=0

# check N SOURCE [APPEND]: run with -smp N, expect SOURCE as the table used.
check() {
	n=$1 source=$2
	shift 2
	timeout 60 "$vmm" -m 64 -smp "$n" -nographic -device isa-debug-exit,iobase=0xf4,iosize=4 \
		-kernel "$SMP" "$@" >"$out" 2>&1 </dev/null
	rc=$?
	bad=""
	[ "$rc" -eq 1 ] || bad="status $rc, want 1"
	! grep -qE 'Sanitizer|runtime error' "$out" || bad="$bad; sanitizer report"
	grep -q "^smp: $n cpus in the $source" "$out" || bad="$bad; no '$n cpus in the $source'"
	grep -q "^smp: $n of $n cpus checked in" "$out" || bad="$bad; no '$n of $n cpus checked in'"
	id=1
	while [ "$id" -lt "$n" ]; do
		[ "$(grep -c "^smp: cpu with apic id $id checked in" "$out")" -eq 1 ] ||
			bad="$bad; apic id $id did not check in exactly once"
		id=$((id + 1))
	done
	if [ -n "$bad" ]; then
		echo "FAIL $vmm -smp $n $*: ${bad#; }"
		cat "$out"
		fails=$((fails + 1))
	else
		echo "ok   $vmm -smp $n $* ($source)"
	fi
}

vmm=$VMM
for n in 1 2 4; do
	check "$n" "ACPI MADT"
done
check 4 "MP table" -append mp=1
# A listed CPU that never answers: the BSP times out, names it, fails.
timeout 60 "$VMM" -m 64 -smp 2 -nographic -device isa-debug-exit,iobase=0xf4,iosize=4 \
	-kernel "$SMP" -append "phantom=200 timeout=300" >"$out" 2>&1 </dev/null
rc=$?
if [ "$rc" -eq 3 ] && grep -q '^smp: apic id 200 did not check in' "$out" &&
	grep -q '^smp: 2 of 3 cpus checked in' "$out"; then
	echo "ok   missing cpu: timeout, 2 of 3, status 3"
else
	echo "FAIL missing cpu: status $rc (want 3)"
	cat "$out"
	fails=$((fails + 1))
fi
# -smp topologies: the APIC IDs the MADT lists and the vCPUs answer with
# (sockets=2,cores=3 skips 3), and the CPUID topology each vCPU reads,
# the same as under QEMU (KVM, -cpu host) with the same payload and -smp.
# (QEMU leaves out arch-capabilities: some KVMs, kvm_pvm among them, list
# the MSR yet refuse QEMU's value for it, and QEMU aborts.)
# topology PROGRAM...: what smp.elf reports with topo=1, sorted (arrival
# order varies).
topology() {
	timeout 120 "$@" -m 64 -nographic -device isa-debug-exit,iobase=0xf4,iosize=4 \
		-smp "$smp" -kernel "$SMP" -append topo=1 2>/dev/null </dev/null |
		sed -n 's/ (arrival [0-9]*)//; /^smp: \(topo\|cpu with\|[0-9]* of\)/p' | sort
}
if command -v qemu-system-x86_64 >/dev/null; then
	for smp in "sockets=2,cores=3" "8,sockets=2,cores=2,threads=2" "4" \
		"8,dies=2,cores=2,threads=2"; do
		got=$(topology "$VMM")
		want=$(topology qemu-system-x86_64 -enable-kvm -cpu host,-arch-capabilities)
		if [ -n "$want" ] && [ "$got" = "$want" ]; then
			echo "ok   -smp $smp: APIC IDs and CPUID topology as under QEMU"
		else
			echo "FAIL -smp $smp: vmm"
			echo "$got"
			echo "QEMU:"
			echo "$want"
			fails=$((fails + 1))
		fi
	done
else
	echo "FAIL: no qemu-system-x86_64 for the topology reference"
	fails=$((fails + 1))
fi
# Four vCPU threads starting together under ASan + UBSan.
[ -x "$VMM_ASAN" ] || { echo "FAIL: $VMM_ASAN not built"; exit 1; }
vmm=$VMM_ASAN
check 4 "ACPI MADT"
[ "$fails" -eq 0 ]
