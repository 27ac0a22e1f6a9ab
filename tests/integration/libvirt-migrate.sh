#!/bin/sh
# libvirt-migrate.sh — virsh migrate --live of a vmm guest between two
# libvirtds standing for two hosts, QEMU running the same migration as the
# reference. The source is libvirt.inc.sh's libvirtd; the destination is a
# second libvirtd (and virtlogd) in a mount namespace of its own with its
# own /run/libvirt, /var/lib/libvirt, ... and another host_uuid (libvirt
# refuses a migration to the same host); both share the network, and the
# migration URI tcp://127.0.0.1 names the destination (libvirt refuses a
# "localhost" hostname).
#
# Per emulator, one boot and six migrations, three kinds there and back: native
# `virsh migrate --live` (virsh drives both libvirtds; the destination's
# emulator starts with -incoming defer and gets migrate-incoming
# tcp:[::]:PORT, the source's gets `migrate tcp:127.0.0.1:PORT`; libvirt
# sets the `return-path` capability on both, so the source completes only
# once the destination loaded the stream), `--live --p2p` (the source
# libvirtd talks to the destination's itself, the stream still goes
# directly) and `--live --p2p --tunnelled` (no return-path: libvirt
# carries the stream, `getfd` + `migrate fd:migrate` into a pipe at the
# source, `migrate-incoming fd:N` from one at the destination). After
# each: the guest runs on the destination with its memory (a value
# written in its shell before is read back, the uptime went on), the
# source's emulator is gone and its domain with it.
#
# Nested, each migration took 7-58 s (vmm) and 16-46 s (QEMU); two
# earlier runs saw QEMU's guest print nothing on its boot console for 5
# and 10 min (undiagnosed). Root only; two Linux boots: a LINUX_TESTS member.
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

# migrate STEP there|back FLAGS...: the running domain goes to the other
# libvirtd; checked there.
migrate() {
	step=$1
	if [ "$2" = there ]; then
		from=$V to=$VD uri=$DURI pidfile=/run/libvirt/qemu/$dom.pid
	else
		from=$VD to=$V uri=$SURI pidfile=$D/run/libvirt/qemu/$dom.pid
	fi
	shift 2
	pid=$(cat "$pidfile" 2>/dev/null)
	[ -n "$pid" ] || fail "$side: $step: no emulator pid in $pidfile"
	t=$(ms)
	# the stream's own URI: none for --tunnelled (libvirt refuses one)
	case " $* " in *" --tunnelled "*) muri= ;; *) muri=tcp://127.0.0.1 ;; esac
	timeout "$limit" $from migrate "$@" "$dom" "$uri" $muri >"$T/out" 2>&1 || {
		rc=$? # 124: timed out
		cat "$T/out"
		for log in /var/log/libvirt/libvirtd.log "$D/var/log/libvirt/libvirtd.log"; do
			echo "--- the last QMP in $log"
			grep -a 'QEMU_MONITOR_IO_WRITE\|QEMU_MONITOR_RECV' "$log" | tail -n 8 | cut -c1-300
		done
		grep ' error : ' "$D/var/log/libvirt/libvirtd.log" | tail -n 5
		fail "$side: $step: virsh migrate $* (status $rc)"
	}
	took=$(($(ms) - t))
	for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
	! kill -0 "$pid" 2>/dev/null || fail "$side: $step: the source's emulator (pid $pid) still runs"
	$from domstate "$dom" >/dev/null 2>&1 && fail "$side: $step: the transient domain is still on the source"
	st=$($to domstate "$dom" 2>&1)
	[ "$st" = running ] || fail "$side: $step: domstate on the destination is '$st'"
	if [ "$to" = "$VD" ]; then on "$DURI" "$step.$side"; else on qemu:///system "$step.$side"; fi
	up0=$up # the next step's uptime goes on from here
	echo "$side: $step: virsh migrate $* in $took ms; memory kept, uptime $up s"
}

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

	migrate native-there there --live
	migrate native-back back --live
	migrate p2p-there there --live --p2p
	migrate p2p-back back --live --p2p
	migrate tunnelled-there there --live --p2p --tunnelled
	migrate tunnelled-back back --live --p2p --tunnelled
	$V destroy "$dom" >/dev/null || fail "$side: virsh destroy"
}

flow vmm "$vmm"
flow qemu "$qemu"
echo "ok: virsh migrate --live (native, --p2p, --p2p --tunnelled) between two libvirtds and back, vmm and QEMU alike"
