#!/bin/sh
# disk-durable.sh — durable disks, for IDE (-hda) and virtio-blk (if=virtio)
# under every cache= mode, with build/tests/guest/disk-flush.elf: the guest
# writes 16 sectors, flushes, prints FLUSHED, tries a write past the end and
# halts; the host kills the VMM with SIGKILL and checks:
#   - the image holds the 16 sectors (a completed write is in the file);
#   - a guest flush returned only after fdatasync on the image (strace: an
#     fdatasync before the write of FLUSHED to the console) — except with
#     cache=unsafe, which never syncs; virtio-blk's default engine
#     (aio=io_uring) syncs inside io_uring_enter, out of strace's view, so
#     for every disk the sectors' page-cache pages must also be clean (not
#     dirty, not under writeback: /proc/kpageflags) once FLUSHED is out and
#     before the VMM is killed — what fdatasync leaves behind;
#   - the image was opened as the mode documents (its /proc fdinfo flags):
#     writethrough O_DSYNC, none O_DIRECT, directsync both;
#   - the write past the end was refused and the image kept its size;
# and virtio-blk-pci's (and ide-hd's) write-cache=on|off|auto against each drive cache=
# mode (the open flags of the mode it amounts to).
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
uring_checked=0

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

# unsynced_pages: how many of the image's first two page-cache pages (the
# 16 sectors) are dirty or under writeback (KPF_DIRTY bit 4, KPF_WRITEBACK
# bit 8), or "unknown" where pagemap hides page frames (not root).
unsynced_pages() {
	python3 - "$tmp/disk.img" <<'PY'
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                      ctypes.c_int, ctypes.c_int, ctypes.c_long]
fd = os.open(sys.argv[1], os.O_RDONLY)
addr = libc.mmap(None, 2 * 4096, 1, 1, fd, 0)  # PROT_READ, MAP_SHARED
n = 0
try:
    pm, kf = open("/proc/self/pagemap", "rb"), open("/proc/kpageflags", "rb")
except OSError:
    print("unknown"); sys.exit()
for i in range(2):
    ctypes.c_char.from_address(addr + i * 4096).value  # map the page
    pm.seek((addr // 4096 + i) * 8)
    pfn = struct.unpack("<Q", pm.read(8))[0] & ((1 << 55) - 1)
    if pfn == 0:
        print("unknown"); sys.exit()
    kf.seek(pfn * 8)
    flags = struct.unpack("<Q", kf.read(8))[0]
    n += bool(flags & (1 << 4 | 1 << 8))
print(n)
PY
}

# wait_halting: until disk-flush.elf says it halts (or 120 s).
wait_halting() {
	for _ in $(seq 1200); do
		grep -qs halting "$tmp/out" && break
		sleep 0.1
	done
}

# image_flags PID: the open flags (octal) of PID's fd on the image.
image_flags() {
	for fd in /proc/$1/fd/*; do
		[ "$(readlink "$fd")" = "$tmp/disk.img" ] && awk '/^flags:/ {print $2}' /proc/$1/fdinfo/${fd##*/}
	done
}

