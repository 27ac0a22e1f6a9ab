#!/bin/sh
# multiboot-layout.sh — foreign multiboot layouts QEMU runs: an
# ELF segment in the BIOS area (0xff000) and the RSDP copy at 0xe0000 seen
# by the guest, and a kernel over the fixed info place (0x8000-0xba30) that
# gets its info and memory map after itself. The payloads
# (multiboot-layout.py) exit 33 when their checks hold; also under ASan.
set -u
B=${B:-build}
VMM=${VMM:-$B/vmm}
VMM_ASAN=${VMM_ASAN:-$B/asan/vmm}
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
command -v python3 >/dev/null || { echo "skipped: no python3"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 tests/integration/multiboot-layout.py "$tmp" || exit 1
fails=0
for vmm in "$VMM" "$VMM_ASAN"; do
	for f in bios-area.elf low.bin; do
		timeout 60 "$vmm" -nodefaults -device isa-debug-exit,iobase=0xf4,iosize=4 \
			-kernel "$tmp/$f" >"$tmp/out" 2>&1
		rc=$?
		if [ $rc -eq 33 ]; then
			echo "ok: $f ($vmm)"
		else
			echo "FAIL: $f under $vmm: exit $rc (33 = checks hold, 65 = a check failed)"
			cat "$tmp/out"
			fails=$((fails + 1))
		fi
	done
done
[ $fails -eq 0 ]
