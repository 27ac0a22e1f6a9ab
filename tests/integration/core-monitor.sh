#!/bin/sh
# core-monitor.sh — monitor commands over a unix socket against a guest
# started paused (-S): info cpus/registers/mtree, xp, x, errors, cont.
set -u
VMM=${VMM:-build/vmm}
B=${B:-build}
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
command -v python3 >/dev/null || { echo "skipped: no python3"; exit 77; }
sock=$(mktemp -u /tmp/vmm-mon.XXXXXX)
timeout 60 "$VMM" -m 64 -nographic -S -monitor unix:$sock,server,nowait \
	-device isa-debug-exit,iobase=0xf4,iosize=4 -kernel "$B/tests/guest/hello.elf" \
	</dev/null >out.$$ 2>&1 &
pid=$!
PYTHONPATH=tests/integration python3 - "$sock" <<'PY'
import sys
from core_mon import connect, cmd, send
banner = connect(sys.argv[1])
assert "monitor" in banner, banner
out = cmd("info cpus"); assert "CPU #0" in out and "thread_id=" in out, out
out = cmd("info registers"); assert "RIP=" in out and "CR0=" in out, out
out = cmd("info mtree"); assert "pc.ram" in out and "serial" in out and "isa-debug-exit" in out, out
# the multiboot loader put the info block's magic in EAX; the kernel is in RAM
out = cmd("xp /4xb 0x100000"); assert out.startswith("0000000000100000:"), out
out = cmd("x /2xw 0x1000"); assert "0000000000001000:" in out, out
out = cmd("xp /1xg 0x7fffffffff"); assert "Cannot access memory" in out, out
out = cmd("bogus"); assert "unknown command" in out, out
out = cmd("x /zz 0"); assert "usage" in out, out
out = cmd("info nonsense"); assert "unknown info" in out, out
send("cont")
print("monitor ok")
PY
rc=$?
# A failed session leaves the guest paused: end it now, not at the timeout.
[ $rc -eq 0 ] || kill $pid 2>/dev/null
wait $pid
vrc=$?
cat out.$$
grep -q 'hello from guest' out.$$ || { rm -f out.$$; echo "FAIL: no guest output after cont"; exit 1; }
rm -f out.$$
[ $rc -eq 0 ] || { kill $pid 2>/dev/null; echo "FAIL: monitor session"; exit 1; }
[ $vrc -eq 1 ] || { echo "FAIL: after cont the guest should exit 1, got $vrc"; exit 1; }

# mon:stdio (the default): Ctrl-A c reaches the monitor, quit exits 0.
out=$(printf '\001cinfo cpus\nquit\n' | timeout 30 "$VMM" -m 64 -S -kernel "$B/tests/guest/hello.elf" 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "FAIL: mux quit exited $rc"; exit 1; }
echo "$out" | grep -q 'CPU #0' || { echo "FAIL: no info cpus through the mux"; exit 1; }
echo ok
