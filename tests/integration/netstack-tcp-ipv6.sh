#!/bin/sh
# netstack-tcp-ipv6.sh — TCP over IPv6 between netstack-host and Linux over
# a TAP (fd21:213::/64), sha256-exact: Linux downloads 100 MB from
# netstack's HTTP server over IPv6, netstack's --connect client receives
# 100 MB from and sends 100 MB to a Linux server over IPv6, then both
# directions under 1 % loss and under delay, reordering, duplication and
# loss (MTU 9000 there, to keep the CI time small).
NET=213.3
. tests/integration/netstack-tcp-common.inc.sh

ip -6 addr add fd21:213::1/64 dev "$TAP" nodad 2>/dev/null ||
	{ echo "no IPv6 on this host's TAP devices"; exit 77; }
NS6=fd21:213::2
make_file 100m 104857600
mkdir -p "$WORK/www"
ln "$WORK/100m" "$WORK/www/100m"
set_mtu 1500

http_download6() {
	t0=$(now_ms)
	start_host --addr6 "$NS6/64" --http "$WORK/www" || return 1
	printf 'GET /100m HTTP/1.0\r\n\r\n' | timeout 300 "$PEER" connect "[$NS6]:80" \
		2>"$WORK/client.log" | tail -c 104857600 >"$WORK/got"
	stop_host
	same "$WORK/100m" "$WORK/got" ||
		{ fail "HTTP download of 100 MB over IPv6 differs: $(cat "$WORK/client.log")"; return 1; }
	ok "Linux <- netstack HTTP GET over IPv6, 100 MB" "$t0"
}

http_download6
# --connect over IPv6: the Linux server's address, netstack's own.
CONNECT_TO="[fd21:213::1]"
connect_bulk send "Linux -> netstack over IPv6 (--connect)" --addr6 "$NS6/64"
connect_bulk sink "netstack -> Linux over IPv6 (--connect)" --addr6 "$NS6/64"
set_mtu 9000
connect_bulk sink "netstack -> Linux over IPv6 at MTU 9000, loss 1%" --addr6 "$NS6/64" --impair loss=100,seed=7
connect_bulk send "Linux -> netstack over IPv6 at MTU 9000, loss 1%" --addr6 "$NS6/64" --impair loss=100,seed=8
mix=delay=2000,jitter=500,reorder=100,hold=2000,dup=100,loss=50,seed=11
connect_bulk sink "netstack -> Linux over IPv6 at MTU 9000, delay, reorder, dup, loss" --addr6 "$NS6/64" --impair $mix
connect_bulk send "Linux -> netstack over IPv6 at MTU 9000, delay, reorder, dup, loss" --addr6 "$NS6/64" --impair $mix
finish
