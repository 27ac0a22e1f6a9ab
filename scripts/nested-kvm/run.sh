#!/bin/sh
# run.sh — run a shell command where /dev/kvm works, on a machine without it:
# inside an L1 Linux guest under QEMU's software emulation (TCG), whose
# `-cpu max` emulates AMD SVM with nested paging, so kvm_amd loads there.
# The host's / is shared over virtio-9p and the command runs chrooted into it,
# in the current folder, so build outputs run unchanged. Build outside, run
# inside: everything in L1 is emulated (5-10x slower CPU-bound work).
#
#   scripts/nested-kvm/run.sh [-t SECS] [-T PATHS] [-e VAR]... -- COMMAND...
#     -t SECS   stop L1 after SECS seconds (exit 124); default 0 = no limit
#     -s SECS   stop L1 when its heartbeat stops for SECS seconds (124); default 60
#     -T PATHS  comma-separated paths that get an empty tmpfs inside L1
#               (AF_UNIX sockets and FIFOs fail with ENXIO on 9p); default /tmp.
#               The current folder, its git checkout and the runner's cache
#               stay visible even where they lie below one of them
#     -e VAR    pass the host's VAR into the command (repeatable; PATH always)
#
# The command's output (stdout and stderr together) streams to stdout. Exit
# status: the command's; 124 on timeout; 125 when L1 failed before the
# command reported one (its last console lines go to stderr).
# Environment: NESTED_MEM (default 4G), NESTED_SMP (1), NESTED_KEEP=1 keeps
# the run folder.
#
# One vCPU by default: with two, QEMU 7.2's multi-threaded TCG hung L1 under
# load (both vCPUs looping through the kernel's INT3 handler while KVM's
# static keys were being patched: cross-vCPU self-modifying code, 2 of 2
# boots at one test); single-vCPU L1s have not hung. tests/run.sh gets its
# parallelism from one L1 per host core instead.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
timeout_s=0 stall_s=60 tmpfs=/tmp vars=PATH
while getopts "t:s:T:e:" o; do
	case $o in
	t) timeout_s=$OPTARG ;;
	s) stall_s=$OPTARG ;;
	T) tmpfs=$OPTARG ;;
	e) vars="$vars $OPTARG" ;;
	*) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 125 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "nested-kvm: no command" >&2; exit 125; }
command -v qemu-system-x86_64 >/dev/null ||
	{ echo "nested-kvm: qemu-system-x86_64 is not installed" >&2; exit 125; }

img=$(sh "$here/mkimage.sh") || exit 125
runs=${XDG_CACHE_HOME:-$HOME/.cache}/vmm/nested/runs
mkdir -p "$runs"
run=$(mktemp -d "$runs/run.XXXXXX")
qpid= tpid=
cleanup() {
	[ -z "$qpid" ] || kill "$qpid" 2>/dev/null || true
	[ -z "$tpid" ] || { pkill -P "$tpid" 2>/dev/null; kill "$tpid" 2>/dev/null; } || true
	[ "${NESTED_KEEP:-0}" = 1 ] || rm -rf "$run"
}
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM HUP

# The command, with the chosen variables quoted for sh.
quote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
{
	for v in $vars; do
		eval "isset=\${$v+1}"
		[ -z "$isset" ] || { eval "val=\$$v"; printf 'export %s=%s\n' "$v" "$(quote "$val")"; }
	done
	printf 'cd %s || exit 125\n' "$(quote "$PWD")"
	printf 'exec /bin/sh -c %s\n' "$(quote "$*")"
} >"$run/cmd.sh"
: >"$run/out"
[ -s "$img/kallsyms" ] || : >"$run/want-kallsyms"
# What L1's tmpfs mounts must not hide (init binds these back on top).
cache_root=${XDG_CACHE_HOME:-$HOME/.cache}/vmm
{
	printf '%s\n' "$PWD" "$(pwd -P)" "$cache_root"
	git rev-parse --show-toplevel 2>/dev/null || true
} | grep '^/' | sort -u >"$run/keep"

# Where L1's vCPUs are (QEMU's monitor), for the report of a hung L1.
l1_registers() {
	python3 - "$run/mon" "$img/kallsyms" <<'EOF'
import bisect, re, socket, sys, time
syms = []
try:
    for line in open(sys.argv[2]):
        addr, _, name = line.split()[:3]
        syms.append((int(addr, 16), name))
    syms.sort()
except (OSError, ValueError):
    pass
def symbolize(m):
    addr = int(m.group(1), 16)
    i = bisect.bisect_right(syms, (addr, "~")) - 1
    if i < 0 or addr - syms[i][0] > 0x100000:
        return m.group(0)
    return "%s (%s+0x%x)" % (m.group(0), syms[i][1], addr - syms[i][0])
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"info registers -a\n")
time.sleep(1)
s.setblocking(False)
out = b""
try:
    while True:
        out += s.recv(65536)
