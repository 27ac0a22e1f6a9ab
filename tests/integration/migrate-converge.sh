#!/bin/sh
# migrate-converge.sh — auto-converge (tests/integration/migrate_converge.py):
# a Linux guest dirtying memory faster than an 8 MiB/s migration sends
# it never converges without the capability, and converges with it, its
# vCPUs throttled on the way and running freely again at the destination.
# QEMU runs the same as the reference.
# needs: native ring 0 (Linux guest; scripts/nested-kvm/place.sh)
. "$(dirname "$0")/demo-py.inc.sh"

# shellcheck disable=SC2086
python3 tests/integration/migrate_converge.py "$work" vmm "$VMM" $cpu || exit 1
rm -rf "${work:?}"/*
# shellcheck disable=SC2086
python3 tests/integration/migrate_converge.py "$work" qemu $qemu_ref || exit 1
echo "migrate-converge: ok"
