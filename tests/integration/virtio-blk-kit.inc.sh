# virtio-blk-kit.inc.sh — sourced by virtio-blk-kit.sh (build/vmm) and
# virtio-blk-kit-qemu.sh (qemu-system-x86_64): the kit's virtio-blk payload
# (tests/guest/virtio-blk.c) on a 16 MiB raw image made by
# virtio-blk-image.py, then the image's sha256 (region by region) checked on
# the host; the same payload with EVENT_IDX and without INDIRECT_DESC; and
# the broken-chain modes, where the device must set DEVICE_NEEDS_RESET and
# work again after a reset while the VMM keeps running.
#
# The caller defines `vm IMG APPEND [DRIVE_OPTS]` (runs the payload with
# IMG as a virtio-blk disk with serial kit-serial-1, DRIVE_OPTS such as
# ",readonly=on" added to its -drive, serial output on stdout, the
# VMM's stderr on stderr), BROKEN_KINDS and, if the VMM must say why a
# queue broke in exactly one stderr line, BROKEN_STDERR (a regexp); then
# calls kit_main NAME.
set -u
B=${B:-build}
PAYLOAD=$B/tests/guest/virtio-blk.elf
IMAGE_PY=$(dirname "$0")/virtio-blk-image.py
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
[ -f "$PAYLOAD" ] || { echo "FAIL: $PAYLOAD not built"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/virtio-blk-kit.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0

fail() {
	echo "FAIL $*"
	fails=$((fails + 1))
}

# run_case NAME APPEND PATTERN...: status 1 and every PATTERN (extended
# regexp) in the serial output; output in $tmp/out, stderr in $tmp/err.
# DRIVE_OPTS (variable) goes to vm.
run_case() {
	name=$1 append=$2
	shift 2
	vm "$tmp/disk.img" "$append" "${DRIVE_OPTS:-}" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	ok=1
	[ "$rc" -eq 1 ] || ok=0
	for p in "$@"; do
		grep -Eq "$p" "$tmp/out" || { ok=0; echo "missing: $p"; }
	done
	if [ $ok = 1 ]; then
		echo "ok   $name"
		return 0
	fi
	fail "$name: status $rc (want 1), output:"
	tail -n 25 "$tmp/out"
	sed 's/^/stderr: /' "$tmp/err" | tail -n 5
	return 1
}

# io_case NAME APPEND: the full payload, then the image checked.
io_case() {
	cp "$tmp/orig.img" "$tmp/disk.img"
	run_case "$1" "$2" "virtio-blk: serial 'kit-serial-1'" \
		'virtio-blk: write C: 64 requests of 4096 bytes, up to 32 in flight' \
		'virtio-blk: read past the end: status [12] as expected' \
		'virtio-blk: all checks passed' || return
	if python3 "$IMAGE_PY" check "$tmp/orig.img" "$tmp/disk.img" "$tmp/out"; then
		echo "ok   $1: image"
	else
		fail "$1: the image does not hold what the guest wrote"
	fi
}

kit_main() {
	python3 "$IMAGE_PY" make "$tmp/orig.img" || { echo "FAIL: cannot make the image"; exit 1; }
	io_case "$1 virtio-blk" "event_idx=0"
	io_case "$1 virtio-blk event_idx=1 indirect=0" "event_idx=1 indirect=0"
	cp "$tmp/orig.img" "$tmp/disk.img"
	DRIVE_OPTS=,readonly=on run_case "$1 read-only disk" "readonly=1" \
		'virtio-blk: read-only disk: VIRTIO_BLK_F_RO, write refused, data unchanged' &&
		if cmp -s "$tmp/orig.img" "$tmp/disk.img"; then
			echo "ok   $1 read-only disk: image unchanged"
		else
			fail "$1 read-only disk: the image changed"
		fi
	for k in $BROKEN_KINDS; do
		cp "$tmp/orig.img" "$tmp/disk.img"
		run_case "$1 broken chain $k" "broken=$k" \
			'virtio-blk: device status [0-9a-f]*: DEVICE_NEEDS_RESET' \
			'virtio-blk: after reset: write and read back ok' \
			"virtio-blk: broken chain $k: device recovered by reset" || continue
		[ -n "${BROKEN_STDERR:-}" ] || continue
		if [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -Eq "$BROKEN_STDERR" "$tmp/err"; then
			fail "$1 broken chain $k: want one stderr line matching '$BROKEN_STDERR', got:"
			cat "$tmp/err"
		fi
	done
	[ "$fails" -eq 0 ]
}
