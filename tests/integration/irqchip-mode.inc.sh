#!/bin/sh
# irqchip-mode.inc.sh MODE — the kit payloads, SMP start-up and the SeaBIOS
# disk boots under -machine kernel_irqchip=MODE (split or off): each
# existing test runs unchanged through a wrapper that adds the option
# (with MODE on, the default, they run as themselves elsewhere).
# Then the mode is shown to be in effect and interrupts to arrive:
# SeaBIOS idles in its boot sector with the PIT's IRQ 0 running, and the
# monitor sees the BIOS tick count (0x46c, incremented by the IRQ 0
# handler) advance, the userspace PIC's IRQ statistics, `info pic`,
# `info ioapic` and `info lapic` for each vCPU, and SeaBIOS's MP table
# routing ISA IRQ 0 to I/O APIC pin 0, where the PIT is.
set -u
mode=$1
B=${B:-build}
VMM=${VMM:-$B/vmm}
VMM_ASAN=${VMM_ASAN:-$B/asan/vmm}
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
command -v python3 >/dev/null || { echo "skipped: no python3"; exit 77; }
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
fails=0

# wrap NAME REAL: a vmm that always runs in this mode
wrap() {
	case $2 in /*) real=$2 ;; *) real=$PWD/$2 ;; esac
	printf '#!/bin/sh\nexec "%s" -machine kernel_irqchip=%s "$@"\n' "$real" "$mode" >"$tmp/$1"
	chmod +x "$tmp/$1"
}
wrap vmm "$VMM"
wrap vmm-asan "$VMM_ASAN"

subtests="payloads seabios-mbr seabios-int13 seabios-reset seabios-virtio core-smp"
[ "$mode" = on ] && subtests=" "
for t in ${IRQCHIP_SUBTESTS:-$subtests}; do
	if B=$B VMM=$tmp/vmm VMM_ASAN=$tmp/vmm-asan sh "tests/integration/$t.sh" >"$tmp/log" 2>&1; then
		echo "ok   $t (kernel_irqchip=$mode)"
	else
		echo "FAIL $t (kernel_irqchip=$mode):"
		tail -n 30 "$tmp/log"
		fails=$((fails + 1))
	fi
done

# irq.elf (timer, level line + EOI, IPI, NMI, CR8) ran in payloads above;
# in the userspace I/O APIC the level line must come exactly twice.
"$tmp/vmm" -m 64 -nographic -device isa-debug-exit,iobase=0xf4,iosize=4 \
	-kernel "$B/tests/guest/irq.elf" </dev/null >"$tmp/out" 2>&1
if [ "$mode" = on ]; then
	: # KVM's in-kernel I/O APIC: see irq.c (2 or 3, checked in payloads.sh)
elif grep -q '^irq: level-triggered line: 2 deliveries' "$tmp/out"; then
	echo "ok   irq.elf: level-triggered line delivered twice (EOI while asserted)"
else
	echo "FAIL irq.elf under kernel_irqchip=$mode:"
	cat "$tmp/out"
	fails=$((fails + 1))
fi

# A boot sector that enables interrupts and halts forever: SeaBIOS's
# IRQ 0 handler keeps counting at 0x46c.
cat >"$tmp/mbr.S" <<'ASM'
	.code16
	.globl _start
_start:
	sti
1:	hlt
	jmp 1b
	.org 510
	.byte 0x55, 0xaa
ASM
as --32 -o "$tmp/mbr.o" "$tmp/mbr.S" && ld -m elf_i386 -Ttext 0x7c00 --oformat binary \
	-o "$tmp/mbr.bin" "$tmp/mbr.o" || { echo "FAIL: cannot assemble the boot sector"; exit 1; }
dd if=/dev/zero of="$tmp/disk.img" bs=1M count=1 2>/dev/null
dd if="$tmp/mbr.bin" of="$tmp/disk.img" conv=notrunc 2>/dev/null
sock=$tmp/mon.sock
timeout 120 "$VMM" -machine kernel_irqchip=$mode -m 64 -smp 2 -nographic -serial none \
	-monitor unix:$sock,server,nowait -hda "$tmp/disk.img" </dev/null >"$tmp/out" 2>&1 &
pid=$!
if PYTHONPATH=tests/integration python3 - "$sock" "$mode" <<'PY'; then
import re, sys, time
from core_mon import connect, cmd
connect(sys.argv[1])
def ticks():
    out = cmd("xp /1xw 0x46c")
    return int(out.split(":")[1].split()[0], 16)
# SeaBIOS sets the count from the RTC's time of day during POST; once it
# idles in the boot sector the count must grow by ~18 a second (the PIT's
# 18.2 Hz), measured over one second
deadline = time.time() + 90
while True:
    t0 = ticks(); time.sleep(1.0); t1 = ticks()
    if 8 <= t1 - t0 <= 40 or time.time() > deadline:
        break
assert 8 <= t1 - t0 <= 40, f"BIOS ticks {t0} -> {t1} in 1 s"
out = cmd("info irq")
if sys.argv[2] == "on":
    assert "IRQ statistics not available" in out, out
else:
    assert "IRQ statistics for isa-i8259:" in out, out
    irq0 = re.search(r"^ 0: (\d+)$", out, re.M)
    assert irq0 and int(irq0.group(1)) >= t1 - t0, out
out = cmd("info pic")
m = re.search(r"pic0: irr=.. imr=(..) isr=.. hprio=\d+ irq_base=08", out)
assert m and int(m.group(1), 16) & 1 == 0, out
assert re.search(r"pic1: .* irq_base=70", out), out
out = cmd("info ioapic")
assert out.startswith("ioapic0: ver=0x11") and "  pin 23 " in out, out
for cpu in ("0", "1"):
    out = cmd("info lapic " + cpu)
    assert f"dumping local APIC state for CPU {cpu}" in out and "SPIV\t" in out, out
out = cmd("info lapic 2"); assert "Invalid CPU index" in out, out
# SeaBIOS's MP table (its guests' only one: no ACPI without a table loader)
# must route ISA IRQ 0 where the PIT is wired, I/O APIC pin 0 (fw_cfg
# IRQ0_OVERRIDE 0), as vmm's own MADT has no IRQ 0 override
import os, struct
fseg = os.path.join(os.path.dirname(sys.argv[1]), "fseg.bin")
cmd(f"pmemsave 0xf0000 0x10000 {fseg}")
f = open(fseg, "rb").read()
mp = f.find(b"_MP_")
assert mp >= 0 and mp % 16 == 0, "no MP floating pointer in the F segment"
cfg = struct.unpack_from("<I", f, mp + 4)[0] - 0xf0000
assert f[cfg:cfg + 4] == b"PCMP", f"MP config table at {cfg + 0xf0000:#x}"
count, p, isa, irq0 = struct.unpack_from("<H", f, cfg + 34)[0], cfg + 44, None, None
for _ in range(count):
    if f[p] == 0:
        p += 20
        continue
    if f[p] == 1 and f[p + 2:p + 5] == b"ISA":
        isa = f[p + 1]
    if f[p] == 3 and f[p + 4] == isa and f[p + 5] == 0:
        irq0 = f[p + 7]
    p += 8
assert irq0 == 0, f"MP table: ISA IRQ 0 -> I/O APIC pin {irq0}"
print(f"ok   timer interrupts reach the guest: {t1 - t0} BIOS ticks in 1 s, monitor views")
PY
	:
else
	echo "FAIL: timer/monitor check (kernel_irqchip=$mode)"
	cat "$tmp/out"
	fails=$((fails + 1))
fi
kill $pid 2>/dev/null
wait $pid 2>/dev/null
pid=
[ "$fails" -eq 0 ]
