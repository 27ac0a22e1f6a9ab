#!/bin/sh
# debian-disk.sh — a real distribution, end to end: the Debian 12 system
# disk of scripts/debian-disk.sh booted as a user would, `vmm -m 512 -hda
# disk.img` (plus the serial console, a QMP socket and -snapshot, so the
# cached image stays as built), through SeaBIOS, SYSLINUX, Debian's kernel
# and initramfs to systemd. The guest must take 10.0.2.15 by DHCP on the
# default NIC (systemd-networkd; its unit prints "DEBIAN-READY <address>")
# and give a root shell on ttyS0.
#   1. the raw disk: `systemctl poweroff` in the guest, vmm exits 0;
#   2. a qcow2 overlay on it (qemu-img create -b disk.img -F raw), given as
#      -hda overlay.qcow2 so that probing must find qcow2: a file written
#      in the guest lands in the overlay, the base is untouched (size, times),
#      QMP system_powerdown (the ACPI power button, systemd-logind) powers
#      the guest off, vmm exits 0 and `qemu-img check` finds no error;
#   3. QEMU (-enable-kvm, same disk and options) boots the same disk as the
#      reference; both boot times (start to DEBIAN-READY) and their ratio
#      are printed.
# needs: native ring 0 (Linux guest; scripts/nested-kvm/place.sh)
set -u
VMM=${VMM:-build/vmm}
limit=${DEBIAN_DISK_TIMEOUT:-1500}
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
for t in qemu-img qemu-system-x86_64 python3; do
	command -v $t >/dev/null || { echo "FAIL: $t missing (scripts/install-deps.sh check)"; exit 1; }
done
base=$(sh scripts/debian-disk.sh) || { echo "FAIL: no Debian disk (scripts/debian-disk.sh)"; exit 1; }
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$work"' EXIT

. tests/integration/debian-disk.inc.sh

# Press the power button over QMP.
powerdown() {
	python3 - "$work/qmp" <<'PY' || { echo "FAIL: $side: QMP system_powerdown"; exit 1; }
import sys
sys.path.insert(0, "tests/integration")
from qmp_client import Qmp
q = Qmp(sys.argv[1])
q.ok("qmp_capabilities")
q.ok("system_powerdown")
PY
}

# Wait for the guest's power-off to end the process, with status 0.
expect_exit0() {
	t1=$(date +%s)
	while kill -0 "$pid" 2>/dev/null; do
		if [ $(($(date +%s) - t1)) -ge 600 ]; then
			echo "FAIL: $side: no power-off within 600 s of $1"
			tail -c 3000 "$work/out" | cat -v; exit 1
		fi
		sleep 1
	done
	wait "$pid"
	status=$?
	pid=
	exec 3>&-
	[ $status -eq 0 ] || {
		echo "FAIL: $side exited with status $status after $1"
		tail -c 2000 "$work/out" | cat -v; cat "$work/err"; exit 1
	}
	echo "debian-disk: $side: $1 powered off in $(($(date +%s) - t1)) s, exit status 0"
}

# vmm notes unclaimed ports and the probed format once; other stderr
# lines are complaints.
quiet_stderr() {
	if grep -v '^vmm: guest \(read\|wrote\) unclaimed io address \|probing guessed' "$work/err" | grep -q .; then
		echo "FAIL: vmm complained on stderr:"; cat "$work/err"; exit 1
	fi
}

# 1. the raw disk, powered off from inside
boot vmm "$base" "$VMM" -snapshot
vmm_s=$ready_s
echo "systemctl poweroff" >&3
expect_exit0 "systemctl poweroff"
quiet_stderr

# 2. the qcow2 overlay, powered off with the ACPI power button
# (the base is 2 GiB: its size and times stand for its bytes, a checksum
# over 9p costs minutes nested; any write would move its mtime)
sum=$(stat -c "%s %Y %Z" "$base")
overlay=$work/overlay.qcow2
qemu-img create -q -f qcow2 -b "$base" -F raw "$overlay" || exit 1
mark="VMM-OVERLAY-$$-$(date +%s)"
boot vmm-qcow2 "$overlay" "$VMM"
ask WROTE "echo $mark >/root/overlay-mark && sync && cat /root/overlay-mark"
grep -aq "WROTE: $mark END" "$work/out" || { echo "FAIL: the guest could not write its file"; exit 1; }
ask LOGIND 'systemctl is-active systemd-logind'
grep -aq "LOGIND: active END" "$work/out" || { echo "FAIL: systemd-logind (the power button's handler) is not running"; exit 1; }
powerdown
expect_exit0 "QMP system_powerdown"
quiet_stderr
grep -aq "$mark" "$overlay" || { echo "FAIL: the guest's file is not in the overlay"; exit 1; }
[ "$(stat -c "%s %Y %Z" "$base")" = "$sum" ] || { echo "FAIL: the base image changed under its overlay"; exit 1; }
qemu-img check "$overlay" >"$work/check" 2>&1 && grep -q "No errors were found" "$work/check" || {
	echo "FAIL: qemu-img check on the overlay:"; cat "$work/check"; exit 1
}

# 3. QEMU, the reference, on the same disk
cpu=
# KVMs that emulate guest ring 0 (kvm_pvm) need the conservative CPU model.
[ ! -d /sys/module/kvm_pvm ] || cpu="-cpu qemu64,-smap,-smep,-xsave,-popcnt"
# shellcheck disable=SC2086
boot qemu "$base" qemu-system-x86_64 -enable-kvm $cpu -snapshot
qemu_s=$ready_s
echo "systemctl poweroff" >&3
expect_exit0 "systemctl poweroff"

echo "debian-disk: boot to DEBIAN-READY: vmm $vmm_s s, QEMU $qemu_s s, vmm/QEMU $(awk "BEGIN { printf \"%.2f\", $vmm_s / ($qemu_s ? $qemu_s : 1) }")"
echo "debian-disk: ok"
