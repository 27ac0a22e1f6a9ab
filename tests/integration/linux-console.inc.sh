# linux-console.inc.sh — sourced by the Linux guest tests that type commands
# into the guest's serial console (a FIFO on the VMM's stdin) and read its
# output file. The caller sets tmp (output in $tmp/out), pid (the VMM), t0
# (start, date +%s), limit (seconds) and optionally who (default vmm).

# wait_for PATTERN: until grep finds PATTERN in the output; the test fails
# when the VMM exits first or after $limit seconds.
wait_for() {
	while ! grep -q "$1" "$tmp/out"; do
		kill -0 $pid 2>/dev/null || { tail -20 "$tmp/out"; echo "FAIL: ${who:-vmm} exited before '$1'"; exit 1; }
		[ $(($(date +%s) - t0)) -lt "$limit" ] || { tail -20 "$tmp/out"; echo "FAIL: no '$1' in ${limit}s"; exit 1; }
		sleep 0.1
	done
}
