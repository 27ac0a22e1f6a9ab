#!/bin/sh
# linux-bad-inputs.sh — -kernel/-initrd/-m mistakes end vmm (and its ASan
# build) with status 1 and exactly one line on stderr, before any guest
# runs: a truncated bzImage, a 64-bit ELF without the PVH note, an initrd
# larger than RAM, -m too small for the kernel. Crafted files, no kernel build.
# needs: native ring 0 (Linux guest; scripts/nested-kvm/place.sh)
set -eu
vmm=${VMM:-build/vmm}
[ -e /dev/kvm ] || { echo "skip: no /dev/kvm"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# poke FILE OFFSET BYTES...: write the bytes (decimal) at OFFSET.
poke() {
	f=$1 off=$2
	shift 2
	printf "$(printf '\\%03o' "$@")" | dd of="$f" bs=1 seek="$off" conv=notrunc status=none
}

# A relocatable 64-bit bzImage header (protocol 2.15): 4 setup sectors,
# 16 KiB of kernel, pref_address 16 MiB, init_size 4 MiB.
bz=$tmp/bzImage
head -c $((5 * 512 + 16384)) /dev/zero >"$bz"
poke "$bz" $((0x1f1)) 4
poke "$bz" $((0x1f4)) 0 4 0 0		# syssize: 16 KiB / 16
poke "$bz" $((0x1fe)) 85 170		# 0xaa55
poke "$bz" $((0x200)) 235 106		# jump: header ends at 0x26c
poke "$bz" $((0x202)) 72 100 114 83	# "HdrS"
poke "$bz" $((0x206)) 15 2		# version 2.15
poke "$bz" $((0x230)) 0 0 32 0		# kernel_alignment 2 MiB
poke "$bz" $((0x234)) 1			# relocatable
poke "$bz" $((0x236)) 1			# XLF_KERNEL_64
poke "$bz" $((0x258)) 0 0 0 1		# pref_address 16 MiB
poke "$bz" $((0x260)) 0 0 64 0		# init_size 4 MiB
head -c 8000 "$bz" >"$tmp/truncated"
truncate -s 100M "$tmp/big.initrd"

fails=0
# expect PATTERN VMM-ARGS...: status 1, one stderr line matching PATTERN.
expect() {
	pattern=$1
	shift
	for v in "$vmm" ${VMM_ASAN:-}; do
		[ -x "$v" ] || continue
		status=0
		timeout 20 "$v" -nographic -serial none -monitor none "$@" </dev/null \
			>/dev/null 2>"$tmp/err" || status=$?
		if [ "$status" != 1 ] || [ "$(wc -l <"$tmp/err")" != 1 ] ||
			! grep -q "$pattern" "$tmp/err"; then
			echo "FAIL: $v $*: status $status, stderr:"
			cat "$tmp/err"
			fails=$((fails + 1))
		else
			echo "ok: $(basename "$v"): $(cat "$tmp/err")"
		fi
	done
}

expect "truncated bzImage" -m 64 -kernel "$tmp/truncated"
expect "without a PVH entry note" -m 64 -kernel /bin/true
expect "does not fit in guest RAM" -m 64 -kernel "$bz" -initrd "$tmp/big.initrd"
expect "is too small" -m 4 -kernel "$bz"
[ "$fails" = 0 ] || exit 1
