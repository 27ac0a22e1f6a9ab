# core-exit-lib.sh — shared by bench/core-pio.sh and bench/core-mmio.sh:
# cost per VM exit of one kind, build/vmm vs a raw KVM_RUN loop
# (build/raw-kvm-loop) vs qemu-system-x86_64 -enable-kvm, side by side.
#
# All three run the same ring-3 loop of N exiting instructions and time it
# with rdtsc inside the guest (the payloads print "done N exits in C tsc
# cycles", raw-kvm-loop reads the guest's count back), so start-up, which
# is noisy and for QEMU seconds long, is not part of the figure. The raw
# loop also times itself on the host, which gives the TSC rate for the µs
# figures. The sides alternate within a round, in the opposite order each
# round (the host is shared and drifts); each figure is the median over
# ROUNDS rounds, and the ratios are medians of the per-round ratios; a
# second line compares the fastest round of each side, a third the CPU
# time per exit of vmm and the raw loop.
#
# Set KIND (pio|mmio) and PAYLOAD, then call core_exit_bench N ROUNDS.
set -u
VMM=${VMM:-build/vmm}
B=${B:-build}
RAW=${RAW:-$B/raw-kvm-loop}
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
command -v qemu-system-x86_64 >/dev/null || { echo "skipped: no qemu-system-x86_64"; exit 77; }
[ -x "$RAW" ] || { echo "FAIL: $RAW not built"; exit 1; }
[ -f "$PAYLOAD" ] || { echo "FAIL: $PAYLOAD not built"; exit 1; }

# guest_cycles N CMD...: the payload's TSC cycles for its N exits; the
# run must exit with status 1.
guest_cycles() {
	n=$1
	shift
	out=$(timeout 300 "$@" -m 64 -nographic -device isa-debug-exit,iobase=0xf4,iosize=4 \
		-kernel "$PAYLOAD" -append "n=$n" </dev/null 2>/dev/null)
	rc=$?
	c=$(echo "$out" | sed -n "s/.*: done $n exits in \([0-9]*\) tsc cycles.*/\1/p")
	[ $rc -eq 1 ] && [ -n "$c" ] || { echo "bad run ($rc): $* n=$n" >&2; return 1; }
	echo "$c"
}

# raw_run N: "CYCLES HOST_NS" of the raw loop.
raw_run() {
	out=$("$RAW" "$KIND" "$1") || { echo "bad run: $RAW $KIND $1" >&2; return 1; }
	echo "$out" | sed -n 's/.* in \([0-9.]*\) ms .*, \([0-9]*\) tsc cycles.*/\2 \1/p'
}

# cpu_s CMD...: user + system CPU seconds of one run (GNU time); the
# command's own output is dropped.
cpu_s() {
	/usr/bin/time -f '%U %S' -o "$cpu_file" "$@" >/dev/null 2>&1 </dev/null
	awk 'END { print $1 + $2 }' "$cpu_file"
}

vmm_cpu_s() {
	cpu_s "$VMM" -m 64 -nographic -device isa-debug-exit,iobase=0xf4,iosize=4 \
		-kernel "$PAYLOAD" -append "n=$1"
}

# cpu_per_exit N ROUNDS: CPU time per exit, (cpu(N) - cpu(0)) / N, of vmm
# and of the raw loop. Waiting for a CPU on the shared host is not in it,
# so it is the steadier figure; QEMU is left out (its start-up CPU is
# seconds and varies more than the loop costs).
cpu_per_exit() {
	n=$1 rounds=$2 vc="" rc=""
	[ -x /usr/bin/time ] || { echo "no /usr/bin/time (Debian package time): no CPU-time line"; return 0; }
	cpu_file=$(mktemp)
	for r in $(seq "$rounds"); do
		v=$(awk -v a="$(vmm_cpu_s 0)" -v b="$(vmm_cpu_s "$n")" -v n="$n" 'BEGIN { print (b - a) / n * 1e6 }')
		raw=$(awk -v a="$(cpu_s "$RAW" "$KIND" 0)" -v b="$(cpu_s "$RAW" "$KIND" "$n")" -v n="$n" \
			'BEGIN { print (b - a) / n * 1e6 }')
		vc="$vc $v" rc="$rc $raw"
	done
	rm -f "$cpu_file"
	v=$(echo "$vc" | median) raw=$(echo "$rc" | median)
	awk -v v="$v" -v r="$raw" -v k="$KIND" -v n="$n" -v rounds="$rounds" 'BEGIN {
		printf "%s exit CPU time (user+sys, n=%d minus n=0, median of %d): vmm %.2f us, raw %.2f us; vmm/raw = %.3f\n",
			k, n, rounds, v, r, (r > 0 ? v / r : 0) }'
}

