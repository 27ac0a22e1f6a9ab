#!/bin/sh
# seabios-virtio.sh — SeaBIOS boots a boot sector from virtio-blk-pci
# (-drive if=virtio; -drive if=none + -device virtio-blk-pci), with the
# same serial output and exit status as QEMU when it is installed; a
# bootindex puts the virtio disk before the IDE one (fw_cfg bootorder);
# readonly=on and cache=none|directsync|unsafe boot; -snapshot leaves the
# image byte-identical; `info block` and `info pci` show the device; bad
# -device/-drive spellings give one-line errors.
set -u
VMM=${VMM:-build/vmm}
[ -e /dev/kvm ] || { echo "skipped: no /dev/kvm"; exit 77; }
# /var/tmp, not /tmp: cache=none and directsync open the image with
# O_DIRECT, which tmpfs refuses (the nested runner's /tmp is a tmpfs).
work=$(mktemp -d /var/tmp/seabios-virtio.XXXXXX)
trap 'rm -rf "$work"' EXIT

. tests/integration/seabios-serial.inc.sh

. tests/integration/boot-sector.inc.sh
mbr "virtio boot ok" "$work/v.img"
mbr "ide boot ok" "$work/ide.img"

fail=0
run() { timeout 60 "$VMM" -m 512 -nographic -device isa-debug-exit,iobase=0xf4,iosize=4 "$@" </dev/null; }
# $1 expected last line, then the vmm arguments
expect_boot() {
	want=$1; shift
	out=$(run "$@" 2>"$work/err"); rc=$?
	case "$(unflushed "$out")" in *"$want") ok=1 ;; *) ok=0 ;; esac
	if [ $ok -ne 1 ] || [ $rc -ne 33 ]; then
		echo "FAIL: $*: exit $rc, output '$out'"; cat "$work/err"; fail=1
	fi
	if grep -q "needs reset" "$work/err"; then
		echo "FAIL: $*: the device was marked broken:"; cat "$work/err"; fail=1
	fi
}

expect_boot "Booting from Hard Disk..virtio boot ok" -drive file="$work/v.img",if=virtio
v_out=$out
expect_boot "virtio boot ok" -drive file="$work/v.img",if=none,id=d0 \
	-device virtio-blk-pci,drive=d0,addr=6,serial=VMMSERIAL,num-queues=2
# the IDE disk first by default (-boot order=c names it); bootindex wins
expect_boot "ide boot ok" -hda "$work/ide.img" -drive file="$work/v.img",if=none,id=d0 \
	-device virtio-blk-pci,drive=d0
expect_boot "virtio boot ok" -hda "$work/ide.img" -drive file="$work/v.img",if=none,id=d0 \
	-device virtio-blk-pci,drive=d0,bootindex=0
for c in none directsync unsafe writethrough; do
	expect_boot "virtio boot ok" -drive file="$work/v.img",if=virtio,cache=$c
done
expect_boot "virtio boot ok" -drive file="$work/v.img",if=virtio,readonly=on
before=$(sha256sum <"$work/v.img")
expect_boot "virtio boot ok" -snapshot -drive file="$work/v.img",if=virtio
[ "$(sha256sum <"$work/v.img")" = "$before" ] || { echo "FAIL: -snapshot changed the image"; fail=1; }

if command -v qemu-system-x86_64 >/dev/null; then
	timeout 120 qemu-system-x86_64 -enable-kvm -nic none -m 512 -nographic \
		-device isa-debug-exit,iobase=0xf4,iosize=4 -drive file="$work/v.img",format=raw,if=virtio \
		</dev/null >"$work/qemu.out" 2>/dev/null
	qrc=$?
	if [ $qrc -ne 33 ] || [ "$(unflushed "$(cat "$work/qemu.out")")" != "$(unflushed "$v_out")" ]; then
		echo "FAIL: QEMU exit $qrc, serial output differs:"; cat -v "$work/qemu.out"; fail=1
	fi
else
	echo "note: qemu-system-x86_64 not installed, no side-by-side comparison"
fi

# the monitor's view, before the guest runs (-S)
mon=$(printf 'info block\ninfo pci\nquit\n' | timeout 30 "$VMM" -m 64 -S -serial none -monitor stdio \
	-drive file="$work/v.img",if=none,id=d0,cache=none,readonly=on \
	-device virtio-blk-pci,drive=d0,addr=5 2>&1)
for want in "d0: $work/v.img (raw, read-only)" "Cache mode:       writeback, direct" \
	"Size:             4194304 bytes" "flush_operations=0" "Bus  0, device   5, function 0:" \
	"SCSI controller: PCI device 1af4:1042" "BAR4: 32 bit memory" "MSI-X: disabled, 2 vectors"; do
	case "$mon" in *"$want"*) ;; *) echo "FAIL: monitor output lacks '$want':"; echo "$mon"; fail=1 ;; esac
done

# one-line errors
for bad in "-device virtio-blk-pci" "-device virtio-blk-pci,drive=nope" \
	"-drive file=$work/v.img,if=none,id=d0 -device virtio-blk-pci,drive=d0,addr=1" \
	"-drive file=$work/v.img,if=none,id=d0 -device virtio-blk-pci,drive=d0,num-queues=99" \
	"-drive file=$work/v.img,if=none,id=d0 -device virtio-blk-pci,drive=d0 -device virtio-blk-pci,drive=d0" \
	"-drive file=$work/v.img,if=none" "-drive file=/nonexistent.img,if=virtio" \
	"-drive file=$work/v.img,if=scsi" "-drive file=$work/v.img,if=virtio,cache=fast"; do
	# shellcheck disable=SC2086
	err=$(run $bad 2>&1 >/dev/null); rc=$?
	if [ $rc -eq 0 ] || [ $rc -eq 33 ] || [ "$(printf '%s\n' "$err" | wc -l)" -ne 1 ]; then
		echo "FAIL: $bad: exit $rc, '$err'"; fail=1
	fi
done
[ $fail -eq 0 ] && echo "seabios-virtio: ok"
exit $fail
