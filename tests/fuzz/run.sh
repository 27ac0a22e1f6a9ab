#!/bin/sh
# run.sh SECONDS TARGET... — run libFuzzer targets (built by `make fuzz`)
# one after the other, each for SECONDS, niced (CPU is shared). New corpus
# entries go to build/fuzz/corpus/NAME (the seeds in tests/fuzz/corpus/NAME
# are read, never written); crashes to build/fuzz/crashes/NAME-*. Prints
# one line per target: executions/s, edges covered, crashes. Exit status:
# 1 when any target crashed.
set -u
secs=$1
shift
out=build/fuzz
status=0
for t in "$@"; do
	name=$(basename "$t")
	mkdir -p "$out/corpus/$name" "$out/crashes" "$out/logs"
	log=$out/logs/$name.log
	nice -n 10 "$t" -max_total_time="$secs" -print_final_stats=1 -timeout=10 \
		-rss_limit_mb=2048 -artifact_prefix="$out/crashes/$name-" \
		"$out/corpus/$name" "tests/fuzz/corpus/$name" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | sed 's/cov: //')
	if [ "$rc" -ne 0 ]; then
		status=1
		echo "CRASH $name (exit $rc): $(grep -m1 -E 'ERROR|runtime error' "$log")"
		echo "      reproducer: $(ls -t "$out/crashes/$name-"* 2>/dev/null | head -n 1)"
	else
		echo "ok    $name: ${execs:-?} runs in ${secs}s, ${rate:-?} exec/s, cov ${cov:-?} edges"
	fi
done
exit $status
