#!/bin/sh
# core-hello.sh — hello.elf under build/vmm (and the ASan build): output and
# isa-debug-exit status; bad CLI and a non-kernel -kernel fail with one line.
set -u
VMM=${VMM:-build/vmm}
VMM_ASAN=${VMM_ASAN:-build/asan/vmm}
B=${B:-build}
HELLO=$B/tests/guest/hello.elf
fail() { echo "FAIL: $*"; exit 1; }

# The CLI needs no KVM.
"$VMM" -m 12Q >/dev/null 2>err.$$ && fail "-m 12Q accepted"
grep -q '^vmm: -m: ' err.$$ || fail "-m error does not name the option: $(cat err.$$)"
"$VMM" -kernel README.md -m 64 </dev/null >/dev/null 2>err.$$; rc=$?
[ $rc -eq 1 ] || { rm -f err.$$; [ -e /dev/kvm ] || { echo "skipped: no /dev/kvm"; exit 77; }; fail "-kernel README.md exited $rc"; }
rm -f err.$$

[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }

for vmm in "$VMM" "$VMM_ASAN"; do
	[ -x "$vmm" ] || fail "$vmm not built"
	out=$(timeout 60 "$vmm" -m 64 -nographic -device isa-debug-exit,iobase=0xf4,iosize=4 \
		-kernel "$HELLO" </dev/null 2>&1)
	rc=$?
	echo "$out"
	[ $rc -eq 1 ] || fail "$vmm: exit status $rc, expected 1 ((0 << 1) | 1)"
	echo "$out" | grep -q 'hello from guest' || fail "$vmm: no greeting"
	! echo "$out" | grep -qE 'Sanitizer|runtime error' || fail "$vmm: sanitizer report"
done

# -m 5G: RAM above 4 GiB.
out=$(timeout 60 "$VMM" -m 5G -nographic -device isa-debug-exit,iobase=0xf4,iosize=4 \
	-kernel "$HELLO" </dev/null 2>&1)
rc=$?
[ $rc -eq 1 ] || fail "-m 5G: exit status $rc: $out"
echo "$out" | grep -q 'hello from guest' || fail "-m 5G: no greeting"

# Without isa-debug-exit the guest's exit port is unclaimed: the VMM logs it
# and keeps running (the payload then halts), so only the timeout ends it.
timeout 5 "$VMM" -m 64 -nographic -kernel "$HELLO" </dev/null >out.$$ 2>&1
rc=$?
grep -q 'unclaimed io address 0xf4' out.$$ || { cat out.$$; rm -f out.$$; fail "no unclaimed-port message"; }
rm -f out.$$
[ $rc -eq 124 ] || fail "VMM stopped ($rc) when the guest touched an unclaimed port"
echo "ok"
