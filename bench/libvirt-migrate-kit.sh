#!/bin/sh
# libvirt-migrate-kit.sh — issue 32's figures through Debian's libvirt 9.0,
# vmm vs qemu-system-x86_64 side by side in one run: `virsh migrate --live`
# between two libvirtds standing for two hosts (libvirt.inc.sh's
# second_host), then `virsh save` and `virsh restore`. The guest is the
# kit's mem-dirty payload (1 GiB, 256 MiB filled, ticking and rewriting
# memory from ring 3), booted by libvirt as <kernel>, so that where guest
# ring 0 is emulated (kvm_pvm) the guest still runs at native speed and
# the figures are the VMMs' and libvirt's, not the emulation's.
#
# One round, per side: the domain starts (transient, 1 vCPU, no NIC); an
# idle live migration to the second libvirtd; the payload starts
# rewriting 64 MiB at 100 MB/s; a live migration back while it does;
# virsh save and virsh restore; destroy. After each step `virsh console`
# must show the tick counter going on from before and no damaged page
# (the payload checks every page it does not rewrite each second). The
# figures: virsh migrate's wall time, and the destination's `virsh
# domjobinfo --completed` (libvirt's "Total downtime": from the source's
# pause to the destination's resume, on this one host's clock; QEMU's
# and vmm's own "Downtime w/o network"; the passes, "Iteration"); virsh
# save and restore wall times. A warm-up round per side is not counted;
# then the sides alternate ROUNDS times (default 5), so that a drift of
# the host hits both. Prints each round, then medians and vmm/QEMU
# (below 1: vmm is faster). Root. Env: VMM (default build/vmm), ROUNDS,
# KEEP (a folder: the run's files, libvirtds' logs with their QMP, go there).
dom=kit
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
. tests/integration/libvirt.inc.sh
qemu=$(command -v qemu-system-x86_64) || fail "no qemu-system-x86_64"
vmm=$(readlink -f "${VMM:-build/vmm}")
payload=$(readlink -f "${B:-build}/tests/guest/mem-dirty.elf")
[ -f "$payload" ] || fail "$payload is not built (make)"
rounds=${ROUNDS:-5}
tick=10
memory=1024
boot_xml="<kernel>$payload</kernel><cmdline>mb=256 tick=$tick rate=100 dirtymb=64</cmdline>"
second_host
trap '[ -z "${KEEP:-}" ] || cp -r "$T" "$KEEP"; stop_dst; cleanup' EXIT
ms() { date +%s%3N; }

# watch URI LOG [SEND]: the payload's ticks went on past $seq; sets seq, mbps
watch() {
	what=$2
	out=$(python3 tests/integration/libvirt_kit_console.py "$1" "$dom" "$T/$what" 2 "$tick" ${3:-}) ||
		{ tail -c 1500 "$T/$what"; fail "$side: $what: $out"; }
	set -- $out # ticks FIRST LAST rewrite MBPS
	[ "$2" -gt "$seq" ] || fail "$side: $what: tick $2 after tick $seq: the counter went back"
	seq=$3 mbps=$5
}

# jobinfo FIELD: a figure of the completed job ($T/job), in ms or a count
jobinfo() { awk -F: -v f="$1" '$1 == f { print $2 + 0 }' "$T/job"; }

# migrate STEP FROM TO URI: one live migration; appends "wall total down downnet passes"
migrate() {
	t=$(ms)
	timeout 600 $2 migrate --live "$dom" "$4" tcp://127.0.0.1 >"$T/out" 2>&1 ||
		{ cat "$T/out"; fail "$side: $1: virsh migrate --live"; }
	wall=$(($(ms) - t))
	[ "$($3 domstate "$dom" 2>&1)" = running ] || fail "$side: $1: not running on the destination"
	$3 domjobinfo --completed "$dom" >"$T/job" 2>&1
	cp "$T/job" "$T/job.$1.$side"
	fig="$wall $(jobinfo 'Time elapsed') $(jobinfo 'Total downtime')"
	fig="$fig $(jobinfo 'Downtime w/o network') $(jobinfo 'Iteration')"
	echo "$fig"
}

# round SIDE EMULATOR COUNTED
round() {
	side=$1 seq=-1
	domain "$2" >"$T/$side.xml"
	$V create "$T/$side.xml" >/dev/null || fail "$side: virsh create"
	watch qemu:///system "boot.$side"
	idle=$(migrate idle "$V" "$VD" "$DURI")
	watch "$DURI" "idle.$side" d
	sleep 2
	watch "$DURI" "dirtying.$side"
	[ "${mbps%.*}" -ge 50 ] || fail "$side: the payload rewrites $mbps MB/s, not about 100"
	rate=$mbps
	dirty=$(migrate dirtying "$VD" "$V" "$SURI")
	watch qemu:///system "dirtied.$side" i
	save_restore "$side"
	watch qemu:///system "restored.$side"
	$V destroy "$dom" >/dev/null 2>&1
	rm -f "$T/save"
	echo "libvirt-migrate-kit: $side${3:+ round $3}: idle [wall total downtime w/o-net passes] $idle;" \
		"dirtying at $rate MB/s $dirty; save $save_ms ms, restore $restore_ms ms"
	[ -z "$3" ] || echo "$idle $dirty $save_ms $restore_ms" >>"$T/$side.fig"
}

round vmm "$vmm" ""
round qemu "$qemu" ""
for n in $(seq "$rounds"); do
	round vmm "$vmm" "$n"
	round qemu "$qemu" "$n"
done

# median FILE COLUMN
median() { sort -n -k"$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END { print v[int((NR + 1) / 2)] }'; }
for c in 1:"idle, virsh migrate" 2:"idle, time elapsed" 3:"idle, total downtime" \
	4:"idle, downtime w/o network" 5:"idle, passes" 6:"dirtying, virsh migrate" \
	7:"dirtying, time elapsed" 8:"dirtying, total downtime" 9:"dirtying, downtime w/o network" \
	10:"dirtying, passes" 11:"virsh save" 12:"virsh restore"; do
	col=${c%%:*} what=${c#*:}
	a=$(median "$T/vmm.fig" "$col") b=$(median "$T/qemu.fig" "$col")
	echo "libvirt-migrate-kit: $what (median of $rounds): vmm $a, QEMU $b:" \
		"ratio $(echo "scale=2; $a / ($b + (${b:-0} == 0))" | bc)"
done
