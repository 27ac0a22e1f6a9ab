#!/bin/sh
# libvirt-virt-install.sh — the domains a person gets from virt-install,
# run by Debian's libvirt 9.0 with vmm as the emulator, QEMU running the
# same domains in the same test as the reference. Debian's virt-install
# writes each domain (--import --osinfo debian11 --network user --disk
# bus=virtio, make demo's Debian kernel and initrd by --boot kernel=; the
# default q35 and --machine pc), and only <emulator> changes for vmm. Both
# then go through define; start (paused, so the console sees the whole
# boot); virsh console, where the guest's qemu-ga is started on its port;
# qemu-agent-command guest-ping; domifaddr --source agent (the DHCP lease
# of user networking); dommemstat with a period; setmem, seen by the
# guest's balloon driver; suspend/resume; on q35, virsh attach-device
# --live of a virtio disk (libvirt picks an empty pcie-root-port and sends
# blockdev-add + device_add): the guest reads the host's pattern from it,
# then detach-device --live (device_del, the guest lets the slot go,
# DEVICE_DELETED, blockdev-del), twice; the same with an <rng> on
# /dev/random (object-add + device_add, device_del + object-del): the
# guest's hw_random core lists a second virtio_rng, then one again;
# shutdown --mode agent; start
# again, shutdown --mode acpi (the power button); start paused, destroy;
# undefine.
#
# Root only; libvirtd and virtlogd are this test's own (libvirt.inc.sh).
# Eight Debian boots: a LINUX_TESTS member.
# needs: native ring 0 (Linux guest; scripts/nested-kvm/place.sh)
dom=vi
. "$(dirname "$0")/libvirt.inc.sh"
command -v virt-install >/dev/null || skip "virt-install is missing (scripts/install-deps.sh check)"
qemu=$(command -v qemu-system-x86_64) || fail "no qemu-system-x86_64 (scripts/install-deps.sh check)"
guest=$(sh scripts/demo/image.sh) || fail "no Debian guest image (scripts/demo/image.sh)"
zcat "$guest/initrd.cpio.gz" | cpio -t 2>/dev/null | grep -qx bin/qemu-ga ||
	fail "no qemu-ga in the guest image (apt-get install qemu-guest-agent)"
vmm=$(readlink -f "${VMM:-build/vmm}")
truncate -s 64M "$T/disk.img"
head -c 1048576 /dev/urandom >"$T/hot.img" && truncate -s 16M "$T/hot.img"
hot_sha=$(head -c 1048576 "$T/hot.img" | sha256sum | cut -d' ' -f1)
ready="vmm demo: a shell"
agent_on="vport-links; qemu-ga -d -m virtio-serial -p /dev/virtio-ports/org.qemu.guest_agent.0 -t /tmp -f /tmp/qga.pid"

# virt-install MACHINE: its domain in $T/MACHINE.xml (QEMU's emulator).
virt_install() {
	if [ "$1" = q35 ]; then set --; else set -- --machine "$1"; fi
	virt-install --connect qemu:///system --import --name "$dom" --osinfo debian11 \
		--graphics none --network user,model=virtio --disk "$T/disk.img,bus=virtio" \
		--memory 512 --virt-type kvm "$@" \
		--boot "kernel=$guest/kernel,initrd=$guest/initrd.cpio.gz,kernel_args=$(cat tests/guest/linux/cmdline)" \
		--print-xml >"$T/xml" 2>"$T/virt-install.err" || { cat "$T/virt-install.err"; fail "virt-install"; }
}

# console LOG [COMMAND]: virsh console until the demo shell answers.
console() {
	python3 "$here/libvirt_console.py" qemu:///system "$dom" "$T/$1" "$limit" "$ready" ${2:+"$2"} ||
		{ tail -c 2000 "$T/$1"; fail "$side: virsh console"; }
}

# agent JSON: qemu-agent-command, retried while libvirt has not yet seen
# the agent's port open (VSERPORT_CHANGE); prints the answer.
agent() {
	for _ in $(seq 120); do
		$V qemu-agent-command "$dom" "$1" 2>"$T/agent.err" && return 0
		grep -q "not connected\|not responding" "$T/agent.err" || break
		sleep 0.5
	done
	tail -c 1500 "$T/console.$side_tag"
	fail "$side: qemu-agent-command $1: $(cat "$T/agent.err")"
}

