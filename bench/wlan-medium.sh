#!/bin/sh
# wlan-medium: the radio medium's cost (issue 16). Goals: verdict <= 50 ns,
# regulatory enforcement <= 2 % of frame throughput.
#  1. build/wlan-bench (bench/wlan-bench.c): frames/s through the medium
#     alone with enforcement on vs off, ns per cached verdict vs a bare
#     regdb_verdict;
#  2. the kit payload (tests/guest/wlan.c, bench=N) end to end through
#     virtio-wlan-pci: N unicast frames, each delivered and acknowledged,
#     with `-object wlan-medium,...,enforce=on` vs `enforce=off`, the two
#     alternating run by run (RUNS, default 5); medians compared.
set -eu
B=${B:-build}
VMM=${VMM:-$B/vmm}
RUNS=${RUNS:-5}
FRAMES=${FRAMES:-50000}
"$B/wlan-bench"
if [ ! -e /dev/kvm ]; then
	echo "kit payload: skipped (no /dev/kvm)"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wlan-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
one() { # enforce -> microseconds for FRAMES frames
	timeout 300 "$VMM" -m 64 -nographic -device isa-debug-exit,iobase=0xf4,iosize=4 \
		-object "wlan-medium,id=m0,country=DE,enforce=$1" -device virtio-wlan-pci,medium=m0 \
		-kernel "$B/tests/guest/wlan.elf" -append "bench=$FRAMES" </dev/null 2>&1 |
		sed -n 's/^wlan-bench: [0-9]* frames in \([0-9]*\) us.*/\1/p'
}
for i in $(seq "$RUNS"); do
	if [ $((i % 2)) = 1 ]; then on=$(one on); off=$(one off); else off=$(one off); on=$(one on); fi
	[ -n "$on" ] && [ -n "$off" ] || { echo "kit payload: a run failed"; exit 1; }
	echo "$on" >>"$tmp/on"
	echo "$off" >>"$tmp/off"
done
med() { sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
on=$(med "$tmp/on") off=$(med "$tmp/off")
awk -v on="$on" -v off="$off" -v n="$FRAMES" -v runs="$RUNS" 'BEGIN {
	printf "kit frames/s enforcement on   %.0f\n", n / (on / 1e6)
	printf "kit frames/s enforcement off  %.0f\n", n / (off / 1e6)
	printf "kit enforcement cost          %.2f %% (goal <= 2 %%), medians of %d runs of %d frames\n",
		(on - off) / off * 100, runs, n
}'
