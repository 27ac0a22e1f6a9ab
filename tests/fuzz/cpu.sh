#!/bin/sh
# cpu.sh MINUTES UNTIL TARGET... — run libFuzzer targets (built by `make
# fuzz`, build/fuzz/tests/fuzz/NAME) one at a time at nice 19, each until
# its accumulated CPU time (utime + stime of the fuzzer process, not wall
# time) reaches MINUTES, or until UNTIL (a `date -d` time, e.g. 19:25)
# stops everything. Not part of `make check`: the issue's "≥ 10 CPU-minutes
# per target" on a shared machine, where only idle CPU may be used.
#
# The CPU seconds a target has had so far are kept in
# build/fuzz/cpu/NAME (one number, added to by every run); the corpus grows
# in build/fuzz/corpus/NAME as with run.sh; crashes go to
# build/fuzz/crashes/NAME-*. Creating build/fuzz/cpu/STOP ends the
# current run cleanly (its CPU time still counted) and the script. One summary line per run goes to
# build/fuzz/cpu/runs.log: CPU seconds, executions, exec/s (per CPU
# second), edges (cov), exit status.
set -u
minutes=$1
until=$(date -d "$2" +%s)
shift 2
out=build/fuzz
tck=$(getconf CLK_TCK)
mkdir -p "$out/cpu" "$out/crashes" "$out/logs"

# utime + stime of PID in seconds (fields 14 and 15 of /proc/PID/stat;
# the command name in field 2 has no spaces for our binaries).
cpu_of() {
	awk -v t="$tck" '{ printf "%d\n", ($14 + $15) / t }' "/proc/$1/stat" 2>/dev/null
}

for t in "$@"; do
	name=$(basename "$t")
	ledger=$out/cpu/$name
	done_s=$(cat "$ledger" 2>/dev/null || echo 0)
	want=$((minutes * 60 - done_s))
	[ "$want" -gt 0 ] || continue
	[ "$(date +%s)" -lt "$until" ] && [ ! -e "$out/cpu/STOP" ] || break
	mkdir -p "$out/corpus/$name"
	log=$out/logs/$name.cpu.log
	nice -n 19 "$t" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$out/crashes/$name-" \
		"$out/corpus/$name" "tests/fuzz/corpus/$name" >"$log" 2>&1 &
	pid=$!
	used=0
	while kill -0 "$pid" 2>/dev/null; do
		sleep 5
		used=$(cpu_of "$pid" || echo "$used")
		used=${used:-0}
		if [ "$used" -ge "$want" ] || [ "$(date +%s)" -ge "$until" ] ||
			[ -e "$out/cpu/STOP" ]; then
			kill -INT "$pid" 2>/dev/null
			break
		fi
	done
	wait "$pid"
	rc=$?
	echo $((done_s + used)) >"$ledger"
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | sed 's/cov: //')
	rate=$([ "$used" -gt 0 ] && echo $((${execs:-0} / used)) || echo "?")
	echo "$(date -u +%H:%M) $name cpu ${used}s (total $((done_s + used))s)" \
		"execs ${execs:-?} exec/cpu-s $rate cov ${cov:-?} rc $rc" | tee -a "$out/cpu/runs.log"
done