median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
minimum() { tr ' ' '\n' | grep . | sort -g | head -n 1; }

core_exit_bench() {
	n=$1 rounds=$2
	vs="" rs="" qs="" vr="" vq="" hz=""
	for r in $(seq "$rounds"); do
		if [ $((r % 2)) -eq 1 ]; then
			v=$(guest_cycles "$n" "$VMM") && raw=$(raw_run "$n") &&
				q=$(guest_cycles "$n" qemu-system-x86_64 -enable-kvm) || exit 1
		else
			q=$(guest_cycles "$n" qemu-system-x86_64 -enable-kvm) && raw=$(raw_run "$n") &&
				v=$(guest_cycles "$n" "$VMM") || exit 1
		fi
		line=$(echo "$v $raw $q" | awk -v n="$n" -v k="$KIND" -v r="$r" '{
			hz = $2 / ($3 * 1000)   # raw: guest cycles / host µs (ms * 1000)
			printf "round %d: vmm %.2f us, raw %.2f us, qemu %.2f us per %s exit; vmm/raw %.3f, vmm/qemu %.3f|%f %f %f %f %f %f\n",
				r, $1 / n / hz, $2 / n / hz, $4 / n / hz, k, $1 / $2, $1 / $4,
				$1 / n / hz, $2 / n / hz, $4 / n / hz, $1 / $2, $1 / $4, hz }')
		echo "${line%%|*}"
		set -- ${line#*|}
		vs="$vs $1" rs="$rs $2" qs="$qs $3" vr="$vr $4" vq="$vq $5" hz="$hz $6"
	done
	echo "$KIND exit, n=$n, median of $rounds rounds (TSC $(echo "$hz" | median | awk '{ printf "%.0f", $1 }') MHz):" \
		"vmm $(echo "$vs" | median | awk '{ printf "%.2f", $1 }') us," \
		"raw KVM_RUN loop $(echo "$rs" | median | awk '{ printf "%.2f", $1 }') us," \
		"qemu $(echo "$qs" | median | awk '{ printf "%.2f", $1 }') us;" \
		"vmm/raw = $(echo "$vr" | median | awk '{ printf "%.3f", $1 }')," \
		"vmm/qemu = $(echo "$vq" | median | awk '{ printf "%.3f", $1 }')"
	# The least disturbed run of each side: what an exit costs when the
	# shared host leaves it alone.
	echo "$KIND exit, fastest round of each:" \
		"vmm $(echo "$vs" | minimum | awk '{ printf "%.2f", $1 }') us," \
		"raw $(echo "$rs" | minimum | awk '{ printf "%.2f", $1 }') us," \
		"qemu $(echo "$qs" | minimum | awk '{ printf "%.2f", $1 }') us;" \
		"vmm/raw = $(awk -v a="$(echo "$vs" | minimum)" -v b="$(echo "$rs" | minimum)" 'BEGIN { printf "%.3f", a / b }')," \
		"vmm/qemu = $(awk -v a="$(echo "$vs" | minimum)" -v b="$(echo "$qs" | minimum)" 'BEGIN { printf "%.3f", a / b }')"
	cpu_per_exit "$n" "$(( rounds < 5 ? rounds : 5 ))"
}
