#!/bin/sh
# seabios-acpi.sh — ACPI for a disk booted through SeaBIOS, with Debian's
# own kernel: SYSLINUX on the IDE disk loads Debian's packaged kernel and
# make demo's busybox initramfs (its virtio and button modules, acpid).
# The guest must find the tables SeaBIOS installed from vmm's fw_cfg table
# loader (FACP, APIC, DSDT with a _PRT), bring up its PCI root bridge from
# ACPI, see both CPUs of the MADT and the pvpanic device (QEMU0001), take
# 10.0.2.15 by DHCP on the default NIC, hear the power button QMP
# system_powerdown presses, and power off through ACPI S5 so that the VMM
# exits with status 0. QEMU (-enable-kvm) boots the same disk through its
# SeaBIOS as the reference.
# needs: native ring 0 (Linux guest; scripts/nested-kvm/place.sh)
set -u
VMM=${VMM:-build/vmm}
limit=${SEABIOS_ACPI_TIMEOUT:-900}
for t in syslinux mkfs.fat mcopy python3; do
	command -v $t >/dev/null || { echo "FAIL: $t missing (scripts/install-deps.sh check)"; exit 1; }
done
guest=debian
. tests/integration/seabios-guest.inc.sh
guest=$kdir

img=$work/disk.img
cat >"$work/syslinux.cfg" <<CFG
SERIAL 0 115200
DEFAULT linux
PROMPT 0
TIMEOUT 0
LABEL linux
  KERNEL vmlinuz
  INITRD initrd
  APPEND $(cat tests/guest/linux/cmdline)
CFG
mkfs.fat -C -n VMMBOOT "$img" 65536 >/dev/null &&
	syslinux --install "$img" &&
	mcopy -i "$img" "$work/syslinux.cfg" ::syslinux.cfg &&
	mcopy -i "$img" "$guest/kernel" ::vmlinuz &&
	mcopy -i "$img" "$guest/initrd.cpio.gz" ::initrd || exit 1

# Press the power button over QMP.
powerdown() {
	python3 - "$1" <<'PY' || { echo "FAIL: QMP system_powerdown"; exit 1; }
import sys
sys.path.insert(0, "tests/integration")
from qmp_client import Qmp
q = Qmp(sys.argv[1])
assert "return" in q.cmd("qmp_capabilities")
r = q.cmd("system_powerdown")
assert "return" in r, r
PY
}

# ask WHAT COMMAND: run COMMAND in the guest's shell; its output is awaited
# as "WHAT: ...END" (the echoed command line holds WHAT%s, not WHAT:).
ask() {
	printf '%s\n' "printf '%s: %s END\\n' $1 \"\$($2)\"" >&3
	wait_for "^$1: .* END"
}

# run SIDE COMMAND...: boot the disk, check what the guest sees, press the
# button, expect the guest's S5 power-off to end the process with status 0.
run() {
	side=$1
	shift
	rm -f "$work/in" "$work/out" "$work/err" "$work/qmp"
	mkfifo "$work/in"
	t0=$(date +%s)
	"$@" -m 512 -smp 2 -nographic -serial stdio -monitor none -no-reboot -drive file="$img",format=raw,if=ide -device pvpanic \
		-qmp unix:"$work/qmp",server=on,wait=off <"$work/in" >"$work/out" 2>"$work/err" &
	pid=$!
	exec 3>"$work/in"
	wait_for "^vmm demo: a shell"
	grep -aq "^vmm demo: Debian's kernel .*, 2 vCPUs" "$work/out" || {
		echo "FAIL: $side: the guest did not see the MADT's 2 CPUs"
		grep -a "^vmm demo" "$work/out"; exit 1
	}
	grep -aq '^vmm demo: eth0 10.0.2.15/24' "$work/out" || {
		echo "FAIL: $side: no DHCP address on the default NIC"
		grep -a "^vmm demo" "$work/out"; exit 1
	}
	ask TABLES 'ls /sys/firmware/acpi/tables | sort | tr "\n" " "'
	grep -aq "^TABLES: .*APIC .*DSDT .*FACP " "$work/out" || {
		echo "FAIL: $side: the guest lacks FACP, APIC or DSDT:"
		grep -a "^TABLES: " "$work/out"; exit 1
	}
	ask PRT 'grep -c _PRT /sys/firmware/acpi/tables/DSDT'
	grep -aq "^PRT: [1-9]" "$work/out" || { echo "FAIL: $side: the DSDT has no _PRT"; exit 1; }
	ask ROOT 'dmesg | grep -c "ACPI: PCI Root Bridge \[PCI0\]"'
	grep -aq "^ROOT: [1-9]" "$work/out" || {
		echo "FAIL: $side: Linux found no PCI root bridge in ACPI"; exit 1
	}
	ask PVPANIC 'ls /sys/bus/acpi/devices | grep -c QEMU0001'
	grep -aq "^PVPANIC: [1-9]" "$work/out" || { echo "FAIL: $side: no pvpanic (QEMU0001) in ACPI"; exit 1; }
	ask BUTTON 'cat /proc/bus/input/devices | grep -c "Power Button"'
	grep -aq "^BUTTON: [1-9]" "$work/out" || { echo "FAIL: $side: no ACPI power button"; exit 1; }
	# acpid's action for the button: say so, then power off
	echo "printf '#!/bin/sh\\necho POWER-BUTTON-%s >/dev/console\\nexec poweroff -f\\n' SEEN >/etc/acpi/PWRF/00000080; echo ARMED" >&3
	wait_for "^ARMED"
	powerdown "$work/qmp"
	# a guest that hears the button reacts within seconds
	t1=$(date +%s)
	wait_output "$work/out" POWER-BUTTON-SEEN "$pid" 180 || {
		echo "FAIL: $side: the guest never saw the power button"
		tail -c 2000 "$work/out" | cat -v; exit 1
	}
	wait_exit "$pid" $((300 - ($(date +%s) - t1))) || {
		echo "FAIL: $side: the guest saw the button but never powered off"
		tail -c 2000 "$work/out" | cat -v; exit 1
	}
	wait $pid
	status=$?
	pid=
	exec 3>&-
	if [ $status -ne 0 ]; then
		echo "FAIL: $side exited with status $status after the guest's poweroff"
		tail -c 2000 "$work/out" | cat -v; cat "$work/err"; exit 1
	fi
	echo "seabios-acpi: $side ok in $(($(date +%s) - t0)) s: $(grep -a '^TABLES: ' "$work/out" | tr -d '\r')"
}

cpu=
# KVMs that emulate guest ring 0 (kvm_pvm) need the conservative CPU model.
[ ! -d /sys/module/kvm_pvm ] || cpu="-cpu baseline"
# shellcheck disable=SC2086
run vmm "$VMM" $cpu
# vmm notes each unclaimed port once (Debian's kernel probes the Super I/O
# ports 0x2e/0x4e); anything else on stderr is a complaint.
if grep -v '^vmm: guest \(read\|wrote\) unclaimed io address ' "$work/err" | grep -q .; then
	echo "FAIL: vmm complained on stderr:"; cat "$work/err"; exit 1
fi
if command -v qemu-system-x86_64 >/dev/null; then
	run qemu qemu-system-x86_64 -enable-kvm -cpu qemu64,-smap,-smep,-xsave,-popcnt \
		-nic user,model=virtio-net-pci -vga none
else
	echo "FAIL: no qemu-system-x86_64 for the reference run (scripts/install-deps.sh check)"
	exit 1
fi
echo "seabios-acpi: ok"
