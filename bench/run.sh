#!/bin/sh
# run.sh BENCH... — run benchmark scripts in order; stop at the first that fails.
# Those named in $KVM_BENCHES need /dev/kvm: where the machine has none they
# run inside the nested Linux of scripts/nested-kvm/ (VMM_TEST_NESTED as for
# the tests). Both sides of each ratio then run there, so the ratio stays
# meaningful; absolute figures are those of an emulated machine.
set -u
. scripts/nested-kvm/place.sh
. tests/python3.inc.sh
use_debian_python3 "${B:-build}/python-bin"
place=
for b in "$@"; do
	case " ${KVM_BENCHES:-} " in
	*" $b "*)
		[ -n "$place" ] || place=$(kvm_place)
		case "$place" in
		native) echo "== $b" && "$b" || exit 1 ;;
		nested)
			echo "== $b [nested]"
			# as tests/run.sh: a guest booting a whole distribution can
			# keep L1's heartbeat away for over a minute
			sh scripts/nested-kvm/run.sh -s "${NESTED_STALL:-120}" -e B -e VMM -e HOME -e XDG_CACHE_HOME -- "$b" || exit 1
			;;
		skip:*) echo "== $b: not run: ${place#skip:}" ;;
		esac
		;;
	*) echo "== $b" && "$b" || exit 1 ;;
	esac
done
