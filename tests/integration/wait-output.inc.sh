# wait-output.inc.sh — sourced by the tests that wait on a VM: waits that
# block instead of polling.
#
# A poll loop (grep, date and sleep every second or fifth of a second)
# starts processes all the time. Inside a nested L1 each one costs about
# 0.1 s of the one emulated CPU that also runs the guest: a loop polling
# every 0.2 s made a Debian boot there take 36 s instead of 20.

# wait_output [-E] [-n N] FILE PATTERN PID SECS: until N lines (default 1)
# of FILE (a console still being written) match PATTERN, grep's basic
# regular expression or with -E its extended one. Returns 0 then, 1 when
# PID exits first, 124 after SECS seconds. tail -F follows FILE (inotify:
# nothing runs while nothing is written) and grep stops at the N-th match.
wait_output() {
	wo_opt='' wo_n=1
	while :; do
		case $1 in
		-E) wo_opt=-E && shift ;;
		-n) wo_n=$2 && shift 2 ;;
		*) break ;;
		esac
	done
	[ "$4" -gt 0 ] || return 124
	wo_fifo=${1%/*}/.follow.${1##*/}
	[ -p "$wo_fifo" ] || mkfifo "$wo_fifo" || return 2
	# -F: FILE may not be there yet (QEMU's -serial file: makes it late)
	tail -n +1 -F --pid="$3" "$1" >"$wo_fifo" 2>/dev/null &
	wo_tail=$!
	# grep in the foreground, not in $(...): waiting for it, the shell
	# reaps PID when it exits, and only then does tail see it gone
	timeout "$4" grep -ac -m "$wo_n" $wo_opt -e "$2" <"$wo_fifo" >"$wo_fifo.n" &&
		wo_rc=0 || wo_rc=$?
	kill "$wo_tail" 2>/dev/null || :
	wait "$wo_tail" 2>/dev/null || :
	[ "$wo_rc" != 124 ] || return 124
	read -r wo_got <"$wo_fifo.n" || wo_got=0
	[ "${wo_got:-0}" -lt "$wo_n" ] || return 0
	# PID exited: tail's last read may have raced its last words
	wo_got=$(grep -ac $wo_opt -e "$2" "$1" 2>/dev/null)
	[ "${wo_got:-0}" -ge "$wo_n" ]
}

# wait_exit PID SECS: until PID (a child of this shell) exits; 0 then, 124
# after SECS seconds. The shell reaps the child while it waits for tail,
# which checks PID once a second.
wait_exit() {
	[ "$2" -gt 0 ] || return 124
	kill -0 "$1" 2>/dev/null || return 0
	timeout "$2" tail -f --pid="$1" /dev/null 2>/dev/null && return 0
	[ $? != 124 ] || return 124
}
