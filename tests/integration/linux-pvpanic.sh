#!/bin/sh
# linux-pvpanic.sh — a kernel panic in the Linux guest ends the run at once
# through pvpanic: `-device pvpanic -action panic=exit-failure`, the guest's
# pvpanic driver bound to the DSDT's QEMU0001 device (firmware/acpi.c), a
# panic (`echo c > /proc/sysrq-trigger` where the guest kernel has
# CONFIG_MAGIC_SYSRQ, else `exit` of the shell that is PID 1: "Attempted to
# kill init!"), then GUEST_PANICKED on QMP, vmm's message and exit status 4
# (README "Exit status").
set -eu
vmm=${VMM:-build/vmm}
limit=${LINUX_TIMEOUT:-900}
[ -e /dev/kvm ] || { echo "skip: no /dev/kvm"; exit 77; }
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
dir=$(sh scripts/guest-kernel.sh)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vmm-pvpanic.XXXXXX")
trap 'kill $pid $qpid 2>/dev/null || true; rm -rf "$tmp"' EXIT
mkfifo "$tmp/in"
t0=$(date +%s)
"$vmm" -m 128 -nographic -serial stdio -monitor none -device pvpanic \
	-action panic=exit-failure -qmp "unix:$tmp/qmp.sock,server=on,wait=off" \
	-kernel "$dir/bzImage" -initrd "$dir/initramfs.cpio" \
	-append "$(cat tests/guest/linux/cmdline)" \
	<"$tmp/in" >"$tmp/out" 2>&1 &
pid=$!
qpid=
exec 3>"$tmp/in"
# A QMP client that waits for the event and prints it.
PYTHONPATH=tests/integration python3 - "$tmp/qmp.sock" "$limit" >"$tmp/qmp" 2>&1 <<'PY' &
import sys
from qmp_client import Qmp
q = Qmp(sys.argv[1])
q.ok("qmp_capabilities")
ev = q.event("GUEST_PANICKED", timeout=int(sys.argv[2]))
print("QMP-EVENT", ev["event"], "action=" + ev["data"]["action"], "ts" if "timestamp" in ev else "no-ts")
PY
qpid=$!

. "$(dirname "$0")/linux-console.inc.sh"

wait_for VMM-GUEST-READY
echo "init reached after $(($(date +%s) - t0)) s"
# "=END" marks the whole count, not the first digit of one being written.
echo 'echo BOUND=$(ls /sys/bus/platform/drivers/pvpanic-mmio/ 2>/dev/null | grep -c QEMU0001)=END' >&3
wait_for "BOUND=[0-9]*=END"
grep -q "BOUND=1=END" "$tmp/out" || { tail -5 "$tmp/out"; echo "FAIL: the pvpanic driver did not bind to QEMU0001"; exit 1; }
echo 'if [ -w /proc/sysrq-trigger ]; then echo c > /proc/sysrq-trigger; else exit 0; fi' >&3
status=0
wait $pid || status=$?
wait $qpid || true
qpid=
grep -q "Kernel panic" "$tmp/out" || { tail -20 "$tmp/out"; echo "FAIL: the guest did not panic"; exit 1; }
grep -q "the guest reported a panic (pvpanic)" "$tmp/out" || { tail -20 "$tmp/out"; echo "FAIL: vmm did not see the panic"; exit 1; }
grep -q "QMP-EVENT GUEST_PANICKED action=poweroff ts" "$tmp/qmp" || { cat "$tmp/qmp"; echo "FAIL: no GUEST_PANICKED event on QMP"; exit 1; }
[ "$status" = 4 ] || { tail -5 "$tmp/out"; echo "FAIL: exit status $status, want 4 (panic=exit-failure)"; exit 1; }
echo "ok: pvpanic bound, panic -> GUEST_PANICKED and status 4 after $(($(date +%s) - t0)) s"
