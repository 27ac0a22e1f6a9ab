#!/bin/sh
# cdrom-boot.sh — an ISO made with Debian's xorriso and ISOLINUX boots
# from `-cdrom X.iso -boot d` through SeaBIOS's El Torito support, while a
# bootable SYSLINUX disk sits on -hda: ISOLINUX must come up from the CD
# (so the ATAPI drive answered SeaBIOS, and -boot d put it first; the disk
# would show SYSLINUX's banner instead), read its configuration file from
# the ISO 9660 file system (READ(10) through int 13h) and run cat.c32 on a
# marker file, also read from the CD. QEMU boots the same ISO and disk
# in the same test as the reference. Then the monitors: info block shows
# the drive, eject empties it, change puts the ISO back; over QMP the
# tray opens and closes with DEVICE_TRAY_MOVED, as virsh change-media does.
# The same on q35 (the CD on the ich9-ahci), its drive named as QEMU names it.
# needs: native ring 0 (QEMU, the reference, stops in ISOLINUX's IRET on
# kvm_pvm, which vmm completes itself: see seabios-syslinux.sh)
set -u
VMM=${VMM:-build/vmm}
limit=${CDROM_TIMEOUT:-300}
[ -e /dev/kvm ] || { echo "SKIP: no /dev/kvm"; exit 77; }
for t in xorriso syslinux mkfs.fat mcopy qemu-system-x86_64; do
	command -v $t >/dev/null || { echo "FAIL: $t missing (scripts/install-deps.sh check)"; exit 1; }
done
isolinux=/usr/lib/ISOLINUX/isolinux.bin
mods=/usr/lib/syslinux/modules/bios
[ -r $isolinux ] && [ -r $mods/cat.c32 ] || { echo "FAIL: isolinux missing (scripts/install-deps.sh check)"; exit 1; }
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$work"' EXIT

# the CD: ISOLINUX runs cat.c32 on the marker file (again and again)
mkdir -p "$work/iso/isolinux"
cp $isolinux $mods/ldlinux.c32 $mods/cat.c32 $mods/libcom32.c32 $mods/libutil.c32 \
	"$work/iso/isolinux/" || exit 1
printf 'SERIAL 0 115200\nDEFAULT mark\nPROMPT 0\nTIMEOUT 1\nLABEL mark\n  COM32 cat.c32\n  APPEND marker.txt\n' \
	>"$work/iso/isolinux/isolinux.cfg"
echo VMM-CDROM-ISOLINUX-CFG-READ >"$work/iso/isolinux/marker.txt"
xorriso -as mkisofs -quiet -o "$work/cd.iso" -b isolinux/isolinux.bin -c isolinux/boot.cat \
	-no-emul-boot -boot-load-size 4 -boot-info-table "$work/iso" 2>"$work/xorriso.log" || {
	cat "$work/xorriso.log"; exit 1
}
# the disk: SYSLINUX (its banner says so), which -boot d must skip
printf 'SERIAL 0 115200\nPROMPT 1\nTIMEOUT 0\n' >"$work/syslinux.cfg"
mkfs.fat -C -n VMMDISK "$work/disk.img" 16384 >/dev/null &&
	syslinux --install "$work/disk.img" &&
	mcopy -i "$work/disk.img" "$work/syslinux.cfg" ::syslinux.cfg || exit 1

. tests/integration/wait-output.inc.sh

wait_for() { # PATTERN FILE: until FILE matches, the process exits or the limit
	wait_output "$2" "$1\\|SYSLINUX 6" "$pid" $((limit - ($(date +%s) - t0))) || {
		[ $? != 124 ] || { echo "FAIL: no '$1' in ${limit}s"; tail -c 2000 "$2" | cat -v; exit 1; }
		echo "FAIL: exited before '$1'"; tail -c 2000 "$2" | cat -v; cat "$work/err"; exit 1
	}
	! grep -qs "SYSLINUX 6" "$2" || { echo "FAIL: the disk booted, not the CD"; exit 1; }
}

# QEMU, the reference
t0=$(date +%s)
qemu-system-x86_64 -enable-kvm -m 128 -display none -serial file:"$work/qemu.out" -monitor none \
	-no-reboot -hda "$work/disk.img" -cdrom "$work/cd.iso" -boot d 2>"$work/err" &
pid=$!
wait_for VMM-CDROM-ISOLINUX-CFG-READ "$work/qemu.out"
kill $pid; wait $pid 2>/dev/null
echo "cdrom-boot: QEMU booted the ISO in $(($(date +%s) - t0)) s"

mkfifo "$work/mon"
t0=$(date +%s)
"$VMM" -m 128 -nographic -serial file:"$work/out" -monitor stdio -no-reboot \
	-qmp "unix:$work/qmp.sock,server=on,wait=off" \
	-hda "$work/disk.img" -cdrom "$work/cd.iso" -boot d <"$work/mon" >"$work/mon.out" 2>"$work/err" &
pid=$!
exec 3>"$work/mon"
wait_for "ISOLINUX 6" "$work/out"
wait_for VMM-CDROM-ISOLINUX-CFG-READ "$work/out"
echo "cdrom-boot: vmm booted the ISO in $(($(date +%s) - t0)) s"

