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

# scan_dmesg_and_poweroff [EXTRA]: print the guest's kernel error messages
# as "DMESG-ERROR ..." lines and their count as ERRORS=N (EXTRA: an extended
# regexp of more messages that count), then `poweroff -f`; the VMM's exit
# status lands in $status. "panic=-1" is on the command line: look for the
# messages, not the word.
scan_dmesg_and_poweroff() {
	errors="emulation failure|BUG:|Oops|Kernel panic|WARNING:|Call Trace${1:+|$1}"
	echo "dmesg | grep -iE '$errors' | sed 's/^/DMESG-ERROR /'; echo ERRORS=\$(dmesg | grep -ciE '$errors')" >&3
	wait_for "ERRORS=[0-9]"
	echo 'poweroff -f' >&3
	status=0
	wait $pid || status=$?
}
