#!/bin/sh
# seabios-int13.sh — the BIOS disk services on the IDE disk: a boot sector
# (tests/images/int13-mbr.S) reads 252 sectors through int 13h, by CHS
# across a head boundary and by EDD extended read, and checks their sums.
# vmm must print "chs ok", "lba ok" and exit 33; with one payload byte
# changed it must report the bad sum (status 35). Where QEMU is installed
# its serial output and exit status for the same image must be identical.
set -u
VMM=${VMM:-build/vmm}
QEMU=${QEMU:-qemu-system-x86_64}
[ -e /dev/kvm ] || { echo "SKIP: no /dev/kvm"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
as --32 -o "$work/m.o" tests/images/int13-mbr.S &&
	ld -m elf_i386 -Ttext 0x7c00 --oformat binary -o "$work/m.bin" "$work/m.o" &&
	python3 tests/images/mkint13.py "$work/m.bin" "$work/disk.img" || exit 1
common="-m 512 -nographic -device isa-debug-exit,iobase=0xf4,iosize=4"
fail=0

# shellcheck disable=SC2086
timeout 60 "$VMM" $common -hda "$work/disk.img" </dev/null >"$work/vmm.out" 2>"$work/err"
rc=$?
if [ $rc -ne 33 ] || ! grep -q "chs ok" "$work/vmm.out" || ! grep -q "lba ok" "$work/vmm.out"; then
	echo "FAIL: exit $rc"; cat -v "$work/vmm.out"; cat "$work/err"; fail=1
fi

# one byte changed in LBA 200 (the EDD part): the check must notice
cp "$work/disk.img" "$work/bad.img"
printf '\377' | dd of="$work/bad.img" bs=1 seek=$((200 * 512 + 7)) conv=notrunc status=none
# shellcheck disable=SC2086
timeout 60 "$VMM" $common -hda "$work/bad.img" </dev/null >"$work/bad.out" 2>&1
rc=$?
if [ $rc -ne 35 ] || ! grep -q "chs ok" "$work/bad.out" || ! grep -q "bad checksum" "$work/bad.out"; then
	echo "FAIL: corrupted image: exit $rc"; cat -v "$work/bad.out"; fail=1
fi

if command -v "$QEMU" >/dev/null; then
	# shellcheck disable=SC2086
	timeout 120 "$QEMU" -enable-kvm -nic none $common \
		-drive file="$work/disk.img",format=raw,if=ide </dev/null >"$work/qemu.out" 2>/dev/null
	qrc=$?
	# the same bytes but for line ends: SeaBIOS's serial console emits
	# its pending newline from the timer interrupt, whenever that fires
	if [ $qrc -ne 33 ] || [ "$(tr -d '\r\n' <"$work/vmm.out")" != "$(tr -d '\r\n' <"$work/qemu.out")" ]; then
		echo "FAIL: QEMU exit $qrc or different serial output:"
		diff "$work/vmm.out" "$work/qemu.out" | cat -v; fail=1
	fi
else
	echo "note: $QEMU not installed, no side-by-side comparison"
fi
[ $fail -eq 0 ] && echo "seabios-int13: ok"
exit $fail
