#!/bin/sh
# q35-libvirt-guest.sh — the devices of virt-install's default q35 domain,
# spelt as libvirt 9.0 passes them (the -device/-netdev/-object lines
# tests/integration/virt-install.sh has libvirt write: fourteen
# pcie-root-ports, qemu-xhci, virtio-serial with the guest agent's port,
# virtio-blk, virtio-net on user networking, balloon and rng, each behind
# its own root port), with Debian's own kernel and modules (make demo's
# image, booted directly). Every PCI function must be bound to the same
# driver as under QEMU -M q35 with the same lines: the list of
# "vendor:device driver" pairs the guest's sysfs shows is compared whole,
# and the NIC behind its root port must get its address by DHCP. Once up,
# vmm's RSS beyond guest RAM (smaps: every mapping but the 512 MiB one)
# must stay within 8 MiB, none of it transparent huge pages.
# needs: native ring 0 (Linux guest; scripts/nested-kvm/place.sh)
set -u
VMM=${VMM:-build/vmm}
limit=${Q35_GUEST_TIMEOUT:-600}
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
guest=$(sh scripts/demo/image.sh) || { echo "FAIL: no Debian guest image (scripts/demo/image.sh)"; exit 1; }
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$work"' EXIT
truncate -s 64M "$work/disk.img"

. tests/integration/demo-guest.inc.sh

. tests/integration/q35-libvirt-args.inc.sh

# vmm's own memory once the guest is up, from smaps: every mapping but
# the 512 MiB of guest RAM. At most 8 MiB (bench/README.md's q35 goal;
# 5 MiB nested, 14.6 MiB when the -kernel image was kept on the heap),
# and no transparent huge page outside guest RAM (a thread stack spanning
# an aligned 2 MiB range got a whole one on hosts whose THP is "always").
check_rss() {
	set -- $(awk '/^Size:/ { size = $2 } /^Rss:/ { if (size < 524288) rss += $2 }
		/^AnonHugePages:/ { if (size < 524288) thp += $2 } END { print rss + 0, thp + 0 }' \
		"/proc/$pid/smaps")
	echo "q35-libvirt-guest: vmm RSS beyond guest RAM $1 KiB, $2 KiB of it huge pages"
	[ "$1" -le 8192 ] || fail "RSS beyond guest RAM is $1 KiB, over 8 MiB"
	[ "$2" -eq 0 ] || fail "$2 KiB of transparent huge pages outside guest RAM"
}

run() {
	side=$1
	shift
	rm -f "$work/in" "$work/out" "$work/err" "$work/ga.sock"
	mkfifo "$work/in"
	t0=$(date +%s)
	"$@" -nographic -serial stdio -monitor none -no-reboot \
		-kernel "$guest/kernel" -initrd "$guest/initrd.cpio.gz" \
		-append "$(cat tests/guest/linux/cmdline)" \
		<"$work/in" >"$work/out" 2>"$work/err" &
	pid=$!
	exec 3>"$work/in"
	wait_for "^vmm demo: a shell"
	grep -aq "^vmm demo: eth0 10\.0\.2\.15/24" "$work/out" || fail "eth0 got no address by DHCP"
	[ "$side" != vmm ] || check_rss
	ask DRV "for d in /sys/bus/pci/devices/*; do dr=\$(readlink \$d/driver); echo \$(cat \$d/vendor):\$(cat \$d/device)=\${dr##*/}; done | sort | uniq -c | tr -s ' \\n' '  '" >"$work/$side.drv"
	power_off
	echo "q35-libvirt-guest: $side in $(($(date +%s) - t0)) s: $(cat "$work/$side.drv")"
}

cpu=
[ ! -d /sys/module/kvm_pvm ] || cpu="-cpu baseline"
# shellcheck disable=SC2086
run vmm "$VMM" $cpu "$@"
for want in "0x1b36:0x000c=pcieport" "0x1b36:0x000d=xhci_hcd" "0x1af4:0x1043=virtio-pci" \
	"0x1af4:0x1042=virtio-pci" "0x1af4:0x1041=virtio-pci" "0x1af4:0x1045=virtio-pci" \
	"0x1af4:0x1044=virtio-pci" "0x8086:0x2922=ahci"; do
	grep -q "$want" "$work/vmm.drv" || { side=vmm; fail "no $want in: $(cat "$work/vmm.drv")"; }
done
grep -q "14 0x1b36:0x000c=pcieport" "$work/vmm.drv" ||
	{ side=vmm; fail "not all 14 root ports bound to pcieport: $(cat "$work/vmm.drv")"; }
command -v qemu-system-x86_64 >/dev/null ||
	{ echo "FAIL: no qemu-system-x86_64 for the reference run (scripts/install-deps.sh check)"; exit 1; }
# QEMU's q35 hot-plugs behind root ports through ACPI by default, and with
# a directly booted kernel the ports then report no card (as q35-linux.sh
# found): native PCIe hot-plug, as vmm's ports have.
run qemu qemu-system-x86_64 -enable-kvm -cpu qemu64,-smap,-smep,-xsave,-popcnt -vga none \
	-global ICH9-LPC.acpi-pci-hotplug-with-bridge-support=off "$@"
[ "$(cat "$work/vmm.drv")" = "$(cat "$work/qemu.drv")" ] ||
	{ echo "FAIL: drivers differ: vmm '$(cat "$work/vmm.drv")', QEMU '$(cat "$work/qemu.drv")'"; exit 1; }
echo "q35-libvirt-guest: ok"