# memstat NAME: a dommemstat figure (KiB), or empty.
memstat() { $V dommemstat "$dom" 2>/dev/null | awk -v n="$1" '$1 == n { print $2 }'; }

# wait_actual KIB: the balloon's size as libvirt reads it.
wait_actual() {
	for _ in $(seq 300); do
		[ "$(memstat actual)" = "$1" ] && return 0
		sleep 0.2
	done
	fail "$side: dommemstat actual is $(memstat actual) KiB, expected $1 after setmem"
}

# ask LOG COMMAND: type COMMAND on a virsh console opened now; its output
# lands in $T/LOG.
ask() {
	python3 "$here/libvirt_console.py" qemu:///system "$dom" "$T/$1" "$limit" "Escape character" "$2" \
		>/dev/null || { tail -c 2000 "$T/$1"; fail "$side: virsh console ($1)"; }
}

# hotplug ROUND: virsh attach-device --live of a virtio disk holding a
# pattern, seen and read by the guest, then detach-device --live, gone.
hotplug() {
	cat >"$T/hot.xml" <<XML
<disk type='file' device='disk'><driver name='qemu' type='raw'/>
  <source file='$T/hot.img'/><target dev='vdb' bus='virtio'/></disk>
XML
	$V attach-device "$dom" "$T/hot.xml" --live >/dev/null || fail "$side: attach-device ($1)"
	ask "hot.$side_tag.$1" 'for i in $(seq 90); do [ -b /dev/vdb ] && break; sleep 1; done; echo "VDB: $(dd if=/dev/vdb bs=64k count=16 2>/dev/null | sha256sum | cut -c1-64) END"'
	got=$(tr -d '\r' <"$T/hot.$side_tag.$1" | grep -ao 'VDB: [0-9a-f]* END' | tail -n 1 | cut -d' ' -f2)
	[ "$got" = "$hot_sha" ] || fail "$side: the attached disk reads as '$got', not the image's $hot_sha ($1)"
	$V detach-device "$dom" "$T/hot.xml" --live >/dev/null || fail "$side: detach-device ($1)"
	for _ in $(seq 150); do
		$V domblklist "$dom" | grep -q vdb || break
		sleep 0.4
	done
	! $V domblklist "$dom" | grep -q vdb || fail "$side: vdb still in domblklist 60 s after detach-device ($1)"
	ask "unhot.$side_tag.$1" 'for i in $(seq 30); do [ -b /dev/vdb ] || break; sleep 1; done; echo "VDB-GONE: $([ -b /dev/vdb ] && echo no || echo yes) END"'
	tr -d '\r' <"$T/unhot.$side_tag.$1" | grep -aq 'VDB-GONE: yes END' ||
		fail "$side: the guest still has /dev/vdb after detach-device ($1)"
	# an rng beside virt-install's (/dev/urandom): its own source tells them apart
	echo "<rng model='virtio'><backend model='random'>/dev/random</backend></rng>" >"$T/rng.xml"
	$V attach-device "$dom" "$T/rng.xml" --live >/dev/null || fail "$side: attach-device of an rng ($1)"
	rngs 2 "rng.$1"
	$V detach-device "$dom" "$T/rng.xml" --live >/dev/null || fail "$side: detach-device of an rng ($1)"
	for _ in $(seq 150); do
		[ "$($V dumpxml "$dom" | grep -c '<rng ')" = 1 ] && break
		sleep 0.4
	done
	[ "$($V dumpxml "$dom" | grep -c '<rng ')" = 1 ] || fail "$side: the rng is still in the domain 60 s after detach-device ($1)"
	rngs 1 "unrng.$1"
}

# rngs N LOG: the guest's hw_random core lists N virtio_rng devices.
rngs() {
	cmd="grep -o virtio_rng /sys/class/misc/hw_random/rng_available | wc -l"
	ask "$2.$side_tag" "for i in \$(seq 90); do [ \$($cmd) = $1 ] && break; sleep 1; done; echo \"RNGS: \$($cmd) END\""
	got=$(tr -d '\r' <"$T/$2.$side_tag" | grep -ao 'RNGS: [0-9]* END' | tail -n 1 | cut -d' ' -f2)
	[ "$got" = "$1" ] || fail "$side: the guest lists $got virtio_rng devices, not $1 ($2)"
}

