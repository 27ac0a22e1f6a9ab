#!/bin/sh
# sandbox.sh — -sandbox on, -runas, -chroot (vmm/sandbox.c).
# 1. build/tests/vmm-test (vmm plus test-only monitor commands) under
#    -sandbox on: the monitor works; a forbidden call (personality) ends the
#    VMM with status 159 and a message naming the call; without -sandbox
#    the same command just answers.
# 2. spawn=deny stops a fork (named "clone"); the default spawn=allow lets it.
# 3. As root: -runas nobody -chroot DIR: the running VMM's uid, gid and
#    root folder are the user's and DIR's; a reset reloads -kernel there.
# 4. A representative set of existing tests through a wrapper that adds
#    -sandbox on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny
#    (SANDBOX_SUBTESTS overrides it; `make check-sandbox` runs every
#    integration test that starts vmm, Linux ones included;
#    linux-sandbox.sh, in `make check-linux`, runs a Linux guest on a TAP).
set -u
B=${B:-build}
VMM=${VMM:-$B/vmm}
VMM_ASAN=${VMM_ASAN:-$B/asan/vmm}
T=$B/tests/vmm-test
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
command -v python3 >/dev/null || { echo "skipped: no python3"; exit 77; }
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# monitor_session OPTIONS... : start vmm-test paused with OPTIONS and a
# monitor; $cmds (lines) go to it; status in $rc, stderr+stdout in $tmp/out.
monitor_session() {
	rm -f "$tmp/mon"
	timeout 60 "$T" -m 64 -nographic -S -monitor "unix:$tmp/mon,server,nowait" \
		-kernel "$B/tests/guest/hello.elf" "$@" </dev/null >"$tmp/out" 2>&1 &
	pid=$!
	PYTHONPATH=tests/integration python3 - "$tmp/mon" "$cmds" >"$tmp/mon.out" 2>&1 <<'PY'
import sys
from core_mon import connect, cmd, send
connect(sys.argv[1])
for line in sys.argv[2].splitlines():
    try:
        print(cmd(line))
    except (SystemExit, OSError) as e:
        print("monitor gone:", e)
        break
PY
	wait $pid
	rc=$?
	pid=
}

# 1. a forbidden call
cmds='info status
info sandbox-violate
quit'
monitor_session -sandbox on
grep -q 'VM status' "$tmp/mon.out" || fail "monitor did not work under the sandbox: $(cat "$tmp/mon.out")"
[ $rc -eq 159 ] || fail "forbidden call: status $rc, expected 159"
grep -q 'vmm: sandbox: forbidden system call personality' "$tmp/out" ||
	fail "no message naming the call: $(cat "$tmp/out")"
monitor_session
grep -q 'personality: ' "$tmp/mon.out" || fail "without -sandbox the call did not answer"
[ $rc -ne 159 ] || fail "killed without -sandbox"
echo "forbidden call: ok"

# 2. spawn
cmds='info sandbox-spawn
quit'
monitor_session -sandbox on,spawn=deny
[ $rc -eq 159 ] && grep -q 'forbidden system call clone' "$tmp/out" ||
	fail "spawn=deny let a fork through (status $rc): $(cat "$tmp/out")"
monitor_session -sandbox on
grep -q 'forked: yes' "$tmp/mon.out" || fail "spawn=allow (default) stopped a fork: $(cat "$tmp/out")"
echo "spawn: ok"

# 3. -runas and -chroot (root only)
if [ "$(id -u)" -eq 0 ] && getent passwd nobody >/dev/null; then
	mkdir "$tmp/jail"
	# not under timeout: $pid must be the VMM itself (the trap ends it)
	"$VMM" -m 64 -nographic -S -monitor none -runas nobody -chroot "$tmp/jail" \
		-sandbox on -kernel "$B/tests/guest/hello.elf" </dev/null >"$tmp/out" 2>&1 &
	pid=$!
	uid=
	for _ in $(seq 600); do
		uid=$(awk '/^Uid:/ {print $2, $3, $4, $5}' /proc/$pid/status 2>/dev/null)
		[ "$uid" = "65534 65534 65534 65534" ] && break
		sleep 0.1
	done
	gid=$(awk '/^Gid:/ {print $2}' /proc/$pid/status 2>/dev/null)
	root=$(readlink /proc/$pid/root)
	[ "$uid" = "65534 65534 65534 65534" ] || fail "-runas nobody: Uid $uid"
	[ "$gid" = "$(id -g nobody)" ] || fail "-runas nobody: Gid $gid"
	[ "$root" = "$(cd "$tmp/jail" && pwd -P)" ] || fail "-chroot: root is $root"
	kill $pid
	wait $pid 2>/dev/null
	pid=
	"$VMM" -runas no-such-user-here -kernel "$B/tests/guest/hello.elf" </dev/null 2>"$tmp/err"
	grep -q "no user 'no-such-user-here'" "$tmp/err" || fail "-runas with an unknown user: $(cat "$tmp/err")"
	# A reset after -kernel reads the kernel again, from the file vmm
	# opened before it dropped to nobody in the jail (its path is gone).
	timeout 60 "$VMM" -m 64 -nographic -serial stdio -monitor none -runas nobody \
		-chroot "$tmp/jail" -sandbox on -device isa-debug-exit,iobase=0xf4,iosize=4 \
		-kernel "$B/tests/guest/control.elf" -append triple=1 </dev/null >"$tmp/out" 2>&1
	grep -q 'control: boot 1' "$tmp/out" ||
		fail "no -kernel reload at reset under -runas/-chroot: $(tail -5 "$tmp/out")"
	echo "runas/chroot: ok"
else
	echo "runas/chroot: not root, not checked"
fi

# 4. existing tests, sandboxed
# LeakSanitizer's exit check stops the world with ptrace from a forked
# tracer: no sandbox allows that, so the ASan build runs without it here.
wrap() {
	case $2 in /*) real=$2 ;; *) real=$PWD/$2 ;; esac
	printf '#!/bin/sh\nASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0 exec "%s" -sandbox on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny "$@"\n' \
		"$real" >"$tmp/$1"
	chmod +x "$tmp/$1"
}
wrap vmm "$VMM"
wrap vmm-asan "$VMM_ASAN"
for t in ${SANDBOX_SUBTESTS:-core-hello core-monitor control-qmp control-gdb control-exit payloads virtio-blk-kit virtio-net-kit seabios-reset seabios-virtio}; do
	B=$B VMM=$tmp/vmm VMM_ASAN=$tmp/vmm-asan sh "tests/integration/$t.sh" >"$tmp/log" 2>&1
	rc=$?
	if [ $rc -eq 0 ]; then
		echo "ok   $t (-sandbox on)"
	elif [ $rc -eq 77 ]; then
		# it cannot run on this host at all (its own run says so too)
		echo "skip $t (-sandbox on): $(tail -n 1 "$tmp/log")"
	else
		fail "$t under -sandbox on:"
		tail -n 30 "$tmp/log"
	fi
done
[ $fails -eq 0 ] || exit 1
echo "sandbox ok"
