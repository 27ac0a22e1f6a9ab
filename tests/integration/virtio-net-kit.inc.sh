# virtio-net-kit.inc.sh — sourced by virtio-net-kit.sh (build/vmm) and
# virtio-net-kit-qemu.sh (qemu-system-x86_64): the kit's virtio-net payload
# (tests/guest/virtio-net.c) behind user networking: DHCP over raw frames,
# ARP for the gateway, UDP round trips through NAT to an echo server on the
# host's 127.0.0.1 (reached as 10.0.2.2); and a descriptor loop on the
# transmit queue, after which the device must need a reset, work again
# after one, and the VMM keep running.
#
# The caller defines `vm APPEND [NET_OPTS...]` (runs the payload; serial on
# stdout, the VMM's stderr on stderr; NET_OPTS replace the default network
# options when given) and then calls net_main NAME.
set -u
B=${B:-build}
PAYLOAD=$B/tests/guest/virtio-net.elf
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
[ -f "$PAYLOAD" ] || { echo "FAIL: $PAYLOAD not built"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/virtio-net-kit.XXXXXX")
echo_pid=
trap '[ -z "$echo_pid" ] || kill $echo_pid 2>/dev/null; rm -rf "$tmp"' EXIT
fails=0

fail() {
	echo "FAIL $*"
	fails=$((fails + 1))
}

start_echo() {
	python3 "$(dirname "$0")/udp-echo.py" "$tmp/port" &
	echo_pid=$!
	for _ in $(seq 600); do
		[ -s "$tmp/port" ] && break
		sleep 0.1
	done
	PORT=$(cat "$tmp/port" 2>/dev/null) || { echo "FAIL: the echo server did not start"; exit 1; }
}

# run_case NAME WANT_STATUS APPEND [NET_OPTS...] -- PATTERN...: the exit
# status and every PATTERN (extended regexp) in the serial output; output
# in $tmp/out, stderr in $tmp/err.
run_case() {
	name=$1 want=$2 append=$3
	shift 3
	opts=
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		opts="$opts $1"
		shift
	done
	[ $# -gt 0 ] && shift
	# shellcheck disable=SC2086
	vm "$append" $opts >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	ok=1
	[ "$rc" -eq "$want" ] || ok=0
	for p in "$@"; do
		grep -Eq "$p" "$tmp/out" || { ok=0; echo "missing: $p"; }
	done
	if [ $ok = 1 ]; then
		echo "ok   $name"
		return 0
	fi
	fail "$name: status $rc (want $want), output:"
	tail -n 15 "$tmp/out"
	sed 's/^/stderr: /' "$tmp/err" | tail -n 5
	return 1
}

CHECKS='virtio-net: DHCPACK lease 10\.0\.2\.15 router 10\.0\.2\.2 dns 10\.0\.2\.3'
ARP='virtio-net: ARP gateway is 52:55:a:0:2:2'

net_main() {
	start_echo
	run_case "$1: DHCP, ARP, 20 UDP round trips through NAT" 1 "echo_port=$PORT count=20" -- \
		"$CHECKS" "$ARP" "UDP echo via 10\.0\.2\.2:$PORT: 20 round trips ok" \
		'virtio-net: all checks passed'
	run_case "$1: with EVENT_IDX" 1 "echo_port=$PORT count=20 event_idx=1" -- \
		"$CHECKS" 'virtio-net: all checks passed'
	run_case "$1: descriptor loop on the transmit queue" 1 "broken=1" -- \
		'virtio-net: device status [0-9a-f]*: DEVICE_NEEDS_RESET' \
		'virtio-net: broken chain: device recovered by reset'
	[ "$(grep -c 'needs reset' "$tmp/err")" -le 1 ] ||
		fail "$1: the broken queue was reported more than once"
	net_extra_cases "$1"
	[ $fails -eq 0 ] || exit 1
	exit 0
}
