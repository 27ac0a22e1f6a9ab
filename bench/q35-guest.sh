#!/bin/sh
# q35-guest.sh — virt-install's default q35 domain as libvirt 9.0 spells it
# (tests/integration/q35-libvirt-args.inc.sh: fourteen root ports, xHCI,
# virtio-serial with the agent's port, blk, net on user networking,
# balloon, rng), make demo's Debian kernel booted directly, vmm and
# qemu-system-x86_64 -enable-kvm side by side in one run:
#   boot   exec to the demo shell (Debian's kernel, its modules loaded,
#          DHCP done), seconds;
#   rss    the VMM's RSS beyond guest RAM once booted (every mapping but
#          the 512 MiB one), MiB;
#   balloon  the guest first fills and frees all of its available
#          memory but 24 MiB (so that its RAM is resident on the host,
#          whichever free pages the balloon takes), then QMP balloon to
#          256 MiB: seconds until query-balloon reports 256 MiB (every
#          inflated page has been given back with MADV_DONTNEED by then),
#          and how far the host RSS of guest RAM fell, in MiB and as a
#          share of the 256 MiB inflated (goal: >= 90%).
# Prints each figure for both and vmm/QEMU. Env: VMM, TIMEOUT (s, 600).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
VMM=${VMM:-build/vmm}
limit=${TIMEOUT:-600}
[ -e /dev/kvm ] || { echo "q35-guest: needs /dev/kvm (scripts/nested-kvm/run.sh -- $0)"; exit 1; }
guest=$(sh scripts/demo/image.sh) || exit 1
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$work"' EXIT
truncate -s 64M "$work/disk.img"
side=
. tests/integration/demo-guest.inc.sh
. tests/integration/q35-libvirt-args.inc.sh

# kib WHICH: RSS in KiB of guest RAM (ram) or of everything else (rest).
kib() {
	awk -v which="$1" '/^Size:/ { size = $2 } /^Rss:/ { if ((size >= 524288) == (which == "ram")) sum += $2 }
		END { print sum + 0 }' "/proc/$pid/smaps"
}

now() { date +%s.%N; }

run() {
	side=$1
	shift
	rm -f "$work/in" "$work/out" "$work/err" "$work/ga.sock" "$work/qmp"
	mkfifo "$work/in"
	t0=$(date +%s)
	start=$(now)
	"$@" -nographic -serial stdio -monitor none -no-reboot -qmp "unix:$work/qmp,server=on,wait=off" \
		-kernel "$guest/kernel" -initrd "$guest/initrd.cpio.gz" \
		-append "$(cat tests/guest/linux/cmdline)" \
		<"$work/in" >"$work/out" 2>"$work/err" &
	pid=$!
	exec 3>"$work/in"
	wait_for "^vmm demo: a shell"
	boot=$(echo "$(now) - $start" | bc)
	sleep 2
	rest=$(kib rest)
	fill=$(ask AVAIL "awk '/^MemAvailable:/ { print int(\$2 / 1024) - 24 }' /proc/meminfo")
	# a tmpfs of its own: /tmp's default size (half of RAM) would stop the fill
	ask FILLED "mkdir -p /fill && mount -t tmpfs -o size=100% fill /fill && dd if=/dev/zero of=/fill/f bs=1M count=$fill 2>/dev/null; du -m /fill/f | cut -f1; rm /fill/f; umount /fill" >"$work/filled"
	[ "$(cat "$work/filled")" -ge "$fill" ] || fail "the guest filled only $(cat "$work/filled") of $fill MiB"
	before=$(kib ram)
	# balloon to 256 MiB; until query-balloon says the guest gave all of
	# it: the seconds and how far the host RSS of guest RAM fell
	set -- $(PYTHONPATH=tests/integration python3 - "$work/qmp" "$pid" "$before" <<'PY'
import sys, time
from qmp_client import Qmp

def ram_kib(pid):
    size, total = 0, 0
    for line in open("/proc/%s/smaps" % pid):
        if line.startswith("Size:"):
            size = int(line.split()[1])
        elif line.startswith("Rss:") and size >= 524288:
            total += int(line.split()[1])
    return total

q = Qmp(sys.argv[1])
q.cmd("qmp_capabilities")
t0 = time.time()
r = q.cmd("balloon", value=256 << 20)
if "error" in r:
    sys.exit("balloon: %s" % r)
while q.cmd("query-balloon")["return"]["actual"] > 256 << 20:
    if time.time() - t0 > 120:
        sys.exit("the balloon never reached 256 MiB")
    time.sleep(0.02)
print("%.2f %d" % (time.time() - t0, int(sys.argv[3]) - ram_kib(sys.argv[2])))
PY
) || fail "QMP balloon"
	balloon=$1 fell=$2
	echo "$side: boot ${boot} s, RSS beyond guest RAM $(echo "scale=1; $rest / 1024" | bc) MiB," \
		"filled $fill MiB, balloon of 256 MiB inflated in ${balloon} s, host RSS of guest RAM" \
		"$((fell / 1024)) MiB lower ($((fell * 100 / 262144))% of it)"
	echo "$boot $rest $balloon $((fell * 100 / 262144))" >"$work/$side.fig"
	printf 'poweroff -f\n' >&3
	exec 3>&-
	wait $pid 2>/dev/null
	pid=
}

cpu=
[ ! -d /sys/module/kvm_pvm ] || cpu="-cpu baseline"
# shellcheck disable=SC2086
run vmm "$VMM" $cpu "$@"
run qemu qemu-system-x86_64 -enable-kvm "$@"
read -r vb vr vt vp <"$work/vmm.fig"
read -r qb qr qt qp <"$work/qemu.fig"
echo "q35 boot to the shell: vmm/QEMU $(echo "scale=2; $vb / $qb" | bc) (goal <= 0.8)"
echo "RSS beyond guest RAM: vmm $(echo "scale=1; $vr / 1024" | bc) MiB, QEMU $(echo "scale=1; $qr / 1024" | bc) MiB," \
	"vmm/QEMU $(echo "scale=2; $vr / $qr" | bc) (goal: vmm <= 8 MiB)"
echo "balloon to 256 MiB: vmm/QEMU $(echo "scale=2; $vt / $qt" | bc) (goal: vmm <= 1 s)," \
	"host RSS of guest RAM lower by vmm $vp%, QEMU $qp% of it (goal: >= 90%)"
