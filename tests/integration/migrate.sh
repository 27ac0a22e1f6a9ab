#!/bin/sh
# migrate.sh — save and restore a running Linux guest (make demo's Debian
# kernel, booted directly, kernel_irqchip=on) as `virsh save` does: QMP
# stop, migrate "exec:cat > FILE", kill the VMM; then the same command line
# with -incoming "exec:cat FILE". The guest runs a counter printing to the
# serial console: after the restore it must go on from where it stopped
# (never back, and on), and the guest's shell must still answer. QEMU does
# the same as the reference (its stream differs; the behaviour must not).
# The default pc machine's devices all save (chipset, IDE, fw_cfg, i8042,
# ACPI PM...), and q35's (MCH, ICH9 LPC and SMBus, ich9-ahci): both run
# with no VMM_MIGRATE_UNSAVED=allow.
# A live migration too (vmm): a running guest dirtying memory, a cancelled
# migrate first, then passes until the last one with the guest stopped.
# kernel_irqchip=split and off (vmm's PIC, I/O APIC, PIT and APICs) save
# and restore too, off with 2 vCPUs and live.
# A machine with the virtual WLAN saves too: the restored VMM's medium has
# the country the source's monitor set (wlan_country FR over DE on the
# command line) and the radio device loads. vmm refuses a truncated or
# damaged stream with one line.
# needs: native ring 0 (Linux guest; scripts/nested-kvm/place.sh)
set -u
VMM=${VMM:-build/vmm}
limit=${MIGRATE_TIMEOUT:-600}
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
command -v python3 >/dev/null || { echo "FAIL: no python3"; exit 1; }
guest=$(sh scripts/demo/image.sh) || { echo "FAIL: no Debian guest image (scripts/demo/image.sh)"; exit 1; }
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$work"' EXIT

fail() {
	echo "FAIL: $side: $*"
	for f in "$work"/out*; do echo "== $f"; tail -c 1500 "$f" | cat -v; done
	cat "$work"/err* "$work/qmp.log" 2>/dev/null
	exit 1
}

. tests/integration/wait-output.inc.sh

# wait_for PATTERN FILE [NOT]: until FILE matches (extended regular
# expressions); fail when the VMM exits first or FILE matches NOT.
wait_for() {
	wait_output -E "$2" "$1${3:+|$3}" "$pid" $((limit - ($(date +%s) - t0))) || {
		[ $? != 124 ] || fail "no '$1' in ${limit}s"
		fail "exited before '$1'"
	}
	[ -z "${3:-}" ] || ! grep -aEq "$3" "$2" || fail "'$3' before '$1'"
}

now_ms() { date +%s%3N; }

# start NAME CMD...: the guest on stdin fifo in.NAME, console to out.NAME.
start() {
	name=$1
	shift
	mkfifo "$work/in.$name"
	: >"$work/out.$name"
	t0=$(date +%s)
	"$@" -m 256 -smp "${smp:-1}" -nographic -serial stdio -monitor none -no-reboot -net none \
		-kernel "$guest/kernel" -initrd "$guest/initrd.cpio.gz" \
		-append "$(cat tests/guest/linux/cmdline)" \
		-qmp "unix:$work/qmp.$name,server=on,wait=off" \
		<"$work/in.$name" >"$work/out.$name" 2>"$work/err.$name" &
	pid=$!
	exec 3>"$work/in.$name"
}

qmp() { # qmp SOCKET PYTHON-BODY (q: the connected client)
	PYTHONPATH=tests/integration python3 - "$1" >>"$work/qmp.log" 2>&1 <<PY
import sys, time
from qmp_client import Qmp
q = Qmp(sys.argv[1], timeout=120)
q.ok("qmp_capabilities")
$2
PY
}

counters() { grep -aoE 'CNT [0-9]+ END' "$1" | awk '{print $2}'; }

