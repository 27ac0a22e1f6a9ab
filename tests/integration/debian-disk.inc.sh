# debian-disk.inc.sh — sourced by tests/integration/debian-disk.sh and
# bench/debian-boot.sh: booting scripts/debian-disk.sh's Debian 12 disk
# under an emulator with its serial console on a FIFO and a QMP socket.
# The sourcing script sets work (a scratch folder) and limit (seconds);
# boot sets side, pid, t0 and ready_s and leaves fd 3 on the console.

# Wait until the serial output matches $1; fail when the VMM exits first,
# when the firmware found nothing to boot, or after $limit seconds since $t0.
wait_for() {
	while ! grep -aq "$1" "$work/out"; do
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "FAIL: $side exited before '$1'"
			tail -c 3000 "$work/out" | cat -v; cat "$work/err"; exit 1
		fi
		if grep -aq "No bootable device" "$work/out"; then
			echo "FAIL: $side: the firmware found no bootable disk"; exit 1
		fi
		if [ $(($(date +%s) - t0)) -ge "$limit" ]; then
			echo "FAIL: $side: no '$1' in ${limit}s"; tail -c 3000 "$work/out" | cat -v; exit 1
		fi
		sleep 1
	done
}

# boot SIDE DISK COMMAND...: start it on DISK with a serial console on
# stdio (fed from a FIFO) and a QMP socket; wait for DEBIAN-READY with the
# slirp DHCP address and for root's shell, pid 1 being systemd. Sets ready_s.
boot() {
	side=$1 disk=$2
	shift 2
	rm -f "$work/in" "$work/out" "$work/err" "$work/qmp"
	mkfifo "$work/in"
	t0=$(date +%s)
	"$@" -m 512 -hda "$disk" -nographic -serial stdio -monitor none \
		-qmp unix:"$work/qmp",server=on,wait=off <"$work/in" >"$work/out" 2>"$work/err" &
	pid=$!
	exec 3>"$work/in"
	wait_for "DEBIAN-READY"
	ready_s=$(($(date +%s) - t0))
	grep -aq "DEBIAN-READY 10\.0\.2\.15/" "$work/out" || {
		echo "FAIL: $side: no DHCP address 10.0.2.15 on the default NIC:"
		grep -a "DEBIAN-READY" "$work/out" | cat -v; exit 1
	}
	echo "debian-disk: $side: DEBIAN-READY 10.0.2.15 in $ready_s s"
	# agetty flushes what was typed before it opened the line: wait for
	# the autologin shell's prompt first.
	wait_for "root@debian-vmm:~# "
	ask SYSTEMD 'readlink /proc/1/exe'
	grep -aq "SYSTEMD: .*systemd END" "$work/out" || {
		echo "FAIL: $side: pid 1 is not systemd"; grep -a "SYSTEMD: " "$work/out"; exit 1
	}
}

# ask WHAT COMMAND: run COMMAND in root's shell on ttyS0; its output is
# awaited as "WHAT: ...END" (the echoed command line holds WHAT%s, not WHAT:;
# not at the line's start: bash's bracketed-paste escape precedes it).
ask() {
	printf '%s\n' "printf '%s: %s END\\n' $1 \"\$($2)\"" >&3
	wait_for "$1: .* END"
}

