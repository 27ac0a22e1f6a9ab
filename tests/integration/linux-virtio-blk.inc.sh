#!/bin/sh
# linux-virtio-blk.inc.sh vmm|qemu normal|durable — the minimal Linux guest
# with an ext4 image (made on the host with `mke2fs -t ext4 -d`) as its
# virtio-blk disk (`-drive file=IMG,if=virtio,format=raw`):
#
#   normal   the guest mounts /dev/vda, checks a host file's sha256, copies
#            it and writes a file, syncs, unmounts, checks that the request
#            queue's MSI-X vector took interrupts, powers off (status 0);
#            the host reads both back with debugfs and runs e2fsck -fn.
#   durable  the guest copies the file with fsync (dd conv=fsync: a
#            virtio-blk FLUSH), prints a marker; the host kills the VMM
#            with SIGKILL as soon as it sees it, replays the journal
#            (e2fsck -fy) and the copy must be complete.
#
# BLK_AIO=threads|io_uring gives vmm's drive that aio= (default: vmm's own).
# Under qemu: qemu-system-x86_64 -enable-kvm with the CPU bench/linux-boot.sh
# uses. Slow on nested hosts (guest ring 0 is emulated): generous timeout.
set -eu
side=${1:-vmm}
mode=${2:-normal}
vmm=${VMM:-build/vmm}
limit=${LINUX_TIMEOUT:-900}
[ -e /dev/kvm ] || { echo "skip: no /dev/kvm"; exit 77; }
if [ "$side" = qemu ] && ! command -v qemu-system-x86_64 >/dev/null; then
	echo "skip: no qemu-system-x86_64"
	exit 77
fi
export PATH="$PATH:/sbin:/usr/sbin"
for t in mke2fs debugfs e2fsck; do
	command -v $t >/dev/null || { echo "FAIL: $t missing (e2fsprogs)"; exit 1; }
done
dir=$(sh scripts/guest-kernel.sh)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/linux-virtio-blk.XXXXXX")
pid=
# BLK_KEEP=DIR: a failed run leaves its image, file and console there.
trap 'rc=$?; [ -z "$pid" ] || kill -9 $pid 2>/dev/null || true
	[ $rc = 0 ] || [ -z "${BLK_KEEP:-}" ] || cp -r "$tmp" "$BLK_KEEP/" 2>/dev/null || true
	rm -rf "$tmp"' EXIT

# The file system: one random file in a directory tree, 32 MiB of ext4.
mkdir -p "$tmp/root/sub"
head -c 300000 /dev/urandom >"$tmp/root/sub/f1"
want=$(sha256sum <"$tmp/root/sub/f1" | cut -d' ' -f1)
mke2fs -q -F -t ext4 -E lazy_itable_init=0,lazy_journal_init=0 -d "$tmp/root" \
	"$tmp/disk.img" 32M >/dev/null

mkfifo "$tmp/in"
t0=$(date +%s)
append=$(cat tests/guest/linux/cmdline)
if [ "$side" = qemu ]; then
	qemu-system-x86_64 -enable-kvm -m 128 -nographic -serial stdio -monitor none \
		-no-reboot -cpu qemu64,-smap,-smep,-xsave,-popcnt \
		-drive "file=$tmp/disk.img,if=virtio,format=raw" \
		-kernel "$dir/bzImage" -initrd "$dir/initramfs.cpio" -append "$append" \
		<"$tmp/in" >"$tmp/out" 2>&1 &
else
	"$vmm" -m 128 -nographic -serial stdio -monitor none -no-reboot \
		-drive "file=$tmp/disk.img,if=virtio,format=raw${BLK_AIO:+,aio=$BLK_AIO}" \
		-kernel "$dir/bzImage" -initrd "$dir/initramfs.cpio" -append "$append" \
		<"$tmp/in" >"$tmp/out" 2>&1 &
fi
pid=$!
who=$side
exec 3>"$tmp/in"

. "$(dirname "$0")/linux-console.inc.sh"

# file_sha PATH: sha256 of the file in the image, read through debugfs.
file_sha() {
	debugfs -R "cat $1" "$tmp/disk.img" 2>/dev/null | sha256sum | cut -d' ' -f1
}

