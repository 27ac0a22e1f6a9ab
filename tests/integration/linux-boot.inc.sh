#!/bin/sh
# linux-boot.inc.sh bzimage|pvh NCPUS [MACHINE_OPTS] — boot the minimal Linux guest under
# build/vmm, wait for the init's marker, run a few commands over the serial
# console (uname, CPU count, dmesg error scan), `poweroff -f` and expect
# exit status 0. Slow on nested hosts (guest ring 0 is emulated): generous
# timeout, the boot time is printed.
set -eu
kind=${1:-bzimage}
ncpus=${2:-1}
machine=${3:+-machine $3} # e.g. kernel_irqchip=split
vmm=${VMM:-build/vmm}
limit=${LINUX_TIMEOUT:-900}
[ -e /dev/kvm ] || { echo "skip: no /dev/kvm"; exit 77; }
dir=$(sh scripts/guest-kernel.sh)
kernel=$dir/bzImage
[ "$kind" = pvh ] && kernel=$dir/vmlinux
tmp=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; rm -rf "$tmp"' EXIT
mkfifo "$tmp/in"
t0=$(date +%s)
"$vmm" $machine -m 128 -smp "$ncpus" -nographic -serial stdio -monitor none -no-reboot \
	-kernel "$kernel" -initrd "$dir/initramfs.cpio" \
	-append "$(cat tests/guest/linux/cmdline)" \
	<"$tmp/in" >"$tmp/out" 2>&1 &
pid=$!
exec 3>"$tmp/in"

. "$(dirname "$0")/linux-console.inc.sh"

wait_for VMM-GUEST-READY
echo "$kind smp=$ncpus${3:+ $3}: init reached after $(($(date +%s) - t0)) s"
# The trailing "=END" tells a whole line from one the console is still
# writing; the echoed command text cannot match (it has "$(" there).
echo 'echo CPUS=$(grep -c ^processor /proc/cpuinfo) KERNEL=$(uname -sr)=END' >&3
wait_for "CPUS=[0-9]* KERNEL=Linux [^ ]*=END"
scan_dmesg_and_poweroff
grep -q "CPUS=$ncpus KERNEL=Linux" "$tmp/out" || { grep CPUS= "$tmp/out"; echo "FAIL: expected $ncpus CPUs"; exit 1; }
grep -q "ERRORS=0" "$tmp/out" || { grep "^DMESG-ERROR" "$tmp/out"; echo "FAIL: kernel errors in dmesg"; exit 1; }
[ "$status" = 0 ] || { echo "FAIL: poweroff exit status $status"; exit 1; }
echo "ok: $kind smp=$ncpus${3:+ $3}, poweroff status 0 after $(($(date +%s) - t0)) s"
