#!/bin/sh
# migrate.sh — live migration and restore of a 1 GiB Linux guest, vmm vs
# qemu-system-x86_64 side by side in one run (bench/migrate_bench.py does
# each side: idle and memory-dirtying live migrations through unix:
# sockets, then a save to a file and the time to a running guest from it).
# Prints each side's figures, then the ratios vmm/QEMU (below 1: vmm is
# faster). Env: VMM (default build/vmm), TIMEOUT (s per side, 1800).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
vmm=$(readlink -f "${VMM:-build/vmm}")
GUEST=$(sh scripts/demo/image.sh)
export GUEST
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cpu=
[ ! -d /sys/module/kvm_pvm ] || cpu="-cpu baseline"

mkdir "$tmp/vmm" "$tmp/qemu"
# shellcheck disable=SC2086
python3 bench/migrate_bench.py "$tmp/vmm" vmm "$vmm" $cpu | tee "$tmp/vmm.txt"
grep -q "^vmm restore" "$tmp/vmm.txt"
python3 bench/migrate_bench.py "$tmp/qemu" qemu qemu-system-x86_64 -enable-kvm \
	-cpu qemu64,-smap,-smep,-xsave,-popcnt -vga none | tee "$tmp/qemu.txt"
grep -q "^qemu restore" "$tmp/qemu.txt"

# figure FILE STEP KEY: the number after KEY on STEP's line
figure() { grep "^[a-z]* $2: " "$1" | grep "$3 [0-9]" | sed -E "s/.*$3 ([0-9.]+).*/\1/"; }
ratio() { echo "scale=2; $1 / $2" | bc; }
for step in "idle 1 GiB" dirtying; do
	for key in total "STOP to RESUME"; do
		a=$(figure "$tmp/vmm.txt" "$step" "$key") b=$(figure "$tmp/qemu.txt" "$step" "$key")
		echo "migrate: $step: $key vmm $a ms, QEMU $b ms: ratio $(ratio "$a" "$b")"
	done
done
a=$(figure "$tmp/vmm.txt" restore in) b=$(figure "$tmp/qemu.txt" restore in)
echo "migrate: restore from a file to a running guest: vmm $a ms, QEMU $b ms: ratio $(ratio "$a" "$b")"
