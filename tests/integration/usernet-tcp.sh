#!/bin/sh
# usernet-tcp.sh — TCP NAT through netstack-host --user-net: wget of 1 MB
# and 100 MB from a host HTTP server on loopback (via the gateway address)
# and uploads of both back to a host sink, sha256-exact; a refused host
# port gives the namespace a quick RST; port forwards host -> namespace
# (TCP and UDP, added and removed at run time through the control FIFO);
# 1000 concurrent connections; flow limits and the connection-rate limit
# hit their counters without harm; --no-host-loopback; a transfer through 1 % userspace loss
# (the impairment adapter, on a plain TAP without offloads). Root only.
. tests/integration/usernet-common.inc.sh

WWW=$UN_TMP/www
mkdir -p "$WWW"
head -c 1048576 /dev/urandom >"$WWW/1m"
head -c 104857600 /dev/urandom >"$WWW/100m"
HTTP_PORT=$(free_port)
SINK_PORT=$(free_port)
ECHO_PORT=$(free_port)
(cd "$WWW" && exec python3 -m http.server "$HTTP_PORT" --bind 127.0.0.1) >/dev/null 2>&1 &
UN_PIDS="$UN_PIDS $!"
bg $HELPER tcp_sink "$SINK_PORT"
bg $HELPER tcp_echo "$ECHO_PORT"
ulimit -n 8192

mkfifo "$UN_TMP/ctl"
un_start --dns 127.0.0.1 --control "$UN_TMP/ctl"
un_dhcp
wait_port "$HTTP_PORT"
wait_port "$SINK_PORT"
wait_port "$ECHO_PORT"

transfers() {
	tag=$1
	for f in 1m 100m; do
		want=$(sha256sum <"$WWW/$f" | cut -d' ' -f1)
		in_ns busybox wget -q -O "$UN_TMP/got" "http://10.0.2.2:$HTTP_PORT/$f" ||
			fail "$tag: wget $f"
		got=$(sha256sum <"$UN_TMP/got" | cut -d' ' -f1)
		[ "$got" = "$want" ] || fail "$tag: download $f: sha256 mismatch"
		got=$(in_ns busybox nc 10.0.2.2 "$SINK_PORT" <"$WWW/$f")
		[ "$got" = "$want" ] || fail "$tag: upload $f: sink saw '$got'"
		echo "ok: $tag: $f down (wget) and up (nc, half-close), sha256 exact"
		rm -f "$UN_TMP/got"
	done
}
transfers netstack

# Refused: nothing listens on this host port.
DEAD_PORT=$(free_port)
out=$(in_ns $HELPER refused 10.0.2.2 "$DEAD_PORT")
case "$out" in
refused\ 0.[0-4]*) echo "ok: refused host port -> RST in ${out#refused }s" ;;
*) fail "refused connection: $out" ;;
esac
[ "$(un_stat tcp_connect_fail)" -ge 1 ] || fail "tcp_connect_fail not counted"

# Port forwarding host -> namespace, added at run time.
FWD_PORT=$(free_port)
in_ns busybox httpd -f -p 10.0.2.15:80 -h "$WWW" &
UN_PIDS="$UN_PIDS $!"
echo "hostfwd_add tcp:127.0.0.1:$FWD_PORT-:80" >"$UN_TMP/ctl"
sleep 0.3
grep -q "^ok" "$UN_TMP/usernet.out" || fail "hostfwd_add: $(cat "$UN_TMP/usernet.out")"
busybox wget -q -O "$UN_TMP/fwd" "http://127.0.0.1:$FWD_PORT/1m" || fail "wget through hostfwd"
cmp -s "$UN_TMP/fwd" "$WWW/1m" || fail "hostfwd download differs"
echo "ok: hostfwd tcp 127.0.0.1:$FWD_PORT -> 10.0.2.15:80 (1 MB exact)"
echo "hostfwd_remove tcp:127.0.0.1:$FWD_PORT-:80" >"$UN_TMP/ctl"
sleep 0.3
busybox wget -q -T 2 -O /dev/null "http://127.0.0.1:$FWD_PORT/1m" 2>/dev/null &&
	fail "hostfwd still answers after hostfwd_remove"
echo "ok: hostfwd removed at run time"

# A forward to a guest port nobody listens on: the host client is reset.
FWD2=$(free_port)
echo "hostfwd_add tcp:127.0.0.1:$FWD2-:81" >"$UN_TMP/ctl"
sleep 0.3
out=$($HELPER closed 127.0.0.1 "$FWD2")
[ "$out" = reset ] || fail "hostfwd to a closed guest port: $out"
[ "$(un_stat hostfwd_failed)" -ge 1 ] || fail "hostfwd_failed not counted"
echo "ok: hostfwd to a closed guest port: host client reset, hostfwd_failed counted"

