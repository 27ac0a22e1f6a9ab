#!/bin/sh
# usernet-iperf.sh — user-mode networking throughput, side by side in one
# run: iperf3 from a network namespace to `iperf3 -s -B 127.0.0.1` on the
# host (through the gateway address 10.0.2.2), TCP, 1 and 4 streams, MTU
# 1500 and 65520, for
#   netstack   netstack-host --user-net (usernet on netstack, the default:
#              TAP with checksum/TSO offload through virtio-net headers)
#   ns-nooff   the same with --no-offload (plain TAP, one frame per read)
#   slirp-ad   netstack-host --user-net --impl slirp (libslirp adapter)
#   slirp4netns Debian's slirp4netns
#   loopback   iperf3 over the host's lo (the ceiling)
# plus the host -> namespace direction (iperf3 -R, MTU 1500, 1 stream),
# CPU seconds of the user-net process per GB moved, connections/s
# and request/response latency (1-byte ping-pong on one connection), and
# IPv6: the namespace (SLAAC from the backend's router advertisement) to
# `iperf3 -s -B ::1` through fd00::2, netstack against slirp4netns
# --enable-ipv6, next to the same backends over IPv4.
# Each figure is the best of REPS (default 3) runs.
# usage: bench/usernet-iperf.sh [SECONDS per run, default 3]  (root)
B=${B:-build}
T=${1:-3}
REPS=${REPS:-3}
HOST_BIN=$B/netstack-host

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (network namespaces, TAP)"; exit 77; }
for c in iperf3 slirp4netns python3 ip; do
	command -v $c >/dev/null || { echo "SKIP: $c not installed"; exit 77; }
done
[ -x "$HOST_BIN" ] || { echo "$HOST_BIN not built"; exit 1; }

TMP=$(mktemp -d /tmp/usernet-bench.XXXXXX)
NS=unbench$$
PORT=5299
ECHO_PORT=5298
PIDS=""
cleanup() {
	for p in $PIDS $BPID; do kill "$p" 2>/dev/null; done
	ip netns del "$NS" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM
ip netns add "$NS" || exit 1
ip netns exec "$NS" ip link set lo up
iperf3 -s -B 127.0.0.1 -p $PORT >/dev/null 2>&1 &
PIDS="$PIDS $!"
PORT6=5297
iperf3 -s -B ::1 -p $PORT6 >/dev/null 2>&1 &
PIDS="$PIDS $!"

cat >"$TMP/b.py" <<'EOF'
import json, selectors, socket, sys, time

def parse(path):
    # bits/s and bytes received, from iperf3 -J
    e = json.load(open(path))["end"]["sum_received"]
    print("%.0f %d" % (e["bits_per_second"], e["bytes"]))

def echo(port):
    sel = selectors.DefaultSelector()
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", port))
    ls.listen(1024)
    sel.register(ls, selectors.EVENT_READ)
    while True:
        for k, _ in sel.select():
            if k.fileobj is ls:
                c, _ = ls.accept()
                c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sel.register(c, selectors.EVENT_READ)
                continue
            try:
                d = k.fileobj.recv(4096)
            except ConnectionError:
                d = b""
            if d:
                k.fileobj.send(d)
            else:
                sel.unregister(k.fileobj)
                k.fileobj.close()

def rate(host, port, secs):
    # sequential connect + 1-byte exchange + close, connections per second
    n, t0 = 0, time.time()
    while time.time() - t0 < secs:
        s = socket.create_connection((host, port))
        s.send(b"x")
        s.recv(1)
        s.close()
        n += 1
    print("%.0f" % (n / (time.time() - t0)))

def latency(host, port, n):
    s = socket.create_connection((host, port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        s.send(b"x")
        s.recv(1)
        ts.append(time.perf_counter() - t)
    ts.sort()
    print("%.1f" % (ts[len(ts) // 2] * 1e6))

f = globals()[sys.argv[1]]
f(*[int(a) if a.isdigit() else a for a in sys.argv[2:]])
EOF
PY="python3 $TMP/b.py"
$PY echo $ECHO_PORT &
PIDS="$PIDS $!"
HZ=$(getconf CLK_TCK)

cpu_ticks() {
	awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0
}

# start_backend6 NAME: as start_backend at MTU 1500 with IPv6, once the
# namespace has its SLAAC address.
start_backend6() {
	case $1 in
	netstack) start_backend netstack 1500 ;;
	slirp4netns)
		slirp4netns --configure --enable-ipv6 --mtu=1500 --netns-type=path \
			"/var/run/netns/$NS" tap0 >/dev/null 2>"$TMP/err" &
		BPID=$!
		;;
	esac
	ip netns exec "$NS" sysctl -qw net.ipv6.conf.tap0.accept_ra=2 2>/dev/null
	for _ in $(seq 100); do
		ip netns exec "$NS" ip -6 addr show dev tap0 scope global 2>/dev/null |
			grep inet6 | grep -qv tentative && break
		sleep 0.1
	done
}

# start_backend NAME MTU: serve tap0 in $NS, configure the namespace side.
start_backend() {
	case $1 in
	netstack | ns-nooff | slirp-ad)
		case $1 in
		netstack) args="--dns 127.0.0.1" ;;
		ns-nooff) args="--dns 127.0.0.1 --no-offload" ;;
		slirp-ad) args="--impl slirp" ;;
		esac
		"$HOST_BIN" --user-net --netns "$NS" $args --mtu "$2" >/dev/null 2>"$TMP/err" &
		BPID=$!
		for _ in $(seq 50); do
			ip netns exec "$NS" ip link show tap0 >/dev/null 2>&1 && break
			sleep 0.1
		done
		ip netns exec "$NS" sh -c "ip addr add 10.0.2.15/24 dev tap0 &&
			ip route add default via 10.0.2.2"
		;;
	slirp4netns)
		slirp4netns --configure --mtu="$2" --netns-type=path "/var/run/netns/$NS" tap0 \
			>/dev/null 2>"$TMP/err" &
		BPID=$!
		for _ in $(seq 50); do
			ip netns exec "$NS" ip -4 addr show tap0 2>/dev/null | grep -q inet && break
			sleep 0.1
		done
		;;
	esac
	sleep 0.3
}

