# kit-py.inc.sh — sourced by the tests whose host side is a Python driver
# of a kit payload, run under build/vmm, the ASan build and QEMU
# (migrate-kit.sh, balloon-kit.sh). Set KIT_PAYLOAD (the name under
# $B/tests/guest/) first; this checks what they need and sets PAYLOAD,
# $tmp (removed on exit) and fails.
set -u
VMM=${VMM:-build/vmm}
VMM_ASAN=${VMM_ASAN:-build/asan/vmm}
B=${B:-build}
PAYLOAD=$B/tests/guest/$KIT_PAYLOAD.elf
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
command -v python3 >/dev/null || { echo "FAIL: no python3"; exit 1; }
command -v qemu-system-x86_64 >/dev/null || { echo "FAIL: no qemu-system-x86_64"; exit 1; }
[ -f "$PAYLOAD" ] || { echo "FAIL: $PAYLOAD not built"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/$KIT_PAYLOAD.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0
# The QEMU side's emulator: the reference, with the kit's exit device.
KIT_QEMU="qemu-system-x86_64 -enable-kvm -vga none -device isa-debug-exit,iobase=0xf4,iosize=4"

# kit_side NAME PATTERN COMMAND...: run one side (output in $tmp/NAME.out);
# "ok: NAME: " and its line matching PATTERN, or FAIL and all of it.
kit_side() {
	name=$1 pattern=$2
	shift 2
	if "$@" >"$tmp/$name.out" 2>&1; then
		echo "ok: $name: $(grep "$pattern" "$tmp/$name.out")"
	else
		echo "FAIL: $name"
		cat "$tmp/$name.out"
		fails=$((fails + 1))
	fi
}

# kit_end TEST: the closing line, or status 1 when a side failed.
kit_end() {
	[ "$fails" = 0 ] || exit 1
	echo "$1: all passed"
}
