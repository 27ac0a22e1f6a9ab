#!/bin/sh
# migrate-converge.sh — auto-converge (tests/integration/migrate_converge.py):
# a Linux guest dirtying memory faster than an 8 MiB/s migration sends
# it never converges without the capability, and converges with it, its
# vCPUs throttled on the way and running freely again at the destination.
# QEMU runs the same as the reference.
set -u
VMM=${VMM:-build/vmm}
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
for t in python3 qemu-system-x86_64; do
	command -v $t >/dev/null || { echo "FAIL: no $t"; exit 1; }
done
GUEST=$(sh scripts/demo/image.sh) || { echo "FAIL: no Debian guest image (scripts/demo/image.sh)"; exit 1; }
export GUEST
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cpu=
[ ! -d /sys/module/kvm_pvm ] || cpu="-cpu baseline"

# shellcheck disable=SC2086
python3 tests/integration/migrate_converge.py "$work" vmm "$VMM" $cpu || exit 1
rm -rf "${work:?}"/*
python3 tests/integration/migrate_converge.py "$work" qemu \
	qemu-system-x86_64 -enable-kvm -cpu qemu64,-smap,-smep,-xsave,-popcnt -vga none || exit 1
echo "migrate-converge: ok"
