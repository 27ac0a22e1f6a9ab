#!/bin/sh
# check.sh KUT_DIR [TEST...] — make check-kut: build a kvm-unit-tests
# checkout for x86_64 if needed (in place), run its own run_tests.sh once
# with vmm as its QEMU (scripts/kut/qemu.sh) and once with
# qemu-system-x86_64, and print both tallies and every test QEMU passes that
# vmm does not. Logs: $B/kut/{vmm,qemu}.log. Env: B (build), VMM, KUT_ONLY
# (vmm or qemu: run one side only).
set -u
kut=${1:?usage: check.sh KUT_DIR [TEST...]}
shift
B=${B:-build}
here=$(pwd)
VMM=${VMM:-$here/$B/vmm}
case $VMM in /*) ;; *) VMM=$here/$VMM ;; esac
out=$here/$B/kut
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
	echo "check-kut: running the suite under $side"
	rm -rf "$out/$side-logs" "$out/$side-logs.old"
	(cd "$kut" && VMM="$VMM" QEMU=$qemu unittest_log_dir="$out/$side-logs" \
		./run_tests.sh -v "$@" 2>&1) |
		sed 's/\x1b\[[0-9;]*m//g' >"$out/$side.log"
}
tally() {
	printf '%-5s %3d passed, %3d failed, %3d skipped\n' "$1" \
		"$(grep -c '^PASS ' "$out/$1.log")" "$(grep -c '^FAIL ' "$out/$1.log")" \
		"$(grep -c '^SKIP ' "$out/$1.log")"
}
tests="$*"
# shellcheck disable=SC2086
[ "${KUT_ONLY:-vmm}" = qemu ] || (set -- vmm "$here/scripts/kut/qemu.sh" $tests; run "$@")
# shellcheck disable=SC2086
[ "${KUT_ONLY:-qemu}" = vmm ] || (set -- qemu qemu-system-x86_64 $tests; run "$@")
echo "check-kut: kvm-unit-tests x86_64 ($(cd "$kut" && git describe --always 2>/dev/null))"
status=0
for side in vmm qemu; do [ -f "$out/$side.log" ] && tally $side; done
if [ -f "$out/vmm.log" ] && [ -f "$out/qemu.log" ]; then
	for t in $(awk '$1 == "PASS" {print $2}' "$out/qemu.log"); do
		grep -q "^PASS $t " "$out/vmm.log" && continue
		echo "  QEMU passes, vmm does not: $(grep -m1 " $t " "$out/vmm.log")"
		status=1
	done
fi
exit $status
