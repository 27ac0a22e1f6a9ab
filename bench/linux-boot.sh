#!/bin/sh
# linux-boot.sh — time from exec to the guest init's VMM-GUEST-READY marker,
# vmm vs qemu-system-x86_64 -enable-kvm on the same bzImage, initramfs,
# command line and a conservative CPU, side by side; then vmm's RSS beyond
# guest RAM at -m 512. Env: VMM (default build/vmm), TIMEOUT (s, 900),
# IRQCHIP (on, split or off: both sides get -machine kernel_irqchip=IRQCHIP;
# QEMU's off also kvm-asyncpf-int=off, which QEMU 7.2 needs there).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
vmm=${VMM:-build/vmm}
limit=${TIMEOUT:-900}
dir=$(sh "$top/scripts/guest-kernel.sh")
append="$(cat "$top/tests/guest/linux/cmdline")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# RSS of every mapping except guest RAM (the 512 MiB one), in KiB: total,
# then its anonymous part (heap, stacks; the rest is binary and libraries).
overhead_kib() {
	awk '/^Size:/ { size = $2 } /^Rss:/ { if (size < 524288) sum += $2 }
		/^Anonymous:/ { if (size < 524288) anon += $2 }
		END { print sum, anon }' "/proc/$1/smaps"
}

# time_to_marker NAME CMD...: seconds until the marker, the VM then killed.
time_to_marker() {
	name=$1
	shift
	: >"$tmp/$name.log"
	t0=$(date +%s.%N)
	"$@" </dev/null >"$tmp/$name.log" 2>&1 &
	pid=$!
	while kill -0 $pid 2>/dev/null; do
		if grep -q VMM-GUEST-READY "$tmp/$name.log"; then
			echo "$(date +%s.%N) - $t0" | bc
			[ "$name" != vmm ] || overhead_kib "$pid" >"$tmp/rss"
			kill $pid
			wait $pid 2>/dev/null || true
			return 0
		fi
		if [ "$(echo "$(date +%s.%N) - $t0 > $limit" | bc)" = 1 ]; then
			kill $pid
			break
		fi
		sleep 0.2
	done
	wait $pid 2>/dev/null || true
	echo "linux-boot: $name did not reach init (last lines below)" >&2
	tail -5 "$tmp/$name.log" >&2
	echo fail
}

qcpu=qemu64,-smap,-smep,-xsave,-popcnt
machine=
if [ -n "${IRQCHIP:-}" ]; then
	machine="-machine kernel_irqchip=$IRQCHIP"
	[ "$IRQCHIP" = off ] && qcpu=$qcpu,kvm-asyncpf-int=off
	echo "kernel_irqchip=$IRQCHIP"
fi
# shellcheck disable=SC2086
v=$(time_to_marker vmm "$vmm" $machine -m 512 -nographic -no-reboot -kernel "$dir/bzImage" \
	-initrd "$dir/initramfs.cpio" -append "$append")
# shellcheck disable=SC2086
q=$(time_to_marker qemu qemu-system-x86_64 -enable-kvm $machine -m 512 -nographic -no-reboot \
	-cpu $qcpu -kernel "$dir/bzImage" \
	-initrd "$dir/initramfs.cpio" -append "$append")
echo "time to init: vmm ${v} s, qemu ${q} s"
[ "$v" != fail ] && [ "$q" != fail ] || exit 1
echo "ratio vmm/qemu: $(echo "scale=3; $v / $q" | bc) (goal <= 0.5)"
read -r rss anon <"$tmp/rss"
echo "vmm RSS beyond guest RAM at -m 512: $((rss / 1024)).$((rss % 1024 * 10 / 1024)) MiB" \
	"($((anon / 1024)).$((anon % 1024 * 10 / 1024)) MiB anonymous) (goal <= 5)"
