#!/bin/sh
# libvirt-save.sh — virsh save and virsh restore of a 1 GiB guest through
# Debian's libvirt 9.0, vmm vs qemu-system-x86_64 side by side in one run,
# under the same libvirtd (tests/integration/libvirt.inc.sh: root, its own
# libvirtd in a mount namespace). make demo's guest boots, fills 256 MiB
# of its memory with random data (tmpfs), then ROUNDS times, the two
# emulators in turn: `virsh save` (to the file's end, the emulator gone)
# and `virsh restore` (to the domain running: libvirt starts the emulator
# with -incoming defer, feeds the file, sends cont); the guest's shell
# must answer after each restore. Prints each round's figures, then the
# medians and the ratios vmm/QEMU (below 1: vmm is faster).
# Env: VMM (default build/vmm), ROUNDS (3).
dom=bench
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
. tests/integration/libvirt.inc.sh
guest=$(sh scripts/demo/image.sh) || fail "no Debian guest image (scripts/demo/image.sh)"
qemu=$(command -v qemu-system-x86_64) || fail "no qemu-system-x86_64"
vmm=$(readlink -f "${VMM:-build/vmm}")
rounds=${ROUNDS:-3}
memory=1024
console=tests/integration/libvirt_console.py

# boot SIDE EMULATOR: the domain up, 256 MiB of it written.
boot() {
	domain "$2" >"$T/$1.xml"
	$V define "$T/$1.xml" >/dev/null || fail "$1: virsh define"
	$V start --paused "$dom" >/dev/null || fail "$1: virsh start"
	wait_state paused 20
	python3 "$console" qemu:///system "$dom" "$T/boot.$1" "$limit" "vmm demo: a shell" \
		"head -c 268435456 /dev/urandom >/tmp/fill" >/dev/null &
	cpid=$!
	sleep 2
	$V resume "$dom" >/dev/null || fail "$1: virsh resume"
	wait $cpid || { tail -c 2000 "$T/boot.$1"; fail "$1: virsh console (boot)"; }
}

# round SIDE N: save, restore, the shell answers; appends "save restore MiB".
round() {
	save_restore "$1"
	s=$save_ms r=$restore_ms
	[ "$(state)" = running ] || fail "$1: domstate '$(state)' after restore"
	python3 "$console" qemu:///system "$dom" "$T/r.$1.$2" "$limit" "Escape character" \
		"ls -l /tmp/fill" >/dev/null || { tail -c 2000 "$T/r.$1.$2"; fail "$1: the restored guest's shell"; }
	mib=$(($(stat -c %s "$T/save") >> 20))
	echo "libvirt-save: $1 round $2: virsh save $s ms, virsh restore $r ms ($mib MiB file)"
	echo "$s $r $mib" >>"$T/$1.fig"
}

# Each side boots once; rounds alternate between the two domains, so
# both meet the same moments of a noisy host.
for side in vmm qemu; do
	dom=bench-$side
	if [ $side = vmm ]; then boot vmm "$vmm"; else boot qemu "$qemu"; fi
done
for n in $(seq "$rounds"); do
	for side in vmm qemu; do
		dom=bench-$side
		round $side "$n"
	done
done
for side in vmm qemu; do
	dom=bench-$side
	$V destroy "$dom" >/dev/null 2>&1
	$V undefine "$dom" >/dev/null 2>&1
done

# median FILE COLUMN
median() { sort -n -k"$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END { print v[int((NR + 1) / 2)] }'; }
ratio() { echo "scale=2; $1 / $2" | bc; }
for c in 1:save 2:restore; do
	col=${c%%:*} what=${c#*:}
	a=$(median "$T/vmm.fig" "$col") b=$(median "$T/qemu.fig" "$col")
	echo "libvirt-save: virsh $what (median of $rounds): vmm $a ms, QEMU $b ms: ratio $(ratio "$a" "$b")"
done
echo "libvirt-save: file sizes: vmm $(median "$T/vmm.fig" 3) MiB, QEMU $(median "$T/qemu.fig" 3) MiB"
