# seabios-guest.inc.sh — sourced by the SeaBIOS boot-loader tests: find
# the cached guest kernel (or skip), a scratch folder, and wait_for.
# The sourcing script sets VMM and limit, starts vmm with its output in
# "$work/out" and stderr in "$work/err", and sets pid and t0.
[ -e /dev/kvm ] || { echo "SKIP: no /dev/kvm"; exit 77; }
# The guest kernel, built when missing (as the Linux boot tests do; these
# run in LINUX_TESTS). GUEST_KERNEL_DIR: a folder with bzImage and
# initramfs.cpio to use instead.
# With guest=debian: make demo's image instead (Debian's packaged kernel
# as "kernel", its busybox initramfs as "initrd.cpio.gz"; nothing to build).
if [ "${guest:-}" = debian ]; then
	kdir=$(sh scripts/demo/image.sh) || { echo "FAIL: no Debian guest image (scripts/demo/image.sh)"; exit 1; }
else
	kdir=${GUEST_KERNEL_DIR:-$(sh scripts/guest-kernel.sh)} || {
		echo "FAIL: cannot build the guest kernel (scripts/guest-kernel.sh)"
		exit 1
	}
fi
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$work"' EXIT

. tests/integration/wait-output.inc.sh

# Wait until the serial output matches $1; fail when vmm exits first or
# after $limit seconds since $t0.
wait_for() {
	wait_output "$work/out" "$1" "$pid" $((limit - ($(date +%s) - t0))) && return
	if [ $? = 124 ]; then
		echo "FAIL: ${side:-vmm}: no '$1' in ${limit}s"; tail -c 3000 "$work/out" | cat -v; exit 1
	fi
	echo "FAIL: ${side:-vmm} exited before '$1'"
	tail -c 3000 "$work/out" | cat -v; cat "$work/err"; exit 1
}
