#!/bin/sh
# usernet-ipv6.sh — IPv6 through netstack-host --user-net: the namespace's
# kernel configures its address by SLAAC from usernet's router
# advertisement (fd00::/64, default route via the gateway's link-local
# address); reaches a TCP server on the host's ::1 through fd00::2 (1 MB
# each way, sha256-exact) and a dual-stack server through both families;
# resolves a name through the DNS forwarder at fd00::3; a hostfwd on
# [::1] reaches a server in the namespace; ipv6=off gives no address.
# Root only.
. tests/integration/usernet-common.inc.sh

python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null ||
	skip "SKIP: no IPv6 loopback on the host"

cat >"$UN_TMP/h6.py" <<'EOF'
import hashlib, socket, sys, threading

def sink6(port, bind="::1"):
    # Answers the sha256 of what one connection sent, for each connection.
    s = socket.socket(socket.AF_INET6)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if bind == "::":
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    s.bind((bind, port))
    s.listen(16)
    while True:
        c, a = s.accept()
        h = hashlib.sha256()
        while True:
            d = c.recv(1 << 20)
            if not d:
                break
            h.update(d)
        c.sendall(h.hexdigest().encode() + b" " + a[0].encode() + b"\n")
        c.close()

def source(port, size):
    # Serves size bytes of a fixed pattern to each connection.
    s = socket.socket(socket.AF_INET6)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("::1", port))
    s.listen(16)
    data = bytes(range(256)) * (size // 256)
    while True:
        c, _ = s.accept()
        c.sendall(data)
        c.close()

def send(host, port, path):
    c = socket.create_connection((host, port), timeout=20)
    c.sendall(open(path, "rb").read())
    c.shutdown(socket.SHUT_WR)
    print(c.makefile().read().strip())

def fetch(host, port):
    c = socket.create_connection((host, port), timeout=20)
    h = hashlib.sha256()
    while True:
        d = c.recv(1 << 20)
        if not d:
            break
        h.update(d)
    print(h.hexdigest())

f = globals()[sys.argv[1]]
f(*[int(a) if a.isdigit() else a for a in sys.argv[2:]])
EOF
H6="python3 $UN_TMP/h6.py"

head -c 1048576 /dev/urandom >"$UN_TMP/1m"
WANT=$(sha256sum <"$UN_TMP/1m" | cut -d' ' -f1)
PAT=$(python3 -c 'import hashlib; print(hashlib.sha256(bytes(range(256)) * 4096).hexdigest())')
SINK=$(free_port)
SRC=$(free_port)
DUAL=$(free_port)
DNS_PORT=$(free_port)
bg $H6 sink6 "$SINK"
bg $H6 source "$SRC" 1048576
bg $H6 sink6 "$DUAL" ::
command -v dnsmasq >/dev/null || fail "dnsmasq (dnsmasq-base) not installed"
bg dnsmasq --keep-in-foreground --port "$DNS_PORT" --listen-address 127.0.0.1 \
	--bind-interfaces --no-resolv --no-hosts --user=root --pid-file="$UN_TMP/dnsmasq.pid" \
	--address=/usernet6.test/192.0.2.66

mkfifo "$UN_TMP/ctl"
un_start --dns "127.0.0.1:$DNS_PORT" --control "$UN_TMP/ctl"
in_ns sysctl -qw net.ipv6.conf.tap0.accept_ra=2 net.ipv6.conf.tap0.autoconf=1
in_ns ip link set tap0 up
un_dhcp

# SLAAC: a global address in fd00::/64 once the kernel's DAD is done.
addr=""
for _ in $(seq 150); do
	addr=$(in_ns ip -6 -o addr show dev tap0 scope global | grep -v tentative |
		sed -n 's/.* inet6 \(fd00::[0-9a-f:]*\)\/64 .*/\1/p')
	[ -n "$addr" ] && break
	sleep 0.2
done
[ -n "$addr" ] || fail "no SLAAC address: $(in_ns ip -6 addr show dev tap0)"
in_ns ip -6 route show default | grep -q "via fe80::" ||
	fail "no default route from the RA: $(in_ns ip -6 route)"
echo "ok: SLAAC address $addr and a default route from usernet's RA"

in_ns ping -6 -c 2 -W 2 fd00::2 >/dev/null || fail "ping -6 fd00::2"
echo "ok: ping -6 fd00::2 (the gateway)"

got=$(in_ns $H6 send fd00::2 "$SINK" "$UN_TMP/1m")
[ "${got%% *}" = "$WANT" ] || fail "upload to [::1]:$SINK through fd00::2: '$got'"
got=$(in_ns $H6 fetch fd00::2 "$SRC")
[ "$got" = "$PAT" ] || fail "download from [::1]:$SRC: '$got'"
echo "ok: 1 MB up and down between the namespace and the host's ::1, sha256 exact"

got=$(in_ns $H6 send 10.0.2.2 "$DUAL" "$UN_TMP/1m")
[ "${got%% *}" = "$WANT" ] || fail "dual-stack server over IPv4: '$got'"
got=$(in_ns $H6 send fd00::2 "$DUAL" "$UN_TMP/1m")
[ "${got%% *}" = "$WANT" ] || fail "dual-stack server over IPv6: '$got'"
case "$got" in
*" ::1") ;;
*) fail "the dual-stack server should see ::1 as the IPv6 client: '$got'" ;;
esac
echo "ok: a dual-stack host server through both families"

out=$(in_ns busybox nslookup usernet6.test fd00::3 2>&1)
echo "$out" | grep -q "192.0.2.66" || fail "DNS over IPv6 via fd00::3: $out"
echo "ok: DNS forwarder at fd00::3"

# hostfwd on [::1] into the namespace (guest side its IPv4 lease).
FWD=$(free_port)
in_ns python3 -c '
import socket
s = socket.socket(socket.AF_INET)
s.bind(("10.0.2.15", 8022))
s.listen(1)
c, _ = s.accept()
c.sendall(b"hello from the guest\n")
c.close()' &
UN_PIDS="$UN_PIDS $!"
sleep 0.3
echo "hostfwd_add tcp:[::1]:$FWD-:8022" >"$UN_TMP/ctl"
sleep 0.3
grep -q "^ok" "$UN_TMP/usernet.out" || fail "hostfwd_add [::1]: $(cat "$UN_TMP/usernet.out")"
got=$(python3 -c "
import socket
c = socket.create_connection(('::1', $FWD), timeout=5)
print(c.makefile().read().strip())")
[ "$got" = "hello from the guest" ] || fail "hostfwd tcp:[::1]:$FWD: '$got'"
echo "ok: hostfwd tcp:[::1]:$FWD -> 10.0.2.15:8022"
[ "$(un_stat tcp6_flows)" -ge 3 ] || fail "tcp6_flows: $(un_stat tcp6_flows)"
un_stop

# ipv6=off: no RA, no address.
un_start --dns "127.0.0.1:$DNS_PORT" --ipv6 off
in_ns ip link set tap0 up
sleep 2
in_ns ip -6 addr show dev tap0 scope global | grep -q fd00 && fail "--ipv6 off still advertised"
un_stop
echo "ok: --ipv6 off: no prefix advertised"
echo "PASS"
