#!/bin/sh
# netstack-tcp-basic.sh — netstack-host against Linux's own stack over a
# TAP at MTU 1500, 576 and 9000: ping, UDP echo round trips, TCP echo and
# discard with a Linux client, HTTP/1.0 GET (200 with a sha256-exact body,
# 404, 400, 403 for "..", 501), and netstack's --connect client against a
# Linux echo server (and its exit status when refused; through --gw to an
# off-link address, and unreachable without it). 1 MB transfers.
NET=212.1
. tests/integration/netstack-tcp-common.inc.sh
command -v ping >/dev/null || { echo "no ping (iputils-ping)"; exit 77; }

make_file 1m 1048576
mkdir -p "$WORK/www/sub"
cp "$WORK/1m" "$WORK/www/big.bin"
echo "hello from netstack" >"$WORK/www/sub/index.html"
echo "secret" >"$WORK/outside.txt"
ln -s ../outside.txt "$WORK/www/escape"

udp_round_trips() {
	# A datagram of MTU - 28 bytes fills one frame; 4000 fragments below 9000.
	# (head reads 8 KiB at a time, so bigger datagrams would be cut here.)
	for size in 1 1000 $((MTU - 28)) 4000; do
		msg=$(head -c "$size" /dev/zero | tr '\0' 'u')
		got=$(bash -c "exec 3<>/dev/udp/$NS/7; printf %s '$msg' >&3; timeout 2 head -c $size <&3")
		[ "$got" = "$msg" ] || { fail "mtu $MTU: UDP echo of $size bytes"; return 1; }
	done
	echo "ok: mtu $MTU: UDP echo round trips"
}

# http PATH: the raw response of GET PATH in $WORK/resp.
http() {
	printf 'GET %s HTTP/1.0\r\nHost: x\r\n\r\n' "$1" |
		timeout 30 "$PEER" connect "$NS:80" >"$WORK/resp" 2>"$WORK/client.log"
}

status_is() { # status_is PATH CODE
	http "$1" && head -1 "$WORK/resp" | grep -q "^HTTP/1.0 $2 " ||
		{ fail "GET $1: want $2, got '$(head -1 "$WORK/resp")'"; return 1; }
}

http_cases() {
	t0=$(now_ms)
	http /big.bin || { fail "GET /big.bin: $(cat "$WORK/client.log")"; return 1; }
	len=$(sed -n 's/^Content-Length: \([0-9]*\)\r$/\1/p' "$WORK/resp")
	[ "$len" = 1048576 ] || { fail "GET /big.bin: Content-Length '$len'"; return 1; }
	tail -c 1048576 "$WORK/resp" >"$WORK/body"
	hdr=$(($(wc -c <"$WORK/resp") - 1048576))
	head -c "$hdr" "$WORK/resp" | tail -c 4 | od -An -c | grep -q '\\r  \\n  \\r  \\n' ||
		{ fail "GET /big.bin: the body is not exactly Content-Length bytes after the head"; return 1; }
	same "$WORK/1m" "$WORK/body" || { fail "GET /big.bin: body differs"; return 1; }
	ok "mtu $MTU: HTTP GET of 1 MB" "$t0"
	http /sub/ && grep -q "hello from netstack" "$WORK/resp" || { fail "GET /sub/ (index.html)"; return 1; }
	status_is /nope 404 && status_is /../outside.txt 403 && status_is /sub/%2e%2e/../x 403 &&
		status_is /escape 403 && status_is "/a b" 400 || return 1
	printf 'POST / HTTP/1.0\r\n\r\n' | timeout 30 "$PEER" connect "$NS:80" >"$WORK/resp" &&
		head -1 "$WORK/resp" | grep -q "^HTTP/1.0 501 " || { fail "POST: want 501"; return 1; }
	printf 'garbage\r\n\r\n' | timeout 30 "$PEER" connect "$NS:80" >"$WORK/resp" &&
		head -1 "$WORK/resp" | grep -q "^HTTP/1.0 400 " || { fail "garbage request: want 400"; return 1; }
	head -c 6000 /dev/zero | tr '\0' a | timeout 30 "$PEER" connect "$NS:80" >"$WORK/resp" &&
		head -1 "$WORK/resp" | grep -q "^HTTP/1.0 400 " || { fail "6000-byte request line: want 400"; return 1; }
	echo "ok: mtu $MTU: HTTP 404/403/400/501"
}

