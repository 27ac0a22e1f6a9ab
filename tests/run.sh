#!/bin/sh
# run.sh [--where LABEL] TEST... — run test programs and print one summary line.
#
# A unit test is a libcheck binary: its "Checks: N, Failures: F, Errors: E"
# line is added up. Any other test counts as one and reports by exit status:
# 0 passed, 77 skipped (it must print why), anything else failed.
# Output of each test goes to $TEST_LOGS/NAME.log (default $B/test-logs);
# failures print their log tail.
#
# Tests named in $KVM_TESTS need /dev/kvm. VMM_TEST_NESTED chooses where
# they run (scripts/nested-kvm/place.sh): natively, or all in one nested
# Linux under QEMU's emulation, or skipped with the reason. Every result line
# says where its test ran. --where labels this run's lines (the nested run
# uses it for the batch it runs inside L1).
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
. scripts/nested-kvm/place.sh

# $VMM and $VMM_ASAN for the tests: wrappers that add the conservative CPU
# model where this host needs it (tests/vmm-cpu.sh), so that no test has to.
. tests/vmm-cpu.inc.sh
wrap_cpu VMM "$B/vmm" "$logs"
wrap_cpu VMM_ASAN "$B/asan/vmm" "$logs"

is_kvm_test() {
	case " ${KVM_TESTS:-} " in *" $1 "*) return 0 ;; esac
	return 1
}

# run_one TEST: run it here, print its line, add up the counts (and, inside
# L1, append them to $RUN_TALLY for the run outside).
run_one() {
	before="$passed $failed $skipped"
	run_test "$1"
	[ -z "${RUN_TALLY:-}" ] || [ "$where" = native ] || {
		set -- $before "$1"
		echo "$((passed - $1)) $((failed - $2)) $((skipped - $3)) $4" >>"$RUN_TALLY"
	}
}

run_test() {
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
# stream through. Inside, each finished test appends "PASSED FAILED SKIPPED
# TEST" to $RUN_TALLY, so what L1 finished counts even when L1 itself dies
# (QEMU's emulation has been seen to hang): then the tests it did not reach
# get one more L1, once, and whatever is still missing counts as failed.
run_nested() {
	RUN_TALLY=$logs/nested-tally
	: >"$RUN_TALLY"
	export RUN_TALLY
	for attempt in 1 2; do
		set -- $(for t in "$@"; do grep -q " $t\$" "$RUN_TALLY" || echo "$t"; done)
		[ $# -gt 0 ] || break
		[ $attempt = 1 ] || echo "nested: L1 failed; $# tests it did not finish get a fresh L1"
		start=$(date +%s)
		echo "nested: $# tests that need /dev/kvm run in a nested Linux under QEMU's emulation"
		sh scripts/nested-kvm/run.sh -t $(($# * timeout_s + 300)) -s "${NESTED_STALL:-120}" \
			-e B -e VMM -e VMM_ASAN -e TEST_TIMEOUT -e KVM_TESTS -e TEST_LOGS -e RUN_TALLY -e SANDBOX_SUBTESTS \
			-e HOME -e XDG_CACHE_HOME -e CI -- sh tests/run.sh --where nested "$@" 2>&1 |
			grep --line-buffered -v -E '^check: [0-9]+ passed|^failed:'
		echo "nested: done in $(($(date +%s) - start))s (L1 boot included)"
	done
	while read -r p f k t; do
		passed=$((passed + p))
		failed=$((failed + f))
		skipped=$((skipped + k))
		[ "$f" = 0 ] || failed_names="$failed_names $t"
	done <"$RUN_TALLY"
	for t in "$@"; do
		grep -q " $t\$" "$RUN_TALLY" && continue
		echo "FAIL $t [nested]: L1 never finished it"
		failed=$((failed + 1))
		failed_names="$failed_names $t"
	done
}

place=""
nested=""
for t in "$@"; do
	if ! is_kvm_test "$t"; then
		run_one "$t"
		continue
	fi
	# inside L1 (--where nested) everything runs where it is
	[ -n "$place" ] || { [ "$where" = native ] && place=$(kvm_place) || place=native; }
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
