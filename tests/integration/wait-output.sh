#!/bin/sh
# wait-output.inc.sh's waits, on a console file a background writer fills:
# a match, the N-th match, a pattern that comes later, a file made late,
# a writer that exits without it, a timeout, and an exit waited for. Each
# must return what it says and block, not come back early or late.
set -u
. tests/integration/wait-output.inc.sh
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
ms() { date +%s%3N; }

: >"$d/out"
# the writer's stand-in lives through every wait below but the one that
# waits for it to exit (a loaded host stretches each wait)
sleep 120 &
writer=$!
(sleep 0.3; echo "a 1"; sleep 0.3; echo "a 2"; echo "b"; sleep 0.6; echo "a 3") >>"$d/out" &
t=$(ms)
wait_output -n 3 "$d/out" "^a" "$writer" 10 || fail "the third 'a' line: $?"
[ $(($(ms) - t)) -ge 1000 ] || fail "the third 'a' line came back after $(($(ms) - t)) ms, before it was written"
wait_output -E "$d/out" "^(b|zz)$" "$writer" 10 || fail "an extended pattern: $?"
wait_output "$d/out" "^a 3$" "$writer" 10 || fail "a line already there: $?"
(sleep 0.5; echo late >"$d/late") &
wait_output "$d/late" "^late$" "$writer" 10 || fail "a file made late: $?"
t=$(ms)
wait_output "$d/out" "never" "$writer" 1
rc=$?
[ $rc = 124 ] || fail "a timeout returned $rc"
[ $(($(ms) - t)) -ge 900 ] || fail "a 1 s timeout came back after $(($(ms) - t)) ms"
kill "$writer"
sleep 1 &
writer=$!
wait_output "$d/out" "never" "$writer" 30
rc=$?
[ $rc = 1 ] || fail "a writer that exited without the line: $rc"
kill -0 "$writer" 2>/dev/null && fail "wait_output returned 1 with its writer still running"

sleep 1 &
t=$(ms)
wait_exit $! 10 || fail "wait_exit on a 1 s sleep: $?"
[ $(($(ms) - t)) -ge 900 ] || fail "wait_exit came back after $(($(ms) - t)) ms"
sleep 5 &
p=$!
wait_exit $p 1
rc=$?
kill $p
[ $rc = 124 ] || fail "wait_exit's timeout returned $rc"
echo "wait-output: matches, counts, late files, timeouts and exits as documented"