# UDP forward: host datagram -> namespace echo (python) and back.
UFWD=$(free_port)
in_ns python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.0.2.15", 7007))
d, a = s.recvfrom(100)
s.sendto(d[::-1], a)' &
UN_PIDS="$UN_PIDS $!"
sleep 0.3
echo "hostfwd_add udp:127.0.0.1:$UFWD-:7007" >"$UN_TMP/ctl"
sleep 0.2
out=$($HELPER udp_client 127.0.0.1 "$UFWD" "olleh")
[ "$out" = "hello" ] || fail "udp hostfwd round trip: '$out'"
echo "ok: hostfwd udp round trip"

# 1000 concurrent connections, all open at once, each echoing.
out=$(in_ns sh -c "ulimit -n 8192; $HELPER many 10.0.2.2 $ECHO_PORT 1000")
set -- $out
[ "$1" = 1000 ] && [ "$2" = 1000 ] || fail "1000 concurrent: $out"
echo "ok: 1000 concurrent connections echoed (${3}s)"
kill -0 "$UN_PID" || fail "netstack-host died"
un_stop

# Limits: 20 flows, 50 attempts; the rest are refused and counted.
un_start --dns 127.0.0.1 --max-tcp 20 --conn-rate 1000
un_dhcp
out=$(in_ns $HELPER attempts 10.0.2.2 "$ECHO_PORT" 50)
[ "$out" -le 20 ] || fail "flow limit 20 but $out connections"
[ "$(un_stat tcp_limit_refused)" -ge 30 ] || fail "tcp_limit_refused: $(un_stat tcp_limit_refused)"
echo "ok: flow limit: $out of 50 connected, tcp_limit_refused $(un_stat tcp_limit_refused)"
un_stop
un_start --dns 127.0.0.1 --conn-rate 10
un_dhcp
out=$(in_ns $HELPER attempts 10.0.2.2 "$ECHO_PORT" 40)
[ "$(un_stat tcp_rate_refused)" -ge 1 ] || fail "rate limit never hit ($out connected)"
kill -0 "$UN_PID" || fail "netstack-host died under limits"
echo "ok: rate limit: $out of 40 in a burst, tcp_rate_refused $(un_stat tcp_rate_refused)"
un_stop

# --no-host-loopback: the gateway address no longer reaches 127.0.0.1.
un_start --dns 127.0.0.1 --no-host-loopback
un_dhcp
out=$(in_ns $HELPER refused 10.0.2.2 "$ECHO_PORT")
case "$out" in
refused*) echo "ok: --no-host-loopback refuses 10.0.2.2 -> 127.0.0.1" ;;
*) fail "--no-host-loopback: $out" ;;
esac
un_stop

# The libslirp adapter carries TCP the same way (1 MB both ways).
un_start --impl slirp
un_dhcp
want=$(sha256sum <"$WWW/1m" | cut -d' ' -f1)
in_ns busybox wget -q -O "$UN_TMP/got" "http://10.0.2.2:$HTTP_PORT/1m" || fail "slirp: wget"
[ "$(sha256sum <"$UN_TMP/got" | cut -d' ' -f1)" = "$want" ] || fail "slirp: download differs"
got=$(in_ns busybox nc 10.0.2.2 "$SINK_PORT" <"$WWW/1m")
[ "$got" = "$want" ] || fail "slirp: upload: '$got'"
un_stop
echo "ok: slirp adapter: 1 MB both ways exact"

# 1 % loss each way between TAP and usernet (userspace impairment).
un_start --dns 127.0.0.1 --impair loss=100,seed=7 --no-offload
un_dhcp
want=$(sha256sum <"$WWW/1m" | cut -d' ' -f1)
in_ns busybox wget -q -O "$UN_TMP/got" "http://10.0.2.2:$HTTP_PORT/1m" || fail "wget under loss"
[ "$(sha256sum <"$UN_TMP/got" | cut -d' ' -f1)" = "$want" ] || fail "download under loss differs"
got=$(in_ns busybox nc 10.0.2.2 "$SINK_PORT" <"$WWW/1m")
[ "$got" = "$want" ] || fail "upload under loss: '$got'"
echo "ok: 1 MB both ways exact through 1 % loss"
un_stop
echo "PASS"
