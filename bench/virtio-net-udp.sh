#!/bin/sh
# virtio-net-udp.sh [COUNT] [ROUNDS] — UDP through user networking, kit
# guest -> host echo server (127.0.0.1, reached as 10.0.2.2 through NAT)
# and back, the same payload (tests/guest/virtio-net.c, bench=1) side by
# side in one run:
#
#   vmm       build/vmm -netdev user (netstack/usernet, the default)
#   vmm-slirp build/vmm -netdev user,impl=slirp (Debian's libslirp)
#   qemu      qemu-system-x86_64 -enable-kvm -netdev user (libslirp)
#
# at 64, 512 and 1472 bytes of UDP payload, COUNT datagrams (default
# 10000), 32 in flight. For each run: packets/s (echoes received over the
# wall time between the payload's two marks, read as the lines arrive)
# and the VMM's CPU per packet: user + system time of the whole process
# between the marks, minus its guest time (the vCPU running the guest is
# the guest's cost, not the VMM's), per thread from /proc/PID/task/*/stat
# (threads that ended before the second mark are missed: none do in the
# bench). Medians over
# ROUNDS (default 3); the sides alternate, in reverse order every other
# round. Ratios: vmm / QEMU of packets/s, and of packets per VMM CPU
# second (the goal: >= 3 at 1472 bytes). SIDES and SIZES pick a subset.
set -u
B=${B:-build}
VMM=${VMM:-$B/vmm}
PAYLOAD=$B/tests/guest/virtio-net.elf
ECHO=$B/net-udp-echo
COUNT=${1:-10000} ROUNDS=${2:-3}
SIZES=${SIZES:-64 512 1472}
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
command -v qemu-system-x86_64 >/dev/null || { echo "skipped: no qemu-system-x86_64"; exit 77; }
[ -f "$PAYLOAD" ] && [ -x "$ECHO" ] || { echo "FAIL: $PAYLOAD or $ECHO not built"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/virtio-net-udp.XXXXXX")
echo_pid=
trap '[ -z "$echo_pid" ] || kill $echo_pid 2>/dev/null; rm -rf "$tmp"' EXIT
"$ECHO" >"$tmp/port" &
echo_pid=$!
for _ in $(seq 50); do
	[ -s "$tmp/port" ] && break
	sleep 0.1
done
PORT=$(cat "$tmp/port")

# cmd SIDE: the command line (one word per line) for python to run.
cmd() {
	common="-m 64 -nographic -device isa-debug-exit,iobase=0xf4,iosize=4"
	case $1 in
	vmm) echo "$VMM $common -netdev user,id=n0" ;;
	vmm-slirp) echo "$VMM $common -netdev user,id=n0,impl=slirp" ;;
	qemu) echo "qemu-system-x86_64 -enable-kvm -monitor none $common -netdev user,id=n0" ;;
	esac
}

# run SIDE SIZE: "PPS CPU_US_PER_PACKET" of one run, or nothing.
run() {
	# shellcheck disable=SC2046
	python3 - "$PAYLOAD" "echo_port=$PORT bench=1 size=$2 count=$COUNT" $(cmd "$1") <<'EOF'
import os, subprocess, sys, time
payload, append, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
argv += ["-device", "virtio-net-pci,netdev=n0", "-kernel", payload, "-append", append]
tick = os.sysconf("SC_CLK_TCK")

def cpu(pid):
    # per thread: a vCPU thread's user time includes the guest's (its
    # guest time; on nested hosts the two are sampled apart, so clip)
    total = 0
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            f = open("/proc/%d/task/%s/stat" % (pid, t)).read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        utime, stime, guest = int(f[11]), int(f[12]), int(f[40])
        total += max(utime - guest, 0) + stime
    return total / tick

p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
marks, count = [], 0
for line in p.stdout:
    if "virtio-net: bench start" in line or "virtio-net: bench size" in line:
        marks.append((time.monotonic(), cpu(p.pid)))
        if "bench size" in line:
            count = int(line.split(" count ")[1].split()[0])
    if "FAIL" in line:
        sys.stderr.write(line)
p.wait()
if len(marks) == 2 and count:
    wall = marks[1][0] - marks[0][0] - 0.3  # the payload idles 300 ms after its start mark
    used = marks[1][1] - marks[0][1]
    print("%.0f %.2f" % (count / wall, used * 1e6 / count))
EOF
}

median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print 0 }'
}

sides=${SIDES:-vmm vmm-slirp qemu}
r=1
while [ "$r" -le "$ROUNDS" ]; do
	order=$sides
	[ $((r % 2)) -eq 0 ] && order="qemu vmm-slirp vmm"
	for size in $SIZES; do
		for s in $order; do
			out=$(run "$s" "$size")
			[ -n "$out" ] || { echo "bad run of $s at $size bytes" >&2; continue; }
			echo "${out% *}" >>"$tmp/$s.$size.pps"
			echo "${out#* }" >>"$tmp/$s.$size.cpu"
		done
	done
	r=$((r + 1))
done

pps_vmm=0 pps_vmm_slirp=0 pps_qemu=0 cpu_vmm=0 cpu_vmm_slirp=0 cpu_qemu=0
printf '%-6s %-10s %10s %14s %14s\n' bytes side "packets/s" "VMM CPU us/pkt" "pkts/CPU-s"
for size in $SIZES; do
	for s in $sides; do
		pps=$(median <"$tmp/$s.$size.pps" 2>/dev/null || echo 0)
		c=$(median <"$tmp/$s.$size.cpu" 2>/dev/null || echo 0)
		eff=$(awk -v c="$c" 'BEGIN { c += 0; printf "%.0f", (c > 0 ? 1e6 / c : 0) }')
		printf '%-6s %-10s %10s %14s %14s\n' "$size" "$s" "$pps" "$c" "$eff"
		eval "pps_$(echo $s | tr - _)=$pps cpu_$(echo $s | tr - _)=$c"
	done
	# shellcheck disable=SC2154
	awk -v v="$pps_vmm" -v vs="$pps_vmm_slirp" -v q="$pps_qemu" -v cv="$cpu_vmm" \
		-v cs="$cpu_vmm_slirp" -v cq="$cpu_qemu" 'BEGIN {
		printf "%-6s ratios vs QEMU: packets/s vmm %.2f, vmm-slirp %.2f; packets per VMM CPU second vmm %.2f, vmm-slirp %.2f\n",
			"", q ? v / q : 0, q ? vs / q : 0, cv ? cq / cv : 0, cs ? cq / cs : 0 }'
done
echo "($ROUNDS rounds, medians; $COUNT datagrams per run, 32 in flight)"
