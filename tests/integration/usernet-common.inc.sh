# usernet-common.inc.sh — sourced by the usernet-*.sh integration tests:
# a network namespace as the "guest", netstack-host --user-net serving a
# TAP inside it, busybox udhcpc for the lease, small host-side servers.
# Needs root (namespaces, TAP); skips with 77 otherwise.

B=${B:-build}
HOST_BIN=$B/netstack-host

skip() {
	echo "$1"
	exit 77
}

fail() {
	echo "FAIL: $*"
	[ -n "$UN_LOG" ] && [ -f "$UN_LOG" ] && sed 's/^/  usernet: /' "$UN_LOG" | tail -40
	exit 1
}

[ "$(id -u)" = 0 ] || skip "SKIP: needs root (network namespaces and TAP devices)"
[ -c /dev/net/tun ] || skip "SKIP: no /dev/net/tun"
command -v ip >/dev/null || skip "SKIP: no ip(8)"
command -v busybox >/dev/null || skip "SKIP: no busybox (busybox-static)"
command -v python3 >/dev/null || skip "SKIP: no python3"
[ -x "$HOST_BIN" ] || fail "$HOST_BIN not built"

UN_TMP=$(mktemp -d /tmp/usernet-test.XXXXXX)
UN_NS=untest$$
UN_PIDS=""
UN_LOG=$UN_TMP/usernet.log

un_cleanup() {
	# Servers started inside the namespace, then the host-side helpers.
	for p in $(ip netns pids "$UN_NS" 2>/dev/null) $UN_PIDS; do
		kill "$p" 2>/dev/null
	done
	sleep 0.1
	for p in $UN_PIDS; do
		kill -9 "$p" 2>/dev/null
	done
	ip netns del "$UN_NS" 2>/dev/null
	rm -rf "$UN_TMP"
}
trap un_cleanup EXIT
trap "exit 1" INT TERM

ip netns add "$UN_NS" || skip "SKIP: cannot create network namespaces here"
ip netns exec "$UN_NS" ip link set lo up

# Run a command inside the guest namespace.
in_ns() {
	ip netns exec "$UN_NS" "$@"
}

# Background a host-side helper and remember it for cleanup.
bg() {
	"$@" &
	UN_PIDS="$UN_PIDS $!"
}

# udhcpc event script: apply the lease with ip(8), record its fields.
cat >"$UN_TMP/udhcpc.sh" <<'EOF'
#!/bin/sh
case "$1" in
deconfig)
	ip -4 addr flush dev "$interface"
	ip link set "$interface" up
	;;
bound|renew)
	ip -4 addr flush dev "$interface"
	ip addr add "$ip/${mask:-24}" dev "$interface"
	[ -n "$router" ] && ip route replace default via "${router%% *}" dev "$interface"
	[ -n "$mtu" ] && ip link set "$interface" mtu "$mtu"
	echo "ip=$ip mask=$mask router=$router dns=$dns mtu=$mtu hostname=$hostname" >"$LEASE_FILE"
	;;
esac
exit 0
EOF
chmod +x "$UN_TMP/udhcpc.sh"

# Helpers in Python: UDP echo (uppercases), TCP sink answering sha256 of
# what it read, TCP echo for many concurrent connections, and a client
# holding N connections open at once.
cat >"$UN_TMP/helper.py" <<'EOF'
import hashlib, selectors, socket, sys, time

