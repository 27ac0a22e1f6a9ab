#!/bin/sh
# check.sh KUT_DIR [TEST...] — make check-kut: build a kvm-unit-tests
# checkout for x86_64 if needed (in place), run its own run_tests.sh once
# with vmm as its QEMU (scripts/kut/qemu.sh) and once with
# qemu-system-x86_64, and print both tallies and every test QEMU passes that
# vmm does not. Logs: $B/kut/{vmm,qemu}[-MODE].log. Env: B (build), VMM,
# KUT_ONLY (vmm or qemu: run one side only), KUT_IRQCHIP (on, split or off:
# both sides get `-machine kernel_irqchip=MODE`, see scripts/kut/qemu.sh and
# qemu-ref.sh), and the runner's own TIMEOUT (e.g. 300s: overrides every
# test's timeout on a slow host) and KVM_UNIT_TESTS_ENV (a file of VAR=value
# lines for the tests, both sides: TEST_DEVICE=0 skips apic.c's PV IPI
# VMCALL, which never completes on kvm_pvm hosts).
set -u
kut=${1:?usage: check.sh KUT_DIR [TEST...]}
shift
B=${B:-build}
here=$(pwd)
VMM=${VMM:-$here/$B/vmm}
case $VMM in /*) ;; *) VMM=$here/$VMM ;; esac
out=$here/$B/kut
mode=${KUT_IRQCHIP:-}
case $mode in
'' | on | split | off) ;;
*) echo "check-kut: KUT_IRQCHIP must be on, split or off, not '$mode'"; exit 2 ;;
esac
sfx=${mode:+-$mode}
mkdir -p "$out"
[ -e /dev/kvm ] || { echo "check-kut: skipped: /dev/kvm is absent"; exit 77; }
[ -x "$kut/run_tests.sh" ] || { echo "check-kut: $kut is not a kvm-unit-tests checkout"; exit 2; }
if [ ! -f "$kut/config.mak" ] || [ ! -f "$kut/x86/msr.flat" ]; then
	echo "check-kut: building kvm-unit-tests in $kut"
	(cd "$kut" && ./configure --arch=x86_64 && make -j2) >"$out/build.log" 2>&1 ||
		{ echo "check-kut: build failed, see $out/build.log"; exit 1; }
fi

# run SIDE QEMU_BINARY: the runner's lines into $out/SIDE.log
run() {
	side=$1 qemu=$2
	shift 2
	echo "check-kut: running the suite under $side${mode:+ (kernel_irqchip=$mode)}"
	rm -rf "$out/$side$sfx-logs" "$out/$side$sfx-logs.old"
	(cd "$kut" && VMM="$VMM" QEMU=$qemu KUT_IRQCHIP=$mode \
		unittest_log_dir="$out/$side$sfx-logs" ./run_tests.sh -v "$@" 2>&1) |
		sed 's/\x1b\[[0-9;]*m//g' >"$out/$side$sfx.log"
}
tally() {
	printf '%-5s %3d passed, %3d failed, %3d skipped\n' "$1" \
		"$(grep -c '^PASS ' "$out/$1$sfx.log")" "$(grep -c '^FAIL ' "$out/$1$sfx.log")" \
		"$(grep -c '^SKIP ' "$out/$1$sfx.log")"
}
tests="$*"
# shellcheck disable=SC2086
[ "${KUT_ONLY:-vmm}" = qemu ] || (set -- vmm "$here/scripts/kut/qemu.sh" $tests; run "$@")
# shellcheck disable=SC2086
[ "${KUT_ONLY:-qemu}" = vmm ] || (set -- qemu "$here/scripts/kut/qemu-ref.sh" $tests; run "$@")
echo "check-kut: kvm-unit-tests x86_64 ($(cd "$kut" && git describe --always 2>/dev/null))${mode:+, kernel_irqchip=$mode}"
status=0
for side in vmm qemu; do [ -f "$out/$side$sfx.log" ] && tally $side; done
if [ -f "$out/vmm$sfx.log" ] && [ -f "$out/qemu$sfx.log" ]; then
	for t in $(awk '$1 == "PASS" {print $2}' "$out/qemu$sfx.log"); do
		grep -q "^PASS $t " "$out/vmm$sfx.log" && continue
		echo "  QEMU passes, vmm does not: $(grep -m1 " $t " "$out/vmm$sfx.log")"
		status=1
	done
fi
exit $status
