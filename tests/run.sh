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
where=native queue=
if [ "${1:-}" = --where ]; then
	where=$2
	shift 2
fi
if [ "${1:-}" = --queue ]; then
	queue=$2
	shift 2
fi
# A guard against hangs, not a performance bound: inside an emulated L1 on
# a loaded 2-core host, disk-durable's 15 guest boots took over 900 s.
timeout_s=${TEST_TIMEOUT:-900}
nested_timeout_s=${TEST_TIMEOUT:-2400}
[ "$where" = native ] || timeout_s=$nested_timeout_s
. scripts/nested-kvm/place.sh

# $VMM and $VMM_ASAN for the tests: wrappers that add the conservative CPU
# model where this host needs it (tests/vmm-cpu.sh), so that no test has to.
. tests/vmm-cpu.inc.sh
wrap_cpu VMM "$B/vmm" "$logs"
wrap_cpu VMM_ASAN "$B/asan/vmm" "$logs"

. tests/python3.inc.sh
use_debian_python3 "$logs/python-bin"

is_kvm_test() {
	case " ${KVM_TESTS:-} " in *" $1 "*) return 0 ;; esac
	return 1
}

# run_one TEST: run it here, print its line, add up the counts (and, inside
# L1, append them to $RUN_TALLY for the run outside).
run_one() {
	before="$passed $failed $skipped"
	[ -z "${RUN_CURRENT:-}" ] || [ "$where" = native ] || echo "$1" >"$RUN_CURRENT"
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

# run_nested TEST...: L1 boots run this script on what is left of the batch,
# NESTED_WORKERS of them side by side (default: one per host core, at most
# 2), each taking the next test from the round's queue when it is done with
# one (a fixed share each left one L1 idle for 9 of a 54 min round); their
# lines stream through. Inside, each test's
# name goes to the worker's current file before it starts and "PASSED
# FAILED SKIPPED TEST" to its tally when it ends, so what L1 finished counts
# even when L1 itself dies (QEMU's emulation has been seen to hang), and the
# test it was running is known. A hang costs only that test: the rest get a
# fresh L1; the tests that were running during a hang run last, in an L1
# of their own with none beside it. A test that was running during
# NESTED_HANGS (2) hangs has had its chance and fails as such;
# NESTED_BOOTS bounds the rounds of boots.
nested_done() { cat "$logs"/nested-tally.* 2>/dev/null | grep -q " $1\$"; }

nested_boot() { # WORKER N: one L1 on the round's queue of N tests
	RUN_TALLY=$logs/nested-tally.$1 RUN_CURRENT=$logs/nested-current.$1 NESTED_WORKER=$1
	export RUN_TALLY RUN_CURRENT NESTED_WORKER
	sh scripts/nested-kvm/run.sh -t $(($2 * nested_timeout_s + 300)) -s "${NESTED_STALL:-120}" \
		-e B -e VMM -e VMM_ASAN -e TEST_TIMEOUT -e KVM_TESTS -e TEST_LOGS -e RUN_TALLY \
		-e RUN_CURRENT -e NESTED_WORKER -e SANDBOX_SUBTESTS -e HOME -e XDG_CACHE_HOME -e CI -- \
		sh tests/run.sh --where nested --queue "$logs/nested-queue" 2>&1 |
		grep --line-buffered -v -E '^check: [0-9]+ passed|^failed:'
}

# take_queued DIR: print the next test of a round's queue (a file per test,
# named by its place in the round) and claim it. rename(2) on the host's
# file system, which L1 reaches over 9p, lets only one L1 have it.
take_queued() {
	for f in "$1"/[0-9][0-9][0-9]; do
		[ -f "$f" ] && mv "$f" "$f.${NESTED_WORKER:-0}" 2>/dev/null || continue
		cat "$f.${NESTED_WORKER:-0}"
		return 0
	done
	return 1
}

run_nested() {
	rm -f "$logs"/nested-tally.*
	: >"$logs/nested-hangs"
	max_hangs=${NESTED_HANGS:-2}
	max_boots=${NESTED_BOOTS:-$(($# < 4 ? $# * max_hangs + 1 : 8))}
	workers=${NESTED_WORKERS:-$(nproc 2>/dev/null || echo 1)}
	[ "$workers" -le 2 ] || workers=2
	boot=0
	all="$*"
	while :; do
		# what is left, the tests that were running during a hang last:
		# every other test has its chance before them
		set -- $(for t in "$@"; do
			nested_done "$t" && continue
			n=$(grep -c -x "$t" "$logs/nested-hangs")
			[ "$n" -ge "$max_hangs" ] || echo "$n $t"
		done | sort -s -n -k1,1 | cut -d' ' -f2-)
		[ $# -gt 0 ] || break
		[ $boot -lt "$max_boots" ] || break
		boot=$((boot + 1))
		# Tests that were running when an L1 hung wait until the others
		# are done and then have a round to themselves, in one L1 with
		# none beside it: the hangs seen (QEMU's TCG) came under load.
		round=$(for t in "$@"; do grep -q -x "$t" "$logs/nested-hangs" || echo "$t"; done)
		w=$workers
		[ -n "$round" ] || { round="$*" w=1; }
		n_round=$(echo $round | wc -w)
		[ "$w" -le "$n_round" ] || w=$n_round
		start=$(date +%s)
		# only this round's workers may name a test they were running
		rm -f "$logs"/nested-current.*
		echo "nested: $n_round tests that need /dev/kvm run in $w nested Linux (L1) under QEMU's emulation (round $boot)"
		rm -rf "$logs/nested-queue"
		mkdir -p "$logs/nested-queue"
		i=0
		for t in $round; do
			i=$((i + 1))
			echo "$t" >"$logs/nested-queue/$(printf %03d $i)"
		done
		i=0
		while [ $i -lt "$w" ]; do
			nested_boot $i "$n_round" &
			i=$((i + 1))
		done
		wait
		echo "nested: round $boot done in $(($(date +%s) - start))s"
		for f in "$logs"/nested-current.*; do
			cur=$(cat "$f" 2>/dev/null)
			[ -n "$cur" ] && ! nested_done "$cur" || continue
			echo "$cur" >>"$logs/nested-hangs"
			echo "nested: L1 hung while running $cur"
		done
	done
	cat "$logs"/nested-tally.* 2>/dev/null >"$logs/nested-tally"
	while read -r p f k t; do
		passed=$((passed + p))
		failed=$((failed + f))
		skipped=$((skipped + k))
		[ "$f" = 0 ] || failed_names="$failed_names $t"
	done <"$logs/nested-tally"
	for t in $all; do
		nested_done "$t" && continue
		n=$(grep -c -x "$t" "$logs/nested-hangs")
		if [ "$n" -gt 0 ]; then
			echo "FAIL $t [nested]: L1 hung while running it ($n of $boot rounds)"
		else
			echo "FAIL $t [nested]: not run: $boot rounds of L1 boots, the limit, were used up by hangs"
		fi
		failed=$((failed + 1))
		failed_names="$failed_names $t"
	done
}

# inside L1, a round's queue: its tests one by one, all where they are
if [ -n "$queue" ]; then
	while t=$(take_queued "$queue"); do
		run_one "$t"
	done
fi

place=""
nested=""
for t in "$@"; do
	if ! is_kvm_test "$t"; then
		run_one "$t"
		continue
	fi
	# inside L1 (--where nested) everything runs where it is
	[ -n "$place" ] || { [ "$where" = native ] && place=$(kvm_place) || place=native; }
	case $(kvm_place_test "$place" "$t") in
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
