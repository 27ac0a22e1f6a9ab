#!/bin/sh
# virtio-blk-qcow2-chain.sh — a cloud image's layout read and written by
# Linux's own virtio_blk driver (make demo's Debian kernel and modules,
# booted directly): the disk is a qcow2 overlay (64 KiB clusters) over a
# qcow2 (4 KiB clusters) over a raw file whose size is not a multiple of
# 512, with data, zero and compressed clusters at each level, so that
# reads come in pieces from three files and from zeroes (the io_uring
# engine's backing-chain reads). In the guest:
#   - the whole disk read with O_DIRECT in 1 MiB requests, and through
#     the page cache (readahead: several requests in flight);
#   - four readers at once, each a quarter in 4 KiB O_DIRECT reads;
#   - 4 KiB blocks copied inside the disk into unallocated clusters
#     (copy-on-write of the rest of each cluster from the chain below).
# Each sha256 must be what qemu-img reads from the image on the host; after
# the power-off the overlay must pass `qemu-img check` and hold what the
# same copies give on a raw copy. QEMU (-enable-kvm) runs the same guest
# on its own copy of the images as the reference.
# needs: native ring 0 (Linux guest; scripts/nested-kvm/place.sh)
set -u
VMM=${VMM:-build/vmm}
limit=${QCOW2_CHAIN_TIMEOUT:-600}
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
for t in qemu-img qemu-io qemu-system-x86_64; do
	command -v $t >/dev/null || { echo "FAIL: $t missing (scripts/install-deps.sh check)"; exit 1; }
done
guest=$(sh scripts/demo/image.sh) || { echo "FAIL: no Debian guest image (scripts/demo/image.sh)"; exit 1; }
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$work"' EXIT

. tests/integration/demo-guest.inc.sh

# The chain, once; each side gets its own copy. Sizes: base 24 MiB - 1000
# bytes, mid 24 MiB + 64 KiB, top 24 MiB + 128 KiB (past the base: zeroes).
mkdir "$work/img"
(
	cd "$work/img" || exit 1
	head -c 25165824 /dev/urandom >base.raw && truncate -s 25164824 base.raw &&
		qemu-img create -q -f qcow2 -o cluster_size=4k -b base.raw -F raw mid.qcow2 24640k &&
		qemu-io -f qcow2 -c 'write -P 0x33 64k 8k' -c 'write -P 0x44 1000k 12k' \
			-c 'write -z 2M 64k' -c 'write -P 0x55 24568k 4k' mid.qcow2 >/dev/null &&
		qemu-img create -q -f qcow2 -o cluster_size=64k -b mid.qcow2 -F qcow2 top.qcow2 24704k &&
		qemu-io -f qcow2 -c 'write -P 0x66 0 64k' -c 'write -P 0x77 4M 192k' \
			-c 'write -z 6M 128k' -c 'write -c -P 0x88 8M 64k' top.qcow2 >/dev/null &&
		qemu-img convert -f qcow2 -O raw top.qcow2 exp.raw
) || { echo "FAIL: cannot make the qcow2 chain"; exit 1; }
blocks=$(($(stat -c %s "$work/img/exp.raw") / 4096)) # 6176
quarter=$((blocks / 4))
# block copies (from to, in 4 KiB blocks): into unallocated clusters of
# top over mid's data, base.raw, mid's zero cluster, and past base's end
copies="16 300 2000 250 256 520 1100 1540 3000 6170 1024 2049"

sha() { sha256sum | cut -c1-64; }
want_all=$(sha <"$work/img/exp.raw")
want_q=""
for i in 0 1 2 3; do
	want_q="$want_q $(dd if="$work/img/exp.raw" bs=4k skip=$((i * quarter)) count=$quarter status=none | sha)"
done
cp "$work/img/exp.raw" "$work/img/after.raw"
set -- $copies
while [ $# -ge 2 ]; do
	dd if="$work/img/exp.raw" of="$work/img/after.raw" bs=4k skip="$1" seek="$2" count=1 \
		conv=notrunc status=none
	shift 2
done

run() {
	side=$1
	shift
	d=$work/$side
	mkdir "$d" && cp "$work/img/base.raw" "$work/img/mid.qcow2" "$work/img/top.qcow2" "$d/" ||
		fail "cannot copy the images"
	rm -f "$work/in" "$work/out" "$work/err"
	mkfifo "$work/in"
	t0=$(date +%s)
	"$@" -m 256 -nographic -serial stdio -monitor none -no-reboot -net none \
		-kernel "$guest/kernel" -initrd "$guest/initrd.cpio.gz" \
		-append "$(cat tests/guest/linux/cmdline)" \
		-drive file="$d/top.qcow2",if=virtio,format=qcow2 \
		<"$work/in" >"$work/out" 2>"$work/err" &
	pid=$!
	exec 3>"$work/in"
	wait_for "^vmm demo: a shell"
	size=$(ask SIZE "cat /sys/block/vda/size")
	[ "$size" = $((blocks * 8)) ] || fail "/dev/vda has $size sectors, not $((blocks * 8))"
	got=$(ask DIRECT "dd if=/dev/vda bs=1M iflag=direct 2>/dev/null | sha256sum | cut -c1-64")
	[ "$got" = "$want_all" ] || fail "O_DIRECT 1 MiB reads give $got, qemu-img $want_all"
	got=$(ask CACHED "echo 3 >/proc/sys/vm/drop_caches; cat /dev/vda | sha256sum | cut -c1-64")
	[ "$got" = "$want_all" ] || fail "reads through the page cache give $got, qemu-img $want_all"
	got=$(ask QUARTERS "for i in 0 1 2 3; do dd if=/dev/vda bs=4k iflag=direct skip=\$((i * $quarter)) count=$quarter 2>/dev/null | sha256sum | cut -c1-64 >/tmp/q\$i & done; wait; cat /tmp/q0 /tmp/q1 /tmp/q2 /tmp/q3 | tr '\\n' ' '")
	got=$(echo $got)
	[ "$got" = "$(echo $want_q)" ] || fail "four readers at once give '$got', qemu-img '$(echo $want_q)'"
	cmd=""
	set -- $copies
	while [ $# -ge 2 ]; do
		cmd="$cmd dd if=/dev/vda of=/dev/vda bs=4k skip=$1 seek=$2 count=1 conv=notrunc iflag=direct oflag=direct 2>/dev/null &&"
		shift 2
	done
	got=$(ask COPIED "$cmd sync && echo done")
	[ "$got" = done ] || fail "the block copies failed: $got"
	power_off
	if grep -v "^vmm: guest \(read\|wrote\) unclaimed io address " "$work/err" | grep -q .; then
		fail "stderr is not empty"
	fi
	qemu-img check -q "$d/top.qcow2" || fail "qemu-img check finds the overlay damaged"
	qemu-img convert -f qcow2 -O raw "$d/top.qcow2" "$d/got.raw" || fail "qemu-img convert"
	cmp -s "$d/got.raw" "$work/img/after.raw" ||
		fail "the overlay does not hold what the block copies give on a raw copy: $(cmp "$d/got.raw" "$work/img/after.raw" | head -1)"
	cmp -s "$d/base.raw" "$work/img/base.raw" && cmp -s "$d/mid.qcow2" "$work/img/mid.qcow2" ||
		fail "a backing file changed"
	echo "virtio-blk-qcow2-chain: $side ok in $(($(date +%s) - t0)) s"
}

run qemu qemu-system-x86_64 -enable-kvm
run vmm "$VMM"
echo "virtio-blk-qcow2-chain: ok"
