#!/bin/sh
# The nested runner (scripts/nested-kvm/, tests/run.sh) on any machine:
# VMM_TEST_NESTED=always sends KVM tests into a Linux guest under QEMU's
# emulation. A real guest test passes there, reported as [nested]; a test
# that fails inside L1 is counted as failed outside; /dev/kvm opens inside;
# a skip inside stays a skip; when L1 dies mid-batch, what it finished still
# counts, the tests after the one L1 hung in run (in the other L1 or a fresh
# one), the one it hung in a round alone after them, and a test that hangs
# L1 twice fails, named. This keeps the path machines without /dev/kvm
# depend on tested on machines that have it.
set -u
B=${B:-build}
fail() { echo "FAIL: $*"; exit 1; }
command -v qemu-system-x86_64 >/dev/null || fail "qemu-system-x86_64 missing (check group)"
dpkg-query -W -f '${Status}' linux-image-amd64 2>/dev/null | grep -q "ok installed" ||
	fail "linux-image-amd64 missing (scripts/install-deps.sh nested)"

# Scratch tests live under the build folder: L1 sees it through 9p, while
# its /tmp is a tmpfs of its own.
dir=$B/nested-runner
rm -rf "$dir"
mkdir -p "$dir"
cat >"$dir/kvm-opens.sh" <<'EOF'
#!/bin/sh
exec 3<>/dev/kvm || { echo "no /dev/kvm inside"; exit 1; }
echo "kvm opened in $(uname -r)"
# L1's clock against the host's: each file holds L1's time, and the host's
# 9p server stamps it with the host's.
date +%s >"$(dirname "$0")/clock.0"; sleep 4; date +%s >"$(dirname "$0")/clock.1"
readlink -f "$(command -v python3)" >"$(dirname "$0")/python3"
EOF
cat >"$dir/fails.sh" <<'EOF'
#!/bin/sh
echo "a deliberate failure"; exit 1
EOF
cat >"$dir/skips.sh" <<'EOF'
#!/bin/sh
echo "skipped: deliberately"; exit 77
EOF
# Stops the heartbeat of L1's init (every /init process but pid 1): L1 then
# looks hung, as when QEMU's emulation hangs, and the watchdog must act.
cat >"$dir/hangs-l1.sh" <<'EOF'
#!/bin/sh
[ -n "${VMM_NESTED_L1:-}" ] || { echo "not in L1"; exit 1; }
for p in $(pgrep -f /init); do [ "$p" = 1 ] || kill -STOP "$p"; done
sleep 600
EOF
chmod +x "$dir"/*.sh
kvm_tests="$dir/kvm-opens.sh $dir/fails.sh $dir/hangs-l1.sh $dir/skips.sh tests/integration/payloads.sh"
out=$dir/out
TEST_LOGS=$dir/logs KVM_TESTS="$kvm_tests" VMM_TEST_NESTED=always \
	NESTED_STALL=20 TEST_TIMEOUT=120 sh tests/run.sh $kvm_tests tests/integration/regdb-dump.sh >"$out" 2>&1
rc=$?
cat "$out"

[ $rc -ne 0 ] || fail "a failing nested test did not fail the run"
grep -q "^ok   $dir/kvm-opens.sh \[nested\]" "$out" || fail "/dev/kvm did not open in L1"
grep -q "^kvm opened in" "$dir/logs/$(echo "$dir/kvm-opens.sh" | sed 's|/|_|g').log" ||
	fail "the nested test's log is missing"
# The two clocks must measure the same interval (a wrong TSC rate makes
# L1's run slow or fast); on a loaded host the interval itself may grow.
host_s=$(($(stat -c %Y "$dir/clock.1") - $(stat -c %Y "$dir/clock.0")))
l1_s=$(($(cat "$dir/clock.1") - $(cat "$dir/clock.0")))
[ "$l1_s" -ge 4 ] && [ $((host_s - l1_s)) -le 2 ] && [ $((l1_s - host_s)) -le 2 ] ||
	fail "L1 measured ${l1_s}s where the host measured ${host_s}s (a 4 s sleep): L1's clock is off"
grep -q "^ok   tests/integration/payloads.sh \[nested\]" "$out" || fail "guest payloads did not pass nested"
# the tests' python3 is Debian's, not a version manager's shim (15-20 s a
# start in L1)
[ "$(cat "$dir/python3")" = "$(readlink -f /usr/bin/python3)" ] ||
	fail "python3 in L1 is $(cat "$dir/python3"), not Debian's $(readlink -f /usr/bin/python3)"
grep -q "^FAIL $dir/fails.sh \[nested\]" "$out" || fail "the failing test was not reported failed"
grep -q "^SKIP $dir/skips.sh \[nested\]: skipped: deliberately" "$out" || fail "the skip lost its reason"
grep -q "^ok   tests/integration/regdb-dump.sh \[native\]" "$out" || fail "a non-KVM test did not run natively"
# The hang costs only the test that was running: the ones after it pass
# (with two L1s the other takes them from the queue in the same round, with
# one a fresh L1 does); then the hanging one gets its second chance in a
# round of its own (one L1, none beside it), hangs again and fails.
rounds=3
[ "${NESTED_WORKERS:-$(nproc)}" -lt 2 ] || rounds=2
[ "$(grep -c "^nested: L1 hung while running $dir/hangs-l1.sh\$" "$out")" = 2 ] ||
	fail "the runner did not name the test L1 hung in, once per hang"
grep -q "^nested-kvm: L1 stopped hung: no heartbeat for 20s" "$out" || fail "the hung L1 was not stopped"
sed -n '/^ok   tests\/integration\/payloads.sh \[nested\]/,$p' "$out" |
	grep -q "^nested: 1 tests that need /dev/kvm run in 1 nested Linux (L1) .*(round $rounds)$" ||
	fail "the test that hung L1 did not get a round of its own after the others"
grep -Eq "^FAIL $dir/hangs-l1.sh \[nested\]: L1 hung while running it \(2 of $rounds rounds\)" "$out" ||
	fail "the test that hung L1 was not failed as such"
grep -q "^check: 3 passed, 2 failed, 1 skipped$" "$out" || fail "wrong closing counts"

# L1's tmpfs must not hide the folder the command runs in (a clone in /tmp):
# run from below a path the runner covers, and read a file there.
top=$PWD
mkdir -p "$dir/covered/clone"
echo "visible $$" >"$dir/covered/clone/marker"
seen=$(cd "$dir/covered/clone" && sh "$top/scripts/nested-kvm/run.sh" -t 300 \
	-T "$top/$dir/covered" -- 'cat marker && : >sock-dir-ok' 2>&1)
echo "$seen"
echo "$seen" | grep -q "^visible $$\$" || fail "a tmpfs hid the folder the command runs in"
[ -e "$dir/covered/clone/sock-dir-ok" ] || fail "the command's writes in its folder did not reach the host"
echo "nested runner: pass, fail, skip and a dead L1 carried out of it"
