#!/bin/sh
# run.sh TEST... — run test programs and print one summary line.
#
# A unit test is a libcheck binary: its "Checks: N, Failures: F, Errors: E"
# line is added up. Any other test counts as one and reports by exit status:
# 0 passed, 77 skipped (it must print why), anything else failed.
# Output of each test goes to $B/test-logs/NAME.log; failures print their log tail.
set -u
B=${B:-build}
logs=$B/test-logs
mkdir -p "$logs"
passed=0 failed=0 skipped=0
failed_names=""
timeout_s=${TEST_TIMEOUT:-900}

for t in "$@"; do
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
			echo "FAIL $t ($summary, exit $rc, ${secs}s)"
			grep -E ':[EF]:' "$log" | head -n 20
			tail -n 15 "$log"
		else
			echo "ok   $t ($n checks, ${secs}s)"
		fi
	elif [ "$rc" -eq 0 ]; then
		passed=$((passed + 1))
		echo "ok   $t (${secs}s)"
	elif [ "$rc" -eq 77 ]; then
		skipped=$((skipped + 1))
		echo "SKIP $t: $(tail -n 1 "$log")"
	else
		failed=$((failed + 1))
		failed_names="$failed_names $t"
		[ "$rc" -eq 124 ] && echo "FAIL $t (timed out after ${timeout_s}s)" || echo "FAIL $t (exit $rc, ${secs}s)"
		tail -n 25 "$log"
	fi
done

[ -z "$failed_names" ] || echo "failed:$failed_names"
echo "check: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
