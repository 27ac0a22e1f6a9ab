# core-exit-lib.sh — shared by bench/core-pio.sh and bench/core-mmio.sh:
# cost per VM exit of one kind, build/vmm vs a raw KVM_RUN loop
# (build/raw-kvm-loop) vs qemu-system-x86_64 -enable-kvm, side by side.
#
# Each side runs with n=N and n=0 and (t(N) - t(0)) / N of the process's
# wall time is its cost per exit, so start-up is cancelled out the same way
# for all three. The sides alternate within a round (the host is noisy and
# drifts); the figure per side is the median over ROUNDS rounds.
#
# Set KIND (pio|mmio) and PAYLOAD, then call core_exit_bench N ROUNDS.
set -u
VMM=${VMM:-build/vmm}
B=${B:-build}
RAW=${RAW:-$B/raw-kvm-loop}
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
command -v qemu-system-x86_64 >/dev/null || { echo "skipped: no qemu-system-x86_64"; exit 77; }
[ -x "$RAW" ] || { echo "FAIL: $RAW not built"; exit 1; }

now_ns() { date +%s%N; }

# guest_ns N CMD...: wall time of one payload run; it must exit with 1.
guest_ns() {
	n=$1
	shift
	t0=$(now_ns)
	timeout 300 "$@" -m 64 -nographic -device isa-debug-exit,iobase=0xf4,iosize=4 \
		-kernel "$PAYLOAD" -append "n=$n" </dev/null >/dev/null 2>&1
	rc=$?
	t1=$(now_ns)
	[ $rc -eq 1 ] || { echo "bad run ($rc): $* n=$n" >&2; return 1; }
	echo $((t1 - t0))
}

raw_ns() {
	t0=$(now_ns)
	"$RAW" "$KIND" "$1" >/dev/null || { echo "bad run: $RAW $KIND $1" >&2; return 1; }
	t1=$(now_ns)
	echo $((t1 - t0))
}

# per_exit_us T0 TN N
per_exit_us() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { printf "%.2f", (b - a) / n / 1000 }'; }

median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

core_exit_bench() {
	n=$1 rounds=$2
	vs="" rs="" qs=""
	for r in $(seq "$rounds"); do
		v0=$(guest_ns 0 "$VMM") && vn=$(guest_ns "$n" "$VMM") || exit 1
		r0=$(raw_ns 0) && rn=$(raw_ns "$n") || exit 1
		q0=$(guest_ns 0 qemu-system-x86_64 -enable-kvm) &&
			qn=$(guest_ns "$n" qemu-system-x86_64 -enable-kvm) || exit 1
		v=$(per_exit_us "$v0" "$vn" "$n") raw=$(per_exit_us "$r0" "$rn" "$n")
		q=$(per_exit_us "$q0" "$qn" "$n")
		echo "round $r: vmm $v us, raw $raw us, qemu $q us per $KIND exit"
		vs="$vs $v" rs="$rs $raw" qs="$qs $q"
	done
	v=$(echo "$vs" | median) raw=$(echo "$rs" | median) q=$(echo "$qs" | median)
	awk -v v="$v" -v r="$raw" -v q="$q" -v n="$n" -v k="$KIND" -v rounds="$rounds" 'BEGIN {
		printf "%s exit (n=%d minus n=0, median of %d rounds): vmm %.2f us, raw KVM_RUN loop %.2f us, qemu %.2f us; vmm/raw = %.3f, vmm/qemu = %.3f\n",
			k, n, rounds, v, r, q, (r > 0 ? v / r : 0), (q > 0 ? v / q : 0) }'
}
