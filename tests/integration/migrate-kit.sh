#!/bin/sh
# migrate-kit.sh — RAM through live migration and restore, at a guest's
# full speed: the kit's mem-dirty payload (1 GiB, 256 MiB filled, ticking
# and rewriting memory from ring 3, so it runs natively where guest ring 0
# is emulated) goes through tests/integration/migrate_kit.py's round: an
# idle live migration, one while it rewrites 64 MiB at up to 100 MB/s,
# then stop, save to a file and restore (vmm maps the file). Each must
# complete, the guest's tick counter must go on from where it stopped, and
# the payload's check of every filled page it does not rewrite must pass
# after each move. Under build/vmm, the ASan build and QEMU (the
# reference: the same payload, the same steps).
set -u
VMM=${VMM:-build/vmm}
VMM_ASAN=${VMM_ASAN:-build/asan/vmm}
B=${B:-build}
PAYLOAD=$B/tests/guest/mem-dirty.elf
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
command -v python3 >/dev/null || { echo "FAIL: no python3"; exit 1; }
command -v qemu-system-x86_64 >/dev/null || { echo "FAIL: no qemu-system-x86_64"; exit 1; }
[ -f "$PAYLOAD" ] || { echo "FAIL: $PAYLOAD not built"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/migrate-kit.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0

side() {
	name=$1
	shift
	mkdir "$tmp/$name"
	if TIMEOUT=600 python3 tests/integration/migrate_kit.py "$tmp/$name" "$name" "$PAYLOAD" 0 \
		"$@" >"$tmp/$name.out" 2>&1; then
		echo "ok: $name: $(grep 'rewrote' "$tmp/$name.out")"
	else
		echo "FAIL: $name"
		cat "$tmp/$name.out"
		fails=$((fails + 1))
	fi
}

side vmm "$VMM"
side vmm-asan "$VMM_ASAN"
side qemu qemu-system-x86_64 -enable-kvm -vga none -device isa-debug-exit,iobase=0xf4,iosize=4
[ "$fails" = 0 ] || exit 1
echo "migrate-kit: all passed"
