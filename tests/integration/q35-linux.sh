#!/bin/sh
# q35-linux.sh — -M q35 with Debian's own kernel (make demo's image, booted
# directly), as the ECAM window, the ICH9 and its interrupt routing look
# to Linux:
#   - the MCFG table is there and Linux accepts the ECAM window it names
#     (reserved in e820, in /proc/iomem as PCI MMCONFIG / ECAM);
#   - 00:00.0 is the Q35 MCH (8086:29c0), 00:1f.0 the ICH9 LPC bridge
#     (8086:2918), 00:1f.3 its SMBus controller (8086:2930);
#   - PCI0 is a PCI Express root (PNP0A08);
#   - with pci=nomsi, virtio-rng-pci in slot 6 binds virtio-pci and its
#     INTA arrives at I/O APIC input 22 (PIRQG: the _PRT's q35 routing),
#     so /dev/hwrng gives bytes;
#   - a pcie-root-port at 00:02.0 as libvirt writes it binds pcieport and
#     its hot-plug service (pciehp), and the virtio-rng-pci behind it
#     (bus=pci.1) is on bus 01, a PCIe endpoint, bound to virtio-pci.
#     (pcie-hotplug.sh checks that vmm's _OSC alone is enough; here the
#     guest gets pcie_ports=native all the same); QEMU's
#     q35 hands hot-plug to ACPI (its ports then report no card) unless
#     acpi-pci-hotplug-with-bridge-support=off, which it gets.
# QEMU (-enable-kvm -M q35) runs the same guest and options as the
# reference, and both must answer the same.
# needs: native ring 0 (Linux guest; scripts/nested-kvm/place.sh)
set -u
VMM=${VMM:-build/vmm}
limit=${Q35_LINUX_TIMEOUT:-600}
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
guest=$(sh scripts/demo/image.sh) || { echo "FAIL: no Debian guest image (scripts/demo/image.sh)"; exit 1; }
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$work"' EXIT

. tests/integration/demo-guest.inc.sh

# run SIDE EXTRA-APPEND EMULATOR ARGS...
run() {
	side=$1 extra=$2
	shift 2
	rm -f "$work/in" "$work/out" "$work/err"
	mkfifo "$work/in"
	t0=$(date +%s)
	"$@" -M q35 -m 512 -smp 2 -nographic -serial stdio -monitor none -no-reboot -net none \
		-kernel "$guest/kernel" -initrd "$guest/initrd.cpio.gz" \
		-append "$(cat tests/guest/linux/cmdline) pci=nomsi $extra" \
		-device virtio-rng-pci,addr=0x6 \
		-device '{"driver":"pcie-root-port","port":16,"chassis":1,"id":"pci.1","bus":"pcie.0","multifunction":true,"addr":"0x2"}' \
		-device '{"driver":"virtio-rng-pci","id":"rng1","bus":"pci.1","addr":"0x0"}' \
		<"$work/in" >"$work/out" 2>"$work/err" &
	pid=$!
	exec 3>"$work/in"
	wait_for "^vmm demo: a shell"
	d=/sys/bus/pci/devices
	tables=$(ask TABLES "ls /sys/firmware/acpi/tables | tr '\\n' ' '")
	case " $tables " in *" MCFG "*) ;; *) fail "no MCFG in /sys/firmware/acpi/tables: $tables" ;; esac
	iomem=$(ask IOMEM "grep -iE 'MMCONFIG|ECAM' /proc/iomem | sed 's/^ *//' | tr -s ' '")
	case "$iomem" in b0000000-bfffffff*) ;; *) fail "ECAM not in /proc/iomem: '$iomem'" ;; esac
	mmcfg=$(ask MMCFG "dmesg | grep -c 'MMCONFIG.*not reserved\\|MMCONFIG.*disabled\\|Using configuration type 1 for extended'")
	[ "$mmcfg" = 0 ] || fail "Linux turned the ECAM window down ($mmcfg lines)"
	ids=$(ask IDS "for f in 00:00.0 00:1f.0 00:1f.3; do cat $d/0000:\$f/vendor $d/0000:\$f/device; done | tr '\\n' ' '")
	[ "$ids" = "0x8086 0x29c0 0x8086 0x2918 0x8086 0x2930 " ] || fail "chipset IDs: '$ids'"
	root=$(ask ROOT "cat /sys/bus/acpi/devices/PNP0A08:00/path")
	[ "$root" = "\\_SB_.PCI0" ] || fail "no PNP0A08 root: '$root'"
	drv=$(ask DRIVER "basename \$(readlink $d/0000:00:06.0/driver)")
	[ "$drv" = virtio-pci ] || fail "00:06.0 is bound to '$drv'"
	port=$(ask PORT "echo \$(basename \$(readlink $d/0000:00:02.0/driver)) \$(ls /sys/bus/pci_express/devices | grep -c '^0000:00:02.0:pcie004\$')")
	[ "$port" = "pcieport 1" ] || fail "root port driver and hot-plug service: '$port'"
	# pciehp may power the slot on and enumerate it again after boot (QEMU)
	behind=$(ask BEHIND "i=0; while [ ! -e $d/0000:01:00.0/driver ] && [ \$i -lt 30 ]; do sleep 1; i=\$((i+1)); done; echo \$(basename \$(readlink $d/0000:01:00.0/driver)) \$(cat $d/0000:01:00.0/device) \$(test -e $d/0000:01:00.0/current_link_width && echo pcie)")
	[ "$behind" = "virtio-pci 0x1044 pcie" ] || fail "the device behind the root port: '$behind'"
	n=$(ask BYTES "head -c 256 /dev/hwrng | wc -c")
	[ "$n" = 256 ] || fail "/dev/hwrng gave $n of 256 bytes"
	irq=$(ask IRQ "grep virtio /proc/interrupts | sed 's/.*IO-APIC *//' | cut -d' ' -f1 | sort -u | tr '\\n' ' '")
	[ "$irq" = "22-fasteoi " ] || fail "virtio-rng's interrupt is '$irq', not I/O APIC 22"
	power_off
	echo "q35-linux: $side ok in $(($(date +%s) - t0)) s: tables $tables; $iomem; irq $irq"
}

cpu=
[ ! -d /sys/module/kvm_pvm ] || cpu="-cpu baseline"
# shellcheck disable=SC2086
run vmm pcie_ports=native "$VMM" $cpu
if grep -v '^vmm: guest \(read\|wrote\) unclaimed \(io\|pio\) address ' "$work/err" | grep -q .; then
	echo "FAIL: vmm complained on stderr:"; cat "$work/err"; exit 1
fi
command -v qemu-system-x86_64 >/dev/null ||
	{ echo "FAIL: no qemu-system-x86_64 for the reference run (scripts/install-deps.sh check)"; exit 1; }
run qemu pcie_ports=native qemu-system-x86_64 -enable-kvm -cpu qemu64,-smap,-smep,-xsave,-popcnt -vga none \
	-global ICH9-LPC.acpi-pci-hotplug-with-bridge-support=off
echo "q35-linux: ok"
