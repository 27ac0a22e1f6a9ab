#!/bin/sh
# qcow2-write.sh [ROUNDS] [COUNT] — vmm's block layer on a qcow2 image
# (build/qcow2-write, no guest) against `qemu-img bench`, side by side on
# the same file system, cache=none (CACHE=writeback: the page cache):
#
#   seq-write, seq-read   256 MiB in 1 MiB requests, 4 in flight, into a
#                         fresh image (64 KiB clusters): the writes allocate
#   4k-write, 4k-read     COUNT (default 20000) 4 KiB requests, 32 in
#                         flight, strided over the now allocated disk
#                         (1 MiB + 4 KiB apart, modulo its size)
#   cow-write             COW (default 3000) 4 KiB writes, 32 in flight,
#                         68 KiB apart into a fresh overlay (64 KiB
#                         clusters) of a 256 MiB raw file of data: each
#                         allocates a cluster and copies the other 60 KiB
#                         from the backing file
#   back-read             COUNT 4 KiB reads, 32 in flight, strided as
#                         4k-read, from a fresh overlay of that raw file
#                         (all the backing file's), its page cache
#                         dropped first
#   comp-read             COUNT 4 KiB reads, 32 in flight, strided as
#                         4k-read, from a compressed image (qemu-img
#                         convert -c, zlib, 64 KiB clusters) of 256 MiB
#                         of 7-bit random bytes, its page cache dropped
#
# Three sides: vmm serving one request at a time (what every qcow2
# request was before the io_uring engine took them), vmm through io_uring
# (QD=4 / QD=32, as virtio-blk), QEMU (-d 4 / -d 32, -i io_uring). Sides
# alternate within a round; medians over ROUNDS (default 3). The image
# lives in BENCH_DIR (default the build tree: not a tmpfs, O_DIRECT).
set -u
B=${B:-build}
ROUNDS=${1:-3} COUNT=${2:-20000} COW=${COW:-3000}
CACHE=${CACHE:-none}
[ -x "$B/qcow2-write" ] || { echo "FAIL: $B/qcow2-write not built"; exit 1; }
command -v qemu-img >/dev/null || { echo "skipped: no qemu-img"; exit 77; }
img=$(mktemp "${BENCH_DIR:-$B}/qcow2-write.XXXXXX")
out=$(mktemp)
base=$img.base ov=$img.ov comp=$img.comp
trap 'rm -f "$img" "$out" "$base" "$ov" "$comp"' EXIT
qemu-img create -q -f raw "$base" 256M &&
	qemu-io -f raw -c 'write -P 0x5a 0 256M' "$base" >/dev/null || exit 1
# what compresses as a disk's data does (about 0.65), not a constant
head -c 256M /dev/urandom | tr '\200-\377' '\000-\177' >"$comp.raw" &&
	qemu-img convert -c -f raw -O qcow2 "$comp.raw" "$comp" && rm -f "$comp.raw" || exit 1
qcache=$CACHE
[ "$CACHE" = none ] || qcache=writeback

fresh() { rm -f "$img" && qemu-img create -q -f qcow2 "$img" 256M; }
# uncache FILE: its pages out of the page cache (dd's nocache: fadvise
# DONTNEED over the whole file), so that its reads go to the disk.
uncache() { dd if="$1" iflag=nocache count=0 status=none; }
fresh_overlay() { rm -f "$ov" && qemu-img create -q -f qcow2 -b "${base##*/}" -F raw "$ov"; } # same dir

# qemu_run N SIZE ARGS: MB/s (SIZE 1: 1 MiB requests) or IOPS (4 KiB) of
# one qemu-img bench of N requests (on IMG, default the image)
qemu_run() {
	n=$1 size=$2
	shift 2
	t=$(qemu-img bench -t "$qcache" -i io_uring -f qcow2 "$@" "${IMG:-$img}" 2>&1 |
		sed -n 's/.*completed in \([0-9.]*\) seconds.*/\1/p')
	awk -v n="$n" -v s="$size" -v t="$t" 'BEGIN { printf "%.0f\n", s == 1 ? n * 1048576 / t / 1e6 : n / t }'
}

