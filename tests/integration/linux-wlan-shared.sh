#!/bin/sh
# Two Linux guests on one shared medium: build/wlan-medium (country DE)
# serves a unix socket both VMs' virtio-wlan-pci devices connect to
# (-object wlan-medium,socket=PATH). VM ap runs hostapd on its radio 0
# (wlan0), VM sta wpa_supplicant on its radio 1 (wlan1), so their addresses
# differ. The station associates and pings the AP across the machines; the
# daemon's control socket switches to BD (no rule covers 5180 MHz): the
# station loses the AP and the daemon counts no-rule drops; back to DE: it
# reassociates and the ping works again.
# (WLAN_DAEMON_OPTS=--no-enforce shows the test failing without enforcement.)
. "$(dirname "$0")/linux-wlan.inc.sh"

sock=$tmp/medium.sock
# ctl LINE: one line on the daemon's control socket; prints the answer
# (what comes before the next "(wlan-medium) " prompt).
ctl() {
	python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
def answer():
    buf = b""
    while b"(wlan-medium) " not in buf:
        d = s.recv(4096)
        if not d:
            break
        buf += d
    return buf.partition(b"(wlan-medium) ")[0].decode()
answer()
s.sendall(sys.argv[2].encode() + b"\n")
print(answer(), end="")' "$sock.ctl" "$1"
}

build/wlan-medium --socket "$sock" --country DE ${WLAN_DAEMON_OPTS:-} >"$tmp/daemon.log" 2>&1 &
daemon=$!
pids="$pids $daemon"
i=0
while [ ! -S "$sock.ctl" ]; do
	kill -0 $daemon 2>/dev/null || { cat "$tmp/daemon.log"; fail "wlan-medium exited"; }
	i=$((i + 1))
	[ $i -lt 100 ] || fail "wlan-medium did not create $sock.ctl"
	sleep 0.1
done

wlan_boot ap 3 -object "wlan-medium,id=m0,socket=$sock" -device virtio-wlan-pci,medium=m0
wlan_boot sta 4 -object "wlan-medium,id=m0,socket=$sock" -device virtio-wlan-pci,medium=m0
wait_in ap VMM-GUEST-READY
wait_in sta VMM-GUEST-READY
echo "both guests reached init after $(elapsed) s"
start_ap ap
start_station sta
across sta ping
[ "$rc" = 0 ] || fail "the station cannot ping the AP in the other VM"
echo "sta: ping to the AP's VM after $(elapsed) s"
domain_cycle ctl sta ping
finish sta ap
echo "ok: two VMs on one daemon medium: ping, lost under BD, back under DE after $(elapsed) s"