# the monitor's view and a media change
echo 'info block' >&3
wait_for 'ide1-cd0: .*cd.iso (raw, read-only)' "$work/mon.out"
echo 'eject ide1-cd0' >&3
echo 'info block' >&3
wait_for 'ide1-cd0: \[not inserted\]' "$work/mon.out"
wait_for 'tray open' "$work/mon.out"
echo "change ide1-cd0 $work/cd.iso" >&3
echo 'info block' >&3
sleep 1
[ "$(grep -c 'ide1-cd0: .*cd.iso' "$work/mon.out")" -ge 2 ] || {
	echo "FAIL: change did not put the ISO back"; cat "$work/mon.out"; exit 1
}
# QMP, as libvirt's change-media does it: the tray, the event, the medium
PYTHONPATH=tests/integration python3 - "$work/qmp.sock" "$work/cd.iso" >"$work/qmp.log" 2>&1 <<'PY' || {
import sys
from qmp_client import Qmp
q = Qmp(sys.argv[1])
q.ok("qmp_capabilities")
names = [c["name"] for c in q.ok("query-commands")]
for c in ("blockdev-change-medium", "eject", "blockdev-open-tray", "blockdev-close-tray"):
    assert c in names, c
cd = [b for b in q.ok("query-block") if b["device"] == "ide1-cd0"][0]
assert cd["removable"] and not cd["tray_open"] and cd["inserted"]["file"] == sys.argv[2], cd
q.ok("blockdev-open-tray", id="ide1-cd0")
ev = q.event("DEVICE_TRAY_MOVED")
assert ev["data"]["tray-open"] is True and ev["data"]["device"] == "ide1-cd0", ev
cd = [b for b in q.ok("query-block") if b["device"] == "ide1-cd0"][0]
assert cd["tray_open"], cd
q.ok("eject", device="ide1-cd0")
cd = [b for b in q.ok("query-block") if b["device"] == "ide1-cd0"][0]
assert "inserted" not in cd, cd
q.ok("blockdev-change-medium", id="ide1-cd0", filename=sys.argv[2], format="raw")
ev = q.event("DEVICE_TRAY_MOVED")
assert ev["data"]["tray-open"] is False, ev
cd = [b for b in q.ok("query-block") if b["device"] == "ide1-cd0"][0]
assert not cd["tray_open"] and cd["inserted"]["file"] == sys.argv[2], cd
r = q.cmd("eject", device="nosuch")
assert r["error"]["class"] == "DeviceNotFound", r
print("QMP-MEDIA-OK")
PY
	echo "FAIL: QMP media change"; cat "$work/qmp.log"; exit 1
}
# -hda probes the image, which QEMU warns about too: that line only
if grep -v "probing guessed raw" "$work/err" | grep -q .; then
	echo "FAIL: vmm complained on stderr:"; cat "$work/err"; exit 1
fi
kill $pid; wait $pid 2>/dev/null; pid=
exec 3>&-

# q35: the ich9-ahci holds -cdrom on port 2, which QEMU names ide2-cd0
# (each AHCI port is a bus); the CD boots there too, ahead of the
# SYSLINUX disk on port 0 (-boot d), both emulators list the drive under
# the same name and the tray moves by that name.
q35_run() { # NAME EMULATOR ARGS...: booted from the CD, QMP's removable drives in $work/NAME.names
	name=$1; shift
	t0=$(date +%s)
	"$@" -machine q35 -m 128 -display none -serial file:"$work/$name.out" -monitor none \
		-qmp "unix:$work/$name.sock,server=on,wait=off" -cdrom "$work/cd.iso" -boot d \
		-drive file="$work/disk.img",format=raw,if=ide,index=0 2>"$work/err" &
	pid=$!
	wait_for VMM-CDROM-ISOLINUX-CFG-READ "$work/$name.out"
	PYTHONPATH=tests/integration python3 - "$work/$name.sock" "$name" >"$work/$name.names" 2>&1 <<'PY' || {
import sys
from qmp_client import Qmp
q = Qmp(sys.argv[1])
q.ok("qmp_capabilities")
# QEMU's q35 also lists an empty sd0 no controller holds: the IDE ones only
names = [b["device"] for b in q.ok("query-block") if b["removable"] and b["device"].startswith("ide")]
print(" ".join(names))
if sys.argv[2] == "vmm":
    q.ok("blockdev-open-tray", id=names[0])
    ev = q.event("DEVICE_TRAY_MOVED")
    assert ev["data"]["tray-open"] is True and ev["data"]["device"] == names[0], ev
PY
		echo "FAIL: q35 $name: QMP"; cat "$work/$name.names"; exit 1
	}
	kill $pid; wait $pid 2>/dev/null; pid=
	echo "cdrom-boot: q35 $name booted the ISO in $(($(date +%s) - t0)) s, drives: $(cat "$work/$name.names")"
}
q35_run qemu qemu-system-x86_64 -enable-kvm
q35_run vmm "$VMM"
[ "$(cat "$work/vmm.names")" = "$(cat "$work/qemu.names")" ] || {
	echo "FAIL: q35: vmm names its CD-ROM drives '$(cat "$work/vmm.names")', QEMU '$(cat "$work/qemu.names")'"; exit 1
}
if grep -v "terminating on signal 15" "$work/err" | grep -q .; then
	echo "FAIL: vmm complained on stderr (q35):"; cat "$work/err"; exit 1
fi
echo "cdrom-boot: ok"
