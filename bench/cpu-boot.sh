#!/bin/sh
# cpu-boot.sh — Linux boot to init with vmm's default CPU (-cpu host) vs
# qemu-system-x86_64 -enable-kvm -cpu host: Debian's stock kernel
# and initrd (/boot, as scripts/nested-kvm/mkimage.sh finds them; time to
# the kernel's "Run /init as init process") and the project's guest kernel
# (time to its init's VMM-GUEST-READY), no feature-clearing command line.
# Prints each run's seconds and the clocksource the guest settled on; runs
# where /dev/kvm is usable (scripts/nested-kvm/run.sh -- sh bench/cpu-boot.sh
# for the nested path). Env: VMM (build/vmm), RUNS (3), TIMEOUT (s, 300).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
vmm=${VMM:-$top/build/vmm}
runs=${RUNS:-3}
limit=${TIMEOUT:-300}
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
kver=$(ls /boot/vmlinuz-* 2>/dev/null | sed 's|/boot/vmlinuz-||' | sort -V | tail -n 1)
guest=$(sh "$top/scripts/guest-kernel.sh" --path 2>/dev/null)

# boot NAME MARKER CMD...: seconds to MARKER (or "fail"); the clocksource
# line of the console log goes to $tmp/NAME.cs
boot() {
	name=$1 marker=$2
	shift 2
	: >"$tmp/$name.log"
	t0=$(date +%s.%N)
	"$@" </dev/null >"$tmp/$name.log" 2>&1 &
	pid=$!
	secs=fail
	while kill -0 $pid 2>/dev/null; do
		if grep -q "$marker" "$tmp/$name.log"; then
			secs=$(echo "$(date +%s.%N) - $t0" | bc)
			sleep 3 # let the clocksource settle (its watchdog)
			break
		fi
		[ "$(echo "$(date +%s.%N) - $t0 > $limit" | bc)" = 1 ] && break
		sleep 0.1
	done
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
	grep -o 'Switched to clocksource [a-z_-]*' "$tmp/$name.log" | tail -n 1 |
		sed 's/Switched to clocksource //' >"$tmp/$name.cs"
	echo "$secs"
}

# one KERNEL_NAME MARKER KERNEL INITRD APPEND
one() {
	for i in $(seq "$runs"); do
		v=$(boot vmm "$2" "$vmm" -m 512 -nographic -no-reboot -kernel "$3" -initrd "$4" \
			-append "$5")
		q=$(boot qemu "$2" qemu-system-x86_64 -enable-kvm -cpu host -m 512 -nographic \
			-no-reboot -kernel "$3" -initrd "$4" -append "$5")
		ratio=-
		[ "$v" = fail ] || [ "$q" = fail ] || ratio=$(echo "scale=2; $v / $q" | bc)
		echo "$1 run $i: vmm $v s ($(cat "$tmp/vmm.cs")), qemu -cpu host $q s" \
			"($(cat "$tmp/qemu.cs")), ratio $ratio (goal <= 0.8)"
	done
}

[ -z "$kver" ] || one "debian-$kver" "Run /init as init process" "/boot/vmlinuz-$kver" \
	"/boot/initrd.img-$kver" "console=ttyS0 panic=-1"
[ -z "$guest" ] || one guest-kernel VMM-GUEST-READY "$guest/bzImage" "$guest/initramfs.cpio" \
	"console=ttyS0 panic=-1"