stop_backend() {
	kill "$BPID" 2>/dev/null
	wait "$BPID" 2>/dev/null
	BPID=""
	ip netns exec "$NS" ip link del tap0 2>/dev/null
	sleep 0.2
}

# best_iperf WHERE STREAMS -> the run with the highest throughput of
# $REPS (the host is shared: interference only ever slows a run down).
best_iperf() {
	best="0 -"
	for _ in $(seq "$REPS"); do
		r=$(run_iperf "$1" "$2")
		best=$(printf "%s\n%s\n" "$best" "$r" | sort -g -r | head -1)
	done
	echo "$best"
}

# run_iperf WHERE STREAMS -> "Gbit/s cpu_s_per_GB"
run_iperf() {
	where=$1
	c0=0
	[ -n "$BPID" ] && c0=$(cpu_ticks "$BPID")
	case $where in
	host) iperf3 -c 127.0.0.1 -p $PORT -t "$T" -P "$2" -J >"$TMP/j" 2>/dev/null ;;
	ns) ip netns exec "$NS" iperf3 -c 10.0.2.2 -p $PORT -t "$T" -P "$2" -J >"$TMP/j" 2>/dev/null ;;
	nsR) ip netns exec "$NS" iperf3 -c 10.0.2.2 -p $PORT -t "$T" -P "$2" -R -J >"$TMP/j" \
		2>/dev/null ;;
	ns6) ip netns exec "$NS" iperf3 -c fd00::2 -p $PORT6 -t "$T" -P "$2" -J >"$TMP/j" \
		2>/dev/null ;;
	esac
	set -- $($PY parse "$TMP/j" 2>/dev/null || echo "0 0")
	if [ -n "$BPID" ] && [ "$2" -gt 0 ]; then
		c1=$(cpu_ticks "$BPID")
		echo "$1 $2" | awk -v c=$((c1 - c0)) -v hz="$HZ" \
			'{ printf "%.2f %.2f\n", $1 / 1e9, (c / hz) / ($2 / 1e9) }'
	else
		echo "$1" | awk '{ printf "%.2f -\n", $1 / 1e9 }'
	fi
}

