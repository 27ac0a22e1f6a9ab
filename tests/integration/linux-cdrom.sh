#!/bin/sh
# linux-cdrom.sh — the minimal Linux guest (ata_piix, sr, iso9660) with an
# ISO made by xorriso in `-cdrom`: it mounts /dev/sr0 and a file's sha256
# must be the host's; QEMU runs the same guest and ISO first, as the
# reference. Under vmm the test then changes the medium over QMP (what
# virsh change-media sends) while the guest has it unmounted: the tray
# moves (DEVICE_TRAY_MOVED), and the guest's next mount sees the second
# ISO's file. Slow on nested hosts (guest ring 0 is emulated).
set -eu
vmm=${VMM:-build/vmm}
limit=${LINUX_TIMEOUT:-900}
[ -e /dev/kvm ] || { echo "skip: no /dev/kvm"; exit 77; }
for t in xorriso qemu-system-x86_64 python3; do
	command -v $t >/dev/null || { echo "FAIL: $t missing (scripts/install-deps.sh check)"; exit 1; }
done
dir=$(sh scripts/guest-kernel.sh)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/linux-cdrom.XXXXXX")
pid=
trap '[ -z "$pid" ] || kill -9 $pid 2>/dev/null || true; rm -rf "$tmp"' EXIT

for n in 1 2; do
	mkdir -p "$tmp/iso$n/sub"
	head -c $((200000 + n * 70001)) /dev/urandom >"$tmp/iso$n/sub/f$n"
	xorriso -as mkisofs -quiet -R -o "$tmp/cd$n.iso" "$tmp/iso$n" 2>/dev/null
done
want1=$(sha256sum <"$tmp/iso1/sub/f1" | cut -d' ' -f1)
want2=$(sha256sum <"$tmp/iso2/sub/f2" | cut -d' ' -f1)
append=$(cat tests/guest/linux/cmdline)

. "$(dirname "$0")/linux-console.inc.sh"

# mount_and_hash N: the guest mounts the CD and prints file N's sha256.
mount_and_hash() {
	# libata probes the ports asynchronously: sr0 may come after init
	echo 'i=0; while [ ! -b /dev/sr0 ] && [ $i -lt 60 ]; do sleep 1; i=$((i+1)); done' >&3
	echo "mkdir -p /mnt; mount -t iso9660 -o ro /dev/sr0 /mnt; echo SHA$1=\$(sha256sum /mnt/sub/f$1 | cut -c1-64)=END" >&3
	wait_for "SHA$1=.*=END"
}

for side in qemu vmm; do
	rm -f "$tmp/in"
	mkfifo "$tmp/in"
	t0=$(date +%s)
	if [ $side = qemu ]; then
		qemu-system-x86_64 -enable-kvm -m 128 -nographic -serial stdio -monitor none \
			-no-reboot -cpu qemu64,-smap,-smep,-xsave,-popcnt -cdrom "$tmp/cd1.iso" \
			-kernel "$dir/bzImage" -initrd "$dir/initramfs.cpio" -append "$append" \
			<"$tmp/in" >"$tmp/out" 2>&1 &
	else
		"$vmm" -m 128 -nographic -serial stdio -monitor none -no-reboot \
			-qmp "unix:$tmp/qmp.sock,server=on,wait=off" -cdrom "$tmp/cd1.iso" \
			-kernel "$dir/bzImage" -initrd "$dir/initramfs.cpio" -append "$append" \
			<"$tmp/in" >"$tmp/out" 2>&1 &
	fi
	pid=$!
	who=$side
	exec 3>"$tmp/in"
	wait_for VMM-GUEST-READY
	mount_and_hash 1
	grep -q "SHA1=$want1=END" "$tmp/out" || {
		echo 'dmesg | grep -iE "ata|scsi|sr[0-9]|piix|cdrom|0000:00:01"; echo DIAG-$((6*7))' >&3
		wait_for DIAG-42
		tail -40 "$tmp/out"; echo "FAIL: $side: /dev/sr0's file is not the ISO's"; exit 1
	}
	echo "$side: the guest read the ISO's file in $(($(date +%s) - t0)) s"
	if [ $side = vmm ]; then
		echo 'umount /mnt; echo UNMOUNTED' >&3
		wait_for UNMOUNTED
		PYTHONPATH=tests/integration python3 - "$tmp/qmp.sock" "$tmp/cd2.iso" <<'PY' || {
import sys
from qmp_client import Qmp
q = Qmp(sys.argv[1])
q.ok("qmp_capabilities")
q.ok("blockdev-change-medium", id="ide1-cd0", filename=sys.argv[2], format="raw")
assert q.event("DEVICE_TRAY_MOVED")["data"]["tray-open"] is True
assert q.event("DEVICE_TRAY_MOVED")["data"]["tray-open"] is False
PY
			echo "FAIL: QMP blockdev-change-medium"; exit 1
		}
		mount_and_hash 2
		grep -q "SHA2=$want2=END" "$tmp/out" || {
			tail -30 "$tmp/out"; echo "FAIL: the guest does not see the new medium"; exit 1
		}
	fi
	scan_dmesg_and_poweroff
	grep -q "ERRORS=0" "$tmp/out" || { grep DMESG-ERROR "$tmp/out"; echo "FAIL: $side: kernel errors"; exit 1; }
	pid=
	exec 3>&-
done
echo "linux-cdrom: ok"
