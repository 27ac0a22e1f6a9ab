#!/bin/sh
# netstack-tcp-impair.sh — TCP between netstack-host and Linux over a TAP
# with netstack-host's userspace impairment (both directions, seeded):
# 1 % and 5 % loss, 10 ms delay with jitter, reordering, duplication, and
# loss with reordering at MTU 576.
# Each: 1 MB Linux client -> netstack echo and netstack --connect -> Linux
# echo, sha256-exact; the impairment counters must show it acted. Ping
# and UDP round trips under delay prove the delay is really applied.
# NETSTACK_IMPAIR_BULK=1 adds the loss measurement of bench/README.md
# ("TCP under loss"): 100 MB each way at 1 % and 5 % loss, MTU 1500,
# with transfer times and the RTO counts of both senders.
NET=212.2
. tests/integration/netstack-tcp-common.inc.sh
command -v ping >/dev/null || { echo "no ping (iputils-ping)"; exit 77; }

make_file 1m 1048576
set_mtu 1500

# impaired_stat_ok LABEL COUNTER: the last netstack-host's COUNTER > 0.
impaired_stat_ok() {
	n=$(host_stat "$2")
	[ "${n:-0}" -gt 0 ] || { fail "$1: impairment counter '$2' is ${n:-missing}"; return 1; }
}

# impair_case LABEL SPEC COUNTER
impair_case() {
	label=$1 spec=$2 counter=$3
	start_host --impair "$spec" || return 1
	case_linux_echo 1m "$label"
	stop_host
	impaired_stat_ok "$label (server)" "$counter"
	case_netstack_echo 1m "$label" --impair "$spec"
	impaired_stat_ok "$label (client)" "$counter"
}

delay_ping_udp() {
	start_host --impair delay=10000,jitter=2000,dup=500,reorder=500,hold=3000,seed=9 || return 1
	out=$(ping -c 4 -i 0.2 -W 3 "$NS" 2>&1)
	echo "$out" | grep -q " 0% packet loss" || { fail "ping under delay: $out"; return 1; }
	min=$(echo "$out" | sed -n 's|.*= \([0-9]*\)\.[0-9]*/.*|\1|p')
	[ "${min:-0}" -ge 20 ] || { fail "ping under 2x10 ms delay: min rtt ${min:-?} ms"; return 1; }
	for size in 1 1400 3000; do
		msg=$(head -c "$size" /dev/zero | tr '\0' 'd')
		got=$(bash -c "exec 3<>/dev/udp/$NS/7; printf %s '$msg' >&3; timeout 3 head -c $size <&3")
		[ "$got" = "$msg" ] || { fail "UDP echo of $size bytes under delay"; return 1; }
	done
	stop_host
	echo "ok: ping (min rtt $min ms over 2x10 ms delay) and UDP echo under delay/dup/reorder"
}

# linux_rtos: Linux's retransmission timeouts so far (TcpExt TCPTimeouts;
# host-wide, so only a figure for the report, never a verdict).
linux_rtos() {
	awk '/^TcpExt:/ { if (!n) { for (i = 1; i <= NF; i++) if ($i == "TCPTimeouts") c = i; n = 1 }
		else print $c }' /proc/net/netstat
}

# bulk_case MODE LABEL SPEC: 100 MB through the impairment (send: Linux ->
# netstack, sink: netstack -> Linux), sha256-exact; prints time and RTOs.
bulk_case() {
	mode=$1 label=$2 spec=$3
	if [ "$mode" = send ]; then
		start_peer /dev/null send "$WORK/100m" || return 1
		in=/dev/null out=$WORK/got.ns
	else
		start_peer "$WORK/got" sink || return 1
		in=$WORK/100m out=$WORK/got.ns
	fi
	lx0=$(linux_rtos)
	t0=$(now_ms)
	run_connect "$label" "$in" "$out" --impair "$spec" || return 1
	ms=$(($(now_ms) - t0))
	[ "$mode" = send ] && mv "$WORK/got.ns" "$WORK/got"
	same "$WORK/100m" "$WORK/got" || { fail "$label: received bytes differ"; return 1; }
	echo "ok: $label, 100 MB: $ms ms, netstack rto $(host_stat rto) fast $(host_stat fast)" \
		"rexmit $(host_stat rexmit), Linux rto $(($(linux_rtos) - lx0))"
}

bulk_loss() {
	make_file 100m 104857600
	bulk_case sink "netstack -> Linux, loss 1%" loss=100,seed=1
	bulk_case send "Linux -> netstack, loss 1%" loss=100,seed=1
	bulk_case sink "netstack -> Linux, loss 5%" loss=500,seed=2
	bulk_case send "Linux -> netstack, loss 5%" loss=500,seed=2
	rm -f "$WORK/100m" "$WORK/got"
}

delay_ping_udp
[ -n "${NETSTACK_IMPAIR_BULK:-}" ] && bulk_loss
impair_case "loss 1%" loss=100,seed=1 dropped
impair_case "loss 5%" loss=500,seed=2 dropped
impair_case "delay 10 ms" delay=10000,jitter=2000,seed=3 delayed
impair_case "reorder 3%" reorder=300,hold=3000,seed=4 reordered
impair_case "duplicate 3%" dup=300,seed=5 duplicated
set_mtu 576
impair_case "mtu 576, loss 1% + reorder 1%" loss=100,reorder=100,hold=2000,seed=6 dropped
finish
