# linux-wlan.inc.sh — sourced by the linux-wlan-*.sh tests: boots guests
# with the WLAN initramfs (scripts/guest-wlan-initramfs.sh: Debian's hostapd,
# wpa_supplicant, iw and ip, AP and station configs in /etc) and drives their
# serial consoles and monitors. mac80211_hwsim is built into the guest kernel
# with two radios (wlan0, wlan1); with a virtio-wlan-pci device its frames go
# through vmm's medium, without one through hwsim's in-kernel medium. With
# WLAN_KERNEL=debian the guest runs Debian's packaged kernel instead, with
# its own mac80211_hwsim module (what users run).
#
# hostapd and wpa_supplicant run in the background on the console, so their
# events (AP-ENABLED, CTRL-EVENT-CONNECTED/-DISCONNECTED) land in the output
# the host greps: no polling in the guest, whose ring 0 is emulated on the
# CI hosts (every exec costs it seconds). The guest kernel has no POSIX
# timers (alarm() fails), so ping and arping send one probe: each is run
# under `timeout` and retried. Busybox's shell runs its own applets first
# (ip too): iproute2's ip is called by its path.
set -eu
vmm=${VMM:-build/vmm}
limit=${LINUX_TIMEOUT:-840} # below tests/run.sh's 900 s
[ -e /dev/kvm ] || { echo "skip: no /dev/kvm"; exit 77; }
command -v python3 >/dev/null || { echo "skip: no python3 (monitor client)"; exit 77; }
for p in hostapd wpasupplicant iw iproute2 wireless-regdb; do
	dpkg-query -W -f '${Status}' $p 2>/dev/null | grep -q "install ok installed" ||
		{ echo "skip: Debian package $p missing (sh scripts/install-deps.sh linux)"; exit 77; }
done
if [ "${WLAN_KERNEL:-}" = debian ]; then
	say() { :; }
	die() { echo "$*"; exit 1; }
	. scripts/lib/debian-kernel.sh
	kver=$(debian_kver) || { echo "FAIL: $kver"; exit 1; }
	kernel=/boot/vmlinuz-$kver
	initrd=$(sh scripts/guest-wlan-initramfs.sh debian)
else
	kernel=$(sh scripts/guest-kernel.sh)/bzImage
	initrd=$(sh scripts/guest-wlan-initramfs.sh)
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/linux-wlan.XXXXXX")
pids=
trap 'for p in $pids; do kill -9 $p 2>/dev/null || true; done; rm -rf "$tmp"' EXIT
# tests/run.sh's timeout sends SIGTERM: leave through the EXIT trap.
trap 'exit 1' HUP INT TERM
t0=$(date +%s)
step=0

elapsed() { echo $(($(date +%s) - t0)); }
. tests/integration/wait-output.inc.sh
fail() {
	for f in "$tmp"/*.out; do
		[ -f "$f" ] && { echo "--- ${f##*/} (last 25 lines)"; tail -25 "$f"; }
	done
	echo "FAIL: $*"
	exit 1
}

# wlan_boot VM FD [VMM OPTIONS...]: boot a guest; its console output goes to
# $tmp/VM.out, lines typed into it through file descriptor FD, its monitor
# listens on $tmp/VM.mon.
wlan_boot() {
	_vm=$1 _fd=$2
	shift 2
	mkfifo "$tmp/$_vm.in"
	# mac80211 gives the AP 100 ms after the ACK of an authentication or
	# association request to answer (hostapd in user space), 3 tries: a
	# guest starved by a loaded host never associates. A higher priority
	# where allowed (root); otherwise nice just runs vmm.
	nice -n -10 "$vmm" -m 256 -nographic -serial stdio -monitor "unix:$tmp/$_vm.mon,server,nowait" \
		-no-reboot -kernel "$kernel" -initrd "$initrd" \
		-append "$(cat tests/guest/linux/cmdline) mac80211_hwsim.radios=2" "$@" \
		<"$tmp/$_vm.in" >"$tmp/$_vm.out" 2>&1 &
	eval "pid_$_vm=$! fd_$_vm=$_fd"
	pids="$pids $!"
	eval "exec $_fd>\"\$tmp/\$_vm.in\""
}

# count_in VM PATTERN: lines of VM's console output matching PATTERN.
count_in() { grep -c "$2" "$tmp/$1.out" || true; }

