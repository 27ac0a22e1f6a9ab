#!/bin/sh
# demo.sh — make demo's parts: its guest (Debian's packaged kernel and
# modules, no kernel build) boots on vmm, takes 10.0.2.15 by DHCP from the
# default NIC, runs the scripted session and powers off with status 0; and
# the preflight that make demo runs first says at once when /dev/kvm does
# not open (shown by hiding the node in a mount namespace), and nothing
# where it does.
# needs: native ring 0 (Linux guest; scripts/nested-kvm/place.sh)
set -u
B=${B:-build}
VMM=${VMM:-$B/vmm}
fail() { echo "FAIL: $*"; exit 1; }
[ -e /dev/kvm ] || { echo "skipped: /dev/kvm is absent"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

sh scripts/demo.sh --preflight >"$tmp/pre" 2>&1 || fail "preflight failed with /dev/kvm: $(cat "$tmp/pre")"
[ ! -s "$tmp/pre" ] || fail "preflight spoke although /dev/kvm opens: $(cat "$tmp/pre")"
: >"$tmp/not-kvm"
start=$(date +%s)
unshare -m sh -c 'mount --bind "$1" /dev/kvm && exec sh scripts/demo.sh --preflight' sh "$tmp/not-kvm" \
	>"$tmp/pre" 2>&1 || fail "preflight without /dev/kvm: $(cat "$tmp/pre")"
[ $(($(date +%s) - start)) -le 5 ] || fail "the preflight took more than 5 s"
grep -q '^demo: /dev/kvm does not open here' "$tmp/pre" || fail "no word about /dev/kvm: $(cat "$tmp/pre")"
echo "ok   preflight: says it without /dev/kvm, silent with it"

VMM=$VMM timeout 300 sh scripts/demo.sh --scripted </dev/null >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
[ $rc -eq 0 ] || fail "the scripted demo exited $rc"
grep -q "^vmm demo: Debian's kernel [0-9][^ ]*-amd64, 2 vCPUs" "$tmp/out" || fail "Debian's kernel did not come up"
grep -q '^vmm demo: eth0 10.0.2.15/24' "$tmp/out" || fail "no DHCP address on the default NIC"
grep -q '^64 bytes from 10.0.2.2' "$tmp/out" || fail "the gateway did not answer a ping"
grep -q '^vmm demo: done, powering off' "$tmp/out" || fail "the session did not finish"
echo "ok   demo: Debian's kernel, DHCP, ping, power-off (status 0)"
