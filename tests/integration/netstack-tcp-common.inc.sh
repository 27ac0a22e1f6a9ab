# netstack-tcp-common.inc.sh — sourced by the netstack-tcp-*.sh interop
# tests: a persistent TAP in the root namespace whose kernel side is
# Linux's stack (10.$NET.1) and whose other end is build/netstack-host
# (10.$NET.2), started and stopped per case. Impairment is netstack-host's
# --impair (the hosts have no sch_netem). Set NET (e.g. 212.1) before.
set -u
B=${B:-build}
HOST=$B/netstack-host
PEER=$B/netstack-peer
[ "$(id -u)" -eq 0 ] || { echo "needs root (TAP device)"; exit 77; }
[ -c /dev/net/tun ] || { echo "no /dev/net/tun"; exit 77; }
[ -x "$HOST" ] && [ -x "$PEER" ] || { echo "FAIL: build $HOST and $PEER first"; exit 1; }
TAP=nst$$
LX=10.$NET.1
NS=10.$NET.2
WORK=$(mktemp -d /tmp/netstack-tcp.XXXXXX)
host_pid=""
peer_pid=""
failures=0

cleanup() {
	stop_host
	[ -n "$peer_pid" ] && kill "$peer_pid" 2>/dev/null
	ip link del "$TAP" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP PIPE

ip tuntap add dev "$TAP" mode tap || { echo "cannot create TAP device"; exit 77; }
ip addr add "$LX/24" dev "$TAP" || exit 1
ip link set "$TAP" up || exit 1

now_ms() { echo $(($(date +%s%N) / 1000000)); }

fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
	[ -s "$WORK/host.log" ] && sed 's/^/    host: /' "$WORK/host.log" | tail -5
	return 1
}

# set_mtu N: both sides of the link.
set_mtu() {
	MTU=$1
	ip link set "$TAP" mtu "$MTU" || exit 1
}

# start_host ARGS...: netstack-host serving on the TAP; waits until it answers ping.
start_host() {
	ip neigh flush dev "$TAP" 2>/dev/null
	rm -f "$WORK/host.log"
	"$HOST" --tap "$TAP" --addr "$NS/24" --mtu "$MTU" -v "$@" 2>"$WORK/host.log" &
	host_pid=$!
	for _ in $(seq 600); do
		grep -q " up," "$WORK/host.log" 2>/dev/null && return 0
		kill -0 "$host_pid" 2>/dev/null || break
		sleep 0.1
	done
	fail "netstack-host did not start: $(cat "$WORK/host.log")"
	host_pid=""
	return 1
}

stop_host() {
	[ -n "$host_pid" ] || return 0
	kill "$host_pid" 2>/dev/null
	wait "$host_pid" 2>/dev/null
	host_pid=""
}

# host_stat NAME: a counter from the -v statistics of the last netstack-host.
host_stat() {
	sed -n "s/.* $1 \([0-9]*\).*/\1/p" "$WORK/host.log" | tail -1
}

# start_peer OUT MODE [FILE]: a one-connection Linux server on a free
# port (other tests on the host may hold fixed ones), in $PEER_PORT.
start_peer() {
	out=$1
	shift
	rm -f "$WORK/peer.log"
	"$PEER" serve 0 "$@" >"$out" 2>"$WORK/peer.log" &
	peer_pid=$!
	for _ in $(seq 1200); do
		PEER_PORT=$(sed -n 's/^listening on port \([0-9]*\)$/\1/p' "$WORK/peer.log" 2>/dev/null)
		[ -n "$PEER_PORT" ] && return 0
		sleep 0.05
	done
	fail "netstack-peer did not listen: $(cat "$WORK/peer.log")"
	return 1
}

# wait_peer: the server's status; it is given 5 s to finish after the
# client is gone (a client that never connected leaves it listening).
wait_peer() {
	for _ in $(seq 50); do
		kill -0 "$peer_pid" 2>/dev/null || break
		sleep 0.1
	done
	kill "$peer_pid" 2>/dev/null
	wait "$peer_pid"
	rc=$?
	peer_pid=""
	return $rc
}

