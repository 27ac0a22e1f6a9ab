#!/bin/sh
# core-debug.sh — guest debugging from the monitor (unix socket) against
# hello.elf started with -S: a hardware breakpoint at guest_main stops the
# machine with a message, stepi advances one instruction, system_reset runs
# the kernel into the breakpoint again, delete + cont let the guest finish.
# Also help, stop and the error texts of break/delete/stepi.
set -u
VMM=${VMM:-build/vmm}
B=${B:-build}
HELLO=$B/tests/guest/hello.elf
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
command -v python3 >/dev/null || { echo "skipped: no python3"; exit 77; }
command -v nm >/dev/null || { echo "skipped: no nm (binutils)"; exit 77; }
# Measured: KVM on QEMU's emulated SVM (the nested runner's L1) never stops
# at a hardware breakpoint set with KVM_SET_GUEST_DEBUG; the guest runs past.
[ -z "${VMM_NESTED_L1:-}" ] ||
	{ echo "skipped: hardware breakpoints do not fire under $VMM_NESTED_L1 (nested runner)"; exit 77; }
GM=$(nm "$HELLO" | awk '$3 == "guest_main" { print "0x" $1 }')
[ -n "$GM" ] || { echo "FAIL: no guest_main symbol in $HELLO"; exit 1; }
sock=$(mktemp -u /tmp/vmm-dbg.XXXXXX)
log=$(mktemp)
trap 'rm -f "$log" "$sock"' EXIT
timeout 60 "$VMM" -m 64 -nographic -S -monitor unix:$sock,server,nowait \
	-device isa-debug-exit,iobase=0xf4,iosize=4 -kernel "$HELLO" </dev/null >"$log" 2>&1 &
pid=$!
PYTHONPATH=tests/integration python3 - "$sock" "$GM" "$log" <<'PY'
import re, sys, time
from core_mon import connect, cmd, send
path, bp, log = sys.argv[1], int(sys.argv[2], 16), sys.argv[3]
def pc():
    out = cmd("info cpus")
    m = re.search(r"CPU #0: pc=0x([0-9a-f]+)", out)
    assert m, out
    return int(m.group(1), 16)
def wait_stops(n):
    for _ in range(100):
        if open(log).read().count("vmm: vCPU 0 stopped at") >= n: return
        time.sleep(0.05)
    sys.exit("no debug stop %d; log: %s" % (n, open(log).read()))
connect(path)
out = cmd("help"); assert "break" in out and "stepi" in out and "system_reset" in out, out
out = cmd("stepi"); assert "stop it first" not in out, out   # -S: stopped, so it steps
out = cmd("break %#x" % bp); assert out.startswith("breakpoint 0 at %#x" % bp), out
out = cmd("break"); assert "breakpoint 0 at %#x" % bp in out, out
out = cmd("break nowhere"); assert "usage: break" in out, out
out = cmd("delete 0x1234"); assert "no breakpoint at 0x1234" in out, out
cmd("cont")
wait_stops(2)
assert "vmm: vCPU 0 stopped at %#x (breakpoint 0)" % bp in open(log).read()
assert pc() == bp
out = cmd("stepi"); m = re.match(r"pc=0x([0-9a-f]+)", out); assert m, out
stepped = int(m.group(1), 16)
assert stepped != bp and pc() == stepped, (hex(stepped), out)
assert "(single step)" in open(log).read()
cmd("system_reset")
cmd("cont")            # the kernel runs from its entry into guest_main again
wait_stops(4)
assert pc() == bp
assert "hello from guest" not in open(log).read()
cmd("stop")
out = cmd("delete"); assert out == "" or out.isspace(), out
out = cmd("break"); assert "no breakpoints" in out, out
send("cont")
print("debug ok")
PY
rc=$?
# A failed session leaves the guest paused: end it now, not at the timeout.
[ $rc -eq 0 ] || kill $pid 2>/dev/null
wait $pid
vrc=$?
cat "$log"
[ $rc -eq 0 ] || { kill $pid 2>/dev/null; echo "FAIL: debug session"; exit 1; }
grep -q 'hello from guest' "$log" || { echo "FAIL: no guest output after delete + cont"; exit 1; }
[ $vrc -eq 1 ] || { echo "FAIL: the guest should exit 1 at the end, got $vrc"; exit 1; }
echo ok
