#!/bin/sh
# libvirt-migrate.sh — virsh migrate --live of a vmm guest between two
# libvirtds standing for two hosts, QEMU running the same migration as the
# reference. The source is libvirt.inc.sh's libvirtd; the destination is a
# second libvirtd (and virtlogd) in a mount namespace of its own with its
# own /run/libvirt, /var/lib/libvirt, ... and another host_uuid (libvirt
# refuses a migration to the same host). --p2p --tunnelled: the source
# libvirtd talks to the destination's itself and carries the stream; the
# source emulator gets `getfd` + `migrate fd:migrate` (a pipe to libvirtd),
# the destination's starts with -incoming defer and gets `migrate-incoming
# fd:N` (a pipe from libvirtd). libvirt's native (direct tcp:) migration
# needs the `return-path` capability, which vmm does not have. Then the
# guest runs on the destination with its memory (a value written in its
# shell before is read back, the uptime went on), the source's emulator is
# gone and its domain with it; the migration back works the same.
#
# The domain has <memballoon model='none'/> and no channel: virtio-balloon
# and virtio-serial are not saveable by vmm yet.
#
# Not yet in LINUX_TESTS: it never ran to the end (first runs stopped at
# libvirt requiring return-path for native migration; the --tunnelled
# runs printed nothing in 13 min and were stopped: undiagnosed). Root
# only; two Linux boots.
dom=vm
libvirt_log=${TEST_LOGS:-${B:-build}/test-logs}/libvirt-migrate.libvirtd.log
. "$(dirname "$0")/libvirt.inc.sh"
guest=$(sh scripts/demo/image.sh) || fail "no Debian guest image (scripts/demo/image.sh)"
qemu=$(command -v qemu-system-x86_64) || fail "no qemu-system-x86_64 (scripts/install-deps.sh check)"
vmm=$(readlink -f "${VMM:-build/vmm}")

# The destination "host": its own folders, daemons and socket.
D=$T/dst
mkdir -p "$D/etc/libvirt"
cp -a /etc/libvirt/. "$D/etc/libvirt/"
echo 'host_uuid = "8c1e2f4a-7d3b-4e5f-9a60-1b2c3d4e5f60"' >>"$D/etc/libvirt/libvirtd.conf"
echo 'host_uuid = "1f0e9d8c-7b6a-4594-8372-6150a4b3c2d1"' >>/etc/libvirt/libvirtd.conf
# the source libvirtd reads its host_uuid at start: restart it
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
SURI="qemu+unix:///system?socket=$T/run/libvirt/libvirt-sock" # as the destination sees it
VD="virsh -q -c $DURI"
for _ in $(seq 300); do $VD version >/dev/null 2>&1 && break; sleep 0.2; done
$VD version >/dev/null 2>&1 || fail "the destination's libvirtd never answered"
stop_dst() {
	for d in $($VD list --all --name 2>/dev/null); do $VD destroy "$d" >/dev/null 2>&1; done
	for p in libvirtd virtlogd; do
		[ -f "$D/$p.pid" ] && kill "$(cat "$D/$p.pid")" 2>/dev/null
	done
	cp "$D/var/log/libvirt/libvirtd.log" "${libvirt_log%.log}.dst.log" 2>/dev/null
}
trap 'stop_dst; cleanup' EXIT
dstate() { $VD domstate "$dom" 2>&1; }

domain() { # domain EMULATOR
	cat <<XML
<domain type='kvm'>
  <name>$dom</name>
  <memory unit='MiB'>512</memory>
  <vcpu>1</vcpu>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
    <kernel>$guest/kernel</kernel>
    <initrd>$guest/initrd.cpio.gz</initrd>
    <cmdline>$(cat tests/guest/linux/cmdline)</cmdline>
  </os>
  <features><acpi/></features>
  <devices>
    <emulator>$1</emulator>
    <serial type='pty'><target port='0'/></serial>
    <console type='pty'><target type='serial' port='0'/></console>
    <controller type='usb' model='none'/>
    <memballoon model='none'/>
  </devices>
</domain>
XML
}

uptime_in() { grep -ao 'UP-[0-9][0-9]*' "$T/$1" | tail -n 1 | cut -d- -f2; }
# on URI LOG: the value written before the migration is there, the uptime went on.
on() {
	python3 "$here/libvirt_console.py" "$1" "$dom" "$T/$2" "$limit" "Escape character" \
		"cat /tmp/v; echo UP-\$(cut -d. -f1 /proc/uptime)" >/dev/null ||
		{ tail -c 2000 "$T/$2"; fail "$side: virsh console ($2)"; }
	grep -aq "SAVED-1234" "$T/$2" || { tail -c 1000 "$T/$2"; fail "$side: $2: the value written before is gone"; }
	up=$(uptime_in "$2")
	[ -n "$up" ] && [ "$up" -ge "$up0" ] || fail "$side: $2: uptime $up s after, $up0 s before"
}
ms() { date +%s%3N; }

# flow SIDE EMULATOR
flow() {
	side=$1
	domain "$2" >"$T/$side.xml"
	$V create "$T/$side.xml" --paused >/dev/null || fail "$side: virsh create"
	wait_state paused 20
	python3 "$here/libvirt_console.py" qemu:///system "$dom" "$T/boot.$side" "$limit" "vmm demo: a shell" \
		"echo SAVED-\$((1000+234)) >/tmp/v; echo UP-\$(cut -d. -f1 /proc/uptime)" >/dev/null &
	cpid=$!
	sleep 2
	$V resume "$dom" >/dev/null || fail "$side: virsh resume"
	wait $cpid || { tail -c 2000 "$T/boot.$side"; fail "$side: virsh console (boot)"; }
	up0=$(uptime_in "boot.$side")
	pid=$(emulator_pid)

	t=$(ms)
	$V migrate --live --p2p --tunnelled "$dom" "$DURI" >"$T/out" 2>&1 ||
		{ cat "$T/out"; grep ' error : ' "$D/var/log/libvirt/libvirtd.log" | tail -n 5; fail "$side: virsh migrate --live --p2p --tunnelled"; }
	there_ms=$(($(ms) - t))
	! kill -0 "$pid" 2>/dev/null || fail "$side: the source's emulator still runs"
	$V domstate "$dom" >/dev/null 2>&1 && fail "$side: the transient domain is still on the source"
	[ "$(dstate)" = running ] || fail "$side: domstate on the destination is '$(dstate)'"
	on "$DURI" "there.$side"

	t=$(ms)
	$VD migrate --live --p2p --tunnelled "$dom" "$SURI" >"$T/out" 2>&1 ||
		{ cat "$T/out"; grep ' error : ' "$D/var/log/libvirt/libvirtd.log" | tail -n 5; fail "$side: virsh migrate back"; }
	back_ms=$(($(ms) - t))
	wait_state running 20
	$VD domstate "$dom" >/dev/null 2>&1 && fail "$side: the domain is still on the destination"
	on qemu:///system "back.$side"
	$V destroy "$dom" >/dev/null || fail "$side: virsh destroy"
	echo "$side: migrate --live ${there_ms} ms, back ${back_ms} ms; memory kept (uptime $up0 -> $up s)"
}

flow vmm "$vmm"
flow qemu "$qemu"
echo "ok: virsh migrate --live --p2p --tunnelled between two libvirtds and back, vmm and QEMU alike"
