#!/bin/sh
# usernet-dhcp.sh — a namespace behind netstack-host --user-net gets its
# lease from busybox udhcpc, does UDP round trips to a host server through
# the gateway address, resolves a name through the DNS forwarder (a dnsmasq
# started here, via --dns), pings the host through an ICMP socket; DHCP and
# UDP again with --impl slirp. Root only.
. tests/integration/usernet-common.inc.sh

UDP_PORT=$(free_port)
bg $HELPER udp_echo "$UDP_PORT"

check_lease_and_udp() {
	impl=$1
	un_dhcp
	grep -q "ip=10.0.2.15 " "$LEASE_FILE" || fail "$impl: lease: $(cat "$LEASE_FILE")"
	grep -q "router=10.0.2.2 " "$LEASE_FILE" || fail "$impl: router: $(cat "$LEASE_FILE")"
	grep -q "dns=10.0.2.3" "$LEASE_FILE" || fail "$impl: dns: $(cat "$LEASE_FILE")"
	in_ns ip -4 addr show tap0 | grep -q "10.0.2.15/24" || fail "$impl: address not applied"
	out=$(in_ns $HELPER udp_client 10.0.2.2 "$UDP_PORT" "hello $impl")
	[ "$out" = "HELLO $(echo "$impl" | tr a-z A-Z)" ] || fail "$impl: UDP round trip got '$out'"
	echo "ok: $impl: DHCP lease 10.0.2.15 via udhcpc, UDP round trip"
}

# --- netstack implementation ----------------------------------------
DNS_PORT=$(free_port)
command -v dnsmasq >/dev/null || fail "dnsmasq (dnsmasq-base) not installed"
bg dnsmasq --keep-in-foreground --port "$DNS_PORT" --listen-address 127.0.0.1 \
	--bind-interfaces --no-resolv --no-hosts --user=root --pid-file="$UN_TMP/dnsmasq.pid" \
	--address=/usernet.test/192.0.2.77
un_start --dns "127.0.0.1:$DNS_PORT" --hostname guest7 --mtu 1400
check_lease_and_udp netstack
grep -q "hostname=guest7" "$LEASE_FILE" || fail "hostname option: $(cat "$LEASE_FILE")"
grep -q "mtu=1400" "$LEASE_FILE" || fail "MTU option: $(cat "$LEASE_FILE")"

out=$(in_ns busybox nslookup usernet.test 10.0.2.3 2>&1)
echo "$out" | grep -q "192.0.2.77" || fail "DNS through the forwarder: $out"
echo "ok: DNS query through the forwarder to dnsmasq"

# ICMP echo to a host address through an unprivileged ICMP socket.
HOST_IP=$(ip -4 route get 1.1.1.1 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p')
if [ -n "$HOST_IP" ]; then
	old=$(cat /proc/sys/net/ipv4/ping_group_range)
	echo "0 0" >/proc/sys/net/ipv4/ping_group_range
	in_ns ping -c 2 -W 2 "$HOST_IP" >"$UN_TMP/ping.log" 2>&1
	rc=$?
	echo "$old" >/proc/sys/net/ipv4/ping_group_range
	[ $rc = 0 ] || fail "ping $HOST_IP via ICMP socket: $(cat "$UN_TMP/ping.log")"
	echo "ok: ICMP echo to $HOST_IP relayed"
	# Without permission for ICMP sockets: usernet (root here, with
	# CAP_NET_RAW) falls back to a raw socket; unsupported stays 0.
	echo "1 0" >/proc/sys/net/ipv4/ping_group_range
	in_ns ping -c 2 -W 2 "$HOST_IP" >"$UN_TMP/ping.log" 2>&1
	rc=$?
	echo "$old" >/proc/sys/net/ipv4/ping_group_range
	[ $rc = 0 ] || fail "ping $HOST_IP via raw socket: $(cat "$UN_TMP/ping.log")"
	[ "$(un_stat icmp_unsupported)" = 0 ] || fail "icmp_unsupported counted with CAP_NET_RAW"
	echo "ok: ICMP echo without ping_group_range relayed through a raw socket"
else
	echo "note: no host address with a route; ICMP relay not checked"
fi

[ "$(un_stat dhcp_ack)" -ge 1 ] || fail "dhcp_ack counter"
[ "$(un_stat dns_replies)" -ge 1 ] || fail "dns_replies counter"
[ "$(un_stat udp_flows)" -ge 2 ] || fail "udp_flows counter"
kill -0 "$UN_PID" || fail "netstack-host died"
un_stop

# A missing resolv.conf is a clear error.
"$HOST_BIN" --user-net --netns "$UN_NS" --tap tap9 --resolv-conf "$UN_TMP/none" \
	>/dev/null 2>"$UN_TMP/err" && fail "started without any resolver"
grep -q "nameserver" "$UN_TMP/err" || fail "resolver error unclear: $(cat "$UN_TMP/err")"
echo "ok: no resolver -> $(cat "$UN_TMP/err")"

# --- libslirp adapter (namespace named by a PID inside it) ----------
ip netns exec "$UN_NS" sleep 60 &
NS_PID=$!
UN_PIDS="$UN_PIDS $NS_PID"
sleep 0.2
"$HOST_BIN" --user-net --netns "$NS_PID" --tap tap0 --impl slirp >"$UN_TMP/usernet.out" \
	2>"$UN_LOG" &
UN_PID=$!
UN_PIDS="$UN_PIDS $UN_PID"
for _ in $(seq 600); do
	in_ns ip link show tap0 >/dev/null 2>&1 && break
	sleep 0.1
done
check_lease_and_udp slirp
un_stop
echo "PASS"
