#!/bin/sh
# run.sh [--where LABEL] TEST... — run test programs and print one summary line.
#
# A unit test is a libcheck binary: its "Checks: N, Failures: F, Errors: E"
# line is added up. Any other test counts as one and reports by exit status:
# 0 passed, 77 skipped (it must print why), anything else failed.
# Output of each test goes to $TEST_LOGS/NAME.log (default $B/test-logs);
# failures print their log tail.
#
# Tests named in $KVM_TESTS need /dev/kvm. Where they run is chosen by
# VMM_TEST_NESTED: `auto` (default) runs them natively when /dev/kvm opens,
# else inside a nested Linux under QEMU's emulation (scripts/nested-kvm/),
# else skips them with the reason; `always` runs them nested even where
# /dev/kvm works (so both paths stay tested); `never` never nests. Every
# result line says where the test ran. --where labels this run's lines (the
# nested run uses it for the batch it runs inside L1).
set -u
B=${B:-build}
logs=${TEST_LOGS:-$B/test-logs}
mkdir -p "$logs"
passed=0 failed=0 skipped=0
failed_names=""
timeout_s=${TEST_TIMEOUT:-900}
where=native
if [ "${1:-}" = --where ]; then
	where=$2
	shift 2
fi
mode=${VMM_TEST_NESTED:-auto}
case "$mode" in
auto | always | never) ;;
*) echo "run.sh: VMM_TEST_NESTED=$mode: want auto, always or never" >&2; exit 2 ;;
esac

is_kvm_test() {
	case " ${KVM_TESTS:-} " in *" $1 "*) return 0 ;; esac
	return 1
}

kvm_opens() { (exec 3<>/dev/kvm) 2>/dev/null; }

# Where KVM tests go in this run: native, nested, or "skip:REASON".
kvm_place() {
	[ "$where" = native ] || { echo native; return; } # already inside L1
	if [ "$mode" != always ] && kvm_opens; then
		echo native
	elif [ "$mode" = never ]; then
		echo "skip:/dev/kvm does not open here and VMM_TEST_NESTED=never"
	elif ! command -v qemu-system-x86_64 >/dev/null; then
		echo "skip:no /dev/kvm and no qemu-system-x86_64 for the nested runner"
	else
		echo nested
	fi
}

# run_one TEST: run it here, print its line, add up the counts.
run_one() {
	t=$1
	name=$(echo "$t" | sed 's|/|_|g')
	log=$logs/$name.log
	start=$(date +%s)
	timeout --foreground -k 10 "$timeout_s" "$t" >"$log" 2>&1 </dev/null
	rc=$?
	secs=$(($(date +%s) - start))
	summary=$(grep -E '^[0-9]+%: Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+' "$log" | tail -n 1)
	if [ -n "$summary" ]; then
		n=$(echo "$summary" | sed -E 's/.*Checks: ([0-9]+).*/\1/')
		f=$(echo "$summary" | sed -E 's/.*Failures: ([0-9]+).*/\1/')
		e=$(echo "$summary" | sed -E 's/.*Errors: ([0-9]+).*/\1/')
		bad=$((f + e))
		passed=$((passed + n - bad))
		failed=$((failed + bad))
		if [ "$bad" -ne 0 ] || [ "$rc" -ne 0 ]; then
			[ "$bad" -ne 0 ] || failed=$((failed + 1))
			failed_names="$failed_names $t"
			echo "FAIL $t [$where] ($summary, exit $rc, ${secs}s)"
			grep -E ':[EF]:' "$log" | head -n 20
			tail -n 15 "$log"
		else
			echo "ok   $t [$where] ($n checks, ${secs}s)"
		fi
	elif [ "$rc" -eq 0 ]; then
		passed=$((passed + 1))
		echo "ok   $t [$where] (${secs}s)"
	elif [ "$rc" -eq 77 ]; then
		skipped=$((skipped + 1))
		echo "SKIP $t [$where]: $(tail -n 1 "$log")"
	else
		failed=$((failed + 1))
		failed_names="$failed_names $t"
		if [ "$rc" -eq 124 ]; then
			echo "FAIL $t [$where] (timed out after ${timeout_s}s)"
		else
			echo "FAIL $t [$where] (exit $rc, ${secs}s)"
		fi
		tail -n 25 "$log"
	fi
}

# run_nested TEST...: one L1 boot runs this script on the batch; its lines
# stream through and its closing counts are added to ours.
run_nested() {
	nlog=$logs/nested-batch.log
	start=$(date +%s)
	echo "nested: $# tests that need /dev/kvm run in a nested Linux under QEMU's emulation"
	budget=$(($# * timeout_s + 300))
	sh scripts/nested-kvm/run.sh -t "$budget" -e B -e VMM -e VMM_ASAN -e TEST_TIMEOUT \
		-e KVM_TESTS -e TEST_LOGS -e HOME -e XDG_CACHE_HOME -e CI -- sh tests/run.sh --where nested "$@" |
		tee "$nlog" | grep -v -E '^check: [0-9]+ passed|^failed:'
	counts=$(grep -E '^check: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$nlog" | tail -n 1)
	if [ -z "$counts" ]; then
		echo "FAIL nested batch: L1 gave no result (see above); its $# tests count as failed"
		failed=$((failed + $#))
		failed_names="$failed_names (nested batch)"
	else
		set -- $(echo "$counts" | sed -E 's/check: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped/\1 \2 \3/')
		passed=$((passed + $1))
		failed=$((failed + $2))
		skipped=$((skipped + $3))
		failed_names="$failed_names$(sed -n 's/^failed://p' "$nlog")"
	fi
	echo "nested: done in $(($(date +%s) - start))s (L1 boot included)"
}

place=""
nested=""
for t in "$@"; do
	if ! is_kvm_test "$t"; then
		run_one "$t"
		continue
	fi
	[ -n "$place" ] || place=$(kvm_place)
	case "$place" in
	native) run_one "$t" ;;
	nested) nested="$nested $t" ;;
	skip:*)
		skipped=$((skipped + 1))
		echo "SKIP $t [not run]: ${place#skip:}"
		;;
	esac
done
# shellcheck disable=SC2086
[ -z "$nested" ] || run_nested $nested

[ -z "$failed_names" ] || echo "failed:$failed_names"
echo "check: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
