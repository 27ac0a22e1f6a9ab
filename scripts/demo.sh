#!/bin/sh
# demo.sh — `make demo`: boot Debian's own kernel (linux-image-amd64, with
# its modules) on vmm to a shell on the console, with the default NIC on
# user networking (DHCP). Ctrl-A c switches to the monitor, Ctrl-A x quits;
# `poweroff -f` in the guest ends the VM with status 0.
#
# vmm needs /dev/kvm. Where it does not open (a VM without nested
# virtualization), the demo says so at once and runs a scripted session
# inside a nested Linux under QEMU's emulation (scripts/nested-kvm/), which
# has no terminal: a few commands in the guest, then power-off.
#   demo.sh [--scripted]    --scripted: the non-interactive session here
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
vmm=${VMM:-$top/build/vmm}
. "$top/scripts/nested-kvm/place.sh"

append="$(cat "$top/tests/guest/linux/cmdline")"
scripted=
[ "${1:-}" != --scripted ] || { scripted=1; append="$append demo.script"; }

# --preflight: the first thing make demo runs, before installing or
# building anything, so that a machine without KVM hears it at once.
if [ "${1:-}" = --preflight ]; then
	kvm_opens && exit 0
	echo "demo: /dev/kvm does not open here, and vmm runs its guests on KVM (this is a" >&2
	echo "demo: machine without virtualization extensions, or not allowed to use them)." >&2
	if command -v qemu-system-x86_64 >/dev/null || [ "$(id -u)" = 0 ]; then
		echo "demo: so the demo runs a scripted session in a nested Linux under QEMU's" >&2
		echo "demo: emulation instead (scripts/nested-kvm/; no terminal there, ~1-2 min" >&2
		echo "demo: once vmm is built). On a KVM host, make demo boots to a shell." >&2
		exit 0
	fi
	echo "demo: QEMU, which could run it nested, is not installed; on a KVM host," >&2
	echo "demo: make demo boots to a shell." >&2
	exit 1
fi

if [ -z "$scripted" ] && ! kvm_opens; then
	[ -x "$vmm" ] || { echo "demo: $vmm missing: run make" >&2; exit 1; }
	sh "$top/scripts/demo/image.sh" >/dev/null
	echo "demo: no /dev/kvm: the scripted session, nested (scripts/nested-kvm/run.sh)" >&2
	exec sh "$top/scripts/nested-kvm/run.sh" -t 600 -- sh scripts/demo.sh --scripted
fi

[ -x "$vmm" ] || { echo "demo: $vmm missing: run make" >&2; exit 1; }
dir=$(sh "$top/scripts/demo/image.sh")
cpu=
# KVMs that emulate guest ring 0 (kvm_pvm) need the conservative CPU model.
[ ! -d /sys/module/kvm_pvm ] || cpu="-cpu baseline"
echo "demo: booting Debian's kernel $(basename "$(readlink -f "$dir")")" >&2
# shellcheck disable=SC2086
exec "$vmm" -m 512 -smp 2 $cpu -nographic -serial mon:stdio -no-reboot \
	-kernel "$dir/kernel" -initrd "$dir/initrd.cpio.gz" -append "$append"
