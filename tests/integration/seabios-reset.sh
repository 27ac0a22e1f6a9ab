#!/bin/sh
# seabios-reset.sh — every way a PC resets runs pristine SeaBIOS again:
# tests/images/reboot-mbr.S counts its boots on its own disk and resets
# through 0xcf9, port 0x92 and the i8042, then waits for the monitor's
# system_reset; boot 5 exits with status 33. Each boot must print the
# SeaBIOS banner (the ROM, not a stale shadow copy, ran) and reach the
# boot sector; the disk must hold the count 5. With -no-reboot the first
# reset ends vmm with status 0.
set -u
VMM=${VMM:-build/vmm}
[ -e /dev/kvm ] || { echo "SKIP: no /dev/kvm"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
as --32 -o "$work/r.o" tests/images/reboot-mbr.S &&
	ld -m elf_i386 -Ttext 0x7c00 --oformat binary -o "$work/r.bin" "$work/r.o" || exit 1
mkimg() {
	dd if=/dev/zero of="$1" bs=1M count=4 status=none &&
		dd if="$work/r.bin" of="$1" conv=notrunc status=none
}
fail=0
mkimg "$work/disk.img" || exit 1
sock=$work/mon.sock
timeout 120 "$VMM" -m 512 -nographic -device isa-debug-exit,iobase=0xf4,iosize=4 \
	-monitor unix:"$sock",server,nowait -hda "$work/disk.img" \
	</dev/null >"$work/out" 2>"$work/err" &
pid=$!
# after "boot 4" the guest halts: reset it from the monitor
python3 - "$sock" "$work/out" <<'PY' || fail=1
import socket, sys, time
sock, out = sys.argv[1], sys.argv[2]
deadline = time.time() + 100
while b"oot 4" not in open(out, "rb").read():
    if time.time() > deadline:
        sys.exit("FAIL: boot 4 never printed")
    time.sleep(0.2)
s = socket.socket(socket.AF_UNIX)
s.connect(sock)
s.settimeout(10)
buf = b""
while b"(vmm) " not in buf:
    buf += s.recv(4096)
# the exit counters saw each reset request once
s.sendall(b"info exits\n")
buf = buf.partition(b"(vmm) ")[2]
while b"(vmm) " not in buf:
    buf += s.recv(4096)
out = buf.partition(b"(vmm) ")[0].decode()
buf = b""
rows = {tuple(l.split()[:3]): l.split()[3] for l in out.splitlines() if l.startswith("  io")}
for port in ("0xcf9", "0x64"):
    if rows.get(("io", port, "write"), "0") == "0":
        sys.exit("FAIL: info exits has no write to %s:\n%s" % (port, out))
if "exits by address" not in out or ("io", "0x92", "write") not in rows:
    sys.exit("FAIL: info exits:\n" + out)
s.sendall(b"system_reset\n")
time.sleep(0.5)
PY
wait $pid
rc=$?
banners=$(grep -c "SeaBIOS (version" "$work/out")
if [ $rc -ne 33 ] || [ "$banners" -ne 5 ] || ! grep -q "oot 5" "$work/out"; then
	echo "FAIL: exit $rc, $banners SeaBIOS banners (want 33 and 5)"
	cat -v "$work/out"; cat "$work/err"; fail=1
fi
count=$(od -An -tu1 -j512 -N1 "$work/disk.img" | tr -d ' ')
[ "$count" = 5 ] || { echo "FAIL: the disk counted $count boots, want 5"; fail=1; }

# -no-reboot: the first reset (0xcf9) exits with status 0
mkimg "$work/once.img" || exit 1
timeout 60 "$VMM" -m 512 -nographic -no-reboot -device isa-debug-exit,iobase=0xf4,iosize=4 \
	-hda "$work/once.img" </dev/null >"$work/out1" 2>&1
rc=$?
if [ $rc -ne 0 ] || ! grep -q "oot 1" "$work/out1" || grep -q "oot 2" "$work/out1"; then
	echo "FAIL: -no-reboot: exit $rc"; cat -v "$work/out1"; fail=1
fi
[ $fail -eq 0 ] && echo "seabios-reset: ok"
exit $fail