# restore NAME URI EMULATOR...: start it with -incoming URI; the counter
# must go on from $last, one by one, and the shell answer. Sets $first and
# $restore_ms (from the start to the first counter line).
restore() {
	rname=$1 uri=$2
	shift 2
	t1=$(now_ms)
	start "$rname" "$@" -incoming "${uri%%+*}"
	# defer+unix:PATH: -incoming defer, then migrate-incoming unix:PATH
	# with a thread sending the stream there; `cont` before it is refused.
	# vmm runs the loaded guest; QEMU keeps the source's run state
	# (stopped) until `cont`, which libvirt sends after `virsh restore`.
	qmp "$work/qmp.$rname" '
import socket, threading
if "'"$uri"'".startswith("defer+unix:"):
    path = "'"${uri#defer+unix:}"'"
    r = q.cmd("cont")
    assert "error" in r and "not completed" in r["error"]["desc"], r
    def send():
        for _ in range(600):
            try:
                s = socket.socket(socket.AF_UNIX)
                s.connect(path)
                break
            except OSError:
                time.sleep(0.05)
        s.sendall(open("'"$work/saved"'", "rb").read())
        s.close()
    threading.Thread(target=send, daemon=True).start()
    q.ok("migrate-incoming", uri="unix:" + path)
while q.ok("query-status")["status"] == "inmigrate":
    time.sleep(0.05)
st = q.ok("query-status")["status"]
if "'"$side"'" == "qemu" and st == "paused":
    q.ok("cont")
else:
    assert st == "running", st
m = q.ok("query-migrate")
assert m.get("status") in (None, "completed"), m
open("'"$work/load_ms"'", "w").write(str(m.get("total-time", "?")))' ||
		fail "the restored guest does not run"
	# a guest that boots again prints the demo's banner: not a resume
	wait_for "CNT [0-9]+ END" "$work/out.$rname" "^vmm demo: a shell"
	restore_ms=$(($(now_ms) - t1))
	first=$(counters "$work/out.$rname" | head -n 1)
	[ "$first" -ge "$last" ] && [ "$first" -le $((last + 2)) ] ||
		fail "the counter was at $last when saved, restarted at $first"
	wait_for "CNT $((first + 3)) END" "$work/out.$rname"
	counters "$work/out.$rname" | awk 'NR > 1 && $1 != prev + 1 { bad = 1 } { prev = $1 } END { exit bad }' ||
		fail "the restored counter jumped: $(counters "$work/out.$rname" | tr '\n' ' ')"
	echo 'echo "ANSWER $((6 * 7)) END"' >&3
	wait_for "ANSWER 42 END" "$work/out.$rname"
	echo "poweroff -f" >&3
	wait_exit "$pid" 60 || kill $pid 2>/dev/null
	wait $pid
	pid=
	exec 3>&-
	echo "migrate: $side: restored from ${uri%%:*} to running in $restore_ms ms (load $(cat "$work/load_ms") ms), went on at $first"
}

# save_stopped SIDE EMULATOR...: boot, start the counter, then stop +
# migrate "exec:cat > saved" and kill the source; sets $last.
save_stopped() {
	side=$1
	shift
	rm -f "$work"/in.* "$work"/out.* "$work"/err.* "$work/saved"
	start a "$@"
	wait_for "^vmm demo: a shell" "$work/out.a"
	echo '(i=0; while [ $i -lt 100000 ]; do i=$((i+1)); echo "CNT $i END"; sleep 0.3; done) &' >&3
	wait_for "CNT 5 END" "$work/out.a"
	t1=$(now_ms)
	qmp "$work/qmp.a" '
q.ok("stop")
q.ok("migrate", uri="exec:cat > '"$work/saved"'")
while q.ok("query-migrate")["status"] not in ("completed", "failed"):
    time.sleep(0.05)
s = q.ok("query-migrate")
assert s["status"] == "completed", s
open("'"$work/save_ms"'", "w").write(str(s.get("total-time", "?")))
assert q.ok("query-status")["status"] in ("paused", "postmigrate"), q.ok("query-status")' ||
		fail "stop + migrate"
	save_ms=$(($(now_ms) - t1))
	sleep 1 # anything printed now would be after the stop: there must be nothing
	last=$(counters "$work/out.a" | tail -n 1)
	kill $pid
	wait $pid 2>/dev/null
	exec 3>&-
	[ -s "$work/saved" ] || fail "no saved stream"
	echo "migrate: $side: stop + migrate at counter $last: $(stat -c %s "$work/saved") bytes in $save_ms ms (migration $(cat "$work/save_ms") ms)"
}

# run SIDE EMULATOR...: save_stopped, then restore through each transport.
run() {
	save_stopped "$@"
	shift
	restore b "exec:cat $work/saved" "$@"
	# vmm maps a file's pages instead of reading them (QEMU 7.2 has no file:)
	[ "$side" != vmm ] || restore c "file:$work/saved" "$@"
	[ "$side" != vmm ] || restore d "defer+unix:$work/mig.sock" "$@"
}

# run_once SIDE EMULATOR...: save_stopped, and one restore through a file.
run_once() {
	save_stopped "$@"
	shift
	restore b "file:$work/saved" "$@"
}

# live SIDE EMULATOR...: migrate a running guest (no stop) while it dirties
# memory: first a migrate at 1 MiB/s that migrate_cancel stops (the source
# keeps running, its counter goes on), then one at full speed in passes
# (MIGRATION_PASS events, more than one dirty-log sync), which stops the
# guest only for the last pass; the restored guest goes on from there.
live() {
	side=$1
	shift
	rm -f "$work"/in.* "$work"/out.* "$work"/err.* "$work/saved"
	start a "$@"
	wait_for "^vmm demo: a shell" "$work/out.a"
	echo '(i=0; while [ $i -lt 100000 ]; do i=$((i+1)); echo "CNT $i END"; sleep 0.3; done) &' >&3
	echo '(while :; do dd if=/dev/zero of=/tmp/dirt bs=1M count=16 2>/dev/null; done) &' >&3
	wait_for "CNT 5 END" "$work/out.a"
	qmp "$work/qmp.a" '
import re
def counter():
    return max(int(n) for n in re.findall(r"(?m)CNT (\d+) END", open("'"$work/out.a"'", errors="replace").read()))
q.ok("migrate-set-parameters", **{"max-bandwidth": 1 << 20})
q.ok("migrate", uri="exec:cat > /dev/null")
time.sleep(2)
assert q.ok("query-migrate")["status"] == "active", q.ok("query-migrate")
assert q.ok("query-status")["status"] == "running"
q.ok("migrate_cancel")
while q.ok("query-migrate")["status"] != "cancelled":
    time.sleep(0.05)
c = counter()
time.sleep(2)
assert q.ok("query-status")["status"] == "running" and counter() > c, "source stopped after cancel"
q.ok("migrate-set-parameters", **{"max-bandwidth": 1 << 30})
q.ok("migrate", uri="exec:cat > '"$work/saved"'")
while q.ok("query-migrate")["status"] not in ("completed", "failed"):
    time.sleep(0.05)
s = q.ok("query-migrate")
assert s["status"] == "completed", s
assert s["ram"]["dirty-sync-count"] >= 2, s
q.event("MIGRATION_PASS", 5)
q.event("MIGRATION_PASS", 5)
assert q.ok("query-status")["status"] in ("paused", "postmigrate")
open("'"$work/save_ms"'", "w").write("%s ms, %s passes, downtime %s ms" % (s.get("total-time"), s["ram"]["dirty-sync-count"], s.get("downtime")))' ||
		fail "live migrate, migrate_cancel"
	sleep 1
	last=$(counters "$work/out.a" | tail -n 1)
	kill $pid
	wait $pid 2>/dev/null
	exec 3>&-
	echo "migrate: $side: cancelled at 1 MiB/s, the source ran on; live at counter $last: $(cat "$work/save_ms")"
	restore b "exec:cat $work/saved" "$@"
}

cpu=
[ ! -d /sys/module/kvm_pvm ] || cpu="-cpu baseline"

# The virtual WLAN: the medium's runtime country travels with the device.
side=wlan
wlan="-object wlan-medium,id=m0,country=DE -device virtio-wlan-pci,medium=m0"
# shellcheck disable=SC2086
start w "$VMM" $wlan
wait_for "^vmm demo: a shell" "$work/out.w"
qmp "$work/qmp.w" '
r = q.ok("human-monitor-command", **{"command-line": "wlan_country FR"})
assert "now FR" in r, r
q.ok("stop")
q.ok("migrate", uri="exec:cat > '"$work/wlan.saved"'")
while q.ok("query-migrate").get("status") not in ("completed", "failed"):
    time.sleep(0.1)
assert q.ok("query-migrate")["status"] == "completed", q.ok("query-migrate")' ||
	fail "migrate with virtio-wlan-pci"
kill $pid; wait $pid 2>/dev/null; pid=; exec 3>&-
# shellcheck disable=SC2086
start w2 "$VMM" $wlan -incoming "exec:cat $work/wlan.saved"
qmp "$work/qmp.w2" '
while q.ok("query-status")["status"] == "inmigrate":
    time.sleep(0.05)
assert q.ok("query-status")["status"] == "running"
r = q.ok("human-monitor-command", **{"command-line": "info wlan"})
assert "country FR" in r, r' || fail "restore with virtio-wlan-pci: $(tail -n 3 "$work/qmp.log")"
kill $pid; wait $pid 2>/dev/null; pid=; exec 3>&-
echo "migrate: wlan: saved and restored with the medium's runtime country (FR)"

# shellcheck disable=SC2086
run vmm "$VMM" $cpu
# shellcheck disable=SC2086
live vmm-live "$VMM" $cpu
# q35: MCH (ECAM), ICH9 LPC (PM block at PMBASE) and SMBus, ich9-ahci
# shellcheck disable=SC2086
run vmm-q35 "$VMM" $cpu -M q35
# vmm's own PIC, I/O APIC and PIT (split), and its local APICs too (off),
# with a second vCPU whose APIC and run state travel as well; the off
# guest migrates live, its APIC timers running through the passes
# shellcheck disable=SC2086
run_once vmm-split "$VMM" $cpu -machine kernel_irqchip=split
smp=2
# shellcheck disable=SC2086
live vmm-off "$VMM" $cpu -machine kernel_irqchip=off
smp=1

# A truncated stream (read from a pipe, mapped from a file) and a damaged
# one: one line naming why, exit status 1.
side=bad-stream
head -c 20000 "$work/saved" >"$work/cut"
head -c $(($(stat -c %s "$work/saved") - 4096)) "$work/saved" >"$work/cut-ram"
{ printf X; tail -c +2 "$work/saved"; } >"$work/bad-magic"
n=0
for bad in "exec:cat $work/cut:truncated" "file:$work/cut-ram:truncated" \
	"file:$work/bad-magic:bad magic"; do
	n=$((n + 1))
	start "x$n" "$VMM" -incoming "${bad%:*}"
	wait $pid
	st=$?
	pid=
	exec 3>&-
	[ $st = 1 ] || fail "$bad: exit status $st"
	[ "$(wc -l <"$work/err.x$n")" = 1 ] && grep -q "${bad##*:}" "$work/err.x$n" ||
		fail "$bad: $(cat "$work/err.x$n")"
done

command -v qemu-system-x86_64 >/dev/null ||
	{ echo "FAIL: no qemu-system-x86_64 for the reference run"; exit 1; }
run qemu qemu-system-x86_64 -enable-kvm -cpu qemu64,-smap,-smep,-xsave,-popcnt -vga none
echo "migrate: ok"
