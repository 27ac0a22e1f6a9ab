#!/bin/sh
# wlan-kit.sh — the kit's WLAN payload (tests/guest/wlan.c) on
# `-object wlan-medium,id=m0,country=DE -device virtio-wlan-pci,medium=m0`:
# two radios' frames on allowed and forbidden channels, ACK status,
# malformed messages ignored while the device keeps working; then the
# monitor switches the country to 00 (`wlan_country 00`) and the guest sees
# its beacons on 5180 MHz dropped; `info wlan` must count every drop by
# reason and `info regdomain` show 00. Under build/vmm and the ASan build,
# then once more with the medium in build/wlan-medium (`-object
# wlan-medium,id=m0,socket=PATH`), controlled on the daemon's socket.
set -u
VMM=${VMM:-build/vmm}
VMM_ASAN=${VMM_ASAN:-build/asan/vmm}
B=${B:-build}
PAYLOAD=$B/tests/guest/wlan.elf
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
command -v python3 >/dev/null || { echo "skipped: no python3"; exit 77; }
[ -f "$PAYLOAD" ] || { echo "FAIL: $PAYLOAD not built"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wlan-kit.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0

# run VMM [daemon]
run() {
	vmm=$1 medium=country=DE ctl=
	if [ "${2:-}" = daemon ]; then
		"$B/wlan-medium" --socket "$tmp/medium" --country DE 2>"$tmp/derr" &
		dpid=$!
		medium=socket=$tmp/medium ctl=$tmp/medium.ctl
		for _ in $(seq 600); do [ -S "$tmp/medium.ctl" ] && break; sleep 0.1; done
	fi
	timeout 120 "$vmm" -m 64 -nographic -serial "file:$tmp/serial" \
		-monitor "unix:$tmp/mon,server,nowait" \
		-device isa-debug-exit,iobase=0xf4,iosize=4 \
		-object "wlan-medium,id=m0,$medium" \
		-device virtio-wlan-pci,medium=m0 -kernel "$PAYLOAD" </dev/null 2>"$tmp/err" &
	pid=$!
	PYTHONPATH=tests/integration python3 - "$tmp/mon" "$tmp/serial" "$ctl" <<'PY'
import re, sys, time
from core_mon import connect, cmd, send
from wlan_hwsim import Control

# the medium's commands: the VM's monitor, or the daemon's control socket
medium = Control(sys.argv[3]).cmd if sys.argv[3] else cmd

def wait_for(text, secs=90):
    end = time.time() + secs
    while time.time() < end:
        try:
            out = open(sys.argv[2]).read()
        except OSError:
            out = ""
        if text in out:
            return out
        if "wlan: FAIL" in out:
            sys.exit("guest failed:\n" + out)
        time.sleep(0.1)
    sys.exit("timed out waiting for %r; serial:\n%s" % (text, out))

connect(sys.argv[1])
wait_for("wlan: phase 1 passed")
if sys.argv[3]:
    out = cmd("info wlan")
    assert "served by the wlan-medium daemon" in out, out
    out = cmd("wlan_country 00")
    assert "no wlan-medium in this VM" in out, out
out = medium("info wlan")
for want in ["country DE", " no-rule=1", " dfs-passive=1", " width=1", " malformed=2",
             "radio 42:00:00:00:00:00", "radio 42:00:00:00:01:00", "acked 2"]:
    assert want in out, "info wlan lacks %r:\n%s" % (want, out)
out = medium("wlan_country 00")
assert "regulatory domain now 00" in out, out
wait_for("wlan: all checks passed")
out = medium("info wlan")
m = re.search(r" no-ir=(\d+)", out)
assert m and int(m.group(1)) >= 1, out
assert "country 00" in out and "acked 3" in out, out
out2 = cmd("info wlan")
assert re.search(r"virtio-wlan-pci \(00:..\..\) on m0: \d+ messages sent", out2), out2
out = medium("info regdomain")
assert out.startswith("global\ncountry 00: DFS-UNSET\n"), out
assert "(5170 - 5250 @ 80), (N/A, 20.00), (N/A), NO-IR, AUTO-BW" in out, out
out = medium("wlan_country ZZ")
assert "no regulatory domain for 'ZZ'" in out, out
out = medium("wlan_radar 5500")
assert "radar on 5500 MHz" in out, out
send("quit")
print("monitor checks passed")
PY
	prc=$?
	[ $prc -eq 0 ] || kill $pid 2>/dev/null
	wait $pid
	if [ "${2:-}" = daemon ]; then
		kill $dpid
		wait $dpid
		cat "$tmp/derr" >>"$tmp/err"
	fi
	cat "$tmp/serial"
	if [ $prc -ne 0 ]; then
		echo "FAIL: $vmm: monitor session"
		sed 's/^/stderr: /' "$tmp/err" | tail -n 5
		fails=$((fails + 1))
	elif grep -qE 'Sanitizer|runtime error' "$tmp/err"; then
		echo "FAIL: $vmm: sanitizer report"
		cat "$tmp/err"
		fails=$((fails + 1))
	else
		grep -q "malformed hwsim message dropped" "$tmp/err" ||
			{ echo "FAIL: $vmm: malformed message not reported on stderr"; fails=$((fails + 1)); }
		[ "$(grep -c 'malformed hwsim' "$tmp/err")" -eq 1 ] ||
			{ echo "FAIL: $vmm: more than one stderr line for malformed messages"; fails=$((fails + 1)); }
		echo "ok   $vmm"
	fi
	rm -f "$tmp/serial" "$tmp/mon" "$tmp/derr"
}

run "$VMM"
run "$VMM" daemon
if [ -x "$VMM_ASAN" ]; then run "$VMM_ASAN"; else echo "note: $VMM_ASAN not built"; fi
[ $fails -eq 0 ] || exit 1
echo "wlan-kit: all passed"