for disk in ide virtio virtio-uring; do
	for cache in writeback writethrough none directsync unsafe; do
		seed=$((seed + 11))
		what="$disk cache=$cache"
		fails_before=$fails
		dd if=/dev/zero of="$tmp/disk.img" bs=1M count=1 2>/dev/null
		if [ $disk = ide ]; then
			drive="file=$tmp/disk.img,if=ide,index=0,format=raw,cache=$cache"
		else
			# aio=threads: the flush is an fdatasync(2) strace sees; under
			# the io_uring engine (the default) it is IORING_OP_FSYNC with
			# IORING_FSYNC_DATASYNC inside io_uring_enter, out of strace's
			# view, and only the page-cache check below sees it
			aio=threads
			[ $disk = virtio-uring ] && aio=io_uring
			drive="file=$tmp/disk.img,if=virtio,format=raw,cache=$cache,aio=$aio"
		fi
		# the last case's output must not satisfy this one's wait
		rm -f "$tmp/out"
		strace -f -qq --seccomp-bpf -e trace=fdatasync,write -e signal=none -o "$tmp/trace" \
			"$VMM" -m 64 -nographic -monitor none -drive "$drive" \
			-kernel "$B/tests/guest/disk-flush.elf" \
			-append "disk=$([ $disk = ide ] && echo 0 || echo 1) seed=$seed" \
			</dev/null >"$tmp/out" 2>&1 &
		spid=$!
		wait_halting
		vpid=$(pgrep -P $spid | head -n 1)
		[ -n "$vpid" ] || { fail "$what: no VMM under strace: $(cat "$tmp/out")"; continue; }
		unsynced=$(unsynced_pages)
		flags=$(image_flags $vpid)
		kill -9 $vpid 2>/dev/null
		wait $spid 2>/dev/null
		spid=
		grep -q "FLUSHED ${disk%-uring}" "$tmp/out" || { fail "$what: no FLUSHED: $(cat "$tmp/out")"; continue; }
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
		if [ $disk = virtio-uring ]; then
			grep -q "io_uring unavailable" "$tmp/out" &&
				fail "$what: the io_uring engine was refused: $(cat "$tmp/out")"
			[ "$any_sync" -eq 0 ] || fail "$what: fdatasync(2) under aio=io_uring"
		elif [ $cache = unsafe ]; then
			[ "$any_sync" -eq 0 ] || fail "$what: fdatasync with cache=unsafe"
		else
			[ "$synced" = 1 ] || fail "$what: the flush completed without fdatasync"
		fi
		# cache=unsafe may leave the pages dirty (not asserted: any
		# sync(1) on the host cleans them)
		case $cache/$unsynced in
		unsafe/* | */0) ;;
		*/unknown) ;;
		*) fail "$what: $unsynced page(s) still dirty after the guest's flush completed" ;;
		esac
		[ $disk = virtio-uring ] && [ "$unsynced" != unknown ] && uring_checked=$((uring_checked + 1))
		# open flags (octal): O_DSYNC 010000, O_DIRECT 040000
		dsync=$(((0$flags & 010000) != 0)) direct=$(((0$flags & 040000) != 0))
		case $cache in
		writethrough) want="1 0" ;; none) want="0 1" ;; directsync) want="1 1" ;; *) want="0 0" ;;
		esac
		[ "$dsync $direct" = "$want" ] ||
			fail "$what: image opened with flags $flags (O_DSYNC O_DIRECT = $dsync $direct, want $want)"
		[ $fails -eq $fails_before ] && echo "ok   $what (sync before completion: $synced, pages unsynced: $unsynced, flags $flags)"
	done
done

# write-cache= on the device (libvirt's -blockdev form gives the cache
# mode's writeback half there: cache='none' is direct + write-cache=on):
# off turns writeback into writethrough and none into directsync, on the
# other way round. The image's open flags show it; the guest's flushed
# sectors must be in the image after SIGKILL.
# ide-hd on the IDE bus takes it too (disk-flush.elf's disk=0).
for wc in "virtio-blk-pci writeback off 1 0" "virtio-blk-pci none off 1 1" \
	"virtio-blk-pci writethrough on 0 0" "virtio-blk-pci directsync on 0 1" \
	"virtio-blk-pci none auto 0 1" "ide-hd writeback off 1 0" "ide-hd directsync on 0 1"; do
	set -- $wc
	seed=$((seed + 11))
	what="$1 cache=$2 write-cache=$3"
	dev="$1,drive=d0,write-cache=$3" kind=virtio unit=1
	[ "$1" = ide-hd ] && dev="$dev,bus=ide.0" kind=ide unit=0
	dd if=/dev/zero of="$tmp/disk.img" bs=1M count=1 2>/dev/null
	rm -f "$tmp/out"
	"$VMM" -m 64 -nographic -monitor none -kernel "$B/tests/guest/disk-flush.elf" \
		-drive "file=$tmp/disk.img,if=none,id=d0,format=raw,cache=$2,aio=threads" \
		-device "$dev" -append "disk=$unit seed=$seed" </dev/null >"$tmp/out" 2>&1 &
	spid=$!
	wait_halting
	flags=$(image_flags $spid)
	kill -9 $spid 2>/dev/null
	wait $spid 2>/dev/null
	spid=
	grep -q "FLUSHED $kind" "$tmp/out" || { fail "$what: no FLUSHED: $(cat "$tmp/out")"; continue; }
	check_image $seed || fail "$what: image check after SIGKILL"
	dsync=$(((0$flags & 010000) != 0)) direct=$(((0$flags & 040000) != 0))
	shift
	if [ "$dsync $direct" = "$3 $4" ]; then
		echo "ok   $what (flags $flags)"
	else
		fail "$what: image opened with flags $flags (O_DSYNC O_DIRECT = $dsync $direct, want $3 $4)"
	fi
done
[ $fails -eq 0 ] || exit 1
# the io_uring engine's flush has no other evidence than the page check
[ $uring_checked -gt 0 ] || {
	echo "skipped: /proc/kpageflags is not readable (run as root): aio=io_uring flushes unchecked"
	exit 77
}
echo "disk durability ok"
