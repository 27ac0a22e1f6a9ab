#!/bin/sh
# libvirt-channel-hotplug.sh — `virsh attach-device --live` and
# `detach-device --live` of a guest-agent channel (<channel type='unix'>,
# target virtio org.qemu.guest_agent.0), as virt-manager adds one to a
# running domain, through Debian's libvirt 9.0 with vmm as the emulator and
# QEMU as the reference. libvirt answers it with chardev-add (the listening
# socket passed with getfd, or a path) and device_add virtserialport, and
# the detach with device_del and chardev-remove: the emulator must take
# each, show the port in query-chardev and qom-list while it is there,
# accept connections on the channel's socket, and drop both after the
# detach; three rounds, so that freed entries are used again, the second
# with `virsh save` and `virsh restore` while the port is there (its state
# must load into the new emulator's port). The guest is
# the kit's mem-dirty payload (no Linux: the host side is what is tested,
# and it runs natively where guest ring 0 is emulated); it must tick on
# through all of it.
dom=chan
libvirt_log=${TEST_LOGS:-${B:-build}/test-logs}/libvirt-channel-hotplug.libvirtd.log
. "$(dirname "$0")/libvirt.inc.sh"
qemu=$(command -v qemu-system-x86_64) || fail "no qemu-system-x86_64 (scripts/install-deps.sh check)"
vmm=$(readlink -f "${VMM:-build/vmm}")
payload=$(readlink -f "${B:-build}/tests/guest/mem-dirty.elf")
[ -f "$payload" ] || fail "$payload is not built (make)"
memory=512
boot_xml="<kernel>$payload</kernel><cmdline>mb=64 tick=20</cmdline>"
devices="<controller type='virtio-serial' index='0'/>"

qmp() { $V qemu-monitor-command "$dom" "$1" 2>&1; }
listens() { python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])' "$1"; }

# tick SIDE WHAT: the payload ticks on past $seq
tick() {
	out=$(python3 "$here/libvirt_kit_console.py" qemu:///system "$dom" "$T/$2.$1" 1 20) ||
		{ tail -c 1000 "$T/$2.$1"; fail "$1: $2: $out"; }
	set -- "$1" "$2" $out # SIDE WHAT ticks FIRST LAST ...
	[ "$4" -gt "$seq" ] || fail "$1: $2: tick $4 after tick $seq"
	seq=$5
}

# flow SIDE EMULATOR
flow() {
	side=$1 seq=-1
	domain "$2" >"$T/$side.xml"
	$V create "$T/$side.xml" >/dev/null || fail "$side: virsh create"
	tick "$side" boot
	for round in 1 2 3; do
		sock=$T/agent.$side.$round
		cat >"$T/channel.xml" <<XML
<channel type='unix'>
  <source mode='bind' path='$sock'/>
  <target type='virtio' name='org.qemu.guest_agent.0'/>
</channel>
XML
		$V attach-device "$dom" "$T/channel.xml" --live >"$T/out" 2>&1 ||
			{ cat "$T/out"; fail "$side: round $round: virsh attach-device --live"; }
		$V dumpxml "$dom" | grep -q "path='$sock'" ||
			fail "$side: round $round: the live XML has no channel on $sock"
		alias=$($V dumpxml "$dom" | awk -v p="path='$sock'" 'index($0, p) { f = 1 }
			f && /alias name=/ { sub(/.*alias name=./, ""); sub(/\047.*/, ""); print; exit }')
		[ -n "$alias" ] || fail "$side: round $round: no alias for the channel"
		chars=$(qmp '{"execute":"query-chardev"}')
		echo "$chars" | grep -q "\"char$alias\"" ||
			fail "$side: round $round: query-chardev lacks char$alias: $chars"
		qmp '{"execute":"qom-list","arguments":{"path":"/machine/peripheral"}}' | grep -q "\"$alias\"" ||
			fail "$side: round $round: qom-list /machine/peripheral lacks $alias"
		listens "$sock" || fail "$side: round $round: nothing listens on the channel's socket $sock"
		if [ "$round" = 2 ]; then
			# the hot-added port goes with the guest: virsh save and
			# restore start a new emulator with it on its command line
			save_restore "$side"
			qmp '{"execute":"query-chardev"}' | grep -q "\"char$alias\"" ||
				fail "$side: the restored emulator lacks char$alias"
			listens "$sock" || fail "$side: nothing listens on $sock after the restore"
			tick "$side" restored
		fi
		$V detach-device "$dom" "$T/channel.xml" --live >"$T/out" 2>&1 ||
			{ cat "$T/out"; fail "$side: round $round: virsh detach-device --live"; }
		for _ in $(seq 50); do
			$V dumpxml "$dom" | grep -q "path='$sock'" || break
			sleep 0.1
		done
		! $V dumpxml "$dom" | grep -q "path='$sock'" || fail "$side: round $round: the channel is still in the live XML"
		qmp '{"execute":"query-chardev"}' | grep -q "\"char$alias\"" &&
			fail "$side: round $round: query-chardev still has char$alias after the detach"
		qmp '{"execute":"qom-list","arguments":{"path":"/machine/peripheral"}}' | grep -q "\"$alias\"" &&
			fail "$side: round $round: qom-list still has $alias after the detach"
		tick "$side" "round$round"
	done
	$V destroy "$dom" >/dev/null || fail "$side: virsh destroy"
	echo "ok: $side: a guest-agent channel attached and detached live 3 times ($alias), the guest ticking on"
}

flow vmm "$vmm"
flow qemu "$qemu"
