#!/bin/sh
# netstack-tcp-bulk.sh — 100 MB each way between netstack-host and Linux
# over a TAP, sha256-exact: Linux downloads a 100 MB file from netstack's
# HTTP server, and netstack's --connect client receives 100 MB from a
# Linux server and sends 100 MB to a Linux sink; then both --connect
# directions again under 1 % and 5 % loss and under a mix of delay,
# reordering, duplication and loss (MTU 9000 there, to keep the CI time
# small).
NET=212.3
. tests/integration/netstack-tcp-common.inc.sh

make_file 100m 104857600
mkdir -p "$WORK/www"
ln "$WORK/100m" "$WORK/www/100m"
set_mtu 1500

http_download() {
	t0=$(now_ms)
	start_host --http "$WORK/www" || return 1
	printf 'GET /100m HTTP/1.0\r\n\r\n' | timeout 300 "$PEER" connect "$NS:80" 2>"$WORK/client.log" |
		tail -c 104857600 >"$WORK/got"
	stop_host
	same "$WORK/100m" "$WORK/got" || { fail "HTTP download of 100 MB differs"; return 1; }
	ok "Linux <- netstack HTTP GET, 100 MB" "$t0"
}

http_download
connect_bulk send "Linux -> netstack (--connect)"
connect_bulk sink "netstack -> Linux (--connect)"
set_mtu 9000
connect_bulk sink "netstack -> Linux at MTU 9000, loss 1%" --impair loss=100,seed=7
connect_bulk send "Linux -> netstack at MTU 9000, loss 1%" --impair loss=100,seed=8
connect_bulk send "Linux -> netstack at MTU 9000, loss 5%" --impair loss=500,seed=3
connect_bulk sink "netstack -> Linux at MTU 9000, loss 5%" --impair loss=500,seed=3
mix=delay=2000,jitter=500,reorder=100,hold=2000,dup=100,loss=50,seed=11
connect_bulk sink "netstack -> Linux at MTU 9000, 2 ms delay, reorder, dup, loss" --impair $mix
connect_bulk send "Linux -> netstack at MTU 9000, 2 ms delay, reorder, dup, loss" --impair $mix
finish
