#!/bin/sh
# linux-usb.sh — the USB controllers libvirt adds, with Debian's own kernel
# and its uhci_hcd and xhci_hcd/xhci_pci modules (make demo's image, booted
# directly), spelt as libvirt 9.0 writes them:
#   01.2: piix3-usb-uhci (virt-install --machine pc)
#   05.0: qemu-xhci with p2=15,p3=15 (virt-install's q35 default)
# The drivers must bind and start the controllers (no "HC died", "halt
# failed" or timeouts in dmesg), the root hubs must show the ports the
# controllers advertise (2; 15 at 480 Mb/s and 15 at 5000 Mb/s), the xHCI
# must interrupt by MSI, and the idle root hubs must autosuspend and
# resume (uhci_hcd stops and restarts the controller for that). QEMU
# (-enable-kvm) runs the same guest and options as the reference.
# needs: native ring 0 (Linux guest; scripts/nested-kvm/place.sh)
set -u
VMM=${VMM:-build/vmm}
limit=${LINUX_USB_TIMEOUT:-600}
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
guest=$(sh scripts/demo/image.sh) || { echo "FAIL: no Debian guest image (scripts/demo/image.sh)"; exit 1; }
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$work"' EXIT

. tests/integration/demo-guest.inc.sh

# The root hub on PCI function $1 with $2 Mb/s: "maxchild runtime_status".
hub() {
	ask "HUB$3" "for h in /sys/bus/pci/devices/0000:00:$1/usb*; do [ \$(cat \$h/speed) = $2 ] && echo \$(cat \$h/maxchild) \$(cat \$h/power/runtime_status); done"
}

run() {
	side=$1
	shift
	rm -f "$work/in" "$work/out" "$work/err"
	mkfifo "$work/in"
	t0=$(date +%s)
	"$@" -m 512 -smp 2 -nographic -serial stdio -monitor none -no-reboot -net none \
		-kernel "$guest/kernel" -initrd "$guest/initrd.cpio.gz" \
		-append "$(cat tests/guest/linux/cmdline)" \
		-device '{"driver":"piix3-usb-uhci","id":"usb","bus":"pci.0","addr":"0x1.0x2"}' \
		-device '{"driver":"qemu-xhci","p2":15,"p3":15,"id":"usb1","bus":"pci.0","addr":"0x5"}' \
		<"$work/in" >"$work/out" 2>"$work/err" &
	pid=$!
	exec 3>"$work/in"
	wait_for "^vmm demo: a shell"
	drv=$(ask DRIVERS "for f in 01.2 05.0; do basename \$(readlink /sys/bus/pci/devices/0000:00:\$f/driver); done | tr '\\n' ' '")
	[ "$drv" = "uhci_hcd xhci_hcd " ] || fail "drivers bound: '$drv', want uhci_hcd and xhci_hcd"
	bad=$(ask BAD "dmesg | grep -iE 'HC died|halt failed|not stopped|timeout|xhci.*error|uhci.*error' | head -3")
	[ -z "$bad" ] || fail "dmesg: $bad"
	msi=$(ask MSI "grep -c 'MSI.*xhci_hcd' /proc/interrupts")
	[ "$msi" -ge 1 ] || fail "xhci_hcd has no MSI line in /proc/interrupts"
	# let every idle root hub autosuspend (usbcore's default delay is 2 s)
	sleep 6
	u=$(hub 01.2 12 U)
	x2=$(hub 05.0 480 X2)
	x3=$(hub 05.0 5000 X3)
	[ "$u" = "2 suspended" ] || fail "UHCI root hub: '$u', want '2 suspended'"
	[ "$x2" = "15 suspended" ] || fail "xHCI USB 2 root hub: '$x2', want '15 suspended'"
	[ "$x3" = "15 suspended" ] || fail "xHCI USB 3 root hub: '$x3', want '15 suspended'"
	# and wake them: uhci_hcd restarts the controller, xhci_hcd its ports
	woke=$(ask WAKE "for c in /sys/bus/usb/devices/usb*/power/control; do echo on >\$c; done; sleep 1; cat /sys/bus/usb/devices/usb*/power/runtime_status | sort -u")
	[ "$woke" = active ] || fail "root hubs after waking: '$woke'"
	bad=$(ask BAD2 "dmesg | grep -iE 'HC died|halt failed|not stopped|timeout|xhci.*error|uhci.*error' | head -3")
	[ -z "$bad" ] || fail "dmesg after suspend and resume: $bad"
	power_off
	echo "linux-usb: $side ok in $(($(date +%s) - t0)) s: $drv; root hubs $u, $x2, $x3 then $woke"
}

cpu=
# KVMs that emulate guest ring 0 (kvm_pvm) need the conservative CPU model.
[ ! -d /sys/module/kvm_pvm ] || cpu="-cpu baseline"
# shellcheck disable=SC2086
run vmm "$VMM" $cpu
# vmm notes each unclaimed port once (Debian's kernel probes the Super I/O
# ports); anything else on stderr is a complaint.
if grep -v '^vmm: guest \(read\|wrote\) unclaimed io address ' "$work/err" | grep -q .; then
	echo "FAIL: vmm complained on stderr:"; cat "$work/err"; exit 1
fi
command -v qemu-system-x86_64 >/dev/null ||
	{ echo "FAIL: no qemu-system-x86_64 for the reference run (scripts/install-deps.sh check)"; exit 1; }
run qemu qemu-system-x86_64 -enable-kvm -cpu qemu64,-smap,-smep,-xsave,-popcnt -vga none
echo "linux-usb: ok"
