#!/bin/sh
# migrate-return-path.sh — the `return-path` migration capability
# (tests/integration/migrate_return_path.py): vmm's source waits for the
# destination's reply after the stream (held: still `active`, its guest
# stopped; "loaded": `completed`; "failed to load" or no reply: `failed`,
# its guest runs again), completes without a reply when the capability is
# off, refuses it on a one-way exec: URI; and vmm to vmm with the
# capability on both sides, QEMU to QEMU the same as the reference. The
# machines boot nothing (SeaBIOS without a disk): only the stream counts.
set -u
VMM=${VMM:-build/vmm}
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
command -v python3 >/dev/null || { echo "FAIL: no python3"; exit 1; }
command -v qemu-system-x86_64 >/dev/null ||
	{ echo "FAIL: no qemu-system-x86_64 for the reference run (scripts/install-deps.sh check)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 tests/integration/migrate_return_path.py "$VMM" "$work" \
	qemu-system-x86_64 -enable-kvm -cpu qemu64,-smap,-smep,-xsave,-popcnt -vga none || exit 1
echo "migrate-return-path: ok"
