#!/bin/sh
# libvirt.sh — Debian's libvirt 9.0 manages a vmm guest: a domain whose
# <emulator> is build/vmm (the Linux test guest by <kernel>/<initrd>, a
# virtio disk, a user-mode virtio NIC, a pty console) goes through virsh
# define, start, console, domstate, suspend/resume, shutdown (the guest
# powers off on the ACPI button), start again, a libvirtd restart while it
# runs (the domain stays managed and answers), destroy and undefine; a
# type='qemu' domain is refused (vmm has no TCG).
#
# Root only; libvirtd and virtlogd are this test's own (libvirt.inc.sh).
# Two Linux boots: slow where the guest's ring 0 is emulated, hence a
# LINUX_TESTS member.
# needs: native ring 0 (Linux guest; scripts/nested-kvm/place.sh)
dom=vmm-test
. "$(dirname "$0")/libvirt.inc.sh"
dir=$(sh scripts/guest-kernel.sh --path) || skip "the guest kernel is not built (scripts/guest-kernel.sh)"
vmm=$(readlink -f "${VMM:-build/vmm}")

truncate -s 16M "$T/disk.raw"
domain() { # domain TYPE
	cat <<EOF
<domain type='$1'>
  <name>vmm-test</name>
  <memory unit='MiB'>128</memory>
  <vcpu>1</vcpu>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
    <kernel>$dir/bzImage</kernel>
    <initrd>$dir/initramfs.cpio</initrd>
    <cmdline>$(cat tests/guest/linux/cmdline)</cmdline>
  </os>
  <features><acpi/></features>
  <on_poweroff>destroy</on_poweroff>
  <devices>
    <emulator>$vmm</emulator>
    <disk type='file' device='disk'>
      <driver name='qemu' type='raw'/>
      <source file='$T/disk.raw'/>
      <target dev='vda' bus='virtio'/>
    </disk>
    <interface type='user'><model type='virtio'/></interface>
    <serial type='pty'><target port='0'/></serial>
    <console type='pty'><target type='serial' port='0'/></console>
    <controller type='usb' model='none'/>
    <memballoon model='none'/>
  </devices>
</domain>
EOF
}

# vmm has no TCG: libvirt's probe shows no tcg-accel, so type='qemu' is refused.
domain qemu >"$T/qemu.xml"
if $V define "$T/qemu.xml" >"$T/out" 2>&1; then
	$V undefine vmm-test >/dev/null 2>&1
	fail "a type='qemu' domain was accepted"
fi
grep -q "does not support virt type 'qemu'" "$T/out" || { cat "$T/out"; fail "unclear refusal of type='qemu'"; }
echo "type='qemu' refused: $(grep "virt type" "$T/out")"

domain kvm >"$T/kvm.xml"
$V define "$T/kvm.xml" >/dev/null || fail "virsh define"
# Paused first, so the console is there for the whole boot.
$V start --paused vmm-test >/dev/null || fail "virsh start"
wait_state paused 10
python3 "$here/libvirt_console.py" qemu:///system vmm-test "$T/console" "$limit" &
console=$!
sleep 2
$V resume vmm-test >/dev/null || fail "virsh resume (the first cont)"
wait_state running 10
wait $console || { tail -c 2000 "$T/console"; fail "virsh console"; }

$V suspend vmm-test >/dev/null || fail "virsh suspend"
wait_state paused 10
$V resume vmm-test >/dev/null || fail "virsh resume"
wait_state running 10
echo "suspend/resume: domstate followed"

# The ACPI power button: the guest's acpid powers it off, vmm exits.
$V shutdown vmm-test >/dev/null || fail "virsh shutdown"
wait_state "shut off" 120
grep -q "reason=shutdown" /var/log/libvirt/qemu/vmm-test.log || fail "no guest shutdown in the domain log"
grep -q '"event": "SHUTDOWN", "data": {"guest": true, "reason": "guest-shutdown"}' \
	/var/log/libvirt/libvirtd.log || fail "libvirt heard no SHUTDOWN guest-shutdown"
echo "shutdown: the guest powered off"

$V start vmm-test >/dev/null || fail "virsh start (again)"
wait_state running 10
pid=$(emulator_pid)
[ -n "$pid" ] && kill -0 "$pid" || fail "no vmm process after the second start"

# libvirtd restarts while the guest runs: it reconnects to vmm's monitor
# (query-status, query-jobs, ...) and keeps managing the domain.
lpid=$(cat "$T/libvirtd.pid")
kill "$lpid"
for _ in $(seq 50); do kill -0 "$lpid" 2>/dev/null || break; sleep 0.2; done
kill -0 "$pid" || fail "vmm died with libvirtd"
start_libvirtd
wait_state running 10
[ "$(emulator_pid)" = "$pid" ] || fail "another process after the libvirtd restart"
$V suspend vmm-test >/dev/null && wait_state paused 10 &&
	$V resume vmm-test >/dev/null && wait_state running 10 ||
	fail "suspend/resume after the libvirtd restart"
echo "libvirtd restart: the domain stayed managed (pid $pid)"

# destroy: SIGTERM; vmm says SHUTDOWN (host-signal) and exits.
$V destroy vmm-test >/dev/null || fail "virsh destroy"
wait_state "shut off" 10
kill -0 "$pid" 2>/dev/null && fail "vmm still runs after destroy"
grep -q '"event": "SHUTDOWN", "data": {"guest": false, "reason": "host-signal"}' \
	/var/log/libvirt/libvirtd.log || fail "libvirt heard no SHUTDOWN host-signal"
$V undefine vmm-test >/dev/null || fail "virsh undefine"
$V list --all --name | grep -q vmm-test && fail "still defined after undefine"
grep -E "^vmm: |Assertion|Sanitizer|core dumped" /var/log/libvirt/qemu/vmm-test.log | grep -v "terminating on signal" &&
	fail "vmm complained in the domain log"
echo "ok: define, start, console, suspend/resume, shutdown, start, libvirtd restart, destroy, undefine"
