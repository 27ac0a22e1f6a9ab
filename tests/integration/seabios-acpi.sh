#!/bin/sh
# seabios-acpi.sh — ACPI for a disk booted through SeaBIOS: SYSLINUX on the
# IDE disk loads the minimal Linux guest, which must find the ACPI tables
# SeaBIOS installed from vmm's fw_cfg table loader (FACP, APIC, DSDT in
# /sys/firmware/acpi/tables), hear the power button that QMP
# system_powerdown presses, and power off through ACPI S5 (`poweroff -f`
# from its acpid) so that the VMM exits with status 0. The same disk and
# checks run under QEMU (-enable-kvm) as the reference. Needs the guest
# kernel (scripts/guest-kernel.sh), hence LINUX_TESTS; a few minutes where
# guest ring 0 is emulated.
set -u
VMM=${VMM:-build/vmm}
limit=${SEABIOS_ACPI_TIMEOUT:-600}
. tests/integration/seabios-guest.inc.sh
for t in syslinux mkfs.fat mcopy python3; do
	command -v $t >/dev/null || { echo "FAIL: $t missing (scripts/install-deps.sh check)"; exit 1; }
done
img=$work/disk.img
append=$(cat tests/guest/linux/cmdline) || exit 1
cat >"$work/syslinux.cfg" <<CFG
SERIAL 0 115200
DEFAULT linux
PROMPT 0
TIMEOUT 0
LABEL linux
  KERNEL bzImage
  INITRD initrd
  APPEND $append
CFG
mkfs.fat -C -n VMMBOOT "$img" 16384 >/dev/null &&
	syslinux --install "$img" &&
	mcopy -i "$img" "$work/syslinux.cfg" ::syslinux.cfg &&
	mcopy -i "$img" "$kdir/bzImage" ::bzImage &&
	mcopy -i "$img" "$kdir/initramfs.cpio" ::initrd || exit 1

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

# run SIDE COMMAND...: boot the disk, check the tables, press the button,
# expect the guest's S5 power-off to end the process with status 0.
run() {
	side=$1
	shift
	rm -f "$work/in" "$work/out" "$work/err" "$work/qmp"
	mkfifo "$work/in"
	t0=$(date +%s)
	"$@" -m 256 -nographic -serial stdio -monitor none -no-reboot -hda "$img" \
		-qmp unix:"$work/qmp",server=on,wait=off <"$work/in" >"$work/out" 2>"$work/err" &
	pid=$!
	exec 3>"$work/in"
	wait_for VMM-GUEST-READY
	echo 'echo TABLES: $(ls /sys/firmware/acpi/tables | sort | tr "\n" " ")END' >&3
	wait_for "^TABLES: .*END"
	grep -q "^TABLES: .*APIC .*DSDT .*FACP " "$work/out" || {
		echo "FAIL: $side: the guest lacks FACP, APIC or DSDT:"
		grep -a "^TABLES: " "$work/out"; grep -a "ACPI" "$work/out" | head; exit 1
	}
	# acpid's action for the button: say so, then power off as before
	# (%s: the echoed command line must not match what is awaited)
	echo "printf '#!/bin/sh\\necho POWER-BUTTON-%s >/dev/console\\nexec poweroff -f\\n' SEEN >/etc/acpi/PWRF/00000080; echo ARMED" >&3
	wait_for "^ARMED"
	powerdown "$work/qmp"
	# a guest that hears the button reacts within seconds
	t1=$(date +%s)
	while ! grep -q POWER-BUTTON-SEEN "$work/out"; do
		if [ $(($(date +%s) - t1)) -ge 120 ]; then
			echo "FAIL: $side: the guest never saw the power button"
			tail -c 2000 "$work/out" | cat -v; exit 1
		fi
		sleep 1
	done
	while kill -0 $pid 2>/dev/null; do
		if [ $(($(date +%s) - t1)) -ge 240 ]; then
			echo "FAIL: $side: the guest saw the button but never powered off"
			tail -c 2000 "$work/out" | cat -v; exit 1
		fi
		sleep 1
	done
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

run vmm "$VMM"
# -hda probes the image, which QEMU warns about too: that line only
if grep -v "probing guessed raw" "$work/err" | grep -q .; then
	echo "FAIL: vmm complained on stderr:"; cat "$work/err"; exit 1
fi
if command -v qemu-system-x86_64 >/dev/null; then
	run qemu qemu-system-x86_64 -enable-kvm -cpu qemu64,-smap,-smep,-xsave,-popcnt \
		-nic none -vga none
else
	echo "seabios-acpi: no qemu-system-x86_64 for the reference run"
fi
echo "seabios-acpi: ok"