except BlockingIOError:
    pass
for line in out.decode(errors="replace").splitlines():
    if line.startswith(("CPU#", "RAX", "RIP", "CS ")):
        print(re.sub(r"RIP=([0-9a-f]{16})", symbolize, line))
EOF
}

# watchdog: stop L1 after timeout_s in all, or when its heartbeat (a file
# L1's init rewrites every 5 s) is older than stall_s: L1's emulation has
# hung and its own timeouts will never fire (seen with QEMU 7.2 under load).
watchdog() {
	t=0
	while kill -0 "$qpid" 2>/dev/null; do
		sleep 5
		t=$((t + 5))
		beat=$(stat -c %Y "$run/heartbeat" 2>/dev/null || echo 0)
		[ "$beat" != 0 ] || beat=$((start + 120)) # boot: give it 2 minutes
		if [ "$timeout_s" != 0 ] && [ $t -ge "$timeout_s" ]; then
			echo "after ${timeout_s}s in all" >"$run/timedout"
		elif [ $(($(date +%s) - beat)) -ge "$stall_s" ]; then
			echo "hung: no heartbeat for ${stall_s}s" >"$run/timedout"
			l1_registers >"$run/hang-registers" 2>&1
		else
			continue
		fi
		kill "$qpid"
		return
	done
}

# tsc_early_khz: L1 gets the host's TSC as it is, but calibrates its rate
# badly on a busy host (tsc-khz.c says more).
khz=$("$img/tsc-khz") || exit 125
# tsc=reliable: without constant_tsc the guest would fall back to the HPET
# and every clock read would exit (~15x slower clock_gettime).
qemu-system-x86_64 -accel "tcg,thread=${NESTED_TCG_THREAD:-multi}" \
	-cpu max -smp "${NESTED_SMP:-1}" -m "${NESTED_MEM:-4G}" \
	-nodefaults -no-reboot -display none -monitor "unix:$run/mon,server,nowait" \
	-kernel "$img/kernel" -initrd "$img/initrd.cpio.gz" \
	-append "console=ttyS0 quiet panic=-1 nokaslr no_timer_check tsc=reliable tsc_early_khz=$khz nested.run=$run nested.tmpfs=$tmpfs" \
	-serial "file:$run/console.log" \
	-virtfs local,path=/,mount_tag=host0,security_model=none,multidevs=remap \
	</dev/null 2>"$run/qemu.stderr" &
qpid=$!
start=$(date +%s)
watchdog >/dev/null 2>&1 & # must not hold our stdout: callers read it to EOF
tpid=$!
tail -f -n +1 --pid="$qpid" "$run/out" 2>/dev/null || true
qrc=0
wait "$qpid" || qrc=$?
qpid=
if [ -n "$tpid" ]; then
	pkill -P "$tpid" 2>/dev/null || true
	kill "$tpid" 2>/dev/null || true
	wait "$tpid" 2>/dev/null || true
	tpid=
fi

[ ! -s "$run/kallsyms" ] || mv "$run/kallsyms" "$img/kallsyms" 2>/dev/null || true

if [ -e "$run/timedout" ]; then
	echo "nested-kvm: L1 stopped $(cat "$run/timedout")" >&2
	sed 's/^/nested-kvm: L1 hung at: /' "$run/hang-registers" >&2 2>/dev/null || true
	# the kernel's own word on it (soft lockups, RCU stalls) if it had one
	tail -n 12 "$run/console.log" 2>/dev/null | sed 's/^/nested-kvm: L1: /' >&2 || true
	rc=124
elif [ -s "$run/rc" ]; then
	rc=$(cat "$run/rc")
else
	echo "nested-kvm: L1 ended without the command's status (qemu exit $qrc); last lines:" >&2
	grep -v '^$' "$run/qemu.stderr" 2>/dev/null | sed 's/^/nested-kvm: qemu: /' >&2 || true
	tail -n 20 "$run/console.log" 2>/dev/null | sed 's/^/nested-kvm: L1: /' >&2 || true
	rc=125
fi
cleanup
exit "$rc"