def udp_echo(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", port))
    while True:
        d, a = s.recvfrom(65535)
        s.sendto(d.upper(), a)

def udp_client(host, port, msg):
    # A few tries: the server may still be starting.
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(1)
    for _ in range(3):
        s.sendto(msg.encode(), (host, port))
        try:
            print(s.recvfrom(65535)[0].decode())
            return
        except socket.timeout:
            pass
    print("timeout")

def tcp_sink(port):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(64)
    while True:
        c, _ = s.accept()
        h = hashlib.sha256()
        while True:
            d = c.recv(1 << 20)
            if not d:
                break
            h.update(d)
        c.sendall(h.hexdigest().encode() + b"\n")
        c.close()

def tcp_echo(port, bind="127.0.0.1"):
    sel = selectors.DefaultSelector()
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((bind, port))
    ls.listen(4096)
    ls.setblocking(False)
    sel.register(ls, selectors.EVENT_READ)
    while True:
        for k, _ in sel.select():
            if k.fileobj is ls:
                try:
                    c, _ = ls.accept()
                except BlockingIOError:
                    continue
                c.setblocking(False)
                sel.register(c, selectors.EVENT_READ)
                continue
            try:
                d = k.fileobj.recv(65536)
            except (BlockingIOError, ConnectionError):
                d = None
            if d:
                k.fileobj.send(d)
            elif d is not None or True:
                if not d:
                    sel.unregister(k.fileobj)
                    k.fileobj.close()

def many(host, port, n):
    # Open n connections, all at once, then check every one echoes.
    socks = []
    t0 = time.time()
    for i in range(n):
        s = socket.create_connection((host, port), timeout=20)
        socks.append(s)
    for i, s in enumerate(socks):
        s.sendall(b"c%05d" % i)
    ok = sum(1 for i, s in enumerate(socks) if s.recv(16) == b"c%05d" % i)
    for s in socks:
        s.close()
    print("%d %d %.2f" % (n, ok, time.time() - t0))

def refused(host, port):
    t0 = time.time()
    try:
        socket.create_connection((host, port), timeout=5)
        print("connected")
    except ConnectionRefusedError:
        print("refused %.3f" % (time.time() - t0))
    except OSError as e:
        print("error %s" % e)

def closed(host, port):
    # Connect, ask, and tell how the answer ends: data, eof or reset.
    try:
        s = socket.create_connection((host, port), timeout=5)
        s.sendall(b"GET / HTTP/1.0\r\n\r\n")
        print("data" if s.recv(100) else "eof")
    except (ConnectionResetError, BrokenPipeError):
        print("reset")
    except OSError as e:
        print("error %s" % e)

def attempts(host, port, n):
    # n connections, held open; prints how many connected.
    socks, ok = [], 0
    for i in range(n):
        try:
            socks.append(socket.create_connection((host, port), timeout=3))
            ok += 1
        except OSError:
            pass
    print(ok)

f = globals()[sys.argv[1]]
f(*[int(a) if a.isdigit() else a for a in sys.argv[2:]])
EOF
HELPER="python3 $UN_TMP/helper.py"

# Start usernet on the namespace: un_start ARGS...; waits for the TAP.
un_start() {
	"$HOST_BIN" --user-net --netns "$UN_NS" --tap tap0 "$@" >"$UN_TMP/usernet.out" 2>"$UN_LOG" &
	UN_PID=$!
	UN_PIDS="$UN_PIDS $UN_PID"
	for _ in $(seq 600); do
		in_ns ip link show tap0 >/dev/null 2>&1 && return 0
		kill -0 "$UN_PID" 2>/dev/null || fail "netstack-host exited: $(cat "$UN_LOG")"
		sleep 0.1
	done
	fail "tap0 did not appear in the namespace"
}

un_stop() {
	kill "$UN_PID" 2>/dev/null
	wait "$UN_PID" 2>/dev/null
	in_ns ip link del tap0 2>/dev/null
}

# Counter NAME from netstack-host's stats (SIGUSR1 dumps them to the log).
un_stat() {
	kill -USR1 "$UN_PID"
	sleep 0.2
	grep "^$1 " "$UN_LOG" | tail -1 | cut -d' ' -f2
}

un_dhcp() {
	LEASE_FILE=$UN_TMP/lease in_ns busybox udhcpc -i tap0 -s "$UN_TMP/udhcpc.sh" -q -n -t 5 -T 1 \
		>"$UN_TMP/udhcpc.log" 2>&1 || fail "udhcpc got no lease: $(cat "$UN_TMP/udhcpc.log")"
	LEASE_FILE=$UN_TMP/lease
}

# Wait until something listens on 127.0.0.1:PORT (helpers start slowly
# on a loaded host).
wait_port() {
	python3 -c '
import socket, sys, time
for _ in range(100):
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1).close()
        sys.exit(0)
    except OSError:
        time.sleep(0.05)
sys.exit(1)' "$1" || fail "nothing listens on port $1"
}

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
