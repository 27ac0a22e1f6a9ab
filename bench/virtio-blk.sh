#!/bin/sh
# virtio-blk.sh [MB] [IOS] [ROUNDS] — virtio-blk throughput, build/vmm vs
# qemu-system-x86_64 -enable-kvm, side by side, the same kit payload
# (tests/guest/virtio-blk-bench.c) and the same disk and cache mode
# (CACHE, default none = O_DIRECT on both) and, when AIO is set
# (io_uring or threads), the same aio= mode on both (else each one's
# default):
#
#   seq-write, seq-read   MB MiB (default 128) in 1 MiB requests, 4 in flight
#   rand-read-qd1/qd32    IOS (default 4000) 4 KiB random reads
#   rand-write-qd1/qd32   IOS 4 KiB random writes
#
# FORMAT=qcow2 (default raw): the disk is a qcow2 image made by qemu-img
# (64 KiB clusters, QEMU's default), fresh for each run, so both sides
# allocate the same clusters in the write phases and read the same mix of
# allocated and unallocated clusters. FORMAT=overlay: a fresh qcow2 overlay
# (64 KiB clusters) of the allocated raw disk for each run, as a cloud
# image's: reads of clusters the run did not write come from the backing
# file, and each 4 KiB write into a new cluster copies the rest from it.
#
# The payload times each phase with rdtsc (TSC rate from the PIT), so boot
# is not in the figures. The sides alternate within a round, in the
# opposite order each round; figures are medians over ROUNDS (default 3),
# ratios vmm/QEMU of the medians (> 1: vmm faster). Goal: >= 1.2.
#
# Exits to userspace per request: each side runs once per phase under
# `strace -f -e trace=ioctl`, and the KVM_RUN calls of that run minus those
# of a run that only initialises the device (only=9), divided by the
# requests, are the figure (every return of KVM_RUN to the VMM is one exit
# to userspace, whatever its reason; strace slows the runs but not the
# count).
set -u
B=${B:-build}
VMM=${VMM:-$B/vmm}
PAYLOAD=$B/tests/guest/virtio-blk-bench.elf
CACHE=${CACHE:-none}
AIO=${AIO:-}
FORMAT=${FORMAT:-raw}
case $FORMAT in raw | qcow2 | overlay) ;; *) echo "FORMAT must be raw, qcow2 or overlay"; exit 2 ;; esac
MB=${1:-128} IOS=${2:-4000} ROUNDS=${3:-3}
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
command -v qemu-system-x86_64 >/dev/null || { echo "skipped: no qemu-system-x86_64"; exit 77; }
command -v strace >/dev/null || { echo "skipped: no strace"; exit 77; }
[ -f "$PAYLOAD" ] || { echo "FAIL: $PAYLOAD not built"; exit 1; }
# The disk: allocated (not sparse), on the build tree's file system, not
# a tmpfs (O_DIRECT).
img=$(mktemp "${BENCH_DIR:-$B}/virtio-blk-bench.XXXXXX")
tmp=$(mktemp -d)
trap 'rm -rf "$img" "$img.ov" "$tmp"' EXIT
# what the VMMs open: the disk, or its overlay
disk=$img fmt=$FORMAT
[ "$FORMAT" = overlay ] && disk=$img.ov fmt=qcow2
dd if=/dev/zero of="$img" bs=1M count=256 status=none || exit 1
# fresh_image: before each run, a new qcow2 image of the same size (raw:
# the allocated file stays).
fresh_image() {
	case $FORMAT in
	raw) return 0 ;;
	overlay) rm -f "$disk" && qemu-img create -q -f qcow2 -b "${img##*/}" -F raw "$disk" ;;
	*) rm -f "$img" && qemu-img create -q -f qcow2 "$img" 256M ;;
	esac
}
# cache=none is O_DIRECT, which 9p and tmpfs (the nested runner's shares)
# refuse: measure with the page cache there, and say so.
if [ "$CACHE" = none ] || [ "$CACHE" = directsync ]; then
	if ! dd if="$img" of=/dev/null bs=1M count=1 iflag=direct status=none 2>/dev/null; then
		echo "note: no O_DIRECT on the file system of $img: cache=writeback instead of $CACHE"
		CACHE=writeback
	fi
fi

# side_vmm|side_qemu APPEND [PREFIX...]: one run, PREFIX (timeout, strace)
# in front of the command.
side_vmm() {
	a=$1
	shift
	"$@" "$VMM" -m 64 -nographic -device isa-debug-exit,iobase=0xf4,iosize=4 \
		-drive "file=$disk,if=none,id=d0,format=$fmt,cache=$CACHE${AIO:+,aio=$AIO}" \
		-device virtio-blk-pci,drive=d0 -kernel "$PAYLOAD" -append "$a"
}

