#!/bin/sh
# nested-place.sh — where tests/run.sh sends one KVM test
# (scripts/nested-kvm/place.sh's kvm_place_test), on any machine: with the
# host's ring 0 taken as emulated (kvm_pvm) and as native, a test marked
# `# needs: native ring 0` and one without the mark, under each
# VMM_TEST_NESTED. Only a marked test on an emulating host under auto goes
# nested; a place already decided (nested, skip:...) stays as it is. The
# real detection must agree with /sys/module/kvm_pvm, and every marked
# script must be a test make check or make check-linux runs.
set -u
fail() { echo "FAIL: $*"; exit 1; }
. scripts/nested-kvm/place.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nested-place.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
printf '#!/bin/sh\n# needs: native ring 0 (a Linux guest)\n' >"$tmp/marked.sh"
printf '#!/bin/sh\n# boots a payload; mentions "needs: native ring 0" only here\n' >"$tmp/plain.sh"
command -v qemu-system-x86_64 >/dev/null || fail "qemu-system-x86_64 missing (check group)"

# expect EMULATED VMM_TEST_NESTED PLACE TEST WANT
expect() {
	if [ "$1" = yes ]; then ring0_emulated() { true; }; else ring0_emulated() { false; }; fi
	got=$(VMM_TEST_NESTED=$2 kvm_place_test "$3" "$tmp/$4")
	[ "$got" = "$5" ] || fail "emulated=$1 VMM_TEST_NESTED=$2 $3 $4: $got, want $5"
	n=$((n + 1))
}
n=0
expect yes auto native marked.sh nested
expect yes auto native plain.sh native
expect no auto native marked.sh native
expect yes never native marked.sh native
expect yes always nested marked.sh nested
expect yes auto nested plain.sh nested
expect yes auto "skip:no qemu" marked.sh "skip:no qemu"
echo "kvm_place_test: $n placements as documented"

. scripts/nested-kvm/place.sh # the real ring0_emulated again
if [ -d /sys/module/kvm_pvm ]; then ring0_emulated || fail "kvm_pvm is loaded, ring0_emulated says no"
else ! ring0_emulated || fail "kvm_pvm is not loaded, ring0_emulated says yes"; fi

# Each mark is on a script the build runs (a typo'd or dropped test would
# keep its mark and never run anywhere).
tests=$(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s print-tests) || fail "make print-tests"
marked=$(grep -l '^# needs: native ring 0' tests/integration/*.sh)
[ -n "$marked" ] || fail "no script carries the mark"
for f in $marked; do
	echo "$tests" | grep -qx "$f" || fail "$f carries the mark but no make target runs it"
done
echo "nested-place: $(echo "$marked" | wc -l) marked scripts, all run by make check or check-linux"