wait_for VMM-GUEST-READY
echo "$side: init reached after $(($(date +%s) - t0)) s"
echo 'mkdir -p /mnt; mount -t ext4 /dev/vda /mnt; echo MOUNTED=$(grep -c " /mnt ext4 " /proc/mounts)' >&3
wait_for "MOUNTED=[0-9]"
grep -q "MOUNTED=1" "$tmp/out" || {
	echo 'cat /proc/partitions; ls /sys/bus/pci/devices; dmesg | grep -iE "virtio|pci"; echo DIAG-$((6*7))' >&3
	wait_for DIAG-42
	tail -30 "$tmp/out"
	echo "FAIL: /dev/vda did not mount"
	exit 1
}
echo 'echo GUEST-SHA=$(sha256sum </mnt/sub/f1)' >&3
# the whole hash: the console writes the line a few bytes at a time, and
# a check on a partial line fails with the right bytes on the disk
wait_for "GUEST-SHA=[0-9a-f]\{64\}"
grep -q "GUEST-SHA=$want" "$tmp/out" || { grep GUEST-SHA= "$tmp/out"; echo "FAIL: the guest reads other bytes than the host wrote"; exit 1; }

if [ "$mode" = durable ]; then
	# markers the typed command does not contain: the tty echoes a line
	# typed while the shell is still busy, and a marker in that echo
	# would have the VMM killed before dd even ran
	echo 'dd if=/mnt/sub/f1 of=/mnt/durable bs=64k conv=fsync 2>/dev/null && echo DURABLE-$((6*7))' >&3
	wait_for DURABLE-42
	kill -9 $pid
	wait $pid 2>/dev/null || true
	pid=
	echo "$side: killed with SIGKILL after the fsync, $(($(date +%s) - t0)) s"
	e2fsck -fy "$tmp/disk.img" >"$tmp/fsck" 2>&1 || [ $? -le 1 ] ||
		{ cat "$tmp/fsck"; echo "FAIL: e2fsck after the kill"; exit 1; }
	got=$(file_sha /durable)
	[ "$got" = "$want" ] || { echo "FAIL: /durable in the image is not what the guest fsynced"; exit 1; }
	echo "ok: $side durable: the fsynced file survived SIGKILL"
	exit 0
fi

echo 'cp /mnt/sub/f1 /mnt/copy && echo hello-from-guest >/mnt/hello && sync && umount /mnt && echo UMOUNTED-$((6*7))' >&3
wait_for UMOUNTED-42
# The completions came through MSI-X (PCI_MSI is in the guest config, and
# both VMMs offer MSI-X): a line per vector, the request queue's counted.
echo 'grep -E "virtio0-(config|req)" /proc/interrupts | sed "s/^/IRQ-LINE /"; echo IRQS-$((6*7))' >&3
wait_for IRQS-42
grep -Eq "^IRQ-LINE .* [1-9][0-9]* +PCI-MSI.*virtio0-req" "$tmp/out" ||
	{ grep "IRQ-LINE" "$tmp/out"; echo "FAIL: no MSI-X interrupts counted for virtio0's request queue"; exit 1; }
scan_dmesg_and_poweroff 'I/O error|EXT4-fs error'
pid=
grep -q "ERRORS=0" "$tmp/out" || { grep "^DMESG-ERROR" "$tmp/out"; echo "FAIL: kernel errors in dmesg"; exit 1; }
[ "$status" = 0 ] || { echo "FAIL: poweroff exit status $status"; exit 1; }
e2fsck -fn "$tmp/disk.img" >"$tmp/fsck" 2>&1 || { cat "$tmp/fsck"; echo "FAIL: e2fsck -fn"; exit 1; }
[ "$(file_sha /copy)" = "$want" ] || { echo "FAIL: /copy in the image differs from f1"; exit 1; }
[ "$(debugfs -R 'cat /hello' "$tmp/disk.img" 2>/dev/null)" = hello-from-guest ] ||
	{ echo "FAIL: /hello in the image is not what the guest wrote"; exit 1; }
echo "ok: $side: ext4 on virtio-blk read, written, read back on the host after $(($(date +%s) - t0)) s"
