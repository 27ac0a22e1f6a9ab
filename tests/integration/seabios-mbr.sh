#!/bin/sh
# seabios-mbr.sh — SeaBIOS boots an MBR from the IDE disk: the boot sector
# prints to COM1 and exits through isa-debug-exit. Same output and exit
# status as QEMU (compared side by side when QEMU is installed). Also:
# -snapshot leaves the image byte-identical, and a missing, unreadable,
# directory or odd-sized image and a missing BIOS each give a one-line error.
set -u
VMM=${VMM:-build/vmm}
B=${B:-build}
[ -e /dev/kvm ] || { echo "SKIP: no /dev/kvm"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A boot sector assembled with binutils (no nasm): print, then exit 0x10.
. tests/integration/boot-sector.inc.sh
img=$work/disk.img
mbr "boot sector ok" "$img"

fail=0
run() { timeout 60 "$VMM" -m 512 -nographic -device isa-debug-exit,iobase=0xf4,iosize=4 "$@" </dev/null; }

out=$(run -hda "$img" 2>"$work/err"); rc=$?
# SeaBIOS mirrors its banner on COM1 under -nographic, as with QEMU: the
# boot sector's line comes last (compared through unflushed: timing).
. tests/integration/seabios-serial.inc.sh
case "$(unflushed "$out")" in *"Booting from Hard Disk..boot sector ok") ok=1 ;; *) ok=0 ;; esac
if [ $ok -ne 1 ] || [ $rc -ne 33 ]; then
	echo "FAIL: -hda boot: exit $rc, output '$out'"; cat "$work/err"; fail=1
fi
# the same image under QEMU (no NIC, so no iPXE banner): same bytes on
# the serial line, same exit status
if command -v qemu-system-x86_64 >/dev/null; then
	timeout 120 qemu-system-x86_64 -enable-kvm -nic none -m 512 -nographic \
		-device isa-debug-exit,iobase=0xf4,iosize=4 -drive file="$img",format=raw,if=ide \
		</dev/null >"$work/qemu.out" 2>/dev/null
	qrc=$?
	if [ $qrc -ne $rc ] || [ "$(unflushed "$(cat "$work/qemu.out")")" != "$(unflushed "$out")" ]; then
		echo "FAIL: QEMU exit $qrc, serial output differs:"; cat -v "$work/qemu.out"
		echo "vmm's:"; printf '%s\n' "$out" | cat -v; fail=1
	fi
else
	echo "note: qemu-system-x86_64 not installed, no side-by-side comparison"
fi
# -debugcon file: SeaBIOS's own log (it writes there only when 0x402
# answers 0xe9, i.e. only with -debugcon, as under QEMU)
run -debugcon file:"$work/dbg.log" -hda "$img" >/dev/null 2>&1
if ! grep -q "Running on QEMU (i440fx)" "$work/dbg.log" || ! grep -q "Booting from 0000:7c00" "$work/dbg.log" ||
	grep -q "WARNING" "$work/dbg.log"; then
	echo "FAIL: -debugcon log:"; cat "$work/dbg.log"; fail=1
fi
before=$(sha256sum <"$img")
out=$(run -snapshot -drive file="$img",format=raw,if=ide,index=0 2>/dev/null); rc=$?
[ $rc -eq 33 ] || { echo "FAIL: -snapshot boot exit $rc"; fail=1; }
[ "$(sha256sum <"$img")" = "$before" ] || { echo "FAIL: -snapshot changed the image"; fail=1; }

# one-line errors
printf 'x' >"$work/odd.img"
for bad in /nonexistent.img "$work" "$work/odd.img"; do
	err=$(run -hda "$bad" 2>&1 >/dev/null); rc=$?
	if [ $rc -eq 0 ] || [ "$(printf '%s\n' "$err" | wc -l)" -ne 1 ]; then
		echo "FAIL: -hda $bad: exit $rc, '$err'"; fail=1
	fi
done
# unreadable: root reads anything, so drop the capabilities that let it
cp "$img" "$work/noperm.img" && chmod 000 "$work/noperm.img"
err=$(setpriv --bounding-set=-dac_override,-dac_read_search \
	"$VMM" -m 64 -nographic -hda "$work/noperm.img" 2>&1 >/dev/null </dev/null); rc=$?
case "$err" in *"Permission denied"*) ok=1 ;; *) ok=0 ;; esac
if [ $rc -eq 0 ] || [ $ok -ne 1 ] || [ "$(printf '%s\n' "$err" | wc -l)" -ne 1 ]; then
	echo "FAIL: unreadable image: exit $rc, '$err'"; fail=1
fi
err=$(run -bios /nonexistent/bios.bin -hda "$img" 2>&1 >/dev/null); rc=$?
if [ $rc -eq 0 ] || [ "$(printf '%s\n' "$err" | wc -l)" -ne 1 ]; then
	echo "FAIL: missing bios: exit $rc, '$err'"; fail=1
fi
[ $fail -eq 0 ] && echo "seabios-mbr: ok"
exit $fail
