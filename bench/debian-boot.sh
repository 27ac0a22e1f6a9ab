#!/bin/sh
# debian-boot.sh — a person's Debian disk from power-on to a usable
# system: scripts/debian-disk.sh's Debian 12 disk booted as `vmm -m 512
# -hda disk.img` (SeaBIOS, SYSLINUX, Debian's kernel, systemd, DHCP on
# the default NIC), and as `qemu-system-x86_64 -enable-kvm` with the
# same options, alternating ROUNDS times (-snapshot: the disk stays as
# built). Each boot is timed from exec to the guest's DEBIAN-READY line
# (network online) and to root's shell on ttyS0; then the guest powers
# off. Prints every round, the medians and the ratios vmm/QEMU (below 1:
# vmm is faster).
# Env: VMM (default build/vmm), ROUNDS (3), DEBIAN_BOOT_TIMEOUT (1500).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
VMM=${VMM:-build/vmm}
rounds=${ROUNDS:-3}
limit=${DEBIAN_BOOT_TIMEOUT:-1500}
[ -e /dev/kvm ] || { echo "debian-boot: no /dev/kvm"; exit 1; }
base=$(sh scripts/debian-disk.sh) || { echo "debian-boot: no Debian disk (scripts/debian-disk.sh)"; exit 1; }
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$work"' EXIT
. tests/integration/debian-disk.inc.sh

qemu_cpu=
# KVMs that emulate guest ring 0 (kvm_pvm) need the conservative CPU model.
[ ! -d /sys/module/kvm_pvm ] || qemu_cpu="-cpu qemu64,-smap,-smep,-xsave,-popcnt"

# one SIDE COMMAND...: boot, time the shell too, power off; appends
# "ready shell" (seconds) to $work/SIDE.
one() {
	name=$1
	shift
	boot "$name" "$base" "$@" -snapshot
	shell_s=$(($(date +%s) - t0))
	echo "$ready_s $shell_s" >>"$work/$name"
	echo "systemctl poweroff" >&3
	t1=$(date +%s)
	while kill -0 "$pid" 2>/dev/null && [ $(($(date +%s) - t1)) -lt 300 ]; do
		sleep 1
	done
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	pid=
	exec 3>&-
}

median() { # FILE COLUMN
	cut -d' ' -f"$2" "$1" | sort -n | sed -n "$(((rounds + 1) / 2))p"
}

i=0
while [ $i -lt "$rounds" ]; do
	i=$((i + 1))
	one vmm "$VMM"
	# shellcheck disable=SC2086
	one qemu qemu-system-x86_64 -enable-kvm $qemu_cpu
	echo "debian-boot: round $i: vmm $(sed -n "${i}p" "$work/vmm") s, QEMU $(sed -n "${i}p" "$work/qemu") s (ready, shell)"
done
for col in 1 2; do
	what=$([ $col = 1 ] && echo "DEBIAN-READY" || echo "root's shell")
	v=$(median "$work/vmm" $col) q=$(median "$work/qemu" $col)
	echo "debian-boot: to $what (median of $rounds): vmm $v s, QEMU $q s: ratio" \
		"$(awk "BEGIN { printf \"%.2f\", $v / ($q ? $q : 1) }")"
done
