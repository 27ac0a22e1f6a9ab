# demo-guest.inc.sh — sourced by the tests that boot make demo's image
# (Debian's kernel, a busybox shell on the serial console) and talk to its
# shell: the VMM's stdin is a FIFO on fd 3, its output $work/out, stderr
# $work/err. The caller sets work, pid (the VMM), t0 (start, date +%s),
# limit (seconds) and side (vmm or qemu, for messages). A test may define
# its own fail after sourcing this.

fail() {
	echo "FAIL: $side: $*"
	tail -c 3000 "$work/out" | cat -v
	cat "$work/err"
	exit 1
}

# Wait until the serial output matches $1; fail when the VM exits first or
# after $limit seconds since $t0.
wait_for() {
	while ! grep -aq "$1" "$work/out"; do
		kill -0 "$pid" 2>/dev/null || fail "exited before '$1'"
		[ $(($(date +%s) - t0)) -lt "$limit" ] || fail "no '$1' in ${limit}s"
		sleep 1
	done
}

# ask WHAT COMMAND: run COMMAND in the guest's shell and print its answer
# (the guest prints "WHAT: ... END"; the echoed command holds WHAT%s).
ask() {
	printf '%s\n' "printf '%s: %s END\\n' $1 \"\$($2)\"" >&3
	wait_for "^$1: .* END"
	grep -a "^$1: .* END" "$work/out" | tail -n 1 | tr -d '\r' | sed "s/^$1: //; s/ END.*//"
}

# power_off: `poweroff -f` in the guest; the VM gets 60 s to exit before it
# is killed; pid and the console's fd 3 are closed.
power_off() {
	echo "poweroff -f" >&3
	t1=$(date +%s)
	while kill -0 $pid 2>/dev/null && [ $(($(date +%s) - t1)) -lt 60 ]; do sleep 1; done
	kill $pid 2>/dev/null
	wait $pid
	pid=
	exec 3>&-
}
