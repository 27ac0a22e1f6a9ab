#!/bin/sh
# virtio-net-monitor.sh — the NIC's monitor and QMP side while the kit's
# virtio-net payload serves a UDP port (serve=5555): `info network` in
# QEMU's layout, a host forward added at run time (hostfwd_add) that
# brings a datagram from the host's 127.0.0.1 to the guest and its echo
# back, the same forward refused twice, removed (hostfwd_remove: no more
# echo), `info usernet`'s counters, set_link errors, QMP set_link off,
# which the guest sees (STATUS; `info network` says link=down), and set_link
# on, which it sees too and ends on.
set -u
VMM=${VMM:-build/vmm}
B=${B:-build}
PAYLOAD=$B/tests/guest/virtio-net.elf
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
[ -f "$PAYLOAD" ] || { echo "FAIL: $PAYLOAD not built"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/virtio-net-monitor.XXXXXX")
pid=
trap '[ -z "$pid" ] || kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
timeout 120 "$VMM" -m 64 -nographic -monitor "unix:$tmp/mon,server,nowait" \
	-qmp "unix:$tmp/qmp,server=on,wait=off" -device isa-debug-exit,iobase=0xf4,iosize=4 \
	-netdev user,id=n0 -device virtio-net-pci,netdev=n0,id=net0 \
	-kernel "$PAYLOAD" -append "serve=5555" </dev/null >"$tmp/out" 2>"$tmp/err" &
pid=$!
PYTHONPATH=tests/integration python3 - "$tmp" <<'PY'
import json, socket, sys, time
from core_mon import connect, cmd
from qmp_client import Qmp
tmp = sys.argv[1]

def wait_out(text, secs=30):
    for _ in range(secs * 20):
        if text in open(tmp + "/out").read():
            return
        time.sleep(0.05)
    sys.exit("no %r in the guest output" % text)

def echo(port, secs):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(0.5)
    for i in range(int(secs * 2)):
        s.sendto(b"ping %d" % i, ("127.0.0.1", port))
        try:
            data = s.recv(2048)
            if data.startswith(b"ping"):
                return True
        except socket.timeout:
            pass
    return False

connect(tmp + "/mon")
wait_out("virtio-net: serving UDP port 5555")
out = cmd("info network")
assert "net0: index=0,type=nic,model=virtio-net-pci,macaddr=52:54:00:12:34:56" in out, out
assert " \\ n0: index=0,type=user,net=10.0.2.0,restrict=off" in out, out
probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
probe.bind(("127.0.0.1", 0))
hp = probe.getsockname()[1]
probe.close()
out = cmd("hostfwd_add n0 udp:127.0.0.1:%d-:5555" % hp)
assert out.strip() == "", out
assert echo(hp, 10), "no echo through the forward added at run time"
out = cmd("hostfwd_add udp:127.0.0.1:%d-:5555" % hp)
assert "already forwarded" in out, out
out = cmd("hostfwd_remove n0 udp:127.0.0.1:%d" % hp)
assert out.strip() == "", out
assert not echo(hp, 1.5), "an echo after hostfwd_remove"
out = cmd("hostfwd_add nosuch udp::%d-:5555" % hp)
assert "no user network backend" in out, out
out = cmd("info usernet")
assert "n0 (user):" in out and "hostfwd_accepted" in out, out
assert int(out.split("udp_rx ")[1].split()[0]) >= 1, out
out = cmd("set_link nosuch off")
assert "not found" in out, out
out = cmd("set_link net0 maybe")
assert "usage" in out, out
q = Qmp(tmp + "/qmp")
q.ok("qmp_capabilities")

def set_link(name, up):  # Qmp.cmd's own first parameter is called name
    q.next_id += 1
    q.raw(json.dumps({"execute": "set_link", "arguments": {"name": name, "up": up},
                      "id": q.next_id}).encode() + b"\n")
    return q.reply()

r = set_link("nosuch", False)
assert r["error"]["class"] == "DeviceNotFound", r
r = set_link("net0", False)
assert r.get("return") == {}, r
wait_out("virtio-net: link down after")
out = cmd("info network")
assert "link=down" in out, out
cmd("set_link net0 on")
wait_out("virtio-net: link up again")
print("monitor and QMP ok")
PY
rc=$?
wait $pid
vrc=$?
pid=
[ $rc -eq 0 ] || { tail -5 "$tmp/out"; cat "$tmp/err"; echo "FAIL: monitor session"; exit 1; }
[ $vrc -eq 1 ] || { tail -5 "$tmp/out"; echo "FAIL: the guest should end on link down (status 1), got $vrc"; exit 1; }
grep -q 'virtio-net: served datagram 1 ' "$tmp/out" || { echo "FAIL: the guest served nothing"; exit 1; }
echo ok
