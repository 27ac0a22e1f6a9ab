#!/bin/sh
# disk-durable.sh — durable disks, for IDE (-hda) and virtio-blk (if=virtio)
# under every cache= mode, with build/tests/guest/disk-flush.elf: the guest
# writes 16 sectors, flushes, prints FLUSHED, tries a write past the end and
# halts; the host kills the VMM with SIGKILL and checks:
#   - the image holds the 16 sectors (a completed write is in the file);
#   - a guest flush returned only after fdatasync on the image (strace: an
#     fdatasync before the write of FLUSHED to the console) — except with
#     cache=unsafe, which never syncs;
#   - the image was opened as the mode documents (its /proc fdinfo flags):
#     writethrough O_DSYNC, none O_DIRECT, directsync both;
#   - the write past the end was refused and the image kept its size.
set -u
B=${B:-build}
VMM=${VMM:-$B/vmm}
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
command -v strace >/dev/null || { echo "skipped: no strace (install strace)"; exit 77; }
# O_DIRECT needs a file system that has it (not tmpfs): /var/tmp
tmp=$(mktemp -d /var/tmp/disk-durable.XXXXXX)
spid=
trap '[ -n "$spid" ] && kill -9 $spid 2>/dev/null; rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
seed=0

# check_image SEED: the first 16 sectors hold disk-flush's pattern, and the
# image is still 1 MiB.
check_image() {
	python3 - "$tmp/disk.img" "$1" <<'PY'
import os, sys
path, seed = sys.argv[1], int(sys.argv[2])
data = open(path, "rb").read(16 * 512)
want = bytes(((i // 512) * 7 + i % 512 + seed) & 0xff for i in range(16 * 512))
assert data == want, "image does not hold the flushed sectors"
assert os.path.getsize(path) == 1 << 20, "image size changed: %d" % os.path.getsize(path)
PY
}

for disk in ide virtio; do
	for cache in writeback writethrough none directsync unsafe; do
		seed=$((seed + 11))
		what="$disk cache=$cache"
		dd if=/dev/zero of="$tmp/disk.img" bs=1M count=1 2>/dev/null
		if [ $disk = ide ]; then
			drive="file=$tmp/disk.img,if=ide,index=0,format=raw,cache=$cache"
		else
			# aio=threads: the flush is an fdatasync(2) strace sees; under
			# the io_uring engine (the default) it is IORING_OP_FSYNC with
			# IORING_FSYNC_DATASYNC inside io_uring_enter, out of strace's view
			drive="file=$tmp/disk.img,if=virtio,format=raw,cache=$cache,aio=threads"
		fi
		strace -f -qq --seccomp-bpf -e trace=fdatasync,write -e signal=none -o "$tmp/trace" \
			"$VMM" -m 64 -nographic -monitor none -drive "$drive" \
			-kernel "$B/tests/guest/disk-flush.elf" \
			-append "disk=$([ $disk = ide ] && echo 0 || echo 1) seed=$seed" \
			</dev/null >"$tmp/out" 2>&1 &
		spid=$!
		for _ in $(seq 1200); do
			grep -q halting "$tmp/out" && break
			sleep 0.1
		done
		vpid=$(pgrep -P $spid | head -n 1)
		flags=
		for fd in /proc/$vpid/fd/*; do
			[ "$(readlink "$fd")" = "$tmp/disk.img" ] &&
				flags=$(awk '/^flags:/ {print $2}' /proc/$vpid/fdinfo/${fd##*/})
		done
		kill -9 $vpid 2>/dev/null
		wait $spid 2>/dev/null
		spid=
		grep -q "FLUSHED $disk" "$tmp/out" || { fail "$what: no FLUSHED: $(cat "$tmp/out")"; continue; }
		grep -q "past the end (2048): refused" "$tmp/out" ||
			fail "$what: a write past the end was not refused: $(cat "$tmp/out")"
		check_image $seed || fail "$what: image check after SIGKILL"
		# an fdatasync before the console writes "F", "L" of FLUSHED (the
		# serial port writes byte by byte)
		synced=$(awk '/fdatasync\(/ && !s {s = NR}
			/write\(1, "/ {c = substr($0, index($0, "\"") + 1, 1)
				if (p == "F" && c == "L" && !f) f = pl; p = c; pl = NR}
			END {print (s && f && s < f) ? 1 : 0}' "$tmp/trace")
		any_sync=$(grep -c 'fdatasync(' "$tmp/trace")
		if [ $cache = unsafe ]; then
			[ "$any_sync" -eq 0 ] || fail "$what: fdatasync with cache=unsafe"
		else
			[ "$synced" = 1 ] || fail "$what: the flush completed without fdatasync"
		fi
		# open flags (octal): O_DSYNC 010000, O_DIRECT 040000
		dsync=$(((0$flags & 010000) != 0)) direct=$(((0$flags & 040000) != 0))
		case $cache in
		writethrough) want="1 0" ;; none) want="0 1" ;; directsync) want="1 1" ;; *) want="0 0" ;;
		esac
		[ "$dsync $direct" = "$want" ] ||
			fail "$what: image opened with flags $flags (O_DSYNC O_DIRECT = $dsync $direct, want $want)"
		echo "ok   $what (sync before completion: $synced, flags $flags)"
	done
done
[ $fails -eq 0 ] || exit 1
echo "disk durability ok"