echo "usernet iperf3 TCP namespace -> host loopback, best of $REPS runs of ${T}s"
printf "%-6s %-3s %-12s %9s %9s\n" MTU P backend Gbit/s cpu_s/GB
for mtu in 1500 65520; do
	for b in netstack ns-nooff slirp-ad slirp4netns; do
		start_backend $b $mtu
		for p in 1 4; do
			set -- $(best_iperf ns $p)
			eval "R_$(echo "$b" | tr -d -)_${mtu}_$p=$1"
			printf "%-6s %-3s %-12s %9s %9s\n" $mtu $p $b "$1" "$2"
		done
		stop_backend
	done
done
for p in 1 4; do
	set -- $(best_iperf host $p)
	eval "R_lo_$p=$1"
	printf "%-6s %-3s %-12s %9s %9s\n" lo $p loopback "$1" "$2"
done

echo "ratios (netstack / peer):"
for mtu in 1500 65520; do
	for p in 1 4; do
		eval "n=\$R_netstack_${mtu}_$p s=\$R_slirp4netns_${mtu}_$p a=\$R_slirpad_${mtu}_$p"
		eval "o=\$R_nsnooff_${mtu}_$p"
		echo "$n $s $a $o" | awk -v m=$mtu -v p=$p '{
			printf "  MTU %-5s P=%s: vs slirp4netns %.2fx, vs libslirp adapter %.2fx;", m, p,
				($2 > 0 ? $1 / $2 : 0), ($3 > 0 ? $1 / $3 : 0)
			printf " without offload vs slirp4netns %.2fx\n", ($2 > 0 ? $4 / $2 : 0) }'
	done
done

echo "the other direction, host -> namespace (iperf3 -R), MTU 1500, 1 stream:"
for b in netstack ns-nooff slirp-ad slirp4netns; do
	start_backend $b 1500
	set -- $(best_iperf nsR 1)
	eval "RR_$(echo "$b" | tr -d -)=$1"
	printf "  %-12s %9s Gbit/s %9s cpu_s/GB\n" $b "$1" "$2"
	stop_backend
done
echo "$RR_netstack $RR_slirp4netns" | awk '{ printf "  netstack / slirp4netns %.2fx\n", ($2 > 0 ? $1 / $2 : 0) }'

echo "connections/s and request/response latency (MTU 1500):"
for b in netstack slirp-ad slirp4netns; do
	start_backend $b 1500
	cps=$(ip netns exec "$NS" $PY rate 10.0.2.2 $ECHO_PORT 2)
	lat=$(ip netns exec "$NS" $PY latency 10.0.2.2 $ECHO_PORT 3000)
	printf "  %-12s %7s conn/s  %7s us median RTT\n" $b "$cps" "$lat"
	stop_backend
done
cps=$($PY rate 127.0.0.1 $ECHO_PORT 2)
lat=$($PY latency 127.0.0.1 $ECHO_PORT 3000)
printf "  %-12s %7s conn/s  %7s us median RTT\n" loopback "$cps" "$lat"

echo "IPv6: namespace -> host ::1 through fd00::2 (SLAAC), MTU 1500, 1 stream:"
for b in netstack slirp4netns; do
	start_backend6 $b
	set -- $(best_iperf ns6 1)
	eval "R6_$b=$1"
	printf "  %-12s %9s Gbit/s %9s cpu_s/GB (IPv4: %s Gbit/s)\n" $b "$1" "$2" \
		"$(eval echo "\$R_${b}_1500_1")"
	stop_backend
done
echo "$R6_netstack $R6_slirp4netns" |
	awk '{ printf "  IPv6 netstack / slirp4netns %.2fx\n", ($2 > 0 ? $1 / $2 : 0) }'