# flow MACHINE SIDE EMULATOR
flow() {
	machine=$1 side="$2 $1" side_tag="$2.$1" t0=$(date +%s)
	sed "s|<emulator>.*</emulator>|<emulator>$3</emulator>|" "$T/$machine.xml" >"$T/run.xml"
	$V define "$T/run.xml" >/dev/null || fail "$side: virsh define"
	$V start --paused "$dom" >/dev/null || fail "$side: virsh start"
	wait_state paused 20
	console "console.$2.$machine" "$agent_on" &
	cpid=$!
	sleep 2
	$V resume "$dom" >/dev/null || fail "$side: virsh resume"
	wait $cpid || exit 1
	boot=$(($(date +%s) - t0))

	[ "$(agent '{"execute":"guest-ping"}')" = '{"return":{}}' ] || fail "$side: guest-ping answered $(agent '{"execute":"guest-ping"}')"
	$V domifaddr "$dom" --source agent >"$T/ifaddr" || fail "$side: domifaddr --source agent"
	grep -q "eth0 .*ipv4 *10\.0\.2\.15/24" "$T/ifaddr" || { cat "$T/ifaddr"; fail "$side: no 10.0.2.15 on eth0 from the agent"; }

	$V dommemstat "$dom" --period 1 --live >/dev/null || fail "$side: dommemstat --period"
	for _ in $(seq 100); do [ -n "$(memstat available)" ] && [ -n "$(memstat usable)" ] && break; sleep 0.2; done
	[ -n "$(memstat available)" ] && [ -n "$(memstat last_update)" ] ||
		fail "$side: no guest statistics in dommemstat: $($V dommemstat "$dom" | tr '\n' ' ')"
	$V setmem "$dom" 300M --live || fail "$side: setmem 300M"
	wait_actual 307200
	$V setmem "$dom" 512M --live || fail "$side: setmem 512M"
	wait_actual 524288

	$V suspend "$dom" >/dev/null && wait_state paused 10 && $V resume "$dom" >/dev/null &&
		wait_state running 10 || fail "$side: suspend/resume"
	agent '{"execute":"guest-ping"}' >/dev/null
	hot=
	if [ "$machine" = q35 ]; then
		hotplug 1
		hotplug 2
		hot=" attach-device and detach-device of a disk and an rng (twice),"
	fi

	$V shutdown "$dom" --mode agent >/dev/null || fail "$side: shutdown --mode agent"
	wait_state "shut off" 120
	tail -n 3 "/var/log/libvirt/qemu/$dom.log" | grep -q "reason=shutdown" ||
		fail "$side: the agent's shutdown was not the guest's"

	$V start "$dom" >/dev/null || fail "$side: virsh start (again)"
	wait_state running 20
	console "console2.$2.$machine"
	$V shutdown "$dom" --mode acpi >/dev/null || fail "$side: shutdown --mode acpi"
	wait_state "shut off" 120
	tail -n 3 "/var/log/libvirt/qemu/$dom.log" | grep -q "reason=shutdown" ||
		fail "$side: the power button's shutdown was not the guest's"

	$V start --paused "$dom" >/dev/null || fail "$side: virsh start --paused"
	wait_state paused 20
	pid=$(emulator_pid)
	$V destroy "$dom" >/dev/null && wait_state "shut off" 20 || fail "$side: virsh destroy"
	! kill -0 "$pid" 2>/dev/null || fail "$side: the emulator still runs after destroy"
	$V undefine "$dom" >/dev/null || fail "$side: virsh undefine"
	echo "$side: define, start, console, agent ping, domifaddr, dommemstat, setmem 300M/512M," \
		"suspend/resume,$hot shutdown by agent and by ACPI, destroy, undefine:" \
		"boot to the shell ${boot} s, all $(($(date +%s) - t0)) s"
}

for machine in q35 pc; do
	virt_install "$machine"
	mv "$T/xml" "$T/$machine.xml"
	grep -q "machine=\"$machine\"" "$T/$machine.xml" || fail "virt-install's domain is not $machine"
	[ "$machine" = pc ] || grep -q pcie-root-port "$T/$machine.xml" || fail "no pcie-root-port"
	flow "$machine" vmm "$vmm"
	flow "$machine" qemu "$qemu"
done
echo "ok: virt-install's q35 and pc domains under libvirt, vmm and QEMU alike"