discard_case() {
	t0=$(now_ms)
	timeout 60 "$PEER" connect "$NS:9" <"$WORK/1m" >"$WORK/discarded" 2>"$WORK/client.log" ||
		{ fail "mtu $MTU: discard: $(cat "$WORK/client.log")"; return 1; }
	[ ! -s "$WORK/discarded" ] || { fail "mtu $MTU: discard answered bytes"; return 1; }
	ok "mtu $MTU: Linux -> netstack discard, 1 MB" "$t0"
}

# Four Linux clients at once on echo and one on HTTP: the server's event
# loop keeps them apart.
concurrent_case() {
	t0=$(now_ms)
	pids=""
	for i in 1 2 3 4; do
		make_file "c$i" $((200000 + i * 1000))
		timeout 60 "$PEER" connect "$NS:7" <"$WORK/c$i" >"$WORK/c$i.out" 2>/dev/null &
		pids="$pids $!"
	done
	printf 'GET /big.bin HTTP/1.0\r\n\r\n' | timeout 60 "$PEER" connect "$NS:80" 2>/dev/null |
		tail -c 1048576 >"$WORK/c.body"
	wait $pids
	for i in 1 2 3 4; do
		same "$WORK/c$i" "$WORK/c$i.out" || { fail "concurrent echo client $i"; return 1; }
	done
	same "$WORK/1m" "$WORK/c.body" || { fail "HTTP GET next to echo clients"; return 1; }
	ok "mtu $MTU: 4 echo clients and an HTTP GET at once" "$t0"
}

refused_case() {
	ip neigh flush dev "$TAP" 2>/dev/null
	timeout 30 "$HOST" --tap "$TAP" --addr "$NS/24" --mtu "$MTU" --connect "$LX:1" \
		</dev/null >/dev/null 2>"$WORK/host.log"
	rc=$?
	[ $rc -eq 3 ] || { fail "--connect to a closed port: exit $rc, want 3"; return 1; }
	grep -q "refused" "$WORK/host.log" || { fail "--connect refused: no clear message"; return 1; }
	echo "ok: --connect to a closed Linux port exits 3 ($(cat "$WORK/host.log"))"
}

# An address of Linux's that is not on the TAP's subnet: netstack must
# route through --gw, and without it --connect fails cleanly.
routed_case() {
	far=10.212.101.1
	ip addr add "$far/32" dev "$TAP" || { fail "cannot add $far"; return 1; }
	ip neigh flush dev "$TAP" 2>/dev/null
	timeout 30 "$HOST" --tap "$TAP" --addr "$NS/24" --mtu "$MTU" --connect "$far:5007" \
		</dev/null >/dev/null 2>"$WORK/host.log"
	rc=$?
	[ $rc -eq 3 ] && grep -q "unreachable" "$WORK/host.log" ||
		{ fail "--connect off-link without --gw: exit $rc, $(cat "$WORK/host.log")"; return 1; }
	echo "ok: --connect off-link without --gw exits 3 ($(cat "$WORK/host.log"))"
	CONNECT_TO=$far
	case_netstack_echo 1m "mtu $MTU via --gw" --gw "$LX"
	CONNECT_TO=
}

run_mtu() {
	set_mtu "$1"
	start_host --http "$WORK/www" || return 1
	ping -c 2 -i 0.2 -W 2 -q "$NS" >/dev/null || fail "mtu $MTU: ping"
	udp_round_trips
	case_linux_echo 1m "mtu $MTU"
	[ "$MTU" = 1500 ] && discard_case
	[ "$MTU" = 1500 ] && http_cases
	[ "$MTU" = 1500 ] && concurrent_case
	stop_host
	case_netstack_echo 1m "mtu $MTU"
}

run_mtu 1500
refused_case
routed_case
run_mtu 576
run_mtu 9000
finish
