# libvirt.inc.sh — sourced by the tests that run Debian's libvirt 9.0 with
# vmm (and QEMU) as the emulator: they skip without root, /dev/kvm or the
# libvirt programs, re-run themselves in a private mount namespace where
# /run/libvirt, /var/lib/libvirt, /var/cache/libvirt, /var/log/libvirt,
# /etc/libvirt and /run/lock (virsh console's pty lock files: nested runs
# share the host's /run, and another L1's LCK.._pts_0 with a pid alive
# here refused the console) are folders under a mktemp -d in /tmp (AF_UNIX sockets work
# there, also inside the nested runner's L1), and start their own libvirtd
# and virtlogd, stopped at exit. The emulator runs as root, unconfined,
# outside cgroups: the test host is a container or L1 without those
# services, not a hardened libvirt. The caller sets dom (the domain the
# helpers look at) and may set libvirt_log.
set -u
skip() { echo "skipped: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (a privileged libvirtd)"
# libvirt_kvm=no: the caller only has libvirt write domains and command
# lines, and runs no guest
[ "${libvirt_kvm:-yes}" = no ] || [ -e /dev/kvm ] || skip "/dev/kvm is absent"
for c in libvirtd virtlogd virsh unshare python3; do
	command -v $c >/dev/null || skip "$c is missing (scripts/install-deps.sh check)"
done
getent passwd libvirt-qemu >/dev/null || skip "no libvirt-qemu user (libvirt-daemon-system)"
here=$(cd "$(dirname "$0")" && pwd)
limit=${LINUX_TIMEOUT:-900}

# Everything below runs in a mount namespace of its own.
if [ -z "${VMM_LIBVIRT_NS:-}" ]; then
	VMM_LIBVIRT_NS=1 exec unshare -m --propagation private sh "$0" "$@"
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/vmm-libvirt.XXXXXX")
V="virsh -q -c qemu:///system"
dirs="/run/libvirt /var/lib/libvirt /var/cache/libvirt /var/log/libvirt /etc/libvirt /run/lock"
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
	for d in $($V list --all --name 2>/dev/null); do
		$V destroy "$d" >/dev/null 2>&1
		$V undefine "$d" >/dev/null 2>&1
	done
	stop_daemons
	# libvirt_log=PATH: keep libvirtd's log (its QMP traffic) there
	[ -z "${libvirt_log:-}" ] || cp /var/log/libvirt/libvirtd.log "$libvirt_log" 2>/dev/null
	for d in $dirs; do umount "$d" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() {
	echo "FAIL: $*"
	echo "--- domain log"
	tail -n 30 "/var/log/libvirt/qemu/$dom.log" 2>/dev/null
	echo "--- libvirtd errors"
	grep ' error : ' /var/log/libvirt/libvirtd.log 2>/dev/null | tail -n 10
	exit 1
}

cat >/etc/libvirt/qemu.conf <<CONF
user = "root"
group = "root"
dynamic_ownership = 0
remember_owner = 0
security_driver = "none"
cgroup_controllers = [ ]
namespaces = [ ]
CONF
cat >/etc/libvirt/libvirtd.conf <<CONF
auth_unix_rw = "none"
auth_unix_ro = "none"
log_filters = "1:qemu.qemu_monitor 3:*"
log_outputs = "1:file:/var/log/libvirt/libvirtd.log"
CONF

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

# second_host: a second libvirtd (and virtlogd) standing for another host,
# in a mount namespace of its own with its own /run/libvirt,
# /var/lib/libvirt, ... under $D, and another host_uuid than the first
# (libvirt refuses a migration to the same host; the first libvirtd is
# restarted to read its own). Both share the network. Sets D, DURI (its
# socket), SURI (the first's, as the second sees it), VD (virsh on it) and
# stop_dst (its domains destroyed, its daemons stopped, its log kept
# beside $libvirt_log).
second_host() {
	D=$T/dst
	mkdir -p "$D/etc/libvirt"
	cp -a /etc/libvirt/. "$D/etc/libvirt/"
	echo 'host_uuid = "8c1e2f4a-7d3b-4e5f-9a60-1b2c3d4e5f60"' >>"$D/etc/libvirt/libvirtd.conf"
	echo 'host_uuid = "1f0e9d8c-7b6a-4594-8372-6150a4b3c2d1"' >>/etc/libvirt/libvirtd.conf
	stop_daemons
	virtlogd -d -p "$T/virtlogd.pid" || fail "virtlogd did not start"
	start_libvirtd
	unshare -m --propagation private sh -c '
		for d in $2; do
			mkdir -p "$1$d" && mount --bind "$1$d" "$d" || exit 1
		done
		mkdir -p /var/lib/libvirt/qemu /var/cache/libvirt/qemu /var/log/libvirt/qemu /run/libvirt/qemu
		virtlogd -d -p "$1/virtlogd.pid" && libvirtd -d -p "$1/libvirtd.pid"' sh "$D" "$dirs" ||
		fail "the destination's libvirtd did not start"
	DURI="qemu+unix:///system?socket=$D/run/libvirt/libvirt-sock"
	SURI="qemu+unix:///system?socket=$T/run/libvirt/libvirt-sock"
	VD="virsh -q -c $DURI"
	for _ in $(seq 300); do $VD version >/dev/null 2>&1 && break; sleep 0.2; done
	$VD version >/dev/null 2>&1 || fail "the destination's libvirtd never answered"
}
stop_dst() {
	for d in $($VD list --all --name 2>/dev/null); do $VD destroy "$d" >/dev/null 2>&1; done
	for p in libvirtd virtlogd; do
		[ -f "$D/$p.pid" ] && kill "$(cat "$D/$p.pid")" 2>/dev/null
	done
	[ -z "${libvirt_log:-}" ] || cp "$D/var/log/libvirt/libvirtd.log" "${libvirt_log%.log}.dst.log" 2>/dev/null
}

state() { $V domstate "$dom" 2>&1; }
# wait_state STATE SECS
wait_state() {
	for _ in $(seq $(($2 * 5))); do
		[ "$(state)" = "$1" ] && return 0
		sleep 0.2
	done
	fail "domstate is '$(state)', expected '$1' within $2 s"
}
# save_restore WHO: `virsh save` of $dom into $T/save, then `virsh restore`
# of it; sets save_ms and restore_ms (wall clock of each).
save_restore() {
	_t=$(date +%s%3N)
	$V save "$dom" "$T/save" >"$T/out" 2>&1 || { cat "$T/out"; fail "$1: virsh save"; }
	save_ms=$(($(date +%s%3N) - _t))
	_t=$(date +%s%3N)
	$V restore "$T/save" >"$T/out" 2>&1 || { cat "$T/out"; fail "$1: virsh restore"; }
	restore_ms=$(($(date +%s%3N) - _t))
}
emulator_pid() { cat "/run/libvirt/qemu/$dom.pid" 2>/dev/null; }

# domain EMULATOR [USB-MODEL]: the domain $dom booting make demo's guest
# ($guest) directly, or what $boot_xml's <kernel> and <cmdline> name, with
# $memory MiB (default 512) and $vcpus vCPUs (default 1), <memballoon
# model='none'/> unless $balloon holds another, and $devices (default
# none) added; USB-MODEL (default none) another controller than none.
domain() {
	cat <<XML
<domain type='kvm'>
  <name>$dom</name>
  <memory unit='MiB'>${memory:-512}</memory>
  <vcpu>${vcpus:-1}</vcpu>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
    ${boot_xml:-<kernel>$guest/kernel</kernel>
    <initrd>$guest/initrd.cpio.gz</initrd>
    <cmdline>$(cat tests/guest/linux/cmdline)</cmdline>}
  </os>
  <features><acpi/></features>
  <devices>
    <emulator>$1</emulator>
    <serial type='pty'><target port='0'/></serial>
    <console type='pty'><target type='serial' port='0'/></console>
    <controller type='usb' model='${2:-none}'/>
    ${balloon:-<memballoon model='none'/>}
    ${devices:-}
  </devices>
</domain>
XML
}
