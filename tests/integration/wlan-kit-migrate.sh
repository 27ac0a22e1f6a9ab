#!/bin/sh
# wlan-kit-migrate.sh — the kit's WLAN payload (tests/guest/wlan.c) moved
# from one vmm to another while its radios are on the wlan-medium daemon
# (`-object wlan-medium,id=m0,socket=PATH`). The payload's radio B
# announces its interface address once (ADD_MAC_ADDR) and then only
# receives. After phase 1 the source is stopped and migrated to a file
# (`exec:`): once the migration completes it lets the daemon's radios go
# (the daemon lists none while the source still runs); `cont` takes them
# back (radio B with its address again); then it is killed, so the daemon
# drops its connection and radios; the
# destination (-incoming "exec:cat FILE") connects anew and must tell the
# daemon what radio B had announced: the daemon's `info wlan` lists
# radio B with that address before the guest sends anything, and the
# payload's second phase (beacons until the daemon's domain is 00, then
# data A->B acknowledged) passes on the destination. Under build/vmm and
# the ASan build.
set -u
VMM=${VMM:-build/vmm}
VMM_ASAN=${VMM_ASAN:-build/asan/vmm}
B=${B:-build}
PAYLOAD=$B/tests/guest/wlan.elf
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
command -v python3 >/dev/null || { echo "skipped: no python3"; exit 77; }
[ -f "$PAYLOAD" ] || { echo "FAIL: $PAYLOAD not built"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wlan-kit-migrate.XXXXXX")
dpid=
trap '[ -z "$dpid" ] || kill $dpid 2>/dev/null; rm -rf "$tmp"' EXIT
fails=0

run() {
	"$B/wlan-medium" --socket "$tmp/medium" --country DE 2>"$tmp/derr" &
	dpid=$!
	for _ in $(seq 600); do [ -S "$tmp/medium.ctl" ] && break; sleep 0.1; done
	PYTHONPATH=tests/integration timeout 300 python3 - "$1" "$PAYLOAD" "$tmp" <<'PY'
import atexit, os, re, signal, subprocess, sys, time
from qmp_client import Qmp
from wlan_hwsim import Control

vmm, payload, tmp = sys.argv[1:4]
ctl = Control(tmp + "/medium.ctl")
procs = []
atexit.register(lambda: [p.kill() for p in procs if p.poll() is None])
signal.signal(signal.SIGTERM, lambda *_: sys.exit("timed out"))

def start(name, *extra):
    err = open("%s/err.%s" % (tmp, name), "w")
    procs.append(subprocess.Popen(
        [vmm, "-m", "64", "-nographic", "-serial",
         "file:%s/serial.%s" % (tmp, name), "-monitor", "none",
         "-qmp", "unix:%s/qmp.%s,server=on,wait=off" % (tmp, name),
         "-device", "isa-debug-exit,iobase=0xf4,iosize=4",
         "-object", "wlan-medium,id=m0,socket=%s/medium" % tmp,
         "-device", "virtio-wlan-pci,medium=m0", "-kernel", payload] + list(extra),
        stdin=subprocess.DEVNULL, stdout=err, stderr=err))
    return procs[-1]

def wait_for(name, text, secs=90):
    end = time.time() + secs
    out = ""
    while time.time() < end:
        try:
            out = open("%s/serial.%s" % (tmp, name)).read()
        except OSError:
            pass
        if text in out:
            return
        if "wlan: FAIL" in out:
            sys.exit("%s failed:\n%s" % (name, out))
        time.sleep(0.1)
    sys.exit("timed out waiting for %r from %s:\n%s" % (text, name, out))

def qmp(name):
    for _ in range(100):
        if os.path.exists("%s/qmp.%s" % (tmp, name)):
            break
        time.sleep(0.1)
    q = Qmp("%s/qmp.%s" % (tmp, name), timeout=60)
    q.ok("qmp_capabilities")
    return q

def radio_b(out):
    return re.search(r"radio 42:00:00:00:01:00 .*addresses 02:00:00:00:01:00", out)

a = start("a")
wait_for("a", "wlan: phase 1 passed")
out = ctl.cmd("info wlan")
assert radio_b(out), "the daemon lacks radio B's address:\n" + out
q = qmp("a")
q.ok("stop")
q.ok("migrate", uri="exec:cat > %s/saved" % tmp)
for _ in range(600):
    st = q.ok("query-migrate").get("status")
    if st in ("completed", "failed"):
        break
    time.sleep(0.05)
assert st == "completed", q.ok("query-migrate")

def daemon_until(pred, what):
    for _ in range(100):
        out = ctl.cmd("info wlan")
        if pred(out):
            return
        time.sleep(0.05)
    sys.exit("the daemon, %s:\n%s" % (what, out))

# the completed source lets its radios go while it lives on
daemon_until(lambda o: "radios: 0" in o, "after the completed migration, with the source alive")
assert a.poll() is None, "the source exited"
# `cont` takes the guest back: its radios and radio B's address return
q.ok("cont")
daemon_until(radio_b, "after cont on the source")
a.kill()
a.wait()
# the daemon forgets a closed connection's radios
daemon_until(lambda o: "radios: 0" in o, "after the source was killed")

b = start("b", "-incoming", "exec:cat %s/saved" % tmp)
q = qmp("b")
for _ in range(600):
    if q.ok("query-status")["status"] == "running":
        break
    time.sleep(0.05)
assert q.ok("query-status")["status"] == "running", q.ok("query-status")
for _ in range(100):
    out = ctl.cmd("info wlan")
    if radio_b(out):
        break
    time.sleep(0.05)
assert radio_b(out), "the destination did not tell the daemon radio B's address:\n" + out
out = ctl.cmd("wlan_country 00")
assert "regulatory domain now 00" in out, out
wait_for("b", "wlan: all checks passed")
q.cmd("quit")
b.wait(timeout=30)
print("migrated on the daemon's medium: radio B's address told again, phase 2 passed")
PY
	prc=$?
	kill $dpid
	wait $dpid
	dpid=
	if [ $prc -ne 0 ]; then
		echo "FAIL: $1"
		tail -n 5 "$tmp"/err.* "$tmp/derr" 2>/dev/null
		fails=$((fails + 1))
	elif grep -qE 'Sanitizer|runtime error' "$tmp"/err.* "$tmp/derr"; then
		echo "FAIL: $1: sanitizer report"
		cat "$tmp"/err.*
		fails=$((fails + 1))
	else
		echo "ok   $1"
	fi
	rm -f "$tmp"/serial.* "$tmp"/qmp.* "$tmp"/err.* "$tmp/saved" "$tmp/derr"
}

run "$VMM"
if [ -x "$VMM_ASAN" ]; then run "$VMM_ASAN"; else echo "note: $VMM_ASAN not built"; fi
[ $fails -eq 0 ] || exit 1
echo "wlan-kit-migrate: all passed"