side_vmm() { # side_vmm NAME [QD_SEQ QD_RAND]
	fresh || return 1
	if [ $# -gt 1 ]; then
		CACHE=$CACHE QD=$2 "$B/qcow2-write" "$img" 256 1024
		CACHE=$CACHE QD=$3 RAND=$COUNT "$B/qcow2-write" "$img" 1 1024 | grep '^4k'
	else
		CACHE=$CACHE RAND=$COUNT "$B/qcow2-write" "$img" 256 1024
	fi | awk -v s="$1" '$1 != "flush" { print s, $1, $2 }'
	qemu-img check -q "$img" || echo "FAIL: $1 left a damaged image"
	fresh_overlay || { echo "FAIL: cannot make the overlay"; return 1; }
	if [ $# -gt 1 ]; then
		CACHE=$CACHE QD=$3 RAND=$COW STEP=69632 "$B/qcow2-write" "$ov" 0
	else
		CACHE=$CACHE RAND=$COW STEP=69632 "$B/qcow2-write" "$ov" 0
	fi | awk -v s="$1" '$1 == "4k-write" { print s, "cow-write", $2 }'
	qemu-img check -q "$ov" || echo "FAIL: $1 left a damaged overlay"
	fresh_overlay && uncache "$base" || { echo "FAIL: cannot make the overlay"; return 1; }
	if [ $# -gt 1 ]; then
		CACHE=$CACHE QD=$3 RAND=$COUNT READ_ONLY=1 "$B/qcow2-write" "$ov" 0
	else
		CACHE=$CACHE RAND=$COUNT READ_ONLY=1 "$B/qcow2-write" "$ov" 0
	fi | awk -v s="$1" '$1 == "4k-read" { print s, "back-read", $2 }'
	uncache "$comp"
	if [ $# -gt 1 ]; then
		CACHE=$CACHE QD=$3 RAND=$COUNT READ_ONLY=1 "$B/qcow2-write" "$comp" 0
	else
		CACHE=$CACHE RAND=$COUNT READ_ONLY=1 "$B/qcow2-write" "$comp" 0
	fi | awk -v s="$1" '$1 == "4k-read" { print s, "comp-read", $2 }'
}

side_qemu() {
	fresh || return 1
	echo "qemu write $(qemu_run 256 1 -w -s 1M -c 256 -d 4)"
	echo "qemu read $(qemu_run 256 1 -s 1M -c 256 -d 4)"
	echo "qemu 4k-write $(qemu_run "$COUNT" 4 -w -s 4k -S 1052672 -c "$COUNT" -d 32)"
	echo "qemu 4k-read $(qemu_run "$COUNT" 4 -s 4k -S 1052672 -c "$COUNT" -d 32)"
	fresh_overlay || { echo "FAIL: cannot make the overlay"; return 1; }
	echo "qemu cow-write $(IMG=$ov qemu_run "$COW" 4 -w -s 4k -S 69632 -c "$COW" -d 32)"
	fresh_overlay && uncache "$base" || { echo "FAIL: cannot make the overlay"; return 1; }
	echo "qemu back-read $(IMG=$ov qemu_run "$COUNT" 4 -s 4k -S 1052672 -c "$COUNT" -d 32)"
	uncache "$comp"
	echo "qemu comp-read $(IMG=$comp qemu_run "$COUNT" 4 -s 4k -S 1052672 -c "$COUNT" -d 32)"
}

r=0
while [ $r -lt "$ROUNDS" ]; do
	if [ $((r % 2)) -eq 0 ]; then
		side_vmm once; side_vmm uring 4 32; side_qemu
	else
		side_qemu; side_vmm uring 4 32; side_vmm once
	fi >>"$out"
	r=$((r + 1))
done
grep -q . "$out.err" 2>/dev/null; grep FAIL "$out" && exit 1
echo "median of $ROUNDS, cache=$CACHE: vmm one at a time | vmm io_uring | QEMU | io_uring/QEMU"
for phase in write read 4k-write 4k-read cow-write back-read comp-read; do
	med() { awk -v s="$1" -v p="$phase" '$1 == s && $2 == p { print $3 }' "$out" |
		sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : 0 }'; }
	o=$(med once) u=$(med uring) q=$(med qemu)
	unit=MB/s
	case $phase in 4k* | cow* | back* | comp*) unit=IOPS ;; esac
	echo "$phase $o $u $q $unit $(awk -v u="$u" -v q="$q" 'BEGIN { printf "%.2f", q ? u / q : 0 }')"
done
