#!/bin/sh
# libvirt.sh — Debian's libvirt 9.0 manages a vmm guest: a domain whose
# <emulator> is build/vmm (the Linux test guest by <kernel>/<initrd>, a
# virtio disk, a user-mode virtio NIC, a pty console) goes through virsh
# define, start, console, domstate, suspend/resume, shutdown (the guest
# powers off on the ACPI button), start again, a libvirtd restart while it
# runs (the domain stays managed and answers), destroy and undefine; a
# type='qemu' domain is refused (vmm has no TCG).
#
# Root only. libvirtd and virtlogd are this test's own: it runs in a
# private mount namespace where /run/libvirt, /var/lib/libvirt,
# /var/cache/libvirt, /var/log/libvirt and /etc/libvirt are folders under a
# mktemp -d in /tmp (AF_UNIX sockets work there, also inside the nested
# runner's L1), and stops both daemons at the end. Two Linux boots: slow
# where the guest's ring 0 is emulated, hence a LINUX_TESTS member.
set -u
skip() { echo "skipped: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (a privileged libvirtd)"
[ -e /dev/kvm ] || skip "/dev/kvm is absent"
for c in libvirtd virtlogd virsh unshare python3; do
	command -v $c >/dev/null || skip "$c is missing (scripts/install-deps.sh check)"
done
getent passwd libvirt-qemu >/dev/null || skip "no libvirt-qemu user (libvirt-daemon-system)"
dir=$(sh scripts/guest-kernel.sh --path) || skip "the guest kernel is not built (scripts/guest-kernel.sh)"
vmm=$(readlink -f "${VMM:-build/vmm}")
here=$(cd "$(dirname "$0")" && pwd)
limit=${LINUX_TIMEOUT:-900}

# Everything below runs in a mount namespace of its own.
if [ -z "${VMM_LIBVIRT_NS:-}" ]; then
	VMM_LIBVIRT_NS=1 exec unshare -m --propagation private sh "$0" "$@"
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/vmm-libvirt.XXXXXX")
V="virsh -q -c qemu:///system"
dirs="/run/libvirt /var/lib/libvirt /var/cache/libvirt /var/log/libvirt /etc/libvirt"
mkdir -p "$T/etc/libvirt"
cp -a /etc/libvirt/. "$T/etc/libvirt/"
for d in $dirs; do
	mkdir -p "$T$d" "$d" && mount --bind "$T$d" "$d" || { echo "FAIL: cannot bind $d"; exit 1; }
done
mkdir -p /var/lib/libvirt/qemu /var/cache/libvirt/qemu /var/log/libvirt/qemu /run/libvirt/qemu

stop_daemons() {
	for p in libvirtd virtlogd; do
		[ -f "$T/$p.pid" ] && kill "$(cat "$T/$p.pid")" 2>/dev/null
	done
	sleep 1
}
cleanup() {
	$V destroy vmm-test >/dev/null 2>&1
	$V undefine vmm-test >/dev/null 2>&1
	stop_daemons
	for d in $dirs; do umount "$d" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() {
	echo "FAIL: $*"
	echo "--- domain log"
	tail -n 30 /var/log/libvirt/qemu/vmm-test.log 2>/dev/null
	echo "--- libvirtd errors"
	grep ' error : ' /var/log/libvirt/libvirtd.log 2>/dev/null | tail -n 10
	exit 1
}

# The emulator runs as root, unconfined, outside cgroups: the test host
# is a container or L1 without those services, not a hardened libvirt.
cat >/etc/libvirt/qemu.conf <<EOF
user = "root"
group = "root"
dynamic_ownership = 0
remember_owner = 0
security_driver = "none"
cgroup_controllers = [ ]
namespaces = [ ]
EOF
cat >/etc/libvirt/libvirtd.conf <<EOF
auth_unix_rw = "none"
auth_unix_ro = "none"
log_filters = "1:qemu.qemu_monitor 3:*"
log_outputs = "1:file:/var/log/libvirt/libvirtd.log"
EOF

start_libvirtd() {
	libvirtd -d -p "$T/libvirtd.pid" || fail "libvirtd did not start"
	for _ in $(seq 600); do
		[ -S /run/libvirt/libvirt-sock ] && $V version >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	fail "libvirtd's socket never answered"
}
virtlogd -d -p "$T/virtlogd.pid" || fail "virtlogd did not start"
start_libvirtd

state() { $V domstate vmm-test 2>&1; }
# wait_state STATE SECS
wait_state() {
	for _ in $(seq $(($2 * 5))); do
		[ "$(state)" = "$1" ] && return 0
		sleep 0.2
	done
	fail "domstate is '$(state)', expected '$1' within $2 s"
}
vmm_pid() { cat /run/libvirt/qemu/vmm-test.pid 2>/dev/null; }

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
pid=$(vmm_pid)
[ -n "$pid" ] && kill -0 "$pid" || fail "no vmm process after the second start"

# libvirtd restarts while the guest runs: it reconnects to vmm's monitor
# (query-status, query-jobs, ...) and keeps managing the domain.
lpid=$(cat "$T/libvirtd.pid")
kill "$lpid"
for _ in $(seq 50); do kill -0 "$lpid" 2>/dev/null || break; sleep 0.2; done
kill -0 "$pid" || fail "vmm died with libvirtd"
start_libvirtd
wait_state running 10
[ "$(vmm_pid)" = "$pid" ] || fail "another process after the libvirtd restart"
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