# wait_in VM PATTERN [N [SECONDS]]: until PATTERN matches N (default 1)
# lines of VM's output; fails when the VM exits first, after SECONDS (from
# now) or at the test's time limit.
wait_in() {
	_left=$((limit - $(elapsed)))
	[ "${4:-$limit}" -ge "$_left" ] || _left=$4
	eval "_pid=\$pid_$1"
	wait_output -n "${3:-1}" "$tmp/$1.out" "$2" "$_pid" "$_left" && return
	[ $? != 124 ] || fail "no '$2' (x${3:-1}) from $1 in $_left s (the test's limit: $limit s)"
	fail "$1 exited before '$2'"
}

# type_in VM LINE: type LINE into VM's console.
type_in() { eval "printf '%s\n' \"\$2\" >&\$fd_$1"; }

# run_in VM COMMAND: run COMMAND in VM's shell and wait for it; its exit
# status lands in $rc. (The marker's digits are only in the output, never in
# the echoed command line.)
run_in() {
	step=$((step + 1))
	type_in "$1" "$2; echo @@$step:\$?@@"
	wait_in "$1" "@@$step:[0-9][0-9]*@@"
	rc=$(grep -o "@@$step:[0-9]*@@" "$tmp/$1.out" | head -1 | tr -dc 0-9)
	rc=${rc#"$step"}
}

# mon VM COMMAND: one command on VM's monitor; prints its output.
mon() {
	PYTHONPATH=tests/integration python3 -c '
import sys
from core_mon import connect, cmd
connect(sys.argv[1])
print(cmd(sys.argv[2]), end="")' "$tmp/$1.mon" "$2"
}

# drops TEXT REASON: the medium-wide count of REASON in `info wlan` TEXT.
drops() { echo "$1" | sed -n "s/^drops:.* $2=\([0-9]*\).*/\1/p" | head -1; }

# start_ap VM / start_station VM: hostapd on wlan0 (10.0.0.1), wpa_supplicant
# on wlan1 (10.0.0.2, under STATION_MAC when set), both for the open
# network "vmm-wlan" on channel 36.
start_ap() {
	type_in "$1" 'hostapd /etc/hostapd.conf &'
	wait_in "$1" "wlan0: AP-ENABLED"
	run_in "$1" '/sbin/ip addr add 10.0.0.1/24 dev wlan0'
	[ "$rc" = 0 ] || fail "$1: ip addr add on wlan0: status $rc"
	echo "$1: AP up on channel 36 after $(elapsed) s"
}
start_station() {
	if [ -n "${STATION_MAC:-}" ]; then # an address other than the radio's own
		run_in "$1" "/sbin/ip link set wlan1 address $STATION_MAC"
		[ "$rc" = 0 ] || fail "$1: ip link set wlan1 address: status $rc"
	fi
	type_in "$1" 'wpa_supplicant -i wlan1 -c /etc/wpa_supplicant.conf &'
	wait_in "$1" "wlan1: CTRL-EVENT-CONNECTED"
	run_in "$1" '/sbin/ip addr add 10.0.0.2/24 dev wlan1'
	[ "$rc" = 0 ] || fail "$1: ip addr add on wlan1: status $rc"
	echo "$1: station associated after $(elapsed) s"
}

# across VM TOOL: from VM's station (wlan1) to the AP's 10.0.0.1 over the
# air, up to 5 tries of 10 s: TOOL arping (both radios in one guest: an
# ICMP echo to a local address would never leave the machine, but an ARP
# request sent on wlan1 is answered by wlan0 only through the medium) or
# ping (the AP in another guest). Sets rc.
across() {
	if [ "$2" = arping ]; then
		_cmd='timeout 10 arping -f -I wlan1 10.0.0.1 | grep "reply from 10.0.0.1 \[02:00:00:00:00:00\]"'
	else
		_cmd='timeout 10 ping -c 1 10.0.0.1 | grep "bytes from 10.0.0.1"'
	fi
	run_in "$1" "for i in 1 2 3 4 5; do $_cmd && break; done"
}

# finish VM...: scan each guest's dmesg for kernel errors, power it off,
# expect exit status 0.
finish() {
	for _vm in "$@"; do
		step=$((step + 1))
		_errors="emulation failure|BUG:|Oops|Kernel panic|WARNING:|Call Trace"
		type_in "$_vm" "dmesg | grep -iE '$_errors' | sed 's/^/DMESG-ERROR /'; echo @@$step:\$(dmesg | grep -ciE '$_errors')@@"
		wait_in "$_vm" "@@$step:[0-9][0-9]*@@"
		grep -q "@@$step:0@@" "$tmp/$_vm.out" ||
			{ grep "^DMESG-ERROR" "$tmp/$_vm.out"; fail "$_vm: kernel errors in dmesg"; }
		type_in "$_vm" 'poweroff -f'
		_status=0
		eval "wait \$pid_$_vm" || _status=$?
		[ "$_status" = 0 ] || fail "$_vm: poweroff exit status $_status"
	done
}

# domain_cycle "CTL..." STA TOOL: the regulatory part of the medium tests.
# CTL runs one medium command and prints its answer (`mon VM` for a VM's
# own medium, `ctl` for the daemon's); STA is the station's VM, TOOL
# arping or ping (see across). The medium first shows both radios on 5180
# MHz and frames delivered; `wlan_country BD` (no rule covers 5150-5250 MHz
# in wireless-regdb) must make the station lose the AP, keep it off while
# the domain forbids the channel and count no-rule drops; `wlan_country DE`
# must bring it back, traffic crossing again.
domain_cycle() {
	_info=$($1 "info wlan")
	echo "$_info"
	_delivered=$(echo "$_info" | sed -n 's/^frames: [0-9]* sent, \([0-9]*\) delivered.*/\1/p')
	[ "${_delivered:-0}" -gt 0 ] || fail "the medium delivered no frames"
	[ "$(echo "$_info" | grep -c 'freq 5180 MHz')" -ge 2 ] || fail "the medium lists no two radios on 5180 MHz"
	_before=$(drops "$_info" no-rule)

	_out=$($1 "wlan_country BD")
	echo "$_out"
	echo "$_out" | grep -q "now BD" || fail "wlan_country BD: $_out"
	_t1=$(date +%s)
	wait_in "$2" "wlan1: CTRL-EVENT-DISCONNECTED" 1 180
	echo "$2: station lost the AP $(($(date +%s) - _t1)) s after wlan_country BD"
	# Its scans of 5180 MHz go on: any beacon or probe response that got
	# through would bring it back.
	sleep 20
	[ "$(count_in "$2" 'wlan1: CTRL-EVENT-CONNECTED')" = 1 ] ||
		fail "the station reassociated under BD, where 5180 MHz is forbidden"
	_info=$($1 "info wlan")
	echo "$_info"
	echo "$_info" | grep -q "^medium: country BD" || fail "info wlan does not show country BD"
	_after=$(drops "$_info" no-rule)
	[ "${_after:-0}" -gt "${_before:-0}" ] || fail "no frames counted as no-rule drops under BD"
	echo "medium: no-rule drops ${_before:-0} -> $_after under BD"
	run_in "$2" 'iw reg get | grep "^country DE:"'
	[ "$rc" = 0 ] || fail "the station's guest left DE: the test must show the medium enforcing"

	_out=$($1 "wlan_country DE")
	echo "$_out" | grep -q "now DE" || fail "wlan_country DE: $_out"
	_t1=$(date +%s)
	wait_in "$2" "wlan1: CTRL-EVENT-CONNECTED" 2 240
	echo "$2: station reassociated $(($(date +%s) - _t1)) s after wlan_country DE"
	across "$2" "$3"
	[ "$rc" = 0 ] || fail "no $3 reply from the AP after reassociating"
}

# one_guest_wlan [VMM OPTIONS...]: a guest with AP and station on its two
# radios: boot, AP, station, ARP across the air.
one_guest_wlan() {
	wlan_boot vm 3 "$@"
	wait_in vm VMM-GUEST-READY
	echo "vm: init reached after $(elapsed) s"
	start_ap vm
	start_station vm
	# The ARP request's sender (10.0.0.2) is an address of this machine too:
	# without accept_local the AP's side drops it as a martian.
	run_in vm 'for f in /proc/sys/net/ipv4/conf/*/accept_local; do echo 1 >$f; done'
	across vm arping
	[ "$rc" = 0 ] || fail "no ARP reply from the AP over the air"
	echo "vm: ARP across the WLAN after $(elapsed) s"
}
