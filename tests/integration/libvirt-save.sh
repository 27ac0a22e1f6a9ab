#!/bin/sh
# libvirt-save.sh — Debian's libvirt 9.0 saves and restores a vmm guest
# through vmm's migration stream, QEMU running the same flows as the
# reference: virsh save (libvirt passes the file's fd with getfd and
# sends migrate fd:NAME after its own header) — the file is there and the
# emulator gone — then virsh restore (a new emulator, -incoming defer,
# migrate-incoming fd:N at the file's offset): the guest runs on with its
# memory (a value written in its shell before the save is read back, its
# uptime did not go back); virsh managedsave (dominfo says "Managed save:
# yes") and virsh start resumes from the image; a truncated save file is
# refused by virsh restore with a clear error and nothing crashes.
#
# The domain is libvirt.inc.sh's plain one with the USB controller libvirt
# gives every pc domain (piix3-usb-uhci); a balloon and virtio-serial
# across a save are migrate-devices.sh's, a balloon through libvirt's
# migrations libvirt-migrate.sh's.
#
# Root only; libvirtd and virtlogd are this test's own (libvirt.inc.sh).
# make demo's Debian kernel and initrd (as libvirt-virt-install.sh);
# Linux boots: a LINUX_TESTS member.
# needs: native ring 0 (Linux guest; scripts/nested-kvm/place.sh)
dom=vs
libvirt_log=${TEST_LOGS:-${B:-build}/test-logs}/libvirt-save.libvirtd.log
. "$(dirname "$0")/libvirt.inc.sh"
guest=$(sh scripts/demo/image.sh) || fail "no Debian guest image (scripts/demo/image.sh)"
qemu=$(command -v qemu-system-x86_64) || fail "no qemu-system-x86_64 (scripts/install-deps.sh check)"
vmm=$(readlink -f "${VMM:-build/vmm}")

# shell LOG [MARKER] COMMAND: type COMMAND on virsh console (after the
# boot's MARKER; "" for a guest already up) and log what it printed.
shell() {
	python3 "$here/libvirt_console.py" qemu:///system "$dom" "$T/$1" "$limit" "$2" "$3" >/dev/null ||
		{ tail -c 2000 "$T/$1"; fail "$side: virsh console ($1)"; }
}
# uptime LOG: the guest's whole seconds of uptime that LOG printed.
uptime_in() { grep -ao 'UP-[0-9][0-9]*' "$T/$1" | tail -n 1 | cut -d- -f2; }
# resumed LOG: the value written before the save is there, the uptime went on.
resumed() {
	shell "$1" "Escape character" "cat /tmp/v; echo UP-\$(cut -d. -f1 /proc/uptime)"
	grep -aq "SAVED-1234" "$T/$1" || { tail -c 1000 "$T/$1"; fail "$side: $2: the value written before the save is gone"; }
	up=$(uptime_in "$1")
	[ -n "$up" ] && [ "$up" -ge "$up0" ] || fail "$side: $2: uptime $up s after, $up0 s before the save"
}
ms() { date +%s%3N; }
emulator_gone() {
	! kill -0 "$1" 2>/dev/null || fail "$side: the emulator (pid $1) still runs after $2"
}

# flow SIDE EMULATOR
flow() {
	side=$1
	domain "$2" piix3-uhci >"$T/$side.xml"
	$V define "$T/$side.xml" >/dev/null || fail "$side: virsh define"
	$V start --paused "$dom" >/dev/null || fail "$side: virsh start"
	wait_state paused 20
	python3 "$here/libvirt_console.py" qemu:///system "$dom" "$T/boot.$side" "$limit" "vmm demo: a shell" \
		"echo SAVED-\$((1000+234)) >/tmp/v; echo UP-\$(cut -d. -f1 /proc/uptime)" >/dev/null &
	cpid=$!
	sleep 2
	$V resume "$dom" >/dev/null || fail "$side: virsh resume"
	wait $cpid || { tail -c 2000 "$T/boot.$side"; fail "$side: virsh console (boot)"; }
	up0=$(uptime_in "boot.$side")
	[ -n "$up0" ] || fail "$side: no uptime from the guest"

	pid=$(emulator_pid)
	t=$(ms)
	$V save "$dom" "$T/save.$side" >"$T/out" 2>&1 || { cat "$T/out"; fail "$side: virsh save"; }
	save_ms=$(($(ms) - t))
	[ -s "$T/save.$side" ] || fail "$side: no save file"
	[ "$(state)" = "shut off" ] || fail "$side: domstate '$(state)' after save"
	emulator_gone "$pid" save
	t=$(ms)
	$V restore "$T/save.$side" >"$T/out" 2>&1 || { cat "$T/out"; fail "$side: virsh restore"; }
	restore_ms=$(($(ms) - t))
	wait_state running 20
	resumed "restored.$side" restore

	$V managedsave "$dom" >"$T/out" 2>&1 || { cat "$T/out"; fail "$side: virsh managedsave"; }
	[ "$(state)" = "shut off" ] || fail "$side: domstate '$(state)' after managedsave"
	$V dominfo "$dom" | grep -q "^Managed save: *yes" || fail "$side: dominfo says no managed save"
	$V start "$dom" >/dev/null || fail "$side: virsh start (from the managed save)"
	wait_state running 20
	$V dominfo "$dom" | grep -q "^Managed save: *no" || fail "$side: the managed save is still there after start"
	resumed "managed.$side" "managedsave + start"

	# A save file cut short: refused, the domain stays off, nothing crashed.
	$V destroy "$dom" >/dev/null && wait_state "shut off" 20 || fail "$side: virsh destroy"
	size=$(stat -c %s "$T/save.$side")
	head -c $((size / 2)) "$T/save.$side" >"$T/cut.$side"
	if $V restore "$T/cut.$side" >"$T/out" 2>&1; then
		fail "$side: virsh restore took a truncated save file"
	fi
	[ "$(state)" = "shut off" ] || fail "$side: domstate '$(state)' after the failed restore"
	echo "$side: truncated file refused: $(tr '\n' ' ' <"$T/out")"
	[ "$side" = qemu ] || grep -q "migration stream: truncated" "$T/out" ||
		fail "$side: the refusal does not say the stream is truncated"
	grep -aE "Assertion|Sanitizer|core dumped|Segmentation" "/var/log/libvirt/qemu/$dom.log" &&
		fail "$side: the emulator crashed"
	$V undefine "$dom" >/dev/null || fail "$side: virsh undefine"
	echo "$side: save ${save_ms} ms ($(($(stat -c %s "$T/save.$side") >> 20)) MiB), restore ${restore_ms} ms;" \
		"state kept over save/restore and managedsave/start (uptime $up0 -> $up s)"
}

flow vmm "$vmm"
flow qemu "$qemu"

echo "ok: virsh save/restore, managedsave/start and a truncated save file, vmm and QEMU alike"