side_qemu() {
	a=$1
	shift
	"$@" qemu-system-x86_64 -enable-kvm -m 64 -nographic \
		-device isa-debug-exit,iobase=0xf4,iosize=4 \
		-drive "file=$disk,if=none,id=d0,format=$fmt,cache=$CACHE${AIO:+,aio=$AIO}" \
		-device virtio-blk-pci,drive=d0 -kernel "$PAYLOAD" -append "$a"
}

# run SIDE APPEND OUT [PREFIX...]: one run, status 1 required.
run() {
	side=$1 append=$2 out=$3
	shift 3
	fresh_image || return 1
	"side_$side" "$append" timeout 600 "$@" >"$out" 2>"$out.err" </dev/null
	rc=$?
	[ $rc -eq 1 ] && return 0
	echo "bad run of $side ($rc): $append" >&2
	tail -n 5 "$out" "$out.err" >&2
	return 1
}

# field OUT PHASE KEY: KEY=value of PHASE's line.
field() {
	sed -n "s/^vblk-bench: $2 .* $3=\([0-9]*\).*/\1/p" "$1" | tail -n 1
}

median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print 0 }'
}

phases="seq-write seq-read rand-read-qd1 rand-read-qd32 rand-write-qd1 rand-write-qd32"
metric() { case $1 in seq-*) echo mbps ;; *) echo iops ;; esac; }

if ! run vmm "mb=1 ios=1" "$tmp/probe"; then
	echo "vmm cannot run the payload with a virtio-blk-pci disk: measuring QEMU only"
	sides=qemu
else
	sides="vmm qemu"
fi

r=1
while [ $r -le "$ROUNDS" ]; do
	order=$sides
	[ $((r % 2)) -eq 0 ] && [ "$sides" = "vmm qemu" ] && order="qemu vmm"
	for s in $order; do
		run "$s" "mb=$MB ios=$IOS" "$tmp/out" || exit 1
		for p in $phases; do
			field "$tmp/out" "$p" "$(metric "$p")" >>"$tmp/$s.$p"
		done
	done
	r=$((r + 1))
done

# exits SIDE PHASE_NUMBER: KVM_RUN calls per request of that phase alone.
kvm_runs() {
	run "$1" "$2" "$tmp/x.out" strace -f -qq -e trace=ioctl -e signal=none -o "$tmp/trace" ||
		return 1
	grep -c 'KVM_RUN' "$tmp/trace"
}
# The baseline (boot, TSC calibration, device set-up; ~6500 KVM_RUNs under
# QEMU, +-30 from run to run) is the median of three runs; the phases run
# 1024 MiB or 4000 requests, so that noise is < 0.1 exits per request.
base_runs() {
	for i in 1 2 3; do kvm_runs "$1" "only=9" || return 1; done | median
}
exits_per_request() {
	case $2 in
	1 | 2) n=1024 args="mb=1024" ;;
	*) n=4000 args="ios=4000" ;;
	esac
	all=$(kvm_runs "$1" "$args only=$2") || return 1
	awk -v a="$all" -v b="$3" -v n="$n" 'BEGIN { printf "%.2f", (a - b) / n }'
}

qbase=$(base_runs qemu) || exit 1
[ "$sides" = "vmm qemu" ] && { vbase=$(base_runs vmm) || exit 1; }
printf '%-16s %12s %12s %8s   %s\n' phase vmm QEMU ratio "exits/request vmm, QEMU"
i=1
for p in $phases; do
	u=$(metric "$p")
	q=$(median <"$tmp/qemu.$p")
	qx=$(exits_per_request qemu $i "$qbase")
	if [ "$sides" = "vmm qemu" ]; then
		v=$(median <"$tmp/vmm.$p")
		vx=$(exits_per_request vmm $i "$vbase")
		ratio=$(awk -v v="$v" -v q="$q" 'BEGIN { printf "%.2f", q ? v / q : 0 }')
	else
		v=- vx=- ratio=-
	fi
	printf '%-16s %8s %-4s %8s %-4s %7s   %s, %s\n' "$p" "$v" "$u" "$q" "$u" "$ratio" "$vx" "$qx"
	i=$((i + 1))
done
echo "($ROUNDS rounds, medians; format=$FORMAT cache=$CACHE${AIO:+ aio=$AIO}; MB=$MB IOS=$IOS)"
