#!/bin/sh
# control-exit.sh — the exit-status table (README "Exit status") and what
# resets, shutdowns and panics do, with control.elf:
#   triple fault after -kernel: the kernel is loaded again and runs (boots
#   counted in RAM); -no-reboot / -action reboot=shutdown exit 0 instead;
#   an emulation failure exits 2; loader and usage errors before the guest
#   runs exit 1; a reload that fails at reset exits 2; pvpanic: caps 3,
#   panic=exit-failure 4, panic=none runs on (11), panic=shutdown 0,
#   panic=pause stops with `info status` "paused (guest-panicked)";
#   SIGTERM exits 0.
set -u
VMM=${VMM:-build/vmm}
B=${B:-build}
K=$B/tests/guest/control.elf
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
command -v python3 >/dev/null || { echo "skipped: no python3"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vmm-exit.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0

# run EXPECTED_STATUS GREP_PATTERN ARGS...: one run, status and output checked.
run() {
	want=$1 pattern=$2
	shift 2
	timeout 60 "$VMM" -m 64 -nographic -serial stdio -monitor none \
		-device isa-debug-exit,iobase=0xf4,iosize=4 "$@" </dev/null >"$tmp/out" 2>&1
	rc=$?
	if [ "$rc" != "$want" ] || ! grep -qE "$pattern" "$tmp/out"; then
		echo "FAIL: $* -> status $rc (want $want), output:"
		sed 's/^/  | /' "$tmp/out" | tail -15
		fails=$((fails + 1))
	else
		echo "ok: status $rc: $*"
	fi
}

run 1 'control: boot 2' -kernel "$K" -append triple=2
[ "$(grep -c 'triple fault' "$tmp/out")" = 2 ] || { echo "FAIL: expected 2 triple faults"; fails=$((fails + 1)); }
grep -q 'control: boot 1' "$tmp/out" || { echo "FAIL: no second boot"; fails=$((fails + 1)); }
run 0 'control: boot 0' -no-reboot -kernel "$K" -append triple=2
grep -q 'control: boot 1' "$tmp/out" && { echo "FAIL: -no-reboot rebooted"; fails=$((fails + 1)); }
run 0 'control: boot 0' -action reboot=shutdown -kernel "$K" -append triple=2
grep -q 'control: boot 1' "$tmp/out" && { echo "FAIL: reboot=shutdown rebooted"; fails=$((fails + 1)); }
run 2 'emulation failure' -kernel "$K" -append mmio_exec=1

# Before the guest runs: 1.
run 1 'No such file' -kernel "$tmp/missing.elf"
run 1 "could not load initrd '$tmp/missing-module'" -kernel "$K" -initrd "$tmp/missing-module"
run 1 'unknown option' -bogus
run 1 'panic=' -action panic=explode -kernel "$K"

# pvpanic and -action panic=.
run 4 'pvpanic caps 3' -device pvpanic -action panic=exit-failure -kernel "$K" -append pvpanic=1
grep -q 'still running' "$tmp/out" && { echo "FAIL: the guest ran on after the panic"; fails=$((fails + 1)); }
run 11 'still running after the panic' -device pvpanic -action panic=none -kernel "$K" -append pvpanic=1
run 0 'reported a panic' -device pvpanic -kernel "$K" -append pvpanic=1
run 11 'pvpanic caps ff' -kernel "$K" -append pvpanic=1 # no device: nothing happens

# panic=pause: stopped, `info status` says why; a reload failing at reset: 2.
echo module >"$tmp/module"
sock=$tmp/mon
"$VMM" -m 64 -nographic -serial stdio -monitor unix:$sock,server,nowait -device pvpanic \
	-action panic=pause -kernel "$K" -initrd "$tmp/module" -append pvpanic=1 \
	</dev/null >"$tmp/out" 2>&1 &
pid=$!
PYTHONPATH=tests/integration timeout 60 python3 - "$sock" "$tmp/out" "$tmp/module" <<'PY'
import os, sys, time
from core_mon import connect, cmd, send
sock, log, module = sys.argv[1:]
connect(sock)
for _ in range(200):
    if "reported a panic" in open(log).read():
        break
    time.sleep(0.05)
out = cmd("info status"); assert "VM status: paused (guest-panicked)" in out, out
time.sleep(0.3)
assert "still running" not in open(log).read(), "the guest ran on after panic=pause"
os.unlink(module)           # the multiboot module cannot be loaded again
send("system_reset")
PY
prc=$?
wait $pid
rc=$?
if [ $prc != 0 ] || [ $rc != 2 ] || ! grep -q 'reset:.*multiboot' "$tmp/out"; then
	echo "FAIL: panic=pause / failed reset: session $prc, status $rc (want 2)"
	sed 's/^/  | /' "$tmp/out" | tail -10
	fails=$((fails + 1))
else
	echo "ok: panic=pause stopped the guest; a failed reload at reset exits 2"
fi

# SIGTERM: a clean exit, 0.
"$VMM" -m 64 -nographic -serial stdio -monitor none -kernel "$K" </dev/null >"$tmp/out" 2>&1 &
pid=$!
for _ in $(seq 1200); do grep -q 'control: idle' "$tmp/out" && break; sleep 0.1; done
kill -TERM $pid
wait $pid
rc=$?
if [ $rc != 0 ] || ! grep -q 'terminating on signal 15' "$tmp/out"; then
	echo "FAIL: SIGTERM: status $rc"; fails=$((fails + 1))
else
	echo "ok: SIGTERM exits 0"
fi

[ $fails = 0 ] || { echo "FAIL: $fails case(s)"; exit 1; }
echo ok
