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

. tests/integration/wait-output.inc.sh

# Wait until the serial output matches $1; fail when the VM exits first or
# after $limit seconds since $t0.
wait_for() {
	wait_output "$work/out" "$1" "$pid" $((limit - ($(date +%s) - t0))) && return
	[ $? != 124 ] || fail "no '$1' in ${limit}s"
	fail "exited before '$1'"
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
	wait_exit "$pid" 60 || kill $pid 2>/dev/null
	wait $pid
	pid=
	exec 3>&-
}
