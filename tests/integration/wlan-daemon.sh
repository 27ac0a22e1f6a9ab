#!/bin/sh
# wlan-daemon.sh — build/wlan-medium shared by three "VMs" (sockets speaking
# the relay protocol): two of them have a radio with the same MAC (radio 0),
# so frames must be routed by (connection, address); unicast and broadcast
# delivery with ACK status across connections; the country switched on the
# control socket for every radio at once; a malformed message and a bad
# length prefix cost only their own connection; the daemon keeps serving.
set -u
B=${B:-build}
DAEMON=$B/wlan-medium
command -v python3 >/dev/null || { echo "skipped: no python3"; exit 77; }
[ -x "$DAEMON" ] || { echo "FAIL: $DAEMON not built"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wlan-daemon.XXXXXX")
"$DAEMON" --socket "$tmp/medium" --country DE 2>"$tmp/err" &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
PYTHONPATH=tests/integration python3 - "$tmp/medium" <<'PY'
import struct, sys, time
from wlan_hwsim import *

path = sys.argv[1]
ctl = Control(path + ".ctl")
vm1, vm2, vm3 = Vm(path), Vm(path), Vm(path)
# vm1 and vm3 both have radio 0 (the same MACs); vm2 has radio 1
vm2.send(add_mac_msg(1))
vm3.send(add_mac_msg(0))
for _ in range(100):  # the daemon serves the connections in its own order
    if "radios: 2" in ctl.cmd("info wlan"):
        break
    time.sleep(0.05)
else:
    sys.exit("the radios never registered")
vm1.send(frame_msg(0, 0x08, perm(1), 5180, 11))
got2 = vm2.receive()
assert [c for c, _ in got2] == [CMD_FRAME], got2
assert got2[0][1][A_RECEIVER] == hw(1) and struct.unpack("<I", got2[0][1][A_FREQ])[0] == 5180
got1 = vm1.receive()
assert len(got1) == 1 and got1[0][0] == CMD_TX_INFO, got1
a = got1[0][1]
assert a[A_TRANSMITTER] == hw(0) and struct.unpack("<Q", a[A_COOKIE])[0] == 11, a
assert struct.unpack("<I", a[A_FLAGS])[0] & STAT_ACK, "no ACK across VMs"
assert vm3.receive() == [], "vm3 heard a unicast for radio 1"
# vm2 answers radio 0: both VMs' radio 0 own that address, both get it
vm2.send(frame_msg(1, 0x08, perm(0), 5180, 12))
assert [c for c, _ in vm1.receive()] == [CMD_FRAME]
assert [c for c, _ in vm3.receive()] == [CMD_FRAME]
got2 = vm2.receive()
assert [c for c, _ in got2] == [CMD_TX_INFO], got2
assert struct.unpack("<I", got2[0][1][A_FLAGS])[0] & STAT_ACK
# a beacon from vm3 reaches vm1 and vm2, not itself
vm3.send(frame_msg(0, 0x80, BCAST, 5180, 13))
assert [c for c, _ in vm1.receive()] == [CMD_FRAME]
assert [c for c, _ in vm2.receive()] == [CMD_FRAME]
assert [c for c, _ in vm3.receive()] == [CMD_TX_INFO]
out = ctl.cmd("info wlan")
assert out.count("radio 42:00:00:00:00:00") == 2 and "radio 42:00:00:00:01:00" in out, out
# the country for every radio at once
out = ctl.cmd("wlan_country 00")
assert "now 00" in out, out
vm1.send(frame_msg(0, 0x80, BCAST, 5180, 14))
assert vm2.receive() == [] and vm3.receive() == []
assert [c for c, _ in vm1.receive()] == [CMD_TX_INFO]
out = ctl.cmd("info wlan")
assert "country 00" in out and " no-ir=1" in out, out
out = ctl.cmd("info regdomain")
assert "country 00: DFS-UNSET" in out, out
ctl.cmd("wlan_country DE")
# malformed: counted, the sender's radio keeps working
vm1.send(b"\x10\0\0\0" + b"\0" * 12)
vm1.send(frame_msg(0, 0x08, perm(1), 5180, 15))
assert [c for c, _ in vm2.receive()] == [CMD_FRAME]
assert [c for c, _ in vm1.receive()] == [CMD_TX_INFO]
out = ctl.cmd("info wlan")
assert " malformed=1" in out, out
# a bad length prefix closes that connection only
vm3.s.sendall(struct.pack("<I", 100000))
vm1.send(frame_msg(0, 0x08, perm(1), 5180, 16))
assert [c for c, _ in vm2.receive()] == [CMD_FRAME]
out = ctl.cmd("info wlan")
assert out.count("radio 42:00:00:00:00:00") == 1, out
print("wlan-daemon: all checks passed")
PY
rc=$?
kill $pid
wait $pid 2>/dev/null
grep -q "malformed hwsim message dropped" "$tmp/err" || { echo "FAIL: no stderr line for the malformed message"; exit 1; }
exit $rc
