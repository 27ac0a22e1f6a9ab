# demo-py.inc.sh — sourced by the tests whose work is a Python script
# driving make demo's guest under vmm, then QEMU as the reference: skip
# without /dev/kvm, the tools (python3, qemu-system-x86_64 and any named
# in $tools), GUEST exported (scripts/demo/image.sh), $work (a temporary
# folder, removed on exit), $cpu (vmm's CPU model for the host) and
# $qemu_ref (QEMU's command for the same guest).
set -u
VMM=${VMM:-build/vmm}
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
for t in python3 qemu-system-x86_64 ${tools:-}; do
	command -v $t >/dev/null || { echo "FAIL: no $t"; exit 1; }
done
GUEST=$(sh scripts/demo/image.sh) || { echo "FAIL: no Debian guest image (scripts/demo/image.sh)"; exit 1; }
export GUEST
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cpu=
[ ! -d /sys/module/kvm_pvm ] || cpu="-cpu baseline"
qemu_ref="qemu-system-x86_64 -enable-kvm -cpu qemu64,-smap,-smep,-xsave,-popcnt -vga none"
