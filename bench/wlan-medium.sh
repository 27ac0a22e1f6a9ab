#!/bin/sh
# wlan-medium: the radio medium's cost. Goals: verdict <= 50 ns,
# regulatory enforcement <= 2 % of frame throughput.
#  1. build/wlan-bench (bench/wlan-bench.c): frames/s through the medium
#     alone with enforcement on vs off, ns per cached verdict vs a bare
#     regdb_verdict;
#  2. the kit payload (tests/guest/wlan.c, bench=N) end to end through
#     virtio-wlan-pci: N unicast frames, each delivered and acknowledged,
#     with `-object wlan-medium,...,enforce=on` vs `enforce=off`, the two
#     alternating run by run (RUNS, default 5); medians compared.
#  3. instructions per frame through the medium alone, on vs off, counted
#     by callgrind (repeatable where seconds are noise; needs valgrind).
set -eu
B=${B:-build}
VMM=${VMM:-$B/vmm}
RUNS=${RUNS:-5}
FRAMES=${FRAMES:-50000}
"$B/wlan-bench"
# Instructions per frame through the medium, on vs off: callgrind counts
# only push_frames (the loop), at N and 2N frames so that the set-up and
# the cache's first misses cancel out. Repeatable on a noisy host.
if command -v valgrind >/dev/null; then
	ir() { # enforce frames -> instructions in the loop
		valgrind --tool=callgrind --toggle-collect=push_frames \
			--callgrind-out-file=/dev/null "$B/wlan-bench" --frames "$1" "$2" 2>&1 |
			sed -n 's/^==[0-9]*== Collected : \([0-9]*\)/\1/p'
	}
	on1=$(ir on 20000) on2=$(ir on 40000) off1=$(ir off 20000) off2=$(ir off 40000)
	[ -n "$on1" ] && [ -n "$on2" ] && [ -n "$off1" ] && [ -n "$off2" ] ||
		{ echo "instructions per frame: a callgrind run failed"; exit 1; }
	awk -v on1="$on1" -v on2="$on2" -v off1="$off1" -v off2="$off2" 'BEGIN {
		on = (on2 - on1) / 20000; off = (off2 - off1) / 20000
		printf "instructions per frame, enforcement on   %.1f\n", on
		printf "instructions per frame, enforcement off  %.1f\n", off
		printf "enforcement cost (instructions)          %.2f %% (goal <= 2 %%)\n",
			(on - off) / off * 100
	}'
else
	echo "instructions per frame: skipped (no valgrind)"
fi
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
