#!/bin/sh
# Image locks shared with QEMU: vmm's block layer (driven by the host
# program qcow2-writer, so no KVM is needed; disk-lock-vmm.sh runs vmm
# itself) and QEMU / qemu-img take the same OFD locks. QEMU holding an
# image: vmm is refused with one line naming it, unless file.locking=off.
# vmm holding it: qemu-img and QEMU are refused, QEMU's file.locking=off
# gets through. A backing file is locked read-only: others may read it,
# not write it.
set -u
B=${B:-build}
W=$B/tests/qcow2-writer
fail() { echo "FAIL: $*"; exit 1; }
command -v qemu-system-x86_64 >/dev/null || fail "qemu-system-x86_64 missing (check group)"
[ -x "$W" ] || fail "$W not built"
dir=$(mktemp -d "${TMPDIR:-/tmp}/vmm-disk-lock-XXXXXX")
pids=""
trap 'for p in $pids; do kill $p 2>/dev/null; done; rm -rf "$dir"' EXIT
img=$dir/disk.qcow2
qemu-img create -q -f qcow2 "$img" 16M
qemu-img create -q -f raw "$dir/base.raw" 16M
qemu-img create -q -f qcow2 -b base.raw -F raw "$dir/overlay.qcow2"

qemu_hold() { # FILE-OPTIONS...: a QEMU with the image open, in the background
	qemu-system-x86_64 -machine none -nographic -monitor none -serial none -S \
		-drive "$1" 2>"$dir/qemu.err" &
	qpid=$!
	pids="$pids $qpid"
}
# until qemu-img sees someone's lock on FILE (or 10 s)
wait_locked() {
	for _ in $(seq 100); do
		qemu-img info "$1" >/dev/null 2>&1 || return 0
		sleep 0.1
	done
	fail "nobody ever locked $1"
}
# WRITER-ARGS: qcow2-writer holding, in the background, once it says so
writer_hold() {
	"$W" "$1" hold 2>"$dir/w.err" &
	wpid=$!
	pids="$pids $wpid"
	for _ in $(seq 100); do
		grep -q holding "$dir/w.err" && return 0
		kill -0 $wpid 2>/dev/null || fail "writer did not hold $1: $(cat "$dir/w.err")"
		sleep 0.1
	done
	fail "writer never held $1"
}

# 1. QEMU holds the image: vmm is refused, one line naming the file
qemu_hold "file=$img,if=none,format=qcow2"
wait_locked "$img"
timeout 10 "$W" "$img" hold 2>"$dir/w.err"; [ $? -eq 1 ] || fail "a second writer got the image"
[ "$(wc -l <"$dir/w.err")" -eq 1 ] || fail "not one line: $(cat "$dir/w.err")"
grep -q "Failed to get \"write\" lock.*$img" "$dir/w.err" || fail "error: $(cat "$dir/w.err")"
# ... and gets it with the locks off
QCOW2_WRITER_NO_LOCK=1 writer_hold "$img"
kill $wpid $qpid
wait $wpid $qpid 2>/dev/null

# 2. vmm holds it: qemu-img and QEMU are refused, QEMU's locking=off is not
writer_hold "$img"
qemu-img info "$img" >"$dir/info" 2>&1 && fail "qemu-img info opened a locked image"
grep -q 'Failed to get shared "write" lock' "$dir/info" || fail "qemu-img: $(cat "$dir/info")"
qemu-img info -U "$img" >/dev/null 2>&1 || fail "qemu-img info -U (force share) refused"
timeout 20 qemu-system-x86_64 -machine none -nographic -monitor none -serial none -S \
	-drive "file=$img,if=none,format=qcow2" 2>"$dir/qemu.err" &&
	fail "QEMU opened an image vmm writes"
grep -q 'Failed to get "write" lock' "$dir/qemu.err" || fail "QEMU: $(cat "$dir/qemu.err")"
qemu_hold "file=$img,if=none,format=qcow2,file.locking=off"
sleep 2
kill -0 $qpid 2>/dev/null || fail "QEMU with file.locking=off: $(cat "$dir/qemu.err")"
kill $wpid $qpid
wait $wpid $qpid 2>/dev/null

# 3. an overlay's backing file: read-only, shared with readers (qemu-io:
# a QEMU -drive of a raw image with no device asks for no write lock)
writer_hold "$dir/overlay.qcow2"
qemu-io -f raw -c 'write 0 512' "$dir/base.raw" >"$dir/io.err" 2>&1 &&
	fail "qemu-io wrote a backing file vmm reads"
grep -q 'Failed to get "write" lock' "$dir/io.err" || fail "qemu-io: $(cat "$dir/io.err")"
qemu-io -r -f raw -c 'read 0 512' "$dir/base.raw" >"$dir/io.err" 2>&1 ||
	fail "qemu-io could not read a backing file: $(cat "$dir/io.err")"
kill $wpid
wait $wpid 2>/dev/null
echo "PASS: vmm and QEMU see each other's image locks"