# make_file NAME BYTES: random contents in $WORK/NAME.
make_file() {
	head -c "$2" /dev/urandom >"$WORK/$1"
}

same() { # same FILE1 FILE2
	[ "$(sha256sum <"$1")" = "$(sha256sum <"$2")" ]
}

# ok WHAT T0: report a passed case with its time.
ok() {
	echo "ok: $1 ($(($(now_ms) - $2)) ms)"
}

# Linux client -> netstack echo server (port 7): the file comes back intact.
case_linux_echo() { # case_linux_echo FILE LABEL
	t0=$(now_ms)
	timeout 120 "$PEER" connect "$NS:7" <"$WORK/$1" >"$WORK/echoed" 2>"$WORK/client.log" ||
		{ fail "$2: Linux client to netstack echo: $(cat "$WORK/client.log")"; return 1; }
	same "$WORK/$1" "$WORK/echoed" ||
		{ fail "$2: echoed bytes differ ($(wc -c <"$WORK/echoed") of $(wc -c <"$WORK/$1"))"; return 1; }
	ok "$2: Linux -> netstack echo, $(wc -c <"$WORK/$1") bytes" "$t0"
}

# run_connect LABEL IN OUT [HOST ARGS...]: netstack-host --connect to the
# Linux server start_peer started (at $CONNECT_TO, default $LX); fails
# unless both end cleanly.
run_connect() {
	label=$1 in=$2 out=$3
	shift 3
	ip neigh flush dev "$TAP" 2>/dev/null
	timeout 300 "$HOST" --tap "$TAP" --addr "$NS/24" --mtu "$MTU" -v "$@" \
		--connect "${CONNECT_TO:-$LX}:$PEER_PORT" <"$in" >"$out" 2>"$WORK/host.log"
	rc=$?
	wait_peer || { fail "$label: Linux server: $(cat "$WORK/peer.log")"; return 1; }
	[ $rc -eq 0 ] || { fail "$label: netstack-host --connect exited $rc"; return 1; }
}

# netstack client (--connect) -> Linux echo server: the file comes back intact.
case_netstack_echo() { # case_netstack_echo FILE LABEL [HOST ARGS...]
	f=$1 label=$2
	shift 2
	start_peer "$WORK/peer.out" echo || return 1
	t0=$(now_ms)
	run_connect "$label" "$WORK/$f" "$WORK/echoed" "$@" || return 1
	same "$WORK/$f" "$WORK/echoed" ||
		{ fail "$label: echoed bytes differ ($(wc -c <"$WORK/echoed") of $(wc -c <"$WORK/$f"))"; return 1; }
	ok "$label: netstack -> Linux echo, $(wc -c <"$WORK/$f") bytes" "$t0"
}

# netstack --connect to a Linux server in MODE (send: Linux -> netstack,
# sink: netstack -> Linux), 100 MB from $WORK/100m, sha256-exact.
connect_bulk() { # connect_bulk MODE LABEL [HOST ARGS...]
	mode=$1 label=$2
	shift 2
	t0=$(now_ms)
	if [ "$mode" = send ]; then
		start_peer /dev/null send "$WORK/100m" || return 1
		in=/dev/null
	else
		start_peer "$WORK/got" sink || return 1
		in=$WORK/100m
	fi
	run_connect "$label" "$in" "$WORK/got.ns" "$@" || return 1
	[ "$mode" = send ] && mv "$WORK/got.ns" "$WORK/got"
	same "$WORK/100m" "$WORK/got" || { fail "$label: received bytes differ"; return 1; }
	ok "$label, 100 MB" "$t0"
}

# finish: the test's verdict.
finish() {
	[ "$failures" -eq 0 ] || { echo "$failures case(s) failed"; exit 1; }
	echo "all cases passed"
	exit 0
}
