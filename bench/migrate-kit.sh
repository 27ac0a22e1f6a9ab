#!/bin/sh
# migrate-kit.sh — live migration and restore of the kit's mem-dirty guest
# (1 GiB, 256 MiB filled, ticking and dirtying in ring 3), vmm vs
# qemu-system-x86_64 side by side: tests/integration/migrate_kit.py does
# one side's round (a warm-up round first), and the sides alternate for
# ROUNDS rounds each (default 5), so that a drift of the host hits both.
# Where guest ring 0 is emulated (kvm_pvm) this guest still runs at native
# speed, so unlike migrate.sh's Linux guest the figures are the VMMs' own.
# Prints each figure's median per side and the ratio vmm/QEMU (below 1:
# vmm is faster). Env: VMM (default build/vmm), ROUNDS, TIMEOUT (s per
# round, 900).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
vmm=$(readlink -f "${VMM:-build/vmm}")
payload=$(readlink -f "${B:-build}/tests/guest/mem-dirty.elf")
rounds=${ROUNDS:-5}
[ -f "$payload" ] || { echo "migrate-kit: $payload is not built (make)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# side DIR NAME EMULATOR...: one round (after a warm-up) into DIR.txt
side() {
	dir=$1 name=$2
	shift 2
	mkdir "$dir"
	python3 tests/integration/migrate_kit.py "$dir" "$name" "$payload" 1 "$@" >"$dir.txt" 2>&1 ||
		{ cat "$dir.txt"; exit 1; }
}

i=0
while [ "$i" -lt "$rounds" ]; do
	i=$((i + 1))
	side "$tmp/vmm.$i" vmm "$vmm"
	side "$tmp/qemu.$i" qemu qemu-system-x86_64 -enable-kvm -vga none \
		-device isa-debug-exit,iobase=0xf4,iosize=4
	grep -h "round 1:" "$tmp/vmm.$i.txt" "$tmp/qemu.$i.txt"
done

# median SIDE STEP KEY: the median of the rounds' STEP KEY figures
median() {
	grep -h "^$1 $2: $3 [0-9]" "$tmp"/"$1".*.txt | sed -E "s/.*: $3 ([0-9.]+) .*/\1/" |
		sort -n | awk '{v[NR] = $1} END {print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
# values SIDE STEP KEY: every round's figure
values() {
	grep -h "^$1 $2: $3 [0-9]" "$tmp"/"$1".*.txt | sed -E "s/.*: $3 ([0-9.]+) .*/\1/" | tr '\n' ' '
}
ratio() { echo "scale=2; $1 / $2" | bc; }
report() {
	a=$(median vmm "$1" "$2") b=$(median qemu "$1" "$2")
	echo "migrate-kit: $1: $2 vmm $a ms, QEMU $b ms: ratio $(ratio "$a" "$b")" \
		"(vmm $(values vmm "$1" "$2")| QEMU $(values qemu "$1" "$2"))"
}
for step in idle dirtying; do
	for key in total downtime "STOP to RESUME" "guest pause"; do
		report "$step" "$key"
	done
done
report restore "to running"
report restore "to the first tick"
