#!/bin/sh
# ahci-linux.sh — the ICH9 AHCI controller with Debian's own kernel and its
# ahci driver (make demo's image, booted directly), spelled as libvirt
# writes SATA: -device ahci at slot 5, a disk on sata0.0 (-drive if=none +
# ide-hd) and a CD-ROM on sata0.1 (JSON -blockdev file/raw nodes + JSON
# ide-cd). The guest must bind ahci to 00:05.0 with MSI, read the disk
# (sha256 of its first 4 MiB = the host file's), write 1 MiB at 8 MiB
# (after power-off, the host file's bytes there have the sha256 the guest
# printed), read them back past the page cache, and mount the CD-ROM
# (iso9660) and read a file whose sha256 is the host's. QEMU
# (-enable-kvm) runs the same guest and options as the reference.
# needs: native ring 0 (Linux guest; scripts/nested-kvm/place.sh)
set -u
VMM=${VMM:-build/vmm}
limit=${AHCI_TIMEOUT:-900}
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
command -v xorriso >/dev/null || { echo "FAIL: xorriso missing (scripts/install-deps.sh check)"; exit 1; }
guest=$(sh scripts/demo/image.sh) || { echo "FAIL: no Debian guest image (scripts/demo/image.sh)"; exit 1; }
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$work"' EXIT

mkdir -p "$work/iso/sub"
head -c 300007 /dev/urandom >"$work/iso/sub/file"
xorriso -as mkisofs -quiet -R -o "$work/cd.iso" "$work/iso" 2>/dev/null
cd_sha=$(sha256sum <"$work/iso/sub/file" | cut -c1-64)

# fd 4 is the test's stdout, also inside ask's command substitutions,
# whose failures the callers pass on with || exit 1
exec 4>&1
. tests/integration/demo-guest.inc.sh
# fail writes to fd 4 (stdout is captured here)
fail() {
	{
		echo "FAIL: $side: $*"
		tail -c 6000 "$work/out" | cat -v
		cat "$work/err"
	} >&4
	exit 1
}

run() {
	side=$1
	shift
	rm -f "$work/in" "$work/out" "$work/err"
	head -c $((16 << 20)) /dev/urandom >"$work/disk.img"
	disk_sha=$(head -c $((4 << 20)) "$work/disk.img" | sha256sum | cut -c1-64)
	mkfifo "$work/in"
	t0=$(date +%s)
	"$@" -m 512 -smp 2 -nographic -serial stdio -monitor none -no-reboot -net none \
		-kernel "$guest/kernel" -initrd "$guest/initrd.cpio.gz" \
		-append "$(cat tests/guest/linux/cmdline)" \
		-device ahci,id=sata0,addr=0x5 \
		-drive "if=none,id=d0,file=$work/disk.img,format=raw" \
		-device ide-hd,drive=d0,bus=sata0.0 \
		-blockdev "{\"driver\":\"file\",\"filename\":\"$work/cd.iso\",\"node-name\":\"cd-file\",\"read-only\":true}" \
		-blockdev '{"node-name":"cd-format","read-only":true,"driver":"raw","file":"cd-file"}' \
		-device '{"driver":"ide-cd","bus":"sata0.1","drive":"cd-format","id":"sata0-0-1"}' \
		<"$work/in" >"$work/out" 2>"$work/err" &
	pid=$!
	exec 3>"$work/in"
	wait_for "^vmm demo: a shell"
	drv=$(ask DRIVER "basename \$(readlink /sys/bus/pci/devices/0000:00:05.0/driver)") || exit 1
	[ "$drv" = ahci ] || fail "00:05.0 is driven by '$drv', not ahci"
	msi=$(ask MSI "grep -c 'PCI-MSI.*ahci' /proc/interrupts") || exit 1
	[ "$msi" -ge 1 ] 2>/dev/null || fail "ahci does not use MSI (/proc/interrupts: $msi)"
	# libata probes the ports asynchronously: the disks may come after init
	echo 'i=0; while [ ! -b /dev/sda ] || [ ! -b /dev/sr0 ]; do [ $i -lt 60 ] || break; sleep 1; i=$((i+1)); done; [ -b /dev/sda ] && [ -b /dev/sr0 ] || dmesg | grep -iE "ata[0-9]|ahci|scsi"' >&3
	devs=$(ask DEVS "ls /dev/sda /dev/sr0 2>&1 | tr '\\n' ' '") || exit 1
	[ "$devs" = "/dev/sda /dev/sr0 " ] || fail "no /dev/sda and /dev/sr0 ($devs)"
	got=$(ask READ "head -c 4194304 /dev/sda | sha256sum | cut -c1-64") || exit 1
	[ "$got" = "$disk_sha" ] || fail "the disk's first 4 MiB hash to '$got', not $disk_sha"
	wrote=$(ask WRITE "head -c 1048576 /dev/urandom >/tmp/w && dd if=/tmp/w of=/dev/sda bs=65536 seek=128 conv=fsync 2>/dev/null && sha256sum </tmp/w | cut -c1-64") || exit 1
	back=$(ask REREAD "dd if=/dev/sda bs=65536 skip=128 count=16 iflag=direct 2>/dev/null | sha256sum | cut -c1-64") || exit 1
	[ "$back" = "$wrote" ] || fail "the written MiB reads back as '$back', not '$wrote'"
	cd=$(ask CD "mkdir -p /mnt && mount -t iso9660 -o ro /dev/sr0 /mnt && sha256sum </mnt/sub/file | cut -c1-64") || exit 1
	[ "$cd" = "$cd_sha" ] || fail "the CD-ROM's file hashes to '$cd', not $cd_sha"
	power_off
	host=$(dd if="$work/disk.img" bs=65536 skip=128 count=16 2>/dev/null | sha256sum | cut -c1-64)
	[ "$host" = "$wrote" ] || fail "the host file holds '$host' where the guest wrote '$wrote'"
	echo "ahci-linux: $side ok in $(($(date +%s) - t0)) s (disk read/written, CD-ROM mounted)"
}

cpu=
[ ! -d /sys/module/kvm_pvm ] || cpu="-cpu baseline"
# shellcheck disable=SC2086
run vmm "$VMM" $cpu
if grep -v '^vmm: guest \(read\|wrote\) unclaimed io address ' "$work/err" | grep -q .; then
	echo "FAIL: vmm complained on stderr:"; cat "$work/err"; exit 1
fi
command -v qemu-system-x86_64 >/dev/null ||
	{ echo "FAIL: no qemu-system-x86_64 for the reference run (scripts/install-deps.sh check)"; exit 1; }
run qemu qemu-system-x86_64 -enable-kvm -cpu qemu64,-smap,-smep,-xsave,-popcnt -vga none
echo "ahci-linux: ok"
