#!/bin/sh
# virtio-rng.sh — virtio-rng-pci with Debian's own kernel and its
# virtio_rng module (make demo's image, booted directly). Two devices, as
# libvirt and a rate-limited user spell them:
#   slot 6: libvirt 9.0's JSON -object rng-random (/dev/urandom) and
#           -device virtio-rng-pci,rng=objrng0  -> virtio_rng.0
#   slot 7: -device virtio-rng-pci,max-bytes=512,period=1000 (no rng=: a
#           builtin source)                     -> virtio_rng.1
# The guest's hw_random core must pick virtio_rng.0, /dev/hwrng must give
# bytes that differ from read to read, the unlimited device must give more
# in a 4 s window than the limit allows, and the limited one at most
# max-bytes per started period (512 * 5 in 4 s) but some. The window is
# read 64 bytes at a time: a read of /dev/hwrng returns only when full, and
# the reader killed at the window's end loses what it waits for. QEMU
# (-enable-kvm) runs the same guest and options as the reference.
# needs: native ring 0 (Linux guest; scripts/nested-kvm/place.sh)
set -u
VMM=${VMM:-build/vmm}
limit=${VIRTIO_RNG_TIMEOUT:-600}
max_bytes=512 period_ms=1000 window_s=4
bound=$((max_bytes * (window_s * 1000 / period_ms + 1)))
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
guest=$(sh scripts/demo/image.sh) || { echo "FAIL: no Debian guest image (scripts/demo/image.sh)"; exit 1; }
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$work"' EXIT

. tests/integration/demo-guest.inc.sh

run() {
	side=$1
	shift
	rm -f "$work/in" "$work/out" "$work/err"
	mkfifo "$work/in"
	t0=$(date +%s)
	"$@" -m 512 -smp 2 -nographic -serial stdio -monitor none -no-reboot -net none \
		-kernel "$guest/kernel" -initrd "$guest/initrd.cpio.gz" \
		-append "$(cat tests/guest/linux/cmdline)" \
		-object '{"qom-type":"rng-random","id":"objrng0","filename":"/dev/urandom"}' \
		-device '{"driver":"virtio-rng-pci","rng":"objrng0","id":"rng0","bus":"pci.0","addr":"0x6"}' \
		-device virtio-rng-pci,max-bytes=$max_bytes,period=$period_ms,addr=0x7 \
		<"$work/in" >"$work/out" 2>"$work/err" &
	pid=$!
	exec 3>"$work/in"
	wait_for "^vmm demo: a shell"
	hw=/sys/class/misc/hw_random
	avail=$(ask AVAIL "cat $hw/rng_available")
	case "$avail" in *virtio_rng.0*virtio_rng.1*) ;; *) fail "rng_available is '$avail'" ;; esac
	cur=$(ask CURRENT "cat $hw/rng_current")
	[ "$cur" = virtio_rng.0 ] || fail "rng_current is '$cur', not virtio_rng.0"
	n=$(ask BYTES "head -c 1000 /dev/hwrng | wc -c")
	[ "$n" = 1000 ] || fail "/dev/hwrng gave $n of 1000 bytes"
	a=$(ask SAMPLE1 "head -c 32 /dev/hwrng | od -An -tx1 | tr -d ' \\n'")
	b=$(ask SAMPLE2 "head -c 32 /dev/hwrng | od -An -tx1 | tr -d ' \\n'")
	[ ${#a} -eq 64 ] && [ "$a" != "$b" ] || fail "two reads of /dev/hwrng: '$a' and '$b'"
	[ "$a" != "$(printf '%064d' 0)" ] || fail "/dev/hwrng gives zeros"
	fast=$(ask FAST "timeout $window_s dd if=/dev/hwrng bs=64 2>/dev/null | wc -c")
	[ "$fast" -gt "$bound" ] || fail "virtio_rng.0 (no limit) gave only $fast bytes in ${window_s}s"
	sel=$(ask SELECT "echo virtio_rng.1 >$hw/rng_current; cat $hw/rng_current")
	[ "$sel" = virtio_rng.1 ] || fail "could not select virtio_rng.1 ($sel)"
	# The device meters by the host's clock, the guest's window by its own:
	# on a loaded host the guest's 4 s can span more host periods. What
	# the host saw from the question to the answer bounds the periods the
	# device served, plus one started before and the 64 bytes the guest's
	# hw_random core may hold from an earlier read.
	h0=$(date +%s%N)
	slow=$(ask SLOW "timeout $window_s dd if=/dev/hwrng bs=64 2>/dev/null | wc -c")
	host_ms=$((($(date +%s%N) - h0) / 1000000))
	limit_bound=$((max_bytes * ((host_ms + period_ms - 1) / period_ms + 1) + 64))
	[ "$slow" -gt 0 ] || fail "virtio_rng.1 (max-bytes=$max_bytes) gave nothing in ${window_s}s"
	[ "$slow" -le "$limit_bound" ] ||
		fail "virtio_rng.1 gave $slow bytes in ${window_s}s (${host_ms} ms on the host): more than max-bytes=$max_bytes per ${period_ms} ms allows ($limit_bound)"
	power_off
	echo "virtio-rng: $side ok in $(($(date +%s) - t0)) s: $avail, unlimited $fast B, limited $slow B in ${window_s}s (${host_ms} ms on the host, bound $limit_bound)"
}

cpu=
# KVMs that emulate guest ring 0 (kvm_pvm) need the conservative CPU model.
[ ! -d /sys/module/kvm_pvm ] || cpu="-cpu baseline"
# shellcheck disable=SC2086
run vmm "$VMM" $cpu
# vmm notes each unclaimed port once (Debian's kernel probes the Super I/O
# ports); anything else on stderr is a complaint.
if grep -v '^vmm: guest \(read\|wrote\) unclaimed io address ' "$work/err" | grep -q .; then
	echo "FAIL: vmm complained on stderr:"; cat "$work/err"; exit 1
fi
command -v qemu-system-x86_64 >/dev/null ||
	{ echo "FAIL: no qemu-system-x86_64 for the reference run (scripts/install-deps.sh check)"; exit 1; }
run qemu qemu-system-x86_64 -enable-kvm -cpu qemu64,-smap,-smep,-xsave,-popcnt -vga none
echo "virtio-rng: ok"
